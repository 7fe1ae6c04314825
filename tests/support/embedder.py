"""A program that embeds Flora the plain way: ``python -m tests.support.embedder CONFIG.json``.

It calls ``start_flora`` and installs no signal handler of its own (a SIGTERM ends it at
once, as it would end most programs), asks Flora one question (not with ``--no-ask``: the
real model may take minutes to answer), prints ``READY`` once Flora answered, then reads one
command from stdin:

- ``raise``: an uncaught exception ends it (the interpreter's exit runs, ``atexit`` included);
- ``segfault``: it crashes on a bad memory read (nothing of Python's exit runs);
- ``return``: it returns without calling ``shutdown`` (``atexit`` stops Flora);
- nothing (stdin left open): it waits, to be signalled.
"""

from __future__ import annotations

import ctypes
import json
import sys

from agents.node import start_flora
from common import messages as m


def main(config_path: str, ask: bool = True) -> None:
    flora = start_flora(json.loads(open(config_path).read()))
    if ask:
        reply = flora.ask("hello", user_id="embedder")
        if reply.get("message_type") not in m.REPLY_TYPES:
            raise SystemExit(f"Flora did not answer: {reply!r}")
    print("READY", flush=True)
    command = sys.stdin.readline().strip()
    if command == "raise":
        raise RuntimeError("the embedding program failed")
    if command == "segfault":
        ctypes.string_at(0)
    if command == "return":
        return
    raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1], ask="--no-ask" not in sys.argv[2:])
