"""What a person says next about work Flora already has: an operation on a task said with a
lead-in, an excuse or a reason around it, in the words people use (zh and en), and how a
paused task's question is answered; and what must stay a new request or chat."""

from __future__ import annotations

import pytest

from capabilities.context.conversation_manager import ConversationManager
from capabilities.routing.task_operations import TaskOperation, read_operation
from common.tasks.models import TaskRecord
from config import FloraConfig
from events.event_bus import EventBus
from init_plugins import build_registry

TENANT, USER = "acme", "mei"


def cancel(ref: str = "last") -> TaskOperation:
    return TaskOperation("cancel_task", ref, "")


def rerun(ref: str = "last") -> TaskOperation:
    return TaskOperation("re_run_task", ref, "")


@pytest.mark.parametrize("text, expected", [
    # a cancel after a lead-in and an excuse about what the task waits for
    ("哎呀稍等，密码我还没拿到，刚才那个任务还是先撤掉吧", cancel()),
    ("等一下，账号还没开通，就直接取消这个任务吧", cancel()),
    ("hold on, I don't have the token yet, cancel that job for now", cancel()),
    ("wait, the password isn't ready, just cancel the task", cancel()),
    # a comment written where the task is, or left on it after a word instead of a colon
    ("在刚才的任务下面留一句：附件已发给法务", TaskOperation("comment_on_task", "last", "附件已发给法务")),
    ("给任务 t_77 补充一条备注：下周一前交", TaskOperation("comment_on_task", "t_77", "下周一前交")),
    ("leave a note on the last job saying the totals are provisional",
     TaskOperation("comment_on_task", "last", "the totals are provisional")),
    ("post a quick remark to task_9a that reads: approved by finance",
     TaskOperation("comment_on_task", "task_9a", "approved by finance")),
    # the task's own act said again, with the reason before or after it
    ("刚才网站挂了，帮我重新抓取一遍", rerun()),
    ("数据库连上了，再查询一次吧", rerun()),
    ("the VPN dropped earlier, could you fetch that again", rerun()),
    ("call the endpoint once more please", rerun()),
    ("try again, the api is working again", rerun()),
    ("once more please, the server was restarted", rerun()),
    ("网络恢复了，再试一次", rerun()),
    ("re-run it, the site is back online", rerun()),
    # the result named first, then how it is to be put
    ("输出能不能按价格从低到高排一下", TaskOperation("revise_result", "last", "按价格从低到高排一下")),
    ("刚才的结果可以帮我改成繁体吗？", TaskOperation("revise_result", "last", "改成繁体")),
    ("could you re-sort the output by size, largest first",
     TaskOperation("revise_result", "last", "re-sort the output by size, largest first")),
    # something conceded first; a note asked for "for me"
    ("I know the server was fine, but could you run it again", rerun()),
    ("not that it matters much, but cancel that one", TaskOperation("cancel_task", "last", "")),
    ("add a note to that one for me: approved by Omar", TaskOperation("comment_on_task", "last", "approved by Omar")),
])
def test_an_operation_said_around_a_lead_an_excuse_or_a_reason_is_read(text, expected):
    assert read_operation(text) == expected


@pytest.mark.parametrize("text", [
    # "cancel" and "note" said about something that is not a task
    "hold on, cancel my gym membership", "等一下，帮我取消这个订单", "在这个文件里加一句：版权所有",
    "leave a note for the cleaner saying the door is open", "add a comment to the code saying why",
    "write a note: buy milk",
    # "again" and 一次 in chat, or with a thing of its own to do
    "one more time please", "tell me again, the joke was great", "我想再去一次日本",
    "重新查一下上海的天气", "再搜一次猫的图片", "check the weather again",
    "the server is back up", "服务器好了吗？再来一次",
    # "sort" and 结果 about something else
    "sort these numbers by size: 3, 1, 2", "比赛结果按时间排一下", "结果怎么样",
])
def test_requests_and_chat_that_only_share_the_words_are_not_task_operations(text):
    assert read_operation(text) is None


# -- a paused task and the next message ---------------------------------------------------------

@pytest.fixture(scope="module")
def registry():
    return build_registry(FloraConfig(), llm=None)


def _paused(store, task: TaskRecord, missing: list[dict]) -> ConversationManager:
    events = EventBus(store)
    events.create_task(task, source="test")
    store.transition(TENANT, task.task_id, "waiting_parameters", missing=missing)
    return events


def decide(conversation: ConversationManager, text: str):
    return conversation.handle_user_input({"user_id": USER, "content": text, "tenant_id": TENANT})


@pytest.fixture
def waits_for_a_key(store, registry):
    spec = registry.get_executable("dify_workflow")
    events = _paused(store, TaskRecord(task_id="task_wf", tenant_id=TENANT, user_id=USER, content="run the dify workflow",
                                       capability="dify_workflow"),
                     [{"name": "api_key", "description": spec.describe_parameter("api_key"),
                       "schema": spec.properties["api_key"]}])
    return ConversationManager(store, events, registry)


@pytest.mark.parametrize("said", ["hmm wait, I can't find the api key yet, cancel this task for now",
                                  "等等，密钥还没申请下来，这个任务先取消吧"])
def test_a_cancel_that_mentions_the_awaited_value_is_not_taken_as_the_value(waits_for_a_key, store, said):
    decision = decide(waits_for_a_key, said)
    assert decision.action == "new_task"  # read as the operation it is, by the agent
    assert read_operation(said) == cancel()
    assert store.get_task(TENANT, "task_wf").parameters == {}


@pytest.fixture
def waits_for_a_time(store, registry):
    events = _paused(store, TaskRecord(task_id="task_rm", tenant_id=TENANT, user_id=USER, content="提醒我取快递",
                                       capability="remind", meta={"loop": {"schedule": None}}),
                     [{"name": "time", "description": "when", "schema": {"type": "string"}}])
    return ConversationManager(store, events, registry)


@pytest.mark.parametrize("said", ["收工后吧，7点", "下班之前，5点半", "after work at 7", "睡前10点吧"])
def test_a_time_with_a_part_of_the_day_around_it_answers_the_question_for_a_time(waits_for_a_time, store, said):
    decision = decide(waits_for_a_time, said)
    assert (decision.action, decision.task_id) == ("parameter_completion", "task_rm")
    assert store.get_task(TENANT, "task_rm").parameters == {"time": said}


@pytest.mark.parametrize("said", ["明天8点提醒我交水费", "remind me at 7pm to call mum"])
def test_a_new_reminder_with_its_own_time_is_no_answer_to_the_paused_one(waits_for_a_time, store, said):
    decision = decide(waits_for_a_time, said)
    assert decision.action == "new_task"
    assert store.get_task(TENANT, "task_rm").parameters == {}


@pytest.mark.parametrize("said", ["同事说那个流程今天不用跑了，你把它取消了吧",
                                  "I picked the wrong workflow, stop it please"])
def test_a_message_that_reads_as_an_operation_by_its_examples_is_no_value_for_the_paused_question(
        waits_for_a_key, store, said):
    decision = decide(waits_for_a_key, said)
    assert decision.action == "new_task" and decision.pending_task_id is None  # no answer to weigh
    assert decision.operation == {"on": "task", "op": "cancel_task", "target": "task_wf"}
    assert decision.reading["family"] == "task_op"  # read among what the person's situation allows
    assert store.get_task(TENANT, "task_wf").parameters == {}


def test_the_reading_rules_out_what_the_persons_situation_does(waits_for_a_key):
    # a question waits and a task exists, but no loop task: the reading never says loop_op
    decision = decide(waits_for_a_key, "pause my standup reminder for a week")
    assert decision.reading is None or decision.reading["family"] != "loop_op"


@pytest.mark.parametrize("said, conversation", [
    ("我在深圳，这会儿外面下雨没", False),  # starts like a statement about oneself, asks about the weather
    ("I live in Hangzhou and I love the lake there", True),
    # they resemble requests for flights and the weather (a sure "unsupported" reading), but ask nothing
    ("我下周要去上海出差三天", True),
    ("I'm flying to Berlin next week for work", True),
    ("我的银行卡被冻结了", False),  # names a record of theirs that only the bank can act on
])
def test_a_statement_about_oneself_is_conversation_unless_it_reads_surely_as_more(store, registry, said, conversation):
    decision = ConversationManager(store, EventBus(store), registry).handle_user_input(
        {"user_id": USER, "content": said, "tenant_id": TENANT})
    assert (decision.action == "chat") is conversation


@pytest.mark.parametrize("said", ["please call that off, I'll run it myself later", "call off the task", "call it off"])
def test_calling_a_task_off_cancels_it(said):
    assert read_operation(said) == cancel()


@pytest.mark.parametrize("said", ["do that one more time? I just pushed a fix", "run it again. we deployed the patch",
                                  "再请求一次？刚修好了"])
def test_a_rerun_with_the_reason_after_it_is_a_rerun(said):
    assert read_operation(said) == rerun()


def test_a_rerun_with_something_to_change_after_a_question_mark_is_a_revision():
    assert read_operation("run it again? also add the totals") == TaskOperation("revise_result", "last",
                                                                                "also add the totals")


def test_a_memo_on_the_task_is_a_comment_even_when_it_says_remember():
    assert read_operation("这个任务记个备忘：下次请求记得带上token") == TaskOperation("comment_on_task", "last",
                                                                                  "下次请求记得带上token")


@pytest.mark.parametrize("said", ["the game got called off", "call mom tonight", "I'll call you back"])
def test_calling_something_else_off_is_no_operation(said):
    assert read_operation(said) is None


def test_a_note_hung_on_it_with_what_to_write_in_quotes():
    assert read_operation("给它挂个备注吧，就写“双十一备货参考，别删”") == TaskOperation("comment_on_task", "last",
                                                                                 "双十一备货参考，别删")


def test_the_task_id_the_rules_read_is_the_one_the_operation_names():
    from capabilities.cognition.rule_tables import table
    from capabilities.routing import task_operations

    assert table("task_operations").parts["task_id"] == task_operations._TASK_ID.pattern
    assert read_operation("please cancel task_3f2a, I'll do it myself") == cancel("task_3f2a")
