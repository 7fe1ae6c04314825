"""A conversation's turns in the store, the chat prompt built from them, answers about
Flora read from the store, and telling a paused task's answer from a new request."""

from __future__ import annotations

import time

import pytest

from agents.coordination.interaction_coordinator import InteractionCoordinator
from capabilities.cognition.chat import ChatResponder, chat_prompt
from common.i18n import answer_in
from capabilities.cognition.self_report import StatusReport, SystemCommands
from capabilities.cognition.semantic import Reading
from capabilities.context.conversation_log import ConversationLog
from capabilities.cognition.reading import in_context
from capabilities.context.conversation_manager import ConversationManager
from capabilities.llm.base import LLMUnavailable
from capabilities.llm.fake import ScriptedLLM
from common import messages as m
from common.tasks.models import TaskRecord
from config import FloraConfig
from events.event_bus import EventBus
from init_plugins import build_registry

TENANT, USER = "acme", "li"


@pytest.fixture(scope="module")
def registry():
    return build_registry(FloraConfig(), llm=None)


def say_and_reply(log: ConversationLog, conversation: str, said: str, answer: str, user: str = USER) -> None:
    log.record(TENANT, user, conversation, {"content": said}, m.chat_reply(msg_id="msg_1", message=answer))


# -- the conversation log, on both stores ------------------------------------------------------------
def test_turns_are_kept_in_order_and_read_back_as_recent_context(store):
    log = ConversationLog(store)
    conversation = log.conversation_id(TENANT, USER, "cli")
    say_and_reply(log, conversation, "my name is Li Wei, I work on the billing team", "Nice to meet you, Li Wei!")
    say_and_reply(log, conversation, "what's 2+2?", "4")
    assert log.recent(TENANT, USER, conversation) == [
        {"role": "user", "content": "my name is Li Wei, I work on the billing team"},
        {"role": "assistant", "content": "Nice to meet you, Li Wei!"},
        {"role": "user", "content": "what's 2+2?"}, {"role": "assistant", "content": "4"}]
    session = store.get_session(TENANT, conversation)
    assert session.user_id == USER and session.messages[1]["reply"]["message_type"] == "chat_reply"


def test_each_user_and_channel_has_a_conversation_of_its_own(store):
    log = ConversationLog(store)
    assert log.conversation_id(TENANT, "li", "cli") != log.conversation_id(TENANT, "li", "http")
    assert log.conversation_id(TENANT, "li") != log.conversation_id(TENANT, "wang")
    assert log.conversation_id(TENANT, "li", session_id="ses_1") == "ses_1"


def test_recent_context_stays_within_its_budget_newest_first(store):
    log = ConversationLog(store, recent_messages=8, recent_chars=100)
    conversation = log.conversation_id(TENANT, USER)
    for i in range(6):
        say_and_reply(log, conversation, f"message {i} " + "x" * 30, f"reply {i}")
    recent = log.recent(TENANT, USER, conversation)
    assert sum(len(t["content"]) for t in recent) <= 100
    assert recent[-1] == {"role": "assistant", "content": "reply 5"}


def test_another_users_conversation_is_neither_read_nor_claimed(store, registry):
    log = ConversationLog(store)
    say_and_reply(log, "ses_shared", "secret plans", "noted", user="wang")
    assert log.recent(TENANT, USER, "ses_shared") == []
    found = log.standing(TENANT, USER, "ses_shared")
    assert found.owner == "wang" and log.history(USER, found.owner, found.messages) == []
    front = InteractionCoordinator(ConversationManager(store, EventBus(store), registry), log=log,
                                   default_tenant=TENANT)
    (to, refused), = front.on_user_input(m.user_input(user_id=USER, content="and?", session_id="ses_shared"))
    assert (to, refused["error_type"], refused["field"]) == ("reply", "forbidden", "session_id")
    assert len(store.get_session(TENANT, "ses_shared").messages) == 2  # nothing added to wang's conversation


# -- chat ------------------------------------------------------------------------------------------
def test_chat_is_told_the_persons_language_and_sees_the_recent_turns():
    history = [{"role": "user", "content": "我叫李伟"}, {"role": "assistant", "content": "你好，李伟！"}]
    messages = chat_prompt("我叫什么名字？", "zh", history)
    assert messages[1:] == [*history, {"role": "system", "content": answer_in("zh")},
                            {"role": "user", "content": "我叫什么名字？"}]
    assert messages[0] == chat_prompt("hello", "en", [])[0]  # one system prompt for everyone: its state is reused


def test_chat_prompt_drops_the_oldest_turns_beyond_its_budget():
    history = [{"role": "user", "content": "x" * 1400}, {"role": "assistant", "content": "y" * 400},
               {"role": "user", "content": "short"}]
    messages = chat_prompt("and now?", "en", history)
    assert [t["content"] for t in messages[1:-2]] == ["y" * 400, "short"]


def test_chat_streams_its_pieces_and_returns_the_whole_reply(registry):
    llm = ScriptedLLM(["Octopuses have three hearts and blue blood."])
    pieces: list[str] = []
    reply = ChatResponder(registry, llm).reply("Tell me a fun fact about octopuses", on_text=pieces.append)
    assert len(pieces) > 1 and "".join(pieces).strip() == reply == "Octopuses have three hearts and blue blood."


def test_chat_without_a_model_or_with_a_failing_one_says_so_in_the_persons_language(registry):
    assert "没有语言模型" in ChatResponder(registry).reply("你好呀", language="zh")
    reply = ChatResponder(registry, ScriptedLLM([LLMUnavailable("down")])).reply("hi", language="en")
    assert "language model is unavailable" in reply and "http_request" in reply


# -- answers about Flora, from the store -------------------------------------------------------------
def test_status_counts_the_persons_tasks_and_names_what_waits_for_them(store):
    events = EventBus(store)
    events.create_task(TaskRecord(task_id="task_done", tenant_id=TENANT, user_id=USER, content="x",
                                  capability="http_request"), source="test")
    store.transition(TENANT, "task_done", "running")
    store.transition(TENANT, "task_done", "completed")
    events.create_task(TaskRecord(task_id="task_wait", tenant_id=TENANT, user_id=USER, content="run dify",
                                  capability="dify_workflow"), source="test")
    store.transition(TENANT, "task_wait", "waiting_parameters",
                     missing=[{"name": "api_key", "description": "key", "schema": {}}])
    events.create_task(TaskRecord(task_id="task_other", tenant_id=TENANT, user_id="wang", content="x"), source="test")
    text = StatusReport(store).answer(TENANT, USER, "en", now=time.time())
    assert "Tasks today: 2" in text and "task_wait: dify_workflow — api_key" in text and "task_other" not in text
    assert "2 个" in StatusReport(store).answer(TENANT, USER, "zh")


def test_clear_history_deletes_only_the_persons_conversations(store):
    log = ConversationLog(store)
    say_and_reply(log, log.conversation_id(TENANT, USER), "hello", "hi")
    say_and_reply(log, log.conversation_id(TENANT, "wang"), "hello", "hi", user="wang")
    commands = SystemCommands(store, StatusReport(store), lambda lang: "help")
    assert "2 messages" in commands.run("clear_history", TENANT, USER, "en")
    assert store.list_sessions(TENANT, USER) == [] and len(store.list_sessions(TENANT, "wang")) == 1


def test_shutting_down_or_switching_the_model_from_a_chat_is_refused_with_the_operators_way(store):
    commands = SystemCommands(store, StatusReport(store), lambda lang: "help", model="qwen", models=["a", "b"])
    assert "operator command" in commands.run("shutdown", TENANT, USER, "en")
    assert "SIGTERM" in commands.run("shutdown", TENANT, USER, "en")
    switched = commands.run("switch_model", TENANT, USER, "zh")
    assert "运维命令" in switched and "llm.model" in switched and "qwen" in switched


# -- a paused task's answer, or a new request? ----------------------------------------------------------
@pytest.fixture
def waiting(store, registry):
    events = EventBus(store)
    events.create_task(TaskRecord(task_id="task_dify", tenant_id=TENANT, user_id=USER, content="执行Dify工作流",
                                  capability="dify_workflow"), source="test")
    spec = registry.get_executable("dify_workflow")
    store.transition(TENANT, "task_dify", "waiting_parameters", missing=[
        {"name": "api_key", "description": spec.describe_parameter("api_key"),
         "schema": spec.properties["api_key"]}])
    return ConversationManager(store, events, registry)


def decide(conversation: ConversationManager, text: str):
    return conversation.handle_user_input({"user_id": USER, "content": text, "tenant_id": TENANT})


def test_a_question_while_a_task_waits_is_left_to_understanding_with_the_question_in_view(waiting, store):
    decision = decide(waiting, "北京明天天气怎么样")
    assert decision.action == "new_task" and decision.pending_task_id == "task_dify"
    assert store.get_task(TENANT, "task_dify").parameters == {}  # nothing was taken as the key


def test_a_bare_value_while_a_task_waits_is_its_answer(waiting):
    decision = decide(waiting, "app-7Fk2x9Qp")
    assert (decision.action, decision.task_id) == ("parameter_completion", "task_dify")


def test_thanks_while_a_task_waits_is_conversation_not_an_answer(waiting, store):
    assert decide(waiting, "thanks, that was helpful").action == "chat"
    assert store.get_task(TENANT, "task_dify").parameters == {}


@pytest.mark.parametrize("said", ["明天早上9点吧", "make it 7:15am", "那就改到下午4点", "how about tomorrow at noon?"])
def test_a_time_said_with_a_filler_word_answers_the_question_for_a_time(store, registry, said):
    events = EventBus(store)
    events.create_task(TaskRecord(task_id="task_remind", tenant_id=TENANT, user_id=USER, content="提醒我给李老师打电话",
                                  capability="remind", meta={"loop": {"schedule": None}}), source="test")
    store.transition(TENANT, "task_remind", "waiting_parameters",
                     missing=[{"name": "time", "description": "when", "schema": {"type": "string"}}])
    decision = decide(ConversationManager(store, events, registry), said)
    assert (decision.action, decision.task_id) == ("parameter_completion", "task_remind")
    assert store.get_task(TENANT, "task_remind").parameters == {"time": said}


@pytest.mark.parametrize("text", ["把“今天天气很好”翻译成英文", "明天天气怎么样"])
def test_today_and_tomorrow_before_a_word_starting_with_day_are_no_schedule(text):
    from capabilities.loop.requests import looks_like_loop_request

    assert not looks_like_loop_request(text)


def test_questions_and_the_list_of_abilities_use_a_capabilitys_own_words_in_the_persons_language(registry):
    from capabilities.context.conversation_manager import ask_message

    spec = registry.get_executable("dify_workflow")
    asked = [{"name": "api_key", "description": spec.describe_parameter("api_key"), "schema": spec.properties["api_key"]}]
    assert "API 密钥" in ask_message("dify_workflow", asked, request="执行Dify工作流")
    assert "API key of the Dify app" in ask_message("dify_workflow", asked, request="run the dify workflow")
    assert "运行一个 Dify 工作流" in ChatResponder(registry).help_text("zh")


def test_a_request_for_another_capability_while_a_task_waits_is_a_new_request(store):
    from config import load_config

    registry = build_registry(load_config({"capabilities": {"plugin_modules": ["examples.my_tools"]}}, env={}),
                              llm=None)
    events = EventBus(store)
    events.create_task(TaskRecord(task_id="task_dify", tenant_id=TENANT, user_id=USER, content="执行Dify工作流",
                                  capability="dify_workflow"), source="test")
    spec = registry.get_executable("dify_workflow")
    store.transition(TENANT, "task_dify", "waiting_parameters", missing=[
        {"name": "api_key", "description": spec.describe_parameter("api_key"), "schema": spec.properties["api_key"]}])
    decision = ConversationManager(store, events, registry).handle_user_input(
        {"user_id": USER, "content": "convert the temperature 21.5", "tenant_id": TENANT})
    assert decision.action == "new_task" and decision.pending_task_id == "task_dify"
    assert store.get_task(TENANT, "task_dify").parameters == {}
    from capabilities.cognition.intent_router import IntentRouter, Pending
    from capabilities.routing.task_router import TaskRouter

    read = IntentRouter(TaskRouter(registry)).classify("convert the temperature 21.5",
                                                       pending=Pending("task_dify", "dify_workflow", ("api_key",)))
    assert (read.kind, read.capability) == ("task", "convert_temperature")


def test_what_is_remembered_comes_right_before_the_message_after_the_turns():
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello!"}]
    known = [{"memory_id": "mem_1", "fact": "The person lives in Hangzhou"}]
    messages = chat_prompt("which city is my home?", "en", history, known)
    assert messages[0] == chat_prompt("hello", "en", [])[0]
    assert messages[-2]["role"] == "system" and messages[-2]["content"].endswith("\n- The person lives in Hangzhou")
    assert messages[-1] == {"role": "user", "content": "which city is my home?"}
    assert messages[1:3] == history


def test_a_time_refused_for_having_passed_is_asked_for_again_in_chinese():
    from capabilities.context.conversation_manager import ask_message
    from capability_actors.task_execution_service import _time_ask
    from common.i18n import is_mostly

    asked = [_time_ask("at: that time has already passed", reason_zh="这个时间已经过去了")]
    zh = ask_message("remind", asked, request="今晚8点提醒我给狗狗喂药")
    assert "这个时间已经过去了" in zh and "什么时候运行" in zh and "already" not in zh and is_mostly(zh, "zh")
    en = ask_message("remind", asked, request="remind me at 8pm tonight to feed the dog")
    assert "that time has already passed" in en and "when to run it" in en


@pytest.mark.parametrize("said, language", [("帮我把“明天见”翻成德语", "zh"), ("what's 'good night' in Korean?", "en"),
                                            ("please translate this into Spanish: the meeting moved to Monday", "en"),
                                            ("“慢走”用英文怎么说", "zh")])
def test_a_translation_is_introduced_in_the_persons_language(said, language):
    messages = chat_prompt(said, language, [])
    assert messages[-2] == {"role": "user", "content": said}
    assert messages[-1]["role"] == "system" and "translation" in messages[-1]["content"]
    assert ("Chinese" if language == "zh" else "English") in messages[-1]["content"]


def test_other_messages_end_with_the_message():
    messages = chat_prompt("哪些国家说西班牙语", "zh", [])
    assert messages[-1]["role"] == "user" and messages[-2]["content"] == "Always answer in Simplified Chinese (简体中文)."


# -- a follow-up is read in the conversation it continues ----------------------------------------------
WEATHER = [{"role": "user", "content": "what's the weather in Beijing?"},
           {"role": "assistant", "content": "I can't look up the weather."}]


@pytest.mark.parametrize("said", ["and tomorrow?", "what about Shanghai?", "do the same for Shanghai", "那明天呢？",
                                  "上海呢", "北京也一样"])
def test_a_follow_up_is_read_as_the_message_it_continues(said):
    assert in_context(said, WEATHER) == "what's the weather in Beijing?"


@pytest.mark.parametrize("said", ["remind me to call mom at 5", "and then send the report to my boss", "thanks",
                                  "I live in Shanghai", "今天上海天气怎么样", "改成下午4点", "换个大一点的模型",
                                  "what about the meaning of life and everything "
                                  "else in the universe that we know of"])
def test_a_message_that_says_it_all_is_read_as_it_is(said):
    assert in_context(said, WEATHER) == said


def test_follow_ups_in_a_row_go_back_to_the_message_they_all_continue():
    history = [{"role": "user", "content": "fetch the sales report"}, {"role": "assistant", "content": "done"},
               *WEATHER, {"role": "user", "content": "and tomorrow?"}, {"role": "assistant", "content": "no"}]
    assert in_context("and Sunday?", history) == "what's the weather in Beijing?"
    assert in_context("and Sunday?", []) == "and Sunday?"  # nothing before it: read as it is
    assert in_context("and Sunday?", [{"role": "user", "content": "and tomorrow?"}]) == "and Sunday?"


def test_the_front_desk_reads_a_follow_up_in_its_conversation_but_not_while_a_question_waits(store, monkeypatch):
    class Recording:
        def __init__(self):
            self.read_texts = []

        def read(self, text, impossible=()):
            self.read_texts.append(text)
            return None

    reader = Recording()
    registry = build_registry(FloraConfig(), llm=None)
    services = registry.get_capability
    monkeypatch.setattr(registry, "get_capability",
                        lambda name, *default: reader if name == "semantic_reader" else services(name, *default))
    conversation = ConversationManager(store, EventBus(store), registry)
    decision = conversation.handle_user_input({"user_id": USER, "content": "那明天呢？", "tenant_id": TENANT},
                                              history=[{"role": "user", "content": "今天成都天气怎么样"},
                                                       {"role": "assistant", "content": "我查不了天气。"}])
    assert decision.action == "new_task" and decision.content == "那明天呢？"  # the work is the message itself
    assert reader.read_texts == ["今天成都天气怎么样"]

    store.create_task(TaskRecord(task_id="task_remind", tenant_id=TENANT, user_id=USER, content="提醒我给李老师打电话",
                                 capability="remind"))
    store.transition(TENANT, "task_remind", "waiting_parameters",
                     missing=[{"name": "time", "description": "when", "schema": {"type": "string"}}])
    conversation.handle_user_input({"user_id": USER, "content": "what about Shanghai?", "tenant_id": TENANT},
                                   history=[{"role": "user", "content": "提醒我给李老师打电话"}])
    assert reader.read_texts[1:] == ["what about Shanghai?"]  # maybe its answer: read as it is, not as the reminder


@pytest.mark.parametrize("said, read, asked", [
    ("scrub that bit about my ex from your memory", ("forget", 0.7), ("forget", "scrub that bit about my ex from your memory")),
    ("你都存了我哪些东西", ("list", 0.65), ("list", "")),
    ("wipe me from your head entirely", ("clear", 0.95), ("clear", "")),
    ("wipe me from your head entirely", ("clear", 0.8), None),  # everything gone for good: only near certainty
    ("you can forget my old number", ("forget", 0.55), None),  # leaning is not enough
    ("forget the dify one, cancel it", ("forget", 0.9), None),  # an operation on a task
])
def test_what_is_asked_of_memory_is_read_by_the_examples_where_the_words_rules_miss_it(store, monkeypatch, said,
                                                                                        read, asked):
    class Reader:
        def read(self, text, impossible=()):
            return Reading("memory", read[0], read[1], 0.9)

    registry = build_registry(FloraConfig(), llm=None)
    services = registry.get_capability
    monkeypatch.setattr(registry, "get_capability",
                        lambda name, *default: Reader() if name == "semantic_reader" else services(name, *default))
    decision = ConversationManager(store, EventBus(store), registry).handle_user_input(
        {"user_id": USER, "content": said, "tenant_id": TENANT})
    if asked is None:
        assert decision.action != "memory"
    else:
        assert (decision.action, decision.intent, decision.content) == ("memory", *asked)


# -- questions about the person: what they told, never a guess -----------------------------------
def test_a_question_about_the_person_with_nothing_told_is_answered_plainly_without_the_model(registry):
    llm = ScriptedLLM([])  # any call would fail the test: nothing is scripted
    shown: list[str] = []
    reply = ChatResponder(registry, llm).reply("我的狗叫什么名字？", language="zh", about_self=True,
                                               on_text=shown.append)
    assert reply == shown[0] and "你还没告诉过我" in reply
    assert "haven't told me" in ChatResponder(registry, llm).reply("what's my name?", about_self=True, memories=[])
    assert llm.calls == []


def test_a_question_about_the_person_goes_to_the_model_with_what_was_told_and_no_leave_to_guess(registry):
    known = [{"memory_id": "mem_1", "fact": "The person's dog is called Bruno"}]
    llm = ScriptedLLM(["Your dog is Bruno."])
    assert ChatResponder(registry, llm).reply("what's my dog called?", memories=known, about_self=True) \
        == "Your dog is Bruno."
    prompt = llm.calls[0][0]
    assert prompt[-1] == {"role": "user", "content": "what's my dog called?"}
    assert "Bruno" in prompt[-3]["content"] and "Never guess" in prompt[-2]["content"]
    # said earlier in this conversation, not yet remembered: the model reads the turns
    history = [{"role": "user", "content": "my dog is called Bruno"}, {"role": "assistant", "content": "Cute!"}]
    llm = ScriptedLLM(["Bruno."])
    assert ChatResponder(registry, llm).reply("what's my dog called?", history=history, about_self=True) == "Bruno."



def test_questions_asked_earlier_tell_nothing_about_the_person(registry):
    asked = [{"role": "user", "content": "what's my name?"}, {"role": "assistant", "content": "You haven't told me."},
             {"role": "user", "content": "我住在哪里？"}]
    assert "haven't told me" in ChatResponder(registry, ScriptedLLM([])).reply("what's my dog called?",
                                                                               history=asked, about_self=True)


def test_a_reply_that_may_be_about_the_person_never_shows_a_figure_nobody_told(registry):
    shown: list[str] = []
    llm = ScriptedLLM(["你的车牌号是沪A12345。"])
    reply = ChatResponder(registry, llm).reply("我那个号码多少来着", language="zh", may_be_about_self=True,
                                               on_text=shown.append)
    assert "你还没告诉过我" in reply and shown == [reply]  # held back, checked, then shown once
    assert "Never guess" in llm.calls[0][0][-2]["content"]  # and the model was told to answer from what it was told
    # a figure the person did tell (remembered, or said in this conversation) may be said back
    known = [{"memory_id": "mem_1", "fact": "The person's locker code is 4471"}]
    assert ChatResponder(registry, ScriptedLLM(["It's 4471."])).reply(
        "what's that code of mine again?", memories=known, may_be_about_self=True) == "It's 4471."
    history = [{"role": "user", "content": "my flat is number 12"}, {"role": "assistant", "content": "Noted!"}]
    assert ChatResponder(registry, ScriptedLLM(["Number 12."])).reply(
        "which one is mine?", history=history, may_be_about_self=True) == "Number 12."
    # words with no figure in them stand: the check is for what cannot be known, not for every reply
    assert ChatResponder(registry, ScriptedLLM(["I'm not sure, you haven't said."])).reply(
        "what's that code of mine again?", may_be_about_self=True) == "I'm not sure, you haven't said."


def test_figures_are_runs_of_digits():
    from capabilities.cognition.chat import figures, untold_figures

    assert figures("去年10月25日, plate 12345678") == {"10", "25", "12345678"}
    assert not untold_figures("Room 212 at 5", ["room 212 wants a call at 5am"])
    assert untold_figures("Room 213", ["room 212"])


def test_asking_to_be_reminded_of_what_was_told_is_a_question_not_a_reminder():
    from capabilities.loop.requests import asks_to_be_reminded

    assert not asks_to_be_reminded("Can you remind me what I'm allergic to?")
    assert not asks_to_be_reminded("remind me again where I parked")
    assert asks_to_be_reminded("remind me to call mum at 5pm")
    assert asks_to_be_reminded("remind me tomorrow what to buy")


@pytest.mark.parametrize("text, share, guarded", [
    ("whats my van's reg number again need it for this parking form", 0.45, True),  # unsure, but of their own things
    ("what's the reg number format for vans in the UK?", 0.45, False),  # unsure, and of nothing of theirs
    ("what's the code for my bike lock again?", 0.55, True),  # the examples lean that way
])
def test_a_question_near_those_about_the_person_has_its_reply_held_to_what_they_told(tmp_path, text, share, guarded):
    from capabilities.cognition.reading import read
    from capability_actors.task_execution_service import TaskExecutionService
    from common.tasks.store import open_store
    from config import load_config
    from events.event_bus import EventBus
    from init_plugins import build_registry

    config = load_config({"data_dir": str(tmp_path), "llm": {"backend": "none"}, "memory": {"enabled": False}}, env={})
    store = open_store(config)
    try:
        service = TaskExecutionService(store=store, events=EventBus(store), registry=build_registry(config),
                                       config=config, llm=None)
        reading = {**read(text).to_dict(), **Reading("chat", "about_me", share, 0.9).to_dict()}
        assert service._about_self({"content": text, "reading": reading}) == {"may_be_about_self": guarded}
    finally:
        store.close()
