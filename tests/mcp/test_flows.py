"""MCP tools through a running Flora (``system.ask``, both actor bases, the scripted fake
model): a request nothing installed fits is routed to the MCP tool, a missing argument pauses
the task and the answer resumes it, a destructive tool asks first, a tool's isError fails the
task with its text, and conversation stays conversation."""

from __future__ import annotations

import pytest

import main
from tests.mcp.conftest import servers
from tests.support.asking import ask_flora

pytestmark = pytest.mark.timeout(180)
TIMEOUT = 60


@pytest.fixture(scope="module", params=["simpleSystemBase", "multiprocTCPBase"])
def flora(request, tmp_path_factory, http_server):
    data_dir = tmp_path_factory.mktemp(f"mcp-flora-{request.param}")
    running = main.start_flora({
        "data_dir": str(data_dir),
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": request.param, "ask_timeout_s": TIMEOUT, "execution_pool_size": 2},
        "memory": {"enabled": False},
        "mcp": {"servers": {"time": servers()["time"],
                            "notes": {**servers(http_server.url)["notes"], "call_timeout_s": 3}}},
    })
    yield running
    running.shutdown()


@pytest.fixture
def user(request) -> str:
    return "u_" + request.node.name.replace("[", "_").replace("]", "")[-40:]


def ask(flora, user: str, content: str, **fields) -> dict:
    return ask_flora(flora, user, content, timeout=TIMEOUT, **fields)


def test_a_request_for_the_time_runs_the_mcp_tool(flora, user):
    done = ask(flora, user, "what is the current time, timezone=Europe/Warsaw")
    assert done["message_type"] == "task_completed", done
    assert done["result"]["structured"]["timezone"] == "Europe/Warsaw"
    assert "Europe/Warsaw" in done["message"]


def test_a_missing_argument_pauses_the_task_and_the_answer_completes_it(flora, user):
    paused = ask(flora, user, "what is the current time?")
    assert (paused["message_type"], paused["capability"]) == ("task_paused", "time.get_current_time"), paused
    assert [p["name"] for p in paused["missing_parameters"]] == ["timezone"]
    done = ask(flora, user, "Asia/Tokyo")
    assert done["message_type"] == "task_completed", done
    assert done["result"]["structured"]["timezone"] == "Asia/Tokyo"


def test_a_destructive_tool_waits_for_approval_then_runs(flora, user):
    note = "n1" if flora.config.actors.system_base == "simpleSystemBase" else "n2"  # one notebook for both
    paused = ask(flora, user, f"delete the note note_id={note} from my notebook")
    assert (paused["message_type"], paused["pause_kind"]) == ("task_paused", "waiting_approval"), paused
    assert paused["capability"] == "notes.delete_note"
    done = ask(flora, user, "yes")
    assert done["message_type"] == "task_completed", done
    assert done["result"]["text"] == f"deleted {note}"


def test_a_tool_that_answers_is_error_fails_the_task_with_its_text(flora, user):
    failed = ask(flora, user, 'use notes.fail with reason="the ink ran out"')
    assert failed["message_type"] == "task_error", failed
    assert "cannot do that: the ink ran out" in failed["message"]


def test_conversation_stays_conversation_with_mcp_tools_installed(flora, user):
    reply = ask(flora, user, "Thanks a lot, that was helpful")
    assert (reply["message_type"], reply["intent"]) == ("chat_reply", "chat")
    joke = ask(flora, user, "tell me a joke about time travel")
    assert joke["message_type"] == "chat_reply"


def test_a_wrong_typed_argument_is_refused_and_asked_for_again(flora, user):
    paused = ask(flora, user, "use notes.slow with seconds=soon")
    assert (paused["message_type"], paused["capability"]) == ("task_paused", "notes.slow"), paused
    assert [p["name"] for p in paused["missing_parameters"]] == ["seconds"]
    done = ask(flora, user, "0.1")
    assert done["message_type"] == "task_completed", done
    assert done["result"]["text"] == "waited 0.1 s"


def test_a_tool_that_hangs_times_out_with_a_clear_error_and_flora_keeps_serving(flora, user):
    slow = ask(flora, user, "use notes.slow with seconds=60")
    assert (slow["message_type"], slow["error_type"]) == ("task_error", "timeout"), slow
    assert "did not answer slow within 3 s" in slow["message"] and slow["retryable"] is True
    assert ask(flora, user, "use notes.greet with name=Ada")["result"]["text"] == "Hello, Ada!"
