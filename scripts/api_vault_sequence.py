"""A fixed key-management sequence against a live keychaind, each answer checked against openapi.yaml.

schemathesis (scripts/api-check) fuzzes lock, unlock, rotate and rekey in an order of its own, so
a run may never see a successful rotate after a lock, or a rekey at all. This walks the sequence
an operator would, once, and checks every status and every JSON answer against the schema the
YAML gives for that status:

    rotate?reencrypt=true -> vault (re-encryption) -> rekey -> lock -> health 503, item 503,
    token 503, rotate 503, rekey 503, backup 503 (its key is gone too), vault and a token's
    self and lookup-self still answer -> unlock -> a sealed backup -> the secret stored before
    (SENTINEL_VALUE) reads back -> tokens put, read, authorization, delete -> a client with a
    ttl: its token describes itself, renews (a duration, past its cap, with no body), is
    listed, reissued, revoked by accessor; revoke-self; a token that never expires does not
    renew.

schemathesis never revokes a token (scripts/api-check excludes revokeSelf and
revokeTokenByAccessor), so their answers are checked here.

Usage: api_vault_sequence.py BASE_URL ADMIN_TOKEN SENTINEL_TOKEN SENTINEL_VALUE
Run by scripts/api-check after the schemathesis runs; needs PyYAML and jsonschema (its venv).
"""
import json
import re
import sys
import time
import urllib.error
import urllib.request

import jsonschema

import openapi_document

SPEC = openapi_document.load()


def request(base, method, path, token=None, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def documented_schema(path, method, status):
    """The JSON schema openapi.yaml gives for this status, or None for a non-JSON answer."""
    response = SPEC["paths"][path][method.lower()]["responses"][str(status)]
    if "$ref" in response:
        response = SPEC["components"]["responses"][response["$ref"].rsplit("/", 1)[-1]]
    content = response.get("content", {})
    if "application/json" not in content:
        return None
    return {**content["application/json"]["schema"], "components": SPEC["components"]}


def main():
    base, admin, sentinel_token, sentinel_value = sys.argv[1:5]
    steps = 0

    def call(method, path, status, token=admin, body=None, query="", **parameters):
        nonlocal steps
        steps += 1
        url = path.replace("{service}", "api-check.tokens")
        for name, value in parameters.items():
            url = url.replace("{" + name + "}", value)
        url += query
        got, headers, raw = request(base, method, url, token, body)
        if got != status:
            raise SystemExit(f"api vault sequence: {method} {path}{query}: {got} {raw[:300]!r}, expected {status}")
        schema = documented_schema(path, method, status)
        if schema is None:
            return headers, raw
        answer = json.loads(raw)
        try:
            jsonschema.Draft202012Validator(schema).validate(answer)
        except jsonschema.ValidationError as error:
            raise SystemExit(f"api vault sequence: {method} {path}{query} {got}: answer {answer} "
                             f"does not match openapi.yaml: {error.message}")
        return headers, answer

    call("POST", "/v1/admin/unlock", 200)  # the lifecycle run may have left it locked
    _, before = call("GET", "/v1/admin/vault", 200)
    _, rotated = call("POST", "/v1/admin/rotate", 200, query="?reencrypt=true")
    assert rotated["term"] == before["currentTerm"] + 1 and rotated["reencrypting"], rotated
    for _ in range(100):
        _, status = call("GET", "/v1/admin/vault", 200)
        if status["reencryption"] and status["reencryption"]["state"] != "running":
            break
        time.sleep(0.1)
    assert status["reencryption"]["state"] == "finished", status
    assert status["reencryption"]["targetTerm"] == rotated["term"], status
    _, rekeyed = call("POST", "/v1/admin/rekey", 200, body={})
    assert rekeyed["rewrapped"] == status["terms"], (rekeyed, status)

    call("POST", "/v1/admin/lock", 200)
    call("GET", "/v1/health", 503, token=None)
    _, locked = call("GET", "/v1/items/genericPassword", 503, token=sentinel_token, query="?service=api-check.sentinel")
    assert locked["error"] == "errSecInteractionNotAllowed", locked
    _, locked = call("PUT", "/v1/tokens/{service}", 503, token=sentinel_token, body={"accessToken": "x"})
    assert locked["error"] == "errSecInteractionNotAllowed", locked
    call("POST", "/v1/admin/rotate", 503)
    call("POST", "/v1/admin/rekey", 503)
    _, status = call("GET", "/v1/admin/vault", 200)
    assert status["locked"], status
    _, me = call("GET", "/v1/auth/token/self", 200, token=sentinel_token)
    assert me["name"] == "api-check-sentinel" and me["expiresAt"] is None and me["ttl"] is None, me
    _, lookup = call("GET", "/v1/auth/token/lookup-self", 200, token=sentinel_token)
    assert lookup["data"]["id"] == sentinel_token and lookup["data"]["accessor"] == me["accessor"], lookup
    call("GET", "/v1/admin/backup", 503)
    headers, raw = call("GET", "/v1/metrics", 200)
    assert re.search(rb"\nkeychaind_locked 1(?:\.0)?\n", raw), raw[:200]
    call("POST", "/v1/admin/unlock", 200)
    call("GET", "/v1/health", 200, token=None)
    headers, raw = call("GET", "/v1/admin/backup", 200)
    assert raw.startswith(b"KEYCHAIND-BACKUP\x01"), raw[:17]
    assert headers["Content-Type"] == "application/octet-stream", headers["Content-Type"]

    query = "?service=api-check.sentinel&account=sentinel&return=data"
    _, found = call("GET", "/v1/items/genericPassword", 200, token=sentinel_token, query=query)
    assert found["item"].get("value") == sentinel_value, found

    _, stored = call("PUT", "/v1/tokens/{service}", 200, token=sentinel_token,
                     body={"accessToken": "at-1", "refreshToken": "rt-1", "expiresIn": 3600})
    assert stored["replaced"] == 0 and stored["expiresAt"], stored
    _, stored = call("PUT", "/v1/tokens/{service}", 200, token=sentinel_token, body={"accessToken": "at-2"})
    assert stored["replaced"] == 1 and stored["expiresAt"] is None, stored
    _, tokens = call("GET", "/v1/tokens/{service}", 200, token=sentinel_token)
    assert tokens == {"accessToken": "at-2", "refreshToken": "rt-1", "expiresAt": None, "expired": False}, tokens
    _, header = call("GET", "/v1/tokens/{service}/authorization", 200, token=sentinel_token)
    assert header == {"Authorization": "Bearer at-2"}, header
    call("PUT", "/v1/tokens/{service}", 200, token=sentinel_token, query="?user=ann",
         body={"accessToken": "old", "expiresAt": "2020-01-01T00:00:00Z"})
    _, tokens = call("GET", "/v1/tokens/{service}", 200, token=sentinel_token, query="?user=ann")
    assert tokens["expired"] and tokens["expiresAt"] == "2020-01-01T00:00:00.000Z", tokens
    call("GET", "/v1/tokens/{service}/authorization", 404, token=sentinel_token, query="?user=ann")
    _, deleted = call("DELETE", "/v1/tokens/{service}", 200, token=sentinel_token)
    assert deleted["deleted"] == 2, deleted
    call("GET", "/v1/tokens/{service}", 404, token=sentinel_token)

    # A token's lifetime (docs/api.md "Token lifetimes").
    _, created = call("POST", "/v1/admin/clients", 201,
                      body={"name": "api-check-expiring", "accessGroups": ["api-check-expiring"],
                            "ttl": 3600, "maxTtl": 7200})
    assert created["ttl"] == 3600 and created["maxTtl"] == 7200 and created["expiresAt"], created
    expiring = created["token"]
    _, me = call("GET", "/v1/auth/token/self", 200, token=expiring)
    assert me["accessor"] == created["accessor"] and me["renewable"] and 0 < me["ttl"] <= 3600, me
    assert (me["expiresAt"], me["maxExpiresAt"]) == (created["expiresAt"], created["maxExpiresAt"]), (me, created)
    _, renewed = call("POST", "/v1/auth/token/renew-self", 200, token=expiring, body={"increment": "1h30m"})
    assert renewed["auth"]["client_token"] == expiring and renewed["expiresAt"] > created["expiresAt"], renewed
    _, renewed = call("POST", "/v1/auth/token/renew-self", 200, token=expiring, body={"increment": 86400})
    assert renewed["expiresAt"] == created["maxExpiresAt"], renewed  # never past the cap
    call("POST", "/v1/auth/token/renew-self", 200, token=expiring)  # no body: the issue TTL
    call("POST", "/v1/auth/token/renew-self", 400, token=sentinel_token, body={})  # never expires
    _, listed = call("GET", "/v1/admin/tokens", 200, query="?client=api-check-expiring")
    assert [entry["accessor"] for entry in listed["tokens"]] == [created["accessor"]], listed
    call("GET", "/v1/admin/tokens", 400)
    _, clients = call("GET", "/v1/admin/clients", 200)
    listed = next(client for client in clients["clients"] if client["name"] == "api-check-expiring")
    assert (listed["ttl"], listed["maxTtl"]) == (3600, 7200), listed
    _, reissued = call("POST", "/v1/admin/clients/{name}/token", 200, name="api-check-expiring")
    assert reissued["accessor"] != created["accessor"] and reissued["expiresAt"], reissued
    call("GET", "/v1/auth/token/self", 401, token=expiring)
    call("DELETE", "/v1/admin/tokens/{accessor}", 200, accessor=reissued["accessor"])
    call("GET", "/v1/auth/token/self", 401, token=reissued["token"])
    call("DELETE", "/v1/admin/tokens/{accessor}", 404, accessor=reissued["accessor"])
    _, reissued = call("POST", "/v1/admin/clients/{name}/token", 200, name="api-check-expiring")
    _, revoked = call("POST", "/v1/auth/token/revoke-self", 200, token=reissued["token"])
    assert revoked == {"status": 0}, revoked
    call("GET", "/v1/auth/token/self", 401, token=reissued["token"])
    call("DELETE", "/v1/admin/clients/{name}", 200, name="api-check-expiring")
    print(f"api vault sequence: {steps} requests as documented (term {rotated['term']}, "
          f"{rekeyed['rewrapped']} keys re-wrapped)")


if __name__ == "__main__":
    main()
