"""What the understanding step may and may not make of a message: questions about Flora's
abilities, commands said in passing, pointing words with nothing before them, the person's
own world that no capability reaches, and conversation the model mistook for something else."""

from __future__ import annotations

import pytest

from capabilities.cognition import cues, world
from capabilities.cognition.intent_router import Intent, IntentRouter
from capabilities.llm.fake import ScriptedLLM
from capabilities.routing.task_router import TaskRouter
from config import FloraConfig
from init_plugins import build_registry


@pytest.fixture(scope="module")
def registry():
    return build_registry(FloraConfig(), llm=None)


def read(registry, text: str, route: str = "chat", history=None):
    return IntentRouter(TaskRouter(registry), ScriptedLLM([{"route": route}])).classify(text, history=history)


# -- what Flora can do ---------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "讲讲你的本领吧", "你擅长干啥", "你有哪些技能", "能帮上我什么忙", "那你平时都可以帮我做些什么呢",
    "so what are you really able to do?", "what exactly are you good for?", "what's your skill set?",
    "what could I use you for?", "ok, what can you actually help with",
    "您好，我刚退休，您这个助手都能帮上什么忙", "请问您都能帮我做些什么",  # 您: "you" said politely
])
def test_questions_about_flora_s_abilities_in_other_words_are_answered_from_the_registry(registry, text):
    intent = read(registry, text)
    assert (intent.kind, intent.command, intent.source) == ("status", "help", "rules")


@pytest.mark.parametrize("text", ["你的本事真不小", "这个插件能帮我干啥", "what is this phone capable of?",
                                  "what are you doing tonight?", "我还能做点什么来补救"])
def test_praise_or_questions_about_other_things_are_not_about_abilities(text):
    assert not cues.asks_about_abilities(text)


# -- commands said in passing ------------------------------------------------------------
@pytest.mark.parametrize("text, command", [
    ("聊得太杂了，把对话记录清一下吧", "clear_history"), ("上下文重置一下", "clear_history"),
    ("please clear out the context, it's confusing you", "clear_history"), ("reset this conversation", "clear_history"),
    ("这模型反应太慢，换个快点的", "switch_model"), ("the model keeps getting it wrong, swap it for a better one", "switch_model"),
    ("give me a stronger model", "switch_model"),
    ("今天就到这儿，把你的进程停掉", "shutdown"), ("行了flora，把程序关掉吧", "shutdown"),
    ("power down the assistant now", "shutdown"), ("ok we're finished, kill your process", "shutdown"),
    ("Could you clear down our chat history? it's a mess", "clear_history"),
    ("麻烦您把系统关一下，明早要换硬盘", "shutdown"), ("您先把服务停一下吧", "shutdown"),
])
def test_commands_said_with_a_reason_or_another_word_are_read(text, command):
    assert cues.command(text) == command


@pytest.mark.parametrize("text", [
    "which model writes better code, Llama or Qwen?", "我的电脑老是自动关机", "my phone keeps powering down at 20%",
    "这个会话功能挺好用的", "这个模型训练完了换个数据集试试", "模型切换的原理是什么", "把那个卡死的进程关了",
    "clear the browser cache", "reset my router", "start a new project folder",
])
def test_talk_about_models_machines_and_processes_elsewhere_is_no_command(text):
    assert cues.command(text) is None


def test_a_normal_user_asking_to_switch_the_model_gets_the_command_whatever_the_model_read(registry):
    intent = read(registry, "这模型反应太慢，换个快点的", route="chat")
    assert (intent.kind, intent.command) == ("command", "switch_model")


# -- pointing at an earlier choice with nothing before -----------------------------------
@pytest.mark.parametrize("text, pointing", [
    ("还是用之前那个吧", "之前那个"), ("换另外一个试试", "另外一个"), ("跟上次一样", "跟上次一样"),
    ("try it the other way then", "the other way"), ("let's go with the previous one", "the previous one"),
    ("same as before please", "same as before"), ("fine, the second one", "the second one"),
])
def test_a_choice_among_earlier_things_with_nothing_before_is_asked_about(registry, text, pointing):
    llm = ScriptedLLM([{"route": "chat"}])
    intent = IntentRouter(TaskRouter(registry), llm).classify(text)
    assert intent.kind == "clarify" and intent.refers_to == pointing and llm.calls == []


def test_with_earlier_turns_the_earlier_choice_is_the_model_s_to_read(registry):
    history = [{"role": "user", "content": "give me two titles for my talk on caching"},
               {"role": "assistant", "content": "1. Cache Me If You Can 2. The Fast Path"}]
    assert read(registry, "let's go with the previous one", history=history).kind == "chat"


@pytest.mark.parametrize("text", ["the other day I met an old friend", "上次那个电影真好看", "I liked the other one better",
                                  "用上次那个方法怎么做"])
def test_talk_that_mentions_an_earlier_thing_is_not_pointing(text):
    assert cues.unclear_reference(text) is None


# -- the person's own world, which no capability reaches ---------------------------------
@pytest.mark.parametrize("text", [
    "has the landlord messaged me about the deposit?", "who called me while I was in the meeting?",
    "周四上午我有空吗", "我们明天晚上忙不忙", "do I have anything on Friday afternoon?",
    "明天出门要不要穿大衣", "现在外面多少度", "should I bring a coat tonight?", "how cold is it out there right now?",
    "我订的那趟高铁帮我退票", "rebook my hotel for two more nights", "change our train to the later one",
    "淘宝买的耳机怎么还没到", "点的炸鸡到哪了", "我前天报的那个网络故障处理了吗",
])
def test_the_persons_calendar_mail_trips_orders_and_weather_now_are_unsupported_whatever_the_model_read(registry, text):
    assert read(registry, text, route="chat").kind == "unsupported"


@pytest.mark.parametrize("text", [
    "check how many nodes are down in our prod cluster", "重启一下测试环境的服务器", "看下集群里的pod是不是都跑着",
    "log into api-03 and tail the nginx logs", "ssh to 10.0.0.12 and delete the old backups", "登录堡垒机看下日志",
    # what it has left or is using
    "can you see how much disk is left on our file server?", "生产服务器内存是不是快满了",
])
def test_the_persons_machines_elsewhere_are_unsupported_even_when_the_model_picks_the_agent(registry, text):
    assert read(registry, text, route="agent").kind == "unsupported"
    assert read(registry, text, route="chat").kind == "unsupported"


@pytest.mark.parametrize("text", ["我前天报的那个网络故障处理了吗", "did anyone from HR email me back?"])
def test_the_persons_tickets_and_mail_are_not_the_agent_s(registry, text):
    assert read(registry, text, route="agent").kind == "unsupported"


@pytest.mark.parametrize("text", [
    "how does kubernetes reschedule a failed pod?", "为什么pod会一直重启", "k8s集群怎么扩容", "一个集群放几个节点比较好",
    "how do I ssh into a server with a key?", "what's a good month to fly to Iceland?", "how do airlines price tickets?",
    "北方冬天一般几度", "what should I wear to a job interview?", "how cold is it on the moon?",
    "how do I write a polite follow-up email?", "淘宝是哪一年成立的", "how do pods in a cluster talk to each other?",
])
def test_knowledge_about_the_same_things_stays_conversation(registry, text):
    assert read(registry, text, route="chat").kind == "chat"


@pytest.mark.parametrize("text", ["how much disk space is left here?", "我的磁盘还有多少空间",
                                  "find the largest file in this workspace"])
def test_this_machine_stays_the_agent_s(registry, text):
    intent = read(registry, text, route="agent")
    assert intent.kind in ("task", "query") and intent.capability == "agent"


@pytest.mark.parametrize("text, capability", [
    ("fetch https://api.example.com/v2/status", "http_request"),
    ("run the shell command `df -h`", "shell"),
    ("query the database: SELECT count(*) FROM orders", "data_query"),
])
def test_requests_installed_capabilities_serve_stay_tasks(registry, text, capability):
    intent = read(registry, text, route=capability)
    assert intent.kind in ("task", "query") and intent.capability == capability


# -- conversation the model mistook ------------------------------------------------------
@pytest.mark.parametrize("text", [
    "我每月工资12000，房租占40%，一年房租一共多少？", "I make 5200 a month and save 15%, how much after two years?",
    "my rent is 1400 and my salary 4100, how much is left each month?",
])
def test_a_sum_on_figures_the_person_gives_is_conversation_not_their_accounts(registry, text):
    assert read(registry, text, route="unsupported").kind == "chat"


def test_a_question_about_an_account_without_the_figures_stays_unsupported(registry):
    assert read(registry, "how much is left in my savings account?", route="chat").kind == "unsupported"


@pytest.mark.parametrize("text", ["offer A pays more but the commute is two hours, offer B is close but pays less… help",
                                  "到底是先买车还是先还贷款，好纠结"])
def test_a_personal_dilemma_is_talked_over_not_put_to_the_panel(registry, text):
    assert read(registry, text, route="ask_experts").kind == "chat"


@pytest.mark.parametrize("text", ["ask the experts whether we should rewrite the billing service",
                                  "I'd like several opinions on buying versus leasing a car", "这事想听听多方意见：要不要考研",
                                  "could I get some expert opinions on moving our team to a four-day week?"])
def test_asking_for_experts_or_several_opinions_reaches_the_panel(registry, text):
    intent = read(registry, text, route="ask_experts")
    assert intent.capability == "ask_experts"


@pytest.mark.parametrize("text", ["how does kubernetes reschedule a failed pod?", "what is an MX record in email?",
                                  "explain how weather forecasts are made", "k8s的pod是怎么调度的", "为什么邮件会进垃圾箱",
                                  "what's a webhook and why would I want one?",
                                  "ELI5: what does an HTTP status code tell you?"])
def test_a_question_of_how_things_work_is_conversation_even_when_the_model_reads_it_as_unsupported(registry, text):
    assert read(registry, text, route="unsupported").kind == "chat"


@pytest.mark.parametrize("text", ["why is my parcel late?", "how does my calendar look tomorrow?",
                                  "why is the staging server down?"])
def test_a_why_about_the_persons_own_things_stays_unsupported(registry, text):
    assert read(registry, text, route="unsupported").kind == "unsupported"


@pytest.mark.parametrize("said", ["can you count last month's refunds? they're in the db",
                                  "pull the number of active users from the db"])
def test_the_db_named_as_such_is_the_database_capability(said):
    from capabilities.routing.task_router import TaskRouter
    from config import load_config
    from init_plugins import build_registry

    router = TaskRouter(build_registry(load_config({"memory": {"enabled": False}}, env={})))
    assert router.confident(said).spec.name == "data_query"


@pytest.mark.parametrize("said", ["为什么火车会晚点", "why do flights get cancelled in winter?", "什么是k8s里的pod",
                                  "how much memory does a web server usually need?",
                                  "写个脚本检查一下服务器的磁盘", "write me a python script that pings our servers",
                                  "买了4本书，每本25块，一共多少钱", "my rent is 3000 and I earn 9000, what's left after 2 months?"])
def test_knowledge_code_and_sums_on_given_figures_are_not_the_persons_world(said):
    assert not world.needs_the_world(said)


@pytest.mark.parametrize("said", ["why is my flight delayed?", "我的航班为什么取消了", "why is the staging server down?"])
def test_the_persons_own_things_stay_their_world_when_asked_why(said):
    assert world.needs_the_world(said)


# -- names of other things, and questions about the person's own work ------------------------
@pytest.mark.parametrize("text", ["my chinese colleague left 辛苦了 on my pull request, what does it mean?",
                                  "how do I write a good merge request description?",
                                  "my leave request got approved!", "is data science a good career?"])
def test_a_keyword_inside_the_name_of_another_thing_is_no_evidence(registry, text):
    assert TaskRouter(registry).confident(text) is None
    assert read(registry, text).kind == "chat"


@pytest.mark.parametrize("text", ["send a POST request to https://api.example.com/v1/ping",
                                  "帮我请求一下 https://api.example.com/v1/ping"])
def test_a_request_to_an_address_is_still_the_http_capabilitys(registry, text):
    assert read(registry, text).capability == "http_request"


@pytest.mark.parametrize("text", ["我那个dify的任务现在什么情况了", "帮我翻一下之前的任务记录，上次让你请求接口是哪天",
                                  "did the task I gave you earlier ever finish?", "上次让你查的那个数据库结果是多少"])
def test_a_question_about_the_work_the_person_gave_is_answered_from_their_tasks_not_run_again(registry, text):
    assert cues.asks_about_own_work(text)
    assert read(registry, text, route="dify_workflow").kind == "status"


@pytest.mark.parametrize("text", ["帮我跑一下我那个dify工作流", "我那个工作流帮我再跑一次", "run my dify workflow",
                                  "我那个请求为什么一直报错？帮我重新请求 https://api.example.com/x"])
def test_asking_to_run_the_persons_work_is_no_question_about_it(text):
    assert not cues.asks_about_own_work(text)


# -- questions said in passing, sending in the person's name, pointing at someone, what-ifs ---------
@pytest.mark.parametrize("text", ["我妈明天坐的那班飞机落地了没，CZ3102", "早啊～我在得物买的球鞋鉴定完了没，帮我看看"])
def test_whether_something_happened_asked_before_a_comma_is_a_question_not_a_statement(text):
    assert not cues.states_about_self(text)


@pytest.mark.parametrize("text", ["我还没吃饭，好饿", "我下周要去上海出差三天"])
def test_statements_about_oneself_stay_statements(text):
    assert cues.states_about_self(text)


@pytest.mark.parametrize("text", ["早啊～我在得物买的球鞋鉴定完了没，帮我看看",
                                  "Would you be so kind as to send a quick email to my landlord letting him know?"])
def test_a_purchase_on_any_platform_and_mail_sent_in_the_persons_name_need_the_world(text):
    assert world.needs_the_world(text)


@pytest.mark.parametrize("text", ["can you help me write an email to my landlord?",
                                  "how do I send an email to several people at once?",
                                  "把这周退款超过500元的订单从库里捞出来，然后用POST发到 https://hooks.example.cn/x"])
def test_writing_mail_how_to_send_it_and_orders_in_the_database_do_not(text):
    assert not world.needs_the_world(text)


@pytest.mark.parametrize("text", ["你这会儿手上还有我的活儿没干完吗", "这个月我有没有让你跑过dify的工作流？忘了",
                                  "how many times did I have you query the database last week? my boss is asking"])
def test_more_ways_of_asking_about_the_work_given_to_flora(registry, text):
    assert cues.asks_about_own_work(text)
    assert read(registry, text, route="data_query").kind == "status"


def test_someone_pointed_at_with_nothing_said_before_is_asked_about(registry):
    assert cues.unclear_reference("你帮我跟他说一声") == "他"
    assert read(registry, "你帮我跟他说一声").kind == "clarify"


@pytest.mark.parametrize("text", ["if you could have a body for one day, what's the first thing you'd do?",
                                  "如果你是人，你最想去哪儿玩"])
def test_a_what_if_put_to_flora_is_conversation_whatever_the_examples_lean_to(registry, text):
    from capabilities.cognition.semantic import Reading

    assert cues.asks_hypothetical(text)
    intents = IntentRouter(TaskRouter(registry))
    assert intents.second_opinion(text, Intent("chat", source="llm"), Reading("status", "abilities", 0.55, 0.9)).kind \
        == "chat"


def test_a_sum_on_figures_given_is_no_database_query_the_words_do_not_ask_for(registry):
    assert read(registry, "进货价一件35，卖58，这个月卖了40件，毛利一共多少", route="data_query").kind == "chat"


def test_clearing_this_thread_is_clearing_the_conversation():
    assert cues.command("clear this thread out, it's gotten way too long") == "clear_history"


# -- traditional characters and Cantonese ------------------------------------------------------
@pytest.mark.parametrize("written, read_as", [
    ("可以把你自己關機嗎？我要搬家", "可以把你自己关机吗？我要搬家"),
    ("每天早上9點提醒我複習GRPO", "每天早上9点提醒我复习GRPO"),
    ("聽日下晝三點提我去攞藥", "明天下午三点提醒我去拿药"),
    ("看看 https://zh.wikipedia.org/wiki/臺灣 這頁", "看看 https://zh.wikipedia.org/wiki/臺灣 这页"),
    ("唔，好吧", "唔，好吧"), ("what's up", "what's up"),
])
def test_chinese_is_read_in_simplified_characters_and_mandarin_words(written, read_as):
    assert cues.in_simplified(written) == read_as


def test_the_front_desk_reads_traditional_characters_as_simplified(registry, tmp_path):
    from capabilities.context.conversation_manager import ConversationManager
    from common.tasks.sqlite_store import SQLiteTaskStore
    from events.event_bus import EventBus

    assert cues.command(cues.in_simplified("可以把你自己關機嗎？我要搬家，主機要拔插頭了")) == "shutdown"
    store = SQLiteTaskStore(tmp_path / "flora.db")
    try:
        desk = ConversationManager(store, EventBus(store), registry)
        decision = desk.handle_user_input({"user_id": "u", "content": "每天早上9點提醒我複習GRPO", "tenant_id": "t"})
        assert decision.content == "每天早上9点提醒我复习GRPO"
    finally:
        store.close()


def test_a_host_named_by_its_name_is_a_machine_elsewhere():
    assert world.remote_machine("线上那台 api-03 的 nginx 日志帮我 tail 一下，看看有没有 502")
    assert not world.remote_machine("那台电脑好卡")


@pytest.mark.parametrize("text", ["my name is Li Wei, I work on the billing team", "我对花生过敏",
                                  "我下周要去上海出差三天", "I am a nurse and I work night shifts"])
def test_a_turn_that_tells_about_oneself_is_kept_for_memory(text):
    assert cues.may_tell_about_self(text)


@pytest.mark.parametrize("text", ["每天早上9点提醒我复习GRPO", "我在你这儿设了哪些定时的事儿",
                                  "I need you to remind me to call mum at 6", "我是不是还有任务没跑完"])
def test_a_reminder_or_a_question_asked_anywhere_is_not(text):
    assert not cues.may_tell_about_self(text)


@pytest.mark.parametrize("text", ["what's an API token, and why does everyone say never to paste it in chat?",
                                  "eli5 what a database index is"])
def test_a_question_of_what_a_thing_is_is_not_a_request_to_use_it(registry, text):
    assert IntentRouter(TaskRouter(registry)).decide_by_rules(text) is None


# -- an address told of, a value taken back --------------------------------------------------
@pytest.mark.parametrize("text", ["saw https://cheap-flights.example.com on a billboard, looks like a scam lol",
                                  "got a text with https://parcel-fee.example.net in it this morning, classic phishing",
                                  "刷到一个 https://free-iphone.example.cn 的广告，一看就是骗人的"])
def test_an_address_only_told_of_is_no_address_to_fetch(registry, text):
    assert cues.tells_of_an_address(text)
    assert IntentRouter(TaskRouter(registry)).decide_by_rules(text) is None
    assert read(registry, text, route="chat").kind == "chat"  # chat, not "which of these should I do with it?"


@pytest.mark.parametrize("text", ["saw https://shop.example.com is down, can you check it?",
                                  "got https://data.example.com/report.csv from Tom, fetch it please",
                                  "收到一个 https://api.example.cn/v1/ping 帮我请求一下"])
def test_an_address_told_of_with_something_asked_is_still_a_request(text):
    assert not cues.tells_of_an_address(text)


@pytest.mark.parametrize("said, meant", [
    ("帮我请求 https://a.example.cn/v1/x 不对不对，是 https://a.example.cn/v2/x", "帮我请求 https://a.example.cn/v2/x"),
    ("fetch https://a.example.com/old no wait, https://a.example.com/new please", "fetch https://a.example.com/new please"),
    ("key是 app-4fT9qL 哦不对，是 app-8kW2zR", "key是 app-8kW2zR"),
    ("the token is tk-11aa22bb, sorry I meant tk-33cc44dd", "the token is tk-33cc44dd"),
])
def test_a_value_taken_back_is_replaced_by_the_one_said_instead(said, meant):
    assert cues.corrected(said) == meant


@pytest.mark.parametrize("said", ["i mean, it was fine", "不对，我说错了", "https://a.example.com i mean it",
                                  "not https://a.example.com, I mean the other page",
                                  "fetch https://a.example.com and I mean the whole page"])
def test_words_of_correction_without_a_value_of_the_same_kind_after_them_change_nothing(said):
    assert cues.corrected(said) == said


def test_the_front_desk_reads_a_corrected_address(registry, tmp_path):
    from capabilities.context.conversation_manager import ConversationManager
    from common.tasks.sqlite_store import SQLiteTaskStore
    from events.event_bus import EventBus

    store = SQLiteTaskStore(tmp_path / "flora.db")
    try:
        desk = ConversationManager(store, EventBus(store), registry)
        decision = desk.handle_user_input({"user_id": "u", "tenant_id": "t",
                                           "content": "查一下 https://a.example.cn/v1 不对，是 https://a.example.cn/v2"})
        assert decision.content == "查一下 https://a.example.cn/v2"
    finally:
        store.close()


@pytest.mark.parametrize("text", ["刚才让你干的那个活儿到底跑完没有啊，急死人了", "上午交给您的事情办完没有呀"])
def test_a_question_about_the_work_handed_over_said_impatiently_or_politely_is_about_it(text):
    assert cues.asks_about_own_work(text)


@pytest.mark.parametrize("text", ["hey, could you sort that out for me?", "can you figure it out for me please"])
def test_a_request_that_only_points_asks_what_it_points_at(text):
    assert cues.unclear_reference(text) in ("that", "it")
