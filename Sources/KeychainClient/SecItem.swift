public import Foundation
import KeychainAPI
import KeychainCore

// Apple's four SecItem functions and SecCopyErrorMessageString, over keychaind, with the same
// signatures (dictionaries keyed by the kSec* constants of SecItemConstants.swift) and result
// shapes (docs/keychain-semantics.md §4): a single `Data`, a `[String: Any]` keyed by Apple's codes
// (dates as `Date`, numbers as `Int`, data as `Data`, `v_Data` for the secret), or arrays of them.
//
// They are synchronous, like Apple's, and go through `KeychainClient.shared`; each blocks the
// calling thread until keychaind answers (see `KeychainClient.sendSynchronously`). Any failure,
// server-side or local (a key of the wrong type), is returned as its OSStatus; no client
// configured is errSecNotAvailable.

/// SecItemAdd: `POST /v1/items/{class}`.
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemBridge.run(result) { client in
        var query = try SecQuery(attributes, operation: .add)
        defer { query.wipeValueData() }
        let answer = try ItemAnswer(
            decoding: client.sendSynchronously(
                "POST", "/items/\(query.itemClass.rawValue)", body: query.addRequest().encoded()))
        return try answer.item.flatMap { try query.shape($0) }
    }
}

/// SecItemCopyMatching: `GET /v1/items/{class}` (or `/{persistentRef}`), following pages.
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemBridge.run(result) { client in
        let query = try SecQuery(query, operation: .copyMatching)
        var itemQuery = try query.itemQuery(for: .copyMatching)
        let path = query.path
        var answer = try client.sendSynchronously("GET", path, query: itemQuery.queryParameters(for: .copyMatching))
        if query.isSingle || query.persistentRef != nil {
            guard query.wantsResult, let item = try ItemAnswer(decoding: answer).item else { return nil }
            return try query.shape(item)
        }
        guard query.wantsResult else { return [Any]() as AnyObject }
        var all: [AnyObject] = []
        while true {
            let page = try ItemListAnswer(decoding: answer)
            all += try page.items.compactMap { try query.shape($0) }
            guard let next = page.next else { break }
            itemQuery.cursor = next
            answer = try client.sendSynchronously("GET", path, query: itemQuery.queryParameters(for: .copyMatching))
        }
        return all as AnyObject
    }
}

/// SecItemUpdate: `PATCH /v1/items/{class}?query` with the attributes to update as the body.
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    SecItemBridge.run(nil) { client in
        let query = try SecQuery(query, operation: .update)
        var changes = try SecQuery(attributesToUpdate, operation: .attributesToUpdate, itemClass: query.itemClass)
        defer { changes.wipeValueData() }
        let parameters = try query.itemQuery(for: .update).queryParameters(for: .update)
        _ = try client.sendSynchronously("PATCH", query.path, query: parameters, body: changes.update.encoded())
        return nil
    }
}

/// SecItemDelete: `DELETE /v1/items/{class}?query` (every match). A query naming only the class
/// deletes every item of the class in the client's groups, as Apple's does: the client says
/// `all=true`, which the route asks for as a guard against a typo in a hand-written request.
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    SecItemBridge.run(nil) { client in
        let query = try SecQuery(query, operation: .delete)
        var itemQuery = try query.itemQuery(for: .delete)
        itemQuery.deleteAll = !itemQuery.namesAnyAttribute
        let parameters = itemQuery.queryParameters(for: .delete)
        _ = try client.sendSynchronously("DELETE", query.path, query: parameters)
        return nil
    }
}

/// SecCopyErrorMessageString: Apple's message for a status (`OSStatus <n>` for unknown codes).
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> String? {
    KeychainError.message(forStatus: status)
}

enum SecItemBridge {
    /// Runs one call with the shared client; stores its result object (if the caller asked for
    /// one) and maps every error to its OSStatus.
    static func run(
        _ result: UnsafeMutablePointer<CFTypeRef?>?, _ body: (KeychainClient) throws -> AnyObject?
    ) -> OSStatus {
        result?.pointee = nil
        do {
            let client = try KeychainClient.requireShared()
            let object = try body(client)
            result?.pointee = object
            return errSecSuccess
        } catch let error as KeychainError {
            KeychainClient.lastSecItemError = error
            return error.status
        } catch {
            KeychainClient.lastSecItemError = KeychainError.param()
            return errSecParam
        }
    }
}

extension KeychainClient {
    private static let lastErrorKey = "KeychainClient.lastSecItemError"

    /// The full error (status, name, message, detail) behind the last failed `SecItem*` call on
    /// the current thread, as `errno` is kept: the functions themselves can only return the
    /// OSStatus. Not reset by successful calls.
    public internal(set) static var lastSecItemError: KeychainError? {
        get { Thread.current.threadDictionary[lastErrorKey] as? KeychainError }
        set { Thread.current.threadDictionary[lastErrorKey] = newValue }
    }
}

