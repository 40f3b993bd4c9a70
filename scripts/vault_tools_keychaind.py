"""The parts of the Vault-compatible surface OpenBao cannot be the reference for, against a live
keychaind, with hvac 2.4 and the bao command line (docs/api.md, "Tools written for Vault"):
  - hvac's jwt login (auth/jwt/login) with a JWT from the tests' OpenID Connect issuer, under a
    login role of group `team`; the token it gets is authenticated, describes itself, reads and
    writes the team mount, renews and revokes itself;
  - a service's tokens as the secret `team/data/tokens/<service>`: read (keys, the `Bearer` header,
    lease_duration until the header goes stale, metadata an agent accepts, the version growing
    on every store), listed, written (stored as the native route stores them), and refused where
    the contract refuses (unknown keys, delete, check-and-set);
  - X-Vault-Token beside Authorization: Bearer.
Prints `FAILED: <what>` for each expectation that does not hold and `keychaind-only: done` at
the end; scripts/vault-tools-check fails on any FAILED line.

usage: vault_tools_keychaind.py ADDR ADMIN_TOKEN CLIENT_TOKEN ISSUER_URL BAO
  CLIENT_TOKEN: a token of a client whose first access group is `team`; ISSUER_URL: a running
  Tests/IntegrationTests/Support/oidc_issuer.py (plain HTTP on loopback); BAO: the bao binary.
"""

import os
import re
import subprocess
import sys
import time

import hvac
import requests

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
failures = 0


# keychaind tokens (`kc_…`) in what a failure prints are replaced: a check's output is a log.
TOKEN = re.compile(r"kc_[A-Za-z0-9_-]+")


def expect(condition, what, got=None):
    global failures
    if not condition:
        failures += 1
        shown = "" if got is None else " (got: " + TOKEN.sub("kc_<token>", repr(got)) + ")"
        print(f"FAILED: {what}{shown}", flush=True)
    return condition


def attempt(what, call):
    """call(), or None with a FAILED line naming the exception."""
    try:
        return call()
    except Exception as error:  # noqa: BLE001 - any failure of the tool is a finding
        expect(False, f"{what} raised {type(error).__name__}", getattr(error, "errors", None) or str(error))
        return None


def expect_raises(what, call, kind, message=None):
    try:
        answer = call()
    except kind as error:
        if message is not None:
            expect(message in (error.errors or []), f"{what}: errors hold {message!r}", error.errors)
        return
    except Exception as error:  # noqa: BLE001
        expect(False, f"{what}: raised {type(error).__name__}, not {kind.__name__}", getattr(error, "errors", None) or str(error))
        return
    expect(False, f"{what}: succeeded, not {kind.__name__}", answer)


def without_default(policies):
    return [p for p in (policies or []) if p != "default"]


def native(method, addr, token, path, **kwargs):
    return requests.request(method, addr + path, headers={"Authorization": f"Bearer {token}"}, timeout=10, **kwargs)


def jwt_login(addr, admin, issuer):
    role = "vault-tools"
    pem = requests.get(f"{issuer}/public-pem", params={"alg": "RS256"}, timeout=10).text
    answer = native("PUT", addr, admin, f"/v1/admin/auth/jwt/roles/{role}", json={
        "issuer": issuer, "publicKeys": [pem], "audiences": ["keychaind"],
        "boundSubject": "system:serviceaccount:payments:api", "accessGroups": ["team"], "tokenTTL": 600,
    })
    if not expect(answer.status_code == 200, "PUT /v1/admin/auth/jwt/roles/vault-tools", answer.text):
        return
    jwt = requests.post(f"{issuer}/mint", json={"claims": {}}, timeout=10).json()["jwt"]

    client = hvac.Client(url=addr, timeout=10)
    login = attempt("hvac auth.jwt.jwt_login", lambda: client.auth.jwt.jwt_login(role=role, jwt=jwt, path="jwt"))
    if login is None:
        return
    auth = login.get("auth") or {}
    expect(str(auth.get("client_token", "")).startswith("kc_"), "jwt_login: auth.client_token is a keychaind token", auth.get("client_token"))
    expect(client.token == auth.get("client_token"), "jwt_login(use_token=True): the client uses the token it got")
    expect(isinstance(auth.get("accessor"), str) and auth.get("accessor"), "jwt_login: auth.accessor", auth.get("accessor"))
    expect(without_default(auth.get("policies")) == ["team"], "jwt_login: auth.policies are the role's groups", auth.get("policies"))
    expect(auth.get("lease_duration") == 600, "jwt_login: auth.lease_duration is the role's tokenTTL", auth.get("lease_duration"))
    expect(auth.get("renewable") is True, "jwt_login: auth.renewable", auth.get("renewable"))
    expect(auth.get("token_type") == "service", "jwt_login: auth.token_type", auth.get("token_type"))
    metadata = auth.get("metadata") or {}
    expect(metadata.get("role") == role and metadata.get("subject") == "system:serviceaccount:payments:api",
           "jwt_login: auth.metadata {role, subject}", metadata)

    expect(attempt("is_authenticated after jwt_login", client.is_authenticated) is True, "is_authenticated after jwt_login")
    lookup = attempt("lookup_self after jwt_login", client.auth.token.lookup_self)
    if lookup is not None:
        data = lookup.get("data") or {}
        expect(data.get("id") == auth.get("client_token"), "lookup_self (jwt): data.id is the token")
        expect(data.get("accessor") == auth.get("accessor"), "lookup_self (jwt): data.accessor", data.get("accessor"))
        expect(without_default(data.get("policies")) == ["team"], "lookup_self (jwt): data.policies", data.get("policies"))
        expect(isinstance(data.get("ttl"), int) and 590 <= data["ttl"] <= 600, "lookup_self (jwt): data.ttl about 600", data.get("ttl"))
        expect(data.get("creation_ttl") == 600, "lookup_self (jwt): data.creation_ttl", data.get("creation_ttl"))
        expect(isinstance(data.get("expire_time"), str) and RFC3339.match(data["expire_time"]), "lookup_self (jwt): data.expire_time is RFC 3339", data.get("expire_time"))
        expect((data.get("meta") or {}).get("role") == role, "lookup_self (jwt): data.meta.role", data.get("meta"))
        expect((data.get("meta") or {}).get("subject") == "system:serviceaccount:payments:api", "lookup_self (jwt): data.meta.subject", data.get("meta"))
        for key, value in (("renewable", True), ("type", "service"), ("num_uses", 0), ("orphan", True), ("entity_id", "")):
            expect(data.get(key) == value, f"lookup_self (jwt): data.{key} == {value!r}", data.get(key))
    kv = client.secrets.kv.v2
    attempt("create_or_update_secret with the jwt token", lambda: kv.create_or_update_secret("jwt/app", {"from": "jwt"}, mount_point="team"))
    read = attempt("read_secret_version with the jwt token", lambda: kv.read_secret_version("jwt/app", mount_point="team", raise_on_deleted_version=True))
    if read is not None:
        expect(read["data"]["data"] == {"from": "jwt"}, "read_secret_version with the jwt token", read["data"]["data"])
    expect_raises("a mount of another group with the jwt token (403)",
                  lambda: kv.read_secret_version("x", mount_point="not-my-group", raise_on_deleted_version=True), hvac.exceptions.Forbidden)
    renewed = attempt("renew_self (jwt)", client.auth.token.renew_self)
    if renewed is not None:
        expect((renewed.get("auth") or {}).get("lease_duration") == 600, "renew_self (jwt): auth.lease_duration", renewed.get("auth"))
        expect((renewed.get("auth") or {}).get("client_token") == auth.get("client_token"), "renew_self (jwt): auth.client_token")
    attempt("revoke_self (jwt)", client.auth.token.revoke_self)
    expect(attempt("is_authenticated after revoke_self", client.is_authenticated) is False, "is_authenticated is false after revoke_self")

    # A JWT the role does not accept (another subject): hvac raises, with Vault's errors.
    other = requests.post(f"{issuer}/mint", json={"claims": {"sub": "system:serviceaccount:other:api"}}, timeout=10).json()["jwt"]
    try:
        hvac.Client(url=addr, timeout=10).auth.jwt.jwt_login(role=role, jwt=other, path="jwt")
        expect(False, "jwt_login with a JWT of another subject is refused")
    except hvac.exceptions.VaultError as error:
        expect(bool(error.errors), "a refused jwt_login raises with Vault's errors", error.errors)


def tokens_paths(addr, token, bao):
    client = hvac.Client(url=addr, token=token, timeout=10)
    kv = client.secrets.kv.v2
    answer = native("PUT", addr, token, "/v1/tokens/github", json={"accessToken": "gh-access-1", "refreshToken": "gh-refresh-1", "expiresIn": 3600})
    if not expect(answer.status_code == 200, "PUT /v1/tokens/github", answer.text):
        return
    stored = native("GET", addr, token, "/v1/tokens/github").json()

    read = attempt("read_secret_version tokens/github", lambda: kv.read_secret_version("tokens/github", mount_point="team", raise_on_deleted_version=True))
    if read is not None:
        data = (read.get("data") or {}).get("data") or {}
        expect(data.get("access_token") == "gh-access-1", "tokens/github: data.access_token", data.get("access_token"))
        expect(data.get("authorization") == "Bearer gh-access-1", "tokens/github: data.authorization", data.get("authorization"))
        expect(isinstance(data.get("expires_at"), str) and RFC3339.match(data["expires_at"]), "tokens/github: data.expires_at is RFC 3339", data.get("expires_at"))
        expect(data.get("refresh_token") == stored.get("refreshToken"), "tokens/github: data.refresh_token as GET /v1/tokens/github gives it", data.get("refresh_token"))
        extra = set(data) - {"access_token", "authorization", "expires_at", "refresh_token"}
        expect(not extra, "tokens/github: no keys but access_token, authorization, expires_at, refresh_token", sorted(extra))
        lease = read.get("lease_duration")
        expect(isinstance(lease, int) and 3600 - 60 - 10 <= lease <= 3600 - 60, "tokens/github: lease_duration = seconds until expiresAt - 60", lease)
        expect(read.get("renewable") is False, "tokens/github: renewable false", read.get("renewable"))
        metadata = (read.get("data") or {}).get("metadata") or {}
        # Agents (openbao-template's deletedKVv2) treat a secret whose deletion_time is not "" as deleted.
        expect(metadata.get("deletion_time") == "", "tokens/github: metadata.deletion_time is \"\"", metadata.get("deletion_time"))
        expect(metadata.get("destroyed") is False, "tokens/github: metadata.destroyed false", metadata.get("destroyed"))
        expect(isinstance(metadata.get("version"), int) and metadata["version"] >= 1, "tokens/github: metadata.version", metadata.get("version"))
        version = metadata.get("version")
        native("PUT", addr, token, "/v1/tokens/github", json={"accessToken": "gh-access-2", "expiresIn": 3600})
        again = attempt("read_secret_version tokens/github after a store", lambda: kv.read_secret_version("tokens/github", mount_point="team", raise_on_deleted_version=True))
        if again is not None and isinstance(version, int):
            expect(again["data"]["metadata"].get("version") == version + 1, "tokens/github: metadata.version grows by one on a store", again["data"]["metadata"].get("version"))
            expect(again["data"]["data"].get("refresh_token") == "gh-refresh-1", "tokens/github: a store without refreshToken keeps it", again["data"]["data"].get("refresh_token"))

    # No expiry stored: lease_duration 0.
    native("PUT", addr, token, "/v1/tokens/noexpiry", json={"accessToken": "ne-access"})
    read = attempt("read_secret_version tokens/noexpiry", lambda: kv.read_secret_version("tokens/noexpiry", mount_point="team", raise_on_deleted_version=True))
    if read is not None:
        expect(read.get("lease_duration") == 0, "tokens/noexpiry: lease_duration 0 without an expiry", read.get("lease_duration"))
        expect(read["data"]["data"].get("expires_at") is None, "tokens/noexpiry: data.expires_at null", read["data"]["data"].get("expires_at"))

    listed = attempt("list_secrets tokens", lambda: kv.list_secrets("tokens", mount_point="team"))
    if listed is not None:
        keys = (listed.get("data") or {}).get("keys") or []
        expect("github" in keys and "noexpiry" in keys, "list_secrets tokens: the services", keys)

    # Writing the path stores tokens as PUT /v1/tokens/{service} does.
    attempt("create_or_update_secret tokens/github", lambda: kv.create_or_update_secret("tokens/github", {"access_token": "gh-written", "expires_in": "120"}, mount_point="team"))
    stored = native("GET", addr, token, "/v1/tokens/github").json()
    expect(stored.get("accessToken") == "gh-written" and stored.get("expiresAt"), "a write of tokens/github is stored as the native route stores it", stored)
    expect(stored.get("refreshToken") == "gh-refresh-1", "a write of tokens/github without refresh_token keeps the stored one", stored.get("refreshToken"))
    expect_raises("create_or_update_secret tokens/github with an unknown key", lambda: kv.create_or_update_secret(
        "tokens/github", {"access_token": "x", "bogus": "y"}, mount_point="team"), hvac.exceptions.InvalidRequest)
    not_versioned = "tokens/ paths are not versioned"
    expect_raises("create_or_update_secret tokens/github with cas", lambda: kv.create_or_update_secret(
        "tokens/github", {"access_token": "x"}, cas=1, mount_point="team"), hvac.exceptions.InvalidRequest, not_versioned)
    expect_raises("delete_latest_version_of_secret tokens/github", lambda: kv.delete_latest_version_of_secret(
        "tokens/github", mount_point="team"), hvac.exceptions.InvalidRequest, not_versioned)
    expect_raises("destroy_secret_versions tokens/github", lambda: kv.destroy_secret_versions(
        "tokens/github", [1], mount_point="team"), hvac.exceptions.InvalidRequest, not_versioned)
    expect_raises("delete_metadata_and_all_versions tokens/github", lambda: kv.delete_metadata_and_all_versions(
        "tokens/github", mount_point="team"), hvac.exceptions.InvalidRequest, not_versioned)
    expect(native("GET", addr, token, "/v1/tokens/github").status_code == 200, "tokens/github is still stored after the refused deletes")

    # The command line on the same paths: a read, a write (stored as the native route stores it), a list.
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "BAO_ADDR": addr, "BAO_TOKEN": token}

    def bao_cli(*args):
        run = subprocess.run([bao, *args], env=env, capture_output=True, text=True, timeout=20, check=False)
        return run.returncode, run.stdout, run.stderr

    ran = bao_cli("kv", "get", "-field=authorization", "team/tokens/github")
    expect(ran[0] == 0 and ran[1].strip() == "Bearer gh-written", "bao kv get -field=authorization team/tokens/github", ran)
    ran = bao_cli("kv", "put", "team/tokens/cli", "access_token=cli-access", "expires_in=300")
    expect(ran[0] == 0, "bao kv put team/tokens/cli access_token=… expires_in=300", ran)
    stored = native("GET", addr, token, "/v1/tokens/cli").json()
    expect(stored.get("accessToken") == "cli-access" and stored.get("expiresAt"), "bao kv put team/tokens/cli is stored as PUT /v1/tokens/cli stores it", stored)
    ran = bao_cli("kv", "list", "-format=json", "team/tokens")
    expect(ran[0] == 0 and "cli" in ran[1] and "github" in ran[1], "bao kv list team/tokens: the services", ran)
    ran = bao_cli("kv", "delete", "team/tokens/cli")
    expect(ran[0] != 0 and not_versioned in ran[2], "bao kv delete team/tokens/cli: tokens/ paths are not versioned", ran)


def headers(addr, token):
    answer = requests.get(f"{addr}/v1/auth/token/lookup-self", headers={"X-Vault-Token": token}, timeout=10)
    expect(answer.status_code == 200, "lookup-self with X-Vault-Token", answer.status_code)
    answer = requests.get(f"{addr}/v1/auth/token/lookup-self", headers={"X-Vault-Token": token, "Authorization": f"Bearer {token}"}, timeout=10)
    expect(answer.status_code == 200, "lookup-self with the same token in both headers", answer.status_code)
    answer = requests.get(f"{addr}/v1/auth/token/lookup-self", headers={"X-Vault-Token": token, "Authorization": "Bearer kc_other"}, timeout=10)
    expect(answer.status_code == 400, "lookup-self with different tokens in X-Vault-Token and Authorization: 400", answer.status_code)


def main():
    addr, admin, token, issuer, bao = sys.argv[1:6]
    started = time.monotonic()
    jwt_login(addr, admin, issuer)
    tokens_paths(addr, token, bao)
    headers(addr, token)
    print(f"keychaind-only: {failures} failed expectation(s), {time.monotonic() - started:.1f} s", flush=True)
    print("keychaind-only: done", flush=True)


if __name__ == "__main__":
    main()
