#!/usr/bin/env python3
"""A webhook receiver for the webhook tests that checks every delivery's signature with the
Standard Webhooks project's own library (PyPI `standardwebhooks`), independently of keychaind.

    webhook_receiver.py

Run with the venv `scripts/bootstrap --test` makes for it. Listens on 127.0.0.1 on a port of its
own choosing and prints `listening PORT` on stdout once it accepts connections. The test that
started it stops it by PID.

POST /hook is the receiver: it verifies the delivery (`webhook-id`, `webhook-timestamp`,
`webhook-signature` against the secret given to /control, the timestamp within the library's five
minutes), records it, and answers 503 while it is told to fail, else 204.

The test drives it through a control API (plain JSON):
- POST /control {"secret": "whsec_...", "fail": n}: the secret deliveries are verified against
  from now on, and how many of the next deliveries to answer 503.
- GET /received: {"deliveries": [{"id", "timestamp", "signature", "verified", "error", "status",
  "body"}]}, in the order received; `body` is the delivery's JSON, `error` why it failed
  verification (null when it passed).
"""
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook

lock = threading.Lock()
state = {"secret": None, "fail": 0, "received": []}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def read_body(self):
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def answer(self, status, payload=None):
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = self.read_body()
        if self.path == "/control":
            control = json.loads(body)
            with lock:
                if "secret" in control:
                    state["secret"] = control["secret"]
                state["fail"] = control.get("fail", state["fail"])
            self.answer(200, {"ok": True})
            return
        if self.path != "/hook":
            self.answer(404, {"error": "not found"})
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        with lock:
            secret = state["secret"]
            failing = state["fail"] > 0
            if failing:
                state["fail"] -= 1
        error = None
        try:
            if secret is None:
                raise ValueError("no secret given to /control")
            Webhook(secret).verify(body, headers)
        except Exception as failure:
            error = f"{type(failure).__name__}: {failure}"
        status = 503 if failing else 204
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        with lock:
            state["received"].append({
                "id": headers.get("webhook-id"), "timestamp": headers.get("webhook-timestamp"),
                "signature": headers.get("webhook-signature"), "contentType": headers.get("content-type"),
                "verified": error is None, "error": error, "status": status, "body": parsed,
            })
        self.answer(status)

    def do_GET(self):
        if self.path != "/received":
            self.answer(404, {"error": "not found"})
            return
        with lock:
            self.answer(200, {"deliveries": list(state["received"])})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"listening {server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
