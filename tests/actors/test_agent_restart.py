"""An agent task paused on its question, or on the approval of a call, survives a restart of
Flora: the answer given to the new Flora continues the loop from its transcript, and no call
made before the restart is made again. (A module of its own: no other Flora may run beside
the ones it starts.)"""

from __future__ import annotations

import main
from tests.actors.test_agent_flows import agent_config, ask, marks


def test_a_paused_agent_task_resumes_after_a_restart(tmp_path, dify, sales_db):
    user = "restart_user"
    config = agent_config(tmp_path, dify.url, sales_db, "multiprocTCPBase")
    first = main.start_flora(config)
    try:
        paused = ask(first, user, "use your tools: mark then ask")
        assert paused["message_type"] == "task_paused", paused
        assert paused["message"] == "Which label should the next mark have?"
    finally:
        first.shutdown()
    second = main.start_flora(config)
    try:
        done = ask(second, user, "two")
        assert done["message_type"] == "task_completed", done
        assert done["message"] == "Marked one and two." and done["task_id"] == paused["task_id"]
        assert marks(second, paused["task_id"]) == ["one", "two"]  # the first call was not run again
    finally:
        second.shutdown()


def test_an_approval_asked_before_a_restart_is_answered_after_it(tmp_path, dify, sales_db):
    user = "restart_approver"
    config = agent_config(tmp_path, dify.url, sales_db, "multiprocTCPBase")
    first = main.start_flora(config)
    try:
        paused = ask(first, user, "use your tools: write notes red and blue")
        assert paused["pause_kind"] == "waiting_approval" and paused["tool_call"]["arguments"]["name"] == "red"
    finally:
        first.shutdown()
    second = main.start_flora(config)
    try:
        again = ask(second, user, "yes")
        assert again["pause_kind"] == "waiting_approval" and again["tool_call"]["arguments"]["name"] == "blue", again
        done = ask(second, user, "yes")
        assert done["message_type"] == "task_completed" and done["task_id"] == paused["task_id"], done
        assert marks(second, paused["task_id"]) == ["note red", "note blue"]
    finally:
        second.shutdown()
