"""Every message type has a constructor, a validator branch and a handler where it is received."""

from __future__ import annotations

import inspect

import pytest

from agents.agent_actor import AgentActor
from agents.interaction_actor import InteractionActor
from agents.router_actor import RouterActor
from capability_actors.channel_actor import ChannelActor
from capability_actors.execution_actor import ExecutionActor
from capability_actors.loop_scheduler_actor import LoopSchedulerActor
from capability_actors.memory_actor import MemoryActor
from capability_actors.result_aggregator_actor import ResultAggregatorActor
from capability_actors.task_group_aggregator_actor import TaskGroupAggregatorActor
from common import messages as m

# message type -> the actor classes that receive it ("caller" = whoever asked: main, a test, a user)
RECEIVERS = {
    "user_input": [InteractionActor],
    "task_completed": [InteractionActor, AgentActor, LoopSchedulerActor, ChannelActor, "caller"],
    "task_paused": [InteractionActor, AgentActor, LoopSchedulerActor, TaskGroupAggregatorActor, ChannelActor, "caller"],
    "task_queued": [InteractionActor, ChannelActor, "caller"],
    "chat_reply": [InteractionActor, ChannelActor, "caller"],
    "clarification": [InteractionActor, ChannelActor, "caller"],
    "task_error": [InteractionActor, AgentActor, LoopSchedulerActor, ChannelActor, "caller"],
    "agent_task": [AgentActor],
    "resume_task": [AgentActor],
    "analyze": [ExecutionActor],
    "reply_chunk": [AgentActor, InteractionActor],
    "analysis_result": [AgentActor],
    "execute": [ExecutionActor],
    "resume_execution": [ExecutionActor],
    "subtask_result": [AgentActor, TaskGroupAggregatorActor],
    "run_plan": [TaskGroupAggregatorActor],
    "plan_result": [AgentActor],
    "aggregate_plan": [ResultAggregatorActor],
    "plan_aggregated": [TaskGroupAggregatorActor],
    "loop_command": [LoopSchedulerActor],
    "loop_fire": [LoopSchedulerActor],
    "run_task": [AgentActor],
    "notification": [InteractionActor, ChannelActor, "caller"],
    "subscribe": [InteractionActor],
    "notifications_request": [InteractionActor],
    "notifications_reply": ["caller"],
    "memory_request": [InteractionActor, MemoryActor],
    "memory_reply": [InteractionActor, "caller"],
    "configure": [RouterActor, AgentActor, ExecutionActor, InteractionActor, LoopSchedulerActor,
                  TaskGroupAggregatorActor, ResultAggregatorActor, MemoryActor, ChannelActor],
    "configured": ["caller"],
    "route_request": [RouterActor],
    "route_reply": [InteractionActor, LoopSchedulerActor, "caller"],
    "heartbeat": [AgentActor],
    "heartbeat_ack": [RouterActor],
    "agent_children": [RouterActor],
    "status_request": [RouterActor, AgentActor, LoopSchedulerActor],
    "status_reply": ["caller"],
    "channel_update": [ChannelActor],
    "channel_ack": ["caller"],
}


def handled_by(actor_class) -> set[str]:
    if actor_class is InteractionActor:
        return set(InteractionActor.HANDLES) | {"configure"}
    actor = actor_class.__new__(actor_class)
    return set(actor_class.handlers(actor)) | {"configure"}


def test_every_message_type_is_listed_with_its_receivers():
    assert set(RECEIVERS) == set(m.MESSAGE_TYPES)


@pytest.mark.parametrize("kind", sorted(m.MESSAGE_TYPES))
def test_message_type_has_keyword_only_constructor_and_validator(kind):
    constructor = m.CONSTRUCTORS[kind]
    params = inspect.signature(constructor).parameters.values()
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    cls = m.MESSAGE_TYPES[kind]
    assert cls.__doc__, f"{kind} has no docstring saying who sends it to whom"
    bare = {"message_type": kind}
    if cls.__required_keys__ - {"message_type"}:
        with pytest.raises(m.ProtocolError) as raised:
            m.validate(bare)
        assert raised.value.field in cls.__required_keys__
    else:
        assert m.validate(bare) is bare


@pytest.mark.parametrize("kind", sorted(m.MESSAGE_TYPES))
def test_message_type_has_a_handler_in_each_actor_that_receives_it(kind):
    for receiver in RECEIVERS[kind]:
        if receiver == "caller":
            continue
        assert kind in handled_by(receiver), f"{receiver.__name__} does not handle {kind}"
