"""A working kvserver (checkpoint 2) that deliberately leaves processes behind.

At start it spawns a detached grandchild in its own session (its command line carries the
canary `kvserver-leak-canary`, so leftovers can be found in /proc), and the server ignores
SIGTERM, so the tests' terminate() does not stop it. Only an evaluation tool that kills the
whole process tree of the run cleans these up.
"""

import argparse
import json
import re
import signal
import subprocess
import sys
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

    def path_only(self):
        return self.path.split("?", 1)[0]

    def key(self):
        """The key of a /kv/<key> path; None (after replying) for anything else."""
        path = self.path_only()
        if not path.startswith("/kv/"):
            self.reply(404)
            return None
        key = path[len("/kv/"):]
        if not KEY.fullmatch(key):
            self.reply(400)
            return None
        return key

    def do_GET(self):
        if self.path_only() == "/kv":
            with LOCK:
                keys = sorted(STORE)
            self.reply(200, json.dumps({"keys": keys}).encode(), "application/json")
            return
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

    def do_DELETE(self):
        key = self.key()
        if key is None:
            return
        with LOCK:
            existed = STORE.pop(key, None) is not None
        self.reply(204 if existed else 404)


def main():
    parser = argparse.ArgumentParser(prog="kvserver")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(3600)", "kvserver-leak-canary"],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with ThreadingHTTPServer(("127.0.0.1", args.port), Handler) as server:
        server.serve_forever()


if __name__ == "__main__":
    main()
