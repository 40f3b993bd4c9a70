import Foundation

/// Identities (docs/keychain-semantics.md §1): a certificate joined with the private key whose
/// `applicationLabel` equals its `publicKeyHash`, found, updated and deleted together.
extension KeychainService {
    /// Certificate constraints: every attribute a certificate has (the common ones included).
    /// Key constraints: attributes only keys have.
    func identityFilters(_ query: ItemQuery, groups: [String]) -> (certificate: ItemFilter, keyAttributes: [Attribute: AttributeValue]) {
        let certificateAttributes = query.attributes.filter { $0.key.belongs(to: .certificate) }
        let keyAttributes = query.attributes.filter { !$0.key.belongs(to: .certificate) }
        return (filter(query, groups: groups, itemClass: .certificate, attributes: certificateAttributes), keyAttributes)
    }

    /// The private key joined to `certificate`: keyClass private, applicationLabel = publicKeyHash.
    func key(
        for certificate: Item, _ query: ItemQuery, keyAttributes: [Attribute: AttributeValue], groups: [String],
        reading contents: ItemContents, in items: any ItemOperations
    ) throws -> Item? {
        guard case .data(let hash)? = certificate.attributes[.publicKeyHash] else { return nil }
        var attributes = keyAttributes
        attributes[.keyClass] = .string("private")
        attributes[.applicationLabel] = .data(hash)
        var keyFilter = filter(query, groups: groups, itemClass: .key, attributes: attributes)
        keyFilter.persistentRef = nil
        return try items.find(keyFilter, limit: 1, after: nil, reading: contents).items.first
    }

    /// Certificates joined with their private keys; pages the certificates so that `take`
    /// identities are found without reading past them. The join is on attributes, so `contents`
    /// names them. With `maxBytes`, certificates are read one at a time, so that the page can end
    /// right before the identity that would take it past `maxBytes` (the first always comes).
    func findIdentities(
        _ query: ItemQuery, groups: [String], take: Int, after start: ItemCursor?, maxBytes: Int? = nil,
        reading contents: ItemContents, in items: any ItemOperations
    ) throws -> (items: [FoundItem], next: ItemCursor?) {
        let (certificateFilter, keyAttributes) = identityFilters(query, groups: groups)
        var found: [FoundItem] = []
        var cursor = start
        var bytes = 0
        while found.count < take {
            let page = try items.find(
                certificateFilter, limit: maxBytes == nil ? take - found.count : 1, after: cursor, reading: contents)
            for certificate in page.items {
                guard
                    let key = try key(
                        for: certificate, query, keyAttributes: keyAttributes, groups: groups, reading: contents, in: items)
                else { continue }
                if let maxBytes {
                    bytes += ItemPage.bytes(of: certificate) + ItemPage.bytes(of: key)
                    if !found.isEmpty, bytes > maxBytes { return (found, cursor) }
                }
                found.append(FoundItem(identityCertificate: certificate, key: key))
            }
            guard let next = page.next else { return (found, nil) }
            cursor = next
        }
        return (found, cursor)
    }

    func allIdentities(_ query: ItemQuery, groups: [String], in items: any ItemOperations) throws -> [FoundItem] {
        var all: [FoundItem] = []
        var cursor: ItemCursor?
        while true {
            let page = try findIdentities(
                query, groups: groups, take: pageSize, after: cursor, reading: .attributes, in: items)
            all += page.items
            guard let next = page.next else { return all }
            cursor = next
        }
    }

    /// Updates each matched identity's certificate and key with the attributes each class has,
    /// all in one transaction.
    func updateIdentities(_ query: ItemQuery, _ update: ItemUpdate, groups: [String], now: Date) throws -> Int {
        let certificateChanges = update.attributes.filter { $0.key.belongs(to: .certificate) }
        let keyChanges = update.attributes.filter { $0.key.belongs(to: .key) && $0.key != .applicationLabel && $0.key != .keyClass }
        return try store.transaction { transaction in
            let identities = try allIdentities(query, groups: groups, in: transaction)
            guard !identities.isEmpty else { throw KeychainError.itemNotFound(query.summary) }
            for identity in identities {
                if !certificateChanges.isEmpty {
                    _ = try transaction.update(
                        ItemFilter(itemClass: .certificate, accessGroups: groups, persistentRef: identity.persistentRef),
                        with: ItemChanges(attributes: certificateChanges.mapValues { Optional($0) }, modificationDate: now))
                }
                if !keyChanges.isEmpty, let key = identity.key {
                    _ = try transaction.update(
                        ItemFilter(itemClass: .key, accessGroups: groups, persistentRef: key.persistentRef),
                        with: ItemChanges(attributes: keyChanges.mapValues { Optional($0) }, modificationDate: now))
                }
            }
            return identities.count
        }
    }
}
