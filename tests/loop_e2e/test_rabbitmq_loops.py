"""Loop tasks end to end over the real RabbitMQ: Flora on multiprocTCPBase with
``loops.queue: rabbitmq`` (its scheduler publishes due runs to the trigger queue, the
RabbitBridge in the main process consumes it), the real SQLite store, no model.

A run is observed where a user and an operator would look: the capability's own record of
being called (a line in a file, written by the ExecutionActor process), the user's
notifications, the run task in the TaskStore with its events, the loop registry's runs,
and the queues on the broker. The module has a trigger queue (and dead-letter queue) of its
own, deleted at the end; the killed-consumer test uses another queue and no Flora at all.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import main
from capabilities.loop.intake import TriggerIntake
from capabilities.loop.rabbit_bridge import (
    RabbitBridge, TriggerPublisher, dead_letter_queue_name,
)
from capabilities.loop.schedule import Schedule
from capabilities.loop.service import Accepted, RunStart, run_task_id
from common.loops.models import RUN_COMPLETED, RUN_RUNNING
from common.runtime import Runtime
from common.tasks.models import COMPLETED, CREATED, RUNNING
from tests.loop_e2e.plugins import CAPABILITY, runs_of
from tests.loop_e2e.support import (
    REPO, TENANT, URL, Inbox, broker_reachable, delete_queues, message_count, publish_from_another_program,
    publish_raw, queue_depths, rabbitmqctl, rabbitmqctl_unusable, running_flora, start_broker_app, take_all,
    wait_stable, wait_until,
)

RUN_TIMEOUT_S = 20.0  # a trigger to a notification through four actor processes
SETTLE_S = 1.0  # how long a count must hold still to count as final


@dataclass
class E2E:
    flora: main.Flora
    runtime: Runtime  # this process's view of the same store and loop registry
    queue: str
    dead: str
    count_file: Path

    @property
    def bridge(self) -> RabbitBridge:
        return self.flora.bridge.bridge

    @property
    def loops(self):
        return self.runtime.loops

    def register(self, user: str, tag: str, schedule: Schedule | None = None, **parameters):
        """A loop task running the counting capability; by default one that never fires
        during the test (first fire a day from now), so only published triggers run it."""
        if schedule is None:
            schedule = Schedule.every(86400, timezone="UTC", start_at=datetime.now(UTC) + timedelta(days=1))
        return self.loops.register(tenant_id=TENANT, user_id=user, content=f"count runs of {tag}",
                                   schedule=schedule, capability=CAPABILITY, parameters={"tag": tag, **parameters})

    def runs(self, tag: str) -> list[list[str]]:
        return runs_of(self.count_file, tag)

    def final_run_count(self, tag: str) -> int:
        return wait_stable(lambda: len(self.runs(tag)), settle_s=SETTLE_S, timeout=RUN_TIMEOUT_S)


def _need_broker() -> None:
    reason = broker_reachable()
    if reason is not None:
        pytest.fail(f"RabbitMQ is not reachable at 127.0.0.1:5672 ({reason}); these tests need the real broker",
                    pytrace=False)


def _tag() -> str:
    return "t" + uuid.uuid4().hex[:10]


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    _need_broker()
    data_dir = tmp_path_factory.mktemp("flora-rabbit-e2e")
    count_file = data_dir / "runs.txt"
    queue = f"test.loop.{uuid.uuid4().hex[:12]}.queue"
    dead = dead_letter_queue_name(queue)
    config = {
        "data_dir": str(data_dir),
        "llm": {"backend": "none"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 30},
        "loops": {"queue": "rabbitmq", "tick_s": 0.2},
        "rabbitmq": {"loop_trigger_queue": queue},
        "capabilities": {"plugin_modules": ["tests.loop_e2e.plugins"]},
    }
    try:
        with running_flora(config, count_file) as (flora, runtime):
            yield E2E(flora, runtime, queue, dead, count_file)
    finally:
        if broker_reachable() is None:
            delete_queues(queue, dead)

def _events(e2e: E2E, task_id: str) -> list[str]:
    return [event.event_type for event in e2e.runtime.events.history(TENANT, task_id=task_id)]


def _assert_one_completed_run(e2e: E2E, loop_task_id: str, run_key: str, tag: str) -> None:
    """The run under ``run_key`` ran once and is complete everywhere it is kept."""
    task_id = run_task_id(TENANT, run_key)
    assert [(r[1], r[2]) for r in e2e.runs(tag)] == [(task_id, run_key)]
    task = e2e.runtime.store.get_task(TENANT, task_id)
    assert task is not None and task.state == COMPLETED, task
    assert task.meta["run"]["loop_task_id"] == loop_task_id
    runs = e2e.loops.registry.runs(TENANT, loop_task_id)
    assert [(r.run_key, r.state, r.task_id) for r in runs] == [(run_key, RUN_COMPLETED, task_id)]


# -- 1. register → the schedule fires → the run's result reaches the user ---------------------

def test_registered_loop_task_fires_through_the_queue_and_its_result_becomes_a_notification(e2e):
    user, tag = "u_fire", _tag()
    acked_before = e2e.bridge.acked
    loop = e2e.register(user, tag, Schedule.once(datetime.now(UTC) + timedelta(seconds=1), timezone="UTC"))

    inbox = Inbox(e2e.flora, user)
    notes = inbox.wait_for(lambda n: n["loop_task_id"] == loop.loop_task_id, timeout=RUN_TIMEOUT_S)
    assert len(notes) == 1, f"no notification of the run within {RUN_TIMEOUT_S}s: {inbox.notes}"
    note = notes[0]
    assert note["kind"] == "loop_run_completed"
    assert note["message"] == f"e2e run {tag} done"
    assert note["data"]["result"]["tag"] == tag
    run_key = note["data"]["run_key"]
    assert run_key.startswith(loop.loop_task_id + ":")
    assert note["task_id"] == run_task_id(TENANT, run_key)

    _assert_one_completed_run(e2e, loop.loop_task_id, run_key, tag)
    events = _events(e2e, note["task_id"])
    assert events == ["TASK_CREATED", "TASK_TRIGGERED", "TASK_STARTED", "TASK_COMPLETED"], events
    triggered = e2e.runtime.events.history(TENANT, task_id=note["task_id"], event_type="TASK_TRIGGERED")[0]
    assert triggered.data["source"] == "scheduler" and triggered.data["run_key"] == run_key
    assert e2e.bridge.acked > acked_before, "the scheduled run did not come through the RabbitMQ bridge"
    assert e2e.final_run_count(tag) == 1  # a one-shot runs once
    assert e2e.flora.notifications(user) == []


# -- 2. a trigger published by another program runs the loop task -----------------------------

def test_trigger_published_by_an_outside_program_runs_the_loop_task_once(e2e):
    user, tag = "u_external", _tag()
    loop = e2e.register(user, f"{tag}-registered")
    run_key = f"{loop.loop_task_id}:billing:{uuid.uuid4().hex[:8]}"
    publish_from_another_program(e2e.queue, loop.loop_task_id, "--run-key", run_key,
                                 "--scheduled-at", "2024-05-01T08:00:00Z", "--param", f"tag={tag}",
                                 "--source", "cron@billing")

    notes = Inbox(e2e.flora, user).wait_for(lambda n: n["loop_task_id"] == loop.loop_task_id,
                                             timeout=RUN_TIMEOUT_S)
    assert [n["kind"] for n in notes] == ["loop_run_completed"]
    assert notes[0]["data"]["run_key"] == run_key
    assert notes[0]["message"] == f"e2e run {tag} done"  # the trigger's parameters override the task's
    assert e2e.final_run_count(tag) == 1
    assert e2e.runs(f"{tag}-registered") == []
    _assert_one_completed_run(e2e, loop.loop_task_id, run_key, tag)
    triggered = e2e.runtime.events.history(TENANT, task_id=run_task_id(TENANT, run_key), event_type="TASK_TRIGGERED")
    assert [e.data["source"] for e in triggered] == ["cron@billing"]
    assert message_count(e2e.queue) == 0


# -- 3. one run key published a hundred times runs once ------------------------------------

def test_hundred_copies_of_one_trigger_run_once_and_are_all_acked(e2e):
    user, tag = "u_flood", _tag()
    loop = e2e.register(user, tag)
    run_key = f"{loop.loop_task_id}:flood:{uuid.uuid4().hex[:8]}"
    bridge = e2e.bridge
    before = (bridge.acked, bridge.rejected, bridge.requeued)
    dead_before = message_count(e2e.dead)

    with TriggerPublisher(URL, e2e.queue) as publisher:
        for _ in range(100):
            publisher.publish(loop.loop_task_id, run_key=run_key, source="flood")

    def drained():
        return message_count(e2e.queue) == 0 and bridge.acked - before[0] >= 100

    assert wait_until(drained, timeout=RUN_TIMEOUT_S), \
        f"queue not drained: {message_count(e2e.queue)} ready, {bridge.acked - before[0]} of 100 acked"
    assert wait_stable(lambda: (message_count(e2e.queue), bridge.acked), settle_s=0.5, timeout=10) == \
        (0, before[0] + 100)
    assert (bridge.rejected, bridge.requeued) == before[1:], "a copy was dead-lettered or requeued"
    assert message_count(e2e.dead) == dead_before
    assert queue_depths(e2e.queue) == (0, 1)  # nothing ready, Flora still consuming

    assert e2e.final_run_count(tag) == 1, e2e.runs(tag)
    task_id = run_task_id(TENANT, run_key)
    assert wait_until(lambda: e2e.runtime.store.get_task(TENANT, task_id).state == COMPLETED, timeout=RUN_TIMEOUT_S)
    events = _events(e2e, task_id)
    assert (events.count("TASK_CREATED"), events.count("TASK_TRIGGERED"), events.count("TASK_STARTED")) == (1, 1, 1)
    assert [r.run_key for r in e2e.loops.registry.runs(TENANT, loop.loop_task_id)] == [run_key]


def test_a_run_handed_on_again_while_the_workers_are_busy_still_reports_its_result(e2e):
    user, tag = "u_again", _tag()
    busy = [e2e.register(user, f"{tag}-busy{n}", sleep_s=1) for n in range(2)]  # one per ExecutionActor
    loop = e2e.register(user, tag, sleep_s=0.3)
    run_key = f"{loop.loop_task_id}:again"
    task_id = run_task_id(TENANT, run_key)
    with TriggerPublisher(URL, e2e.queue) as publisher:
        for blocker in busy:
            publisher.publish(blocker.loop_task_id, run_key=f"{blocker.loop_task_id}:busy")
        assert wait_until(lambda: all(e2e.runs(f"{tag}-busy{n}") for n in range(2)), timeout=RUN_TIMEOUT_S)
        acked = e2e.bridge.acked
        publisher.publish(loop.loop_task_id, run_key=run_key)
        publisher.publish(loop.loop_task_id, run_key=run_key)  # redelivered while its task is still created
        assert wait_until(lambda: e2e.bridge.acked >= acked + 2, timeout=10)
    assert e2e.runtime.store.get_task(TENANT, task_id).state == CREATED  # both copies were handed on

    assert wait_until(lambda: e2e.runtime.store.get_task(TENANT, task_id).state == COMPLETED, timeout=RUN_TIMEOUT_S)
    assert e2e.final_run_count(tag) == 1  # it runs once...
    notes = Inbox(e2e.flora, user).wait_for(lambda n: n["loop_task_id"] == loop.loop_task_id, timeout=3)
    assert [n["task_id"] for n in notes] == [task_id], "...and its result must reach the user"
    assert [(r.run_key, r.state) for r in e2e.loops.registry.runs(TENANT, loop.loop_task_id)] == \
        [(run_key, RUN_COMPLETED)]


# -- 4. triggers that can never run go to the dead-letter queue; Flora keeps serving ------------

def test_unknown_and_malformed_triggers_are_dead_lettered_and_flora_keeps_serving(e2e):
    user, tag = "u_dead", _tag()
    take_all(e2e.dead)
    unknown = json.dumps({"loop_task_id": "loop_0000000000000000", "run_key": "nobody:1"}).encode()
    publish_raw(e2e.queue, unknown, message_id="nobody:1")
    publish_raw(e2e.queue, b"{this is not json", message_id="garbled-1")

    assert wait_until(lambda: message_count(e2e.dead) == 2, timeout=RUN_TIMEOUT_S), \
        f"dead-letter queue holds {message_count(e2e.dead)}, not 2"
    dead = {props.message_id: (body, props.headers or {}) for body, props in take_all(e2e.dead)}
    assert dead["nobody:1"][0] == unknown
    assert dead["garbled-1"][0] == b"{this is not json"
    for _body, headers in dead.values():
        death = headers["x-death"][0]
        assert (death["queue"], death["reason"]) == (e2e.queue, "rejected")

    loop = e2e.register(user, tag)
    with TriggerPublisher(URL, e2e.queue) as publisher:
        sent = publisher.publish(loop.loop_task_id, run_key=f"{loop.loop_task_id}:after-bad")
    notes = Inbox(e2e.flora, user).wait_for(lambda n: n["loop_task_id"] == loop.loop_task_id,
                                             timeout=RUN_TIMEOUT_S)
    assert [n["data"]["run_key"] for n in notes] == [sent.run_key]
    _assert_one_completed_run(e2e, loop.loop_task_id, sent.run_key, tag)
    assert message_count(e2e.dead) == 0 and message_count(e2e.queue) == 0


# -- overlap policy "skip": a trigger that comes while the previous run still goes waits ---------

def test_trigger_while_a_run_is_still_going_waits_for_it_then_runs(e2e):
    user, tag = "u_overlap", _tag()
    loop = e2e.register(user, tag, sleep_s=2)
    first, second = (f"{loop.loop_task_id}:overlap:{n}" for n in range(2))
    bridge = e2e.bridge
    inbox = Inbox(e2e.flora, user)
    with TriggerPublisher(URL, e2e.queue) as publisher:
        publisher.publish(loop.loop_task_id, run_key=first)
        assert wait_until(lambda: e2e.runs(tag), timeout=RUN_TIMEOUT_S), "the first run never started"
        requeued = bridge.requeued
        publisher.publish(loop.loop_task_id, run_key=second, parameters={"sleep_s": 0})
        assert wait_until(lambda: bridge.requeued > requeued, timeout=5), "the overlapping trigger was not put back"
        # held back, not recorded, while the first run is still going (on a slow machine the
        # first may end meanwhile; then the second may be recorded, never before)
        recorded = e2e.runtime.store.get_task(TENANT, run_task_id(TENANT, second)) is not None
        going = [r.run_key for r in e2e.loops.registry.running(TENANT, loop.loop_task_id)]
        assert not (recorded and going == [first]), "the second run was recorded while the first still ran"
        assert going in ([first], [second], [])

        inbox.wait_for(lambda n: n["data"]["run_key"] == second, timeout=RUN_TIMEOUT_S)

    assert [n["data"]["run_key"] for n in inbox.notes] == [first, second]
    assert [r[2] for r in e2e.runs(tag)] == [first, second]
    runs = {r.run_key: r for r in e2e.loops.registry.runs(TENANT, loop.loop_task_id)}
    assert sorted((key, r.state) for key, r in runs.items()) == [(first, RUN_COMPLETED), (second, RUN_COMPLETED)]
    assert runs[second].started_at >= runs[first].finished_at, "the runs overlapped"
    assert message_count(e2e.queue) == 0 and message_count(e2e.dead) == 0


# -- 5. a consumer killed between recording a run and acknowledging it --------------------------

class RecordingIntake(TriggerIntake):
    """The real intake, keeping what each accept decided."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.accepted: list[Accepted] = []

    def accept(self, trigger):
        accepted = super().accept(trigger)
        self.accepted.append(accepted)
        return accepted


def test_consumer_killed_after_recording_a_run_hands_it_on_once_after_redelivery(tmp_path):
    _need_broker()
    queue = f"test.loop.{uuid.uuid4().hex[:12]}.queue"
    dead = dead_letter_queue_name(queue)
    config = {"data_dir": str(tmp_path), "llm": {"backend": "none"},
              "loops": {"queue": "rabbitmq"}, "rabbitmq": {"loop_trigger_queue": queue},
              "capabilities": {"plugin_modules": ["tests.loop_e2e.plugins"]}}
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps(config))
    runtime = Runtime.from_config(config)
    loops = runtime.loops
    try:
        loop = loops.register(tenant_id=TENANT, user_id="u_killed", content="survive a crash",
                              schedule=Schedule.every(86400, timezone="UTC",
                                                      start_at=datetime.now(UTC) + timedelta(days=1)),
                              capability=CAPABILITY, parameters={"tag": "killed"})
        run_key = f"{loop.loop_task_id}:crash:1"
        task_id = run_task_id(TENANT, run_key)
        with TriggerPublisher(URL, queue) as publisher:
            publisher.publish(loop.loop_task_id, run_key=run_key, source="e2e")

            doomed = subprocess.run([sys.executable, "-m", "tests.loop_e2e.dying_consumer", str(config_file)],
                                    cwd=REPO, capture_output=True, text=True, timeout=60)
            assert doomed.returncode == 1, f"the consumer should die in hand_on:\n{doomed.stderr[-3000:]}"

            # it recorded the run and died: the task waits in created, the run is claimed, and the
            # trigger is back in the queue because it was never acknowledged
            task = runtime.store.get_task(TENANT, task_id)
            assert task is not None and task.state == CREATED
            assert [(r.run_key, r.state) for r in loops.registry.runs(TENANT, loop.loop_task_id)] == \
                [(run_key, RUN_RUNNING)]
            assert wait_until(lambda: message_count(queue) == 1, timeout=10), "the trigger was lost"

            handed_on: list[RunStart] = []
            intake = RecordingIntake(loops, default_tenant=TENANT, hand_on=handed_on.append)
            with RabbitBridge(URL, queue, intake.handle) as bridge:
                assert wait_until(lambda: bridge.acked == 1, timeout=10), "the redelivered trigger was not acked"
                assert [a.outcome for a in intake.accepted] == ["again"]
                assert [(s.task_id, s.run_key, s.loop_task_id) for s in handed_on] == \
                    [(task_id, run_key, loop.loop_task_id)]

                # the run is picked up: the next copy of the trigger is a duplicate, handed on to no one
                runtime.events.transition(TENANT, task_id, RUNNING, source="test", expect=(CREATED,))
                publisher.publish(loop.loop_task_id, run_key=run_key, source="e2e")
                assert wait_until(lambda: bridge.acked == 2, timeout=10), "the second copy was not acked"
                assert [a.outcome for a in intake.accepted] == ["again", "duplicate"]
                assert len(handed_on) == 1
                assert (bridge.delivered, bridge.rejected, bridge.requeued) == (2, 0, 0)

        run_tasks = [t for t in runtime.store.list_tasks(TENANT, user_id="u_killed")
                     if t.meta.get("run", {}).get("run_key") == run_key]
        assert [t.task_id for t in run_tasks] == [task_id]
        assert [r.run_key for r in loops.registry.runs(TENANT, loop.loop_task_id)] == [run_key]
        assert len(runtime.events.history(TENANT, task_id=task_id, event_type="TASK_TRIGGERED")) == 1
        assert message_count(queue) == 0 and message_count(dead) == 0
    finally:
        runtime.close()
        if broker_reachable() is None:
            delete_queues(queue, dead)


# -- 6. the broker restarts under a running Flora (last: it cuts every connection) ------------

@pytest.mark.run_last
def test_bridge_reconnects_after_a_broker_restart_and_triggers_run_again(e2e):
    reason = rabbitmqctl_unusable()
    if reason is not None:
        pytest.skip(f"cannot restart the broker: {reason}")
    user, tag = "u_restart", _tag()
    loop = e2e.register(user, tag)
    bridge = e2e.bridge
    reconnects = bridge.reconnects
    assert bridge.wait_consuming(5)
    try:
        rabbitmqctl("stop_app")
        assert wait_until(lambda: not bridge.wait_consuming(0), timeout=10), "the bridge did not notice"
        time.sleep(2)  # the broker stays down a while: the bridge keeps trying
    finally:
        start_broker_app()
    assert wait_until(lambda: bridge.reconnects > reconnects, timeout=30), "the bridge did not reconnect"
    assert bridge.wait_consuming(30)

    inbox = Inbox(e2e.flora, user)
    with TriggerPublisher(URL, e2e.queue) as publisher:
        sent = publisher.publish(loop.loop_task_id, run_key=f"{loop.loop_task_id}:after-restart")
    inbox.wait_for(lambda n: n["data"]["run_key"] == sent.run_key, timeout=RUN_TIMEOUT_S)
    _assert_one_completed_run(e2e, loop.loop_task_id, sent.run_key, tag)

    # the scheduler's own publisher lost its connection too: a scheduled run still gets through
    scheduled_tag = _tag()
    scheduled = e2e.register(user, scheduled_tag, Schedule.once(datetime.now(UTC) + timedelta(seconds=1),
                                                                  timezone="UTC"))
    notes = inbox.wait_for(lambda n: n["loop_task_id"] == scheduled.loop_task_id, timeout=RUN_TIMEOUT_S)
    assert [n["kind"] for n in notes] == ["loop_run_completed"]
    _assert_one_completed_run(e2e, scheduled.loop_task_id, notes[0]["data"]["run_key"], scheduled_tag)
    assert [n["data"]["run_key"] for n in inbox.notes] == [sent.run_key, notes[0]["data"]["run_key"]]
