import KeychainCore
import KeychainLogin
import KeychainRefresh

/// Issuers' key sets and discovery documents, fetched by the token endpoint client's GET (its
/// outbound rules: https verified, plain http to loopback only, bounded).
struct IssuerFetcher: IssuerDocumentFetcher {
    let client: TokenEndpointClient

    func fetch(_ url: TokenEndpointURL, caPEM: String?) throws -> (status: Int, body: [UInt8]) {
        do {
            return try client.get(url, caPEM: caPEM)
        } catch {
            throw IssuerFetchFailure(description: "\(error)")
        }
    }
}

/// Why an issuer's document could not be fetched (libcurl's reason, never a body).
struct IssuerFetchFailure: Error, CustomStringConvertible {
    let description: String
}
