/// The version keychaind reports in `/v1/health` and `keychaind --version`.
public enum KeychaindVersion {
    public static let current = "0.1.0"
}
