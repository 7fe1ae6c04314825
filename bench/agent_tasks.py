"""Real work through Flora on the default configuration, checked by its effect: the tasks in
bench/agent_tasks/tasks.jsonl (46, 22 of them in Chinese) — files made, read and searched,
values computed with Python, facts found with the shell, a page read from a local web server,
a warehouse's stock levels from a local MCP server, plans of two tools — each sent through ``system.ask`` as a person would, every approval
question answered "yes", and scored by what happened: the file's content, the number or name in
the reply. Beside it, the same GGUF driving the same tools from a plain loop of this file's own
(raw llama-cpp-python, the agent's prompt and output schema, the same tools offered and the same
prompt budget, the tools called directly), scored the same way.

    .venv/bin/python bench/agent_tasks.py                     # every task, Flora then the raw loop
    .venv/bin/python bench/agent_tasks.py --limit 6           # a slice: one task of each kind first
    .venv/bin/python bench/agent_tasks.py --skip 19 --no-raw  # the rest after a first slice of 19
    .venv/bin/python bench/agent_tasks.py --kind py --no-raw  # the Python tasks through Flora only
    .venv/bin/python bench/agent_tasks.py --json out.json

Each side gets a fresh temporary data directory and each task a fresh user (a workspace of its
own, where the task's files are written first). ``{base}`` in a request is the address of a web
server this script runs on loopback for the run (``web_fetch`` and ``http_request`` are allowed
that one address, as an operator would for an intranet page); ``stock`` is an MCP server over
stdio (``tests/support/mcp_server.py --server stock``) installed in both sides' configuration. The two sides run one after the
other, not side by side (Flora's model hosts and a third copy of the model would not share two
cores fairly); on a busy machine compare them within one run. Prints done-right % (all, en, zh,
per kind), p50/p90 seconds per task, and the ratio of the p50s.
"""

from __future__ import annotations

import argparse
import http.server
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TASKS = ROOT / "bench" / "agent_tasks" / "tasks.jsonl"
PAGES = {
    "status.html": "<html><head><title>Build status</title></head><body><h1>Status</h1>"
                   "<p>All systems normal.</p><p>Build number: 4711</p></body></html>",
    "news.html": "<html><head><title>News</title></head><body><h1>Launch</h1><p>Today we announce Nimbus, "
                 "our new weather station for small farms. It ships in May.</p></body></html>",
}
# an MCP server whose data only it knows: the stock levels of a small warehouse
STOCK_SERVER = {"command": sys.executable, "args": ["-m", "tests.support.mcp_server", "--server", "stock"],
                "cwd": str(ROOT)}
MAX_APPROVALS = 8
DEFAULT_TIMEOUT_S = 900.0


def load_tasks(limit: int | None = None, kinds: list[str] | None = None) -> list[dict]:
    """The tasks, one of each kind in turn (so a ``limit`` slice covers every kind)."""
    tasks = [json.loads(line) for line in TASKS.read_text(encoding="utf-8").splitlines() if line.strip()]
    if kinds:
        tasks = [t for t in tasks if t["kind"] in kinds]
    ordered = interleaved(tasks, lambda task: task["kind"])
    return ordered[:limit] if limit else ordered


def interleaved(items: list[dict], key) -> list[dict]:
    """``items`` one of each ``key`` in turn (first of each, then second of each…), so that any
    slice from the start covers every kind."""
    groups: dict = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    ordered = []
    while any(groups.values()):
        for group in groups.values():
            if group:
                ordered.append(group.pop(0))
    return ordered


# --------------------------------------------------------------------------- the world
class PageServer:
    """A web server on loopback serving PAGES, for the run."""

    def __init__(self):
        self._dir = Path(tempfile.mkdtemp(prefix="flora-pages-"))
        for name, text in PAGES.items():
            (self._dir / name).write_text(text, encoding="utf-8")
        handler = lambda *a, **k: _QuietHandler(*a, directory=str(self._dir), **k)  # noqa: E731
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        shutil.rmtree(self._dir, ignore_errors=True)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def config_for(data_dir: Path, model: str | None) -> dict:
    """The default configuration on a fresh data dir; the page server's address opened to the
    web tools; the warehouse's MCP server installed; the shared copies of the packaged models."""
    config: dict = {"data_dir": str(data_dir),
                    "capabilities": {"settings": {"web_fetch": {"allow_private": ["127.0.0.1"]},
                                                  "http_request": {"allow_private": ["127.0.0.1"]}}},
                    "mcp": {"servers": {"stock": STOCK_SERVER}},
                    "actors": {"ask_timeout_s": DEFAULT_TIMEOUT_S}, "llm": {"timeout_s": 600}}
    if model:
        config["llm"]["model"] = model
    packaged = ROOT / "data" / "models"
    if packaged.is_dir():
        (data_dir / "models").symlink_to(packaged)
    return config


def workspace_of(config, user: str) -> Path:
    from capabilities.tools.workspace import Workspace

    return Workspace.for_context(SimpleNamespace(config=config, tenant_id=config.default_tenant, user_id=user)).root


def prepared(task: dict, base: str) -> str:
    return task["say"].replace("{base}", base)


def set_up(task: dict, workspace: Path) -> None:
    for name, text in task["setup"].items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def check(task: dict, workspace: Path, reply: str) -> tuple[bool, str]:
    """Done right: the file holds the text, or the reply holds the value (any of them; all with ``all``)."""
    wanted = task["check"]
    if "file" in wanted:
        path = workspace / wanted["file"]
        if not path.is_file():
            return False, f"no file {wanted['file']}"
        text = path.read_text(encoding="utf-8", errors="replace")
        ok = wanted["contains"] in text or wanted["contains"].replace("\n", " ") in " ".join(text.split())
        return ok, "" if ok else f"{wanted['file']} holds {text[:60]!r}"
    said = reply.replace(",", "").replace("，", "")
    hits = [v for v in wanted["reply"] if v.replace(",", "") in said]
    ok = len(hits) == len(wanted["reply"]) if wanted.get("all") else bool(hits)
    return ok, "" if ok else f"reply {reply[:100]!r}"


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


# --------------------------------------------------------------------------- Flora
def run_flora(tasks: list[dict], base: str, model: str | None, progress) -> list[dict]:
    import main as flora_main
    from config import load_config

    data_dir = Path(tempfile.mkdtemp(prefix="flora-agent-tasks-"))
    rows = []
    try:
        flora = flora_main.start_flora(config_for(data_dir, model))
        try:
            if flora.warming is not None:
                flora.warming.join(900)
            for task in tasks:
                user = f"bench-{task['id']}-{uuid.uuid4().hex[:6]}"
                workspace = workspace_of(flora.config, user)
                set_up(task, workspace)
                started = time.perf_counter()
                reply, approvals, error, answered_by = "", 0, "", ""
                try:
                    answer = flora.ask(prepared(task, base), user_id=user, timeout=DEFAULT_TIMEOUT_S)
                    while answer.get("message_type") == "task_paused" and answer.get("pause_kind") == "waiting_approval" \
                            and approvals < MAX_APPROVALS:
                        approvals += 1
                        answer = flora.ask("yes", user_id=user, timeout=DEFAULT_TIMEOUT_S)
                    reply = str(answer.get("message") or answer.get("error") or "")
                    answered_by = f"{answer.get('message_type')}:{answer.get('capability') or '-'}"
                except TimeoutError as exc:
                    error = str(exc)
                seconds = time.perf_counter() - started
                ok, why = check(task, workspace, reply) if not error else (False, error)
                rows.append({"id": task["id"], "lang": task["lang"], "kind": task["kind"], "ok": ok, "why": why,
                             "seconds": seconds, "approvals": approvals, "by": answered_by, "reply": reply[:300]})
                progress(f"flora {task['id']:9} {'ok ' if ok else 'BAD'} {seconds:6.1f} s  {answered_by:28} {why[:90]}")
        finally:
            flora.shutdown()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return rows


# --------------------------------------------------------------------------- the raw loop
class RawLoop:
    """The agent's work with nothing of Flora's around the model: llama_cpp.Llama with the
    agent's prompt (same tools offered, same budget) and output schema, each tool called
    directly, every call approved."""

    def __init__(self, config, model_file: Path):
        from llama_cpp import Llama

        from capabilities.agent.budget import counter_for
        from capabilities.agent.loop import Budgets
        from capabilities.agent.selection import ToolSelector, ranker_for
        from init_plugins import build_registry

        self.config = config
        self.registry = build_registry(config, llm=None)
        self.budgets = Budgets.from_config(config.agent, config.llm.n_ctx)
        self.selector = ToolSelector(ranker_for(config), config.agent.max_tools)
        self.counter = counter_for(config)
        self.llama = Llama(model_path=str(model_file), n_ctx=config.llm.n_ctx, n_threads=config.llm.n_threads,
                           verbose=False)

    def run(self, request: str, user: str) -> str:
        from capabilities.agent import prompt
        from capabilities.agent.loop import ToolBox
        from capabilities.agent.selection import fit_tools
        from capabilities.agent.transcript import Transcript
        from capabilities.base import ExecutionContext

        box = ToolBox.from_registry(self.registry)
        tools = fit_tools(self.selector.ranked(request, box.tools), self.counter, self.budgets.context,
                          self.selector.max_tools)
        schema = prompt.output_schema(tools)
        transcript = Transcript(request=request)
        for _ in range(self.budgets.max_steps):
            said = prompt.messages(tools, transcript, max_result_chars=self.budgets.max_result_chars,
                                   budget=self.budgets.context, counter=self.counter)
            out = self.llama.create_chat_completion(messages=said, max_tokens=self.budgets.reply_tokens,
                                                    temperature=0.0,
                                                    response_format={"type": "json_object", "schema": schema})
            text = out["choices"][0]["message"]["content"] or ""
            try:
                step = json.loads(text)
            except json.JSONDecodeError:
                transcript.add_invalid(text, "not JSON")
                continue
            if "final" in step or "ask" in step:
                return str(step.get("final") or step.get("ask"))
            spec = next((s for s in tools if s.name == step.get("tool")), None)
            entry = transcript.add_call(str(step.get("tool")), step.get("arguments") or {})
            if spec is None:
                entry.update(status="done", ok=False, error="no such tool")
                continue
            context = ExecutionContext(task_id=f"raw-{uuid.uuid4().hex[:8]}", user_id=user, config=self.config,
                                       settings=dict(self.config.capabilities.settings.get(spec.name, {})),
                                       registry=self.registry, request=request)
            try:
                value = spec.invoke(entry["arguments"], context)
                entry.update(status="done", ok=True, result=prompt.preview(value, self.budgets.max_result_chars))
            except Exception as exc:  # noqa: BLE001 - a tool's failure is data for the model, as in Flora
                entry.update(status="done", ok=False, error=f"{type(exc).__name__}: {exc}"[:500])
        return ""


def run_raw(tasks: list[dict], base: str, model: str | None, progress) -> list[dict]:
    from capabilities.llm.models import DEFAULT_MODEL, model_path
    from config import load_config

    data_dir = Path(tempfile.mkdtemp(prefix="flora-agent-raw-"))
    rows = []
    try:
        config = load_config(config_for(data_dir, model), env={})
        raw = RawLoop(config, model_path(model or DEFAULT_MODEL, ROOT / "data"))
        raw.run("hello", "warm-up")  # loads the model and evaluates the prompt's prefix, uncounted
        for task in tasks:
            user = f"raw-{task['id']}-{uuid.uuid4().hex[:6]}"
            workspace = workspace_of(config, user)
            set_up(task, workspace)
            started = time.perf_counter()
            reply = raw.run(prepared(task, base), user)
            seconds = time.perf_counter() - started
            ok, why = check(task, workspace, reply)
            rows.append({"id": task["id"], "lang": task["lang"], "kind": task["kind"], "ok": ok, "why": why,
                         "seconds": seconds, "reply": reply[:300]})
            progress(f"raw   {task['id']:9} {'ok ' if ok else 'BAD'} {seconds:6.1f} s  {why[:90]}")
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return rows


# --------------------------------------------------------------------------- report
def summary(rows: list[dict]) -> dict:
    def share(selected):
        return round(100.0 * sum(r["ok"] for r in selected) / len(selected), 1) if selected else None

    seconds = [r["seconds"] for r in rows]
    kinds = sorted({r["kind"] for r in rows})
    return {"tasks": len(rows), "right_pct": share(rows), "en_pct": share([r for r in rows if r["lang"] == "en"]),
            "zh_pct": share([r for r in rows if r["lang"] == "zh"]),
            "per_kind": {k: share([r for r in rows if r["kind"] == k]) for k in kinds},
            "p50_s": round(statistics.median(seconds), 1) if seconds else None,
            "p90_s": round(percentile(seconds, 0.9), 1) if seconds else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, help="the first N tasks (one of each kind in turn)")
    parser.add_argument("--skip", type=int, default=0,
                        help="leave out the first N tasks of that order (a run in parts: --limit 19, then --skip 19)")
    parser.add_argument("--kind", action="append", help="only tasks of this kind (make, read, search, py, shell, web, mcp, plan)")
    parser.add_argument("--model", help="the packaged model (default: the configured default)")
    parser.add_argument("--no-raw", action="store_true", help="Flora only")
    parser.add_argument("--no-flora", action="store_true", help="the raw loop only")
    parser.add_argument("--json", help="write the rows and the summary here")
    args = parser.parse_args(argv)
    from bench.conversation import interrupt_on_stop

    interrupt_on_stop()  # a run killed by timeout still stops Flora's processes
    tasks = load_tasks(None, args.kind)[args.skip:]
    tasks = tasks[:args.limit] if args.limit else tasks
    pages = PageServer()
    progress = lambda line: print(line, flush=True)  # noqa: E731
    result: dict = {}
    try:
        print(f"{len(tasks)} tasks; pages at {pages.base}", flush=True)
        if not args.no_flora:
            result["flora"] = run_flora(tasks, pages.base, args.model, progress)
        if not args.no_raw:
            result["raw"] = run_raw(tasks, pages.base, args.model, progress)
    finally:
        pages.close()
    summaries = {side: summary(rows) for side, rows in result.items()}
    print()
    for side, s in summaries.items():
        print(f"{side:6} right {s['right_pct']}% (en {s['en_pct']}%, zh {s['zh_pct']}%) of {s['tasks']}; "
              f"p50 {s['p50_s']} s, p90 {s['p90_s']} s; per kind {s['per_kind']}")
    if "flora" in summaries and "raw" in summaries and summaries["raw"]["p50_s"]:
        print(f"p50 ratio flora/raw: {summaries['flora']['p50_s'] / summaries['raw']['p50_s']:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summaries, "rows": result}, ensure_ascii=False, indent=1),
                                   encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
