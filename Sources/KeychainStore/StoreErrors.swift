package import KeychainCore

/// The one place where store-internal errors become `KeychainError`.
package enum StoreErrors {
    package static func map<T>(_ body: () throws -> T) throws(KeychainError) -> T {
        do {
            return try body()
        } catch {
            throw keychainError(for: error)
        }
    }

    package static func keychainError(for error: any Error) -> KeychainError {
        switch error {
        case let error as KeychainError:
            return error
        case let error as any StorageFailure:
            return error.keychainError
        case let error as CryptoError:
            return error.keychainError
        case let error as SealedBackupError:
            return .io("backup: \(error.description)")
        case let error as DataDirectoryError:
            switch error.code {
            case .insecureMasterKey, .badMasterKey, .missingMasterKey, .wrongMasterKey:
                // A master key file that cannot be used again (rotate) is refused as on unlock.
                return .authFailed(error.description)
            default:
                return .io(error.description)
            }
        default:
            return .io("storage failure")
        }
    }
}

/// An error of a storage backend's own (its database's), and what a caller is told of it.
package protocol StorageFailure: Error {
    var keychainError: KeychainError { get }
}
