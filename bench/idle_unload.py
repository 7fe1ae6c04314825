"""What sleeping costs: the first request after the model host unloaded its idle model,
beside llama.cpp loading the same GGUF and answering the same request itself.

    .venv/bin/python bench/idle_unload.py                       # qwen2.5-coder-0.5b, 3 rounds
    .venv/bin/python bench/idle_unload.py --model qwen2.5-coder-1.5b --rounds 5

In one run, for the same prompt (a few tokens out):

- Flora, warm: a request to the model host with its model loaded;
- Flora, woken: a request after the host unloaded the model (``idle_unload_s``): it waits for
  the load, then is answered;
- raw, warm: ``llama_cpp.Llama.create_chat_completion`` on a loaded model, in this process;
- raw, cold: ``llama_cpp.Llama(...)`` (the load) and the same completion;

p50 of each, the ratios Flora/raw, and the host's resident memory loaded and asleep.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from capabilities.llm import ModelHost, OpenAICompatibleLLM  # noqa: E402
from capabilities.llm.models import model_path  # noqa: E402

PROMPT = [{"role": "user", "content": "Say hello in three words."}]
MAX_TOKENS = 8
N_CTX = 1024
THREADS = 2
IDLE_S = 1.0
WAIT_S = 300.0


def wait_for(condition, what: str) -> dict:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"not within {WAIT_S:.0f} s: {what}")


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def flora(gguf: Path, name: str, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        host = ModelHost(gguf, alias=name, n_ctx=N_CTX, n_threads=THREADS, idle_unload_s=IDLE_S,
                         state_file=Path(tmp) / "host.json", startup_timeout_s=WAIT_S)
        with host:
            llm = OpenAICompatibleLLM(host.base_url, model=name, schema_mode="json_object", timeout_s=WAIT_S,
                                      max_retries=0)
            ask = lambda: llm.complete(PROMPT, max_tokens=MAX_TOKENS)  # noqa: E731
            warm, woken, rss = [], [], {}
            for _ in range(rounds):
                warm.append(timed(ask))
                awake = wait_for(lambda: (s := host.state())["state"] == "loaded" and s, "loaded")
                rss["loaded"] = awake.get("rss_mb")
                asleep = wait_for(lambda: (s := host.state())["state"] == "unloaded_idle" and s, "asleep")
                rss["asleep"] = asleep.get("rss_mb")
                woken.append(timed(ask))
            return {"warm": warm, "woken": woken, "rss": rss}


def raw(gguf: Path, rounds: int) -> dict:
    from llama_cpp import Llama

    warm, cold = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        model = Llama(str(gguf), n_ctx=N_CTX, n_threads=THREADS, n_threads_batch=THREADS, verbose=False)
        model.create_chat_completion(PROMPT, max_tokens=MAX_TOKENS, temperature=0.0)
        cold.append(time.perf_counter() - started)
        warm.append(timed(lambda: model.create_chat_completion(PROMPT, max_tokens=MAX_TOKENS, temperature=0.0)))
        model.close()
    return {"warm": warm, "cold": cold}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    gguf = model_path(args.model, ROOT / "data")
    if not gguf.is_file():
        raise SystemExit(f"{gguf} is not assembled; run scripts/install.sh")
    ours, theirs = flora(gguf, args.model, args.rounds), raw(gguf, args.rounds)
    p50 = statistics.median
    rows = [("warm request", p50(ours["warm"]), p50(theirs["warm"])),
            ("request after sleep / cold load+request", p50(ours["woken"]), p50(theirs["cold"]))]
    print(f"{args.model}, {args.rounds} rounds, {THREADS} threads, n_ctx {N_CTX}, {MAX_TOKENS} tokens out")
    print(f"{'':42}{'Flora s':>10}{'raw s':>10}{'ratio':>8}")
    for label, a, b in rows:
        print(f"{label:42}{a:10.2f}{b:10.2f}{a / b:8.2f}")
    print(f"model host resident memory: loaded {ours['rss']['loaded']} MB, asleep {ours['rss']['asleep']} MB")


if __name__ == "__main__":
    main()
