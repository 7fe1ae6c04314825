"""The kernel sandbox on the path a person takes: a running Flora on multiprocTCPBase, python_exec
with its audit hook switched off, approved by the person. The code tries to read the keys in
Flora's data directory, reach Flora's own actor admin port and write beside the keys; every
attempt comes back refused inside the task's result, and the estate is unchanged."""

from __future__ import annotations

import uuid

import pytest

import main
from agents.actor_system import free_port
from tests.actors.conftest import flora_config
from tests.support.asking import ask_flora

TOKEN = f"flora-through-canary-{uuid.uuid4().hex[:10]}"
pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def flora(tmp_path_factory, dify, sales_db):
    data_dir = tmp_path_factory.mktemp("sandbox-flora")
    (data_dir / "keys.yaml").write_text(f"keys:\n  acme: {TOKEN}\n")
    config = flora_config(data_dir, dify.url, sales_db, "multiprocTCPBase")
    config["actors"]["admin_port"] = free_port()
    config["memory"] = {"enabled": False}
    config["tools"] = {"python": {"guard": False}}
    running = main.start_flora(config)
    yield running, data_dir, config["actors"]["admin_port"]
    running.shutdown()


def run_code(flora, code: str) -> dict:
    running = flora[0]
    # the code itself, given as a person gives it (a description would go to the agent to write)
    asked = ask_flora(running, "mallory", f"run python code: {code}", timeout=60)
    assert asked["message_type"] == "task_paused" and asked["pause_kind"] != "waiting_parameters", asked
    done = ask_flora(running, "mallory", "yes", timeout=60, task_id=asked["task_id"])  # the person approves
    assert done["message_type"] == "task_completed", done
    return done


@pytest.mark.parametrize("attempt", [
    "print(open('{data}/keys.yaml').read())",
    "import os; print(os.listdir('{data}')); print(1 / os.listdir('{data}').count('keys.yaml'))",
    "import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')",
    "open('{data}/pwned', 'w').write('x'); print('WRITTEN')",
    "import subprocess; print(subprocess.run(['cat', '{data}/keys.yaml'], capture_output=True, text=True)); "
    "subprocess.run(['cat', '{data}/keys.yaml'], check=True)",
])
def test_code_a_person_approved_cannot_reach_flora(flora, attempt):
    running, data_dir, port = flora
    done = run_code(flora, attempt.format(data=data_dir, port=port))
    text = str(done)
    assert TOKEN not in text and "CONNECTED" not in text and "WRITTEN" not in text, text
    assert not (data_dir / "pwned").exists()
    assert done["result"]["exit_code"] == 1 and "Error" in done["result"]["stderr"], done["result"]  # refused inside
    assert '"isolated": true' in text.replace("'isolated': True", '"isolated": true'), text
