"""hvac 2.4 against a Vault-compatible server: the calls the contract names (docs/api.md, "Tools
written for Vault"), in one fixed order, each call's outcome printed as one JSON line
{"step", "result"} or {"step", "raised": exception class, "errors", "method"} (any other exception:
{"step", "raised", "message"}), unnormalised
(scripts/vault-tools-check normalises and compares keychaind's lines with OpenBao's).

usage: vault_tools_hvac.py ADDR TOKEN MOUNT PREFIX
  ADDR    http://127.0.0.1:PORT
  TOKEN   a token of a policy / access group that reaches MOUNT, with a TTL (renew_self renews it)
  MOUNT   the KV version 2 mount (an access group on keychaind)
  PREFIX  a folder under MOUNT this run alone writes in
Run by scripts/vault-tools-check with the venv that scripts/bootstrap --test makes.
"""

import json
import sys

import hvac
import requests


def outcome(value):
    """What a call returned, as JSON: hvac answers a dict for a JSON body, a requests.Response
    for a body-less one (204), a bool for is_authenticated."""
    if isinstance(value, requests.Response):
        body = value.text
        try:
            body = value.json()
        except ValueError:
            pass
        return {"http_status": value.status_code, "body": body}
    return value


def step(name, call):
    try:
        line = {"step": name, "result": outcome(call())}
    except hvac.exceptions.VaultError as error:
        line = {"step": name, "raised": type(error).__name__, "errors": error.errors, "method": error.method}
    except Exception as error:  # noqa: BLE001 - hvac failing on an answer is a finding; the run goes on
        line = {"step": name, "raised": type(error).__name__, "message": str(error)}
    print(json.dumps(line, sort_keys=True), flush=True)


def main():
    addr, token, mount, prefix = sys.argv[1:5]
    client = hvac.Client(url=addr, token=token, timeout=10)
    kv = client.secrets.kv.v2
    app, other = f"{prefix}/app", f"{prefix}/other"

    # The server's state, as tools probe it before anything else (the contract serves sys/health,
    # seal-status and leader; not sys/init, which hvac's is_initialized reads).
    step("sys.read_health_status", lambda: client.sys.read_health_status(method="GET"))
    step("sys.read_seal_status", client.sys.read_seal_status)
    step("sys.read_leader_status", client.sys.read_leader_status)
    step("sys.is_sealed", client.sys.is_sealed)

    step("is_authenticated", client.is_authenticated)
    step("is_authenticated with a bad token", hvac.Client(url=addr, token="not-a-token", timeout=10).is_authenticated)

    # Writes: a create, an update, check-and-set (create only, matching, mismatching).
    step("create_or_update_secret", lambda: kv.create_or_update_secret(app, {"user": "alice", "pass": "s1"}, mount_point=mount))
    step("create_or_update_secret again", lambda: kv.create_or_update_secret(app, {"user": "alice", "pass": "s2"}, mount_point=mount))
    step("create_or_update_secret cas=2", lambda: kv.create_or_update_secret(app, {"user": "alice", "pass": "s3"}, cas=2, mount_point=mount))
    step("create_or_update_secret cas mismatch", lambda: kv.create_or_update_secret(app, {"user": "mallory"}, cas=1, mount_point=mount))
    step("create_or_update_secret cas=0 new", lambda: kv.create_or_update_secret(other, {"k": "v"}, cas=0, mount_point=mount))
    step("create_or_update_secret cas=0 existing", lambda: kv.create_or_update_secret(other, {"k": "w"}, cas=0, mount_point=mount))

    # Reads.
    step("read_secret_version latest", lambda: kv.read_secret_version(app, mount_point=mount, raise_on_deleted_version=True))
    step("read_secret_version 1", lambda: kv.read_secret_version(app, version=1, mount_point=mount, raise_on_deleted_version=True))
    step("read_secret_version missing version", lambda: kv.read_secret_version(app, version=99, mount_point=mount, raise_on_deleted_version=True))
    step("read_secret_version missing path", lambda: kv.read_secret_version(f"{prefix}/none", mount_point=mount, raise_on_deleted_version=True))
    step("read_secret", lambda: kv.read_secret(app, mount_point=mount, raise_on_deleted_version=True))

    # patch: hvac reads the latest version and writes the merge with cas (no HTTP PATCH).
    step("patch", lambda: kv.patch(app, {"pass": "s4", "note": "patched"}, mount_point=mount))
    step("read_secret_version after patch", lambda: kv.read_secret_version(app, mount_point=mount, raise_on_deleted_version=True))

    # Lists: the folder, a sub-folder, a missing folder.
    step("create_or_update_secret nested", lambda: kv.create_or_update_secret(f"{prefix}/dir/leaf", {"n": "1"}, mount_point=mount))
    step("list_secrets", lambda: kv.list_secrets(prefix, mount_point=mount))
    step("list_secrets sub-folder", lambda: kv.list_secrets(f"{prefix}/dir", mount_point=mount))
    step("list_secrets missing", lambda: kv.list_secrets(f"{prefix}/none", mount_point=mount))

    # Metadata.
    step("read_secret_metadata", lambda: kv.read_secret_metadata(app, mount_point=mount))
    step("update_metadata", lambda: kv.update_metadata(app, max_versions=5, cas_required=True,
                                                        custom_metadata={"owner": "team", "env": "test"}, mount_point=mount))
    step("read_secret_metadata after update", lambda: kv.read_secret_metadata(app, mount_point=mount))
    step("create_or_update_secret without cas when required", lambda: kv.create_or_update_secret(app, {"user": "bob"}, mount_point=mount))
    step("create_or_update_secret cas=4 when required", lambda: kv.create_or_update_secret(app, {"user": "bob", "pass": "s5"}, cas=4, mount_point=mount))
    step("update_metadata cas_required off", lambda: kv.update_metadata(app, cas_required=False, mount_point=mount))

    # Soft delete, undelete, destroy.
    step("delete_latest_version_of_secret", lambda: kv.delete_latest_version_of_secret(app, mount_point=mount))
    step("read_secret_version deleted (raise)", lambda: kv.read_secret_version(app, mount_point=mount, raise_on_deleted_version=True))
    step("read_secret_version deleted (no raise)", lambda: kv.read_secret_version(app, mount_point=mount, raise_on_deleted_version=False))
    step("delete_secret_versions 1 2", lambda: kv.delete_secret_versions(app, [1, 2], mount_point=mount))
    step("read_secret_metadata after deletes", lambda: kv.read_secret_metadata(app, mount_point=mount))
    step("undelete_secret_versions 2 5", lambda: kv.undelete_secret_versions(app, [2, 5], mount_point=mount))
    step("read_secret_version 5 undeleted", lambda: kv.read_secret_version(app, version=5, mount_point=mount, raise_on_deleted_version=True))
    step("destroy_secret_versions 1", lambda: kv.destroy_secret_versions(app, [1], mount_point=mount))
    step("read_secret_version 1 destroyed", lambda: kv.read_secret_version(app, version=1, mount_point=mount, raise_on_deleted_version=False))
    step("undelete_secret_versions 1 destroyed", lambda: kv.undelete_secret_versions(app, [1], mount_point=mount))
    step("read_secret_metadata after destroy", lambda: kv.read_secret_metadata(app, mount_point=mount))
    step("delete_metadata_and_all_versions", lambda: kv.delete_metadata_and_all_versions(app, mount_point=mount))
    step("read_secret_metadata after delete_metadata", lambda: kv.read_secret_metadata(app, mount_point=mount))
    step("list_secrets after delete_metadata", lambda: kv.list_secrets(prefix, mount_point=mount))

    # The token: lookup, renew (to the TTL it was made with, and with an increment past it but
    # within the explicit max TTL: keychaind never shortens a token on renewal, OpenBao does).
    step("lookup_self", client.auth.token.lookup_self)
    step("renew_self", client.auth.token.renew_self)
    step("renew_self increment", lambda: client.auth.token.renew_self(increment="90m"))
    step("lookup_self after renew", client.auth.token.lookup_self)
    step("lookup_self with a bad token", hvac.Client(url=addr, token="not-a-token", timeout=10).auth.token.lookup_self)


if __name__ == "__main__":
    main()
