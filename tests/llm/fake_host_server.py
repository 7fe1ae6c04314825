"""A stand-in for the model host's server process, for supervision tests: an OpenAI-style
HTTP server on the ``--port`` it is given (the rest of ModelHost's flags are read where they
matter and otherwise ignored), answering ``GET /v1/models`` and ``POST /v1/chat/completions``
with a reply naming its own pid, and writing the state file the real one writes.

``FAKE_HOST_HANG_ONCE=<path>``: when that file exists, the next chat request removes it,
writes ``<path>.seen`` and never answers — a request in flight, for the test to kill the
process under. ``FAKE_HOST_EXIT_ON_START=<path>``: while that file exists, the process exits
with status 3 as it starts (a host that cannot come back yet).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model_alias", default="fake")
    parser.add_argument("--flora_state_file", default="")
    parser.add_argument("--flora_restarts", type=int, default=0)
    args, _ = parser.parse_known_args()
    refuse = os.environ.get("FAKE_HOST_EXIT_ON_START")
    if refuse and Path(refuse).exists():
        print("fake host: refusing to start", flush=True)
        sys.exit(3)
    hang = os.environ.get("FAKE_HOST_HANG_ONCE")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def _json(self, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._json({"object": "list", "data": [{"id": args.model_alias}]})

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if hang and Path(hang).exists():
                Path(hang).unlink()
                Path(hang + ".seen").write_text(str(os.getpid()))
                threading.Event().wait()  # until killed
            self._json({"model": args.model_alias, "usage": {"prompt_tokens": 1, "completion_tokens": 1},
                        "choices": [{"index": 0, "message": {"role": "assistant",
                                                             "content": f"answered by {os.getpid()}"}}]})

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    if args.flora_state_file:
        Path(args.flora_state_file).write_text(json.dumps(
            {"pid": os.getpid(), "model": args.model_alias, "port": args.port, "state": "loaded",
             "since": time.time(), "restarts": args.flora_restarts}))
    print(f"fake host {os.getpid()} on {args.port}", flush=True)
    server.serve_forever(0.05)


if __name__ == "__main__":
    main()
