"""Flora's HTTP API served on a thread, for tests and benches that call it over HTTP."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import httpx
import uvicorn

from agents.actor_system import free_port
from api.app import create_app


@contextmanager
def http_api(flora, timeout_s: float = 30.0):
    """Flora's HTTP API on a free port of 127.0.0.1 (uvicorn on a thread), as a client."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(flora), host="127.0.0.1", port=port, log_level="warning",
                                           access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the HTTP API did not start")
            time.sleep(0.05)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=timeout_s) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(timeout=10)
