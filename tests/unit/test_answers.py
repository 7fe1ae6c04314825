"""Reading values, greetings, help and "continue" out of what a user typed, in English and Chinese."""

from __future__ import annotations

import pytest

from capabilities.cognition.cues import conversation_only
from capabilities.context.answers import (
    answer_values, is_continue, is_help, mentions, named_values, urls, values_by_schema,
)
from capabilities.routing.task_router import TaskRouter


@pytest.mark.parametrize("text, names, expected", [
    ("city=Paris", ["city"], {"city": "Paris"}),
    ("city = Paris", ["city"], {"city": "Paris"}),
    ("city: Paris, days: 3", ["city", "days"], {"city": "Paris", "days": "3"}),
    ("forecast for city=Paris; days=3 please", ["city", "days"], {"city": "Paris", "days": "3"}),
    ('city="New York"', ["city"], {"city": "New York"}),
    ("city='New York'", ["city"], {"city": "New York"}),
    ("my api key is sk-123", ["api_key"], {"api_key": "sk-123"}),
    ("API-Key: sk-123", ["api_key"], {"api_key": "sk-123"}),
    ("apikey=sk-123", ["api_key"], {"api_key": "sk-123"}),
    ("The city is Paris.", ["city"], {"city": "Paris"}),
    ("url: https://example.com/a?b=1", ["url"], {"url": "https://example.com/a?b=1"}),
    ("城市：北京", ["城市"], {"城市": "北京"}),
    ("城市是北京。日期为明天", ["城市", "日期"], {"城市": "北京", "日期": "明天"}),
    ("我的城市是北京", ["城市"], {"城市": "北京"}),
    ("我的api_key是sk-123", ["api_key"], {"api_key": "sk-123"}),
    ("city：北京，date=明天", ["city", "date"], {"city": "北京", "date": "明天"}),
    ('{"city": "Paris", "days": 3, "colour": "red"}', ["city", "days"], {"city": "Paris", "days": 3}),
    ('  {"API Key": "sk-123"}  ', ["api_key"], {"api_key": "sk-123"}),
])
def test_named_values_finds_values_given_by_name(text, names, expected):
    assert named_values(text, names) == expected


@pytest.mark.parametrize("text, names", [
    ("electricity=5", ["city"]),          # the name inside a longer word
    ("city island tour", ["city"]),       # "is" inside a word is no separator
    ("what's the weather in Paris", ["city"]),
    ("city=Paris", []),
    ("{not json", ["city"]),
])
def test_named_values_finds_nothing_without_a_name_and_separator(text, names):
    assert named_values(text, names) == {}


def test_named_values_keeps_the_first_value_for_a_name():
    assert named_values("city=Paris, then city=Rome", ["city"]) == {"city": "Paris"}


def test_a_quoted_value_keeps_its_punctuation():
    assert named_values('city: "St. Louis."', ["city"]) == {"city": "St. Louis."}


def test_answer_values_prefers_named_values():
    assert answer_values("days=3", ["city", "days"]) == {"days": "3"}


@pytest.mark.parametrize("text, value", [("Paris", "Paris"), ("  北京 ", "北京"), ("New York City", "New York City")])
def test_a_bare_answer_fills_the_one_missing_parameter(text, value):
    assert answer_values(text, ["city"]) == {"city": value}


@pytest.mark.parametrize("text, value", [
    ("the token is sk-91Xa", "sk-91Xa"), ("ok here you go: tok_55Rt", "tok_55Rt"), ("口令是 Zq-77", "Zq-77"),
    ("账号发你：alice_01", "alice_01"), ("use 'gold plan' please", "gold plan"), ("it's https://a.example/x", "https://a.example/x"),
    ("my name is Ana Lopez", "my name is Ana Lopez"),  # more than one word after it: the whole answer
    ("http://localhost:3000/api/ping", "http://localhost:3000/api/ping"), ("url:https://a.example/x", "url:https://a.example/x"),
])
def test_one_value_handed_over_in_a_sentence_is_the_value(text, value):
    assert answer_values(text, ["value"]) == {"value": value}


@pytest.mark.parametrize("text", ["Paris, 3", "Paris,3", "北京，3", "Paris\n3", "Paris; 3", "北京；3"])
def test_n_separated_answers_fill_n_missing_parameters_in_order(text):
    values = answer_values(text, ["city", "days"])
    assert list(values) == ["city", "days"] and values["days"] == "3"


@pytest.mark.parametrize("text, asked", [
    ("Paris", ["city", "days"]),
    ("Paris, 3, celsius", ["city", "days"]),
    ("", ["city"]),
    ("   ", ["city"]),
    ("Paris", []),
])
def test_an_answer_that_cannot_be_mapped_gives_none(text, asked):
    assert answer_values(text, asked) is None


@pytest.mark.parametrize("text", ["continue", "Continue.", "go on", "  resume ", "keep going!", "继续", "继续吧",
                                  "接着", "继续。"])
def test_continue_is_recognised(text):
    assert is_continue(text)


@pytest.mark.parametrize("text", ["continue with the weather in Paris", "discontinue", "不要继续", "继续查北京天气"])
def test_a_sentence_merely_containing_continue_is_not_a_continue(text):
    assert not is_continue(text)


@pytest.mark.parametrize("text", ["hi", "Hello!", "hey", "good morning", "Thank you.", "你好", "您好！",
                                  "你好吗？", "谢谢"])
def test_greetings_are_recognised(text):
    assert conversation_only(text)


@pytest.mark.parametrize("text", ["hi, what's the weather in Paris?", "history", "你好，帮我查北京的天气", "hello world program"])
def test_a_request_that_starts_with_a_greeting_is_not_a_greeting(text):
    assert not conversation_only(text)


@pytest.mark.parametrize("text", ["help", "/help", "What can you do?", "list capabilities", "帮助", "你能做什么？",
                                  "有哪些能力"])
def test_help_requests_are_recognised(text):
    assert is_help(text)


@pytest.mark.parametrize("text", ["help me book a flight", "帮我查天气", "helpful"])
def test_a_task_mentioning_help_is_not_a_help_request(text):
    assert not is_help(text)


@pytest.mark.parametrize("text, phrase, found", [
    ("What's the weather today?", "weather", True),
    ("WEATHER in Paris", "weather", True),
    ("ask the weatherman", "weather", False),
    ("run the dify workflow", "dify", True),
    ("mydify", "dify", False),
    ("今天天气怎么样", "天气", True),
    ("今天下雨吗", "天气", False),
    ("查一下weather吧", "weather", True),
    ("写个python 脚本跑一下", "Python 脚本", True),  # a Chinese phrase: any case, any spacing of its Latin words
    ("用Python算一下", "用 python", True),
    ("anything", "", False),
])
def test_mentions_uses_word_boundaries_for_latin_and_substrings_for_cjk(text, phrase, found):
    assert mentions(text, phrase) is found


def test_mentions_agrees_with_the_whole_word_pattern_for_every_phrase_and_text():
    # one-word phrases in ASCII text are looked up among the text's words; the answer must be the
    # pattern's, whatever the case, underscores, digits or punctuation around them
    import itertools
    import re
    phrases = ["file", "api", "api_key", "web page", "Data", "x9", "py", "Python3", "read_file", "ls", "a-b", "c++"]
    texts = ["read the file now", "API key here: api_key=3", "web-page web page", "data.csv", "please run python3!",
             "lsof ls", "FILE", "my_file file_x", "x9y x9", "a-b and c++ code", "über file", "", "_api_ api"]
    for text, phrase in itertools.product(texts, phrases):
        pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(phrase)}(?![A-Za-z0-9_])", re.I)
        assert mentions(text, phrase) is (pattern.search(text) is not None), (text, phrase)


def test_urls_stop_at_chinese_punctuation():
    assert urls("打开 https://example.com/a?b=1，然后 http://x.org/。") == ["https://example.com/a?b=1", "http://x.org/"]


def test_text_after_takes_the_words_that_follow_the_last_keyword_mentioned():
    from capabilities.context.answers import text_after

    assert text_after("ask the experts: which database?", ("experts", "ask the experts")) == "which database?"
    assert text_after("让专家们讨论一下：要不要上微服务？", ("专家",)) == "们讨论一下：要不要上微服务？"
    assert text_after("让专家们讨论一下：要不要上微服务？", ("专家", "让专家们讨论一下")) == "要不要上微服务？"
    assert text_after("ask the experts", ("ask the experts",)) == ""
    assert text_after("nothing here", ("experts",)) == ""
    assert text_after("the expertsystem says", ("experts",)) == ""  # a whole word only


def test_a_request_text_parameter_takes_the_question_only_when_nothing_is_named():
    from config import load_config
    from init_plugins import build_registry
    from capabilities.routing.task_router import TaskRouter

    registry = build_registry(load_config({"llm": {"backend": "none"}}, env={}))
    spec = registry.get_executable("ask_experts")
    assert TaskRouter.extract_parameters(spec, "ask the experts: tabs or spaces?") == {"question": "tabs or spaces?"}
    assert TaskRouter.extract_parameters(spec, "ask the experts") == {}
    assert TaskRouter.extract_parameters(spec, "ask the experts question=why strategy=voting") == {
        "question": "why", "strategy": "voting"}


# -- values known by their look (x-flora-value-pattern) ------------------------------------
def _spec(name):
    from config import load_config
    from init_plugins import build_registry

    registry = build_registry(load_config({"memory": {"enabled": False}}, env={}))
    return TaskRouter(registry).find(name)


@pytest.mark.parametrize("said, key", [
    ("please start the invoice workflow on dify, the key's app-Kq72Lm91", "app-Kq72Lm91"),
    ("dify的审批流跑一下吧，密钥在这 app-8dJw2Pq0，谢谢", "app-8dJw2Pq0"),
    ("run my dify flow — api key: `app-Xx00Yy11`", "app-Xx00Yy11"),
])
def test_a_key_handed_over_in_a_request_is_read_by_its_look(said, key):
    assert TaskRouter.extract_parameters(_spec("dify_workflow"), said)["api_key"] == key


def test_two_different_keys_are_not_guessed_between():
    said = "run the dify workflow with app-Aa11Bb22 or maybe app-Cc33Dd44"
    assert "api_key" not in TaskRouter.extract_parameters(_spec("dify_workflow"), said)


@pytest.mark.parametrize("said, sql", [
    ("could you run this against our db: SELECT team, AVG(score) FROM games GROUP BY team",
     "SELECT team, AVG(score) FROM games GROUP BY team"),
    ("帮我在库里跑 select count(*) from signups where day = '2026-11-01' 看下结果",
     "select count(*) from signups where day = '2026-11-01'"),
    ("query the warehouse database: WITH t AS (SELECT 1) SELECT * FROM t;", "WITH t AS (SELECT 1) SELECT * FROM t"),
])
def test_a_statement_written_in_a_request_is_the_query(said, sql):
    values = TaskRouter.extract_parameters(_spec("data_query"), said)
    assert values["sql"] == sql and "database" not in values  # "the database: SELECT" names no database


@pytest.mark.parametrize("said", ["select the customers who spent most last month", "how many orders came in today?",
                                  "统计一下上周的新用户"])
def test_words_about_data_are_not_a_statement(said):
    assert "sql" not in TaskRouter.extract_parameters(_spec("data_query"), said)


def test_an_address_answer_with_words_around_it_gives_the_address():
    schema = {"url": {"type": "string", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"}}
    assert answer_values("yep - https://status.example.org/health?full=1", ["url"], schema) == {
        "url": "https://status.example.org/health?full=1"}
    assert answer_values("地址是这个：https://a.example.cn/x，麻烦了", ["url"], schema) == {"url": "https://a.example.cn/x"}


def test_a_key_answer_with_words_around_it_gives_the_key():
    schemas = {"api_key": _spec("dify_workflow").properties["api_key"]}
    assert answer_values("found it!! app-Rt56Yu78 :)", ["api_key"], schemas) == {"api_key": "app-Rt56Yu78"}


@pytest.mark.parametrize("said", ["could you grab https://data.example.net/exports/today.csv",
                                  "请求一下 https://api.example.com/workflow/status 看看"])
def test_words_inside_an_address_are_not_keywords(said):
    from config import load_config
    from init_plugins import build_registry

    router = TaskRouter(build_registry(load_config({"memory": {"enabled": False}}, env={})))
    assert router.confident(said).spec.name == "http_request"


def test_an_address_ends_before_the_punctuation_of_its_sentence():
    assert urls("fetch https://a.example.com/stock, then the db") == ["https://a.example.com/stock"]
    assert urls("is https://b.example.org/x?y=1. up?") == ["https://b.example.org/x?y=1"]


def test_a_number_fills_a_generically_named_parameter_its_description_ties_it_to():
    schemas = {"value": {"type": "number", "description": "the temperature to convert, e.g. 21.5"},
               "timeout_s": {"type": "number", "description": "Seconds the command may run before it is killed"}}
    assert values_by_schema("convert the temperature 21.5 to fahrenheit", {"value": schemas["value"]}) == {
        "value": "21.5"}
    assert values_by_schema("convert the price 21.5 to euros", {"value": schemas["value"]}) == {}
    # a named parameter is tied by its name only, not by its description's words
    assert values_by_schema("run the command sleep 100", {"timeout_s": schemas["timeout_s"]}) == {}
