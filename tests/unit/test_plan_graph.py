"""PlanGraph: Tarjan's SCCs, the condensed units in topological order, ready units, critical path."""

from __future__ import annotations

import random
import sys

import pytest

from capabilities.routing.plan import Plan, PlanStep
from capabilities.routing.plan_graph import PlanGraph, Unit


def make_plan(deps: dict[str, list[str]]) -> Plan:
    return Plan(tuple(PlanStep(sid, "work", {}, tuple(d)) for sid, d in deps.items()))


def brute_force_sccs(deps: dict[str, list[str]]) -> set[frozenset[str]]:
    reach = {n: {n} for n in deps}
    changed = True
    while changed:
        changed = False
        for n in deps:
            extra = set().union(*(reach[d] for d in deps[n])) - reach[n]
            if extra:
                reach[n] |= extra
                changed = True
    return {frozenset(m for m in deps if m in reach[n] and n in reach[m]) for n in deps}


def assert_topological(graph: PlanGraph) -> None:
    seen: set[str] = set()
    for unit in graph.units():
        assert unit.depends_on <= seen, f"{unit.id} comes before {unit.depends_on - seen}"
        seen.add(unit.id)


def test_a_cycle_becomes_one_coupled_unit_in_plan_order():
    graph = PlanGraph(make_plan({"s1": [], "s2": ["s1", "s3"], "s3": ["s2"], "s4": ["s3"]}))
    assert graph.sccs() == [("s1",), ("s2", "s3"), ("s4",)]
    assert graph.units() == [
        Unit("s1", ("s1",), frozenset()),
        Unit("scc:s2+s3", ("s2", "s3"), frozenset({"s1"})),
        Unit("s4", ("s4",), frozenset({"scc:s2+s3"})),
    ]
    assert [u.coupled for u in graph.units()] == [False, True, False]
    assert graph.unit_of("s3").id == "scc:s2+s3"


def test_a_cycle_through_references_is_found():
    plan = Plan((PlanStep("draft", "write", {"notes": "${review.result.notes}"}),
                 PlanStep("review", "critique", {"text": "${draft.result}"})))
    assert PlanGraph(plan).sccs() == [("draft", "review")]
    assert PlanGraph(plan).units()[0].id == "scc:draft+review"


def test_a_self_loop_is_a_coupled_unit_of_one_step():
    plan = Plan((PlanStep("s1", "w", {}), PlanStep("s2", "refine", {"prev": "${s2.result}"}, ("s1",))))
    graph = PlanGraph(plan)
    assert graph.sccs() == [("s1",), ("s2",)]
    assert [(u.id, u.coupled) for u in graph.units()] == [("s1", False), ("scc:s2", True)]


def test_two_cycles_and_a_bridge():
    deps = {"a": ["b"], "b": ["a"], "c": ["b", "d"], "d": ["c"], "e": []}
    graph = PlanGraph(make_plan(deps))
    assert set(map(frozenset, graph.sccs())) == brute_force_sccs(deps)
    assert [u.id for u in graph.units()] == ["scc:a+b", "scc:c+d", "e"]
    assert_topological(graph)


@pytest.mark.parametrize("seed", range(25))
def test_tarjan_agrees_with_brute_force_on_random_graphs(seed):
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(rng.randint(1, 30))]
    deps = {n: sorted({rng.choice(names) for _ in range(rng.randint(0, 3))}) for n in names}
    graph = PlanGraph(make_plan(deps))
    found = graph.sccs()
    assert sorted(s for c in found for s in c) == sorted(names)  # every step in exactly one
    assert set(map(frozenset, found)) == brute_force_sccs(deps)
    assert_topological(graph)


def test_a_50_step_dag_has_50_units_in_topological_order():
    rng = random.Random(7)
    deps = {f"s{i}": sorted({f"s{rng.randrange(i)}" for _ in range(rng.randint(0, 3))}) if i else []
            for i in range(50)}
    graph = PlanGraph(make_plan(deps))
    units = graph.units()
    assert len(units) == 50 and not any(u.coupled for u in units)
    assert_topological(graph)


def test_a_5000_step_chain_needs_no_recursion():
    n = 5000
    assert n > sys.getrecursionlimit()
    deps = {f"s{i}": [f"s{i - 1}"] if i else [] for i in range(n)}
    graph = PlanGraph(make_plan(deps))
    assert len(graph.sccs()) == n
    assert [u.id for u in graph.units()] == [f"s{i}" for i in range(n)]
    assert graph.critical_path({f"s{i}": 1.0 for i in range(n)}) == n


def test_a_5000_step_cycle_is_one_unit():
    n = 5000
    deps = {f"s{i}": [f"s{(i - 1) % n}"] for i in range(n)}
    units = PlanGraph(make_plan(deps)).units()
    assert len(units) == 1 and units[0].coupled and len(units[0].step_ids) == n


def test_ready_gives_units_whose_dependencies_are_done():
    graph = PlanGraph(make_plan({"a": [], "b": [], "c": ["a", "d"], "d": ["c"], "e": ["c", "b"]}))
    assert [u.id for u in graph.ready(set(), set())] == ["a", "b"]
    assert [u.id for u in graph.ready(set(), {"a"})] == ["b"]
    assert [u.id for u in graph.ready({"a"}, {"b"})] == ["scc:c+d"]
    assert [u.id for u in graph.ready({"a", "scc:c+d"}, set())] == ["b"]
    assert [u.id for u in graph.ready({"a", "b", "scc:c+d"}, set())] == ["e"]
    assert graph.ready({"a", "b", "scc:c+d", "e"}, set()) == []


def test_critical_path_is_the_longest_chain_by_duration():
    graph = PlanGraph(make_plan({"a": [], "b": [], "c": ["a"], "d": ["b", "c"]}))
    durations = {"a": 1.0, "b": 5.0, "c": 2.0, "d": 1.5}
    assert graph.critical_path(durations) == 6.5  # b then d beats a, c, d (4.5)


def test_a_coupled_unit_lasts_its_steps_times_the_rounds():
    graph = PlanGraph(make_plan({"a": [], "b": ["a", "c"], "c": ["b"], "d": ["c"]}))
    durations = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 0.5}
    assert graph.critical_path(durations) == 1.0 + 5.0 + 0.5
    assert graph.critical_path(durations, rounds=2) == 1.0 + 10.0 + 0.5


def test_critical_path_names_a_step_without_a_duration():
    graph = PlanGraph(make_plan({"a": [], "b": ["a"]}))
    with pytest.raises(ValueError, match="'b'"):
        graph.critical_path({"a": 1.0})


@pytest.mark.parametrize("deps, width", [
    ({"a": []}, 1),
    ({"a": [], "b": ["a"], "c": ["b"]}, 1),  # a chain
    ({"a": ["b"], "b": ["a"], "c": ["a"]}, 1),  # a coupled unit, then c: still a chain of units
    ({"a": [], "b": [], "c": ["a", "b"]}, 2),
    ({"a": [], "b": ["a"], "c": ["a"], "d": ["a"], "e": ["b", "c", "d"]}, 3),
    ({"a": [], "b": ["a"], "c": []}, 2),  # c runs beside a, or beside b
])
def test_width_says_how_many_units_can_run_at_once(deps, width):
    assert PlanGraph(make_plan(deps)).width() == width


def test_width_one_means_every_unit_waits_for_the_one_before():
    rng = random.Random(3)
    for _ in range(200):
        n = rng.randint(1, 8)
        deps = {f"s{i}": [f"s{j}" for j in range(i) if rng.random() < 0.3] for i in range(n)}
        units = PlanGraph(make_plan(deps)).units()
        chain = all(units[i].id in _reaches(units, units[i + 1].id) for i in range(len(units) - 1))
        assert (PlanGraph(make_plan(deps)).width() == 1) == chain


def _reaches(units: list[Unit], unit_id: str) -> set[str]:
    """The units ``unit_id`` waits for, directly or not."""
    by_id = {u.id: u for u in units}
    seen, todo = set(), [unit_id]
    while todo:
        for dep in by_id[todo.pop()].depends_on:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen
