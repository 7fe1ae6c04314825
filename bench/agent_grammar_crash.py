"""The llama.cpp crash the agent's output constraint used to cause, and that it no longer does.

The agent constrains each reply with a JSON schema that llama.cpp turns into a grammar. Written
out whole, ``python_exec``'s ``code`` (``maxLength: 262144``) becomes a rule nested 262,144
levels deep (a 2 MB grammar); llama.cpp compiles it, then segfaults while sampling under it
(exit status 139, on llama-cpp-python 0.3.x, in a worker thread as the model host runs
requests). The agent now sends only the schema's shape (``prompt.grammar``: types, allowed
values, properties, what is required) and checks lengths and patterns itself.

    .venv/bin/python bench/agent_grammar_crash.py            # both, each in a child process

Prints the grammar's size and each child's exit status (139: the segfault).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, sys, threading
sys.path.insert(0, {root!r})
from llama_cpp import Llama
from llama_cpp.llama_grammar import json_schema_to_gbnf
schema = json.loads({schema!r})
print("grammar chars", len(json_schema_to_gbnf(json.dumps(schema))), flush=True)
llm = Llama(model_path={model!r}, n_ctx=1024, n_threads=2, verbose=False)
def go():
    out = llm.create_chat_completion(
        messages=[{{"role": "user", "content": "call python_exec to print the sha256 of hello. Answer JSON."}}],
        response_format={{"type": "json_object", "schema": schema}}, max_tokens=120, temperature=0)
    print("reply", out["choices"][0]["message"]["content"][:200], flush=True)
t = threading.Thread(target=go); t.start(); t.join()
"""


def schemas() -> dict[str, dict]:
    from capabilities.agent.prompt import grammar
    from capabilities.tools.python_exec import PARAMETERS

    def whole(schema):
        if isinstance(schema, dict):
            return {k: whole(v) for k, v in schema.items() if not k.startswith("x-flora")}
        return [whole(v) for v in schema] if isinstance(schema, list) else schema

    def step(arguments):
        return {"anyOf": [{"type": "object", "properties": {"tool": {"const": "python_exec"}, "arguments": arguments},
                           "required": ["tool", "arguments"], "additionalProperties": False},
                          {"type": "object", "properties": {"final": {"type": "string"}}, "required": ["final"],
                           "additionalProperties": False}]}

    return {"whole schema (before)": step(whole(PARAMETERS)), "shape only (prompt.grammar)": step(grammar(PARAMETERS))}


def main() -> int:
    from capabilities.llm.models import model_path

    model = model_path("qwen2.5-coder-0.5b", ROOT / "data")
    if not model.is_file():
        print(f"no model at {model}", file=sys.stderr)
        return 2
    for name, schema in schemas().items():
        code = CHILD.format(root=str(ROOT), schema=json.dumps(schema), model=str(model))
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
        lines = [line for line in done.stdout.splitlines() if line.startswith(("grammar", "reply"))]
        print(f"{name}: exit status {done.returncode}; " + "; ".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
