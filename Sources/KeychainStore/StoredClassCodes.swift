package import KeychainCore

extension ItemClass {
    /// The stored classes by the code each backend's `class` column holds.
    package static let storedByCode = Dictionary(uniqueKeysWithValues: storedClasses.map { ($0.code, $0) })
}
