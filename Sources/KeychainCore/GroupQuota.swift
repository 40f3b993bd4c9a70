/// How much one access group may hold; a write that would take a group past either bound is
/// errSecDiskFull (-34, the code of a full keychain) and changes nothing. Per group, not per
/// client: items belong to groups, and clients that share a group share its items (docs/decisions.md,
/// "Quotas per access group").
///
/// A write is refused only when it grows what it passes: an update that shrinks a secret, a
/// delete, or an update of a group already over a lowered quota that does not grow it, goes through.
public struct GroupQuota: Sendable, Equatable {
    /// Stored items (an identity is two: its certificate and its private key); nil: no bound.
    public var items: Int?
    /// Secret bytes: the bytes of every item's `data` as the client gave them (an identity's
    /// certificate and private key both), not attributes, not the sealing's 33 bytes; nil: no bound.
    public var secretBytes: Int?
    /// Attribute bytes: `AttributeValue.storedBytes` of every value of every item's attributes
    /// (those a certificate's bytes give included); nil: no bound. Apart from `secretBytes`, so
    /// that a configuration written before attributes were metered keeps its meaning.
    public var attributeBytes: Int?

    public init(items: Int?, secretBytes: Int?, attributeBytes: Int? = nil) {
        self.items = items
        self.secretBytes = secretBytes
        self.attributeBytes = attributeBytes
    }

    public static let unlimited = GroupQuota(items: nil, secretBytes: nil, attributeBytes: nil)
}
