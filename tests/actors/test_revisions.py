"""A revision through ``system.ask`` changes what runs: "revise it: in celsius" after a
conversion to fahrenheit runs the conversion again to celsius and says what changed."""

from __future__ import annotations

import pytest

import main
from tests.actors.conftest import BASES, flora_config
from tests.actors.test_conversation_flows import ask


@pytest.fixture(scope="module", params=BASES)
def flora(request, tmp_path_factory, dify, sales_db):
    config = flora_config(tmp_path_factory.mktemp(f"revise-{request.param}"), dify.url, sales_db, request.param)
    config["capabilities"]["plugin_modules"] = ["tests.support.sample_plugins", "examples.my_tools"]
    running = main.start_flora(config)
    yield running
    running.shutdown()


def test_revise_in_celsius_runs_the_conversion_again_to_celsius(flora, user, store):
    first = ask(flora, user, "convert the temperature 21.5 to fahrenheit")
    assert first["message_type"] == "task_completed", first
    assert first["result"] == {"value": 70.7, "unit": "fahrenheit"}

    revised = ask(flora, user, "revise it: in celsius")
    assert revised["message_type"] == "task_completed", revised
    assert revised["task_id"] != first["task_id"]
    assert revised["result"]["unit"] == "celsius" and revised["result"]["value"] == -5.83
    assert "to: fahrenheit → celsius" in revised["message"]
    task = store.get_task("default", revised["task_id"])
    assert task.meta["revision_of"] == first["task_id"] and task.meta["instruction"] == "in celsius"
