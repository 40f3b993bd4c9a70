"""Normalises what hvac and the bao command line answered one server, so that keychaind's
transcript and OpenBao's can be diffed: only what legitimately differs between two correct servers
(or between two runs of one) is replaced, each rule with its reason; everything else is compared
as it is. scripts/vault-tools-check runs it on both transcripts and fails on any difference left.

usage: vault_tools_normalise.py KIND FILE --addr URL --token T --accessor A
  KIND  hvac (JSON lines from vault_tools_hvac.py) or bao (the check's `### command` transcript)
  --addr, --token, --accessor: this server's address and the token the tools used (and its
  accessor), replaced wherever they appear.
"""

import argparse
import json
import re
import sys

# A timestamp in RFC 3339 (OpenBao: nanoseconds; keychaind: milliseconds): when a call ran.
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
# A UUID (request_id, cluster_id): random per request or per server.
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
# A Go duration as the CLI prints a TTL (59m56s, 1h, 30m): the time left, which moves while we run.
DURATION = r"(?:\d+h)?(?:\d+m)?(?:\d+s)?"


# In sys/health and sys/seal-status answers (hvac's, `bao status -format=json`): the server's build
# and cluster (version, its dates, a random cluster name and id), its storage backend (OpenBao dev:
# inmem; keychaind: its database) and its clock.
SERVER_FACTS = {
    "version": "<server-fact>", "build_date": "<server-fact>", "commit_date": "<server-fact>",
    "cluster_name": "<server-fact>", "cluster_id": "<server-fact>", "storage_type": "<server-fact>",
    "server_time_utc": "<unix-time>",
}


# keychaind's own answer about a token, which its lookup-self and renew-self give beside Vault's
# `data` / `auth` block (docs/api.md, "Token lifetimes": "the same, plus Vault's data block").
# `renewable` is not among them: it is also a key of Vault's envelope, and compared.
NATIVE_SELF = {"status", "name", "subject", "accessGroups", "role", "accessor", "source", "issuedAt",
               "expiresAt", "maxExpiresAt", "ttl"}


def replace_facts(text, facts):
    # The server's address (a port of its own), its token and accessor (random per server).
    for value, label in facts:
        text = text.replace(value, label)
    return text


def normalise_string(value, facts):
    return TIME.sub("<time>", UUID.sub("<uuid>", replace_facts(value, facts)))


def normalise_json(value, facts, key=None, parent=None):
    """Key-aware rules for a JSON answer (hvac's dicts, `bao ... -format=json`)."""
    if isinstance(value, dict):
        if "source" in value and "accessGroups" in value and ("data" in value or "auth" in value):
            value = {k: v for k, v in value.items() if k not in NATIVE_SELF}
        out = {}
        lookup = "creation_ttl" in value and "explicit_max_ttl" in value  # a token's lookup data
        auth = "client_token" in value and "lease_duration" in value  # an `auth` block (login, renewal)
        server_state = "initialized" in value and "sealed" in value  # sys/health, sys/seal-status
        for k, v in value.items():
            if server_state and k in SERVER_FACTS:
                out[k] = SERVER_FACTS[k]
            elif auth and k == "metadata":
                # keychaind's {role, subject} of the token (OpenBao: the token's own metadata, none here).
                out[k] = "<metadata>"
            elif lookup and k in ("display_name", "path", "meta"):
                # keychaind's token facts: display_name is the client or login role, path the way it
                # was made (OpenBao: auth/token/create), meta keychaind's {role, subject}.
                out[k] = f"<{k}>"
            elif lookup and k == "ttl" and isinstance(v, int) and v > 0:
                # Seconds left on a token that expires: moves while the check runs (0, never
                # expiring, is kept).
                out[k] = "<ttl>"
            elif k in ("creation_time", "last_renewal_time") and isinstance(v, int):
                # Unix seconds of the token's creation / renewal: when the check ran.
                out[k] = "<unix-time>"
            else:
                out[k] = normalise_json(v, facts, k, value)
        return out
    if isinstance(value, list):
        if key in ("policies", "token_policies", "identity_policies"):
            # keychaind's policies are the access groups; OpenBao adds its built-in `default`
            # policy to every token (the contract lets keychaind add or omit it).
            value = [p for p in value if p != "default"]
        return [normalise_json(v, facts, key, parent) for v in value]
    if isinstance(value, str):
        return normalise_string(value, facts)
    return value


def normalise_hvac(lines, facts):
    out = []
    for line in lines:
        if line.strip():
            out.append(json.dumps(normalise_json(json.loads(line), facts), sort_keys=True, indent=1))
    return "\n".join(out) + "\n"


# Rules for the CLI's tables (`Key  Value` rows of `bao token lookup`, `bao status`, ...).
TABLE_RULES = [
    # Seconds or a duration left on the token (moves while the check runs).
    (re.compile(rf"^(ttl) +{DURATION}$"), r"\1 <ttl>"),
    # Unix seconds of the token's creation / renewal (when the check ran).
    (re.compile(r"^(creation_time|last_renewal_time) +\d+$"), r"\1 <unix-time>"),
    # keychaind's token facts (client or login role, how it was made, {role, subject}).
    (re.compile(r"^(display_name|path|meta) +.*$"), r"\1 <\1>"),
    # OpenBao's built-in `default` policy on every token (keychaind's policies are its groups).
    (re.compile(r"^((?:token_|identity_)?policies) +\[(.*)\]$"), lambda m: f"{m.group(1)} [{' '.join(p for p in m.group(2).split() if p != 'default')}]"),
    # The server's build and cluster: version, its commit date, a random cluster name and id,
    # and its storage backend (OpenBao dev: inmem; keychaind: its database).
    (re.compile(r"^(Version|Build Date|Cluster Name|Cluster ID|Storage Type) +.*$"), r"\1 <server-fact>"),
]
# The server's build date: keychaind has none to give, and the CLI leaves the row out when empty.
DROPPED_ROWS = re.compile(r"^Commit Date +.*$")


def normalise_bao(text, facts):
    sections = re.split(r"^(?=### )", text, flags=re.M)
    out = []
    for section in sections:
        if not section.strip():
            continue
        header, _, body = section.partition("\n")
        parts = re.split(r"^(--- std(?:out|err))\n", body, flags=re.M)
        rendered = [header, parts[0].rstrip("\n")]
        for name, content in zip(parts[1::2], parts[2::2]):
            rendered.append(name)
            rendered.append(normalise_output(header, content, facts))
        out.append("\n".join(r for r in rendered if r != ""))
    return "\n".join(out) + "\n"


def normalise_output(header, content, facts):
    stripped = content.strip()
    if "-format=json" in header and stripped.startswith(("{", "[")):
        try:
            value = json.loads(stripped)
        except ValueError:
            pass
        else:
            return json.dumps(normalise_json(value, facts), sort_keys=True, indent=1)
    lines = []
    for line in content.rstrip("\n").split("\n"):
        if DROPPED_ROWS.match(line):
            continue
        line = normalise_string(line, facts)
        # Table padding follows the longest cell of a column: a cell that differs shows on its own row.
        line = re.sub(r"(\S)  +", r"\1 ", line).rstrip()
        for pattern, replacement in TABLE_RULES:
            line = pattern.sub(replacement, line)
        lines.append(line)
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["hvac", "bao"])
    parser.add_argument("file")
    parser.add_argument("--addr", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--accessor", required=True)
    args = parser.parse_args()
    facts = [(args.token, "<token>"), (args.accessor, "<accessor>"), (args.addr, "<addr>")]
    text = open(args.file, encoding="utf-8").read()
    if args.kind == "hvac":
        sys.stdout.write(normalise_hvac(text.splitlines(), facts))
    else:
        sys.stdout.write(normalise_bao(text, facts))


if __name__ == "__main__":
    main()
