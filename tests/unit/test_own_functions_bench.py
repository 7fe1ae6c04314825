"""bench/own_functions.py: its functions load as skills, and its scoring is what its docstring says."""

import json

from bench.own_functions import Library, install, load_cases, read_calls, same_value, score_call, tool_calls
from capabilities.base import ExecutionContext
from capabilities.registry import CapabilityRegistry
from capabilities.skills import SkillLoader


def test_every_function_a_case_offers_loads_as_a_skill_of_its_own_and_records_its_call(tmp_path):
    library, calls = Library(), tmp_path / "calls.jsonl"
    names = sorted({name for case in load_cases() for name in case["functions"]})
    (tmp_path / "skills").mkdir()
    install(tmp_path / "skills", library, names, calls)
    registry = CapabilityRegistry()
    loader = SkillLoader([tmp_path / "skills"])
    loader.attach(registry)
    assert loader.problems() == {}
    assert sorted(n for loaded in loader.skills().values() for n in loaded) == names
    spec = registry.get_executable("route_duration")
    assert spec.parameters["properties"]["mode"]["enum"] == ["driving", "walking", "cycling", "transit"]
    spec.invoke({"origin": "a", "destination": "b", "mode": "walking"}, ExecutionContext(task_id="t", user_id="u"))
    assert read_calls(calls) == [{"function": "route_duration",
                                  "arguments": {"origin": "a", "destination": "b", "mode": "walking"}}]


def test_a_case_is_right_with_the_expected_function_and_arguments_only():
    specs = Library().specs()
    case = {"expect": {"function": "split_bill", "arguments": {"total": 186, "people": 4,
                                                                "tip_percent": {"one_of": [18, 0.18]}}}}
    call = {"function": "split_bill", "arguments": {"total": 186.0, "people": 4, "tip_percent": 0.18}}
    assert score_call(case, [call], specs) == (True, "")
    assert score_call(case, [], specs) == (False, "no call")
    assert not score_call(case, [{**call, "arguments": {**call["arguments"], "people": 5}}], specs)[0]
    assert not score_call(case, [call, {"function": "sales_tax", "arguments": {}}], specs)[0]
    irrelevant = {"expect": None}
    assert score_call(irrelevant, [], specs) == (True, "")
    assert not score_call(irrelevant, [call], specs)[0]


def test_an_argument_not_asked_for_must_be_its_default():
    specs = Library().specs()
    case = {"expect": {"function": "set_timer", "arguments": {"minutes": 25}}}
    assert score_call(case, [{"function": "set_timer", "arguments": {"minutes": 25, "label": ""}}], specs)[0]
    assert not score_call(case, [{"function": "set_timer", "arguments": {"minutes": 25, "label": "tea"}}], specs)[0]


def test_values_compare_as_the_docstring_says():
    assert same_value(0.6, "0.6") and not same_value(0.6, 0.61)
    assert same_value("Luigi's", "luigi’s") and same_value("Boston", " boston. ")
    assert same_value("I'm running ten minutes late", "I'm running ten minutes late!")
    assert not same_value("Paris", "a very long sentence that mentions paris somewhere in the middle of it")
    assert same_value(["eggs", "feta"], ["Eggs", "feta"]) and not same_value(["eggs"], ["eggs", "feta"])


def test_the_raw_reply_s_calls_are_read_tagged_or_not():
    tagged = '<tool_call>\n{"name": "bmi", "arguments": {"weight_kg": 70}}\n</tool_call>'
    fenced = '```json\n{"name": "bmi", "arguments": "{\\"weight_kg\\": 70}"}\n```'
    assert tool_calls(tagged) == tool_calls(fenced) == [{"function": "bmi", "arguments": {"weight_kg": 70}}]
    assert tool_calls("Your BMI is {about 22}.") == []


def test_the_cases_are_well_formed():
    cases = load_cases()
    functions = set(Library().functions)
    assert len(cases) >= 150 and len({c["id"] for c in cases}) == len(cases)
    for case in cases:
        assert set(case["functions"]) <= functions and 1 <= len(case["functions"]) <= 4, case["id"]
        assert (case["expect"] is None) == (case["category"] == "irrelevant"), case["id"]
        assert case["category"] != "multiple" or len(case["functions"]) >= 2, case["id"]
        if case["expect"]:
            assert case["expect"]["function"] in case["functions"], case["id"]
    json.dumps(cases)


def test_the_request_said_back_is_no_invented_fact():
    from bench.own_functions import invented

    case = {"request": "who won the football match in my town last night?", "unknowable": True,
            "invented": ["won ", "beat "]}
    assert not invented(case, "I'm sorry, but I cannot determine who won the football match in your town last night.")
    assert invented(case, "Rovers won the match last night, 2-1.")
    assert invented(case, "The Tigers won easily.")
