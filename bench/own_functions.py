"""Whether a person's own functions get called: bench/own_functions/cases.jsonl (179 requests, zh
and en) over the functions of bench/own_functions/library.py (typed parameters, a docstring,
``@capability`` with nothing else). Each case offers one function (``single``), a choice of two
to four (``multiple``) or none that fits (``irrelevant``: the right outcome is an answer and no
call — and, where the request asks what only the person's own records or the live world could
tell, no invented fact in it).

    .venv/bin/python bench/own_functions.py                        # every case, Flora and the raw model
    .venv/bin/python bench/own_functions.py --limit 30             # a slice: categories and languages in turn
    .venv/bin/python bench/own_functions.py --category single --no-raw
    .venv/bin/python bench/own_functions.py --json out.json

Flora: one Flora on the default configuration (the packaged models, agent_tasks.py's set-up) with
a skills folder of its own; for each case the offered functions are written into it as skill
modules (each records the call it receives into a file), the request is sent through
``system.ask`` from a fresh user, and an approval question is answered "yes". A question back
(a paused task) is a miss, and what it asked is recorded. Raw: the same GGUF through
llama-cpp-python, the functions in its own chat template's tool format (Qwen2.5 ``<tools>`` /
``<tool_call>``), its first reply parsed. Both are scored alike: right when the expected function
was the only one called, with every expected argument (numbers within 1e-6 relative, strings
compared case- and space-insensitively; an argument not expected must equal its default).
Prints right % per category and language, the irrelevance no-call and invented-fact rates,
p50/p90 seconds, and the ratios.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.agent_tasks import DEFAULT_TIMEOUT_S, MAX_APPROVALS, config_for, interleaved, percentile  # noqa: E402

CASES = ROOT / "bench" / "own_functions" / "cases.jsonl"
LIBRARY = ROOT / "bench" / "own_functions" / "library.py"
CATEGORIES = ("single", "multiple", "irrelevant")
RAW_MAX_TOKENS = 160  # a call of any of these functions fits; prose past it is no call either way


def load_cases(limit: int | None = None, categories: list[str] | None = None) -> list[dict]:
    """The cases, one of each (language, category) in turn, so a ``limit`` slice covers all."""
    cases = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]
    if categories:
        cases = [c for c in cases if c["category"] in categories]
    ordered = interleaved(cases, lambda case: (case["lang"], case["category"]))
    return ordered[:limit] if limit else ordered


# --------------------------------------------------------------------------- the functions
class Library:
    """library.py cut into its prelude (imports, ``record``, enums) and one source per function."""

    def __init__(self, path: Path = LIBRARY):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        self.functions: dict[str, str] = {}
        prelude = []
        for node in tree.body:
            text = ast.get_source_segment(source, node, padded=False)
            if isinstance(node, ast.FunctionDef) and node.decorator_list:
                first = node.decorator_list[0].lineno
                self.functions[node.name] = "\n".join(source.splitlines()[first - 1:node.end_lineno])
            elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
                prelude.append(text)
        self.prelude = "\n\n\n".join(prelude)

    def module(self, name: str, calls_file: Path) -> str:
        """A skill module offering ``name`` alone, recording its calls into ``calls_file``."""
        prelude = self.prelude.replace('CALLS_FILE = ""', f"CALLS_FILE = {str(calls_file)!r}")
        return f"{prelude}\n\n\n{self.functions[name]}\n"

    def specs(self) -> dict:
        """Each function's CapabilitySpec as Flora derives it (for the raw side's prompt)."""
        from capabilities.base import spec_of

        space: dict = {"__name__": "own_functions_library"}
        exec(compile(self.prelude + "\n\n\n" + "\n\n\n".join(self.functions.values()), str(LIBRARY), "exec"), space)
        return {name: spec_of(space[name]) for name in self.functions}


# --------------------------------------------------------------------------- scoring
def _norm(text: str) -> str:
    return " ".join(re.sub(r"[\s'\"“”‘’.,，。!！?？:：;；]+", " ", str(text).lower()).split())


def same_value(wanted, got) -> bool:
    """Numbers within 1e-6 relative; strings compared normalised (the call may frame the
    expected text in a few more words); lists item by item; ``{"one_of": [...]}`` any of them."""
    if isinstance(wanted, dict) and "one_of" in wanted:
        return any(same_value(w, got) for w in wanted["one_of"])
    if isinstance(wanted, bool) or isinstance(got, bool):
        return wanted is got or str(wanted).lower() == str(got).lower()
    if isinstance(wanted, (int, float)):
        try:
            number = float(got)
        except (TypeError, ValueError):
            return False
        return math.isclose(number, wanted, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(wanted, list):
        return isinstance(got, list) and len(got) == len(wanted) and all(map(same_value, wanted, got))
    if isinstance(wanted, str) and isinstance(got, str):
        w, g = _norm(wanted), _norm(got)
        return w == g or (bool(w) and w in g and len(g) <= 2 * len(w) + 12)
    return wanted == got


def score_call(case: dict, calls: list[dict], specs: dict) -> tuple[bool, str]:
    """Right function, right arguments, nothing else called."""
    expect = case["expect"]
    if expect is None:
        return (not calls), (f"called {calls[0]['function']}" if calls else "")
    if not calls:
        return False, "no call"
    names = {call["function"] for call in calls}
    right = [call for call in calls if call["function"] == expect["function"]]
    if not right or names != {expect["function"]}:
        return False, f"called {', '.join(sorted(names))}"
    got = right[0]["arguments"]
    spec = specs.get(expect["function"])
    defaults = {n: s.get("default") for n, s in (spec.properties.items() if spec else ())}
    for name, wanted in expect["arguments"].items():
        if not same_value(wanted, got.get(name)):
            return False, f"{name}={got.get(name)!r}"
    for name, value in got.items():
        if name not in expect["arguments"] and value not in (None, "") and value != defaults.get(name):
            return False, f"{name}={value!r} (not asked)"
    return True, ""


def invented(case: dict, reply: str) -> bool:
    """A fact the answer cannot know: a figure the request does not give, or a case's marker."""
    if not case.get("unknowable"):
        return False
    said = set(re.findall(r"\d+", case["request"]))
    if any(number not in said for number in re.findall(r"\d+", reply)):
        return True
    lowered, asked = f" {reply.lower()} ", f" {case['request'].lower()} "
    for marker in (m.lower() for m in case.get("invented", [])):
        for found in re.finditer(re.escape(marker), lowered):
            # the request's own words said back ("I cannot tell who won the football match …") claim nothing
            said_back = lowered[max(0, found.start() - 12):found.end() + 12].strip()
            if said_back not in asked and lowered[found.start():found.end() + 12] not in asked:
                return True
    return False


# --------------------------------------------------------------------------- Flora
def run_flora(cases: list[dict], library: Library, specs: dict, model: str | None, progress) -> list[dict]:
    import main as flora_main

    data_dir = Path(tempfile.mkdtemp(prefix="flora-own-functions-"))
    skills, calls_file = data_dir / "skills", data_dir / "calls.jsonl"
    skills.mkdir()
    config = config_for(data_dir, model)
    config["capabilities"].update(skills_dirs=[str(skills)], skills_reload_s=0.0)
    rows = []
    try:
        flora = flora_main.start_flora(config)
        try:
            if flora.warming is not None:
                flora.warming.join(900)
            for case in cases:
                install(skills, library, case["functions"], calls_file)
                user = f"bench-{case['id']}-{uuid.uuid4().hex[:6]}"
                started = time.perf_counter()
                reply, asked, approvals = "", "", 0
                try:
                    answer = flora.ask(case["request"], user_id=user, timeout=DEFAULT_TIMEOUT_S)
                    while answer.get("message_type") == "task_paused" and answer.get("pause_kind") == "waiting_approval" \
                            and approvals < MAX_APPROVALS:
                        approvals += 1
                        answer = flora.ask("yes", user_id=user, timeout=DEFAULT_TIMEOUT_S)
                    reply = str(answer.get("message") or answer.get("error") or "")
                    if answer.get("message_type") == "task_paused":
                        asked = reply
                except TimeoutError as exc:
                    reply = f"timeout: {exc}"
                seconds = time.perf_counter() - started
                rows.append(scored(case, read_calls(calls_file), reply, seconds, specs, asked=asked))
                progress(line("flora", rows[-1]))
        finally:
            flora.shutdown()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return rows


def install(skills: Path, library: Library, names: list[str], calls_file: Path) -> None:
    """The skills folder holds exactly these functions, each a module of its own; the calls
    file is emptied. Each module is written under another name and renamed, as docs/skills.md
    asks, so no process sees it half-written."""
    for old in skills.glob("*.py"):
        old.unlink()
    calls_file.write_text("", encoding="utf-8")
    for name in names:
        staged = skills / f"{name}.py.part"
        staged.write_text(library.module(name, calls_file), encoding="utf-8")
        staged.rename(skills / f"{name}.py")


def read_calls(calls_file: Path) -> list[dict]:
    if not calls_file.is_file():
        return []
    return [json.loads(line) for line in calls_file.read_text(encoding="utf-8").splitlines() if line.strip()]


def scored(case: dict, calls: list[dict], reply: str, seconds: float, specs: dict, *, asked: str = "") -> dict:
    right, why = score_call(case, calls, specs)
    made_up = not calls and invented(case, reply)
    if made_up:
        right, why = False, "invented a fact"
    if asked and not right:
        why = f"asked: {asked[:120]}"
    return {"id": case["id"], "lang": case["lang"], "category": case["category"], "right": right, "why": why,
            "called": bool(calls), "invented": made_up, "seconds": seconds, "calls": calls, "reply": reply[:300]}


def line(side: str, row: dict) -> str:
    return f"{side:5} {row['id']:10} {'ok ' if row['right'] else 'BAD'} {row['seconds']:6.1f} s  {row['why'][:110]}"


# --------------------------------------------------------------------------- the raw model
class RawModel:
    """The GGUF through llama-cpp-python, the functions in its chat template's tool format."""

    def __init__(self, model_file: Path, n_ctx: int, n_threads: int):
        from llama_cpp import Llama

        self.llama = Llama(model_path=str(model_file), n_ctx=n_ctx, n_threads=n_threads, verbose=False)
        self.template = self.llama.metadata.get("tokenizer.chat_template", "")

    def prompt(self, request: str, tools: list[dict]) -> str:
        """The request with ``tools`` (OpenAI function form), as the model's own template writes
        it (Qwen2.5's has a tools branch); Qwen2.5's layout written out where it has none."""
        messages = [{"role": "user", "content": request}]
        if "tools" in self.template:
            from jinja2.sandbox import ImmutableSandboxedEnvironment

            env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
            env.filters["tojson"] = lambda value, **_: json.dumps(value, ensure_ascii=False)
            return env.from_string(self.template).render(messages=messages, tools=tools, add_generation_prompt=True)
        listed = "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
        return ("<|im_start|>system\nYou are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to "
                "assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML "
                f"tags:\n<tools>\n{listed}\n</tools>\n\nFor each function call, return a json object with function "
                "name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, "
                "\"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n"
                f"<|im_start|>user\n{request}<|im_end|>\n<|im_start|>assistant\n")

    def ask(self, request: str, tools: list[dict]) -> tuple[list[dict], str]:
        out = self.llama.create_completion(self.prompt(request, tools), max_tokens=RAW_MAX_TOKENS, temperature=0.0,
                                           stop=["<|im_end|>", "<|endoftext|>"])
        text = out["choices"][0]["text"]
        return tool_calls(text), text


def tool_calls(text: str) -> list[dict]:
    """The calls in a reply: each ``<tool_call>`` JSON object or, where the model wrote the call
    without the tags (bare or in a code fence), each JSON object with a ``name`` and
    ``arguments`` — the raw side is given every call it made, however it wrote it."""
    calls, decoder, at = [], json.JSONDecoder(), 0
    while (start := text.find("{", at)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            at = start + 1
            continue
        at = end
        if isinstance(value, dict) and isinstance(value.get("name"), str) and "arguments" in value:
            arguments = value["arguments"]
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except json.JSONDecodeError:
                    arguments = {}
            calls.append({"function": value["name"], "arguments": arguments if isinstance(arguments, dict) else {}})
    return calls


def openai_tool(spec) -> dict:
    return {"type": "function", "function": {"name": spec.name, "description": spec.description,
                                             "parameters": spec.parameters}}


def run_raw(cases: list[dict], specs: dict, model: str | None, progress) -> list[dict]:
    from capabilities.llm.models import DEFAULT_MODEL, model_path
    from config import load_config

    config = load_config(None, env={})
    raw = RawModel(model_path(model or DEFAULT_MODEL, ROOT / "data"), config.llm.n_ctx, config.llm.n_threads)
    raw.ask("hello", [openai_tool(specs["triangle_area"])])  # loads the model, uncounted
    rows = []
    for case in cases:
        started = time.perf_counter()
        calls, text = raw.ask(case["request"], [openai_tool(specs[name]) for name in case["functions"]])
        rows.append(scored(case, calls, text, time.perf_counter() - started, specs))
        progress(line("raw", rows[-1]))
    return rows


# --------------------------------------------------------------------------- report
def summary(rows: list[dict]) -> dict:
    def share(selected):
        return round(100.0 * sum(r["right"] for r in selected) / len(selected), 1) if selected else None

    seconds = [r["seconds"] for r in rows]
    irrelevant = [r for r in rows if r["category"] == "irrelevant"]
    return {"cases": len(rows), "right_pct": share(rows),
            "per_category": {c: share([r for r in rows if r["category"] == c]) for c in CATEGORIES},
            "per_lang": {lang: share([r for r in rows if r["lang"] == lang]) for lang in ("en", "zh")},
            "per_category_lang": {f"{c}/{lang}": share([r for r in rows if r["category"] == c and r["lang"] == lang])
                                  for c in CATEGORIES for lang in ("en", "zh")},
            "irrelevant_no_call_pct": round(100.0 * sum(not r["called"] for r in irrelevant) / len(irrelevant), 1)
            if irrelevant else None,
            "invented": sum(r["invented"] for r in rows),
            "asked_back": sum(r["why"].startswith("asked") for r in rows),
            "p50_s": round(statistics.median(seconds), 2) if seconds else None,
            "p90_s": round(percentile(seconds, 0.9), 2) if seconds else None}


def report(summaries: dict, out=print) -> None:
    out("")
    for side, s in summaries.items():
        out(f"{side:6} right {s['right_pct']}% of {s['cases']}; per category {s['per_category']}; per language "
            f"{s['per_lang']}")
        out(f"{'':6} {s['per_category_lang']}")
        out(f"{'':6} irrelevant: no call {s['irrelevant_no_call_pct']}%, invented facts {s['invented']}; asked back "
            f"{s['asked_back']}; p50 {s['p50_s']} s, p90 {s['p90_s']} s")
    flora, raw = summaries.get("flora"), summaries.get("raw")
    if flora and raw:
        out(f"flora/raw: right {flora['right_pct']} vs {raw['right_pct']}; p50 ratio "
            f"{flora['p50_s'] / raw['p50_s']:.2f}" if raw["p50_s"] else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, help="the first N cases (languages and categories in turn)")
    parser.add_argument("--category", action="append", choices=CATEGORIES, help="only cases of this category")
    parser.add_argument("--model", help="the packaged model (default: the configured default)")
    parser.add_argument("--no-raw", action="store_true", help="Flora only")
    parser.add_argument("--no-flora", action="store_true", help="the raw model only")
    parser.add_argument("--json", help="write the rows and the summaries here")
    args = parser.parse_args(argv)
    from bench.conversation import interrupt_on_stop

    interrupt_on_stop()  # a run killed by timeout still stops Flora's processes
    cases = load_cases(args.limit, args.category)
    library = Library()
    specs = library.specs()
    progress = lambda text: print(text, flush=True)  # noqa: E731
    print(f"{len(cases)} cases over {len({n for c in cases for n in c['functions']})} functions", flush=True)
    result: dict = {}
    if not args.no_flora:
        result["flora"] = run_flora(cases, library, specs, args.model, progress)
    if not args.no_raw:
        result["raw"] = run_raw(cases, specs, args.model, progress)
    summaries = {side: summary(rows) for side, rows in result.items()}
    report(summaries)
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summaries, "rows": result}, ensure_ascii=False, indent=1),
                                   encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
