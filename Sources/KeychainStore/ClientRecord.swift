import Foundation
package import KeychainCore

/// A client's stored columns, as both backends keep them: access groups as a JSON array, the
/// role by name, the creation time in milliseconds.
package enum ClientRecord {
    /// Access groups as stored (a JSON array), on either backend.
    package static func encode(_ groups: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(groups), as: UTF8.self)
    }

    /// A client from its stored columns, on either backend.
    package static func client(name: String, groupsJSON: String, role: String, createdMilliseconds: Int64) throws -> Client {
        guard let groups = try? JSONDecoder().decode([String].self, from: Data(groupsJSON.utf8)),
            let role = Client.Role(rawValue: role)
        else { throw KeychainError.decode("a stored client record is malformed") }
        return Client(name: name, accessGroups: groups, role: role, createdAt: Date(millisecondsSince1970: createdMilliseconds))
    }
}
