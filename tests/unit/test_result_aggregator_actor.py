"""The ResultAggregatorActor and how the TaskGroupAggregatorActor hands plans to it, with the
actors' ``send`` and ``createActor`` captured: answers for good and malformed requests, a
dead aggregator replaced with its plans sent again once, a poisoned request failing its plan."""

from __future__ import annotations

from types import SimpleNamespace

from thespian.actors import ChildActorExited, PoisonMessage

from capabilities.aggregation.result_aggregator import ResultAggregator
from capabilities.registry import CapabilityRegistry
from capability_actors.result_aggregator_actor import ResultAggregatorActor
from capability_actors.task_group_aggregator_actor import TaskGroupAggregatorActor
from common import messages as m

PLAN = {"steps": [{"id": "s1", "capability": "echo", "parameters": {}},
                  {"id": "s2", "capability": "echo", "parameters": {}}],
        "aggregation": {"strategy": "voting"}}


def request(task_id="task_p", **results) -> dict:
    return m.aggregate_plan(task_id=task_id, tenant_id="acme", plan=PLAN, results=results or {"s1": "Paris",
                                                                                              "s2": "paris."},
                            errors={}, children={"s1": "t1", "s2": "t2"})


def captured(actor) -> list[tuple]:
    out: list[tuple] = []
    actor.send = lambda to, msg: out.append((to, msg))
    return out


def result_aggregator() -> tuple[ResultAggregatorActor, list]:
    actor = ResultAggregatorActor()
    registry = CapabilityRegistry()
    registry.register("result_aggregation", ResultAggregator())
    actor.runtime = SimpleNamespace(registry=registry)
    return actor, captured(actor)


def test_it_answers_with_the_combined_result():
    actor, out = result_aggregator()
    actor.on_aggregate_plan(request(), "group")
    ((to, reply),) = out
    assert to == "group" and m.validate(reply)["message_type"] == "plan_aggregated"
    assert reply["ok"] is True and reply["result"]["value"] == "Paris" and reply["result"]["strategy"] == "voting"


def test_a_malformed_request_gets_an_error_and_the_next_one_is_served():
    actor, out = result_aggregator()
    actor.on_aggregate_plan({"message_type": "aggregate_plan", "task_id": "task_p"}, "group")
    actor.on_aggregate_plan(request(), "group")
    (_, error), (_, reply) = out
    assert error["message_type"] == "task_error" and error["error_type"] == "malformed_message"
    assert error["task_id"] == "task_p" and "missing required field" in error["message"]
    assert reply["ok"] is True


def test_a_bug_while_combining_fails_the_plan_instead_of_leaving_it_waiting():
    actor, out = result_aggregator()
    actor.runtime.registry = SimpleNamespace(get_capability=lambda name: None)  # no aggregator: a bug
    actor.on_aggregate_plan(request(), "group")
    ((_, reply),) = out
    assert reply["ok"] is False and reply["error_type"] == "internal" and "AttributeError" in reply["error"]


class Service:
    def __init__(self):
        self.answers: list[dict] = []

    def on_aggregated(self, msg):
        self.answers.append(m.validate(msg))
        return []


def group_actor() -> tuple[TaskGroupAggregatorActor, list, list]:
    actor = TaskGroupAggregatorActor()
    actor.service, actor.config_message = Service(), {"log_level": "INFO"}
    created: list[str] = []

    def create(cls, **_):
        created.append(f"{cls.__name__}-{len(created) + 1}")
        return created[-1]
    actor.createActor = create
    return actor, created, captured(actor)


def test_a_dead_aggregator_is_replaced_and_its_plans_sent_again_once():
    actor, created, out = group_actor()
    actor._aggregate(request("task_a"))
    actor._aggregate(request("task_b"))
    assert created == ["ResultAggregatorActor-1"]  # one for both
    assert [msg["message_type"] for _, msg in out] == ["configure", "aggregate_plan", "aggregate_plan"]

    out.clear()
    actor.on_system_message(ChildActorExited("ResultAggregatorActor-1"), None)
    assert created[-1] == "ResultAggregatorActor-2"
    assert [(to, msg.get("task_id")) for to, msg in out] == [
        ("ResultAggregatorActor-2", None), ("ResultAggregatorActor-2", "task_a"), ("ResultAggregatorActor-2", "task_b")]

    actor.on_aggregated(m.plan_aggregated(task_id="task_a", tenant_id="acme", ok=True, result={}), created[-1])
    actor.on_system_message(ChildActorExited("ResultAggregatorActor-2"), None)  # dies again with task_b
    (failed,) = [a for a in actor.service.answers if a["task_id"] == "task_b"]
    assert failed["ok"] is False and failed["error_type"] == "internal" and "twice" in failed["error"]
    assert actor.aggregating == {}


def test_a_request_the_aggregator_cannot_take_fails_its_plan():
    actor, created, _ = group_actor()
    actor._aggregate(request("task_a"))
    actor.on_system_message(PoisonMessage(request("task_a"), "Traceback ... MemoryError"), created[-1])
    (failed,) = actor.service.answers
    assert failed["task_id"] == "task_a" and failed["ok"] is False and "MemoryError" in failed["error"]
    assert actor.aggregating == {} and created == ["ResultAggregatorActor-1"]
