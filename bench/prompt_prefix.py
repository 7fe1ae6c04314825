"""What a new skill costs the next message: prompt tokens llama.cpp evaluates again.

The model host keeps the evaluated state of the previous prompt and evaluates only what comes
after the longest prefix the next prompt shares with it. This bench builds the understanding
step's prompt for the capabilities installed by default, sends a message, installs one more
skill (a capability spec as a skill registers it, first in the list as ``TaskRouter.routable``
puts a deployment's own), and sends the next message; it prints, for
the prompt layout of the working tree and for that of ``--before`` (a git revision), the
prompt tokens llama.cpp counted as evaluated for that next message (``n_p_eval`` from
``llama_perf_context``: the raw llama.cpp figure), the time it took, and the same for a next
message with nothing installed in between. The model runs in this process through
llama-cpp-python's ``Llama`` with the same chat template the model host uses.

    .venv/bin/python bench/prompt_prefix.py [--before REV] [--model qwen2.5-coder-0.5b]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from capabilities.base import CapabilitySpec  # noqa: E402
from capabilities.llm.models import DEFAULT_UNDERSTANDING_MODEL, model_path  # noqa: E402
from capabilities.routing.task_router import TaskRouter  # noqa: E402
from config import load_config  # noqa: E402
from init_plugins import build_registry  # noqa: E402

SKILL = CapabilitySpec(
    name="triangle_area", description="Compute the area of a triangle from its base and height.",
    parameters={"type": "object", "properties": {"base": {"type": "number"}, "height": {"type": "number"}},
                "required": ["base", "height"]},
    handler=lambda **_: None, examples=("find the area of a triangle with base 10 and height 5", "三角形底3高4的面积"))
FIRST, NEXT, THIRD = "what's the weather like on Mars?", "tell me a joke about cats", "谢谢你"


def prompt_module(revision: str | None):
    """capabilities/cognition/understanding_prompt.py as in ``revision`` (None: the working tree)."""
    if revision is None:
        from capabilities.cognition import understanding_prompt
        return understanding_prompt
    source = subprocess.run(["git", "show", f"{revision}:capabilities/cognition/understanding_prompt.py"],
                            cwd=ROOT, check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "understanding_prompt_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("understanding_prompt_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def evaluated(llm, messages: list[dict]) -> tuple[int, int, float]:
    """(prompt tokens, tokens llama.cpp evaluated, seconds of prompt evaluation) of one call."""
    import llama_cpp

    llama_cpp.llama_perf_context_reset(llm._ctx.ctx)
    started = time.perf_counter()
    reply = llm.create_chat_completion(messages=messages, max_tokens=1, temperature=0.0)
    wall = time.perf_counter() - started
    perf = llama_cpp.llama_perf_context(llm._ctx.ctx)
    return reply["usage"]["prompt_tokens"], perf.n_p_eval, wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="HEAD~1", help="git revision of the layout to compare with")
    parser.add_argument("--model", default=DEFAULT_UNDERSTANDING_MODEL)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import llama_cpp

    specs = TaskRouter(build_registry(load_config({"llm": {"backend": "none"}}))).routable()
    gguf = model_path(args.model, ROOT / "data")
    llm = llama_cpp.Llama(model_path=str(gguf), n_ctx=4096, n_threads=args.threads, n_threads_batch=args.threads,
                          verbose=False, logits_all=False)
    print(f"model {args.model}, {len(specs)} capabilities installed, then {SKILL.name} as a skill")
    for label, revision in ((f"before ({args.before})", args.before), ("after (working tree)", None)):
        module = prompt_module(revision)
        llm.reset()
        total, n_eval, took = evaluated(llm, module.prompt(specs, FIRST))
        print(f"{label}: first message: {total} prompt tokens, {n_eval} evaluated, {took:.1f} s")
        total, n_eval, took = evaluated(llm, module.prompt(specs, NEXT))
        print(f"{label}: next message, nothing installed: {total} prompt tokens, {n_eval} evaluated, {took:.1f} s")
        total, n_eval, took = evaluated(llm, module.prompt([SKILL, *specs], THIRD))  # where routable() puts it
        print(f"{label}: next message after a skill was added: {total} prompt tokens, {n_eval} evaluated "
              f"(llama.cpp n_p_eval), {took:.1f} s")


if __name__ == "__main__":
    main()
