"""A reply that takes longer than ``actors.ask_timeout_s``: the user is told in time, and
the task still finishes in the store. (Its own module: it starts its own actor system, and a
process holds one at a time.)"""

from __future__ import annotations

import time

import main
from common import messages as m
from common.tasks.sqlite_store import SQLiteTaskStore
from tests.actors.conftest import flora_config


def test_slow_task_gets_a_timeout_reply_and_still_completes_in_the_store(tmp_path, dify, sales_db):
    config = flora_config(tmp_path, dify.url, sales_db, "multiprocTCPBase")
    config["actors"]["ask_timeout_s"] = 1.0
    flora = main.start_flora(config)
    try:
        started = time.monotonic()
        reply = flora.system.ask(flora.interaction, m.user_input(
            user_id="patient", content=f"slow job seconds=3 pid_file={tmp_path / 'pid'}"), 10)
        waited = time.monotonic() - started
        assert reply["message_type"] == "task_error" and reply["error_type"] == "timeout"
        assert reply["retryable"] is True
        assert waited < 2.9, "the timeout reply should come before the job ends"
        store = SQLiteTaskStore(flora.config.sqlite_path)
        try:
            # on a busy machine the timeout can come before the task's record is written: it
            # is the task's id that the reply promises, so wait for the record and its end
            deadline = time.monotonic() + 30
            while (task := store.get_task(flora.config.default_tenant, reply["task_id"])) is None \
                    or task.state != "completed":
                assert time.monotonic() < deadline, "the task did not complete after the timeout reply"
                time.sleep(0.1)
        finally:
            store.close()
    finally:
        flora.shutdown()
