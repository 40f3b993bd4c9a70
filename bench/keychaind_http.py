"""One keep-alive HTTP connection to a keychaind on loopback, for the bench scripts' Python parts."""
import http.client
import json


class Keychaind:
    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port)

    def call(self, method, path, token, body=None):
        """The answer's body; stops the script on any status of 300 or more."""
        self.conn.request(method, path, body=None if body is None else json.dumps(body),
                          headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        answer = self.conn.getresponse()
        data = answer.read()
        if answer.status >= 300:
            raise SystemExit(f"{method} {path}: {answer.status} {data[:200]!r}")
        return data
