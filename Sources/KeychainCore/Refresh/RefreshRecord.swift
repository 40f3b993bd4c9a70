import Foundation

/// Which tokens a refresh setting keeps fresh: a service's, with or without a user, in one access
/// group (the group the token items live in).
public struct RefreshKey: Sendable, Hashable, CustomStringConvertible {
    public var service: String
    public var user: String?
    public var group: String

    public init(service: String, user: String?, group: String) {
        self.service = service
        self.user = user
        self.group = group
    }

    /// The token naming that reaches exactly these tokens.
    public var naming: TokenNaming { TokenNaming(service: service, user: user, accessGroup: group) }

    public var description: String {
        user.map { "service \"\(service)\" and user \"\($0)\" in group \"\(group)\"" }
            ?? "service \"\(service)\" in group \"\(group)\""
    }
}

/// A stored refresh setting with its state.
public struct RefreshRecord: Sendable, Equatable {
    public var key: RefreshKey
    public var setting: RefreshSetting
    public var state: RefreshState

    public init(key: RefreshKey, setting: RefreshSetting, state: RefreshState) {
        self.key = key
        self.setting = setting
        self.state = state
    }
}

/// How a refresh record, all but its client secret, is written into the `generic` bytes of the
/// item that keeps it. The format is the API's (`RefreshRecordJSON` in KeychainAPI).
public protocol RefreshRecordFormat: Sendable {
    func encode(_ setting: RefreshSetting, _ state: RefreshState) -> [UInt8]
    /// The setting and state; nil when the bytes are not a record. A setting of its own takes
    /// `clientSecret` (the item's secret; nil: not a record); one that names a provider takes
    /// its endpoint and client from `provider(name)` (`RefreshSetting.init(provider:...)`), which
    /// throws when there is no such provider.
    func decode(
        _ bytes: [UInt8], clientSecret: SecretBytes?, provider: (String) throws -> OAuthProvider
    ) throws -> (RefreshSetting, RefreshState)?
    /// The provider the record names, nil when it names none or the bytes are not a record.
    func providerName(_ bytes: [UInt8]) -> String?
}
