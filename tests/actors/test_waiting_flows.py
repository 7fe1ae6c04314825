"""A task waiting for an answer does not swallow what the person says about their other work,
through ``system.ask`` as a person meets it: with a Dify workflow waiting for its api_key, a
weekly loop task and a finished task, operations on the others act on them, the waiting task
keeps waiting, and a model that claims acts it never did is not believed."""

from __future__ import annotations

import pytest

import main
from common.runtime import Runtime
from tests.actors.conftest import flora_config
from tests.support.asking import ask_flora

TIMEOUT = 30


@pytest.fixture(scope="module")
def flora(tmp_path_factory, dify, sales_db):
    config = flora_config(tmp_path_factory.mktemp("flora-waiting"), dify.url, sales_db, "multiprocTCPBase")
    config["llm"] = {"backend": "function", "function": "tests.support.claiming_llm:respond"}
    running = main.start_flora(config)
    yield running
    running.shutdown()


def ask(flora, user: str, content: str) -> dict:
    return ask_flora(flora, user, content, timeout=TIMEOUT)


def situation(flora, user: str, lang: str) -> tuple[str, str]:
    """The person's loop task (its id), a finished task and the Dify task waiting (its id)."""
    loop = ask(flora, user, "每周一早上9点提醒我看销售周报" if lang == "zh"
               else "every Monday at 9:00 remind me to read the weekly sales report")
    assert loop["message_type"] == "task_completed", loop
    done = ask(flora, user, "add numbers a=2 b=3")
    assert done["message_type"] == "task_completed", done
    waiting = ask(flora, user, "执行Dify工作流" if lang == "zh" else "run my dify workflow")
    assert waiting["message_type"] == "task_paused", waiting
    return loop["result"]["loop_task_id"], waiting["task_id"]


def still_waiting(flora, task_id: str) -> bool:
    task = Runtime.from_config(flora.config).store.get_task("default", task_id)
    return task.state == "waiting_parameters" and "api_key" not in task.parameters


@pytest.mark.parametrize("lang, pause, trigger, rerun", [
    ("en", "pause the weekly sales report task", "run the sales report task now", "re-run the last task"),
    ("zh", "每周的销售周报先暂停一下", "销售周报那个任务现在就跑一次", "重新执行上一个任务"),
])
def test_operations_on_other_work_act_on_it_while_a_task_waits(flora, lang, pause, trigger, rerun):
    user = f"waiting-ops-{lang}"
    loop_id, waiting_id = situation(flora, user, lang)
    again = ask(flora, user, rerun)
    assert again["message_type"] == "task_completed" and again["capability"] == "add_numbers", again
    ran = ask(flora, user, trigger)
    assert ran["message_type"] == "task_completed" and ran["capability"] == "remind", ran  # the reminder's run
    paused = ask(flora, user, pause)
    assert paused["capability"] == "loop_tasks" and paused["task_id"] == loop_id, paused
    assert paused["result"]["state"] == "paused"
    assert still_waiting(flora, waiting_id)
    answered = ask(flora, user, "sk-good")  # and the waiting question is still answered by its value
    assert answered["task_id"] == waiting_id and answered["message_type"] == "task_completed", answered


@pytest.mark.parametrize("lang, said", [("zh", "谢谢你"), ("en", "thanks a lot!")])
def test_a_chat_reply_claiming_acts_that_were_not_done_is_corrected(flora, lang, said):
    user = f"waiting-claims-{lang}"
    _, waiting_id = situation(flora, user, lang)
    reply = ask(flora, user, said)
    assert reply["message_type"] == "chat_reply", reply
    for claim in ("我会立即执行", "已为你暂停", "I'm running", "I've paused"):
        assert claim not in reply["message"]
    assert ("没有执行" if lang == "zh" else "haven't run") in reply["message"]
    assert still_waiting(flora, waiting_id)
    loops = Runtime.from_config(flora.config).registry.get_capability("loop_tasks").list("default", user)
    assert [t.state for t in loops] == ["active"]
