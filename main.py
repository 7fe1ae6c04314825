"""Start Flora: ``python main.py`` (a conversation in the terminal), ``--test`` (one test
message, then exit), ``--api`` (the HTTP API and browser client; ``--host``, ``--port``),
``--debug`` (detailed logs), ``--config PATH``.

From Python::

    import main
    flora = main.start_flora({"llm": {"backend": "none"}})
    reply = flora.system.ask(flora.interaction, {"message_type": "user_input", "user_id": "user_001",
                                                 "content": "执行Dify工作流", "msg_id": "msg_001"}, timeout=60)
    flora.shutdown()

Start-up follows the seed's order: capabilities, the actor system, RouterActor, AgentActor
(with its ExecutionActors), InteractionActor, LoopSchedulerActor, then the wiring between
them; then what an earlier crash left behind is recovered; with ``loops.queue: rabbitmq``
also the RabbitBridge that feeds triggers in. The node's life (start, worker, stop) is in
agents/node.py; this module is the command line around it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from agents.node import Flora, StartupError, StopRequested, run_worker, start_flora  # noqa: F401  (main.X)
from common import messages as m
from config import ConfigError, FloraConfig, load_config

UVICORN_GRACE_S = 2  # open requests and event streams get this long after a stop signal


def converse(flora: Flora, user_id: str, stream=sys.stdin) -> None:
    print("Flora is ready. Type a request; 'exit' to leave.")
    while True:
        try:
            for note in flora.notifications(user_id):  # loop runs that finished since the last line
                print("flora (notification)> " + note["message"].replace("\n", "\nflora> "))
        except TimeoutError:
            pass
        try:
            print("you> ", end="", flush=True)
            line = stream.readline()
        except KeyboardInterrupt:
            break
        if not line or line.strip().lower() in ("exit", "quit", "/exit", "/quit"):
            break
        if not line.strip():
            continue
        streamed: list[str] = []

        def show(text: str) -> None:
            print(("" if streamed else "flora> ") + text.replace("\n", "\nflora> "), end="", flush=True)
            streamed.append(text)

        try:
            reply = flora.ask_streaming(line.strip(), show, user_id=user_id)
        except TimeoutError as exc:
            print(("\n" if streamed else "") + f"flora> {exc}")
            continue
        if streamed:
            print()
        else:
            print("flora> " + m.reply_text(reply).replace("\n", "\nflora> "))


def check_api_exposure(config: FloraConfig, env=None) -> None:
    """Refuse to serve without API keys anywhere but on a loopback address."""
    import os

    from api.auth import KeyRing, is_loopback

    if KeyRing.from_config(config, os.environ if env is None else env).open and not is_loopback(config.http.host):
        raise StartupError(f"refusing to serve {config.http.host} without API keys: set http.api_keys or "
                           f"${config.http.api_keys_env} (see docs/http_api.md), or listen on 127.0.0.1")


def serve_api(flora: Flora, signals) -> None:
    """Serve the HTTP API until SIGINT or SIGTERM; then return, so the caller shuts Flora down.
    ``signals`` (common.processes.StopSignals) are deferred throughout: building the app runs
    pydantic, which would swallow a StopRequested, and while uvicorn serves its own handler
    takes them; a signal that came before it was installed ends the server at once."""
    with signals.deferred():
        server = _api_server(flora, signals)
        http = flora.config.http
        print(f"Flora API on http://{http.host}:{http.port}/ (OpenAPI: /docs)", flush=True)
        server.run()


def _api_server(flora: Flora, signals):
    import signal
    from contextlib import contextmanager

    import uvicorn

    from api.app import create_app
    from api.server import uvicorn_config

    class Server(uvicorn.Server):
        @contextmanager
        def capture_signals(self):
            # uvicorn's own re-raises the signal after its graceful stop, which would kill this
            # process before the actors are shut down
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            if signals.stopping:  # it came while the app was built
                self.should_exit = True
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    http = flora.config.http
    return Server(uvicorn_config(create_app(flora), http, log_level="warning",
                                 timeout_graceful_shutdown=UVICORN_GRACE_S, access_log=False))


def print_status(config: FloraConfig, *, as_json: bool = False, out=sys.stdout) -> int:
    """``--status``: the live counts from the configured store, whether Flora runs or not;
    2 when the store cannot be read."""
    import json

    from common.status import StatusUnavailable, collect_status, render_text

    try:
        status = collect_status(config)
    except StatusUnavailable as exc:
        print(f"flora: {exc}", file=sys.stderr)
        return 2
    if config.capabilities.skills_dirs:  # each process loads them itself: shown as one starting now would
        from capabilities.skills import render_skills, skills_status

        status["skills"] = skills_status(config)
    out.write(json.dumps(status, indent=2, ensure_ascii=False) + "\n" if as_json else render_text(status))
    if "skills" in status and not as_json:
        out.write(render_skills(status["skills"]))
    return 0


TEST_MESSAGE = "Hello Flora! What can you do?"


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python main.py", description="Flora: durable agents on actors.")
    parser.add_argument("--config", help="YAML or JSON config file (default: $FLORA_CONFIG, then built-in defaults)")
    parser.add_argument("--test", action="store_true", help="send one test message, print the reply, exit")
    parser.add_argument("--debug", action="store_true", help="detailed logs")
    parser.add_argument("--user", default="user_001", help="user id for the conversation")
    parser.add_argument("--api", action="store_true", help="serve the HTTP API and the browser client")
    parser.add_argument("--host", help="--api: address to listen on (default: http.host, 127.0.0.1)")
    parser.add_argument("--port", type=int, help="--api: port (default: http.port, 8000)")
    parser.add_argument("--status", action="store_true",
                        help="print live counts (tasks, queues, loop tasks, nodes) from the store, then exit")
    parser.add_argument("--json", action="store_true", help="--status: print the counts as JSON")
    nodes = parser.add_argument_group("several nodes (see docs/deployment.md)")
    nodes.add_argument("--node", help="this node's name (actors.node)")
    nodes.add_argument("--admin-port", type=int, help="this node's Thespian admin port (actors.admin_port)")
    nodes.add_argument("--join", metavar="HOST:PORT",
                       help="the leader's admin address (actors.convention_address); the leader gives its own")
    nodes.add_argument("--worker", action="store_true",
                       help="run only ExecutionActors for the other nodes, no front end")
    return parser


def cli_config(args: argparse.Namespace, env=None) -> FloraConfig:
    """The configuration (file, then environment) with the command line's flags on top."""
    config = load_config(args.config, env=env)
    overrides: dict[str, Any] = {"log_level": "DEBUG"} if args.debug else {}
    if args.host or args.port:
        overrides["http"] = {**config.http.model_dump(), **({"host": args.host} if args.host else {}),
                             **({"port": args.port} if args.port else {})}
    actors = {key: value for key, value in (("node", args.node), ("admin_port", args.admin_port),
                                            ("convention_address", args.join)) if value is not None}
    if actors:
        overrides["actors"] = {**config.actors.model_dump(), **actors}
    return load_config({**config.to_dict(), **overrides}, env={}) if overrides else config


def main(argv: list[str] | None = None) -> int:
    """The command line. SIGTERM or SIGINT stops Flora cleanly (the actors, the model host, the
    HTTP server; running tasks are failed as after a restart); a second one forces it."""
    import os

    from common.processes import StopSignals

    args = argument_parser().parse_args(argv)
    running: list[Flora] = []

    def stop(signum: int) -> None:
        raise StopRequested(signum)  # unwinds a blocking ask or readline in the main thread

    def force(signum: int) -> None:
        for flora in running:
            flora.force_stop()
        os._exit(128 + signum)

    signals = StopSignals(stop, force)
    if not args.worker:  # the worker installs its own
        signals.install()
    try:
        return _run(args, signals, running)
    except StopRequested:
        return 0
    finally:
        signals.uninstall()


def _run(args: argparse.Namespace, signals, running: list) -> int:
    try:
        config = cli_config(args)
        if args.status:
            return print_status(config, as_json=args.json)
        if args.worker:
            run_worker(config)
            return 0
        if args.api:
            check_api_exposure(config)
        with signals.deferred():  # the start runs pydantic, which would swallow a StopRequested
            flora = start_flora(config)
        running.append(flora)
    except (ConfigError, StartupError) as exc:
        print(f"flora: {exc}", file=sys.stderr)
        return 2
    try:
        if signals.stopping:  # it came during the start
            return 0
        if args.api:
            serve_api(flora, signals)
            return 0
        if args.test:
            reply = flora.ask(TEST_MESSAGE, user_id=args.user)
            print(f"you> {TEST_MESSAGE}\nflora> " + m.reply_text(reply).replace("\n", "\nflora> "))
            return 0 if reply.get("message_type") in m.REPLY_TYPES - {"task_error"} else 1
        converse(flora, args.user)
        return 0
    finally:
        signals.escalate()  # from here on a signal forces the stop instead of interrupting it
        flora.shutdown()


if __name__ == "__main__":
    sys.exit(main())
