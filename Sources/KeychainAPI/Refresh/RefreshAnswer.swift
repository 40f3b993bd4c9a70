import Foundation
public import KeychainCore

/// The answer of `PUT`, `GET` and `POST /tokens/{service}/refresh`: the setting, never its client
/// secret, and its state:
/// `{"service","user"|null,"accessGroup","provider"|null,"tokenEndpoint","grant","clientId","clientAuth",
/// "scope"|null,"audience"|null,"refreshBefore","state","lastRefreshAt"|null,"nextRefreshAt"|null,
/// "failures","lastError"|null}`. A setting that names a provider answers its name, and the
/// provider's endpoint, client id and client authentication as they are now.
public struct RefreshAnswer: JSONAnswer {
    public var key: RefreshKey
    public var provider: String?
    public var tokenEndpoint: String
    public var grant: RefreshSetting.Grant
    public var clientId: String
    public var clientAuth: RefreshSetting.ClientAuth
    public var scope: String?
    public var audience: String?
    public var refreshBefore: Int
    public var state: RefreshState

    public init(_ record: RefreshRecord) {
        key = record.key
        provider = record.setting.provider
        tokenEndpoint = record.setting.tokenEndpoint.text
        grant = record.setting.grant
        clientId = record.setting.clientId
        clientAuth = record.setting.clientAuth
        scope = record.setting.scope
        audience = record.setting.audience
        refreshBefore = record.setting.refreshBefore
        state = record.state
    }

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 512) { answer in
            answer.member("service", key.service)
            answer.member("user", key.user)
            answer.member("accessGroup", key.group)
            answer.member("provider", provider)
            answer.member("tokenEndpoint", tokenEndpoint)
            answer.member("grant", grant.rawValue)
            answer.member("clientId", clientId)
            answer.member("clientAuth", clientAuth.rawValue)
            answer.member("scope", scope)
            answer.member("audience", audience)
            answer.member("refreshBefore", refreshBefore)
            answer.stateMembers(state)
        }
    }

    /// The answer as the client reads it.
    public init(decoding json: JSONValue) throws {
        let what = "the refresh answer"
        key = RefreshKey(
            service: try json.requiredString("service", of: what), user: json["user"]?.stringValue,
            group: try json.requiredString("accessGroup", of: what))
        provider = json["provider"]?.stringValue
        tokenEndpoint = try json.requiredString("tokenEndpoint", of: what)
        guard let grant = RefreshSetting.Grant(rawValue: try json.requiredString("grant", of: what)),
            let clientAuth = RefreshSetting.ClientAuth(rawValue: try json.requiredString("clientAuth", of: what)),
            let condition = RefreshState.Condition(rawValue: try json.requiredString("state", of: what)),
            case .integer(let refreshBefore)? = json["refreshBefore"], case .integer(let failures)? = json["failures"]
        else { throw KeychainError.decode("\(what) is not a refresh setting") }
        self.grant = grant
        self.clientAuth = clientAuth
        self.refreshBefore = Int(refreshBefore)
        clientId = try json.requiredString("clientId", of: what)
        scope = json["scope"]?.stringValue
        audience = json["audience"]?.stringValue
        state = RefreshState(
            condition: condition, lastRefreshAt: json["lastRefreshAt"]?.stringValue.flatMap(RFC3339.parse),
            nextRefreshAt: json["nextRefreshAt"]?.stringValue.flatMap(RFC3339.parse), failures: Int(failures),
            lastError: json["lastError"]?.stringValue)
    }
}
