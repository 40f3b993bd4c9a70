#!/usr/bin/env python3
"""A real OpenID Connect issuer for the workload login tests: discovery, a key set, and JWTs
minted by PyJWT (a library independent of keychaind's verifier), on Flask.

    oidc_issuer.py [--port PORT] [--cert CERT --key KEY] [--issuer-path PATH]

Listens on 127.0.0.1 on PORT (default: a port of its own choosing; HTTPS with CERT and KEY) and
prints `listening PORT` on stdout once it accepts connections. The test that started it stops it
by PID. Its issuer is `http(s)://127.0.0.1:PORT` followed by PATH exactly as given (default none),
so that `--issuer-path /tenant/` gives an issuer with a trailing slash; discovery and the key set
are served under PATH with one trailing `/` removed:
- GET PATH/.well-known/openid-configuration: {"issuer", "jwks_uri", ...}.
- GET PATH/jwks: the published public keys (JWKs with `kid`, `kty`, `use` "sig", and `alg` unless
  the key's `alg` member was removed), counted in /stats.

Keys, each with a kid, signing with PyJWT: RSA-2048 `rs256` (RS256); RSA-2048 `rsa` (RS384, RS512,
PS256, PS384, PS512; its JWK has no `alg`, as one key for several algorithms); P-256 `es256`; P-384
`es384`; Ed25519 `eddsa`; all published. Not published: `stray-rsa`, `stray-p256`, `stray-p384`,
`stray-ed25519` (the same issuer's keys missing from its key set: unknown kids) and `weak-rsa-1024`
(RS256, an RSA key too small to trust; PyJWT 2.6 signs with it as it is).

The test drives it through a control API (plain JSON, outside PATH):
- POST /mint {"alg": "RS256", "kid": ..., "key": kid, "claims": {...}, "omit": [...], "headers": {...},
  "embedJWK": bool} answers {"jwt", "kid"}. The claims are `claims` over the defaults (iss: the
  issuer, sub: system:serviceaccount:payments:api, aud: keychaind, iat: now, exp: now + 300,
  kubernetes.io: {namespace: payments, serviceaccount: {name: api}}), less the names in `omit`.
  The header is PyJWT's (alg, typ) with `kid` (the signing key's unless given; null leaves it out)
  and `headers` over it (`{"typ": null}` removes typ; `{"crit": [...]}` makes a token with crit).
  `key` signs with that kid's key instead of the algorithm's current one (a stray or the weak key).
  The attacks: alg `none` (no signature) and HS256/384/512 (the HMAC secret is the PEM public key
  of `kid`'s key, default rs256's, as /public-pem serves it: PyJWT refuses a PEM as an HMAC
  secret, so these are signed through a PyJWT algorithm with that check removed); `embedJWK`
  signs with an attacker's fresh key of the algorithm's kind and puts its public JWK in the
  header's `jwk`, with the kid of the real key.
- GET /public-pem?alg=RS256 (or ?kid=): the current key's SPKI public key as PEM, text/plain.
- POST /rotate {"alg", "keep": true}: a new key of the same kind for the algorithms the current key
  of `alg` signs, with a new kid, published and current from now on; the old one stays published
  unless `keep` is false. Answers {"kid"}.
- POST /remove {"kid"} and POST /publish {"kid"}: take a key out of the key set, put one in (a
  removed key still signs when asked for by `key`).
- POST /jwk-alg {"kid", "alg"}: the `alg` member of that key's JWK (null: none).
- POST /control {"jwks": "normal"|"error"|"slow"|"garbage"|"oversized", "delay": seconds, "size":
  bytes, "discoveryIssuer": string|null}: how /jwks answers from now on ("error": 503; "slow":
  after `delay` seconds; "garbage": 200 with a body that is not JSON; "oversized": the key set
  padded to `size` bytes, default 2 MiB), and the `issuer` discovery claims (null: the real one).
- GET /stats: {"jwksRequests", "discoveryRequests"}: requests so far, whatever they were answered.
"""
import argparse
import base64
import json
import signal
import sys
import threading
import time

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from flask import Flask, Response, jsonify, request
from jwt.algorithms import ECAlgorithm, HMACAlgorithm, OKPAlgorithm, RSAAlgorithm
from werkzeug.serving import make_server

RSA_ALGS = ["RS384", "RS512", "PS256", "PS384", "PS512"]
# Kinds of key: how to make one, and PyJWT's JWK encoder for its public half.
KINDS = {
    "rsa": (lambda: rsa.generate_private_key(65537, 2048), RSAAlgorithm),
    "rsa-1024": (lambda: rsa.generate_private_key(65537, 1024), RSAAlgorithm),
    "p256": (lambda: ec.generate_private_key(ec.SECP256R1()), ECAlgorithm),
    "p384": (lambda: ec.generate_private_key(ec.SECP384R1()), ECAlgorithm),
    "ed25519": (ed25519.Ed25519PrivateKey.generate, OKPAlgorithm),
}
KIND_OF_ALG = {"RS256": "rsa", "ES256": "p256", "ES384": "p384", "EdDSA": "ed25519", **{a: "rsa" for a in RSA_ALGS}}


class Key:
    def __init__(self, kid, kind, algs, jwk_alg, published):
        self.kid, self.kind, self.algs, self.jwk_alg, self.published = kid, kind, algs, jwk_alg, published
        self.private = KINDS[kind][0]()

    def jwk(self):
        jwk = json.loads(KINDS[self.kind][1].to_jwk(self.private.public_key()))
        if jwk.get("kty") == "EC":
            # PyJWT before 2.8 writes x and y as minimal integers: a coordinate with a leading zero
            # byte (1 in 256) came out short, which RFC 7518 6.2.1.2 forbids and keychaind refuses.
            size = {"P-256": 32, "P-384": 48, "P-521": 66}[jwk["crv"]]
            for name in ("x", "y"):
                raw = base64.urlsafe_b64decode(jwk[name] + "=" * (-len(jwk[name]) % 4))
                jwk[name] = base64.urlsafe_b64encode(raw.rjust(size, b"\0")).rstrip(b"=").decode()
        jwk.update(kid=self.kid, use="sig")
        if self.jwk_alg:
            jwk["alg"] = self.jwk_alg
        return jwk

    def pem(self):
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


class PEMSecretHMAC(HMACAlgorithm):
    """PyJWT's HMAC without its refusal of PEM keys as secrets: the key-confusion attack token."""

    def prepare_key(self, key):
        return key.encode()


lock = threading.Lock()
keys = {}     # kid -> Key
current = {}  # alg -> kid of the key that signs it
control = {"jwks": "normal", "delay": 0.0, "size": 2 * 1024 * 1024, "discoveryIssuer": None}
stats = {"jwksRequests": 0, "discoveryRequests": 0}
rotations = 0
issuer = ""
attack_jws = jwt.PyJWS()
for bits in (256, 384, 512):
    attack_jws.unregister_algorithm(f"HS{bits}")
    attack_jws.register_algorithm(f"HS{bits}", PEMSecretHMAC(getattr(HMACAlgorithm, f"SHA{bits}")))


def add_key(kid, kind, algs, jwk_alg, published=True):
    keys[kid] = Key(kid, kind, algs, jwk_alg, published)
    return keys[kid]


def make_keys():
    for kid, kind, algs, jwk_alg in [
        ("rs256", "rsa", ["RS256"], "RS256"), ("rsa", "rsa", RSA_ALGS, None), ("es256", "p256", ["ES256"], "ES256"),
        ("es384", "p384", ["ES384"], "ES384"), ("eddsa", "ed25519", ["EdDSA"], "EdDSA"),
    ]:
        add_key(kid, kind, algs, jwk_alg)
        current.update({alg: kid for alg in algs})
    for kid, kind in [("stray-rsa", "rsa"), ("stray-p256", "p256"), ("stray-p384", "p384"),
                      ("stray-ed25519", "ed25519")]:
        add_key(kid, kind, [], None, published=False)
    add_key("weak-rsa-1024", "rsa-1024", ["RS256"], "RS256", published=False)


def key_set():
    return {"keys": [key.jwk() for key in keys.values() if key.published]}


def claims(body):
    now = int(time.time())
    payload = {
        "iss": issuer, "sub": "system:serviceaccount:payments:api", "aud": "keychaind", "iat": now, "exp": now + 300,
        "kubernetes.io": {"namespace": "payments", "serviceaccount": {"name": "api"}},
        **body.get("claims", {}),
    }
    for name in body.get("omit", []):
        payload.pop(name, None)
    return payload


app = Flask(__name__)


@app.post("/mint")
def mint():
    body = request.get_json()
    alg = body.get("alg", "RS256")
    payload = claims(body)
    with lock:
        if alg == "none" or alg.startswith("HS"):
            signer = keys[body.get("kid") or current["RS256"]]
        else:
            signer = keys[body.get("key") or current[alg]]
        kid = body.get("kid", signer.kid)
        header = {**({} if kid is None else {"kid": kid}), **body.get("headers", {})}
        if alg == "none":
            token = jwt.encode(payload, None, algorithm="none", headers=header)
        elif alg.startswith("HS"):
            token = attack_jws.encode(json.dumps(payload, separators=(",", ":")).encode(), signer.pem(), algorithm=alg, headers=header)
        elif body.get("embedJWK"):
            attacker = Key("attacker", KIND_OF_ALG[alg], [alg], alg, published=False)
            token = jwt.encode(payload, attacker.private, algorithm=alg, headers={**header, "jwk": attacker.jwk()})
        else:
            token = jwt.encode(payload, signer.private, algorithm=alg, headers=header)
    return jsonify(jwt=token, kid=kid)


@app.get("/public-pem")
def public_pem():
    with lock:
        key = keys[request.args.get("kid") or current[request.args.get("alg", "RS256")]]
        return Response(key.pem(), mimetype="text/plain")


@app.post("/rotate")
def rotate():
    global rotations
    body = request.get_json()
    with lock:
        old = keys[current[body["alg"]]]
        rotations += 1
        new = add_key(f"{old.kid.split('.')[0]}.{rotations}", old.kind, old.algs, old.jwk_alg)
        current.update({alg: new.kid for alg in old.algs})
        old.published = old.published and body.get("keep", True)
    return jsonify(kid=new.kid)


@app.post("/remove")
def remove():
    with lock:
        keys[request.get_json()["kid"]].published = False
    return jsonify(key_set())


@app.post("/publish")
def publish():
    with lock:
        keys[request.get_json()["kid"]].published = True
    return jsonify(key_set())


@app.post("/jwk-alg")
def jwk_alg():
    body = request.get_json()
    with lock:
        keys[body["kid"]].jwk_alg = body["alg"]
    return jsonify(key_set())


@app.post("/control")
def set_control():
    body = request.get_json()
    with lock:
        for name in ("jwks", "delay", "size", "discoveryIssuer"):
            if name in body:
                control[name] = body[name]
        return jsonify(control)


@app.get("/stats")
def get_stats():
    with lock:
        return jsonify(stats)


def discovery():
    with lock:
        stats["discoveryRequests"] += 1
        claimed = control["discoveryIssuer"] or issuer
    base = issuer.removesuffix("/")
    return jsonify(issuer=claimed, jwks_uri=f"{base}/jwks", id_token_signing_alg_values_supported=sorted(KIND_OF_ALG),
                   response_types_supported=["id_token"], subject_types_supported=["public"])


def jwks():
    with lock:
        stats["jwksRequests"] += 1
        mode, delay, size, answer = control["jwks"], control["delay"], control["size"], key_set()
    if mode == "error":
        return jsonify(error="temporarily unavailable"), 503
    if mode == "garbage":
        return Response("<html>this is not a key set</html>", mimetype="application/json")
    if mode == "oversized":
        # A key set that parses, made big by a member a verifier would ignore.
        unpadded = len(json.dumps({**answer, "padding": ""}))
        answer["padding"] = "x" * max(0, size - unpadded)
        return Response(json.dumps(answer), mimetype="application/json")
    if mode == "slow":
        time.sleep(delay)
    return jsonify(answer)


def main():
    global issuer
    # A test runner's thread may have spawned us with signals blocked: SIGTERM must stop us.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--issuer-path", default="")
    arguments = parser.parse_args()
    ssl_context = (arguments.cert, arguments.key) if arguments.cert else None
    base = arguments.issuer_path.removesuffix("/")
    app.add_url_rule(f"{base}/.well-known/openid-configuration", view_func=discovery)
    app.add_url_rule(f"{base}/jwks", view_func=jwks)
    make_keys()
    http = make_server("127.0.0.1", arguments.port, app, threaded=True, ssl_context=ssl_context)
    issuer = f"{'https' if ssl_context else 'http'}://127.0.0.1:{http.server_port}{arguments.issuer_path}"
    print(f"listening {http.server_port}", flush=True)
    http.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
