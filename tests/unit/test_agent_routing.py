"""Entering the agent loop: requests that need tools reach the ``agent`` capability, by its
words or by the understanding model; conversation and one-capability requests route as
before."""

from __future__ import annotations

import pytest

from capabilities.cognition.intent_router import IntentRouter, prompt
from capabilities.llm.fake import ScriptedLLM
from capabilities.routing.task_router import TaskRouter, unexplained_words
from config import FloraConfig
from init_plugins import build_registry


@pytest.fixture(scope="module")
def registry():
    return build_registry(FloraConfig(), llm=None)


def router(registry, llm=None) -> IntentRouter:
    return IntentRouter(TaskRouter(registry), llm)


@pytest.mark.parametrize("text", ["how much disk space is left here?", "帮我看看这个目录里有哪些文件",
                                  "write a script that renames these photos and run it", "what's the time in Tokyo?",
                                  "写个脚本把这些照片改名然后运行"])
def test_requests_that_name_what_only_tools_can_do_reach_the_agent_without_the_model(registry, text):
    llm = ScriptedLLM([])
    intent = router(registry, llm).classify(text)
    assert intent.capability == "agent" and intent.kind in ("task", "query") and llm.calls == []


@pytest.mark.parametrize("text", ["compress last week's logs into one archive", "我的磁盘还有多少空间",
                                  "find the biggest log file on this box and tell me its size"])
def test_the_understanding_model_can_choose_the_agent(registry, text):
    intent = router(registry, ScriptedLLM([{"route": "agent"}])).classify(text)
    assert (intent.kind, intent.capability, intent.source) == ("task", "agent", "llm")
    assert intent.parameters == {}  # the agent reads the whole request itself


def test_the_agent_is_offered_to_the_model_with_examples_in_both_languages(registry):
    said = prompt(TaskRouter(registry).routable(), "hello")
    assert any("- agent: " in m["content"] for m in said if m["role"] == "system")
    shots = [said[i]["content"] for i in range(len(said) - 1)
             if said[i]["role"] == "user" and said[i + 1]["content"] == '{"route": "agent"}']
    assert "Message: how much disk space is left here?" in shots and "Message: 帮我看看这个目录里有哪些文件" in shots


@pytest.mark.parametrize("text", ["thanks, that helped!", "谢谢你", "what's 17 times 23?", "今天心情不太好",
                                  "summarise this for me: the cat sat on the mat", "tell me a joke about time"])
def test_conversation_stays_chat(registry, text):
    intent = router(registry, ScriptedLLM([{"route": "chat"}])).classify(text)
    assert intent.kind == "chat"


@pytest.mark.parametrize("text, capability", [("fetch https://example.com", "http_request"),
                                              ("kick off the dify workflow, api_key=app-7Fk2", "dify_workflow")])
def test_one_capability_requests_route_as_before(registry, text, capability):
    assert router(registry, ScriptedLLM([])).classify(text).capability == capability


def test_without_the_agent_the_model_cannot_choose_it(tmp_path):
    registry = build_registry(FloraConfig(agent={"enabled": False}), llm=None)
    assert "agent" not in [s.name for s in registry.executables()]
    intent = router(registry, ScriptedLLM([{"route": "chat"}])).classify("how much disk space is left here?")
    assert intent.capability is None


@pytest.mark.parametrize("text, capability", [
    ("which file in my workspace mentions 'rotate the keys'?", "file_search"),  # what to look for, in words
])
def test_a_tool_whose_value_the_request_says_in_words_no_rule_reads_is_the_agents(registry, text, capability):
    tasks = TaskRouter(registry)
    spec = tasks.find(capability)
    assert tasks.extract_parameters(spec, text) == {} and unexplained_words(spec, text)
    intent = router(registry, ScriptedLLM([{"route": capability}])).classify(text)
    assert (intent.kind in ("task", "query"), intent.capability) == (True, "agent")


def test_a_value_known_by_its_look_that_the_request_lacks_is_asked_not_read(registry):
    # an SQL statement, an address: the request holds none, so there is none to read (the seed's
    # "帮我查询一下上个月的销售数据" asks for the query)
    text = "统计下各个部门的报销金额，按从高到低排个序"
    intent = router(registry, ScriptedLLM([{"route": "data_query"}])).classify(text)
    assert intent.capability == "data_query" and "sql" not in intent.parameters


@pytest.mark.parametrize("text, capability", [("read the file", "file_read"), ("search files", "file_search")])
def test_a_request_that_says_only_which_tool_asks_the_person_at_once(registry, text, capability):
    intent = router(registry, ScriptedLLM([{"route": capability}])).classify(text)
    assert intent.capability == capability and unexplained_words(TaskRouter(registry).find(capability), text) == []


def test_a_missing_secret_is_asked_of_the_person_never_left_to_the_model(registry):
    tasks = TaskRouter(registry)
    dify = tasks.find("dify_workflow")
    text = "start the dify workflow for the quarterly onboarding checklist"
    assert unexplained_words(dify, text) and not tasks.written_by_agent(dify, {}, text)
    assert tasks.written_by_agent(dify, {"api_key": "app-1"}, text) is False


def test_unexplained_words_leave_out_the_requests_frame_and_the_tools_own_words(registry):
    search = TaskRouter(registry).find("file_search")
    assert unexplained_words(search, "please find the file that contains the word invoice") == ["word", "invoice"]
    assert unexplained_words(search, "帮我查找一下文件") == []  # the frame and the tool's own words
    assert "error" in unexplained_words(search, "找一下哪个文件包含 ERROR")
    assert unexplained_words(search, "delete note n1") == ["delete", "note", "n1"]  # an id counts, however short


@pytest.mark.parametrize("text, route", [("read config.ini and tell me which port the server uses", "chat"),
                                         ("who is the owner named in owner.txt?", "unsupported"),
                                         ("看看 notes.txt 里写的会议室是哪一间", "chat"),
                                         ("看看 notes.txt 里写的会议室是哪一间", "clarify")])
def test_a_file_named_in_a_message_read_as_conversation_is_opened_by_the_agent(registry, text, route):
    intent = router(registry, ScriptedLLM([{"route": route}])).classify(text)
    assert (intent.kind in ("task", "query"), intent.capability) == (True, "agent")


@pytest.mark.parametrize("text", ["thanks, that helped!", "what does a .txt extension mean?", "today was long"])
def test_conversation_without_a_value_a_tool_takes_stays_conversation(registry, text):
    assert router(registry, ScriptedLLM([{"route": "chat"}])).classify(text).kind == "chat"


@pytest.mark.parametrize("path", ["classify", "decide_by_rules"])  # the understanding step, the AgentActor's rules
def test_a_task_whose_message_holds_another_tools_value_is_the_agents(registry, path):
    text = "fetch http://127.0.0.1:8000/status.html and save the build number it shows to build.txt"
    intent = getattr(router(registry, ScriptedLLM([])), path)(text)
    assert (intent.kind, intent.capability) == ("task", "agent")


@pytest.mark.parametrize("path", ["classify", "decide_by_rules"])
@pytest.mark.parametrize("text, capability", [("what build number does the page http://127.0.0.1:8000/status.html show?",
                                               "http_request"),
                                              ("read the file notes/todo.txt", "file_read")])
def test_a_task_whose_values_are_all_its_own_stays_one_call(registry, text, capability, path):
    assert getattr(router(registry, ScriptedLLM([])), path)(text).capability == capability


@pytest.mark.parametrize("text, capability, values", [
    ("run `ls -la` in my workspace", "shell", {"command": "ls -la"}),
    ("在终端执行一下 `df -h`，看看磁盘还剩多少", "shell", {"command": "df -h"}),  # asks of the machine: the command says how
    ("帮我 run 一下 `du -sh photos`，睇下啲相占咗几多位", "shell", {"command": "du -sh photos"}),
    ("试试 `print(2**10)`", "python_exec", {"code": "print(2**10)"}),
])
def test_a_command_or_script_set_in_backticks_is_what_runs(registry, text, capability, values):
    intent = router(registry, ScriptedLLM([])).decide_by_rules(text)
    assert (intent.capability, intent.parameters) == (capability, values)


@pytest.mark.parametrize("text, values", [
    ("could you run git status, want to see what's uncommitted", {"command": "git status"}),
    ("can you run uptime for me?", {"command": "uptime"}),
    ("帮我执行一下 df -h 看看还剩多少空间", {"command": "df -h"}),
    ("帮我 run 一下 du -sh logs 这个命令", {"command": "du -sh logs"}),  # an English verb, a Chinese particle
])
@pytest.mark.parametrize("path", ["classify", "decide_by_rules"])
def test_a_command_asked_to_be_run_is_what_runs(registry, text, values, path):
    intent = getattr(router(registry, ScriptedLLM([])), path)(text)
    assert (intent.capability, intent.parameters) == ("shell", values)


@pytest.mark.parametrize("text", ["how do I run git status?", "I need to run the sales report again",
                                  "run a marathon before I'm 40, any tips?"])
def test_how_to_run_a_command_or_run_said_of_other_things_runs_nothing(registry, text):
    assert router(registry, ScriptedLLM([])).decide_by_rules(text) is None


@pytest.mark.parametrize("text", ["what does `ls` do?", "restart the web server"])
def test_a_command_asked_about_or_a_keyword_alone_runs_nothing(registry, text):
    assert router(registry, ScriptedLLM([])).decide_by_rules(text) is None


@pytest.mark.parametrize("text", ["use python to find the 20th Fibonacci number", "用 Python 算一下 2 的 100 次方",
                                  "use the shell to count the files in logs",
                                  "write some python that finds the primes below 100",
                                  "run a quick python script to shuffle these names: Ann, Bo, Cy",
                                  "写段python算一下2的100次方"])
def test_a_tool_named_as_the_means_is_asked_for(registry, text):
    assert router(registry, ScriptedLLM([])).decide_by_rules(text).capability == "agent"  # it writes what runs


@pytest.mark.parametrize("text", ["how do I use python to parse json?", "用 python 写爬虫难吗？", "I love python",
                                  "I run the python meetup in town, any talk ideas?"])
def test_a_question_about_a_tool_or_its_name_in_passing_runs_nothing(registry, text):
    assert router(registry, ScriptedLLM([])).decide_by_rules(text) is None


def test_a_tools_name_word_after_with_or_in_is_no_means(registry):
    # "numbers" is a word of add_numbers' name; "with the numbers" does not choose it
    from capabilities.routing.task_router import _as_means

    assert not _as_means("please do the thing with the numbers", "numbers")
    assert _as_means("use the shell to count them", "shell") and _as_means("用python算一下", "python")


def test_a_value_read_as_the_tools_own_is_no_second_tools_value(registry):
    # build.txt beside an address is a second step; a path given to the tool by name is its own
    router_ = router(registry, ScriptedLLM([]))
    spec = router_.router.find("http_request") or router_.router.find("http_get")
    assert router_.router.tool_value_in("fetch https://x.example/a and save it to build.txt", besides=spec)
    assert not router_.router.tool_value_in("fetch https://x.example/a path=build.txt", besides=spec,
                                            given={"path": "build.txt"})


def test_a_short_value_of_the_tool_s_own_does_not_cut_a_longer_one_it_stands_in(registry):
    # "3" stands inside the path: taken out first, it left "/tmp/run- 8/…" to read as another tool's file
    spec = registry.get_executable("shell")
    given = {"command": "3", "cwd": "/tmp/run-38/work"}
    assert not router(registry, ScriptedLLM([])).router.tool_value_in(
        "shell command=3 cwd=/tmp/run-38/work", besides=spec, given=given)
