"""TriggerIntake: a trigger in, a recorded run out, whichever queue the trigger came by.

``accept`` records the run (``LoopService.accept``); ``handle`` is the RabbitBridge's
callback: it records the run, hands it on (``hand_on``: a message to the LoopSchedulerActor)
and answers how the delivery is settled: RECORDED (ack), DUPLICATE (ack, nothing more runs),
REJECTED (no such loop task: dead-letter queue), RETRY (the loop task's previous run still
goes and its overlap policy is ``skip``: the trigger comes back after the bridge's retry
delay, so a trigger a program published is never dropped). A store that fails raises, and
the bridge requeues the trigger to try again.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Callable

from capabilities.loop.rabbit_bridge import Outcome, Trigger
from capabilities.loop.service import Accepted, LoopService, RunStart

log = logging.getLogger("flora.loops")


class TriggerIntake:
    def __init__(self, service: LoopService, *, default_tenant: str, hand_on: Callable[[RunStart], None] | None = None):
        self._service = service
        self._default_tenant = default_tenant
        self._hand_on = hand_on

    def accept(self, trigger: Trigger) -> Accepted:
        scheduled_at = None
        if trigger.scheduled_at:
            scheduled_at = datetime.fromisoformat(trigger.scheduled_at)
            if scheduled_at.tzinfo is None:
                scheduled_at = scheduled_at.replace(tzinfo=UTC)
        accepted = self._service.accept(tenant_id=trigger.tenant_id or self._default_tenant,
                                        loop_task_id=trigger.loop_task_id, run_key=trigger.run_key,
                                        scheduled_at=scheduled_at, parameters=trigger.parameters,
                                        source=trigger.source or "")
        if accepted.start is None:
            log.info("trigger %s for loop task %s: %s (%s)", trigger.run_key, trigger.loop_task_id,
                     accepted.outcome, accepted.reason)
        return accepted

    def handle(self, trigger: Trigger) -> Outcome:
        accepted = self.accept(trigger)
        if accepted.start is not None:
            if self._hand_on is not None:
                self._hand_on(accepted.start)
            return Outcome.RECORDED
        if accepted.outcome == "held":
            return Outcome.RETRY
        return Outcome.REJECTED if accepted.outcome == "unknown" else Outcome.DUPLICATE
