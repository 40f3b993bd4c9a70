public import KeychainCore
import Foundation

/// A refresh record as kept in its item's `generic` bytes: the setting's members as the PUT body
/// spells them, without `clientSecret` (the item's sealed secret), and the state's as
/// `GET .../refresh` answers them. Read off the hot path only.
public struct RefreshRecordJSON: RefreshRecordFormat {
    public init() {}

    public func encode(_ setting: RefreshSetting, _ state: RefreshState) -> [UInt8] {
        JSONWriter.object(capacity: 384) { object in
            object.settingMembers(setting)
            object.stateMembers(state)
        }
    }

    public func decode(
        _ bytes: [UInt8], clientSecret: SecretBytes?, provider: (String) throws -> OAuthProvider
    ) throws -> (RefreshSetting, RefreshState)? {
        guard let json = try? JSONValue.parse(bytes),
            let grant = json["grant"]?.stringValue.flatMap(RefreshSetting.Grant.init(rawValue:)),
            case .integer(let refreshBefore)? = json["refreshBefore"],
            (0...Int64(RefreshSetting.maximumRefreshBefore)).contains(refreshBefore),
            let condition = json["state"]?.stringValue.flatMap(RefreshState.Condition.init(rawValue:)),
            // Below Int.max: the next failure adds one. (The database is not trusted.)
            case .integer(let failures)? = json["failures"], (0..<Int64.max).contains(failures)
        else { return nil }
        let setting: RefreshSetting
        if let name = json["provider"]?.stringValue {
            setting = RefreshSetting(
                provider: try provider(name), grant: grant, scope: json["scope"]?.stringValue, refreshBefore: Int(refreshBefore))
        } else {
            guard let endpointText = json["tokenEndpoint"]?.stringValue, let endpoint = try? TokenEndpointURL(endpointText),
                let clientId = json["clientId"]?.stringValue,
                let clientAuth = json["clientAuth"]?.stringValue.flatMap(RefreshSetting.ClientAuth.init(rawValue:)),
                clientAuth != .none, let clientSecret
            else { return nil }
            setting = RefreshSetting(
                tokenEndpoint: endpoint, grant: grant, clientId: clientId, clientSecret: clientSecret,
                clientAuth: clientAuth, scope: json["scope"]?.stringValue, audience: json["audience"]?.stringValue,
                refreshBefore: Int(refreshBefore))
        }
        let state = RefreshState(
            condition: condition, lastRefreshAt: json["lastRefreshAt"]?.stringValue.flatMap(RFC3339.parse),
            nextRefreshAt: json["nextRefreshAt"]?.stringValue.flatMap(RFC3339.parse), failures: Int(failures),
            lastError: json["lastError"]?.stringValue)
        return (setting, state)
    }

    public func providerName(_ bytes: [UInt8]) -> String? {
        (try? JSONValue.parse(bytes))?["provider"]?.stringValue
    }
}

extension JSONWriter {
    /// A setting's members without its client secret; one that names a provider gives its name
    /// instead of the provider's endpoint and client.
    mutating func settingMembers(_ setting: RefreshSetting) {
        if let provider = setting.provider {
            member("provider", provider)
        } else {
            member("tokenEndpoint", setting.tokenEndpoint.text)
            member("clientId", setting.clientId)
            member("clientAuth", setting.clientAuth.rawValue)
        }
        member("grant", setting.grant.rawValue)
        member("scope", setting.scope)
        member("audience", setting.audience)
        member("refreshBefore", setting.refreshBefore)
    }

    mutating func stateMembers(_ state: RefreshState) {
        member("state", state.condition.rawValue)
        member("lastRefreshAt", state.lastRefreshAt)
        member("nextRefreshAt", state.nextRefreshAt)
        member("failures", state.failures)
        member("lastError", state.lastError)
    }
}
