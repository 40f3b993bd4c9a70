import ArgumentParser
import Testing

@testable import keychaind

/// `keychaind` command-line parsing, without running anything.
struct CommandLineParsingTests {
    @Test func serveIsTheDefaultSubcommand() throws {
        let command = try Keychaind.parseAsRoot([])
        #expect(command is ServeCommand)
    }

    @Test func serveTakesConfigListenAndDataDir() throws {
        let command = try Keychaind.parseAsRoot([
            "serve", "--config", "/etc/keychaind.toml", "--listen", "127.0.0.1:9999", "--data-dir", "/var/lib/kc",
        ])
        let serve = try #require(command as? ServeCommand)
        #expect(serve.config == "/etc/keychaind.toml")
        #expect(serve.listen == "127.0.0.1:9999")
        #expect(serve.dataDir == "/var/lib/kc")
    }

    @Test func initTakesDataDir() throws {
        let command = try Keychaind.parseAsRoot(["init", "--data-dir", "/tmp/x"])
        let initCommand = try #require(command as? InitCommand)
        #expect(initCommand.dataDir == "/tmp/x")
    }

    @Test(arguments: [["serve", "--bogus"], ["serve", "--listen"], ["frobnicate"], ["init", "extra"]])
    func unknownOrIncompleteArgumentsAreRefused(arguments: [String]) {
        #expect(throws: (any Error).self) { try Keychaind.parseAsRoot(arguments) }
    }
}
