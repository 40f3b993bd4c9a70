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
from authlib.oauth2.rfc6749 import ClientMixin, TokenMixin, grants
from authlib.oauth2.rfc6750 import BearerTokenGenerator
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


app = Flask(__name__)
server = AuthorizationServer(app, query_client=lambda client_id: Client(client_id) if client_id in CLIENTS else None,
                             save_token=save_token)
server.register_grant(RefreshTokenGrant)
server.register_grant(ClientCredentialsGrant)
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
