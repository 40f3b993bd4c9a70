public import KeychainCore

/// The status a throwing call fails with, or nil when it succeeds (any error that is no
/// `KeychainError` counts as errSecIO, as the server answers it).
public func status<T>(_ body: () throws -> T) -> KeychainError.Code? {
    do {
        _ = try body()
        return nil
    } catch let error as KeychainError {
        return error.code
    } catch {
        return .io
    }
}
