package import KeychainCore

/// The first error an operation of a transaction threw: from then on the transaction commits
/// nothing, and every later operation throws that error again (`ItemStore.transaction`'s rule,
/// kept the same by both backends' transactions).
package struct TransactionDoom {
    package private(set) var failure: KeychainError?

    package init() {}

    /// Runs one operation, or throws the error that already doomed the transaction.
    package mutating func run<T>(_ operation: () throws -> T) throws(KeychainError) -> T {
        if let failure { throw failure }
        do {
            return try StoreErrors.map(operation)
        } catch {
            failure = error
            throw error
        }
    }
}
