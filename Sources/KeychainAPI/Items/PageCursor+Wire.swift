import Foundation
public import KeychainCore

extension PageCursor {
    /// The opaque token an answer's `next` carries and a query's `cursor` gives back:
    /// base64url, without padding, of `v1:<after>:<remaining>`.
    public var token: String {
        let text = "v1:\(after.afterSequence):\(remaining.map(String.init) ?? "")"
        return Array(text.utf8).withUnsafeBytes { Base64URL.encode($0) }
    }

    /// The cursor of a token this server gave; nil for anything else.
    public init?(token: String) {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        guard let bytes = Base64.decode(base64), let text = String(validating: bytes, as: UTF8.self) else {
            return nil
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v1", let sequence = Int64(parts[1]), sequence >= 0 else { return nil }
        let remaining: Int?
        if parts[2].isEmpty {
            remaining = nil
        } else {
            guard let count = Int(parts[2]), count > 0 else { return nil }
            remaining = count
        }
        self.init(after: ItemCursor(afterSequence: sequence), remaining: remaining)
    }
}
