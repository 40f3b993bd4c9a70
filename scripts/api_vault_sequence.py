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
    renew -> a login role with a PEM key made here: put (and a role that binds nothing, 400),
    read, listed; logins with JWTs signed here (jwt and kubernetes paths), the token describes
    itself and is listed by role; refused logins (wrong audience, unknown role: 401 with Vault's
    `errors`; a bad body: 400); the role removed, its tokens revoked with it -> a KV version 2
    secret in the sentinel's mount: written (check-and-set), read (a version too), patched (and
    415 without the merge-patch type), listed, its metadata written and read, versions deleted,
    undeleted and destroyed, the mount's config; a service's tokens read and written at
    tokens/<service>; the secret removed; another mount 403.

schemathesis never revokes a token (scripts/api-check excludes revokeSelf and
revokeTokenByAccessor) and never writes or removes a login role (putLoginRole, deleteLoginRole:
a fuzzed role could send logins to fetch keys from a fuzzed URL), so their answers are checked
here. The refused logins spend the role's and the address's failed-login budgets (a handful).

Usage: api_vault_sequence.py BASE_URL ADMIN_TOKEN SENTINEL_TOKEN SENTINEL_VALUE
Run by scripts/api-check after the schemathesis runs; needs PyYAML, jsonschema and cryptography
(its venv).
"""
import base64
import json
import re
import sys
import time
import urllib.error
import urllib.request

import jsonschema
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

import openapi_document

SPEC = openapi_document.load()


def request(base, method, path, token=None, body=None, content_type="application/json"):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", content_type)
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


def base64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signed_jwt(private_key, claims):
    """A compact JWS (RS256) of `claims`, as an issuer signs a workload's token."""
    header = base64url(json.dumps({"alg": "RS256", "typ": "JWT"}).encode())
    payload = base64url(json.dumps(claims).encode())
    signature = private_key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{header}.{payload}.{base64url(signature)}"


def main():
    base, admin, sentinel_token, sentinel_value = sys.argv[1:5]
    steps = 0

    def call(method, route, status, token=admin, body=None, query="", content_type="application/json", **parameters):
        nonlocal steps
        steps += 1
        url = route.replace("{service}", "api-check.tokens")
        for name, value in parameters.items():
            url = url.replace("{" + name + "}", value)
        url += query
        got, headers, raw = request(base, method, url, token, body, content_type)
        if got != status:
            raise SystemExit(f"api vault sequence: {method} {route}{query}: {got} {raw[:300]!r}, expected {status}")
        schema = documented_schema(route, method, status)
        if schema is None:
            return headers, raw
        answer = json.loads(raw)
        try:
            jsonschema.Draft202012Validator(schema).validate(answer)
        except jsonschema.ValidationError as error:
            raise SystemExit(f"api vault sequence: {method} {route}{query} {got}: answer {answer} "
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

    # Workload login (docs/api.md "Workload login (JWT/OIDC)"): a role whose key is given as PEM,
    # so that no login fetches anything.
    role_path = "/v1/admin/auth/jwt/roles/{role}"
    issuer_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = issuer_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    issuer = "https://issuer.api-check.invalid"
    role_body = {"issuer": issuer, "publicKeys": [pem], "audiences": ["keychaind-api-check"],
                 "boundSubject": "system:serviceaccount:api-check:*",
                 "boundClaims": {"/kubernetes.io/namespace": "api-check"},
                 "accessGroups": ["api-check-login"], "tokenTTL": 300, "tokenMaxTTL": 900}
    _, put = call("PUT", role_path, 200, body=role_body, role="api-check.login")
    role = put["role"]
    assert role["name"] == "api-check.login" and role["publicKeys"] == [pem] and "jwksURL" not in role, role
    assert role["boundClaims"] == {"/kubernetes.io/namespace": ["api-check"]}, role
    assert role["algorithms"] == ["RS256", "ES256"] and role["caPEM"] is None and role["leeway"] == 60, role
    _, refused = call("PUT", role_path, 400, role="api-check.unbound",
                      body={**role_body, "boundSubject": "*", "boundClaims": {"sub": "**"}})
    assert "bind" in refused["detail"], refused
    call("PUT", role_path, 400, body=role_body, role="Api-Check")  # names are lowercase
    _, got = call("GET", role_path, 200, role="api-check.login")
    assert got == put, (got, put)
    _, roles = call("GET", "/v1/admin/auth/jwt/roles", 200)
    assert [entry["name"] for entry in roles["roles"]] == ["api-check.login"], roles
    call("GET", role_path, 404, role="api-check.none")

    now = int(time.time())
    claims = {"iss": issuer, "aud": ["keychaind-api-check"], "sub": "system:serviceaccount:api-check:runner",
              "iat": now, "nbf": now, "exp": now + 120, "kubernetes.io": {"namespace": "api-check"}}
    _, logged_in = call("POST", "/v1/auth/jwt/login", 200, token=None,
                        body={"role": "api-check.login", "jwt": signed_jwt(issuer_key, claims)})
    assert logged_in["name"] == logged_in["source"] == "jwt:api-check.login", logged_in
    assert logged_in["subject"] == claims["sub"] and logged_in["accessGroups"] == ["api-check-login"], logged_in
    assert 0 < logged_in["ttl"] <= 300 and logged_in["auth"]["client_token"] == logged_in["token"], logged_in
    assert logged_in["auth"]["metadata"] == {"role": "api-check.login", "subject": claims["sub"]}, logged_in
    _, me = call("GET", "/v1/auth/token/self", 200, token=logged_in["token"])
    assert me["accessor"] == logged_in["accessor"] and me["role"] == "client", me
    _, kubernetes = call("POST", "/v1/auth/kubernetes/login", 200, token=None,
                         body={"role": "API-Check.Login", "jwt": signed_jwt(issuer_key, claims)})  # lowercased
    _, listed = call("GET", "/v1/admin/tokens", 200, query="?role=api-check.login")
    assert sorted(entry["accessor"] for entry in listed["tokens"]) == sorted(
        [logged_in["accessor"], kubernetes["accessor"]]), listed
    headers, refused = call("POST", "/v1/auth/jwt/login", 401, token=None,
                            body={"role": "api-check.login",
                                  "jwt": signed_jwt(issuer_key, {**claims, "aud": "someone-else"})})
    assert refused["detail"] == "audience" and refused["errors"] == [f"{refused['message']} (audience)"], refused
    assert headers["WWW-Authenticate"] == "Bearer", headers
    _, refused = call("POST", "/v1/auth/jwt/login", 401, token=None,
                      body={"role": "api-check.none", "jwt": signed_jwt(issuer_key, claims)})
    assert refused["detail"] == "unknown role", refused
    call("POST", "/v1/auth/jwt/login", 400, token=None, body={"role": "api-check.login"})
    call("DELETE", role_path, 200, role="api-check.login")
    call("GET", "/v1/auth/token/self", 401, token=logged_in["token"])  # revoked with its role
    call("DELETE", role_path, 404, role="api-check.login")
    call("GET", role_path, 404, role="api-check.login")

    # A KV version 2 mount (docs/api.md "Vault's tools: KV version 2 mounts"): the sentinel's group.
    kv = {"token": sentinel_token, "mount": "api-check-sentinel", "path": "app/db"}
    data_path, metadata_path = "/v1/{mount}/data/{path}", "/v1/{mount}/metadata/{path}"
    _, written = call("POST", data_path, 200, body={"data": {"password": "one"}, "options": {"cas": 0}}, **kv)
    assert written["data"]["version"] == 1 and written["warnings"] is None, written
    _, refused = call("POST", data_path, 400, body={"data": {"password": "x"}, "options": {"cas": 0}}, **kv)
    assert refused == {"errors": ["check-and-set parameter did not match the current version"]}, refused
    _, written = call("PUT", data_path, 200, body={"data": {"password": "two", "user": "app"}, "extra": 1}, **kv)
    assert written["data"]["version"] == 2 and written["warnings"] == [
        "Endpoint ignored these unrecognized parameters: [extra]"], written
    _, read = call("GET", data_path, 200, **kv)
    assert read["data"]["data"] == {"password": "two", "user": "app"} and read["data"]["metadata"]["version"] == 2, read
    _, read = call("GET", data_path, 200, query="?version=1", **kv)
    assert read["data"]["data"] == {"password": "one"}, read
    call("PATCH", data_path, 415, body={"data": {"user": None}}, **kv)
    _, patched = call("PATCH", data_path, 200, body={"data": {"user": None, "password": "three"}},
                      content_type="application/merge-patch+json", **kv)
    assert patched["data"]["version"] == 3, patched
    _, read = call("GET", data_path, 200, **kv)
    assert read["data"]["data"] == {"password": "three"}, read
    _, listed = call("GET", metadata_path, 200, query="?list=true", **{**kv, "path": "app"})
    assert listed["data"]["keys"] == ["db"], listed
    call("GET", metadata_path, 404, query="?list=true", **{**kv, "path": "nothing/"})
    call("POST", metadata_path, 204, body={"max_versions": 5, "custom_metadata": {"owner": "api-check"}}, **kv)
    call("PUT", metadata_path, 204, body={"delete_version_after": "0s"}, **kv)
    call("PATCH", metadata_path, 204, body={"cas_required": False}, content_type="application/merge-patch+json", **kv)
    _, metadata = call("GET", metadata_path, 200, **kv)
    assert (metadata["data"]["current_version"], metadata["data"]["max_versions"]) == (3, 5), metadata
    assert metadata["data"]["custom_metadata"] == {"owner": "api-check"}, metadata
    assert metadata["data"]["current_metadata_version"] == 3 and sorted(metadata["data"]["versions"]) == ["1", "2", "3"]
    call("DELETE", data_path, 204, **kv)
    _, deleted = call("GET", data_path, 404, **kv)
    assert deleted["data"]["data"] is None and deleted["data"]["metadata"]["deletion_time"], deleted
    call("POST", "/v1/{mount}/undelete/{path}", 204, body={"versions": [3]}, **kv)
    call("GET", data_path, 200, **kv)
    call("PUT", "/v1/{mount}/destroy/{path}", 204, body={"versions": [1]}, **kv)
    _, destroyed = call("GET", data_path, 404, query="?version=1", **kv)
    assert destroyed["data"]["metadata"]["destroyed"], destroyed
    call("POST", "/v1/{mount}/delete/{path}", 204, body={"versions": [2]}, **kv)
    call("PUT", "/v1/{mount}/undelete/{path}", 204, body={"versions": "2"}, **kv)
    call("GET", data_path, 200, query="?version=2", **kv)
    call("POST", "/v1/{mount}/destroy/{path}", 204, body={"versions": [2]}, **kv)
    call("PUT", "/v1/{mount}/delete/{path}", 204, body={"versions": [3]}, **kv)
    _, config = call("GET", "/v1/{mount}/config", 200, token=sentinel_token, mount=kv["mount"])
    assert config["data"]["max_versions"] == 0, config

    # A service's tokens at tokens/<service>: stored natively, read and written as a secret.
    tokens = {**kv, "path": "tokens/api-check.tokens"}
    call("PUT", "/v1/tokens/{service}", 200, token=sentinel_token, body={"accessToken": "kv-1", "expiresIn": 3600})
    _, read = call("GET", data_path, 200, **tokens)
    assert read["data"]["data"]["authorization"] == "Bearer kv-1" and 3000 < read["lease_duration"] <= 3540, read
    _, written = call("POST", data_path, 200, body={"data": {"access_token": "kv-2", "expires_in": "120"}}, **tokens)
    assert written["data"]["version"] == read["data"]["metadata"]["version"] + 1, (written, read)
    _, read = call("GET", data_path, 200, **tokens)
    assert read["data"]["data"]["access_token"] == "kv-2" and 1 <= read["lease_duration"] <= 60, read
    _, refused = call("DELETE", data_path, 400, **tokens)
    assert refused == {"errors": ["tokens/ paths are not versioned"]}, refused
    _, listed = call("GET", metadata_path, 200, query="?list=true", **{**kv, "path": "tokens/"})
    assert "api-check.tokens" in listed["data"]["keys"], listed
    _, listed = call("GET", metadata_path, 200, query="?list=true", **{**kv, "path": ""})
    assert listed["data"]["keys"] == ["app/", "tokens/"], listed
    call("DELETE", "/v1/tokens/{service}", 200, token=sentinel_token)

    call("DELETE", metadata_path, 204, **kv)
    call("GET", metadata_path, 404, **kv)
    _, denied = call("GET", data_path, 403, **{**kv, "mount": "api-check"})
    assert denied == {"errors": ["permission denied"]}, denied
    print(f"api vault sequence: {steps} requests as documented (term {rotated['term']}, "
          f"{rekeyed['rewrapped']} keys re-wrapped)")


if __name__ == "__main__":
    main()
