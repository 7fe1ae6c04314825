"""ParallelTaskAggregator: the parallel decision for a plan (serial, fixed or tuned by
Optuna) and what a finished plan reports to the optimizer."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from capabilities.parallel.optuna_optimizer import OptunaOptimizer
from capabilities.routing.plan import Plan, PlanStep
from capability_actors.parallel_task_aggregator import SERIAL, ParallelTaskAggregator, main_capability
from capability_actors.task_group_actions import Setting
from config import load_config


def make_plan(deps: dict[str, list[str]], capability="fetch") -> Plan:
    return Plan(tuple(PlanStep(sid, capability, {}, tuple(d)) for sid, d in deps.items()))


WIDE = {"a": [], "b": [], "c": ["a", "b"]}


@pytest.fixture
def optimizer(tmp_path):
    return OptunaOptimizer(f"sqlite:///{tmp_path}/optuna.db", max_concurrency=6, max_batch=3, seed=5)


def planning(tmp_path, **section):
    return load_config({"data_dir": str(tmp_path), "planning": section}, env={}).planning


def test_a_chain_runs_serially_and_spends_no_trial(tmp_path, optimizer):
    parallel = ParallelTaskAggregator(planning(tmp_path), optimizer)
    for deps in ({"a": []}, {"a": [], "b": ["a"], "c": ["b"]}):
        assert parallel.decide(make_plan(deps)) == Setting(1, 1, mode=SERIAL)
    assert optimizer.trials("fetch") == [] and optimizer.best("fetch") is None


def test_fixed_uses_the_configured_width(tmp_path, optimizer):
    parallel = ParallelTaskAggregator(planning(tmp_path, parallelism="fixed", concurrency=5, batch_size=2), optimizer)
    assert parallel.decide(make_plan(WIDE)) == Setting(5, 2, mode="fixed")
    no_optimizer = ParallelTaskAggregator(planning(tmp_path, concurrency=3), None)
    assert no_optimizer.decide(make_plan(WIDE)) == Setting(3, 1, mode="fixed")


def test_tuned_asks_optuna_for_the_main_capability_and_reports_an_unattended_run(tmp_path, optimizer):
    parallel = ParallelTaskAggregator(planning(tmp_path), optimizer)
    plan = Plan(tuple(PlanStep(sid, cap, {}, ()) for sid, cap in (("a", "fetch"), ("b", "fetch"), ("c", "write"))))
    assert main_capability(plan) == "fetch"
    setting = parallel.decide(plan)
    assert setting.mode == "tuned" and setting.trial is not None
    assert 1 <= setting.concurrency <= 6 and 1 <= setting.batch_size <= 3

    run = SimpleNamespace(setting=setting, plan=plan, was_paused=False, items=3, errors_seen=1, elapsed_s=2.0)
    parallel.observe(run, "completed")
    (trial,) = optimizer.trials("fetch")
    assert trial["value"] == pytest.approx(1.5) and trial["errors"] == 1 and trial["items"] == 4


@pytest.mark.parametrize("paused, how", [(True, "completed"), (False, "abandoned")])
def test_a_paused_or_cancelled_plan_teaches_the_optimizer_nothing(tmp_path, optimizer, paused, how):
    parallel = ParallelTaskAggregator(planning(tmp_path), optimizer)
    setting = parallel.decide(make_plan(WIDE))
    run = SimpleNamespace(setting=setting, plan=make_plan(WIDE), was_paused=paused, items=3, errors_seen=0,
                          elapsed_s=1.0)
    parallel.observe(run, how)
    assert optimizer.trials("fetch") == []
