"""kvserver, checkpoint 1: an in-memory key-value store over HTTP (PUT and GET)."""

import argparse
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = re.compile(r"[A-Za-z0-9_.-]{1,100}")
STORE = {}
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def reply(self, status, body=b"", content_type="application/octet-stream"):
        self.send_response(status)
        if body:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def key(self):
        """The key of a /kv/<key> path; None (after replying) for anything else."""
        path = self.path.split("?", 1)[0]
        if not path.startswith("/kv/"):
            self.reply(404)
            return None
        key = path[len("/kv/"):]
        if not KEY.fullmatch(key):
            self.reply(400)
            return None
        return key

    def do_GET(self):
        key = self.key()
        if key is None:
            return
        with LOCK:
            value = STORE.get(key)
        if value is None:
            self.reply(404)
        else:
            self.reply(200, value)

    def do_PUT(self):
        key = self.key()
        if key is None:
            return
        value = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with LOCK:
            existed = key in STORE
            STORE[key] = value
        self.reply(200 if existed else 201)


def main():
    parser = argparse.ArgumentParser(prog="kvserver")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    with ThreadingHTTPServer(("127.0.0.1", args.port), Handler) as server:
        server.serve_forever()


if __name__ == "__main__":
    main()
