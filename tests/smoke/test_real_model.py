"""The whole path on the real embedded model: the packaged GGUF served by the shared model
host, the actors on multiprocTCPBase. Checks that it works end to end, never its words."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import main
from capabilities.llm.models import DEFAULT_MODEL, model_path
from common import messages as m
from common.i18n import language_of
from tests.support.dify_server import dify_server

# A loaded 2-core machine runs the 0.5B model many times slower than an idle one (a long
# routing prompt alone can take minutes), so these tests budget for that: one model call may
# take MODEL_CALL_S, and is not retried (a retry of a call that timed out only doubles the
# wait); a reply may take a few of them. Nothing here asserts speed (bench/ measures it).
MODEL_CALL_S = 600
ASK_S = 4 * MODEL_CALL_S
SLOW_LLM = {"timeout_s": MODEL_CALL_S, "max_retries": 0}
SLOW_LLM_ENV = {"FLORA_LLM__TIMEOUT_S": str(MODEL_CALL_S), "FLORA_LLM__MAX_RETRIES": "0",
                "FLORA_ACTORS__ASK_TIMEOUT_S": str(ASK_S)}

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(3 * ASK_S)]

REPO = Path(__file__).resolve().parents[2]
MODEL = model_path(DEFAULT_MODEL, REPO / "data")


@pytest.fixture(scope="module")
def model_file() -> Path:
    if not MODEL.is_file():
        pytest.skip(f"{MODEL} is not assembled; run scripts/install.sh")
    return MODEL


def test_main_test_flag_starts_sends_a_message_prints_the_reply_and_exits_0(model_file, tmp_path):
    env = {**os.environ, "FLORA_DATA_DIR": str(tmp_path), "FLORA_LLM__MODEL_PATH": str(model_file), **SLOW_LLM_ENV}
    done = subprocess.run([sys.executable, "main.py", "--test"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=2 * ASK_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert main.TEST_MESSAGE in done.stdout
    reply = done.stdout.split("flora> ", 1)[1].strip()
    assert reply and not reply.startswith("[error"), done.stdout


def test_seed_scenario_and_chat_through_the_real_model(model_file, tmp_path):
    with dify_server() as dify:
        flora = main.start_flora({
            "data_dir": str(tmp_path),
            "llm": {"backend": "local", "model_path": str(model_file), **SLOW_LLM},
            "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": ASK_S},
            "capabilities": {"settings": {"dify_workflow": {"base_url": dify.url + "/v1",
                                                            "allow_private": ["127.0.0.1"]}}},
        })
        try:
            assert flora.model_host is not None and flora.model_host.running

            def ask(text):
                reply = flora.system.ask(flora.interaction, m.user_input(user_id="smoke", content=text), ASK_S)
                m.validate(reply)
                return reply

            paused = ask("执行Dify工作流")
            assert paused["message_type"] == "task_paused"
            assert [p["name"] for p in paused["missing_parameters"]] == ["api_key"]
            done = ask("sk-xxxxx")
            assert done["message_type"] == "task_completed"
            assert done["result"]["status"] == "succeeded"

            chat = ask("Tell me something nice about the sea, in one sentence.")
            assert chat["message_type"] in m.REPLY_TYPES - {"task_error"}
            assert chat["message"].strip()
        finally:
            flora.shutdown()
        assert not flora.model_host.running


def test_readme_quickstart_example_runs_as_written(model_file):
    done = subprocess.run([sys.executable, "examples/quickstart.py"], cwd=REPO, capture_output=True, text=True,
                          timeout=2 * ASK_S, env={**os.environ, **SLOW_LLM_ENV})
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("task_paused | To do “convert the temperature 21.5” (convert_temperature) I need:")
    assert any(line == "task_completed | {'value': 70.7, 'unit': 'fahrenheit'}" for line in lines)
    assert lines[-1].startswith("chat_reply | ")


def test_a_plan_summarised_by_the_real_model(model_file, tmp_path):
    """Two steps at once, then the ResultAggregatorActor asks the packaged model for the summary."""
    flora = main.start_flora({
        "data_dir": str(tmp_path),
        "llm": {"backend": "local", "model_path": str(model_file), **SLOW_LLM},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": ASK_S},
        "capabilities": {"plugin_modules": ["tests.support.plan_plugins"]},
    })
    try:
        reply = flora.system.ask(flora.interaction, m.user_input(
            user_id="smoke", content="slow fetch label=sales, slow fetch label=returns, and write me a summary"), ASK_S)
        m.validate(reply)
        assert reply["message_type"] == "task_completed", reply
        result = reply["result"]
        assert [s["capability"] for s in result["plan"]["steps"]] == ["slow_fetch", "slow_fetch"]
        assert result["strategy"] == "map_reduce" and result["detail"]["reduce"] == "summary"
        assert isinstance(result["value"], str) and result["value"].strip()
    finally:
        flora.shutdown()


def test_conversation_through_the_real_model_streams_in_the_persons_language_and_invents_nothing(model_file, tmp_path):
    (tmp_path / "models").symlink_to(MODEL.parent)  # the packaged default: both models, each on its own host
    flora = main.start_flora({
        "data_dir": str(tmp_path),
        "llm": {"backend": "local", **SLOW_LLM},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": ASK_S},
    })
    try:
        assert flora.understanding_host is not None and flora.understanding_host.running

        def ask(text, user="talk"):
            reply = flora.system.ask(flora.interaction, m.user_input(user_id=user, content=text), ASK_S)
            m.validate(reply)
            return reply

        pieces: list[str] = []
        feelings = flora.ask_streaming("今天心情不太好", pieces.append, user_id="talk", timeout=ASK_S)
        assert (feelings["message_type"], feelings["intent"]) == ("chat_reply", "chat")
        assert pieces and language_of(feelings["message"]) == "zh"
        thanks = ask("Thanks a lot, that was helpful")
        assert (thanks["message_type"], thanks["intent"]) == ("chat_reply", "chat")
        order = ask("帮我查一下订单 A-1029 的物流状态")
        assert (order["message_type"], order["intent"]) == ("chat_reply", "unsupported")
        fetch = ask("fetch https://example.invalid/status.json")
        assert fetch.get("capability") == "http_request" or fetch["message_type"] == "task_error"
        assert ask("/status")["intent"] == "status"
    finally:
        flora.shutdown()
