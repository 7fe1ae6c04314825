"""How well Flora understands people: the conversation evaluation set (bench/conversation/)
sent to a Flora started in this process, scored per category, each split (dev, held-out, fresh,
fresh2, fresh3, fresh4, fresh5, fresh6, fresh7, fresh8, fresh9, fresh10, fresh11, fresh12, waiting)
apart, with its latencies beside the raw model's for the same chat messages.

    .venv/bin/python bench/conversation.py --model qwen2.5-coder-0.5b --only dev
    .venv/bin/python bench/conversation.py --openai http://127.0.0.1:8080/v1 --no-raw
    .venv/bin/python bench/conversation.py --config flora.yaml --limit 2 --category chat/ --json out.json

Each run gets a fresh temporary data directory (store, loop registry, Optuna) and each case a
fresh user, so no case sees another's tasks. A case's ``setup`` messages are sent first and
their replies not scored. ``--limit N`` keeps the first N cases of every category. On a slow
machine give a ``--config`` with longer ``llm.timeout_s`` and ``actors.ask_timeout_s``: a model
call that times out is retried while the next cases queue behind it. Ctrl-C (or SIGTERM) stops
Flora and reports the cases scored so far.

The raw figure loads the same GGUF with llama_cpp.Llama (n_threads=2) after Flora has stopped
and times a plain chat completion of each chat case's message, with the max_tokens Flora's
chat replies use. Scoring is in bench/conversation_score.py.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.conversation_score import (  # noqa: E402
    SPLITS, CaseScore, load_cases, percentile, score_case, summarise,
)

DEFAULT_TIMEOUT_S = 180.0
RAW_THREADS = 2


# --------------------------------------------------------------------------- choosing cases
def select(only: str | None, category: str | list[str] | None, limit: int | None,
           ids: list[str] | None = None) -> list[tuple[str, dict]]:
    """(split, case) pairs: every split (dev, heldout, fresh) unless ``only`` names one, cases
    whose category starts with ``category`` (or one of several prefixes), at most ``limit`` of
    each category; only the cases ``ids`` names, when it names any."""
    prefixes = tuple([category] if isinstance(category, str) else category or ())
    chosen = []
    for split, path in SPLITS:
        if only and only != split:
            continue
        per_category: dict[str, int] = {}
        for case in load_cases(path):
            if prefixes and not case["category"].startswith(prefixes):
                continue
            if ids and case["id"] not in ids:
                continue
            seen = per_category.get(case["category"], 0)
            if limit is not None and seen >= limit:
                continue
            per_category[case["category"]] = seen + 1
            chosen.append((split, case))
    return chosen


# --------------------------------------------------------------------------- Flora's config
def flora_config(args: argparse.Namespace, data_dir: Path) -> dict:
    """The configuration for this run: --config, --model or --openai, on a fresh data dir."""
    from config import load_config

    base = load_config(args.config, env={}).to_dict() if args.config else {}
    llm = base.get("llm", {})  # --model / --openai choose the back end; the file's timeouts and threads stay
    if args.model:
        base["llm"] = {**llm, "backend": "local", "model": args.model}
        if args.understanding_model is not None:
            base["llm"]["understanding_model"] = args.understanding_model
    elif args.openai:
        base["llm"] = {"api_key_env": "", **llm, "backend": "openai", "base_url": args.openai,
                       "schema_mode": "json_object", **({"model": args.openai_model} if args.openai_model else {})}
    base["data_dir"] = str(data_dir)
    base.setdefault("store", {})["sqlite_path"] = ""
    base.setdefault("parallel", {})["sqlite_path"] = ""
    llm = base.setdefault("llm", {})
    packaged = ROOT / "data" / "models"
    if llm.get("backend", "local") == "local" and not llm.get("model_path") and packaged.is_dir():
        # the shared copies of the packaged models (the one that answers and the one that reads
        # each message), not ones assembled again in the temporary dir
        (data_dir / "models").symlink_to(packaged)
    return base


def local_model_file(name: str | None) -> Path | None:
    from capabilities.llm.models import DEFAULT_MODEL, model_path

    path = model_path(name or DEFAULT_MODEL, ROOT / "data")
    return path if path.is_file() else None


# --------------------------------------------------------------------------- one run
def run_cases(flora, chosen: list[tuple[str, dict]], timeout: float, scores: list[CaseScore],
              progress=print) -> None:
    """Send each case (setup first) as a fresh user and append its score to ``scores``."""
    from common import messages as m
    from common.tasks.store import open_store

    store = open_store(flora.config)
    tenant = flora.config.default_tenant
    try:
        for i, (split, case) in enumerate(chosen, start=1):
            user = f"eval-{case['id']}-{uuid.uuid4().hex[:6]}"
            paused = []
            for text in case.get("setup", []):
                reply = flora.system.ask(flora.interaction, m.user_input(user_id=user, content=text), timeout)
                if isinstance(reply, dict) and reply.get("message_type") == "task_paused":
                    paused.append(reply["task_id"])
            started = time.perf_counter()
            first: list[float] = []  # the reply streams: when its first piece came

            def on_text(_piece: str) -> None:
                if not first:
                    first.append(time.perf_counter() - started)

            try:
                reply = flora.ask_streaming(case["say"], on_text, user_id=user, timeout=timeout)
            except TimeoutError:
                reply = None
            seconds = time.perf_counter() - started
            if isinstance(reply, dict) and first:
                reply = {**reply, "timing": {**(reply.get("timing") or {}), "first_token_ms": first[0] * 1000}}
            record = None
            if isinstance(reply, dict) and reply.get("task_id"):
                task = store.get_task(tenant, reply["task_id"])
                record = task.to_dict() if task is not None else None
            score = score_case(case, reply if isinstance(reply, dict) else None, split=split, seconds=seconds,
                               record=record, setup_paused=paused)
            scores.append(score)
            progress(f"[{i}/{len(chosen)}] {case['id']:<20} {case['category']:<26} want {score.expected:<11} "
                     f"got {score.got or '-':<11} {'ok ' if score.intent_ok else 'BAD'} {seconds:6.2f}s")
    finally:
        store.close()


def raw_model(model_file: Path, says: list[str], n_ctx: int) -> dict:
    """The raw llama.cpp figure: first token and whole reply of a plain chat completion."""
    from llama_cpp import Llama

    from capabilities.cognition.chat import MAX_CHAT_TOKENS

    llm = Llama(model_path=str(model_file), n_threads=RAW_THREADS, n_ctx=n_ctx, verbose=False)
    first, whole = [], []
    for say in says:
        started = time.perf_counter()
        got_first = None
        for chunk in llm.create_chat_completion(messages=[{"role": "user", "content": say}],
                                                max_tokens=MAX_CHAT_TOKENS, stream=True):
            if got_first is None and chunk["choices"][0]["delta"].get("content"):
                got_first = time.perf_counter() - started
        whole.append((time.perf_counter() - started) * 1000)
        if got_first is not None:
            first.append(got_first * 1000)
    return {"n": len(says), "max_tokens": MAX_CHAT_TOKENS, "threads": RAW_THREADS,
            "first_token_p50_ms": percentile(first, 50), "first_token_p99_ms": percentile(first, 99),
            "p50_ms": percentile(whole, 50), "p99_ms": percentile(whole, 99)}


# --------------------------------------------------------------------------- printing
def _ms(value) -> str:
    return "n/a" if value is None else f"{value:,.0f} ms"


def _pct(right: int, total: int) -> str:
    return f"{right}/{total} ({100 * right / total:.0f}%)" if total else "-"


def report(summary: dict, raw: dict | None, raw_note: str, out=print) -> None:
    for split, s in summary["splits"].items():
        out(f"\n== {split}: intent right {_pct(s['intent_right'], s['cases'])}")
        for category, (right, total) in s["categories"].items():
            out(f"  {category:<28} {_pct(right, total)}")
        for name, (right, total) in s["checks"].items():
            if total:
                out(f"  {name + ' right':<28} {_pct(right, total)}")
        out(f"  hallucinations               {s['hallucinations']} of {s['must_not_claim']} must-not-claim cases")
        if s.get("must_not_invent"):
            out(f"  invented answers             {s['invented']} of {s['must_not_invent']} must-not-invent cases")
        out(f"  wrong language               {s['wrong_language']} of {s['cases']} replies")
        out(f"  no reply (timeout/refused)   {s['no_reply']}")
    out("\n== latency per expected intent (whole reply, time around system.ask)")
    out(f"  {'intent':<12} {'n':>4} {'p50':>10} {'p99':>10} {'understand p50':>15} {'first token':>12}")
    for intent, lat in summary["latency"].items():
        out(f"  {intent:<12} {lat['n']:>4} {_ms(lat['p50_ms']):>10} {_ms(lat['p99_ms']):>10} "
            f"{_ms(lat['understand_p50_ms']):>15} {_ms(lat['first_token_p50_ms']):>12}")
    chat = summary["latency"].get("chat")
    out("\n== chat replies: Flora against the raw model (same messages, same max_tokens)")
    if raw is None:
        out(f"  raw model: {raw_note}")
        return
    out(f"  {'':<22} {'Flora':>10} {'raw llama.cpp':>14} {'ratio':>7}")
    for label, flora_key, raw_key in (("whole reply p50", "p50_ms", "p50_ms"), ("whole reply p99", "p99_ms", "p99_ms"),
                                      ("first token p50", "first_token_p50_ms", "first_token_p50_ms")):
        mine = chat.get(flora_key) if chat else None
        theirs = raw.get(raw_key)
        ratio = f"{mine / theirs:.2f}x" if mine and theirs else "n/a"
        out(f"  {label:<22} {_ms(mine):>10} {_ms(theirs):>14} {ratio:>7}")
    if chat and chat.get("first_token_p50_ms") is None:
        out("  Flora first token: n/a (no chat reply was streamed)")


# --------------------------------------------------------------------------- command line
def argument_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    llm = p.add_mutually_exclusive_group()
    llm.add_argument("--model", help="local GGUF model by name: llm.backend local")
    llm.add_argument("--openai", metavar="URL", help="OpenAI-compatible endpoint: llm.backend openai, json_object")
    p.add_argument("--openai-model", help="with --openai: the model name sent to the server")
    p.add_argument("--understanding-model", help="with --model: the understanding step's model "
                                                 "(default: the configured one; \"\" for the same model)")
    p.add_argument("--config", help="a Flora config file (YAML/JSON); --model/--openai set its llm back end")
    p.add_argument("--limit", type=int, help="at most N cases of each category")
    p.add_argument("--only", choices=[name for name, _ in SPLITS],
                   help="one split only (default all: dev, heldout, fresh, fresh2, fresh3, fresh4, fresh5, fresh6, "
                        "fresh7, fresh8, fresh9, fresh10, fresh11 and fresh12, reported apart)")
    p.add_argument("--category", metavar="PREFIX", nargs="+",
                   help="only categories starting with one of the PREFIXes, e.g. chat/ or loop")
    p.add_argument("--id", metavar="ID", nargs="+", dest="ids", help="only these cases, e.g. zh-chat-k009")
    p.add_argument("--json", metavar="OUT", help="write every case's score and the summary to OUT")
    p.add_argument("--no-raw", action="store_true", help="skip the raw llama.cpp comparison")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds to wait for each reply")
    return p


def interrupt_on_stop() -> None:
    """SIGTERM (or SIGINT) raises KeyboardInterrupt in this process, so a run killed by
    `timeout` or kill still stops Flora and reports; Thespian's processes forked from it
    get the signal's default action (``StopSignals``)."""
    from common.processes import StopSignals

    def interrupt(_signum: int) -> None:
        raise KeyboardInterrupt

    StopSignals(interrupt, interrupt).install()


def main(argv: list[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    interrupt_on_stop()
    import main as flora_main

    chosen = select(args.only, args.category, args.limit, args.ids)
    if not chosen:
        print("no case matches --only/--category", file=sys.stderr)
        return 2
    data_dir = Path(tempfile.mkdtemp(prefix="flora-conversation-"))
    scores: list[CaseScore] = []
    try:
        config = flora_config(args, data_dir)
        flora = flora_main.start_flora(config)
        try:
            reader = flora.config.llm.understanding_model if flora.understanding_host is not None else "the same"
            print(f"{len(chosen)} cases; llm {flora.config.llm.backend} "
                  f"{flora.config.llm.model_path or flora.config.llm.base_url or flora.config.llm.model}, "
                  f"understanding model {reader}; data in {data_dir}", flush=True)
            if flora.warming is not None:  # measure a warm Flora, as a person meets it after start-up
                flora.warming.join(600)
            llm_settings = flora.config.llm
            try:
                run_cases(flora, chosen, args.timeout, scores, progress=lambda line: print(line, flush=True))
            except KeyboardInterrupt:  # a long run stopped by hand still reports what it has
                print(f"\ninterrupted: {len(scores)} of {len(chosen)} cases scored", flush=True)
                args.no_raw = True
        finally:
            flora.shutdown()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    summary = summarise(scores)
    raw, note = None, ""
    chat_says = [case["say"] for _, case in chosen if case["expect"]["intent"] == "chat"]
    if args.no_raw:
        note = "skipped (--no-raw)"
    elif llm_settings.backend != "local" or not (llm_settings.model_path or local_model_file(llm_settings.model)):
        note = "n/a: the raw comparison needs a local GGUF (--model)"
    elif not chat_says:
        note = "n/a: no chat case selected"
    else:
        print(f"\nraw model: {len(chat_says)} chat messages through llama_cpp.Llama ...", flush=True)
        raw = raw_model(Path(llm_settings.model_path or local_model_file(llm_settings.model)), chat_says,
                        llm_settings.n_ctx)
    report(summary, raw, note)
    if args.json:
        Path(args.json).write_text(json.dumps({"config": {k: v for k, v in config.items() if k == "llm"},
                                               "summary": summary, "raw": raw,
                                               "cases": [s.to_dict() for s in scores]},
                                              ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
