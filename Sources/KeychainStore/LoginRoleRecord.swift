package import Foundation
package import KeychainCore

/// A login role as both backends store it: its settings as JSON, its version (`updatedAt`) in
/// its own column in milliseconds.
package enum LoginRoleRecord {
    package static func encode(_ role: LoginRole) throws -> String {
        String(decoding: try JSONEncoder().encode(role), as: UTF8.self)
    }

    package static func decode(_ json: String, updatedMilliseconds: Int64) throws -> LoginRole {
        guard var role = try? JSONDecoder().decode(LoginRole.self, from: Data(json.utf8)) else {
            throw KeychainError.decode("a stored login role is malformed")
        }
        role.updatedAt = Date(millisecondsSince1970: updatedMilliseconds)
        return role
    }

    /// The version a write at `time` gives a role whose stored version is `previous`: never the same.
    package static func version(at time: Date, after previous: Int64?) -> Int64 {
        max(time.millisecondsSince1970, (previous ?? Int64.min) + 1)
    }
}
