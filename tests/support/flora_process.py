"""Flora in a process of its own, for crash tests: ``python -m tests.support.flora_process
CONFIG.json USER MESSAGE...`` starts Flora, sends each message (without waiting for its
reply), prints READY once the last task shows in the store, then waits to be killed."""

from __future__ import annotations

import json
import sys
import time

import main
from common import messages as m
from common.tasks.sqlite_store import SQLiteTaskStore


def run(config_path: str, user: str, messages: list[str]) -> None:
    config = json.loads(open(config_path).read())
    flora = main.start_flora(config)
    store = SQLiteTaskStore(flora.config.sqlite_path)
    for content in messages:
        flora.system.tell(flora.interaction, m.user_input(user_id=user, content=content))
    deadline = time.monotonic() + 30
    while len(store.list_tasks(flora.config.default_tenant, user_id=user)) < len(messages):
        if time.monotonic() > deadline:
            raise SystemExit("the messages did not become tasks")
        time.sleep(0.05)
    print("READY", flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2], sys.argv[3:])
