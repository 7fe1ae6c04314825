"""A call's arguments read by the model from the request, kept only where the request says them
(capabilities/arguments.py), and the execution step that uses it for a person's own function."""

from typing import Literal

import pytest

from capabilities.arguments import grounded, numbers_in, read_arguments, text_stated
from capabilities.base import capability, spec_of
from capabilities.llm.base import LLMOutputError
from capabilities.llm.fake import ScriptedLLM
from config import load_config


@capability
def final_velocity(initial_velocity: float, acceleration: float, time: float) -> dict:
    """Velocity after accelerating uniformly.

    Args:
        initial_velocity: starting velocity in m/s
        acceleration: acceleration in m/s^2
        time: duration in seconds
    """
    return {"v": initial_velocity + acceleration * time}


@capability
def send_sms(phone_number: str, message: str, priority: Literal["low", "high"] = "low") -> dict:
    """Send a text message.

    Args:
        phone_number: the number to text
        message: what it says
        priority: how urgent it is
    """
    return {"sent": True}


VELOCITY, SMS = spec_of(final_velocity), spec_of(send_sms)


def test_the_model_reads_the_values_with_its_output_held_to_the_schema_where_each_may_be_null():
    llm = ScriptedLLM([{"initial_velocity": 10, "acceleration": 2.5, "time": 6}])
    request = "A car starts at 10 m/s and speeds up at 2.5 m/s² for six seconds. How fast is it then?"
    assert read_arguments(llm, VELOCITY, request) == {"initial_velocity": 10, "acceleration": 2.5, "time": 6}
    schema = llm.calls[0][1]["json_schema"]
    assert schema["properties"]["time"]["type"] == ["number", "null"]
    assert schema["required"] == ["initial_velocity", "acceleration", "time"]
    assert request in llm.calls[0][0][-1]["content"]


def test_a_value_the_request_does_not_say_is_dropped_and_given_ones_are_not_asked_again():
    llm = ScriptedLLM([{"phone_number": "555-0199", "priority": "high"}])
    read = read_arguments(llm, SMS, "text my sister that I'm late, high priority", {"message": "I'm late"})
    assert read == {"priority": "high"}  # an invented number never reaches the function
    assert "message" not in llm.calls[0][1]["json_schema"]["properties"]


def test_a_model_failure_leaves_the_rules_values_alone():
    llm = ScriptedLLM([LLMOutputError("not JSON", text="")])
    assert read_arguments(llm, VELOCITY, "from 10 m/s at 2 m/s² for 3 s") == {}
    assert read_arguments(None, VELOCITY, "from 10 m/s at 2 m/s² for 3 s") == {}


@pytest.mark.parametrize("value, text", [
    (12, "twelve pounds"), (-3, "a=1, b=-3, and c=2"), (-5, "x² - 5x + 6 = 0"), (1, "x² - 5x + 6 = 0"),
    (0.05, "at 5% a year"), (360, "over 30 years"), (1200, "a 1,200 kg car"), (3.5, "三点五米"),
    (20000, "本金两万元"), (12, "compounded monthly"), (25, "twenty five laps"),
])
def test_numbers_said_in_figures_words_numerals_or_another_unit_are_grounded(value, text):
    assert grounded(value, {"type": "number"}, text)


@pytest.mark.parametrize("value, text", [(7, "a car at 10 m/s for 6 s"), (42, "how far is it to the station?")])
def test_a_number_the_request_does_not_hold_is_not(value, text):
    assert not grounded(value, {"type": "number"}, text)


def test_texts_are_grounded_by_their_words_and_addresses_only_whole():
    assert text_stated("Boston", "flights from boston to denver")
    assert text_stated("2025-03-01", "从2025年3月1日往后数100天")
    assert text_stated("USD", "how many euros is 120 US dollars")
    assert text_stated("深圳", "深圳明天天气怎么样")
    assert not text_stated("London", "what's the weather like tomorrow?")
    assert not text_stated("bob@example.com", "email bob about lunch")
    assert not text_stated("2025-03-02", "on 2025-03-01")
    assert grounded("high", {"type": "string", "enum": ["low", "high"]}, "high priority, please")
    # a choice the request does not name is asked, not taken from the model ("convert 21.5": to which unit?)
    assert not grounded("fahrenheit", {"type": "string", "enum": ["celsius", "fahrenheit"]}, "convert the temperature 21.5")
    assert grounded([4, 8], {"type": "array", "items": {"type": "number"}}, "average of 4 and 8")
    assert not grounded([4, 9], {"type": "array", "items": {"type": "number"}}, "average of 4 and 8")


def test_numbers_in_reads_every_way_of_writing_them():
    found = numbers_in("3x^2 + x - 2 = 0, 两万, three hundred")
    assert {3.0, 2.0, 1.0, 20000.0, 300.0} <= set(found)
    assert grounded(-2, {"type": "number"}, "3x^2 + x - 2 = 0")


# -- the execution step --------------------------------------------------------------------
def _service(tmp_path, llm, spec):
    from capability_actors.task_execution_service import TaskExecutionService
    from common.tasks.store import open_store
    from events.event_bus import EventBus
    from init_plugins import build_registry

    config = load_config({"data_dir": str(tmp_path), "llm": {"backend": "none"}, "memory": {"enabled": False}},
                         env={})
    registry = build_registry(config)
    registry.register_capability(spec)
    store = open_store(config)
    events = EventBus(store)
    return TaskExecutionService(store=store, events=events, registry=registry, config=config, llm=llm), store, events


def _execute(service, events, capability_name, content, parameters):
    from common import messages as m
    from common.tasks.models import TaskRecord

    task = events.create_task(TaskRecord(task_id=m.new_id("task"), tenant_id="default", user_id="u1", content=content,
                                         capability=capability_name, parameters=parameters), source="test")
    return service.execute(m.execute(task_id=task.task_id, tenant_id="default", user_id="u1",
                                     capability=capability_name, parameters={}))


def test_a_person_s_own_function_runs_with_what_the_request_said_instead_of_asking_for_it(tmp_path):
    llm = ScriptedLLM([{"initial_velocity": 10, "acceleration": 2.5, "time": 6}])
    service, store, events = _service(tmp_path, llm, VELOCITY)
    try:
        reply = _execute(service, events, "final_velocity",
                         "A car starts at 10 m/s and accelerates at 2.5 m/s² for 6 seconds; how fast is it?", {})
        assert reply["ok"] is True and reply["result"] == {"v": 25.0}
    finally:
        store.close()


def test_what_the_model_cannot_ground_is_still_asked_of_the_person(tmp_path):
    llm = ScriptedLLM([{"phone_number": "555-0100", "message": "I'm late", "priority": None}])
    service, store, events = _service(tmp_path, llm, SMS)
    try:
        reply = _execute(service, events, "send_sms", "text my sister that I'm late", {})
        assert reply["message_type"] == "task_paused"
        assert [p["name"] for p in reply["missing_parameters"]] == ["phone_number"]
    finally:
        store.close()


def test_flora_s_own_capabilities_keep_to_the_rules(tmp_path):
    llm = ScriptedLLM([])  # a model call would run out of replies and fail the test
    service, store, events = _service(tmp_path, llm, VELOCITY)
    try:
        reply = _execute(service, events, "http_request", "call the status page", {})
        assert reply["message_type"] == "task_paused" and not llm.calls
    finally:
        store.close()


# -- the understanding step ----------------------------------------------------------------
@capability
def send_email(to: str, subject: str, body: str) -> dict:
    """Send an e-mail.

    Args:
        to: the recipient's e-mail address
        subject: the subject line
        body: the text of the message
    """
    return {"sent": True}


@capability
def circle_area(radius: float) -> dict:
    """Compute the area of a circle.

    Args:
        radius: the radius of the circle
    """
    return {"area": 3.14159 * radius ** 2}


def _intents(tmp_path, llm, *specs):
    from capabilities.cognition.intent_router import IntentRouter
    from capabilities.routing.task_router import TaskRouter
    from init_plugins import build_registry

    config = load_config({"data_dir": str(tmp_path), "llm": {"backend": "none"}, "memory": {"enabled": False}},
                         env={})
    registry = build_registry(config)
    for spec in specs:
        registry.register_capability(spec_of(spec))
    return IntentRouter(TaskRouter(registry), llm)


def test_a_request_in_the_person_s_world_reaches_their_own_function_with_its_values(tmp_path):
    llm = ScriptedLLM([{"route": "send_email"}, {"function": "send_email", "arguments": {
        "to": "bob@example.com", "subject": "Lunch", "body": "see you at noon"}}])
    intent = _intents(tmp_path, llm, send_email).classify(
        "Email bob@example.com with the subject 'Lunch' saying: see you at noon")
    assert (intent.kind, intent.capability) == ("task", "send_email")
    assert intent.parameters == {"to": "bob@example.com", "subject": "Lunch", "body": "see you at noon"}


def test_a_sum_on_given_figures_goes_to_the_function_installed_for_it(tmp_path):
    llm = ScriptedLLM([{"route": "circle_area"}, {"function": "circle_area", "arguments": {"radius": 4}}])
    intent = _intents(tmp_path, llm, circle_area).classify("圆的半径是4，求面积是多少")
    assert (intent.kind, intent.capability, intent.parameters) == ("query", "circle_area", {"radius": 4})


def test_a_function_the_model_picks_for_a_request_that_gives_none_of_its_values_gets_no_invented_ones(tmp_path):
    llm = ScriptedLLM([{"route": "send_email"}, {"function": "send_email", "arguments": {
        "to": "doctor@example.com", "subject": None, "body": None}}])
    intent = _intents(tmp_path, llm, send_email).classify("what is my doctor's phone number?")
    assert intent.parameters == {}  # at most a question to the person; never a call with a made-up address


def test_one_keyword_of_a_built_in_capability_leaves_the_reading_to_the_model_when_own_functions_are_installed(
        tmp_path):
    llm = ScriptedLLM([{"route": "circle_area"}])
    intents = _intents(tmp_path, llm, circle_area)
    assert intents.decide_by_rules("I need the area of a round table top, 0.6 m radius") is None  # data_query's "table"
    intent = intents.classify("I need the area of a round table top, 0.6 m radius")
    assert intent.capability == "circle_area" and float(intent.parameters["radius"]) == 0.6


def test_the_reading_model_chooses_among_the_own_functions_as_with_tools_in_its_prompt(tmp_path):
    llm = ScriptedLLM([{"route": "send_email"}, {"function": "circle_area", "arguments": {"radius": 0.6}}])
    intent = _intents(tmp_path, llm, send_email, circle_area).classify("how big is the area of a round table top, 0.6 m across")
    assert (intent.capability, intent.parameters) == ("circle_area", {"radius": 0.6})
    offered = llm.calls[1][1]["json_schema"]["anyOf"]
    assert [o["properties"]["function"]["const"] for o in offered] == ["send_email", "circle_area", "none"]


def test_when_the_reading_model_finds_no_call_nothing_is_called_with_values(tmp_path):
    llm = ScriptedLLM([{"route": "circle_area"}, {"function": "none"}])
    intent = _intents(tmp_path, llm, send_email, circle_area).classify("tell me about the history of pi")
    assert intent.parameters == {}


def test_a_word_problem_read_as_conversation_calls_the_function_installed_for_it(tmp_path):
    llm = ScriptedLLM([{"route": "chat"}, {"function": "circle_area", "arguments": {"radius": 3.5}}])
    intent = _intents(tmp_path, llm, send_email, circle_area).classify(
        "my pond is round, three and a half metres from the middle to the edge. how much ground does it cover?")
    assert intent.kind in ("task", "query") and (intent.capability, intent.parameters) == ("circle_area", {"radius": 3.5})


def test_a_question_about_the_world_read_as_a_refusal_reaches_the_function_that_answers_it(tmp_path):
    llm = ScriptedLLM([{"route": "unsupported"}, {"function": "weather_in", "arguments": {"city": "Shenzhen"}}])

    @capability
    def weather_in(city: str) -> dict:
        """Tomorrow's weather forecast for a city."""
        return {"city": city, "sky": "clear"}

    intent = _intents(tmp_path, llm, weather_in).classify("will it rain in Shenzhen tomorrow?")
    assert (intent.capability, intent.parameters) == ("weather_in", {"city": "Shenzhen"})


def test_a_call_read_into_a_question_with_a_name_it_never_wrote_stays_conversation(tmp_path):
    llm = ScriptedLLM([{"route": "chat"}, {"function": "match_score", "arguments": {"team": "Celtics"}}])

    @capability
    def match_score(team: str) -> dict:
        """Score of a team's most recent match."""
        return {"team": team}

    assert _intents(tmp_path, llm, match_score).classify("篮球比赛一节打几分钟？").kind == "chat"


@pytest.mark.parametrize("answer", [
    {"function": "none"},
    {"function": "circle_area", "arguments": {"radius": None}},  # a call the message gives no value of
    {"function": "send_email", "arguments": {"to": "x@example.com", "subject": "hi", "body": None}},  # invented
])
def test_conversation_stays_conversation_unless_the_message_gives_a_call_all_it_needs(tmp_path, answer):
    llm = ScriptedLLM([{"route": "chat"}, answer])
    intent = _intents(tmp_path, llm, send_email, circle_area).classify("what's a nice name for a round garden pond?")
    assert (intent.kind, intent.capability) == ("chat", None)


def test_a_question_of_the_person_s_own_records_is_not_made_a_call_of_a_function_the_model_did_not_choose(tmp_path):
    llm = ScriptedLLM([{"route": "unsupported"}])  # a second model call would run out of replies and fail the test

    @capability
    def stock_quote(symbol: str) -> dict:
        """Get the latest price of a stock by its ticker symbol."""
        return {"symbol": symbol}

    assert _intents(tmp_path, llm, stock_quote).classify("What's my bank account balance?").kind == "unsupported"
    assert len(llm.calls) == 1  # the functions were not asked


def test_greetings_and_thanks_never_ask_the_functions(tmp_path):
    llm = ScriptedLLM([])  # a model call would run out of replies and fail the test
    assert _intents(tmp_path, llm, circle_area).classify("thanks a lot!").kind == "chat" and not llm.calls


def test_without_functions_of_its_own_a_chat_costs_no_second_model_call(tmp_path):
    llm = ScriptedLLM([{"route": "chat"}])
    assert _intents(tmp_path, llm).classify("how do bees make honey from 3 kinds of flowers?").kind == "chat"
    assert len(llm.calls) == 1


def test_one_figure_fills_one_parameter():
    from capabilities.arguments import read_call

    llm = ScriptedLLM([{"function": "triangle", "arguments": {"base": 0.6, "height": 0.6}}])

    @capability
    def triangle(base: float, height: float) -> float:
        """Area of a triangle."""
        return base * height / 2

    assert read_call(llm, [spec_of(triangle)], "a table top of 0.6 m radius") == ("triangle", {})
    llm = ScriptedLLM([{"function": "triangle", "arguments": {"base": 2, "height": 2}}])
    assert read_call(llm, [spec_of(triangle)], "base 2 and height 2") == ("triangle", {"base": 2, "height": 2})


def test_a_request_split_at_a_comma_is_no_plan_of_a_built_in_keyword_beside_own_functions(tmp_path):
    from capabilities.routing.task_planner import TaskPlanner
    from init_plugins import build_registry

    config = load_config({"data_dir": str(tmp_path), "llm": {"backend": "none"}, "memory": {"enabled": False}},
                         env={})
    registry = build_registry(config)
    text = "I need the area of a round table top, 0.6 m radius"
    assert TaskPlanner(registry).plan(text) is not None  # data_query's "table", twice: without own functions
    registry.register_capability(spec_of(circle_area))
    assert TaskPlanner(registry).plan(text) is None
