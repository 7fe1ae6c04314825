"""Looking for the llama.cpp crash on long agent prompts: the agent's own prompt and reply
schema (five tools), grown towards ``n_ctx`` by a long tool result, sent to a model host
(the packaged 1.5B model, n_ctx 4096, not supervised, so a crash stays visible) with
``max_tokens`` 512, as the agent loop sends them.

Prints, per request: the prompt tokens the server counted, whether it answered, and the host's
exit status when it died (``killed by SIGSEGV`` is the crash).

    .venv/bin/python bench/host_crash_probe.py [--model qwen2.5-coder-1.5b] [--n-ctx 4096]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402

from capabilities.agent import prompt  # noqa: E402
from capabilities.agent.loop import ToolBox  # noqa: E402
from capabilities.agent.transcript import Transcript  # noqa: E402
from capabilities.llm.host_supervisor import describe_exit  # noqa: E402
from capabilities.llm.model_host import ModelHost  # noqa: E402
from capabilities.llm.models import model_path  # noqa: E402
from config import load_config  # noqa: E402
from init_plugins import build_registry  # noqa: E402

REQUEST = "帮我看看这个目录里有哪些文件"
LINE = "drwxr-xr-x  2 flora flora 4096 Nov 28 15:08 project_{i:04d}_results_and_notes\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--tools", type=int, default=5)
    parser.add_argument("--lines", default="0,20,40,60,70,75,80,85,90,95,100")
    args = parser.parse_args()
    registry = build_registry(load_config({"llm": {"backend": "none"}}))
    specs = ToolBox.from_registry(registry).tools[: args.tools]
    print("tools:", [s.name for s in specs], flush=True)
    schema = prompt.output_schema(specs)
    gguf = model_path(args.model, Path(__file__).resolve().parent.parent / "data")
    host = ModelHost(gguf, alias=args.model, n_ctx=args.n_ctx, n_threads=2, supervise=False).start()
    try:
        for lines in [int(n) for n in args.lines.split(",")]:
            transcript = Transcript(request=REQUEST)
            if lines:
                transcript.entries.append({"kind": "call", "tool": specs[0].name, "arguments": {}, "ok": True,
                                           "result": "".join(LINE.format(i=i) for i in range(lines))})
            said = prompt.messages(specs, transcript, max_result_chars=1_000_000)
            started = time.monotonic()
            try:
                answer = httpx.post(host.base_url + "/chat/completions", timeout=600, json={
                    "messages": said, "max_tokens": 512, "temperature": 0.0,
                    "response_format": {"type": "json_object", "schema": schema}})
                usage = answer.json().get("usage", {}) if answer.status_code == 200 else {}
                print(f"lines={lines} HTTP {answer.status_code} prompt_tokens={usage.get('prompt_tokens')} "
                      f"completion_tokens={usage.get('completion_tokens')} {time.monotonic() - started:.1f} s "
                      f"{answer.text[:160] if answer.status_code != 200 else ''}", flush=True)
            except httpx.HTTPError as exc:
                time.sleep(0.5)
                code = host.exit_code()
                print(f"lines={lines} no answer ({type(exc).__name__}); host "
                      f"{describe_exit(code) if code is not None else 'still running'}", flush=True)
                if code is not None:
                    print(host._log_tail()[-1500:])
                    return
    finally:
        host.stop()


if __name__ == "__main__":
    main()
