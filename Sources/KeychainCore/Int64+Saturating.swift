extension Int64 {
    /// `value` rounded toward zero; the nearest bound beyond Int64's range, and 0 for NaN, where
    /// `Int64(value)` would trap: numbers from outside (a provider's answer, a date or a number
    /// read from a database that may have been altered) must never stop the server.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 0x1p63 {
            self = .max
        } else if value < -0x1p63 {
            self = .min
        } else {
            self.init(value)
        }
    }
}
