#!/usr/bin/env python3
"""Writes rfc-vectors.json: the JWS examples of RFC 7515 (Appendix A), RFC 7520 (section 4) and
RFC 8037 (Appendix A.4) with their keys, as compact tokens and JWK sets.

The RFC bytes are not retyped: they are read from the test files of jwcrypto
(https://github.com/latchset/jwcrypto, commit eb7c266d18d1a45abce420492d48a3d01d281916,
jwcrypto/tests.py and jwcrypto/tests-cookbook.py), which carry them as Python literals, by
evaluating those literal assignments (no jwcrypto code runs). RFC 8037 A.4's compact JWS is not
in those files; it is copied from the RFC's text (section A.4) and checked below with
`cryptography` against the RFC's key, as every other vector is checked: a miscopied byte fails.

Usage: extract-rfc-vectors.py JWCRYPTO_TESTS_PY JWCRYPTO_TESTS_COOKBOOK_PY > rfc-vectors.json
"""
import ast
import base64
import json
import sys


def literals(path):
    """The module-level assignments of `path` whose values are literals, lists joined by `+`,
    or `bytes(bytearray(NAME))`, as a dict."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    names = {}

    def value(node):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return value(node.left) + value(node.right)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return value(node.left) % value(node.right)
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.Tuple):
            return tuple(value(element) for element in node.elts)
        return ast.literal_eval(node)

    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                try:
                    names[target.id] = value(statement.value)
                except (ValueError, KeyError, TypeError, SyntaxError):
                    pass
    return names


def b64url(data):
    return base64.urlsafe_b64encode(bytes(data)).rstrip(b"=").decode("ascii")


def compact(protected, payload, signature):
    return ".".join([b64url(protected), b64url(payload), b64url(signature)])


def public_jwk(jwk):
    """The JWK without its private members (d, p, q, dp, dq, qi)."""
    return {name: value for name, value in jwk.items() if name not in ("d", "p", "q", "dp", "dq", "qi")}


tests = literals(sys.argv[1])
cookbook = literals(sys.argv[2])

vectors = {
    "rfc7515-A.1": {
        "source": "RFC 7515 Appendix A.1 (HS256)",
        "token": compact(tests["A1_protected"], tests["A1_payload"], tests["A1_signature"]),
        "jwks": {"keys": [tests["SymmetricKeys"]["keys"][1]]},
    },
    "rfc7515-A.2": {
        "source": "RFC 7515 Appendix A.2 (RS256); the JWK with its private members, as the RFC gives it",
        "token": compact(tests["A2_protected"], tests["A2_payload"], tests["A2_signature"]),
        "jwks": {"keys": [tests["A2_key"]]},
    },
    "rfc7515-A.3": {
        "source": "RFC 7515 Appendix A.3 (ES256); the JWK with its private member, as the RFC gives it",
        "token": compact(tests["A3_protected"], tests["A3_payload"], tests["A3_signature"]),
        "jwks": {"keys": [tests["A3_key"]]},
    },
    "rfc7515-A.4": {
        "source": "RFC 7515 Appendix A.4 (ES512)",
        "token": compact(tests["A4_protected"], tests["A4_payload"], tests["A4_signature"]),
        "jwks": {"keys": [public_jwk(tests["A4_key"])]},
    },
    "rfc7515-A.5": {
        "source": "RFC 7515 Appendix A.5 (unsecured, alg none)",
        "token": tests["A5_protected"] + "." + b64url(tests["A2_payload"]) + ".",
        "jwks": {"keys": [public_jwk(tests["A2_key"])]},
    },
    "rfc7520-4.1": {
        "source": "RFC 7520 section 4.1 (RS256) with the key of section 3.3",
        "token": cookbook["JWS_compact_4_1_3"],
        "jwks": {"keys": [cookbook["RSA_Public_Key_3_3"]]},
    },
    "rfc7520-4.2": {
        "source": "RFC 7520 section 4.2 (PS384) with the key of section 3.3",
        "token": cookbook["JWS_compact_4_2_3"],
        "jwks": {"keys": [cookbook["RSA_Public_Key_3_3"]]},
    },
    "rfc7520-4.3": {
        "source": "RFC 7520 section 4.3 (ES512) with the key of section 3.1",
        "token": cookbook["JWS_compact_4_3_3"],
        "jwks": {"keys": [cookbook["EC_Public_Key_3_1"]]},
    },
    "rfc8037-A.4": {
        "source": "RFC 8037 Appendix A.4 (EdDSA, Ed25519) with the key of A.2",
        "token": "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc."
        "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg",
        "jwks": tests["PublicKeys_EdDsa"],
    },
}
vectors["rfc8037-A.4"]["jwks"] = {"keys": vectors["rfc8037-A.4"]["jwks"]["keys"]}


def check(vector):
    """Verifies the vector's signature with `cryptography`, so that a wrong byte shows here."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa, utils

    def number(text):
        return int.from_bytes(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), "big")

    def raw(text):
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    header, payload, signature = vector["token"].split(".")
    alg = json.loads(raw(header))["alg"]
    data, signature, key = f"{header}.{payload}".encode(), raw(signature), vector["jwks"]["keys"][0]
    if alg.startswith(("RS", "PS")):
        public = rsa.RSAPublicNumbers(number(key["e"]), number(key["n"])).public_key()
        digest = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}[alg[2:]]
        pad = padding.PKCS1v15() if alg.startswith("RS") else padding.PSS(padding.MGF1(digest), digest.digest_size)
        public.verify(signature, data, pad, digest)
    elif alg.startswith("ES"):
        curve = {"P-256": ec.SECP256R1(), "P-384": ec.SECP384R1(), "P-521": ec.SECP521R1()}[key["crv"]]
        digest = {"ES256": hashes.SHA256(), "ES384": hashes.SHA384(), "ES512": hashes.SHA512()}[alg]
        public = ec.EllipticCurvePublicNumbers(number(key["x"]), number(key["y"]), curve).public_key()
        half = len(signature) // 2
        der = utils.encode_dss_signature(int.from_bytes(signature[:half], "big"), int.from_bytes(signature[half:], "big"))
        public.verify(der, data, ec.ECDSA(digest))
    elif alg == "EdDSA":
        ed25519.Ed25519PublicKey.from_public_bytes(raw(key["x"])).verify(signature, data)


for name, vector in vectors.items():
    if not name.endswith(("A.1", "A.5")):
        check(vector)
json.dump(vectors, sys.stdout, indent=2, sort_keys=True)
sys.stdout.write("\n")
