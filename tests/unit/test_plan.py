"""Plan and PlanStep: the JSON shape, its validation, and dependencies implied by references."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from capabilities.routing.plan import PLAN_SCHEMA, Plan, PlanError, PlanStep


def plan_dict(**overrides) -> dict:
    data = {
        "steps": [
            {"id": "s1", "capability": "http_request", "parameters": {"url": "https://a.example/sales"},
             "depends_on": [], "description": "fetch the sales", "kind": "leaf"},
            {"id": "s2", "capability": "data_query", "parameters": {"sql": "select 1"}, "depends_on": []},
            {"id": "s3", "capability": "send_mail", "parameters": {"body": "${s1.result.total} / ${s2.result.rows[0]}"},
             "depends_on": [], "description": "mail both", "kind": "leaf"},
        ],
        "aggregation": {"strategy": "concat"},
        "source": "llm",
    }
    data.update(overrides)
    return data


def test_a_plan_round_trips_through_json():
    plan = Plan.from_dict(plan_dict())
    again = Plan.from_dict(json.loads(json.dumps(plan.to_dict())))
    assert again == plan
    assert again.to_dict() == plan.to_dict()
    jsonschema.validate(plan.to_dict(), PLAN_SCHEMA)


def test_references_add_the_dependencies_they_imply():
    plan = Plan.from_dict(plan_dict())
    assert plan.step("s3").depends_on == ("s1", "s2")
    assert plan.to_dict()["steps"][2]["depends_on"] == ["s1", "s2"]


def test_explicit_dependencies_come_first_and_are_not_repeated():
    step = PlanStep("s3", "x", {"a": "${s2.result}", "b": "${s1.result}"}, ("s2", "s2", "s0"))
    assert step.depends_on == ("s2", "s0", "s1")


def test_defaults_fill_description_kind_dependencies_and_aggregation():
    plan = Plan.from_dict({"steps": [{"id": "a", "capability": "c", "parameters": {}}]})
    assert plan.steps[0] == PlanStep("a", "c", {}, (), "", "leaf")
    assert plan.aggregation == {"strategy": "concat"} and plan.source == "rules"


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["steps"][1].pop("capability"), "steps[1]"),
    (lambda d: d["steps"][2].update(id="bad id!"), "steps[2].id"),
    (lambda d: d["steps"][0].update(kind="branch"), "steps[0].kind"),
    (lambda d: d["steps"][0].update(parameters=[1]), "steps[0].parameters"),
    (lambda d: d["steps"][1].update(depends_on="s1"), "steps[1].depends_on"),
    (lambda d: d["steps"][1].update(extra=1), "steps[1]"),
    (lambda d: d.update(aggregation={"strategy": "median"}), "aggregation.strategy"),
    (lambda d: d.update(steps=[]), "steps"),
    (lambda d: d.update(source="guess"), "source"),
])
def test_schema_errors_name_the_field(mutate, field):
    data = plan_dict()
    mutate(data)
    with pytest.raises(PlanError) as info:
        Plan.from_dict(data)
    assert str(info.value).startswith(field + ":"), str(info.value)


def test_an_unknown_dependency_names_the_step_and_field():
    data = plan_dict()
    data["steps"][1]["depends_on"] = ["s9"]
    with pytest.raises(PlanError, match=r"^steps\[1\]\.depends_on: unknown step 's9'$"):
        Plan.from_dict(data)


def test_a_reference_to_an_unknown_step_names_the_parameters():
    data = plan_dict()
    data["steps"][0]["parameters"] = {"url": "${s7.result.url}"}
    with pytest.raises(PlanError, match=r"^steps\[0\]\.parameters: unknown step 's7'"):
        Plan.from_dict(data)


def test_a_repeated_id_is_refused():
    data = plan_dict()
    data["steps"][2]["id"] = "s1"
    with pytest.raises(PlanError, match=r"^steps\[2\]\.id: 's1' is already the id of steps\[0\]"):
        Plan.from_dict(data)


def test_a_misspelt_reference_is_refused_with_its_place():
    data = plan_dict()
    data["steps"][2]["parameters"] = {"body": {"text": "${s1.output}"}}
    with pytest.raises(PlanError, match=r"^steps\[2\]\.parameters\.body\.text: '\$\{s1\.output\}' is not a reference"):
        Plan.from_dict(data)


def test_max_steps_limits_a_plan_read_from_json():
    with pytest.raises(PlanError, match="^steps: 3 steps, more than the 2 allowed"):
        Plan.from_dict(plan_dict(), max_steps=2)
    assert len(Plan.from_dict(plan_dict(), max_steps=3).steps) == 3


def test_a_plan_that_is_not_an_object_is_refused():
    with pytest.raises(PlanError, match=r"^\(root\)"):
        Plan.from_dict([1, 2])


def test_a_plan_built_in_code_is_checked_too():
    with pytest.raises(PlanError, match=r"^steps\[1\]\.depends_on: unknown step 'zz'"):
        Plan((PlanStep("a", "c", {}), PlanStep("b", "c", {}, ("zz",))))
    with pytest.raises(PlanError, match=r"^aggregation\.strategy"):
        Plan((PlanStep("a", "c", {}),), {"strategy": "best"})


def test_from_dict_does_not_keep_the_callers_objects():
    data = plan_dict()
    before = copy.deepcopy(data)
    plan = Plan.from_dict(data)
    data["steps"][0]["parameters"]["url"] = "changed"
    assert plan.step("s1").parameters["url"] == "https://a.example/sales"
    plan.to_dict()["steps"][0]["parameters"]["url"] = "changed too"
    assert plan.step("s1").parameters["url"] == "https://a.example/sales"
    data["steps"][0]["parameters"]["url"] = "https://a.example/sales"
    assert data == before


def test_plan_schema_is_a_valid_schema_that_accepts_to_dict():
    jsonschema.Draft202012Validator.check_schema(PLAN_SCHEMA)
    plan = Plan((PlanStep("s1", "c", {"x": "${s1.result}"}, (), "refine", "intermediate"),), {"strategy": "voting"})
    jsonschema.validate(plan.to_dict(), PLAN_SCHEMA)
    assert plan.steps[0].self_loop
