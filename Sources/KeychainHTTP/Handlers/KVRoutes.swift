import Foundation
import KeychainAPI
public import KeychainCore

extension Router {
    /// Each access group as a KV version 2 mount (docs/api.md, "Tools written for Vault"):
    /// `/{mount}/data|metadata|delete|undelete|destroy/{path*}` and `/{mount}/config`, answered
    /// in Vault's shapes, with a service's tokens readable and writable at `tokens/<service>`.
    /// `secretMountAlias`: `secret/` is the caller's first group. A list whose answer would pass
    /// `maxAnswerBytes` is 500 `list too large` (Vault's tools follow no pages).
    public mutating func addKVRoutes(kv: KVService, tokens: TokenService, secretMountAlias: Bool, maxAnswerBytes: Int) {
        let mounts = VaultMounts(aliasEnabled: secretMountAlias)
        let tokenSecrets = TokenSecrets(tokens: tokens)

        add(.get, "/{mount}/data/{path*}", access: .client, audit: .pathParameters, surface: .vault) { context in
            let key = try mounts.key(context)
            if let naming = try TokenSecrets.naming(key) {
                return try tokenSecrets.read(naming, context: context)
            }
            let version = try context.request.queryItems.last { $0.name == "version" }.map {
                try KVRequest.integer(.string($0.value), "version")
            }
            guard let found = try kv.read(key, version: version) else { return .vaultNotFound }
            let answer = HTTPResponse.json(VaultEnvelope(data: KVAnswer.read(found)))
            return found.isLive ? answer : answer.withStatus(404)
        }
        for method in [HTTPMethod.post, .put] {
            add(method, "/{mount}/data/{path*}", access: .client, audit: .pathParameters, surface: .vault) { context in
                let key = try mounts.key(context)
                if let naming = try TokenSecrets.naming(key) {
                    return try tokenSecrets.write(naming, context: context)
                }
                let request = try KVRequest.Write(context.request.body)
                let written = try KVRefusal.answering { try kv.write(key, data: request.data, cas: request.cas) }
                return .json(KVAnswer.written(written.version, metadata: written.metadata, unrecognized: request.unrecognized))
            }
        }
        add(.patch, "/{mount}/data/{path*}", access: .client, audit: .pathParameters, surface: .vault) { context in
            let key = try mounts.key(context)
            try TokenSecrets.refuseVersioning(key)
            if let refusal = Self.mergePatchRefusal(context.request) { return refusal }
            let request = try KVRequest.Patch(context.request.body)
            guard let written = try KVRefusal.answering({ try kv.patch(key, cas: request.cas, merge: request.merged(into:)) })
            else { return .vaultPatchNotFound }
            return .json(KVAnswer.written(written.version, metadata: written.metadata, unrecognized: request.unrecognized))
        }
        add(.delete, "/{mount}/data/{path*}", access: .client, audit: .pathParameters, surface: .vault) { context in
            let key = try mounts.key(context)
            try TokenSecrets.refuseVersioning(key)
            try kv.change(.delete, versions: nil, of: key)
            return HTTPResponse(status: 204)
        }
        for (segment, change) in [("delete", KVService.VersionChange.delete), ("undelete", .undelete), ("destroy", .destroy)] {
            for method in [HTTPMethod.post, .put] {
                add(method, "/{mount}/\(segment)/{path*}", access: .client, audit: .pathParameters, surface: .vault) { context in
                    let key = try mounts.key(context)
                    try TokenSecrets.refuseVersioning(key)
                    let request = try KVRequest.Versions(context.request.body)
                    try kv.change(change, versions: request.versions, of: key)
                    return HTTPResponse(status: 204)
                }
            }
        }
        addKVMetadataRoutes(kv: kv, mounts: mounts, tokenSecrets: tokenSecrets, maxAnswerBytes: maxAnswerBytes)
        add(.get, "/{mount}/config", access: .client, audit: .pathParameters, surface: .vault) { context in
            _ = try mounts.group(context)
            return .json(
                VaultEnvelope { writer in
                    writer.member("cas_required", false)
                    writer.member("delete_version_after", "0s")
                    writer.member("max_versions", 0)
                    writer.member("metadata_cas_required", false)
                })
        }
    }

    private mutating func addKVMetadataRoutes(
        kv: KVService, mounts: VaultMounts, tokenSecrets: TokenSecrets, maxAnswerBytes: Int
    ) {
        let list: RouteHandler = { context in
            let group = try mounts.group(context)
            let folder = context.parameters["path"] ?? ""
            let prefix = folder.isEmpty || folder.hasSuffix("/") ? folder : folder + "/"
            var names: [String]
            if prefix.hasSameUTF8(as: "tokens/") || prefix.utf8.starts(with: "tokens/".utf8) {
                names = try tokenSecrets.list(group: group, folder: String(prefix.dropFirst("tokens/".count)))
            } else {
                names = try kv.list(group: group, folder: prefix)
                if prefix.isEmpty, try tokenSecrets.hasAny(group: group) {
                    names.append("tokens/")
                    names.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                }
            }
            guard !names.isEmpty else { return .vaultNotFound }
            let answer = HTTPResponse.json(VaultEnvelope(data: KVAnswer.keys(names)))
            guard answer.body.count <= maxAnswerBytes else { return .json(status: 500, VaultErrors(["list too large"])) }
            return answer
        }
        add(.list, "/{mount}/metadata/{path*}", access: .client, audit: .pathParameters, surface: .vault, handler: list)
        add(.get, "/{mount}/metadata/{path*}", access: .client, audit: .pathParameters, surface: .vault) { context in
            if context.request.queryItems.contains(where: { $0.name == "list" && $0.value == "true" }) {
                return try list(context)
            }
            let key = try mounts.key(context)
            try TokenSecrets.refuseVersioning(key)
            guard let found = try kv.metadata(key) else { return .vaultNotFound }
            return .json(VaultEnvelope(data: KVAnswer.metadata(found.metadata, versions: found.versions)))
        }
        for method in [HTTPMethod.post, .put, .patch] {
            add(method, "/{mount}/metadata/{path*}", access: .client, audit: .pathParameters, surface: .vault) { context in
                let key = try mounts.key(context)
                try TokenSecrets.refuseVersioning(key)
                if method == .patch {
                    if let refusal = Self.mergePatchRefusal(context.request) { return refusal }
                    guard try kv.metadata(key) != nil else { return .vaultPatchNotFound }
                }
                let change = try KVRequest.Metadata(context.request.body).change
                try KVRefusal.answering { try kv.writeMetadata(change, of: key) }
                return HTTPResponse(status: 204)
            }
        }
        add(.delete, "/{mount}/metadata/{path*}", access: .client, audit: .pathParameters, surface: .vault) { context in
            let key = try mounts.key(context)
            try TokenSecrets.refuseVersioning(key)
            try kv.remove(key)
            return HTTPResponse(status: 204)
        }
    }

    /// PATCH takes a JSON merge patch only: 415 in OpenBao's words for another Content-Type.
    private static func mergePatchRefusal(_ request: HTTPRequest) -> HTTPResponse? {
        let type = request.header("content-type") ?? ""
        guard !type.lowercased().hasPrefix("application/merge-patch+json") else { return nil }
        return .json(
            status: 415, VaultErrors(["PATCH requires Content-Type of application/merge-patch+json, provided \(type)"]))
    }
}

extension KVRefusal {
    /// Runs a KV write, a refusal answered as Vault's 400.
    static func answering<Result>(_ write: () throws -> Result) throws -> Result {
        do {
            return try write()
        } catch let refusal as KVRefusal {
            throw KeychainError.param(refusal.message)
        }
    }
}

extension HTTPResponse {
    /// Vault's answer for a path with nothing there: 404 `{"errors":[]}`.
    static var vaultNotFound: HTTPResponse { .json(status: 404, VaultErrors([])) }

    /// A PATCH of a secret that is not there: 404 without a body, as OpenBao answers (the CLI
    /// prints what it got).
    static var vaultPatchNotFound: HTTPResponse { HTTPResponse(status: 404, headers: [("Cache-Control", "no-store")]) }

    func withStatus(_ status: Int) -> HTTPResponse {
        var response = self
        response.status = status
        return response
    }
}
