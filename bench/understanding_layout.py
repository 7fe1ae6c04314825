"""Does the understanding prompt's layout change what the model reads? The same model, the
same probes (bench/models_probe.json's 38 understanding probes with a route: the two
"remind me" probes are the rules' to read), the route schema the understanding step sends, and
only the layout of capabilities/cognition/understanding_prompt.py differing: as in ``--before``
(a git revision) and as in the working tree. Raw llama-cpp-python, no rules in front, so every
decision is the model's. Prints each layout's right answers and the probes on which they differ.

    .venv/bin/python bench/understanding_layout.py [--before REV] [--model qwen2.5-coder-0.5b]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.prompt_prefix import prompt_module  # noqa: E402
from capabilities.cognition.understanding_prompt import ROUTES  # noqa: E402
from capabilities.llm.models import DEFAULT_UNDERSTANDING_MODEL, model_path  # noqa: E402
from capabilities.routing.task_router import TaskRouter  # noqa: E402
from config import load_config  # noqa: E402
from init_plugins import build_registry  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="c0325cf")
    parser.add_argument("--model", default=DEFAULT_UNDERSTANDING_MODEL)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import llama_cpp

    specs = TaskRouter(build_registry(load_config({"llm": {"backend": "none"}}))).routable()
    names = [s.name for s in specs if s.name not in ROUTES]
    schema = {"type": "object", "properties": {"route": {"type": "string", "enum": [*ROUTES, *names]}},
              "required": ["route"]}
    probes = []
    for probe in json.loads((ROOT / "bench" / "models_probe.json").read_text())["understanding"]:
        want = probe["capability"] if probe["intent"] == "task" else probe["intent"]
        if want in (*ROUTES, *names):
            probes.append((probe["say"], want))
    llm = llama_cpp.Llama(model_path=str(model_path(args.model, ROOT / "data")), n_ctx=4096, n_threads=args.threads,
                          n_threads_batch=args.threads, verbose=False, logits_all=False)
    print(f"model {args.model}, {len(probes)} probes, routes {[*ROUTES, *names]}")
    got: dict[str, list[str]] = {}
    for label, revision in ((f"before ({args.before})", args.before), ("after (working tree)", None)):
        module = prompt_module(revision)
        llm.reset()
        started, answers = time.perf_counter(), []
        for text, _ in probes:
            reply = llm.create_chat_completion(messages=module.prompt(specs, text), max_tokens=16, temperature=0.0,
                                               response_format={"type": "json_object", "schema": schema})
            try:
                answers.append(json.loads(reply["choices"][0]["message"]["content"])["route"])
            except (ValueError, KeyError):
                answers.append("(unreadable)")
        got[label] = answers
        right = sum(a == want for a, (_, want) in zip(answers, probes))
        print(f"{label}: {right}/{len(probes)} right, {time.perf_counter() - started:.0f} s")
    (before, after) = got.values()
    for (text, want), b, a in zip(probes, before, after):
        if a != b:
            print(f"  differs: {text!r} want {want}: before {b}, after {a}")


if __name__ == "__main__":
    main()
