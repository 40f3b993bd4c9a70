import Testing
@testable import KeychainStore
@testable import KeychainSQLite

struct DoorkeeperTests {
    /// What `admits` answers for each hash in turn.
    private static func answers(_ hashes: [Int], slots: Int) -> [Bool] {
        var doorkeeper = Doorkeeper(slots: slots)
        return hashes.map { doorkeeper.admits($0) }
    }

    @Test func admitsFromTheSecondMiss() {
        // A first miss is only noted; the hash then stays the slot's last miss.
        #expect(Self.answers([42, 42, 42], slots: 8) == [false, true, true])
    }

    @Test func aMissInTheSameSlotReplacesTheNotedOne() {
        // 5 slots round up to 8: 3 and 11 share slot 3, 4 has its own. After 11 took the slot, 3
        // starts over; a miss in another slot changes nothing.
        #expect(Self.answers([3, 11, 3, 4, 3], slots: 5) == [false, false, false, false, true])
    }
}
