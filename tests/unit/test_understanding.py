"""The understanding step: what the words make certain, the one model call and the checks
that keep its reading honest, and the language Flora answers in."""

from __future__ import annotations

import pytest

from capabilities.cognition import cues, world
from capabilities.cognition.intent_router import Intent, IntentRouter, Pending, prompt, reply_language
from capabilities.llm.base import LLMUnavailable
from capabilities.llm.fake import ScriptedLLM
from capabilities.routing.task_router import TaskRouter
from common.i18n import language_of
from config import FloraConfig
from init_plugins import build_registry


@pytest.fixture(scope="module")
def registry():
    return build_registry(FloraConfig(), llm=None)


def router(registry, llm=None) -> IntentRouter:
    return IntentRouter(TaskRouter(registry), llm)


def reading(route: str) -> dict:
    return {"route": route}


# -- what the words make certain ----------------------------------------------------------
@pytest.mark.parametrize("text", ["Thanks a lot, that was helpful", "thank you!", "ok thanks, bye", "谢谢，很有帮助",
                                  "多谢啦", "Good morning!", "晚安", "cheers, much appreciated", "thanks, bye!",
                                  "谢谢！太棒了", "thanks!! 🙏"])
def test_thanks_and_greetings_are_conversation_whatever_the_punctuation(text):
    assert cues.conversation_only(text)


@pytest.mark.parametrize("text", ["thanks, now fetch https://example.com", "谢谢，帮我再跑一次工作流",
                                  "thank you. could you cancel it?", "fetch the report, thanks",
                                  "谢谢，顺便问一下上海下周天气怎么样？", "thanks! where's my parcel?",
                                  "thx, what's the weather in Oslo right now", "谢谢。我的订单到哪了"])
def test_thanks_that_asks_for_more_is_not_only_conversation(text):
    assert not cues.conversation_only(text)


@pytest.mark.parametrize("text", [
    "I go running every morning", "We have a standup every Monday at 9", "我每天早上跑步",
    "I add numbers for my household budget every week", "my cat died yesterday", "我对花生过敏",
    "I got the job!!! 🎉", "I check the sales report every Monday",
    "我下周要去上海出差三天", "我明天要去北京开会", "我快要考试了"])  # "要" after a time to come: going to
def test_a_plain_statement_about_oneself_is_not_a_request(text):
    assert cues.states_about_self(text)


@pytest.mark.parametrize("text", [
    "I want a report every Monday", "我每天9点要看销售报表", "I need to call a REST endpoint", "我想调用一个web接口",
    "我有哪些定时任务", "我的任务进行到哪一步了", "我今天跑了几个任务", "我的订单到哪了", "我明天有什么会",
    "I'm in Shanghai, what's the weather", "I add numbers a=2 b=3", "my loop tasks", "I'd like a few expert views",
    "remind me to call Li", "I love you", "please do the thing", "我明天要你提醒我交水费", "我明天要订机票",
    "我在深圳，这会儿外面下雨没", "作业写完了没有"])
def test_a_question_a_wish_or_anything_about_tasks_is_not_a_plain_statement(text):
    assert not cues.states_about_self(text)


@pytest.mark.parametrize("text, command", [
    ("/status", "status"), ("/help", "help"), ("clear my chat history", "clear_history"),
    ("please wipe our conversation", "clear_history"), ("清空我的对话历史", "clear_history"),
    ("shut down flora", "shutdown"), ("关闭系统", "shutdown"), ("switch the model to the larger one", "switch_model"),
    ("换一个更大的模型", "switch_model"), ("/model", "switch_model"),
    # the object before the verb, and the history with nobody's named
    ("把系统关掉", "shutdown"), ("将服务停了吧", "shutdown"), ("清除历史", "clear_history"),
    ("把历史记录都删了", "clear_history"), ("clear history", "clear_history"), ("please stop the flora server", "shutdown"),
    # as people say them: what was said, yourself before "off", a model by its name
    ("我们之前聊过的内容全删了", "clear_history"), ("wipe everything we've said", "clear_history"),
    ("switch yourself off now", "shutdown"), ("could you move to qwen2.5-14b", "switch_model"), ("切到 gpt-4o", "switch_model"),
])
def test_system_commands_are_read_in_both_languages(text, command):
    assert cues.command(text) == command


@pytest.mark.parametrize("text", ["what's 17 times 23?", "stop worrying about it", "my history homework is hard",
                                  "run the sales report now", "今天心情不太好", "删除历史订单", "把这个任务停掉",
                                  "switch to the dark theme", "turn the lights off", "我们聊的内容很有意思", "switch to python 3.12"])
def test_ordinary_messages_are_not_commands(text):
    assert cues.command(text) is None


@pytest.mark.parametrize("text", ["帮我查一下订单 A-1029 的物流状态", "where is my parcel?", "status of order #88231",
                                  "what's in my inbox", "我的快递到哪了", "check my bank balance",
                                  "did I get an email from the landlord?", "have I heard back from Acme?", "我收到物业的通知了吗",
                                  "王经理回复我了吗", "下周一我有哪些安排", "what meetings do I have on Friday?"])
def test_questions_about_the_persons_own_records_are_recognised(text):
    assert world.asks_about_own_records(text)


@pytest.mark.parametrize("text", ["Tell me a fun fact about octopuses", "what's 17 times 23?", "今天心情不太好",
                                  "how do I write a good e-mail to my boss", "did I get that right?",
                                  "have I answered your question?", "你收到我的消息了吗", "我有什么会做的菜推荐吗",
                                  'how do you say "where is my parcel?" in French'])
def test_general_questions_are_not_about_own_records(text):
    assert not world.asks_about_own_records(text)


@pytest.mark.parametrize("text, expected", [("北京明天天气怎么样", True), ("what's the weather?", True),
                                            ("please run it again", True), ("app-7Fk2x9Qp", False),
                                            ("https://example.com/data.json", False), ("42", False)])
def test_a_question_or_request_reads_as_new_while_a_bare_value_does_not(text, expected):
    assert cues.reads_as_new_request(text) is expected


@pytest.mark.parametrize("text, lang", [("今天心情不太好", "zh"), ("hello there", "en"),
                                        ("帮我查一下订单 A-1029 的物流状态", "zh"), ("用 Python 写个脚本", "zh"),
                                        ("what does 你好 mean?", "en"),
                                        # an address is a name, not English words
                                        ("拉取一下https://example.com/data.csv", "zh"), ("发给 bob.smith@example.com", "zh"),
                                        ("check https://example.com", "en")])
def test_language_is_read_from_the_script(text, lang):
    assert language_of(text) == lang


def test_a_reply_to_a_message_without_words_follows_the_conversation():
    assert reply_language("👍", [{"role": "user", "content": "今天天气真好"}]) == "zh"
    assert reply_language("17*23", []) == "en"


# -- the model call and its checks --------------------------------------------------------
def test_conversation_is_decided_without_asking_the_model(registry):
    llm = ScriptedLLM([])
    intent = router(registry, llm).classify("Thanks a lot, that was helpful")
    assert intent.kind == "chat" and intent.source == "rules"
    assert llm.calls == []


@pytest.mark.parametrize("text", ["tell me a joke about python", "I love the files app", "what does a shell do?"])
def test_a_tools_subject_named_in_conversation_does_not_claim_it(registry, text):
    decided = router(registry).decide_by_rules(text, None)
    assert decided is None or decided.capability not in ("python_exec", "shell", "file_list"), decided


def test_commands_and_questions_about_own_tasks_are_decided_without_the_model(registry):
    llm = ScriptedLLM([])
    ir = router(registry, llm)
    assert ir.classify("/status").kind == "status"
    assert (ir.classify("clear my chat history").kind, ir.classify("clear my chat history").command) == \
        ("command", "clear_history")
    assert ir.classify("Which of my loop tasks are still active?").kind == "status"
    assert ir.classify("how many tasks have I run today?").kind == "status"
    assert llm.calls == []


def test_one_model_call_names_the_capability_and_the_rules_read_its_values(registry):
    llm = ScriptedLLM([reading("dify_workflow")])
    intent = router(registry, llm).classify("kick off our approval flow, api_key=app-7Fk2x9Qp")
    assert (intent.kind, intent.capability, intent.source) == ("task", "dify_workflow", "llm")
    assert intent.parameters == {"api_key": "app-7Fk2x9Qp"}
    assert len(llm.calls) == 1


def test_an_address_in_the_message_is_evidence_for_the_capability_that_takes_one(registry):
    llm = ScriptedLLM([])
    intent = router(registry, llm).classify("看下 https://status.example.org 现在能不能打开")
    assert (intent.kind, intent.capability, intent.parameters) == ("task", "http_request",
                                                                    {"url": "https://status.example.org"})


def test_a_chat_reading_of_a_question_about_the_persons_order_becomes_unsupported(registry):
    llm = ScriptedLLM([reading("chat")])
    assert router(registry, llm).classify("帮我查一下订单 A-1029 的物流状态").kind == "unsupported"


def test_a_chat_reading_of_a_message_with_an_address_a_capability_can_fetch_is_a_choice(registry):
    # chat cannot see what is at the address, and would only echo the request back; an address
    # alone is only half a reason for web_fetch, so the rules leave it to the model here
    unsure = IntentRouter(TaskRouter(registry, allowed=("web_fetch", "web_search")), ScriptedLLM([reading("chat")]))
    intent = unsure.classify("抓一下 https://example.com/feed.json ，然后让同事看看")
    assert intent.kind == "clarify" and "web_fetch" in [o["capability"] for o in intent.options]


def test_a_bare_address_to_grab_is_a_request_to_it(registry):
    intent = router(registry, ScriptedLLM([reading("chat")])).classify("抓一下 https://example.com/feed.json")
    assert (intent.kind, intent.capability) in {("task", "http_request"), ("query", "http_request")}
    assert intent.parameters["url"] == "https://example.com/feed.json"


def test_a_vague_request_is_offered_as_a_choice(registry):
    llm = ScriptedLLM([reading("clarify")])
    intent = router(registry, llm).classify("please do the thing")
    assert intent.kind == "clarify" and len(intent.options) >= 2



def test_with_nothing_to_rank_them_by_the_deployments_own_capabilities_are_offered_first():
    registry = build_registry(FloraConfig(capabilities={"plugin_modules": ["tests.support.sample_plugins"]}))
    intent = router(registry, ScriptedLLM([reading("clarify")])).classify("please do the thing")
    names = [o["capability"] for o in intent.options]
    assert names[0] == "add_numbers" and "add_numbers" not in names[1:], names


def test_a_command_the_words_do_not_name_is_conversation(registry):
    llm = ScriptedLLM([reading("command")])
    assert router(registry, llm).classify("can you be quicker next time").kind == "chat"


def test_an_answer_to_a_paused_question_is_read_with_the_question_in_view(registry):
    pending = Pending("task_1", "dify_workflow", ("api_key",), "API key of the Dify app")
    llm = ScriptedLLM([reading("answer")])
    intent = router(registry, llm).classify("here you go: app-9xQk", pending=pending)
    assert (intent.kind, intent.capability) == ("answer", "dify_workflow")
    asked = llm.calls[0][0][-1]["content"]
    assert "Pending question: dify_workflow needs api_key" in asked and asked.endswith("Message: here you go: app-9xQk")


def test_answer_without_a_paused_question_is_conversation(registry):
    assert router(registry, ScriptedLLM([reading("answer")])).classify("sure thing").kind == "chat"


def test_another_capability_named_by_the_words_is_decided_by_the_rules_while_a_question_waits(registry):
    pending = Pending("task_1", "dify_workflow", ("api_key",))
    llm = ScriptedLLM([])
    intent = router(registry, llm).classify("fetch https://example.com", pending=pending)
    assert intent.capability == "http_request" and llm.calls == []


def test_the_waiting_capability_named_again_leaves_answer_or_request_to_the_model(registry):
    pending = Pending("task_1", "dify_workflow", ("api_key",))
    llm = ScriptedLLM([reading("answer")])
    assert router(registry, llm).classify("the dify workflow key is app-7Fk2x9Qp", pending=pending).kind == "answer"
    assert len(llm.calls) == 1


def test_without_a_model_the_rules_still_read_what_they_can(registry):
    ir = router(registry)
    assert ir.classify("帮我查一下订单 A-1029 的物流状态").kind == "unsupported"
    assert ir.classify("Tell me a fun fact about octopuses").kind == "chat"
    assert ir.classify("app-9xQk", pending=Pending("t", "dify_workflow", ("api_key",))).kind == "answer"


def test_a_failing_model_falls_back_to_the_rules(registry):
    llm = ScriptedLLM([LLMUnavailable("down")])
    assert router(registry, llm).classify("Tell me a fun fact about octopuses").kind == "chat"


def test_the_prompt_keeps_a_stable_prefix_and_puts_the_context_last(registry):
    specs = TaskRouter(registry).routable()
    history = [{"role": "user", "content": "my name is Li Wei"}, {"role": "assistant", "content": "Nice to meet you"}]
    first = prompt(specs, "hello", [], None)
    second = prompt(specs, "and tomorrow?", history, Pending("t", "http_request", ("url",)))
    assert first[:-1] == second[:-1]  # everything but the last turn is reused from one call to the next
    last = second[-1]["content"]
    assert "Person: my name is Li Wei" in last and "Flora: Nice to meet you" in last
    assert last.index("Earlier:") < last.index("Pending question:") < last.index("Message: and tomorrow?")


@pytest.mark.parametrize("text", ["今天北京天气怎么样", "帮我订一张明天去深圳的机票", "CA1234航班延误了吗", "给房东转账3000块",
                                  "帮我重启一下生产环境的nginx", "外卖怎么还没到", "what's the weather in Paris tomorrow?",
                                  "book me a table for two tonight", "is flight UA 837 delayed?",
                                  "给王老师发封邮件说我请假", "帮我把上周买的那件外套退掉", "I'd like to return these headphones",
                                  "把这个月的房租转给房东"])
def test_a_chat_reading_of_live_data_or_an_act_in_the_world_becomes_unsupported(registry, text):
    assert router(registry, ScriptedLLM([reading("chat")])).classify(text).kind == "unsupported"


@pytest.mark.parametrize("text", ["how do I book a cheap flight?", "why is the sky blue?", "夏天为什么热",
                                  "what is a good way to say sorry in an email?",
                                  # what is quoted is the subject, not the request
                                  "把“明天会下雨吗”翻译成日语", 'translate "where is my parcel?" into German'])
def test_general_questions_about_such_things_stay_conversation(registry, text):
    assert router(registry, ScriptedLLM([reading("chat")])).classify(text).kind == "chat"


def test_an_installed_capability_that_claims_the_words_keeps_them_from_being_unsupported(registry):
    # "send … to our webhook https://…" is http_request's, whatever the model said
    text = "send the build report to our webhook https://hooks.example.com/ci"
    assert router(registry, ScriptedLLM([reading("chat")])).classify(text).kind != "unsupported"


@pytest.mark.parametrize("route", ["command", "plan", "clarify", "status"])
def test_whatever_the_model_reads_an_act_in_the_world_no_capability_claims_is_unsupported(registry, route):
    assert router(registry, ScriptedLLM([reading(route)])).classify("帮我重启一下生产环境的nginx").kind == "unsupported"
    assert router(registry, ScriptedLLM([reading(route)])).classify("open a ticket for the login bug").kind == \
        "unsupported"


def test_what_is_known_about_the_person_comes_after_the_stable_prefix(registry):
    specs = TaskRouter(registry).routable()
    known = [{"memory_id": "mem_1", "fact": "The person lives in Hangzhou"}, {"memory_id": "mem_2", "fact": " "},
             "not a record"]
    plain, remembered = prompt(specs, "hello", [], None), prompt(specs, "what's it like at home?", [], None, known)
    assert plain[:-1] == remembered[:-1]
    last = remembered[-1]["content"]
    assert last.index("Known about the person:\n- The person lives in Hangzhou\n") < last.index("Message:")
    assert last.count("\n- ") == 1  # an empty fact or a malformed record is left out
    assert "Known about" not in plain[-1]["content"]


def test_the_model_call_of_the_understanding_step_is_given_the_persons_memories(registry):
    llm = ScriptedLLM([reading("chat")])
    known = [{"memory_id": "mem_1", "fact": "The person's name is Li Wei"}]
    router(registry, llm).classify("could you help me with something about my team", memories=known)
    assert "- The person's name is Li Wei" in llm.calls[0][0][-1]["content"]


def test_the_memories_with_new_work_reach_both_the_understanding_step_and_the_chat_reply(tmp_path):
    from capability_actors.task_execution_service import TaskExecutionService
    from common import messages as m
    from common.tasks.sqlite_store import SQLiteTaskStore
    from events.event_bus import EventBus

    store = SQLiteTaskStore(tmp_path / "tasks.db")
    try:
        config = FloraConfig()
        llm = ScriptedLLM([reading("chat"), "You are on the billing team."])
        service = TaskExecutionService(store=store, events=EventBus(store), registry=build_registry(config),
                                       config=config, llm=llm)
        known = [{"memory_id": "mem_1", "fact": "The person works on the billing team"}]
        result = service.analyze(m.analyze(task_id="t1", tenant_id="default", user_id="u",
                                           content="could you help me with something about my team", memories=known))
        assert result["intent"] == "chat" and result["message"] == "You are on the billing team."
        (understood, _), (chatted, _) = llm.calls
        assert "- The person works on the billing team" in understood[-1]["content"]
        assert any(t["role"] == "system" and "- The person works on the billing team" in t["content"] for t in chatted)
    finally:
        store.close()


@pytest.mark.parametrize("text, about_self, about_flora", [
    ("what's my job?", True, False), ("is my job done?", False, True), ("is my backup job still running?", False, True),
    ("how are my jobs doing", False, True), ("what are my tasks", False, True),
])
def test_a_question_about_the_persons_job_is_about_them_and_one_about_a_job_that_runs_is_about_flora(
        text, about_self, about_flora):
    assert cues.asks_about_self(text) is about_self and cues.asks_about_flora(text) is about_flora


@pytest.mark.parametrize("text", ["what can you do?", "so what else are you good at?", "你都能干嘛", "你除了翻译还能做些什么"])
def test_questions_about_what_flora_can_do_are_recognised(text):
    assert cues.asks_about_abilities(text)


@pytest.mark.parametrize("text", ["你还会做饭吗", "我还能做什么", "what can I do about my cold?"])
def test_other_questions_are_not_about_flora_s_abilities(text):
    assert not cues.asks_about_abilities(text)


@pytest.mark.parametrize("text", [
    "京东那个订单帮我退掉", "帮我回复一下王总的邮件，说收到了", "把周三下午的会推迟到周四", "在飞书上给设计组提个需求：换个图标",
    "饿了么的外卖一直不到，帮我催催", "can you reschedule tomorrow's standup to 10?", "reply to Anna's message: see you then",
    "is it going to be rainy this weekend?", "do I need a coat tonight?", "明天出门要带伞吗", "am I busy on Friday?",
    "上海飞北京最晚的航班几点", "那台数据库服务器的内存是不是满了",
])
def test_acts_on_the_persons_things_and_the_live_world_need_a_capability(text):
    assert world.needs_the_world(text)


@pytest.mark.parametrize("text", [
    "怎么回复客户的邮件比较礼貌", "how do I reply to my boss's email politely?", "I posted it on github",
    "I feel cold today", "会议纪要帮我整理一下", "这个bug怎么修", "我明天要开会，好紧张", "Jira 和禅道哪个好用",
])
def test_advice_and_talk_about_the_same_things_do_not(text):
    assert not world.needs_the_world(text)


@pytest.mark.parametrize("text", [
    "我在淘宝买的台灯什么时候到", "我们上周下单的打印机发货了吗", "where's the blender I ordered last week?",
    "did the books we bought arrive yet?", "is our staging database still up?", "show me the disk usage on the prod box",
    "what's the web server's memory at right now?",
    "arrange an interview with the candidate for Monday", "file a jira bug about the broken export",
])
def test_purchases_machines_meetings_and_records_said_in_other_words_need_a_capability(text):
    assert world.needs_the_world(text)


@pytest.mark.parametrize("text", [
    "我买的那本书写得真好", "I bought a guitar last year and love it", "how much RAM does a laptop need?",
    "how much disk space do I have left here?",
    "what's a good way to set up a meeting agenda?", "remind me to arrange a call with Tom at 5",
])
def test_talk_about_purchases_machines_and_meetings_does_not(text):
    assert not world.needs_the_world(text)


@pytest.mark.parametrize("text", [
    "你帮我办的那些事情进展如何", "我都让你跑过什么", "what have I asked you to do today?",
    "how are the tasks I gave you going?", "list what I've had you handle",
])
def test_the_work_handed_to_flora_said_as_such_is_about_flora(text):
    assert cues.asks_about_flora(text)


@pytest.mark.parametrize("text, command", [
    ("好了你下线吧，今天到这", "shutdown"), ("那就先关机，改天聊", "shutdown"),
    ("let's use claude-3-haiku instead", "switch_model"), ("try qwen2.5-7b please", "switch_model"),
])
def test_commands_said_in_passing_are_read(text, command):
    assert cues.command(text) == command


@pytest.mark.parametrize("text", ["use a different approach", "try again later", "关机键在哪里", "电脑怎么关机"])
def test_the_same_words_about_other_things_are_no_command(text):
    assert cues.command(text) is None


@pytest.mark.parametrize("text, spelled", [
    ("wat can u do 4 me", "what can you do 4 me"), ("r u still there?", "are you still there?"),
    ("pls check tmrw", "please check tomorrow"), ("write an R script", "write an R script"),
    ("fetch https://u.example.com/ur/pls", "fetch https://u.example.com/ur/pls"), ("key app-u-1", "key app-u-1"),
])
def test_chat_spelling_is_written_out_and_addresses_are_left_alone(text, spelled):
    assert cues.spelled_out(text) == spelled


def test_what_can_you_do_in_chat_spelling_is_a_question_about_flora(registry):
    llm = ScriptedLLM([])
    intent = router(registry, llm).classify("so wat kinda things can u do?")
    assert intent.kind == "status" and llm.calls == []


@pytest.mark.parametrize("text, pointing", [
    ("forward that to everyone", "that"), ("could you review the draft please", "the draft"),
    ("update this with the latest figures", "this"), ("把那份改一下给领导", "那份"), ("帮我把这个处理下", "这个"),
    ("ok just go with what we agreed on", "what we agreed on"), ("那就照我们商量好的来吧", "我们商量好的"),
])
def test_a_request_that_only_points_at_its_object_is_asked_about_when_nothing_came_before(registry, text, pointing):
    llm = ScriptedLLM([reading("chat")])
    intent = router(registry, llm).classify(text)
    assert intent.kind == "clarify" and intent.refers_to == pointing and intent.options
    assert llm.calls == []


def test_after_a_greeting_alone_the_pointing_words_still_point_at_nothing(registry):
    history = [{"role": "user", "content": "hey there!"}, {"role": "assistant", "content": "Hi! How can I help?"}]
    intent = router(registry, ScriptedLLM([reading("chat")])).classify("pls forward it to the team", history=history)
    assert intent.kind == "clarify" and intent.refers_to == "it"


def test_after_earlier_turns_the_pointing_words_are_the_model_s_to_read(registry):
    llm = ScriptedLLM([reading("chat")])
    history = [{"role": "user", "content": "def f(x): return x+"}, {"role": "assistant", "content": "That is incomplete."}]
    assert router(registry, llm).classify("can you fix this?", history=history).kind == "chat"


@pytest.mark.parametrize("text", ["fix the login bug in auth.py", "send the report to Anna", "这个怎么改比较好",
                                  "check it out, it's great"])
def test_requests_that_name_their_object_are_not_pointing(text):
    assert cues.unclear_reference(text) is None


def test_a_request_for_the_waiting_capability_that_gives_the_awaited_value_answers_it(registry):
    pending = Pending("task_1", "http_request", ("url",))
    llm = ScriptedLLM([reading("http_request")])
    intent = router(registry, llm).classify("ok just call this one then https://api.example.com/v2/items",
                                            pending=pending)
    assert (intent.kind, intent.capability) == ("answer", "http_request")


@pytest.mark.parametrize("text, asked", [
    ("forget that I moved to Berlin", ("forget", "I moved to Berlin")), ("忘掉我养了一只猫", ("forget", "我养了一只猫")),
    ("forget everything about me", ("clear", "")), ("what do you remember about me?", ("list", "")),
    ("forget that job", None), ("forget about the last request", None), ("忘掉刚才的任务吧", None),
])
def test_forgetting_a_fact_is_asked_of_memory_and_forgetting_a_task_is_not(text, asked):
    assert cues.memory_command(text) == asked


@pytest.mark.parametrize("route", ["chat", "clarify", "web_fetch"])
def test_an_address_for_a_task_that_waits_for_one_answers_it_whatever_the_model_reads(registry, route):
    pending = Pending("task_1", "http_request", ("url",))
    intent = router(registry, ScriptedLLM([reading(route)])).classify("this one: https://api.example.com/v1/a",
                                                                      pending=pending)
    if route == "web_fetch":  # another capability named: a new request, the task keeps waiting
        assert intent.kind == "task" and intent.capability == "web_fetch"
    else:
        assert (intent.kind, intent.capability) == ("answer", "http_request")


def test_a_question_while_a_key_is_awaited_is_not_taken_for_the_key(registry):
    pending = Pending("task_1", "dify_workflow", ("api_key",))
    assert router(registry, ScriptedLLM([reading("chat")])).classify("what's that key for anyway?",
                                                                     pending=pending).kind == "chat"


# -- a capability the rules are sure of, as one step of several ----------------------------
@pytest.mark.parametrize("text", [
    "grab https://inventory.example.net/levels.json, then look up yesterday's refunds in our books",
    "1. call https://metrics.example.io/api/daily\n2. search our records for last month's complaints\n"
    "3. tell me which teams are behind",
    "先把 https://rates.example.org/today 的接口请求一下，然后查一下我们系统里上周的报价，最后比较一下",
    "四件事：请求 https://hr.example.cn/api/staff，再搜下考勤记录里的迟到，然后告诉我哪些人要提醒",
])
def test_an_address_for_one_capability_beside_other_work_is_a_plan_not_that_task(registry, text):
    intents = router(registry, ScriptedLLM([]))  # the rules see the steps: no understanding call
    intent = intents.classify(text)
    assert (intent.kind, intent.capability) == ("plan", "http_request")
    assert intents.decide_by_rules(text) is None  # the AgentActor's fast path leaves it to the planner


@pytest.mark.parametrize("text", [
    "把 https://prices.example.com/list 的数据抓下来，再查下我们库里同款的售价，两边对比一下",
    "fetch the data at https://sales.example.com/eu, then look up the same week in our books",
])
def test_several_steps_none_of_them_certain_alone_are_a_plan(registry, text):
    assert router(registry, ScriptedLLM([])).classify(text).kind == "plan"


@pytest.mark.parametrize("text, capability", [
    ("fetch https://status.example.io/health.json and show me the result", "http_request"),
    ("请求一下 https://api.example.cn/v3/ping 看看返回什么", "http_request"),
    ("跑一下 dify 工作流，密钥是 app-Zx81Qw", "dify_workflow"),
    # one query: the SQL it needs, known by its look, is asked of the person
    ("统计下各个部门的报销金额，按从高到低排个序", "data_query"),
    ("call https://api.example.com/v1/items, then tell me whether it answered", "http_request"),
])
def test_one_request_with_an_address_a_value_or_a_manner_stays_one_task(registry, text, capability):
    intent = router(registry).decide_by_rules(text)
    assert (intent.kind, intent.capability) == ("task", capability)


@pytest.mark.parametrize("text, advice", [
    ("any tips for a first job interview?", True), ("有什么练习建议吗", True), ("第一次带团队，有什么建议吗", True),
    ("what would you recommend for a rainy Sunday?", True), ("推荐几本科幻小说", True),
    ("介绍一下你自己能干嘛", False), ("what can you do?", False), ("remind me to stretch at 5", False),
    ("any tips on where my order A-1029 is?", False),  # the person's records: not conversation
])
def test_a_request_for_advice_is_conversation(text, advice):
    assert cues.asks_for_advice(text) is advice


@pytest.mark.parametrize("text", ["看看我邮箱，导师有没有回我论文的修改意见", "我工资到账了没？",
                                  "has my landlord answered my email about the boiler yet?"])
def test_a_question_of_the_person_s_own_records_read_as_chat_is_refused_not_answered(registry, text):
    intent = router(registry, ScriptedLLM([reading("chat")])).classify(text)
    assert intent.kind == "unsupported"


@pytest.mark.parametrize("text", ["remind me when my parcel arrives", "how do I set up a filter in my gmail?",
                                  "我的邮箱密码刚改好了"])
def test_a_reminder_or_advice_about_the_person_s_records_is_not_refused_for_naming_them(registry, text):
    intent = router(registry, ScriptedLLM([reading("chat")] * 2)).classify(text)
    assert intent.kind != "unsupported"


@pytest.mark.parametrize("url, page", [
    ("https://blog.example.org/how-to-pack-a-kitchen", True), ("https://www.example.cn/news/2026/swim-rules.html", True),
    ("https://example.org/astro/meteor-showers-2025", True), ("https://api.example.com/queue/depth", False),
    ("https://example.com/api/orders-today", False), ("https://example.com/v2/status", False),
    ("https://example.com/report.json", False), ("https://example.com/search?q=tide-times", False),
    ("https://example.com/status", False), ("http://127.0.0.1:8000/status.html", False),
    ("http://localhost/about-us.html", False),
])
def test_an_address_looks_like_a_page_to_read_or_an_endpoint_to_call(url, page):
    from capabilities.context.answers import page_like

    assert page_like(url) is page


@pytest.mark.parametrize("text, capability", [
    ("have a read of https://blog.example.org/how-to-pack-a-kitchen and give me the gist", "web_fetch"),
    ("Can you pull up https://example.org/astro/meteor-showers-2025 and tell me which nights are the peak?", "web_fetch"),
    ("帮我看下这个页面 https://www.example.cn/xian/food-festival-2025 说小吃节哪天开幕", "web_fetch"),
    ("call https://api.example.com/v1/ping", "http_request"),
    ("GET https://example.com/orders.json and show me", "http_request"),
])
def test_an_article_s_address_is_read_as_a_page_and_an_endpoint_s_is_called(registry, text, capability):
    assert TaskRouter(registry).confident(text).spec.name == capability


@pytest.mark.parametrize("text", ["在工作区的文件里搜一下，看哪份文件里提到过“押金”",
                                  "which of my files mention the word invoice? search them"])
def test_a_search_said_to_be_among_the_person_s_files_is_not_a_web_search(registry, text):
    ranked = TaskRouter(registry).rank(text)
    assert ranked[0].spec.name == "file_search" and all(c.spec.name != "web_search" or c.score < ranked[0].score
                                                         for c in ranked[1:])


def test_a_plan_no_plan_can_be_made_of_is_the_agent_s_where_a_tool_s_value_is_given(registry):
    intents = router(registry)
    said = "帮我打开 tuning/clients_march.txt 念一下，看看三月都约了哪几家"
    assert intents.unplanned(said, Intent("plan", source="llm")).capability == "agent"
    assert intents.unplanned("plan it all out for me", Intent("plan", source="llm")).kind == "clarify"
    kept = intents.unplanned("fetch the report", Intent("plan", "http_request", {"method": "GET"}))
    assert (kept.kind, kept.capability, kept.parameters) == ("task", "http_request", {"method": "GET"})
