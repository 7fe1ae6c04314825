"""The RabbitMQ trigger bridge of a node: loop triggers consumed from the broker, recorded, and
handed to the LoopSchedulerActor (docs/loop_triggers.md)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from agents.actor_system import STARTUP_TIMEOUT_S, StartupError
from common import messages as m
from config import FloraConfig


def start_trigger_bridge(system: Any, scheduler: Any, config: FloraConfig):
    """Consume the RabbitMQ trigger queue in this process: each trigger is recorded here
    (run key claimed, run task created) and only then handed to the LoopSchedulerActor and
    acknowledged. Blocks until the bridge consumes, so a broker that is down fails start-up."""
    from capabilities.loop.intake import TriggerIntake
    from capabilities.loop.rabbit_bridge import RabbitBridge
    from common.runtime import Runtime

    if config.actors.system_base == "simpleSystemBase":
        raise StartupError("loops.queue 'rabbitmq' needs a multiprocess actor system (actors.system_base "
                           "multiprocTCPBase): simpleSystemBase runs actors in the caller's thread")
    runtime = Runtime.from_config(config)
    contexts = threading.local()
    closers: list = [runtime.close]

    def hand_on(start) -> None:
        # the bridge's worker thread: its own endpoint into the actor system (ActorSystem.private),
        # never the one the main thread asks through
        context = getattr(contexts, "context", None)
        if context is None:
            opener = system.private()
            context = contexts.context = opener.__enter__()
            closers.append(lambda: opener.__exit__(None, None, None))
        context.tell(scheduler, m.loop_fire(tenant_id=start.tenant_id, user_id=start.user_id,
                                            loop_task_id=start.loop_task_id, run_key=start.run_key,
                                            task_id=start.task_id))

    intake = TriggerIntake(runtime.loops, default_tenant=config.default_tenant, hand_on=hand_on)
    bridge = TriggerBridge(RabbitBridge(config.rabbitmq.url, config.rabbitmq.loop_trigger_queue, intake.handle),
                           closers)
    bridge.bridge.start()
    if not bridge.bridge.wait_consuming(STARTUP_TIMEOUT_S / 4):
        bridge.stop()
        raise StartupError(f"RabbitMQ trigger bridge: cannot consume {config.rabbitmq.loop_trigger_queue} "
                           "(is RabbitMQ running at rabbitmq.url?)")
    return bridge


@dataclass
class TriggerBridge:
    """The running RabbitBridge and what to close after it stops."""

    bridge: Any
    closers: list

    def stop(self) -> None:
        self.bridge.stop()
        for close in self.closers:
            close()
