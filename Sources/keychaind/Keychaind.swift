import ArgumentParser
import Foundation
import KeychainAPI

/// `keychaind`: the keychain server. Wiring only: every behaviour lives in the libraries.
@main
struct Keychaind: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychaind",
        abstract: "Apple's Keychain Services as an HTTP vault for tokens and other small secrets.",
        version: KeychaindVersion.current,
        subcommands: [ServeCommand.self, InitCommand.self, RestoreCommand.self, AdminTokenCommand.self],
        defaultSubcommand: ServeCommand.self)

    static func main() {
        // Everything keychaind creates (database, WAL, backups, audit log) is private to its user.
        umask(0o077)
        main(nil)
    }
}
