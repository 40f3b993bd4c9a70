#!/usr/bin/env python3
"""A real OAuth 2.0 authorization server for the refresh tests: Authlib's token endpoint on Flask.

    oauth_server.py [--cert CERT --key KEY]

Listens on 127.0.0.1 on a port of its own choosing (HTTPS with CERT and KEY) and prints
`listening PORT` on stdout once it accepts connections. The test that started it stops it by PID.

POST /token is Authlib's RFC 6749 token endpoint: the `refresh_token` grant (with refresh-token
rotation: each refresh answers a new refresh token and revokes the one presented) and the
`client_credentials` grant; two clients, `basic-client` (client_secret_basic) and `post-client`
(client_secret_post), both with the secret `s3cret-basic` / `s3cret-post`.

The test drives it through a control API (plain JSON, not OAuth):
- POST /control {"mode": "normal"|"slow"|"error"|"invalid_grant"|"answer", "delay": seconds,
  "expiresIn": seconds, "status": code, "body": object}: how /token answers from now on ("slow"
  sleeps `delay` then answers normally; "error" answers 503; "invalid_grant" answers 400
  invalid_grant; "answer" answers `body` with HTTP `status`, whatever was asked: a hostile provider).
- POST /seed {"clientId", "user"}: issues a token pair as if an authorization had happened;
  answers {"access_token", "refresh_token"}.
- POST /pressure {"status": 429|503, "retryAfter": header value or null, "times": N}: the next N
  /token calls answer `status` with that `Retry-After` (a provider's rate limit; times 0 ends it).
- GET /stats: {"calls": /token requests so far, "presented": every refresh token presented, in
  order, "authMethods": the client authentication method of each call, "issued": access tokens issued,
  "inFlight": /token requests being answered now, "maxInFlight": the most ever answered at once}.

For providers (section "Providers" below): POST /revoke is Authlib's RFC 7009 revocation endpoint
(any of the three client authentication methods a client is registered with); a third client,
`public-client`, is public (`none`: `client_id` in the form, no secret).
- GET /revocations: {"revocations": [{"token", "hint", "status", "revoked"}]}: every /revoke
  request in order, its `token` and `token_type_hint`, the HTTP status answered, and whether
  the token is revoked now.
- POST /clients/secret {"clientId", "secret"}: the client's secret from now on (a rotated secret:
  the old one is refused).

The connect tests' authorization-code grant (RFC 6749 §4.1 with PKCE required, RFC 7636):
client `connect-client` (client_secret_basic, secret `s3cret-connect`), any redirect URI on
loopback, the grants `authorization_code` and `refresh_token` (rotating, as above).
- GET /authorize?<authorization request>: the consent step, answered as JSON
  {"consent": true, "clientId", "scope"} (an invalid request: {"error"} with 400). The test
  decides by asking the same URL again with `decision=allow`, `decision=deny` (Authlib's
  access_denied) or `decision=error:<code>` (an error of the test's choosing, with an
  error_description): 302 to the redirect URI with code and state, or the error.
- POST /connect/control {"iss": text or null}: `iss` appended to every redirect from now on (RFC 9207).
- GET /connect/stats: {"authorizations": the query of every consent step and decision, "codes":
  codes issued, "exchanges": code exchanges answered with tokens}.
"""
import argparse
import os
import secrets
import signal
import sys
import threading
import time

from authlib.common.security import generate_token
from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2 import OAuth2Error
from authlib.oauth2.rfc6749 import ClientMixin, InvalidRequestError, TokenMixin, grants
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7636 import CodeChallenge
from urllib.parse import quote
from flask import Flask, jsonify, request
from werkzeug.serving import make_server

# Authlib refuses plain http except to `localhost`; this server listens on 127.0.0.1 only.
os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"

CLIENTS = {
    "basic-client": ("s3cret-basic", "client_secret_basic"),
    "post-client": ("s3cret-post", "client_secret_post"),
}
lock = threading.Lock()
control = {"mode": "normal", "delay": 0.0, "expiresIn": 3600, "status": 200, "body": {}}
stats = {"calls": 0, "presented": [], "authMethods": [], "issued": [], "inFlight": 0, "maxInFlight": 0}
refresh_tokens = {}  # refresh token -> StoredToken


class Client(ClientMixin):
    def __init__(self, client_id):
        self.client_id = client_id
        self.secret, self.auth_method = CLIENTS[client_id]

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        return scope or ""

    def check_redirect_uri(self, redirect_uri):
        return False

    def check_client_secret(self, client_secret):
        return secrets.compare_digest(client_secret, self.secret)

    def check_endpoint_auth_method(self, method, endpoint):
        with lock:
            stats["authMethods"].append(method)
        return method == self.auth_method

    def check_response_type(self, response_type):
        return False

    def check_grant_type(self, grant_type):
        return grant_type in ("refresh_token", "client_credentials")


class StoredToken(TokenMixin):
    def __init__(self, client_id, user, scope):
        self.client_id, self.user, self.scope, self.revoked = client_id, user, scope, False

    def check_client(self, client):
        return client.client_id == self.client_id

    def get_scope(self):
        return self.scope

    def get_expires_in(self):
        return control["expiresIn"]

    def is_expired(self):
        return False

    def is_revoked(self):
        return self.revoked


class RefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token):
        with lock:
            stats["presented"].append(refresh_token)
            token = refresh_tokens.get(refresh_token)
        if token is not None and not token.revoked:
            return token
        return None

    def authenticate_user(self, credential):
        return credential.user

    def revoke_old_credential(self, credential):
        credential.revoked = True


class ClientCredentialsGrant(grants.ClientCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]


def save_token(token, oauth_request):
    client = oauth_request.client
    with lock:
        stats["issued"].append(token["access_token"])
        if "refresh_token" in token:
            refresh_tokens[token["refresh_token"]] = StoredToken(
                client.client_id, getattr(oauth_request, "user", None) or "user", token.get("scope", ""))


# MARK: the connect tests' authorization-code grant

CONNECT_CLIENTS = {"connect-client": ("s3cret-connect", "client_secret_basic")}
connect_control = {"iss": None}
connect_stats = {"authorizations": [], "codes": 0, "exchanges": 0}
authorization_codes = {}  # code -> AuthorizationCode


class ConnectClient(Client):
    """A client registered for the authorization-code grant, redirecting to loopback only."""

    def __init__(self, client_id):
        self.client_id = client_id
        self.secret, self.auth_method = CONNECT_CLIENTS[client_id]

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri.startswith("http://127.0.0.1:") or redirect_uri.startswith("http://localhost:")

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type in ("authorization_code", "refresh_token")


class AuthorizationCode:
    def __init__(self, code, client_id, redirect_uri, scope, user, challenge, method):
        self.code, self.client_id, self.redirect_uri, self.scope, self.user = code, client_id, redirect_uri, scope, user
        self.code_challenge, self.code_challenge_method = challenge, method

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    def get_auth_time(self):
        return None

    def get_nonce(self):
        return None


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

    def validate_authorization_request(self):
        # Authlib 1.2 requires the verifier at the token endpoint only; this server also refuses
        # an authorization request without an S256 challenge (OAuth 2.1, RFC 9700 §2.1.1).
        redirect_uri = super().validate_authorization_request()
        if not self.request.data.get("code_challenge") or self.request.data.get("code_challenge_method") != "S256":
            raise InvalidRequestError('an S256 "code_challenge" is required', state=self.request.state,
                                      redirect_uri=redirect_uri)
        return redirect_uri

    def save_authorization_code(self, code, oauth_request):
        with lock:
            connect_stats["codes"] += 1
            authorization_codes[code] = AuthorizationCode(
                code, oauth_request.client.client_id, oauth_request.redirect_uri, oauth_request.scope, oauth_request.user,
                oauth_request.data.get("code_challenge"), oauth_request.data.get("code_challenge_method"))

    def query_authorization_code(self, code, client):
        with lock:
            item = authorization_codes.get(code)
        return item if item is not None and item.client_id == client.client_id else None

    def delete_authorization_code(self, authorization_code):
        with lock:
            authorization_codes.pop(authorization_code.code, None)
            connect_stats["exchanges"] += 1

    def authenticate_user(self, authorization_code):
        return authorization_code.user


def query_client(client_id):
    if client_id in CONNECT_CLIENTS:
        return ConnectClient(client_id)
    return Client(client_id) if client_id in CLIENTS else None


app = Flask(__name__)
server = AuthorizationServer(app, query_client=query_client, save_token=save_token)
server.register_grant(RefreshTokenGrant)
server.register_grant(ClientCredentialsGrant)
server.register_grant(AuthorizationCodeGrant, [CodeChallenge(required=True)])
# Bearer tokens whose expires_in is the control's value at the time they are issued.
server.register_token_generator("default", BearerTokenGenerator(
    lambda **_: generate_token(42), lambda **_: generate_token(48), lambda client, grant_type: control["expiresIn"]))


@app.post("/token")
def token():
    with lock:
        stats["calls"] += 1
        stats["inFlight"] += 1
        stats["maxInFlight"] = max(stats["maxInFlight"], stats["inFlight"])
        mode, delay, canned = control["mode"], control["delay"], (control["body"], control["status"])
    try:
        return pressure_answer() or (canned if mode == "answer" else answer_token(mode, delay))
    finally:
        with lock:
            stats["inFlight"] -= 1


def answer_token(mode, delay):
    if mode == "slow":
        time.sleep(delay)
    elif mode == "error":
        return jsonify(error="temporarily_unavailable"), 503
    elif mode == "invalid_grant":
        return jsonify(error="invalid_grant", error_description="the refresh token was revoked"), 400
    return server.create_token_response()


@app.post("/control")
def set_control():
    body = request.get_json()
    with lock:
        for key in ("mode", "delay", "expiresIn", "status", "body"):
            if key in body:
                control[key] = body[key]
    return jsonify(control)


@app.post("/seed")
def seed():
    body = request.get_json()
    refresh, access = secrets.token_urlsafe(36), secrets.token_urlsafe(32)
    with lock:
        refresh_tokens[refresh] = StoredToken(body["clientId"], body.get("user", "user"), "")
    return jsonify(access_token=access, refresh_token=refresh)


@app.get("/authorize")
def authorize():
    arguments = request.args.to_dict()
    decision = arguments.get("decision")
    with lock:
        connect_stats["authorizations"].append(arguments)
    if decision is None:
        try:
            grant = server.get_consent_grant(end_user="connect-user")
        except OAuth2Error as error:
            return jsonify(error=error.error), 400
        return jsonify(consent=True, clientId=grant.client.client_id, scope=grant.request.scope)
    if decision.startswith("error:"):
        location = (arguments["redirect_uri"] + "?error=" + quote(decision[6:]) + "&error_description="
                    + quote("the user said no, code " + arguments.get("state", "")) + "&state=" + quote(arguments.get("state", "")))
        response = app.response_class(status=302, headers={"Location": location})
    else:
        response = server.create_authorization_response(grant_user="connect-user" if decision == "allow" else None)
    with lock:
        iss = connect_control["iss"]
    if iss is not None and "Location" in response.headers:
        response.headers["Location"] += "&iss=" + quote(iss, safe="")
    return response


@app.post("/connect/control")
def set_connect_control():
    body = request.get_json()
    with lock:
        if "iss" in body:
            connect_control["iss"] = body["iss"]
    return jsonify(connect_control)


@app.get("/connect/stats")
def get_connect_stats():
    with lock:
        return jsonify(connect_stats)
pressure = {"status": 429, "retryAfter": None, "times": 0}


def pressure_answer():
    """The answer of a provider under pressure (POST /pressure), while it has answers left; else None."""
    with lock:
        if pressure["times"] <= 0:
            return None
        pressure["times"] -= 1
        status, retry_after = pressure["status"], pressure["retryAfter"]
    error = "slow_down" if status == 429 else "temporarily_unavailable"
    headers = {} if retry_after is None else {"Retry-After": retry_after}
    return jsonify(error=error), status, headers


@app.post("/pressure")
def set_pressure():
    body = request.get_json()
    with lock:
        for key in ("status", "retryAfter", "times"):
            if key in body:
                pressure[key] = body[key]
        return jsonify(pressure)


@app.get("/stats")
def get_stats():
    with lock:
        return jsonify(stats)


# --- Providers: RFC 7009 revocation, rotated client secrets, a public client ---

CLIENTS["public-client"] = (None, "none")
RefreshTokenGrant.TOKEN_ENDPOINT_AUTH_METHODS = RefreshTokenGrant.TOKEN_ENDPOINT_AUTH_METHODS + ["none"]
revocations = []  # every /revoke request: {"token", "hint", "status"}


class TokenRevocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]

    def query_token(self, token_string, token_type_hint):
        with lock:
            return refresh_tokens.get(token_string)

    def revoke_token(self, token, oauth_request):
        token.revoked = True


server.register_endpoint(TokenRevocation)


@app.post("/revoke")
def revoke():
    response = server.create_endpoint_response(TokenRevocation.ENDPOINT_NAME)
    with lock:
        revocations.append({"token": request.form.get("token"), "hint": request.form.get("token_type_hint"),
                            "status": response.status_code})
    return response


@app.get("/revocations")
def get_revocations():
    with lock:
        listed = [dict(entry, revoked=bool(refresh_tokens.get(entry["token"]) and refresh_tokens[entry["token"]].revoked))
                  for entry in revocations]
    return jsonify(revocations=listed)


@app.post("/clients/secret")
def rotate_client_secret():
    body = request.get_json()
    with lock:
        CLIENTS[body["clientId"]] = (body["secret"], CLIENTS[body["clientId"]][1])
    return jsonify(clientId=body["clientId"])


def main():
    # A test runner's thread may have spawned us with signals blocked: SIGTERM must stop us.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert")
    parser.add_argument("--key")
    arguments = parser.parse_args()
    ssl_context = (arguments.cert, arguments.key) if arguments.cert else None
    http = make_server("127.0.0.1", 0, app, threaded=True, ssl_context=ssl_context)
    print(f"listening {http.server_port}", flush=True)
    http.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
