#if canImport(Glibc)
import Glibc
#endif
import Foundation
package import KeychainCore
package import Logging

/// The master key file's life beside the database: reading the one that opens the keyring
/// (completing an interrupted rekey), and replacing it crash-safely, on either backend.
extension DataDirectory {
    /// Replaces the master key around `rewrap` (which re-wraps the keyring under the new key and
    /// returns how many keys). The order makes every crash point recoverable:
    /// 1. write the new key to `master.key.new` (temp file, fsync, rename, directory fsync);
    /// 2. re-wrap every data key and the key check value under it in one transaction;
    /// 3. rename `master.key.new` over `master.key`, fsync the directory.
    /// Opening (and unlocking) tries `master.key` first and, when its check value does not
    /// match, `master.key.new` (finishing step 3); a stale `master.key.new` that opens nothing
    /// (crash between 1 and 2) is removed.
    func rekey(_ keyring: Keyring, logger: Logger) throws -> Int {
        try StoreErrors.map {
            try keyring.withKeys { try replaceMasterKey(logger: logger) { try keyring.rewrapHoldingKeys(under: $0) } }
        }
    }

    /// `rekey`'s file dance around any `rewrap`.
    func replaceMasterKey(logger: Logger, rewrap: (SecretBytes) throws -> Int) throws -> Int {
        let newKey = try MasterKeyFile.generate()
        try MasterKeyFile.write(newKey, to: pendingMasterKeyPath)
        #if KEYCHAIND_FAULT_INJECTION
        try faults.reach(.rekeyAfterNewKeyFile)
        #endif
        let count: Int
        do {
            count = try rewrap(newKey)
        } catch {
            // master.key.new stays: harmless when the transaction did not commit (the next open
            // removes it), essential if it did despite the error.
            logger.error("rekey: re-wrapping the keyring failed; master.key is unchanged")
            throw error
        }
        #if KEYCHAIND_FAULT_INJECTION
        try faults.reach(.rekeyAfterRewrap)
        #endif
        try AtomicFile.renameDurably(pendingMasterKeyPath, to: masterKeyPath)
        #if KEYCHAIND_FAULT_INJECTION
        try faults.reach(.rekeyAfterRename)
        #endif
        logger.notice("rekeyed: new master key written, keyring re-wrapped", metadata: ["terms": "\(count)"])
        return count
    }

    /// The master key that opens this database's keyring: `candidate` (read from master.key)
    /// when its check value matches; otherwise `master.key.new` when it matches, which completes
    /// a rekey that was interrupted after the keyring was re-wrapped (it is renamed over
    /// master.key). A `master.key.new` that opens nothing (a rekey interrupted before the
    /// re-wrap) is removed. When neither matches, `candidate` is returned and unlocking it fails.
    package func resolveMasterKey(_ candidate: SecretBytes, storage: any KeyringStorage, logger: Logger) throws -> SecretBytes {
        guard let stored = try storage.load().checkValue else { return candidate }
        let pendingExists = FileManager.default.fileExists(atPath: pendingMasterKeyPath)
        if constantTimeEqual(stored, Keyring.checkValue(candidate)) {
            if pendingExists {
                unlink(pendingMasterKeyPath)
                AtomicFile.fsyncDirectory(path)
                logger.notice(
                    "removed master.key.new left by an interrupted rekey (the keyring was not re-wrapped under it)")
            }
            return candidate
        }
        guard pendingExists, let pending = try? MasterKeyFile.read(from: pendingMasterKeyPath),
            constantTimeEqual(stored, Keyring.checkValue(pending))
        else { return candidate }
        try AtomicFile.renameDurably(pendingMasterKeyPath, to: masterKeyPath)
        logger.notice("completed an interrupted rekey: master.key.new opens the keyring and is now master.key")
        return pending
    }

    /// The key files a keyring opened from here reads again to start a term: `master.key`, and
    /// `master.key.new` when present (a rekey between re-wrapping and renaming).
    package var masterKeySource: MasterKeySource {
        let (current, pending) = (masterKeyPath, pendingMasterKeyPath)
        return MasterKeySource {
            var keys = [try MasterKeyFile.read(from: current)]
            if FileManager.default.fileExists(atPath: pending), let key = try? MasterKeyFile.read(from: pending) {
                keys.append(key)
            }
            return keys
        }
    }
}

extension DataDirectory {
    /// This directory's master key, resolved against the stored keyring (`resolveMasterKey`).
    package func masterKeyOpening(_ storage: any KeyringStorage, logger: Logger) throws -> SecretBytes {
        do {
            return try resolveMasterKey(MasterKeyFile.read(from: masterKeyPath), storage: storage, logger: logger)
        } catch let error as DataDirectoryError {
            throw KeychainError.authFailed(error.description)
        }
    }
}
