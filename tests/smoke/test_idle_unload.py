"""The packaged model falls asleep when idle and wakes for the next request: the real model
host, a short ``idle_unload_s``, a real request before and after. Never asserts the words."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import main
from capabilities.llm import ModelHost, OpenAICompatibleLLM, host_state_dir
from capabilities.llm.models import model_path
from config import load_config
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
SMALL = "qwen2.5-coder-0.5b"
IDLE_S = 2.0
WAIT_S = 120.0  # a busy 2-core machine: the unload check and a reload may both be slow




def test_the_model_unloads_when_idle_and_the_next_request_still_answers(tmp_path):
    gguf = model_path(SMALL, REPO / "data")
    if not gguf.is_file():
        pytest.skip(f"{gguf} is not assembled; run scripts/install.sh")
    state_file = host_state_dir(tmp_path) / f"{SMALL}.json"  # where a Flora with data_dir tmp_path keeps it
    host = ModelHost(gguf, alias=SMALL, n_ctx=1024, idle_unload_s=IDLE_S, state_file=state_file,
                     startup_timeout_s=600)
    with host:
        llm = OpenAICompatibleLLM(host.base_url, model=SMALL, schema_mode="json_object", timeout_s=600,
                                  max_retries=0)
        ask = [{"role": "user", "content": "Say hello."}]
        assert llm.complete(ask, max_tokens=8).text.strip()
        loaded = wait_until(lambda: host.state() if host.state().get("rss_mb") else None, WAIT_S, "a first state")
        asleep = wait_until(lambda: (s := host.state())["state"] == "unloaded_idle" and s, WAIT_S,
                            "unloaded while idle")
        assert asleep["unloads"] == 1 and asleep["since"] >= loaded["since"]
        assert asleep["rss_mb"] < loaded["rss_mb"], (loaded, asleep)  # the weights' memory was given back
        printed = io.StringIO()
        assert main.print_status(load_config({"data_dir": str(tmp_path)}, env={}), out=printed) == 0  # --status
        assert f"{SMALL}  unloaded_idle since" in printed.getvalue(), printed.getvalue()
        assert llm.complete(ask, max_tokens=8).text.strip()  # waits for the load, does not fail
        # the state is written once the reply's last byte is out, a moment after the client has it
        awake = wait_until(lambda: (s := host.state())["state"] == "loaded" and s, WAIT_S, "loaded again")
        assert (awake["loads"], awake["unloads"]) == (1, 1)
        print(f"\nrss_mb loaded {loaded['rss_mb']} -> unloaded {asleep['rss_mb']} -> reloaded {awake['rss_mb']}")
    assert not state_file.exists()
