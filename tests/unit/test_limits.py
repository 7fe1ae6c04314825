"""Concurrency limits and the queue (common/tasks/limits.py) on both real stores: slots taken
all-or-none and given back once, counted right across store objects (nodes), reclaimed from
tasks that ended; queued tasks in FIFO order per key, with their positions and queue lengths."""

from __future__ import annotations

import threading

import pytest

from common.tasks.limits import Admission, Limits, LocalSlots, RedisSlots, open_slots, queue_position
from common.tasks.models import COMPLETED, CREATED, QUEUED, RUNNING, WAITING_PARAMETERS, InvalidTransition, TaskRecord
from config import ConfigError, load_config


def task(n: int, *, user="alice", capability="slow_job", tenant="acme", created_at=None) -> TaskRecord:
    return TaskRecord(task_id=f"task_{n:03d}", tenant_id=tenant, user_id=user, content=f"job {n}",
                      capability=capability, created_at=1000.0 + n if created_at is None else created_at)


@pytest.fixture
def slots(store_config):
    return open_slots(store_config)


def admission(store, slots, **limits) -> Admission:
    return Admission(store, slots, Limits(**limits))


def test_slots_follow_the_store_backend(slots, backend):
    assert isinstance(slots, RedisSlots if backend == "redis" else LocalSlots)


def test_limits_per_capability_fall_back_to_the_default():
    limits = Limits.from_config(load_config({"limits": {"per_capability": {"slow_job": 2}, "capability_default": 5}},
                                            env={}).limits)
    assert limits.for_capability("slow_job") == 2
    assert limits.for_capability("add_numbers") == 5
    assert limits.of(task(1)) == {"user": 0, "capability": 2, "tenant": 0}
    assert Limits().unlimited and not limits.unlimited


@pytest.mark.parametrize("bad, key", [({"per_user": -1}, "limits.per_user"),
                                      ({"per_capability": {"slow_job": -2}}, "limits.per_capability.slow_job"),
                                      ({"per_capability": {" ": 1}}, "limits.per_capability"),
                                      ({"per_tenant": "many"}, "limits.per_tenant")])
def test_a_bad_limit_fails_at_start_naming_its_key(bad, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config({"limits": bad}, env={})


def test_a_backoff_ceiling_below_the_backoff_is_refused():
    with pytest.raises(ConfigError, match="retry_backoff_max_s"):
        load_config({"actors": {"retry_backoff_s": 5, "retry_backoff_max_s": 1}}, env={})


def test_a_slot_is_taken_in_every_scope_or_none_and_released_once(slots):
    limits = {"user": 2, "capability": 1, "tenant": 0}
    assert slots.acquire(task(1), limits) is None
    assert slots.acquire(task(1), limits) is None  # held already: taking it again changes nothing
    assert slots.acquire(task(2), limits) == "capability"
    # refused by its capability, task 2 took no user slot either
    assert slots.holders("acme", "user", "alice") == {"task_001"}
    assert slots.acquire(task(3, capability="add_numbers"), limits) is None
    assert slots.acquire(task(4, capability="other"), limits) == "user"
    assert slots.release(task(1)) is True
    assert slots.release(task(1)) is False
    assert slots.acquire(task(2), limits) is None
    assert slots.all_holders("acme") == {("user", "alice"): {"task_002", "task_003"},
                                         ("capability", "slow_job"): {"task_002"},
                                         ("capability", "add_numbers"): {"task_003"},
                                         ("tenant", "acme"): {"task_002", "task_003"}}


def test_tenants_have_slots_of_their_own(slots):
    limits = {"user": 0, "capability": 0, "tenant": 1}
    assert slots.acquire(task(1, tenant="acme"), limits) is None
    assert slots.acquire(task(2, tenant="beta"), limits) is None
    assert slots.acquire(task(3, tenant="acme"), limits) == "tenant"


def test_many_takers_at_once_never_exceed_the_limit(backend, store_config, slots):
    """Eight threads, each with slots of its own (another node, with Redis), take 40 tasks'
    slots under a tenant limit of 3."""
    takers = [open_slots(store_config) if backend == "redis" else slots for _ in range(8)]
    won: list[str] = []
    lock = threading.Lock()

    def take(i: int) -> None:
        for n in range(i * 5, i * 5 + 5):
            if takers[i].acquire(task(n, user=f"u{n}"), {"user": 0, "capability": 0, "tenant": 3}) is None:
                with lock:
                    won.append(f"task_{n:03d}")

    threads = [threading.Thread(target=take, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 3
    assert slots.holders("acme", "tenant", "acme") == set(won)


def test_refused_task_reclaims_slots_of_tasks_that_ended_paused_or_vanished(store, slots):
    gate = admission(store, slots, per_user=3)
    done, paused, live = task(1), task(2), task(3)
    for t in (done, paused, live):
        store.create_task(t)
        assert gate.try_start(t) is None
    slots.acquire(task(9), {"user": 0})  # a slot whose task was never written (a node died in between)
    store.transition("acme", done.task_id, RUNNING)
    store.transition("acme", done.task_id, COMPLETED)  # its node died before releasing the slot
    store.transition("acme", paused.task_id, WAITING_PARAMETERS)
    newcomer = task(4)
    store.create_task(newcomer)
    assert gate.try_start(newcomer) is None  # room made by reclaiming, not by raising the limit
    assert slots.holders("acme", "user", "alice") == {live.task_id, newcomer.task_id}


def test_a_refusal_names_the_full_scope_and_how_many_run(store, slots):
    gate = admission(store, slots, per_user=5, per_capability=(("slow_job", 2),))
    for n in (1, 2):
        store.create_task(task(n, user=f"u{n}"))
        assert gate.try_start(task(n, user=f"u{n}")) is None
    third = task(3, user="u3")
    store.create_task(third)
    refusal = gate.try_start(third)
    assert (refusal.scope, refusal.name, refusal.limit, refusal.running) == ("capability", "slow_job", 2, 2)
    assert refusal.describe() == "limit: 2 running for slow_job"


def queue_up(store, tasks: list[TaskRecord]) -> None:
    for t in tasks:
        store.create_task(t)
        store.transition(t.tenant_id, t.task_id, QUEUED)


def test_queued_tasks_start_oldest_first_as_slots_free(store, slots):
    gate = admission(store, slots, per_user=1)
    running = task(1)
    store.create_task(running)
    assert gate.try_start(running) is None
    waiting = [task(4), task(2), task(3)]  # written out of order: created_at decides
    queue_up(store, waiting)
    assert [t.task_id for t in gate.queued("acme")] == ["task_002", "task_003", "task_004"]
    assert [gate.position(store.get_task("acme", t.task_id)) for t in waiting] == [3, 1, 2]
    assert gate.startable("acme") == []  # alice's slot is taken
    gate.release(running)
    assert [t.task_id for t in gate.startable("acme")] == ["task_002"]
    assert [t.task_id for t in gate.startable("acme")] == ["task_002"]  # it holds the slot now, nothing else fits


def test_a_queued_task_waits_only_behind_tasks_that_share_its_full_scope(store, slots):
    gate = admission(store, slots, per_capability=(("slow_job", 1),))
    store.create_task(task(1, user="u1"))
    assert gate.try_start(task(1, user="u1")) is None
    queue_up(store, [task(2, user="u2"), task(3, user="u3", capability="other"), task(4, user="u4")])
    assert gate.position(store.get_task("acme", "task_004")) == 2
    assert [t.task_id for t in gate.startable("acme")] == ["task_003"]  # its capability has room
    assert gate.position(store.get_task("acme", "task_001")) == 0  # not queued


def test_a_task_waiting_out_a_retry_backoff_is_passed_over(store, slots):
    gate = admission(store, slots, per_user=2)
    later = task(1)
    store.create_task(later)
    store.transition("acme", later.task_id, QUEUED, meta={"retry": {"not_before": 5000.0}})
    queue_up(store, [task(2)])
    assert [t.task_id for t in gate.startable("acme", now=4000.0)] == ["task_002"]
    assert [t.task_id for t in gate.startable("acme", now=5001.0)] == ["task_001", "task_002"]


def test_queue_lengths_and_running_counts_per_key(store, slots):
    gate = admission(store, slots, per_user=1)
    store.create_task(task(1))
    assert gate.try_start(task(1)) is None
    queue_up(store, [task(2), task(3, capability="add_numbers"), task(4, user="bob", tenant="beta")])
    assert gate.queue_lengths("acme") == {"tenant": 2, "user:alice": 2, "capability:slow_job": 1,
                                          "capability:add_numbers": 1}
    assert gate.running_counts("acme") == {"tenant": 1, "user:alice": 1, "capability:slow_job": 1}
    assert gate.queue_lengths("empty") == {}


def test_queued_is_a_durable_state_with_its_own_moves(store, make_store):
    t = task(1)
    store.create_task(t)
    store.transition("acme", t.task_id, QUEUED, meta={"queue": {"scope": "user"}})
    again = make_store().get_task("acme", t.task_id)  # another process or node reads it back
    assert again.state == QUEUED and again.meta == {"queue": {"scope": "user"}}
    assert store.count_by_state("acme") == {QUEUED: 1}
    assert [x.task_id for x in store.list_tasks("acme", states=[QUEUED])] == [t.task_id]
    store.transition("acme", t.task_id, RUNNING)
    store.transition("acme", t.task_id, QUEUED)  # its worker died: queued again to be retried
    with pytest.raises(InvalidTransition):
        store.transition("acme", t.task_id, CREATED)


def test_the_http_task_view_shows_the_place_in_line_as_it_is_now(store):
    from api.service import Caller, FloraService, task_view

    service = FloraService(gateway=None, store=store, interaction=None, scheduler=None, router=None,
                           default_user="alice", ask_timeout_s=1)
    store.create_task(task(1))
    queue_up(store, [task(2, user="bob"), task(3)])
    store.update_task("acme", "task_003", meta={"queue": {"scope": "user", "position": 7}})  # as it was when queued
    alice = Caller("acme", "alice")
    assert task_view(service.task(alice, "task_003"))["queue_position"] == 1  # bob's task is not ahead of hers
    assert task_view(service.task(alice, "task_001"))["queue_position"] is None
    assert queue_position(store, store.get_task("acme", "task_002")) == 1
    assert [v["queue_position"] for v in map(task_view, service.tasks(alice, states=None, limit=10))] == [1, None]
    store.transition("acme", "task_002", RUNNING)
    assert queue_position(store, store.get_task("acme", "task_002")) == 0
