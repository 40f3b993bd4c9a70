import Foundation
package import KeychainCore

/// What an update (`ItemOperations.update`) does to each row it matches, the same on every
/// backend: the attributes it sets, a modification date strictly later than the row's, the
/// secret sealed anew when it changes or when the row moves to another access group (a secret
/// is bound to its group), and the change in each group's usage.
package struct ItemUpdatePlan {
    package let itemClass: ItemClass
    package let changes: ItemChanges
    /// The attributes the update sets, in the class's column order (nil: made absent); the
    /// modification date is set on its own.
    package let changedAttributes: [(Attribute, AttributeValue?)]
    /// The group the secrets will be bound to after the update (as `Item.accessGroup` reads it),
    /// nil when the update leaves the group alone.
    private let newGroup: String?

    package init(_ filter: ItemFilter, _ changes: ItemChanges) {
        itemClass = filter.itemClass
        self.changes = changes
        newGroup = changes.attributes[.accessGroup].map { value in
            if case .string(let group)? = value { return group }
            return ""
        }
        changedAttributes = Attribute.attributes(of: filter.itemClass)
            .filter { changes.attributes.keys.contains($0) && $0 != .modificationDate }
            .map { ($0, changes.attributes[$0]!) }
    }

    /// A row as the update reads it.
    package struct Row {
        package let persistentRef: PersistentRef
        package let accessGroup: String
        package let modificationDate: Int64?
        package let sealedSecret: [UInt8]?
        /// Every attribute it stores, for the usage it moves or changes.
        package let attributes: [Attribute: AttributeValue]

        package init(
            persistentRef: PersistentRef, accessGroup: String, modificationDate: Int64?, sealedSecret: [UInt8]?,
            attributes: [Attribute: AttributeValue]
        ) {
            self.persistentRef = persistentRef
            self.accessGroup = accessGroup
            self.modificationDate = modificationDate
            self.sealedSecret = sealedSecret
            self.attributes = attributes
        }
    }

    /// What the update writes to one row.
    package struct RowChange {
        /// Milliseconds since 1970, strictly later than the row's previous modification date.
        package let modificationDate: Int64
        /// The new sealed secret, nil when the stored one stays.
        package let sealedSecret: [UInt8]?
    }

    /// The change to `row`, sealing with `seal` (the backend's sealing in its transaction), and
    /// its usage recorded in `usage`.
    package func change(
        of row: Row, keyring: Keyring, usage: inout GroupUsageChanges,
        seal: (SecretBytes, SealBinding) throws -> [UInt8]
    ) throws -> RowChange {
        var millis = changes.modificationDate.millisecondsSince1970
        // The stored date may be anything (the database is not trusted): no overflow past the last.
        if let old = row.modificationDate, millis <= old { millis = old < .max ? old + 1 : old }
        let group = newGroup ?? row.accessGroup
        let binding = SealBinding(itemClass: itemClass, persistentRef: row.persistentRef, accessGroup: group)
        var sealed: [UInt8]?
        if let secret = changes.secret {
            sealed = try seal(secret, binding)
        } else if !group.hasSameUTF8(as: row.accessGroup), let box = row.sealedSecret {
            let old = SealBinding(itemClass: itemClass, persistentRef: row.persistentRef, accessGroup: row.accessGroup)
            sealed = try seal(try keyring.open(box, binding: old), binding)
        }
        let oldBytes = GroupUsageChanges.secretBytes(sealed: row.sealedSecret)
        var attributes = row.attributes
        for (attribute, value) in changedAttributes { attributes[attribute] = value }
        attributes[.modificationDate] = .date(Date(millisecondsSince1970: millis))
        let old = GroupUsage(item: row.attributes, secretBytes: oldBytes)
        let new = GroupUsage(item: attributes, secretBytes: changes.secret.map { Int64($0.count) } ?? oldBytes)
        if !group.hasSameUTF8(as: row.accessGroup) || new != old {
            usage.record(row.accessGroup, -old)
            usage.record(group, new)
        }
        return RowChange(modificationDate: millis, sealedSecret: sealed)
    }
}

extension SealBinding {
    /// What `item`'s secret is bound to.
    package init(of item: Item) {
        self.init(itemClass: item.itemClass, persistentRef: item.persistentRef, accessGroup: item.accessGroup)
    }
}
