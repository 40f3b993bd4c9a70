import Foundation

extension LoopbackKeychaind {
    /// The secret of a token item as stored, read as the admin through the item routes (a token
    /// route would refresh first); nil when none is stored.
    func storedSecret(service: String, account: String) throws -> String? {
        let item = try client().send(
            "GET", "/v1/items/genericPassword?service=\(service)&account=\(account)&return=data", token: adminToken())
        return (item.json["item"] as? [String: Any])?["value"] as? String
    }
}
