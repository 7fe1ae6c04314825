"""How well the agent's model picks its first tool call: bench/agent_tools/tasks.jsonl (44
requests, half Chinese), each with the tool it needs and what its arguments must hold, asked
with the agent's real prompt and output schema; beside it, the raw llama.cpp call of the same
prompt with the same schema.

    .venv/bin/python bench/agent_tools.py                       # the packaged default model, in-process
    .venv/bin/python bench/agent_tools.py --model qwen2.5-coder-0.5b --limit 10
    .venv/bin/python bench/agent_tools.py --backend openai --base-url http://127.0.0.1:8080/v1 --no-raw
    .venv/bin/python bench/agent_tools.py --backend openai --base-url URL --model-name qwen2.5 --native-tools

A case is right when the first step calls the expected tool and its arguments pass Flora's
checks (the tool's JSON schema, no unknown names) and hold each expected text (case-insensitive
substring; "df" in a shell command). The tool catalogue is each tool as the registry has it
when it is registered (shell, file_*, web_* ... once installed), else the schema in
bench/agent_tools/tools.json. Flora's figure goes through Flora's LLM adapter and the loop's
``propose`` (prompt, constrained reply, checks); the raw figure loads the same GGUF with
llama_cpp.Llama (same n_threads, n_ctx) and calls create_chat_completion with the same
messages and schema as ``response_format``, scored the same way. The two take turns task by
task (after one uncounted warm-up each), so a busy machine slows both alike. Both print
right % and latency p50/p90, and the ratio of the p50s.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TASKS = ROOT / "bench" / "agent_tools" / "tasks.jsonl"
TOOLS = ROOT / "bench" / "agent_tools" / "tools.json"


def load_tasks(limit: int | None = None) -> list[dict]:
    tasks = [json.loads(line) for line in TASKS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return tasks[:limit] if limit else tasks


def catalogue(config) -> tuple[list, dict]:
    """The tools as CapabilitySpecs: the registry's where registered, else the task set's
    schemas (their handler is never called: the bench asks for the first step only)."""
    from capabilities.base import CapabilitySpec
    from init_plugins import build_registry

    registry = build_registry(config, llm=None)
    registered = {s.name: s for s in registry.executables()}
    declared = json.loads(TOOLS.read_text(encoding="utf-8"))
    specs, source = [], {}
    for name, schema in declared.items():
        if name in registered:
            specs.append(registered[name])
            source[name] = "registry"
        else:
            specs.append(CapabilitySpec(name=name, description=schema["description"], parameters=schema["parameters"],
                                        handler=_never_called))
            source[name] = "tools.json"
    return specs, source


def _never_called(**_):
    raise AssertionError("the bench never runs a tool")


def score(tools, task: dict, step: dict | None) -> tuple[bool, str]:
    """Right tool with arguments that pass Flora's checks and hold the expected texts."""
    from capabilities.agent.loop import step_problem

    if step is None:
        return False, "no usable step"
    problem = step_problem(tools, step)
    if problem is not None:
        return False, problem
    if step.get("tool") != task["tool"]:
        return False, f"tool {step.get('tool') or next(iter(step))!r}"
    for name, wanted in task["expect"].items():
        got = step["arguments"].get(name)
        if got is None or str(wanted).lower() not in json.dumps(got, ensure_ascii=False).lower():
            return False, f"{name}={got!r}"
    return True, ""


class FloraSide:
    """The agent's first step as Flora asks it: Flora's LLM adapter and the loop's ``propose``."""

    name = "flora"

    def __init__(self, llm, tools, budgets):
        self._llm, self._tools, self._budgets = llm, tools, budgets

    def step(self, request: str) -> tuple[dict | None, str]:
        from capabilities.agent.loop import propose
        from capabilities.agent.transcript import Transcript

        proposal = propose(self._llm, self._tools, Transcript(request=request), self._budgets,
                           native=self._budgets.native_tools)
        return proposal.step, (proposal.error or "")[:80]


class RawSide:
    """The same messages and schema straight to llama_cpp.Llama.create_chat_completion."""

    name = "raw"

    def __init__(self, model_file: Path, tools, budgets, n_threads: int, n_ctx: int):
        from llama_cpp import Llama

        from capabilities.agent import prompt

        self._llama = Llama(model_path=str(model_file), n_threads=n_threads, n_ctx=n_ctx, verbose=False)
        self._tools, self._budgets = tools, budgets
        self._schema = prompt.output_schema(tools.tools)

    def step(self, request: str) -> tuple[dict | None, str]:
        from capabilities.agent import prompt
        from capabilities.agent.transcript import Transcript

        said = prompt.messages(self._tools.tools, Transcript(request=request),
                               max_result_chars=self._budgets.max_result_chars)
        out = self._llama.create_chat_completion(messages=said, max_tokens=self._budgets.reply_tokens,
                                                 temperature=0.0,
                                                 response_format={"type": "json_object", "schema": self._schema})
        text = out["choices"][0]["message"]["content"] or ""
        try:
            step = json.loads(text)
        except json.JSONDecodeError:
            return None, "not JSON"
        return (step, "") if isinstance(step, dict) else (None, "not an object")


def run(sides: list, tools, tasks: list[dict], progress) -> dict[str, list[dict]]:
    """Each task on every side, the order alternating from task to task, so both see the same
    load on a shared machine. One warm-up request each first (loading the model, evaluating
    the prompt's stable prefix) is not counted."""
    for side in sides:
        side.step("hello")
    rows: dict[str, list[dict]] = {side.name: [] for side in sides}
    for i, task in enumerate(tasks):
        for side in (sides if i % 2 == 0 else sides[::-1]):
            started = time.perf_counter()
            step, error = side.step(task["request"])
            elapsed = (time.perf_counter() - started) * 1000
            right, why = score(tools, task, step) if not error else (False, error)
            rows[side.name].append({"id": task["id"], "lang": task["lang"], "right": right, "why": why,
                                    "ms": elapsed, "step": step})
            progress(f"{side.name:<5} {task['id']:<18} {'ok ' if right else 'BAD'} {elapsed:7.0f} ms {why}")
    return rows


def summary(rows: list[dict]) -> dict:
    ms = sorted(r["ms"] for r in rows)
    by_lang = {lang: [r for r in rows if r["lang"] == lang] for lang in ("en", "zh")}
    return {"n": len(rows), "right_pct": 100 * sum(r["right"] for r in rows) / max(1, len(rows)),
            **{f"right_pct_{lang}": 100 * sum(r["right"] for r in rs) / max(1, len(rs))
               for lang, rs in by_lang.items()},
            "p50_ms": statistics.median(ms) if ms else 0.0,
            "p90_ms": ms[min(len(ms) - 1, int(0.9 * len(ms)))] if ms else 0.0}


def report(flora: dict, raw: dict | None, note: str, out=print) -> None:
    out("")
    out(f"{'':8}{'n':>4}{'right %':>9}{'en %':>7}{'zh %':>7}{'p50 ms':>9}{'p90 ms':>9}")
    for name, s in (("flora", flora), ("raw", raw)):
        if s is not None:
            out(f"{name:8}{s['n']:>4}{s['right_pct']:>9.1f}{s['right_pct_en']:>7.1f}{s['right_pct_zh']:>7.1f}"
                f"{s['p50_ms']:>9.0f}{s['p90_ms']:>9.0f}")
    if raw is not None and raw["p50_ms"]:
        out(f"p50 ratio flora/raw: {flora['p50_ms'] / raw['p50_ms']:.2f}")
    if note:
        out(note)


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", help="a Flora config file (its llm and agent sections are used)")
    parser.add_argument("--backend", choices=["local", "openai"], default=None)
    parser.add_argument("--model", help="catalogue name of a packaged model (backend local)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (backend openai)")
    parser.add_argument("--model-name", default="", help="the model's name at the endpoint")
    parser.add_argument("--native-tools", action="store_true",
                        help="backend openai: ask through the server's function calling (agent.native_tools)")
    parser.add_argument("--limit", type=int, help="the first N tasks only")
    parser.add_argument("--no-raw", action="store_true", help="skip the raw llama.cpp figure")
    parser.add_argument("--json", help="write every row and the summaries here")
    parser.add_argument("--quiet", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    from capabilities.agent.loop import Budgets, ToolBox
    from capabilities.llm import build_llm
    from capabilities.llm.models import model_path
    from config import load_config

    args = argument_parser().parse_args(argv)
    config = load_config(args.config, env={}) if args.config else load_config(None, env={})
    settings = config.llm.model_dump() | {"data_dir": str(ROOT / "data")}
    if args.model:
        settings["model"] = args.model
    if args.backend == "openai" or args.base_url:
        if not args.base_url:
            raise SystemExit("--backend openai needs --base-url")
        settings.update(backend="openai", base_url=args.base_url, model_name=args.model_name)
    elif args.backend == "local":
        settings["backend"] = "local"
    settings.update(host_url="", understanding_host_url="")  # in this process: no model host
    config = load_config({**config.to_dict(), "memory": {"enabled": False}}, env={})
    progress = (lambda _line: None) if args.quiet else (lambda line: print(line, flush=True))
    specs, source = catalogue(config)
    tools = ToolBox(specs)
    budgets = Budgets.from_config(config.agent)
    if args.native_tools:
        budgets = dataclasses.replace(budgets, native_tools=True)
    tasks = load_tasks(args.limit)
    llm = build_llm(settings)
    local = settings["backend"] == "local"
    model_file = Path(settings["model_path"]) if settings.get("model_path") else \
        model_path(settings["model"], ROOT / "data") if local else None
    print(f"agent tools bench: {len(tasks)} tasks, backend {settings['backend']}, model "
          f"{model_file.name if model_file else settings.get('model_name') or settings['base_url']}, "
          f"threads {settings['n_threads']}; tools from "
          + ", ".join(f"{n} ({s})" for n, s in source.items()), flush=True)
    sides = [FloraSide(llm, tools, budgets)]
    note = ""
    if args.no_raw:
        note = "raw llama.cpp: skipped (--no-raw)"
    elif not local or model_file is None or not model_file.is_file():
        note = "raw llama.cpp: only for a local GGUF (backend local)"
    else:
        sides.append(RawSide(model_file, tools, budgets, settings["n_threads"], settings["n_ctx"]))
    rows = run(sides, tools, tasks, progress)
    flora_rows, raw_rows = rows["flora"], rows.get("raw")
    flora_sum, raw_sum = summary(flora_rows), summary(raw_rows) if raw_rows else None
    report(flora_sum, raw_sum, note)
    if args.json:
        Path(args.json).write_text(json.dumps({"flora": {"summary": flora_sum, "rows": flora_rows},
                                               "raw": raw_sum and {"summary": raw_sum, "rows": raw_rows}},
                                              ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
