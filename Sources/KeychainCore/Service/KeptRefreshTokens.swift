/// The refresh tokens keychaind keeps: the `refreshToken` item (either naming of `TokenNaming`)
/// of tokens a refresh setting covers in the item's group. Once keychaind refreshes, only
/// keychaind needs them (docs/api.md, "Keeping tokens fresh"), so to a client-role caller such an
/// item is not there, whatever the route: every item operation of `KeychainService` (find,
/// update, delete, add; by query or by persistent reference) decides through this type.
///
/// The settings are read through the operations the items are read through: inside a write's
/// transaction, its own view, so that no concurrent write slips a kept token past the check.
/// The token routes' writes (`KeychainService.replace`) may still replace or remove a kept
/// refresh token for a client: write-only (docs/decisions.md, "Kept refresh tokens are not
/// there for clients").
enum KeptRefreshTokens {
    /// Whether `item` is a kept refresh token `client` may neither be shown nor change; never
    /// for an admin client.
    static func hides(_ item: Item, from client: Client, in items: any ItemOperations) throws -> Bool {
        guard client.role != .admin else { return false }
        return try isKept(item, in: items)
    }

    /// Whether item operations of `client` on `itemClass` may meet an item `hides` hides (so
    /// that the others skip the reads it needs).
    static func mayHide(_ itemClass: ItemClass, from client: Client) -> Bool {
        client.role != .admin && itemClass == .genericPassword
    }

    /// Refuses a client-role write that would leave `item` (as added or as an update makes it)
    /// where a kept refresh token lives: the client could read back what it put there no more
    /// than the token it would displace, and the clash with a stored one would tell it one exists.
    static func refuseWrite(of item: Item, by client: Client, in items: any ItemOperations) throws {
        guard try hides(item, from: client, in: items) else { return }
        throw KeychainError.missingEntitlement(
            "this is the refresh token keychaind keeps for a refresh setting; a client stores it "
                + "only with PUT /v1/tokens/{service}")
    }

    /// Whether a refresh setting covers the tokens whose refresh token `item` would be.
    private static func isKept(_ item: Item, in items: any ItemOperations) throws -> Bool {
        try TokenNaming.namings(ofRefreshToken: item).contains { naming in
            let key = RefreshKey(service: naming.service, user: naming.user, group: item.accessGroup)
            let setting = ItemFilter(
                itemClass: .genericPassword, accessGroups: [RefreshSettingStore.accessGroup],
                equal: RefreshSettingStore.attributes(key))
            return try !items.find(setting, limit: 1, after: nil, reading: []).items.isEmpty
        }
    }
}
