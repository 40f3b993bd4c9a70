/// What a route's audit line says about its target, declared with the route. Values that could
/// name what is stored (attribute values, service names) appear only as HMAC tags.
public enum AuditTarget: Sendable {
    /// Nothing beyond who called which route.
    case none
    /// No line at all: health probes, open to all and asked every few seconds by load balancers
    /// and orchestrators, would be most of the log and say nothing about the vault.
    case unaudited
    /// An item route: the class and reference from the path, and the attributes of the query
    /// string or body (and, for an update, the body's changes) as tags.
    case item
    /// Every path parameter as a tag (`/tokens/{service}`).
    case pathParameters
    /// Path parameters that are client names, written as they are when they are valid names
    /// (tagged otherwise).
    case client
}
