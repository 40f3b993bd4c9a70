public import KeychainHTTP
public import KeychainCore

/// How the libmicrohttpd front listens and what it tolerates.
public struct ServerSettings: Sendable, Equatable {
    /// IPv4 or IPv6 literal (`127.0.0.1`, `::1`, `0.0.0.0`).
    public var host: String
    /// 0 asks the OS for a free port; `MicroHTTPDServer.port` tells which.
    public var port: UInt16
    /// Worker threads of the epoll pool.
    public var threads: Int
    /// Larger request bodies are refused with 413 (errSecParam) without being read.
    public var maxBodyBytes: Int
    public var maxConnections: Int
    /// Connections from one client address beyond this many are closed as soon as they are
    /// accepted (libmicrohttpd's per-IP limit); 0 = no limit.
    public var maxConnectionsPerAddress: Int
    /// Memory per connection for headers and buffers (libmicrohttpd's pool).
    public var connectionMemoryBytes: Int
    /// Idle connections are closed after this many seconds.
    public var idleTimeoutSeconds: Int
    /// A request's line and headers must all arrive within this many seconds of its first byte,
    /// however slowly they trickle in; otherwise the connection is closed (`HeaderDeadline`).
    public var headerTimeoutSeconds: Int
    /// How long shutdown waits for in-flight requests before closing connections.
    public var shutdownGraceSeconds: Int
    /// A request whose query string has more parameters is cut off (connection closed) before
    /// libmicrohttpd parses it; 0 = no limit.
    public var maxQueryParameters: Int
    /// PEM text of the TLS certificate and key and the GnuTLS priorities; nil for plain HTTP.
    public var tls: TLSMaterial?
    /// Peers whose `X-Forwarded-For` names the client a request's `remoteAddress` is (limits and
    /// audit lines count by it); the connection limits above stay on the peer, known before any header.
    public var trustedProxies: TrustedProxies

    public struct TLSMaterial: Sendable, Equatable {
        public var certificatePEM: String
        public var keyPEM: String
        /// The GnuTLS priority string: which protocol versions, key exchanges and ciphers are offered.
        public var priorities: String
        public init(certificatePEM: String, keyPEM: String, priorities: String) {
            self.certificatePEM = certificatePEM
            self.keyPEM = keyPEM
            self.priorities = priorities
        }
    }

    public init(
        host: String, port: UInt16, threads: Int, maxBodyBytes: Int, maxConnections: Int,
        maxConnectionsPerAddress: Int, connectionMemoryBytes: Int, idleTimeoutSeconds: Int, headerTimeoutSeconds: Int,
        shutdownGraceSeconds: Int, maxQueryParameters: Int = 256, tls: TLSMaterial? = nil,
        trustedProxies: TrustedProxies = TrustedProxies()
    ) {
        self.host = host
        self.port = port
        self.threads = threads
        self.maxBodyBytes = maxBodyBytes
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.connectionMemoryBytes = connectionMemoryBytes
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.headerTimeoutSeconds = headerTimeoutSeconds
        self.shutdownGraceSeconds = shutdownGraceSeconds
        self.maxQueryParameters = maxQueryParameters
        self.tls = tls
        self.trustedProxies = trustedProxies
    }
}

/// Why the server could not start; the description is for the operator.
public struct ServerStartError: Error, CustomStringConvertible {
    public let description: String
}
