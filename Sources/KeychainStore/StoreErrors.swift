import KeychainCore

/// The one place where store-internal errors become `KeychainError`.
enum StoreErrors {
    static func map<T>(_ body: () throws -> T) throws(KeychainError) -> T {
        do {
            return try body()
        } catch {
            throw keychainError(for: error)
        }
    }

    static func keychainError(for error: any Error) -> KeychainError {
        switch error {
        case let error as KeychainError:
            return error
        case let error as SQLiteError:
            if error.isUniqueConstraint { return .duplicateItem() }
            if SQLiteError.ResultCode.full ~= error.code { return KeychainError(.diskFull, "the disk is full") }
            if SQLiteError.ResultCode.corrupt ~= error.code || SQLiteError.ResultCode.notadb ~= error.code {
                return .io("the database is damaged (SQLite \(error.code.rawValue))")
            }
            if SQLiteError.ResultCode.busy ~= error.code || SQLiteError.ResultCode.locked ~= error.code {
                return .io("the database is busy (SQLite \(error.code.rawValue))")
            }
            return .io("storage failure (SQLite \(error.code.rawValue): \(error.message))")
        case let error as PostgreSQLError:
            if error.sqlState == .uniqueViolation { return .duplicateItem() }
            if error.sqlState == .diskFull { return KeychainError(.diskFull, "the database's disk is full") }
            if error.isConnectionFailure { return KeychainError(.io, "the database is unreachable", temporary: true) }
            return .io("storage failure (PostgreSQL \(error.sqlState?.rawValue ?? "?"))")
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
        case is KeychainStoreClosed:
            return .io("the vault is closed")
        default:
            return .io("storage failure")
        }
    }
}
