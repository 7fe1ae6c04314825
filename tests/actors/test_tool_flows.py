"""The workspace tools through a running Flora: shell pauses for approval, then runs in the
user's own workspace."""

from __future__ import annotations

from pathlib import Path

from tests.actors.test_conversation_flows import ask


def test_a_shell_command_waits_for_a_yes_then_runs_in_the_users_workspace(flora, user):
    paused = ask(flora, user, "run command command=pwd")
    assert paused["message_type"] == "task_paused"
    assert paused["pause_kind"] == "waiting_approval" and paused["capability"] == "shell"
    done = ask(flora, user, "yes")
    assert done["message_type"] == "task_completed"
    workspace = Path(flora.config.data_dir, "workspace", flora.config.default_tenant, user).resolve()
    assert done["result"]["stdout"].strip() == str(workspace)
    assert done["result"]["exit_code"] == 0


def test_a_refused_command_is_a_task_error_that_says_why_before_any_approval(flora, user):
    refused = ask(flora, user, "run command command=reboot")  # never offered for approval
    assert refused["message_type"] == "task_error", refused
    assert refused["error_type"] == "forbidden" and "restarts the machine" in refused["message"]
