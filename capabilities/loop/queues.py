"""The trigger queue between the scheduler and the runs (the seed's ``loop_queue`` service).

The LoopSchedulerActor publishes one trigger per due run; whoever consumes the queue accepts
each trigger (``LoopService.accept``: claim the run key, record the run) before the run is
handed on. Two queues, chosen by ``loops.queue``:

- ``memory`` (embedded default): a queue inside the scheduler's own process, drained by the
  scheduler right after it publishes. Nothing but Python is needed.
- ``rabbitmq``: the durable ``rabbitmq.loop_trigger_queue``, persistent messages, publisher
  confirms; the RabbitBridge in Flora's main process consumes it, and so can triggers from
  any other program (docs/loop_triggers.md).
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

from capabilities.loop.rabbit_bridge import Trigger, TriggerPublisher


class TriggerQueue(Protocol):
    kind: str

    def publish(self, trigger: Trigger) -> None:
        """Hand a trigger on; raises (PublishError) when it was not taken."""

    def drain(self) -> list[Trigger]:
        """The triggers this process must accept itself (memory queue), oldest first."""

    def close(self) -> None: ...


class MemoryTriggerQueue:
    kind = "memory"

    def __init__(self) -> None:
        self._items: deque[Trigger] = deque()

    def publish(self, trigger: Trigger) -> None:
        self._items.append(trigger)

    def drain(self) -> list[Trigger]:
        items, self._items = list(self._items), deque()
        return items

    def close(self) -> None:
        self._items.clear()


class RabbitTriggerQueue:
    kind = "rabbitmq"

    def __init__(self, url: str, queue: str):
        self._publisher = TriggerPublisher(url, queue)

    def publish(self, trigger: Trigger) -> None:
        self._publisher.publish(trigger.loop_task_id, run_key=trigger.run_key, scheduled_at=trigger.scheduled_at,
                                tenant_id=trigger.tenant_id, parameters=trigger.parameters or None,
                                source=trigger.source)

    def drain(self) -> list[Trigger]:
        return []  # the bridge consumes

    def close(self) -> None:
        self._publisher.close()


class QueueFactory:
    @staticmethod
    def create(config) -> TriggerQueue:
        if config.loops.queue == "rabbitmq":
            return RabbitTriggerQueue(config.rabbitmq.url, config.rabbitmq.loop_trigger_queue)
        return MemoryTriggerQueue()
