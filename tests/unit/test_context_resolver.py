"""ContextResolver: references from one step's output into another step's parameters."""

from __future__ import annotations

import copy

import pytest

from capabilities.routing.context_resolver import ContextResolver, UnresolvedReference

RESULTS = {
    "s1": {"items": [{"name": "north", "total": 12.5}, {"name": "south", "total": 7}], "count": 2},
    "s2": [10, 20, 30],
    "s3": "plain text",
    "s4": None,
}


@pytest.fixture
def resolver() -> ContextResolver:
    return ContextResolver()


def test_a_whole_reference_keeps_the_type_of_the_value(resolver):
    out = resolver.resolve({"rows": "${s1.result.items}", "n": "${s1.result.count}", "all": "${s2.result}",
                            "total": "${s1.result.items[0].total}", "none": "${s4.result}"}, RESULTS)
    assert out == {"rows": RESULTS["s1"]["items"], "n": 2, "all": [10, 20, 30], "total": 12.5, "none": None}
    assert isinstance(out["n"], int) and isinstance(out["total"], float)


def test_nested_paths_and_list_indexes_reach_inside_the_result(resolver):
    out = resolver.resolve({"a": "${s1.result.items[1].name}", "last": "${s2.result[-1]}",
                            "dotted": "${s2.result.0}"}, RESULTS)
    assert out == {"a": "south", "last": 30, "dotted": 10}


def test_references_inside_nested_dicts_and_lists_are_resolved(resolver):
    params = {"body": {"regions": ["${s1.result.items[0].name}", {"deep": "${s2.result[1]}"}]}, "keep": 3}
    assert resolver.resolve(params, RESULTS) == {"body": {"regions": ["north", {"deep": 20}]}, "keep": 3}


def test_a_reference_inside_a_longer_string_becomes_its_text(resolver):
    out = resolver.resolve({"q": "top: ${s1.result.items[0].name} (${s1.result.count} regions) ${s4.result}|",
                            "json": "data=${s2.result}", "obj": "x ${s1.result.items[1]}", "s": "say ${s3.result}"},
                           RESULTS)
    assert out["q"] == "top: north (2 regions) |"
    assert out["json"] == "data=[10, 20, 30]"
    assert out["obj"] == 'x {"name": "south", "total": 7}'
    assert out["s"] == "say plain text"


def test_a_missing_step_raises_naming_step_and_place(resolver):
    with pytest.raises(UnresolvedReference) as info:
        resolver.resolve({"body": {"x": "${s9.result.a}"}}, RESULTS)
    assert info.value.step == "s9"
    assert info.value.path == ".a"
    assert "parameters.body.x" in str(info.value) and "'s9'" in str(info.value)


def test_missing_null_gives_none_for_a_step_without_result(resolver):
    out = resolver.resolve({"prev": "${s9.result}", "text": "before: ${s9.result.x}."}, RESULTS, missing="null")
    assert out == {"prev": None, "text": "before: ."}


@pytest.mark.parametrize("ref, fragment", [
    ("${s1.result.nope}", "no member 'nope'"),
    ("${s1.result.items[5]}", "no item 5"),
    ("${s3.result.x}", "is a str"),
    ("${s2.result.x}", "is a list"),
    ("${s1.result[0]}", "not a list"),
])
def test_a_path_that_is_not_in_the_result_raises_even_with_missing_null(resolver, ref, fragment):
    with pytest.raises(UnresolvedReference, match=fragment):
        resolver.resolve({"v": ref}, RESULTS, missing="null")


def test_resolve_never_mutates_parameters_or_results(resolver):
    params = {"rows": "${s1.result.items}", "list": ["${s2.result}"], "const": {"a": [1]}}
    results = copy.deepcopy(RESULTS)
    before_params, before_results = copy.deepcopy(params), copy.deepcopy(results)
    out = resolver.resolve(params, results)
    out["rows"][0]["name"] = "changed"
    out["list"][0].append(99)
    out["const"]["a"].append(2)
    assert params == before_params
    assert results == before_results


def test_references_lists_every_step_mentioned_anywhere(resolver):
    params = {"a": "${s1.result}", "b": ["x ${s2.result.k} y ${s3.result[0]}"], "c": {"d": {"e": "${s1.result.z}"}},
              "shell": "echo ${HOME}", "n": 5}
    assert resolver.references(params) == {"s1", "s2", "s3"}
    assert resolver.references({"x": "no references"}) == set()


def test_shell_variables_are_not_references_and_pass_through(resolver):
    params = {"cmd": "echo ${HOME} $PATH"}
    assert resolver.resolve(params, {}) == params
    assert resolver.malformed(params) == []


def test_malformed_reports_a_reference_that_is_misspelt(resolver):
    found = resolver.malformed({"a": {"b": "${s1.output}"}, "ok": "${s1.result.x}"})
    assert found == [("parameters.a.b", "${s1.output}")]


def test_an_unknown_missing_mode_is_refused(resolver):
    with pytest.raises(ValueError, match="missing"):
        resolver.resolve({}, {}, missing="skip")
