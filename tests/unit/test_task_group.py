"""TaskGroupRunner and TaskGroupService without actors: a plan's steps dispatched by their
dependencies, references resolved, retries, failure policies, cancel, pause/resume, coupled
units, aggregation and the optimizer's report. Every test runs on SQLite and on Redis."""

from __future__ import annotations

import pytest

from capabilities.aggregation.result_aggregator import ResultAggregator
from capabilities.context.conversation_manager import ConversationManager
from capabilities.parallel.optuna_optimizer import OptunaOptimizer
from capabilities.registry import CapabilityRegistry
from capabilities.routing.context_resolver import ContextResolver
from capabilities.routing.plan import Plan
from capability_actors.plan_outcome import aggregate_reply
from capability_actors.task_group import PLAN_CAPABILITY, TaskGroupRunner
from capability_actors.task_group_actions import CONTINUE, Aggregate, Dispatch, GroupPolicy, Report, Retry, Setting
from capability_actors.task_group_service import TaskGroupService
from common import messages as m
from common.tasks.cancel import cancel_task_tree
from common.tasks.models import PLANNED, TaskRecord
from config import load_config
from events.event_bus import EventBus
from tests.support import sample_plugins

TENANT, USER = "default", "alice"


def step(sid, capability="add_numbers", depends_on=(), kind="leaf", **parameters):
    return {"id": sid, "capability": capability, "parameters": parameters, "depends_on": list(depends_on),
            "kind": kind}


def plan_task(events, steps, aggregation=None, task_id="task_plan", content="several things") -> TaskRecord:
    plan = Plan.from_dict({"steps": steps, "aggregation": aggregation or {"strategy": "concat"}})
    task = TaskRecord(task_id=task_id, tenant_id=TENANT, user_id=USER, content=content, msg_id="msg_1",
                      capability=PLAN_CAPABILITY, meta={"plan": plan.to_dict(), "children": {}})
    events.create_task(task, source="test")
    return events.transition(TENANT, task_id, PLANNED, source="test", event_type="PLAN_CREATED")


@pytest.fixture
def events(store):
    return EventBus(store)


def runner_for(store, events, parent, *, concurrency=4, batch=1, **policy) -> TaskGroupRunner:
    return TaskGroupRunner(parent, events=events, store=store, resolver=ContextResolver(),
                           setting=Setting(concurrency, batch), policy=GroupPolicy(**policy))


def sent(actions) -> list[dict]:
    return [msg for a in actions if isinstance(a, Dispatch) for msg in a.messages]


def reports(actions, via) -> list[dict]:
    """The messages for the AgentActor. A plan whose steps all ended asks to be aggregated first:
    that is answered as the ResultAggregatorActor answers, through ``via`` (the runner or the
    service that asked)."""
    out = []
    for action in actions:
        if isinstance(action, Aggregate):
            out += reports(via.on_aggregated(aggregate_reply(action.message, ResultAggregator())), via)
        elif isinstance(action, Report):
            out.append(action.message)
    return out


def ok(msg: dict, result) -> dict:
    return m.subtask_result(task_id=msg["task_id"], tenant_id=TENANT, capability=msg["capability"], ok=True,
                            result=result)


def failed(msg: dict, *, retryable: bool, error="the backend said no") -> dict:
    return m.subtask_result(task_id=msg["task_id"], tenant_id=TENANT, capability=msg["capability"], ok=False,
                            error_type="capability_failed", error=error, retryable=retryable)


def by_step(store, messages) -> dict[str, dict]:
    return {store.get_task(TENANT, msg["task_id"]).meta["step"]: msg for msg in messages}


def test_independent_steps_start_together_and_a_reference_carries_an_earlier_result(store, events):
    parent = plan_task(events, [step("s1", a=1, b=2), step("s2", a=10, b=20),
                                step("s3", a="${s1.result.sum}", b=100)])
    runner = runner_for(store, events, parent)
    first = by_step(store, sent(runner.start()))
    assert sorted(first) == ["s1", "s2"]  # s3 waits for s1
    assert store.get_task(TENANT, parent.task_id).state == "running"

    after_s1 = by_step(store, sent(runner.on_result(ok(first["s1"], {"sum": 3}))))
    assert list(after_s1) == ["s3"]
    assert after_s1["s3"]["parameters"] == {"a": 3, "b": 100}  # the number, not the text "3"

    assert runner.on_result(ok(first["s2"], {"sum": 30})) == []
    (done,) = reports(runner.on_result(ok(after_s1["s3"], {"sum": 103})), runner)
    assert done["message_type"] == "plan_result" and done["ok"] is True
    assert done["result"]["value"] == [{"source": "s1", "value": {"sum": 3}}, {"source": "s2", "value": {"sum": 30}},
                                       {"source": "s3", "value": {"sum": 103}}]
    assert done["result"]["plan"]["steps"][2]["depends_on"] == ["s1"]

    task = store.get_task(TENANT, parent.task_id)
    assert task.state == "completed" and task.result == done["result"]
    children = [store.get_task(TENANT, cid) for cid in task.meta["children"].values()]
    assert {c.meta["step"] for c in children} == {"s1", "s2", "s3"}
    assert all(c.state == "completed" and c.meta["parent"] == parent.task_id for c in children)
    kinds = [e.event_type for e in store.events(TENANT, task_id=parent.task_id)]
    assert kinds.count("STEP_STARTED") == 3 and kinds.count("STEP_COMPLETED") == 3
    assert kinds[-1] == "PLAN_COMPLETED"


def test_concurrency_caps_the_steps_in_flight_and_batches_group_them(store, events):
    parent = plan_task(events, [step(f"s{i}", a=i, b=i) for i in range(1, 6)])
    runner = runner_for(store, events, parent, concurrency=3, batch=2)
    actions = runner.start()
    assert [len(a.messages) for a in actions if isinstance(a, Dispatch)] == [2, 1]
    first = sent(actions)
    more = sent(runner.on_result(ok(first[0], {"sum": 0})))
    assert len(more) == 1 and len(runner.in_flight) == 3


def test_a_retryable_failure_is_retried_after_a_growing_backoff_then_succeeds(store, events):
    parent = plan_task(events, [step("s1", a=1, b=2)])
    runner = runner_for(store, events, parent, max_retries=2, retry_backoff_s=0.5)
    (first,) = sent(runner.start())
    (wait,) = runner.on_result(failed(first, retryable=True))
    assert isinstance(wait, Retry) and wait.step_id == "s1" and wait.delay_s == 0.5
    (second,) = sent(runner.retry("s1"))
    assert second["task_id"] != first["task_id"]
    (wait,) = runner.on_result(failed(second, retryable=True))
    assert wait.delay_s == 1.0
    (third,) = sent(runner.retry("s1"))
    (done,) = reports(runner.on_result(ok(third, {"sum": 3})), runner)
    assert done["ok"] is True
    assert store.get_task(TENANT, first["task_id"]).state == "failed"
    assert store.get_task(TENANT, third["task_id"]).meta["attempt"] == 3
    retried = [e.data for e in store.events(TENANT, task_id=parent.task_id, event_type="STEP_RETRIED")]
    assert [r["attempt"] for r in retried] == [1, 2]


def test_retries_stop_at_the_limit_and_a_non_retryable_failure_is_not_retried(store, events):
    parent = plan_task(events, [step("s1", a=1, b=2)])
    runner = runner_for(store, events, parent, max_retries=1)
    (first,) = sent(runner.start())
    runner.on_result(failed(first, retryable=True))
    (second,) = sent(runner.retry("s1"))
    (gave_up,) = reports(runner.on_result(failed(second, retryable=True)), runner)
    assert gave_up["ok"] is False and "s1" in gave_up["error"]

    parent = plan_task(events, [step("s1", a=1, b=2)], task_id="task_plan2")
    runner = runner_for(store, events, parent, max_retries=3)
    (first,) = sent(runner.start())
    actions = runner.on_result(failed(first, retryable=False))
    assert not [a for a in actions if isinstance(a, Retry)]
    assert reports(actions, runner)[0]["ok"] is False


def test_fail_fast_ends_the_plan_and_cancels_what_still_runs(store, events):
    parent = plan_task(events, [step("s1", a=1, b=2), step("s2", a=1, b=2), step("s3", a="${s1.result.sum}", b=1)])
    runner = runner_for(store, events, parent)
    first = by_step(store, sent(runner.start()))
    (end,) = reports(runner.on_result(failed(first["s1"], retryable=False)), runner)
    assert end["ok"] is False
    assert store.get_task(TENANT, parent.task_id).state == "failed"
    assert store.get_task(TENANT, first["s2"]["task_id"]).state == "cancelled"
    assert runner.on_result(ok(first["s2"], {"sum": 3})) == []  # arrives late: dropped, not done
    assert store.get_task(TENANT, first["s2"]["task_id"]).state == "cancelled"


def test_continue_runs_what_does_not_need_the_failed_step_and_aggregates_the_rest(store, events):
    parent = plan_task(events, [step("s1", a=1, b=2), step("s2", a=1, b=1), step("s3", a="${s1.result.sum}", b=1)])
    runner = runner_for(store, events, parent, failure_policy=CONTINUE, min_ok=1)
    first = by_step(store, sent(runner.start()))
    assert sent(runner.on_result(failed(first["s1"], retryable=False))) == []  # s3 cannot run
    (done,) = reports(runner.on_result(ok(first["s2"], {"sum": 2})), runner)
    assert done["ok"] is True
    assert done["result"]["value"] == [{"source": "s2", "value": {"sum": 2}}]
    assert sorted(done["result"]["failed"]) == ["s1", "s3"]
    assert done["result"]["steps"]["s3"]["error"].startswith("not run")


def test_continue_fails_the_plan_when_fewer_than_min_ok_steps_succeed(store, events):
    parent = plan_task(events, [step("s1", a=1, b=2), step("s2", a=1, b=1)])
    runner = runner_for(store, events, parent, failure_policy=CONTINUE, min_ok=2)
    first = by_step(store, sent(runner.start()))
    runner.on_result(failed(first["s1"], retryable=False))
    (end,) = reports(runner.on_result(ok(first["s2"], {"sum": 2})), runner)
    assert end["ok"] is False and "s1" in end["error"]
    assert store.get_task(TENANT, parent.task_id).state == "failed"


def test_a_cancelled_plan_starts_nothing_more_and_drops_late_results(store, events):
    parent = plan_task(events, [step("s1", a=1, b=2), step("s2", a="${s1.result.sum}", b=1)])
    runner = runner_for(store, events, parent)
    (first,) = sent(runner.start())
    done = cancel_task_tree(events, store, TENANT, parent.task_id, source="test", by=USER)
    assert done.steps == (first["task_id"],)
    assert runner.on_result(ok(first, {"sum": 3})) == []  # no s2, no report
    assert runner.finished
    assert store.get_task(TENANT, first["task_id"]).state == "cancelled"
    kinds = [e.event_type for e in store.events(TENANT, task_id=parent.task_id)]
    assert "STEP_COMPLETED" not in kinds and "PLAN_COMPLETED" not in kinds


def test_intermediate_steps_feed_others_but_stay_out_of_the_aggregate(store, events):
    parent = plan_task(events, [step("s1", kind="intermediate", a=1, b=2), step("s2", a="${s1.result.sum}", b=1)])
    runner = runner_for(store, events, parent)
    (first,) = sent(runner.start())
    (second,) = sent(runner.on_result(ok(first, {"sum": 3})))
    (done,) = reports(runner.on_result(ok(second, {"sum": 4})), runner)
    assert done["result"]["value"] == [{"source": "s2", "value": {"sum": 4}}]


def test_plan_aggregation_strategy_is_honoured(store, events):
    parent = plan_task(events, [step("s1", a=1, b=2), step("s2", a=1, b=2)],
                       aggregation={"strategy": "map_reduce", "map": "sum", "reduce": "sum"})
    runner = runner_for(store, events, parent)
    first = sent(runner.start())
    runner.on_result(ok(first[0], {"sum": 3}))
    (done,) = reports(runner.on_result(ok(first[1], {"sum": 4})), runner)
    assert done["result"]["strategy"] == "map_reduce" and done["result"]["value"] == 7


def test_coupled_steps_run_in_rounds_reading_the_partners_previous_result(store, events):
    parent = plan_task(events, [step("s1", a="${s2.result.sum}", b=1), step("s2", a="${s1.result.sum}", b=10)])
    runner = runner_for(store, events, parent, coupled_rounds=2)
    (r1s1,) = sent(runner.start())
    assert r1s1["parameters"] == {"a": None, "b": 1}  # round 1: no partner result yet
    (r1s2,) = sent(runner.on_result(ok(r1s1, {"sum": 1})))
    assert r1s2["parameters"] == {"a": 1, "b": 10}
    (r2s1,) = sent(runner.on_result(ok(r1s2, {"sum": 11})))
    assert r2s1["parameters"] == {"a": 11, "b": 1}
    (r2s2,) = sent(runner.on_result(ok(r2s1, {"sum": 12})))
    assert r2s2["parameters"] == {"a": 12, "b": 10}
    (done,) = reports(runner.on_result(ok(r2s2, {"sum": 22})), runner)
    assert [v["value"] for v in done["result"]["value"]] == [{"sum": 12}, {"sum": 22}]


def registry() -> CapabilityRegistry:
    reg = CapabilityRegistry()
    reg.register_module(sample_plugins)
    reg.register("result_aggregation", ResultAggregator())
    return reg


def pause(msg: dict, missing=("b",)) -> dict:
    return m.task_paused(msg_id="msg_1", task_id=msg["task_id"], message="To run add_numbers I need: b",
                         missing_parameters=[{"name": n, "description": "the second number",
                                              "schema": {"type": "integer"}} for n in missing],
                         capability="add_numbers")


@pytest.mark.parametrize("forget_runner", [False, True], ids=["runner_kept", "runner_rebuilt"])
def test_a_paused_step_pauses_the_plan_and_the_answer_resumes_it(store, events, forget_runner, tmp_path):
    config = load_config({"data_dir": str(tmp_path), "planning": {"parallelism": "fixed"}}, env={})
    service = TaskGroupService(store=store, events=events, registry=registry(), config=config)
    parent = plan_task(events, [step("s1", a=1), step("s2", a="${s1.result.sum}", b=5)])
    (first,) = sent(service.on_run_plan(m.run_plan(task_id=parent.task_id, tenant_id=TENANT, user_id=USER)))
    store.transition(TENANT, first["task_id"], "waiting_parameters", parameters={"a": 1})  # as the step pauses
    (asked,) = reports(service.on_step_reply(pause(first)), service)
    assert asked["message_type"] == "task_paused" and asked["task_id"] == parent.task_id
    assert "Step s1" in asked["message"] and asked["missing_parameters"][0]["name"] == "b"

    conversation = ConversationManager(store, events, registry())
    assert [t.task_id for t in conversation._paused(TENANT, USER)] == [parent.task_id]  # the plan, not the step
    wrong = conversation.handle_user_input({"user_id": USER, "content": "b=three", "tenant_id": TENANT})
    assert wrong.missing and wrong.missing[0]["name"] == "b"  # checked against the step's capability
    decision = conversation.handle_user_input({"user_id": USER, "content": "b=2", "tenant_id": TENANT})
    assert decision.action == "parameter_completion" and decision.task_id == parent.task_id

    if forget_runner:  # the actor restarted while the plan waited
        service.runners.clear()
    (resumed,) = sent(service.on_run_plan(m.run_plan(task_id=parent.task_id, tenant_id=TENANT, user_id=USER,
                                                     resume=True)))
    assert resumed == m.resume_execution(task_id=first["task_id"], tenant_id=TENANT, user_id=USER)
    assert store.get_task(TENANT, first["task_id"]).parameters == {"a": 1, "b": "2"}  # coerced when it runs
    assert store.get_task(TENANT, parent.task_id).state == "running"
    store.transition(TENANT, first["task_id"], "running")
    (second,) = sent(service.on_step_reply(ok(first, {"sum": 3})))
    assert second["parameters"] == {"a": 3, "b": 5}
    (done,) = reports(service.on_step_reply(ok(second, {"sum": 8})), service)
    assert done["ok"] is True
    assert store.get_task(TENANT, parent.task_id).state == "completed"


def test_a_plan_asked_in_chinese_names_its_steps_and_asks_for_their_answers_in_chinese(store, events, tmp_path):
    config = load_config({"data_dir": str(tmp_path), "planning": {"parallelism": "fixed"}}, env={})
    service = TaskGroupService(store=store, events=events, registry=registry(), config=config)
    parent = plan_task(events, [step("s1", a=1)], content="先把两个数加起来，再把结果发给我")
    (first,) = sent(service.on_run_plan(m.run_plan(task_id=parent.task_id, tenant_id=TENANT, user_id=USER)))
    assert store.get_task(TENANT, first["task_id"]).content == "add_numbers（计划 task_plan 的第 s1 步）"
    store.transition(TENANT, first["task_id"], "waiting_parameters", parameters={"a": 1})
    (asked,) = reports(service.on_step_reply(pause(first)), service)
    assert asked["message"].startswith("计划 task_plan 的第 s1 步需要你回答。")


def test_the_optimizer_suggests_the_width_and_hears_how_an_unattended_plan_went(store, events, tmp_path):
    config = load_config({"data_dir": str(tmp_path)}, env={})
    optimizer = OptunaOptimizer(f"sqlite:///{tmp_path}/optuna.db", max_concurrency=4, max_batch=2, seed=1)
    service = TaskGroupService(store=store, events=events, registry=registry(), config=config, optimizer=optimizer)
    parent = plan_task(events, [step("s1", a=1, b=2), step("s2", a=1, b=2)])
    actions = service.on_run_plan(m.run_plan(task_id=parent.task_id, tenant_id=TENANT, user_id=USER))
    runner = service.runners[parent.task_id]
    assert 1 <= runner.setting.concurrency <= 4 and runner.setting.trial is not None
    for msg in sent(actions):
        actions = service.on_step_reply(ok(msg, {"sum": 3}))
    while not reports(actions, service):  # concurrency 1: the second step starts after the first
        actions = service.on_step_reply(ok(sent(actions)[0], {"sum": 3}))
    trials = optimizer.trials("add_numbers")
    assert len(trials) == 1 and trials[0]["value"] > 0
    assert parent.task_id not in service.runners


def test_the_finished_steps_go_to_the_result_aggregator_and_its_answer_ends_the_plan(store, events):
    parent = plan_task(events, [step("s1", a=1, b=2), step("s2", kind="intermediate", a=1, b=1)])
    runner = runner_for(store, events, parent)
    first = sent(runner.start())
    runner.on_result(ok(first[0], {"sum": 3}))
    (asked,) = runner.on_result(ok(first[1], {"sum": 2}))
    assert isinstance(asked, Aggregate)
    assert asked.message["results"] == {"s1": {"sum": 3}, "s2": {"sum": 2}}
    assert set(asked.message["children"]) == {"s1", "s2"} and "min_ok" not in asked.message
    assert not runner.idle and store.get_task(TENANT, parent.task_id).state == "running"  # not done until combined

    failed_reply = m.plan_aggregated(task_id=parent.task_id, tenant_id=TENANT, ok=False,
                                     error_type="capability_failed", error="voting: every answer tied")
    (end,) = reports(runner.on_aggregated(failed_reply), runner)
    assert end["ok"] is False and end["error"] == "voting: every answer tied"
    assert store.get_task(TENANT, parent.task_id).state == "failed"
    assert runner.on_aggregated(failed_reply) == [] and runner.idle  # a second answer changes nothing


def test_a_plan_cancelled_while_its_results_are_combined_is_not_reported_done(store, events):
    parent = plan_task(events, [step("s1", a=1, b=2)])
    runner = runner_for(store, events, parent)
    (first,) = sent(runner.start())
    (asked,) = runner.on_result(ok(first, {"sum": 3}))
    cancel_task_tree(events, store, TENANT, parent.task_id, source="test", by=USER)
    assert runner.on_aggregated(aggregate_reply(asked.message, ResultAggregator())) == []
    assert runner.finished and store.get_task(TENANT, parent.task_id).state == "cancelled"
    kinds = [e.event_type for e in store.events(TENANT, task_id=parent.task_id)]
    assert "PLAN_COMPLETED" not in kinds


def test_a_workflow_step_contributes_its_outputs_and_keeps_its_run_in_the_record():
    plan = Plan.from_dict({"steps": [step("s1", capability="dify_workflow", kind="workflow"),
                                     step("s2", capability="echo", kind="intermediate"),
                                     step("s3", capability="echo")],
                           "aggregation": {"strategy": "concat"}})
    run = {"workflow_run_id": "run_9", "status": "succeeded", "outputs": {"text": "42 sales"}, "total_tokens": 17}
    reply = aggregate_reply(m.aggregate_plan(task_id="task_p", tenant_id=TENANT, plan=plan.to_dict(),
                                             results={"s1": run, "s2": "fed s3", "s3": "done"}, errors={},
                                             children={"s1": "t1", "s2": "t2", "s3": "t3"}), ResultAggregator())
    assert reply["ok"] is True
    assert reply["result"]["value"] == [{"source": "s1", "value": {"text": "42 sales"}},
                                        {"source": "s3", "value": "done"}]
    assert reply["result"]["steps"]["s1"]["result"]["workflow_run_id"] == "run_9"
    assert reply["message"].startswith("Done: 3 steps, combined by concat.")


def test_results_that_cannot_be_combined_are_answered_not_raised():
    plan = Plan.from_dict({"steps": [step("s1"), step("s2")], "aggregation": {"strategy": "map_reduce",
                                                                             "map": "sum", "reduce": "sum"}})
    reply = aggregate_reply(m.aggregate_plan(task_id="task_p", tenant_id=TENANT, plan=plan.to_dict(),
                                             results={"s1": {"sum": 1}, "s2": {"sum": "many"}}, errors={},
                                             children={}), ResultAggregator())
    assert reply["ok"] is False and reply["error_type"] == "capability_failed"
    assert reply["error"].startswith("The steps' results could not be combined:")
    broken = aggregate_reply(m.aggregate_plan(task_id="task_p", tenant_id=TENANT, plan={"steps": []}, results={},
                                              errors={}, children={}), ResultAggregator())
    assert broken["ok"] is False and "steps" in broken["error"]


def test_results_lost_with_their_aggregator_are_sent_once_more_then_the_plan_fails(store, events):
    parent = plan_task(events, [step("s1", a=1, b=2)])
    runner = runner_for(store, events, parent)
    (first,) = sent(runner.start())
    (asked,) = runner.on_result(ok(first, {"sum": 3}))
    (again,) = runner.aggregation_lost("the aggregating process exited")
    assert isinstance(again, Aggregate) and again.message == asked.message
    (end,) = reports(runner.aggregation_lost("the aggregating process exited"), runner)
    assert end["ok"] is False and end["error_type"] == "internal"
    assert end["error"] == "Combining the steps' results failed 2 times: the aggregating process exited"
    assert store.get_task(TENANT, parent.task_id).state == "failed" and runner.idle


def test_results_the_aggregator_cannot_take_fail_the_plan_at_once_and_other_plans_are_untouched(store, events, tmp_path):
    config = load_config({"data_dir": str(tmp_path), "planning": {"parallelism": "fixed"}}, env={})
    service = TaskGroupService(store=store, events=events, registry=registry(), config=config)
    plans = [plan_task(events, [step("s1", a=1, b=2)], task_id=f"task_plan{i}") for i in (1, 2, 3)]
    firsts = [sent(service.on_run_plan(m.run_plan(task_id=p.task_id, tenant_id=TENANT, user_id=USER)))[0]
              for p in plans]
    for msg in firsts[:2]:  # the third plan's step still runs
        (asked,) = service.on_step_reply(ok(msg, {"sum": 3}))
        assert isinstance(asked, Aggregate)

    (end,) = reports(service.on_aggregation_lost("MemoryError", task_id=plans[0].task_id), service)
    assert end["task_id"] == plans[0].task_id and end["ok"] is False and end["error"].endswith(": MemoryError")
    (again,) = service.on_aggregation_lost("the aggregating process exited")  # only the second plan was held
    assert again.message["task_id"] == plans[1].task_id
    assert [store.get_task(TENANT, p.task_id).state for p in plans] == ["failed", "running", "running"]
