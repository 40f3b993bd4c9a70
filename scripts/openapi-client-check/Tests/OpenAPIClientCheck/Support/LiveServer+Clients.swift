extension LiveServer {
    /// A new client-role client of this server (createClient), called with its token.
    func newClient(named name: String, accessGroups: [String]) async throws -> Client {
        let created = try await admin.createClient(
            body: .json(.init(name: name, accessGroups: accessGroups, role: .client))
        ).created.body.json
        return client(token: created.token)
    }
}
