/// A search's answer, one of three shapes (openapi.yaml's `<Class>Found`): one item, a page of
/// items (with `next` when cut), or only the status (`return=none`).
protocol FoundAnswer {
    associatedtype Item
    /// The item of a `<Class>FoundOne` answer.
    var one: Item? { get }
    /// The items and cursor of a `<Class>FoundMany` answer.
    var many: (items: [Item], next: String?)? { get }
    /// Whether it is `StatusOnly`.
    var isStatusOnly: Bool { get }
}

extension Components.Schemas.GenericPasswordFound: FoundAnswer {
    var one: Components.Schemas.GenericPasswordItem? {
        if case .GenericPasswordFoundOne(let answer) = self { answer.item } else { nil }
    }
    var many: (items: [Components.Schemas.GenericPasswordItem], next: String?)? {
        if case .GenericPasswordFoundMany(let answer) = self { (answer.items, answer.next) } else { nil }
    }
    var isStatusOnly: Bool {
        if case .StatusOnly = self { true } else { false }
    }
}

extension Components.Schemas.InternetPasswordFound: FoundAnswer {
    var one: Components.Schemas.InternetPasswordItem? {
        if case .InternetPasswordFoundOne(let answer) = self { answer.item } else { nil }
    }
    var many: (items: [Components.Schemas.InternetPasswordItem], next: String?)? {
        if case .InternetPasswordFoundMany(let answer) = self { (answer.items, answer.next) } else { nil }
    }
    var isStatusOnly: Bool {
        if case .StatusOnly = self { true } else { false }
    }
}

extension Components.Schemas.CertificateFound: FoundAnswer {
    var one: Components.Schemas.CertificateItem? {
        if case .CertificateFoundOne(let answer) = self { answer.item } else { nil }
    }
    var many: (items: [Components.Schemas.CertificateItem], next: String?)? {
        if case .CertificateFoundMany(let answer) = self { (answer.items, answer.next) } else { nil }
    }
    var isStatusOnly: Bool {
        if case .StatusOnly = self { true } else { false }
    }
}

extension Components.Schemas.KeyFound: FoundAnswer {
    var one: Components.Schemas.KeyItem? {
        if case .KeyFoundOne(let answer) = self { answer.item } else { nil }
    }
    var many: (items: [Components.Schemas.KeyItem], next: String?)? {
        if case .KeyFoundMany(let answer) = self { (answer.items, answer.next) } else { nil }
    }
    var isStatusOnly: Bool {
        if case .StatusOnly = self { true } else { false }
    }
}

extension Components.Schemas.IdentityFound: FoundAnswer {
    var one: Components.Schemas.IdentityItem? {
        if case .IdentityFoundOne(let answer) = self { answer.item } else { nil }
    }
    var many: (items: [Components.Schemas.IdentityItem], next: String?)? {
        if case .IdentityFoundMany(let answer) = self { (answer.items, answer.next) } else { nil }
    }
    var isStatusOnly: Bool {
        if case .StatusOnly = self { true } else { false }
    }
}
