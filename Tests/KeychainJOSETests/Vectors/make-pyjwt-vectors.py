#!/usr/bin/python3
"""Writes pyjwt-vectors.json: keys and tokens made by an independent JOSE library, PyJWT
(with `cryptography` for keys), for KeychainJOSETests. Run once; its output is committed, so the
tests do not need Python.

Usage: /usr/bin/python3 make-pyjwt-vectors.py > pyjwt-vectors.json

Every token carries the same claims (`claims`, issued at `now`, valid for an hour); `expect` is
what keychaind's verifier answers with every algorithm allowed: "valid", or the refusal
("algorithm", "signature", "unknownKeyID", "malformed").
"""
import base64
import hashlib
import hmac
import json
import sys

import cryptography
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

NOW = 1700000000


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def public_pem(key):
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii")


def number(value):
    return b64url(value.to_bytes((value.bit_length() + 7) // 8, "big"))


def coordinate(value, length):
    return b64url(value.to_bytes(length, "big"))


def public_jwk(key, kid, **extra):
    """The public JWK of `key`, written from the key's numbers (the RFC 7518 section 6 members)."""
    public = key.public_key()
    if isinstance(public, rsa.RSAPublicKey):
        numbers = public.public_numbers()
        jwk = {"kty": "RSA", "n": number(numbers.n), "e": number(numbers.e)}
    elif isinstance(public, ec.EllipticCurvePublicKey):
        numbers = public.public_numbers()
        length = (public.curve.key_size + 7) // 8
        crv = {"secp256r1": "P-256", "secp384r1": "P-384"}[public.curve.name]
        jwk = {"kty": "EC", "crv": crv, "x": coordinate(numbers.x, length), "y": coordinate(numbers.y, length)}
    else:
        raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64url(raw)}
    return {"kid": kid, **jwk, **extra}


keys = {
    "rsa": rsa.generate_private_key(65537, 2048),
    "rsa-small": rsa.generate_private_key(65537, 1024),
    "p256": ec.generate_private_key(ec.SECP256R1()),
    "p384": ec.generate_private_key(ec.SECP384R1()),
    "ed25519": ed25519.Ed25519PrivateKey.generate(),
}
attacker = rsa.generate_private_key(65537, 2048)

claims = {
    "iss": "https://issuer.example",
    "sub": "system:serviceaccount:prod:api",
    "aud": ["keychaind", "other"],
    "iat": NOW,
    "nbf": NOW,
    "exp": NOW + 3600,
    "kubernetes.io": {"namespace": "prod", "serviceaccount": {"name": "api"}},
}

tokens = []


def add(name, token, expect):
    tokens.append({"name": name, "token": token, "expect": expect})


def signed(alg, key_name, headers=None, key=None):
    return jwt.encode(claims, key or keys[key_name], algorithm=alg, headers=headers)


for alg, key_name in [
    ("RS256", "rsa"), ("RS384", "rsa"), ("RS512", "rsa"),
    ("PS256", "rsa"), ("PS384", "rsa"), ("PS512", "rsa"),
    ("ES256", "p256"), ("ES384", "p384"), ("EdDSA", "ed25519"),
]:
    add(f"{alg} with kid", signed(alg, key_name, {"kid": key_name}), "valid")
    add(f"{alg} without kid", signed(alg, key_name), "valid")

add("RS256 by a 1024-bit key", signed("RS256", "rsa-small", {"kid": "rsa-small"}), "signature")
add("RS256 by a 1024-bit key, no kid", signed("RS256", "rsa-small"), "signature")
add("ES256 by the P-384 key", signed("ES256", "p384", {"kid": "p384"}), "signature")
add("RS256 with an unknown kid", signed("RS256", "rsa", {"kid": "rotated-away"}), "unknownKeyID")
add("RS256 whose kid names the EC key", signed("RS256", "rsa", {"kid": "p256"}), "signature")
add("PS256 by the attacker's key, the attacker's JWK in the header",
    jwt.encode(claims, attacker, algorithm="PS256",
               headers={"kid": "rsa", "jwk": public_jwk(attacker, "rsa")}), "signature")
add("RS256 by the attacker's key, no kid", jwt.encode(claims, attacker, algorithm="RS256"), "signature")
add("RS256 with crit", signed("RS256", "rsa", {"kid": "rsa", "crit": ["exp"], "exp": NOW}), "malformed")
add("RS256 with b64 false", signed("RS256", "rsa", {"kid": "rsa", "b64": False}), "malformed")
add("alg none", jwt.encode(claims, None, algorithm="none"), "malformed")

# The classic confusion: HS256 keyed with the RSA public key's PEM, which a verifier that takes
# the algorithm from the token and the key from its set would accept. PyJWT refuses to make it
# (a PEM is no HMAC secret), so the MAC is computed here.
header = b64url(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "rsa"}, separators=(",", ":")).encode())
payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
mac = hmac.new(public_pem(keys["rsa"]).encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
add("HS256 keyed with the RSA public key PEM", f"{header}.{payload}.{b64url(mac)}", "algorithm")

json.dump({
    "generator": f"PyJWT {jwt.__version__}, cryptography {cryptography.__version__}",
    "now": NOW,
    "claims": claims,
    "jwks": {"keys": [public_jwk(key, name) for name, key in keys.items()]},
    "pem": {name: public_pem(key) for name, key in keys.items()},
    "tokens": tokens,
}, sys.stdout, indent=2)
sys.stdout.write("\n")
