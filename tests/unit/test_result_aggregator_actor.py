"""The ResultAggregatorActor and how the TaskGroupAggregatorActor hands plans to it, with the
actors' ``send`` and ``createActor`` captured: answers for good and malformed requests, one
aggregator for every plan, a dead one replaced for the plans it held, a poisoned request
reported for its plan."""

from __future__ import annotations

from types import SimpleNamespace

from thespian.actors import ChildActorExited, PoisonMessage

from capabilities.aggregation.result_aggregator import ResultAggregator
from capabilities.registry import CapabilityRegistry
from capability_actors.result_aggregator_actor import ResultAggregatorActor
from capability_actors.task_group_actions import Aggregate
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
    """Stands in for TaskGroupService (tested in test_task_group.py): records what the actor
    tells it, and answers a lost aggregation with the plans to send again."""

    def __init__(self, resend=()):
        self.lost: list[tuple] = []
        self.resend = list(resend)

    def on_aggregation_lost(self, reason, task_id=None):
        self.lost.append((reason, task_id))
        return [Aggregate(msg) for msg in self.resend]


def group_actor(service) -> tuple[TaskGroupAggregatorActor, list, list]:
    actor = TaskGroupAggregatorActor()
    actor.service, actor.config_message = service, {"log_level": "INFO"}
    created: list[str] = []

    def create(cls, **_):
        created.append(f"{cls.__name__}-{len(created) + 1}")
        return created[-1]
    actor.createActor = create
    return actor, created, captured(actor)


def test_one_aggregator_serves_every_plan_and_a_dead_one_is_replaced_for_what_it_held():
    actor, created, out = group_actor(Service(resend=[request("task_b")]))
    actor._act([Aggregate(request("task_a")), Aggregate(request("task_b"))])
    assert created == ["ResultAggregatorActor-1"]  # one for both
    assert [msg["message_type"] for _, msg in out] == ["configure", "aggregate_plan", "aggregate_plan"]

    out.clear()
    actor.on_system_message(ChildActorExited("ResultAggregatorActor-1"), None)
    assert actor.service.lost == [("the aggregating process exited", None)]
    assert created[-1] == "ResultAggregatorActor-2"
    assert [(to, msg.get("task_id")) for to, msg in out] == [("ResultAggregatorActor-2", None),
                                                             ("ResultAggregatorActor-2", "task_b")]


def test_a_request_the_aggregator_cannot_take_is_reported_for_its_plan():
    actor, created, _ = group_actor(Service())
    actor._act([Aggregate(request("task_a"))])
    actor.on_system_message(PoisonMessage(request("task_a"), "Traceback ... MemoryError"), created[-1])
    ((reason, task_id),) = actor.service.lost
    assert task_id == "task_a" and "MemoryError" in reason
    assert created == ["ResultAggregatorActor-1"] and actor.aggregator == created[-1]  # it is still alive
