"""Which packaged model should Flora talk with? Quality and speed of each catalogue model on
a fixed probe set (bench/models_probe.json), measured on llama-cpp-python directly.

For each model named on the command line:

- understanding: one JSON-schema-constrained call per probe (intent and capability), the
  accuracy of the intent, of the route (the intent and, for a task, the capability too) and
  the call's p50/p99;
- chat: a short streamed reply per prompt, first-token and whole-reply p50, the replies in
  the wrong language (a reply to a Chinese prompt must be mostly Chinese, to an English one
  mostly not) and the factual probes missed; every reply is written to
  bench/results/models_<name>.jsonl to be read by a person;
- speed of the model itself: load time, prompt-eval and generation tokens/s;
- Flora's figure beside the raw one: the first probes again through Flora's
  LocalLlamaLLM.complete (same GGUF, same settings), p50 of both and the ratio.

The system prompts stay identical from call to call, so llama.cpp reuses their KV cache;
understanding runs first and chat after, so the two prefixes do not evict each other.

    .venv/bin/python bench/models.py qwen2.5-coder-0.5b qwen2.5-coder-1.5b
    .venv/bin/python bench/models.py smollm2-135m --limit 5 --flora-sample 3
    .venv/bin/python bench/models.py qwen2.5-coder-0.5b --understanding route --no-chat
    .venv/bin/python bench/models.py qwen2.5-coder-0.5b qwen2.5-coder-1.5b --report
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from capabilities.llm.local import LocalLlamaLLM  # noqa: E402
from capabilities.llm.models import CATALOGUE, ensure_model  # noqa: E402

PROBES = Path(__file__).with_name("models_probe.json")
RESULTS = Path(__file__).with_name("results")
N_CTX = 2048
N_THREADS = 2
N_BATCH = 512
CHAT_MAX_TOKENS = 120
# Models whose GGUF carries no chat template (a base model) get the family's format.
CHAT_FORMAT = {"gemma3-270m": "gemma"}

INTENTS = ["chat", "task", "unsupported", "status", "command"]
CAPABILITIES = ["http_request", "dify_workflow", "data_query", "ask_experts", "none"]
_INTENT_LINES = (
    "- chat: conversation, thanks, feelings, jokes, general knowledge, arithmetic, advice\n"
    "{task}"
    "- unsupported: it needs a system Flora has no capability for (orders, e-mail, weather, "
    "flights, calendar)\n"
    "- status: a question about Flora itself: what it can do, what it is doing, /status\n"
    "- command: an instruction about Flora or an existing task: cancel, stop, clear history\n"
)
_CAPABILITY_LINES = (
    "- http_request: call a web address (URL)\n"
    "- dify_workflow: run a Dify workflow\n"
    "- data_query: query the company database (sales, revenue, users)\n"
    "- ask_experts: ask a panel of expert personas\n"
)


class Pair:
    """Two fields, as an understanding step would ask: the intent, then the capability."""

    name = "pair"
    schema = {
        "type": "object",
        "properties": {
            "intent": {"type": "string", "enum": INTENTS},
            "capability": {"type": "string", "enum": CAPABILITIES},
        },
        "required": ["intent", "capability"],
    }
    system = (
        "You read one message sent to Flora, an assistant that runs tasks, and answer with JSON "
        '{"intent": ..., "capability": ...}.\nintent:\n'
        + _INTENT_LINES.format(task="- task: Flora should do something with a capability now, or set a reminder or schedule\n")
        + "capability (for task; otherwise none):\n" + _CAPABILITY_LINES
        + "- none: no capability (reminders, and every intent but task)"
    )

    @staticmethod
    def decode(answer: dict) -> tuple[str | None, str | None]:
        return answer.get("intent"), answer.get("capability")


class Route:
    """One field naming the route: fewer generated tokens, one decision instead of two."""

    name = "route"
    _TASKS = {"http_request": "http_request", "dify_workflow": "dify_workflow", "data_query": "data_query",
              "ask_experts": "ask_experts", "reminder": "none"}
    schema = {
        "type": "object",
        "properties": {"route": {"type": "string", "enum": ["chat", *_TASKS, "unsupported", "status", "command"]}},
        "required": ["route"],
    }
    system = (
        "You read one message sent to Flora, an assistant that runs tasks, and answer with JSON "
        '{"route": ...}:\n'
        + _INTENT_LINES.format(task=_CAPABILITY_LINES + "- reminder: a reminder or a scheduled, repeating job\n")
    ).rstrip()

    @classmethod
    def decode(cls, answer: dict) -> tuple[str | None, str | None]:
        route = answer.get("route")
        if route in cls._TASKS:
            return "task", cls._TASKS[route]
        return route, "none"


STYLES = {style.name: style for style in (Pair, Route)}
CHAT_SYSTEM = (
    "You are Flora, a friendly assistant. Reply in one to three short sentences, in the "
    "language of the user's message. If you are not sure of a fact, say so instead of guessing."
)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_SPEED_TEXT = ("Flora is an agent platform built on the actor model. " * 40).strip()


def cjk_share(text: str) -> float:
    """Chinese characters among the letters of `text` (0 when it has none)."""
    cjk, latin = len(_CJK.findall(text)), len(_LATIN.findall(text))
    return cjk / (cjk + latin) if cjk + latin else 0.0


def wrong_language(lang: str, reply: str) -> bool:
    share = cjk_share(reply)
    return share < 0.5 if lang == "zh" else share >= 0.5


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def understand_messages(say: str, style=Pair) -> list[dict]:
    return [{"role": "system", "content": style.system}, {"role": "user", "content": say}]


def chat_messages(say: str) -> list[dict]:
    return [{"role": "system", "content": CHAT_SYSTEM}, {"role": "user", "content": say}]


def parse_answer(text: str) -> dict:
    try:
        answer = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return answer if isinstance(answer, dict) else {}


def raw_speed(llama) -> tuple[float, float]:
    """Prompt-eval and generation tokens/s of the model itself, on a fresh context."""
    tokens = llama.tokenize(_SPEED_TEXT.encode())[:256]
    llama.reset()
    started = time.perf_counter()
    llama.eval(tokens)
    prompt_tps = len(tokens) / (time.perf_counter() - started)
    steps = 32
    started = time.perf_counter()
    for _ in range(steps):
        llama.eval([tokens[-1]])  # one decode step each, like generating a token
    generation_tps = steps / (time.perf_counter() - started)
    llama.reset()
    return prompt_tps, generation_tps


class Recorder:
    """Appends one JSON line per measurement to bench/results/models_<name>.jsonl as it is
    taken, so a long run that is stopped keeps what it measured; `summarize` reads them."""

    def __init__(self, name: str):
        RESULTS.mkdir(exist_ok=True)
        self.path = RESULTS / f"models_{name}.jsonl"
        self._out = open(self.path, "w", encoding="utf-8")

    def __call__(self, kind: str, **row) -> dict:
        line = {"kind": kind, **row}
        self._out.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._out.flush()
        return line

    def close(self) -> None:
        self._out.close()


def run_understanding(llama, probes: list[dict], record: Recorder, style) -> None:
    for probe in probes:
        started = time.perf_counter()
        result = llama.create_chat_completion(
            messages=understand_messages(probe["say"], style), max_tokens=40, temperature=0.0,
            response_format={"type": "json_object", "schema": style.schema},
        )
        seconds = time.perf_counter() - started
        intent, capability = style.decode(parse_answer(result["choices"][0]["message"]["content"] or ""))
        record("understanding", **probe, got_intent=intent, got_capability=capability,
               completion_tokens=result["usage"]["completion_tokens"], seconds=round(seconds, 3))


def run_chat(llama, prompts: list[dict], record: Recorder) -> None:
    for prompt in prompts:
        started = time.perf_counter()
        first = None
        pieces: list[str] = []
        for chunk in llama.create_chat_completion(
            messages=chat_messages(prompt["say"]), max_tokens=CHAT_MAX_TOKENS, temperature=0.0, stream=True,
        ):
            delta = chunk["choices"][0]["delta"].get("content")
            if delta:
                first = first if first is not None else time.perf_counter() - started
                pieces.append(delta)
        whole = time.perf_counter() - started
        reply = "".join(pieces).strip()
        expected = prompt.get("answer_contains")
        record("chat", **prompt, reply=reply, first_token_s=round(first or whole, 3), whole_s=round(whole, 3),
               chunks=len(pieces), wrong_language=wrong_language(prompt["lang"], reply),
               fact_missed=bool(expected) and not any(e in reply for e in expected))


def flora_understanding(model_path: Path, probes: list[dict], record: Recorder, style, threads: int) -> None:
    """The same calls through Flora's in-process adapter."""
    llm = LocalLlamaLLM(model_path, n_ctx=N_CTX, n_threads=threads, chat_format=CHAT_FORMAT.get(model_path.stem))
    llm.complete(understand_messages("hello", style), json_schema=style.schema, max_tokens=40)  # load, warm the prefix
    for probe in probes:
        started = time.perf_counter()
        llm.complete(understand_messages(probe["say"], style), json_schema=style.schema, max_tokens=40)
        record("flora_understanding", say=probe["say"], seconds=round(time.perf_counter() - started, 3))
    llm.close()


def results_name(name: str, style, threads: int = N_THREADS, tag: str = "") -> str:
    suffix = ("" if style is Pair else f"@{style.name}") + ("" if threads == N_THREADS else f"@t{threads}")
    return name + suffix + (f"@{tag}" if tag else "")


def bench_model(name: str, probes: dict, data_dir: Path, flora_sample: int, style=Pair, chat: bool = True,
                threads: int = N_THREADS, tag: str = "") -> dict:
    from llama_cpp import Llama

    path = ensure_model(name, data_dir)
    record = Recorder(results_name(name, style, threads, tag))
    started = time.perf_counter()
    llama = Llama(model_path=str(path), n_ctx=N_CTX, n_threads=threads, n_threads_batch=threads,
                  n_batch=N_BATCH, chat_format=CHAT_FORMAT.get(name), verbose=False)
    load_s = time.perf_counter() - started
    template = "GGUF template" if "tokenizer.chat_template" in llama.metadata else f"format {llama.chat_format}"
    prompt_tps, generation_tps = raw_speed(llama)
    record("speed", load_s=round(load_s, 2), prompt_tps=round(prompt_tps, 1), gen_tps=round(generation_tps, 1),
           template=template, load_avg=os.getloadavg()[0])

    llama.create_chat_completion(messages=understand_messages("hello", style), max_tokens=1)  # warm the prefix
    run_understanding(llama, probes["understanding"], record, style)
    if chat:
        llama.create_chat_completion(messages=chat_messages("hello"), max_tokens=1)
        run_chat(llama, probes["chat"], record)
    llama.close()
    if flora_sample:
        flora_understanding(path, probes["understanding"][:flora_sample], record, style, threads)
    record("done", load_avg=os.getloadavg()[0])
    record.close()
    return summarize(name, style, threads, tag)


def routed_right(row: dict) -> bool:
    """The intent is right and, for a task, so is the capability (other intents ignore it)."""
    return row["got_intent"] == row["intent"] and (row["intent"] != "task" or row["got_capability"] == row["capability"])


def summarize(name: str, style=Pair, threads: int = N_THREADS, tag: str = "") -> dict:
    """The table row for `name`, from its results file (complete or not)."""
    path = RESULTS / f"models_{results_name(name, style, threads, tag)}.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    speed = next((line for line in lines if line["kind"] == "speed"), {})
    understanding = [line for line in lines if line["kind"] == "understanding"]
    chats = [line for line in lines if line["kind"] == "chat"]
    u_seconds = [line["seconds"] for line in understanding]
    flora_seconds = [line["seconds"] for line in lines if line["kind"] == "flora_understanding"]
    n = len(understanding) or 1
    done = next((line for line in lines if line["kind"] == "done"), None)
    return {
        "model": results_name(name, style, threads, tag),
        "size_mb": CATALOGUE[name].size / 1e6,
        "load_s": speed.get("load_s", float("nan")),
        "prompt_tps": speed.get("prompt_tps", float("nan")),
        "gen_tps": speed.get("gen_tps", float("nan")),
        "template": speed.get("template", "?"),
        "load_avg": (speed.get("load_avg", float("nan")) + (done or speed).get("load_avg", float("nan"))) / 2,
        "complete": done is not None,
        "probes": len(understanding),
        "intent_acc": sum(r["got_intent"] == r["intent"] for r in understanding) / n,
        "route_acc": sum(routed_right(r) for r in understanding) / n,
        "u_p50": pct(u_seconds, 0.5),
        "u_p99": pct(u_seconds, 0.99),
        "raw_sample_p50": pct(u_seconds[: len(flora_seconds)], 0.5),
        "flora_p50": pct(flora_seconds, 0.5),
        "first_p50": pct([r["first_token_s"] for r in chats], 0.5),
        "whole_p50": pct([r["whole_s"] for r in chats], 0.5),
        "wrong_lang": sum(r["wrong_language"] for r in chats),
        "facts_missed": sum(r["fact_missed"] for r in chats),
        "facts_total": sum(bool(r.get("answer_contains")) for r in chats),
        "chats": len(chats),
        "per_intent": {intent: (sum(routed_right(r) for r in understanding if r["intent"] == intent),
                                sum(r["intent"] == intent for r in understanding)) for intent in INTENTS},
        "misread": [r for r in understanding if not routed_right(r)],
    }


def print_table(rows: list[dict]) -> None:
    header = (f"{'model':28} {'MB':>5} {'load s':>6} {'pp t/s':>7} {'tg t/s':>7} {'intent':>6} {'route':>6} "
              f"{'u p50':>6} {'u p99':>6} {'1st p50':>7} {'all p50':>7} {'wrong lang':>10} {'facts':>6}")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['model']:28} {r['size_mb']:5.0f} {r['load_s']:6.1f} {r['prompt_tps']:7.1f} {r['gen_tps']:7.1f} "
              f"{r['intent_acc']:6.0%} {r['route_acc']:6.0%} {r['u_p50']:6.2f} {r['u_p99']:6.2f} "
              f"{r['first_p50']:7.2f} {r['whole_p50']:7.2f} {r['wrong_lang']:>4}/{r['chats']:<5} "
              f"{r['facts_total'] - r['facts_missed']:>2}/{r['facts_total']:<3} "
              f"load avg {r['load_avg']:.1f}, {r['template']}{'' if r['complete'] else ', INCOMPLETE'}")
    print("\nroutes right per expected intent:")
    for r in rows:
        print(f"  {r['model']:28} " + "  ".join(f"{k} {right}/{total}" for k, (right, total) in r["per_intent"].items()))
    print("\nunderstanding p50 on the first probes, Flora's LocalLlamaLLM beside raw llama_cpp:")
    for r in rows:
        ratio = r["flora_p50"] / r["raw_sample_p50"] if r["raw_sample_p50"] else float("nan")
        print(f"  {r['model']:28} flora {r['flora_p50']:.3f} s  raw {r['raw_sample_p50']:.3f} s  ratio {ratio:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", choices=sorted(CATALOGUE))
    parser.add_argument("--data-dir", default=str(ROOT / "data"))
    parser.add_argument("--limit", type=int, default=0, help="only the first N probes of each kind")
    parser.add_argument("--flora-sample", type=int, default=10, help="probes to time through Flora's adapter too")
    parser.add_argument("--understanding", choices=sorted(STYLES), default="pair",
                        help="pair: intent and capability fields (default); route: one field naming the route")
    parser.add_argument("--no-chat", action="store_true", help="measure understanding only")
    parser.add_argument("--threads", type=int, default=N_THREADS, help="llama.cpp threads (default 2)")
    parser.add_argument("--tag", default="", help="added to the results file's name, to keep runs apart")
    parser.add_argument("--report", action="store_true", help="print the table from saved results; run nothing")
    args = parser.parse_args(argv)
    style = STYLES[args.understanding]
    if args.report:
        print_table([summarize(name, style, args.threads, args.tag) for name in args.models])
        return 0

    probes = json.loads(PROBES.read_text(encoding="utf-8"))
    if args.limit:
        probes = {kind: probes[kind][: args.limit] for kind in ("understanding", "chat")}
    rows = []
    for name in args.models:
        row = bench_model(name, probes, Path(args.data_dir), args.flora_sample, style, chat=not args.no_chat,
                          threads=args.threads, tag=args.tag)
        rows.append(row)
        print(f"\n{name}: misread {len(row['misread'])}:", file=sys.stderr)
        for r in row["misread"]:
            print(f"  {r['say']!r}: want {r['intent']}/{r['capability']}, got {r['got_intent']}/{r['got_capability']}",
                  file=sys.stderr)
        print_table([row])
    print()
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
