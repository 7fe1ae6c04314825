"""What a node's stop or crash left behind: the tasks it was running failed as a restart would fail
them (``fail_interrupted_at_stop``, ``recover_interrupted``), loop runs recorded but not begun
started again, and the "interrupted" notices of tasks asked in a chat put in that channel's
outbox (``queue_for_chats``)."""

from __future__ import annotations

import logging
import time
from typing import Any

from common import messages as m
from config import FloraConfig

log = logging.getLogger("flora.node")


def fail_interrupted_at_stop(config: FloraConfig) -> None:
    """The tasks this node was running when it stopped are failed now, with the event and
    notification a restart would give them (common/tasks/recovery.py), instead of at the next
    start. The store's own transactions keep it consistent whatever was cut short."""
    from common.runtime import Runtime
    from common.tasks.recovery import TaskRecovery

    try:
        runtime = Runtime.from_config(config)
    except Exception as exc:  # the store may be what failed; the next start recovers instead
        log.warning("could not open the store to fail this node's running tasks at stop: %s", exc)
        return
    try:
        TaskRecovery(runtime.store, runtime.events, node=config.actors.node).fail_running(stopped_at=time.time())
    except Exception as exc:
        log.warning("could not fail this node's running tasks at stop (the next start will): %s", exc)
    finally:
        runtime.close()


def recover_interrupted(system: Any, scheduler: Any, config: FloraConfig, started_at: float):
    """Fail, with an event and a notification, the tasks this node was running when it last
    stopped without finishing them; start again the loop runs it had recorded but not begun
    (see common/tasks/recovery.py)."""
    from common.runtime import Runtime
    from common.tasks.recovery import TaskRecovery

    runtime = Runtime.from_config(config)

    def hand_on(task) -> None:
        run = task.meta["run"]
        system.tell(scheduler, m.loop_fire(tenant_id=task.tenant_id, user_id=task.user_id, task_id=task.task_id,
                                           loop_task_id=run["loop_task_id"], run_key=run["run_key"]))

    def finish_run(task) -> None:
        runtime.loops.finish(task.tenant_id, task.meta["run"]["run_key"], ok=False, task_id=task.task_id)

    try:
        return TaskRecovery(runtime.store, runtime.events, node=config.actors.node,
                            hand_on=hand_on if scheduler is not None else None,
                            finish_run=finish_run).recover(started_at=started_at)
    finally:
        runtime.close()


def queue_for_chats(config: FloraConfig, notes: list) -> None:
    """Put the "interrupted" notices of tasks asked in a chat into that channel's outbox, which
    its ChannelActor sends from when it starts (the rest wait in the store to be fetched)."""
    from capabilities.channels.delivery import Deliverer
    from capabilities.channels.service import ChannelService
    from common.tasks.store import open_store

    chats = [n for n in notes if n.channel.partition(":")[0] in config.channels]
    if not chats:
        return
    store = open_store(config)
    try:
        for note in chats:
            name = note.channel.partition(":")[0]
            settings = config.channels[name]
            service = ChannelService(name, settings, store, tenant_id=settings.tenant or config.default_tenant)
            out = service.notification(note.to_dict())
            if settings.enabled and out is not None:
                Deliverer(None, store, tenant_id=service.tenant_id, channel=name, retry=settings.retry).enqueue(out)
    finally:
        store.close()
