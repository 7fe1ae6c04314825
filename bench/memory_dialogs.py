"""Memory end to end with the packaged model: tell Flora something, chat about other things,
restart Flora, ask — and chat latency with memory on and off beside the raw model.

    .venv/bin/python bench/memory_dialogs.py                 # every dialog of bench/memory/dialogs.jsonl
    .venv/bin/python bench/memory_dialogs.py --limit 6 --json out.json
    .venv/bin/python bench/memory_dialogs.py --distil-wait 2400   # a slow machine: wait longer for distilling

One Flora (``main.start_flora``, the packaged model unless ``--model`` / ``--config`` say
otherwise) on a fresh data directory; each dialog is a person of its own:

1. **tell**: the dialog's statement about the person, then its chat messages about other
   things (each a whole reply, timed: memory on, before anything is remembered);
2. Flora distils what it was told off the reply path; the run waits until no turn is left
   to distil (the store's pending ``memory`` work), then **restarts** Flora on the same data;
3. **ask**: the dialog's question, worded apart from the statement. Right when the reply
   holds one of the dialog's ``expect`` alternatives (case aside; ``a&b`` needs both);
   replies in another language than the question are counted too. Then the chat messages
   again, timed: memory on, with the person's memories recalled into the prompt;
4. Flora restarted with ``memory.enabled: false``: the same chat messages, timed (memory off).

The raw figure: the same GGUF through llama_cpp.Llama, a plain chat completion of each chat
message, after Flora has stopped. Latencies are whole replies (``system.ask``), p50/p99.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.conversation import interrupt_on_stop, local_model_file, raw_model  # noqa: E402
from bench.conversation_score import percentile  # noqa: E402

DIALOGS_FILE = ROOT / "bench" / "memory" / "dialogs.jsonl"
TARGET_RIGHT = 0.90
TARGET_ON_OFF = 1.25
DISTIL_WAIT_S = 900.0  # default of --distil-wait
DEFAULT_TIMEOUT_S = 180.0


def load_dialogs(limit: int | None = None) -> list[dict]:
    rows = [json.loads(line) for line in DIALOGS_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:limit] if limit else rows


def answered(reply: str, expect: list[str]) -> bool:
    """Whether ``reply`` holds one of the alternatives (``a&b``: all of its parts), case aside."""
    text = reply.lower()
    return any(all(part.strip().lower() in text for part in alternative.split("&")) for alternative in expect)


@dataclass
class DialogScore:
    id: str
    lang: str
    ask: str
    reply: str
    right: bool
    wrong_language: bool
    ask_ms: float
    remembered: str = ""  # for a missed dialog: what Flora listed when asked what it remembers


# --------------------------------------------------------------------------- the phases
def _text(reply) -> str:
    return str(reply.get("message", "")) if isinstance(reply, dict) else ""


def _timed(flora, text: str, user: str, timeout: float) -> tuple[dict | None, float]:
    started = time.perf_counter()
    try:
        reply = flora.ask(text, user_id=user, timeout=timeout)
    except TimeoutError:
        reply = None
    return reply, (time.perf_counter() - started) * 1000


def tell(flora, dialogs: list[dict], users: dict[str, str], timeout: float, progress) -> list[float]:
    chat_ms = []
    for d in dialogs:
        _timed(flora, d["tell"], users[d["id"]], timeout)
        for text in d["chat"]:
            chat_ms.append(_timed(flora, text, users[d["id"]], timeout)[1])
        progress(f"told {d['id']}")
    return chat_ms


def wait_distilled(config, deadline_s: float, progress) -> int:
    """Wait until the store holds no turn left to distil; returns how many were left at the end."""
    from common.tasks.store import open_store

    store = open_store(config)
    try:
        deadline = time.monotonic() + deadline_s
        while True:
            left = len(store.pending_work("memory"))
            if left == 0 or time.monotonic() > deadline:
                return left
            progress(f"{left} turn(s) still to distil")
            time.sleep(5)
    finally:
        store.close()


def ask(flora, dialogs: list[dict], users: dict[str, str], timeout: float, progress) -> tuple[list[DialogScore],
                                                                                              list[float]]:
    from common.i18n import language_of

    scores, chat_ms = [], []
    for d in dialogs:
        reply, ms = _timed(flora, d["ask"], users[d["id"]], timeout)
        text = _text(reply)
        score = DialogScore(d["id"], d["lang"], d["ask"], text, answered(text, d["expect"]),
                            bool(text) and language_of(text) != d["lang"], round(ms, 1))
        if not score.right:  # what it had been told: a fact never distilled, or one not used
            score.remembered = _text(_timed(flora, "what do you remember about me?", users[d["id"]], timeout)[0])
        scores.append(score)
        progress(f"{d['id']} {'right' if score.right else 'WRONG'} {ms:.0f} ms: {text[:100]!r}")
        for said in d["chat"]:
            chat_ms.append(_timed(flora, said, users[d["id"]], timeout)[1])
    return scores, chat_ms


def chat_only(flora, dialogs: list[dict], users: dict[str, str], timeout: float) -> list[float]:
    return [_timed(flora, said, users[d["id"]], timeout)[1] for d in dialogs for said in d["chat"]]


# --------------------------------------------------------------------------- a run
def run(args) -> dict:
    import main as flora_main
    from bench.conversation import flora_config

    dialogs = load_dialogs(args.limit)
    users = {d["id"]: f"mem-{d['id']}-{uuid.uuid4().hex[:6]}" for d in dialogs}
    data_dir = Path(tempfile.mkdtemp(prefix="flora-memory-dialogs-"))
    progress = (lambda line: print(line, flush=True)) if not args.quiet else (lambda line: None)

    def started(config: dict):
        flora = flora_main.start_flora(config)
        if flora.warming is not None:  # a warm Flora, as a person meets it after start-up
            flora.warming.join(600)
        return flora

    try:
        config = flora_config(argparse.Namespace(config=args.config, model=args.model, understanding_model=None,
                                                 openai=None, openai_model=None), data_dir)
        config.setdefault("memory", {})["enabled"] = True
        flora = started(config)
        try:
            llm = flora.config.llm
            progress(f"{len(dialogs)} dialogs; llm {llm.backend} {llm.model_path or llm.model}; data in {data_dir}")
            before_ms = tell(flora, dialogs, users, args.timeout, progress)
            left = wait_distilled(flora.config, args.distil_wait, progress)
        finally:
            flora.shutdown()
        progress("restarting Flora")
        flora = started(config)
        try:
            scores, on_ms = ask(flora, dialogs, users, args.timeout, progress)
        finally:
            flora.shutdown()
        off_config = {**config, "memory": {**config.get("memory", {}), "enabled": False}}
        progress("restarting Flora with memory off")
        flora = started(off_config)
        try:
            off_ms = chat_only(flora, dialogs, users, args.timeout)
        finally:
            flora.shutdown()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    raw = None
    model_file = llm.model_path or (local_model_file(llm.model) if llm.backend == "local" else None)
    if not args.no_raw and model_file:
        progress("raw model: the chat messages through llama_cpp.Llama")
        raw = raw_model(Path(model_file), [s for d in dialogs for s in d["chat"]], llm.n_ctx)
    right = sum(s.right for s in scores)
    on_p50, off_p50 = percentile(on_ms, 50), percentile(off_ms, 50)
    return {
        "dialogs": len(dialogs), "right": right, "right_share": right / max(len(scores), 1),
        "right_en": sum(s.right for s in scores if s.lang == "en"), "n_en": sum(s.lang == "en" for s in scores),
        "right_zh": sum(s.right for s in scores if s.lang == "zh"), "n_zh": sum(s.lang == "zh" for s in scores),
        "wrong_language": sum(s.wrong_language for s in scores), "left_to_distil": left,
        "ask_p50_ms": percentile([s.ask_ms for s in scores], 50),
        "chat_before_p50_ms": percentile(before_ms, 50),
        "chat_on_p50_ms": on_p50, "chat_on_p99_ms": percentile(on_ms, 99),
        "chat_off_p50_ms": off_p50, "chat_off_p99_ms": percentile(off_ms, 99),
        "on_off_ratio": on_p50 / off_p50 if off_p50 else None, "raw": raw,
        "scores": [asdict(s) for s in scores],
    }


def report(result: dict, out=print) -> None:
    out(f"\nmemory end to end: {result['dialogs']} dialogs (tell, chat, restart, ask)")
    out(f"  answered right      {result['right']}/{result['dialogs']} = {result['right_share']:.1%} "
        f"(en {result['right_en']}/{result['n_en']}, zh {result['right_zh']}/{result['n_zh']}); "
        f"wrong-language replies {result['wrong_language']}; turns left to distil {result['left_to_distil']}")
    for s in result["scores"]:
        if not s["right"]:
            out(f"    missed {s['id']}: {s['ask']!r} -> {s['reply'][:120]!r}")
            out(f"      remembered: {' '.join(s['remembered'].split())[:160]!r}")
    raw = result["raw"] or {}
    out("\nchat reply latency (whole reply)        p50        p99")
    out(f"  memory on, with memories      {result['chat_on_p50_ms']:9.0f} ms {result['chat_on_p99_ms']:9.0f} ms")
    out(f"  memory off                    {result['chat_off_p50_ms']:9.0f} ms {result['chat_off_p99_ms']:9.0f} ms")
    if raw:
        out(f"  raw llama.cpp                 {raw['p50_ms']:9.0f} ms {raw['p99_ms']:9.0f} ms")
    ratio = result["on_off_ratio"]
    out(f"  on / off p50: {ratio:.2f}x" + (f"; on / raw p50: {result['chat_on_p50_ms'] / raw['p50_ms']:.2f}x"
                                          if raw.get("p50_ms") else ""))
    out("\ntargets")
    out(f"  {'met   ' if result['right_share'] >= TARGET_RIGHT else 'MISSED'} answered right >= {TARGET_RIGHT:.0%}")
    out(f"  {'met   ' if ratio is not None and ratio <= TARGET_ON_OFF else 'MISSED'} "
        f"chat p50 memory on / off <= {TARGET_ON_OFF}x")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--limit", type=int, help="only the first N dialogs")
    p.add_argument("--model", help="a packaged model by name (default: the configured one)")
    p.add_argument("--config", help="a Flora config file (its timeouts and threads are kept)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds to wait for each reply")
    p.add_argument("--distil-wait", type=float, default=DISTIL_WAIT_S,
                   help="seconds to wait for every told turn to be distilled before the restart (a slow machine, "
                        "with each fact's questions written, needs more)")
    p.add_argument("--no-raw", action="store_true", help="skip the raw llama.cpp comparison")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    args = p.parse_args(argv)
    interrupt_on_stop()
    result = run(args)
    report(result)
    if args.json:
        Path(args.json).write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
