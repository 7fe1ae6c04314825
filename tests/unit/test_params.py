"""check_parameters: text answers coerced to the schema's types, then judged by a real validator."""

from __future__ import annotations

import copy

import pytest

from capabilities.base import CapabilitySpec
from capabilities.params import check_parameters, coerce, describe_missing
from common import messages as m


def spec(properties: dict, required: list[str] = (), **schema) -> CapabilitySpec:
    return CapabilitySpec(name="forecast", description="weather forecast", handler=lambda **kw: kw,
                          parameters={"type": "object", "properties": properties, "required": list(required),
                                      **schema})


FORECAST = spec({
    "city": {"type": "string", "description": "The city to forecast"},
    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "title": "Temperature unit"},
    "days": {"type": "integer", "description": "How many days", "default": 3, "minimum": 1},
    "alerts": {"type": "boolean"},
    "filters": {"type": "object"},
    "hours": {"type": "array", "items": {"type": "integer"}},
    "tags": {"type": "array", "items": {"type": "string"}},
    "ratio": {"type": "number"},
}, required=["city", "unit"], additionalProperties=False)


def test_all_values_present_and_valid_is_complete():
    result = check_parameters(FORECAST, {"city": "Paris", "unit": "celsius", "days": 5})
    assert result.complete
    assert result.values == {"city": "Paris", "unit": "celsius", "days": 5}
    assert result.to_ask == []


def test_missing_required_are_listed_in_schema_order_with_their_descriptions():
    result = check_parameters(FORECAST, {})
    assert not result.complete
    assert result.missing == [
        {"name": "city", "description": "The city to forecast", "schema": FORECAST.properties["city"]},
        {"name": "unit", "description": "Temperature unit", "schema": FORECAST.properties["unit"]},
    ]
    assert result.invalid == []


def test_a_parameter_without_description_or_title_is_described_by_its_name():
    (item,) = describe_missing(spec({"q": {"type": "string"}}, ["q"]), ["q"])
    assert item == {"name": "q", "description": "q", "schema": {"type": "string"}}


@pytest.mark.parametrize("empty", ["", None])
def test_empty_answers_count_as_missing(empty):
    result = check_parameters(FORECAST, {"city": empty, "unit": "celsius"})
    assert [item["name"] for item in result.missing] == ["city"]
    assert "city" not in result.values


@pytest.mark.parametrize("text, value", [("5", 5), (" 12 ", 12), ("-2", -2)])
def test_integer_text_becomes_an_integer(text, value):
    coerced = coerce(text, {"type": "integer"})
    assert coerced == value and isinstance(coerced, int)


def test_integer_text_is_coerced_before_validation():
    result = check_parameters(FORECAST, {"city": "Paris", "unit": "celsius", "days": "5"})
    assert result.complete and result.values["days"] == 5 and isinstance(result.values["days"], int)


@pytest.mark.parametrize("text, value", [("2.5", 2.5), ("3", 3), ("1e3", 1000.0)])
def test_number_text_becomes_a_number(text, value):
    assert coerce(text, {"type": "number"}) == value


@pytest.mark.parametrize("text", ["yes", "Y", "true", "ON", "1", "ok", "是", "好", "对", "确认"])
def test_affirmative_text_becomes_true(text):
    result = check_parameters(FORECAST, {"city": "Paris", "unit": "celsius", "alerts": text})
    assert result.complete and result.values["alerts"] is True


@pytest.mark.parametrize("text", ["no", "N", "false", "off", "0", "否", "不", "不是", "取消"])
def test_negative_text_becomes_false(text):
    result = check_parameters(FORECAST, {"city": "Paris", "unit": "celsius", "alerts": text})
    assert result.complete and result.values["alerts"] is False


def test_json_text_becomes_an_object_or_a_list():
    result = check_parameters(FORECAST, {"city": "Paris", "unit": "celsius",
                                         "filters": '{"region": "北部", "max": 3}', "hours": "[6, 12, 18]"})
    assert result.complete
    assert result.values["filters"] == {"region": "北部", "max": 3}
    assert result.values["hours"] == [6, 12, 18]


def test_comma_separated_text_becomes_a_list():
    result = check_parameters(FORECAST, {"city": "Paris", "unit": "celsius", "tags": "rain, wind ,"})
    assert result.values["tags"] == ["rain", "wind"]


def test_quoted_text_is_unquoted_for_a_string():
    assert check_parameters(FORECAST, {"city": '"Paris"', "unit": "'celsius'"}).values == \
        {"city": "Paris", "unit": "celsius", "days": 3}


def test_values_already_of_the_right_type_are_left_alone():
    assert coerce(7, {"type": "integer"}) == 7
    assert coerce({"a": 1}, {"type": "object"}) == {"a": 1}


def test_wrong_type_is_refused_with_a_reason_and_removed():
    result = check_parameters(FORECAST, {"city": "Paris", "unit": "celsius", "days": "five"})
    assert not result.complete
    assert result.invalid == [{"name": "days", "description": "How many days",
                               "schema": FORECAST.properties["days"], "reason": "must be a whole number"}]
    assert "days" not in result.values
    assert result.missing == []


@pytest.mark.parametrize("name, text, reason", [
    ("alerts", "maybe", "must be yes or no"),
    ("ratio", "lots", "must be a number"),
    ("filters", "region north", "must be a JSON object"),
    ("unit", "kelvin", "must be one of: celsius, fahrenheit"),
])
def test_refusals_give_a_reason_a_person_understands(name, text, reason):
    given = {"city": "Paris", "unit": "celsius", name: text}
    (refused,) = check_parameters(FORECAST, given).invalid
    assert (refused["name"], refused["reason"]) == (name, reason)


def test_a_refused_required_value_is_asked_again_once_with_its_reason():
    result = check_parameters(FORECAST, {"city": "Paris", "unit": "kelvin"})
    assert [item["name"] for item in result.invalid] == ["unit"]
    assert result.missing == []
    assert result.values == {"city": "Paris", "days": 3}


def test_bounds_are_enforced_by_the_schema():
    (refused,) = check_parameters(FORECAST, {"city": "Paris", "unit": "celsius", "days": "0"}).invalid
    assert refused["name"] == "days" and "minimum" in refused["reason"]


def test_type_list_reason_names_every_allowed_type():
    either = spec({"limit": {"type": ["integer", "boolean"]}})
    (refused,) = check_parameters(either, {"limit": "lots"}).invalid
    assert refused["reason"] == "must be a whole number or yes or no"
    assert check_parameters(either, {"limit": "10"}).values == {"limit": 10}


def test_defaults_fill_absent_values_but_not_given_ones():
    assert check_parameters(FORECAST, {"city": "Paris", "unit": "celsius"}).values["days"] == 3
    assert check_parameters(FORECAST, {"city": "Paris", "unit": "celsius", "days": "7"}).values["days"] == 7


def test_a_required_parameter_with_a_default_is_not_missing():
    result = check_parameters(spec({"lang": {"type": "string", "default": "en"}}, ["lang"]), {})
    assert result.complete and result.values == {"lang": "en"}


def test_unknown_parameters_are_dropped_when_the_schema_forbids_extras():
    result = check_parameters(FORECAST, {"city": "Paris", "unit": "celsius", "colour": "red", "mood": "🙂"})
    assert result.complete
    assert result.values == {"city": "Paris", "unit": "celsius", "days": 3}


def test_unknown_parameters_are_kept_when_the_schema_allows_extras():
    open_spec = spec({"city": {"type": "string"}}, ["city"])
    assert check_parameters(open_spec, {"city": "Paris", "colour": "red"}).values == {"city": "Paris", "colour": "red"}


def test_to_ask_puts_refused_values_before_missing_ones():
    result = check_parameters(FORECAST, {"unit": "kelvin", "days": "many"})
    assert [item["name"] for item in result.to_ask] == ["unit", "days", "city"]
    assert all("reason" in item for item in result.to_ask[:2]) and "reason" not in result.to_ask[2]


def test_what_to_ask_fits_a_task_paused_message():
    result = check_parameters(FORECAST, {"unit": "kelvin"})
    msg = m.task_paused(msg_id="msg_1", task_id="t1", message="I need more.", missing_parameters=result.to_ask)
    assert m.validate(msg)["missing_parameters"] == result.to_ask


def test_check_parameters_does_not_change_the_given_values():
    given = {"city": '"Paris"', "unit": "kelvin", "days": "5", "colour": "red"}
    before = copy.deepcopy(given)
    check_parameters(FORECAST, given)
    assert given == before
