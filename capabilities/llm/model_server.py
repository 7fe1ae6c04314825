"""The model host's process: llama-cpp-python's OpenAI-compatible server with a bounded stop.

``python -m llama_cpp.server`` runs uvicorn with its defaults: on SIGTERM it waits, without a
limit, for the requests in flight, and a generation in llama.cpp can run for minutes. A
service manager's stop would then hang (and end in SIGKILL). This entry point builds the same
application from the same command-line flags and serves it with a limit: open requests get
GRACE_S after the first SIGTERM/SIGINT, the process is gone HARD_EXIT_S after it whatever it
was doing, and a second signal ends it at once. Nothing is lost: the server keeps no state
but the loaded weights.

Run as a script (``python .../model_server.py --model ...``) so that it needs nothing of
Flora on the import path; ModelHost starts it.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading

GRACE_S = 2
HARD_EXIT_S = 4.0


def main(argv: list[str] | None = None) -> None:
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.settings import ModelSettings, ServerSettings, Settings

    parser = argparse.ArgumentParser(description="Flora's model host (llama-cpp-python's server)")
    add_args_from_model(parser, Settings)
    args = parser.parse_args(argv)
    server_settings = parse_model_from_args(ServerSettings, args)
    app = create_app(server_settings=server_settings, model_settings=[parse_model_from_args(ModelSettings, args)])

    class BoundedServer(uvicorn.Server):
        def handle_exit(self, sig: int, frame) -> None:
            if self.should_exit:  # the second signal
                os._exit(128 + sig)
            timer = threading.Timer(HARD_EXIT_S, os._exit, args=(0,))  # a generation may not yield
            timer.daemon = True
            timer.start()
            super().handle_exit(sig, frame)

    config = uvicorn.Config(app, host=server_settings.host, port=server_settings.port, log_level="warning",
                            timeout_graceful_shutdown=GRACE_S)
    BoundedServer(config).run()


if __name__ == "__main__":
    sys.exit(main())
