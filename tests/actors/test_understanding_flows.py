"""What a person meets first, through ``system.ask`` on both actor bases: conversation is
never a task, replies come in the person's language and stream, nothing is made up about
their records or their tasks, system commands obey permissions, and the conversation is
remembered from one message to the next."""

from __future__ import annotations

from capabilities.context.conversation_log import ConversationLog
from tests.support.asking import ask_flora

TIMEOUT = 30


def ask(flora, user: str, content: str, **fields) -> dict:
    return ask_flora(flora, user, content, timeout=TIMEOUT, **fields)


def test_thanks_is_a_chat_reply_and_creates_no_task(flora, user, store):
    reply = ask(flora, user, "Thanks a lot, that was helpful")
    assert (reply["message_type"], reply["intent"]) == ("chat_reply", "chat")
    assert store.list_tasks(flora.config.default_tenant, user_id=user) == []


def test_a_chat_reply_streams_its_pieces_before_the_whole_reply(flora, user):
    pieces: list[str] = []
    reply = flora.ask_streaming("tell me a joke about cats", pieces.append, user_id=user, timeout=TIMEOUT)
    assert reply["message_type"] == "chat_reply"
    assert pieces, "no piece came before the reply"  # how many depends on the model's pace (the test model's is instant)
    assert "".join(pieces).strip() == reply["message"]


def test_a_question_about_an_order_is_answered_plainly_in_chinese_without_a_made_up_status(flora, user, store):
    reply = ask(flora, user, "帮我查一下订单 A-1029 的物流状态")
    assert (reply["message_type"], reply["intent"]) == ("chat_reply", "unsupported")
    assert "没有安装" in reply["message"] and "(test model)" not in reply["message"]
    assert store.list_tasks(flora.config.default_tenant, user_id=user) == []


def test_questions_about_my_loop_tasks_are_answered_from_the_store(flora, user):
    registered = ask(flora, user, "每天早上9点提醒我复习GRPO")
    loop_task_id = registered["result"]["loop_task_id"]
    reply = ask(flora, user, "Which of my loop tasks are still active?")
    assert (reply["message_type"], reply["intent"]) == ("chat_reply", "status")
    assert loop_task_id in reply["message"] and "复习GRPO" in reply["message"]
    status = ask(flora, user, "/status")
    assert status["intent"] == "status" and loop_task_id in status["message"]


def test_a_person_cannot_shut_flora_down_from_a_chat_and_flora_keeps_serving(flora, user):
    refused = ask(flora, user, "shut down flora")
    assert refused["intent"] == "command" and "operator command" in refused["message"]
    assert ask(flora, user, "hello")["message_type"] == "chat_reply"


def test_the_conversation_is_kept_and_clear_my_history_removes_it(flora, user, store):
    tenant = flora.config.default_tenant
    ask(flora, user, "my name is Li Wei, I work on the billing team")
    ask(flora, user, "tell me a joke")
    conversation = ConversationLog.conversation_id(tenant, user)
    said = [t["content"] for t in ConversationLog(store).recent(tenant, user, conversation) if t["role"] == "user"]
    assert said == ["my name is Li Wei, I work on the billing team", "tell me a joke"]
    cleared = ask(flora, user, "清空我的对话历史")
    assert cleared["intent"] == "command" and "已清空" in cleared["message"]
    assert [t["content"] for t in ConversationLog(store).recent(tenant, user, conversation)] == \
        ["清空我的对话历史", cleared["message"]]  # only the command's own turn is left


def test_a_new_request_while_a_task_waits_leaves_the_task_waiting_and_the_key_still_resumes_it(flora, user, dify):
    paused = ask(flora, user, "执行Dify工作流")
    assert paused["message_type"] == "task_paused"
    other = ask(flora, user, "北京明天天气怎么样")
    assert other["message_type"] == "chat_reply" and other.get("task_id") is None
    done = ask(flora, user, "sk-xxxxx")
    assert (done["message_type"], done["task_id"]) == ("task_completed", paused["task_id"])


def test_another_users_conversation_cannot_be_joined(flora, user):
    ask(flora, user, "hello", session_id=f"ses_{user}")
    refused = ask(flora, user + "_other", "hello", session_id=f"ses_{user}")
    assert (refused["message_type"], refused["error_type"]) == ("task_error", "forbidden")


def test_a_request_that_changes_something_is_confirmed_first_and_a_read_is_not(flora, user, dify):
    read = ask(flora, user, f"send an http request url={dify.url}/v1/status method=GET")
    assert read["message_type"] == "task_completed" and read["result"]["status"] == 404
    def deletes() -> int:
        return sum(r.method == "DELETE" and r.path == f"/v1/items/{user}" for r in dify.requests)

    paused = ask(flora, user, f"send an http request url={dify.url}/v1/items/{user} method=DELETE")
    assert (paused["message_type"], paused["pause_kind"]) == ("task_paused", "waiting_approval")
    assert "method=DELETE" in paused["message"] and "please confirm" in paused["message"]
    assert deletes() == 0, "it ran before it was confirmed"
    done = ask(flora, user, "yes")
    assert done["message_type"] == "task_completed" and deletes() == 1


def test_a_request_nothing_can_serve_is_not_scheduled_as_a_reminder_in_its_place(flora, user, store):
    reply = ask(flora, user, "明天早上9点帮我查一下订单 A-1029 的物流状态")
    assert (reply["message_type"], reply["intent"]) == ("chat_reply", "unsupported"), reply
    assert "没有安装" in reply["message"] and "提醒" in reply["message"]  # says so, and offers the reminder
    assert store.list_tasks(flora.config.default_tenant, user_id=user) == []


def test_an_answer_said_as_a_request_or_in_a_sentence_resumes_the_task_that_waits(flora, user, dify):
    paused = ask(flora, user, "send an http request")
    assert paused["message_type"] == "task_paused" and [p["name"] for p in paused["missing_parameters"]] == ["url"]
    done = ask(flora, user, f"ok just call this one then {dify.url}/v1/status")  # the rules name http_request too
    assert (done["message_type"], done["task_id"]) == ("task_completed", paused["task_id"]), done

    waiting = ask(flora, user, "执行Dify工作流")
    assert waiting["message_type"] == "task_paused"
    resumed = ask(flora, user, "the key is sk-xxxxx")
    assert (resumed["message_type"], resumed["task_id"]) == ("task_completed", waiting["task_id"]), resumed
