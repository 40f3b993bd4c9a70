import KeychainCore
import KeychainStore

/// A filter's WHERE clause on PostgreSQL and the parameters bound to it, numbered from `$1`:
/// the class as a literal (so the planner uses that class's partial indexes), the access groups,
/// the persistent reference, then each compared attribute in name order, read through its
/// primary-key default (`PGSchema.effective`) as SQLite's `FilterShape` does; a lookup attribute
/// is compared by digest as well, which is what its index holds (`PGSchema.indexed`).
///
/// A case-insensitive string comparison folds both sides with `lower()` under the ICU root
/// collation (Unicode case mapping, as `ItemFilter.matches` folds with Swift's `lowercased()`);
/// the database's default collation may be `C`, which folds ASCII letters only.
struct PGItemFilter {
    let whereClause: String
    var values: [PGValue]

    init(_ filter: ItemFilter) {
        let lookup = ItemColumns.leadingLookup(of: filter.itemClass) + [.synchronizable]
        var clause = "class = '\(filter.itemClass.code)' AND ("
        values = []
        for (index, group) in filter.accessGroups.enumerated() {
            values.append(.text(group))
            clause += (index == 0 ? "" : " OR ") + "coalesce(\"accessGroup\", '') = $\(values.count)"
        }
        clause += ")"
        if let ref = filter.persistentRef {
            values.append(.text(ref.rawValue))
            clause += " AND persistent_ref = $\(values.count)"
        }
        for (attribute, wanted) in filter.equal.sorted(by: { $0.key.name < $1.key.name }) {
            values.append(PGItemTable.value(wanted))
            if filter.caseInsensitive, case .string = wanted {
                clause += " AND lower(\(PGSchema.effective(attribute)) COLLATE \"und-x-icu\") = "
                    + "lower($\(values.count) COLLATE \"und-x-icu\")"
            } else {
                clause += " AND \(PGSchema.effective(attribute)) = $\(values.count)"
                // The lookup index holds digests of strings and data: compare them too, so that the
                // planner uses it (a number is indexed as it is, compared once above).
                if lookup.contains(attribute), PGSchema.indexed(attribute) != PGSchema.effective(attribute) {
                    clause += " AND \(PGSchema.indexed(attribute)) = \(PGSchema.indexed(attribute, parameter: "$\(values.count)"))"
                }
            }
        }
        whereClause = clause
    }

    /// Appends a parameter and returns its placeholder (`$n`).
    mutating func bind(_ value: PGValue) -> String {
        values.append(value)
        return "$\(values.count)"
    }
}
