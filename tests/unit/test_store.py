"""The TaskStore against both real backends (SQLite file, Redis): life cycle, tenants,
drafts, events, notifications, sessions, concurrency. The conftest runs each test on each."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import threading
import time
from dataclasses import replace

import pytest
import redis

from common.tasks.models import (
    CANCELLED, COMPLETED, CREATED, FAILED, PAUSED_STATES, PLANNED, RUNNING, WAITING_APPROVAL, WAITING_PARAMETERS,
    Draft, InvalidTransition, Notification, PendingEvent, Session, SessionNotFound, Standing, StoreError,
    TaskChanged, TaskNotFound, TaskRecord, WorkItem,
)
from common.tasks.redis_store import RedisTaskStore
from common.tasks.sqlite_store import SQLiteTaskStore
from common.tasks.store import open_store
from tests.unit.conftest import REDIS_URL

TENANT, OTHER_TENANT = "acme", "globex"


def add(store, task_id: str, *, tenant: str = TENANT, user: str = "alice", state: str = CREATED, **fields) -> TaskRecord:
    return store.create_task(TaskRecord(task_id=task_id, tenant_id=tenant, user_id=user,
                                        content=f"content of {task_id}", state=state, **fields))


# -- tasks ------------------------------------------------------------------------------
def test_created_task_reads_back_field_for_field(store):
    task = add(store, "t1", msg_id="msg_1", intent="task", capability="weather", parameters={"city": "Paris"})
    assert store.get_task(TENANT, "t1") == task


def test_open_store_gives_the_configured_backend(store, backend):
    assert type(store) is {"sqlite": SQLiteTaskStore, "redis": RedisTaskStore}[backend]


def test_unknown_task_reads_as_none(store):
    assert store.get_task(TENANT, "nope") is None


def test_a_second_store_object_sees_the_task(store, make_store):
    task = add(store, "t1")
    assert make_store().get_task(TENANT, "t1") == task


def test_a_task_id_is_created_once(store):
    add(store, "t1")
    with pytest.raises((sqlite3.IntegrityError, StoreError)):  # the interface names no error of its own yet
        add(store, "t1", user="bob")
    assert store.get_task(TENANT, "t1").user_id == "alice"
    assert store.count_by_state(TENANT) == {CREATED: 1}


def test_database_runs_in_wal_mode(store, db_path):
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_transition_follows_the_life_cycle_and_applies_changes(store):
    add(store, "t1")
    store.transition(TENANT, "t1", RUNNING, capability="weather")
    missing = [{"name": "city", "description": "The city", "schema": {"type": "string"}}]
    paused = store.transition(TENANT, "t1", WAITING_PARAMETERS, missing=missing)
    assert paused.paused and paused.missing == missing and paused.capability == "weather"
    store.transition(TENANT, "t1", RUNNING, expect=PAUSED_STATES, missing=[], parameters={"city": "Paris"})
    done = store.transition(TENANT, "t1", COMPLETED, result={"temp_c": 21})
    assert (done.state, done.result, done.parameters, done.missing) == (COMPLETED, {"temp_c": 21}, {"city": "Paris"}, [])
    assert store.get_task(TENANT, "t1") == done


def test_transition_moves_updated_at_forward(store):
    created = add(store, "t1", created_at=time.time() - 60, updated_at=time.time() - 60)
    moved = store.transition(TENANT, "t1", RUNNING)
    assert moved.updated_at > created.updated_at
    assert moved.created_at == created.created_at


def test_completed_task_cannot_run_again(store):
    add(store, "t1", state=COMPLETED)
    with pytest.raises(InvalidTransition) as info:
        store.transition(TENANT, "t1", RUNNING)
    assert (info.value.current, info.value.wanted) == (COMPLETED, RUNNING)
    assert "completed" in str(info.value) and "running" in str(info.value)
    assert store.get_task(TENANT, "t1").state == COMPLETED


@pytest.mark.parametrize("final", [COMPLETED, FAILED, CANCELLED])
@pytest.mark.parametrize("wanted", [RUNNING, WAITING_PARAMETERS, COMPLETED, FAILED, CANCELLED])
def test_final_states_are_final(store, final, wanted):
    add(store, "t1", state=final)
    with pytest.raises(InvalidTransition):
        store.transition(TENANT, "t1", wanted)


def test_expect_refuses_a_move_the_life_cycle_would_allow(store):
    add(store, "t1", state=WAITING_APPROVAL)
    with pytest.raises(InvalidTransition):
        store.transition(TENANT, "t1", RUNNING, expect=[WAITING_PARAMETERS])
    assert store.get_task(TENANT, "t1").state == WAITING_APPROVAL


def test_a_move_decided_on_a_record_happens_only_if_nobody_wrote_the_task_since(store):
    created = add(store, "t1")
    commented = store.update_task(TENANT, "t1", meta={"comments": ["first"]})
    with pytest.raises(TaskChanged) as info:
        store.transition(TENANT, "t1", RUNNING, unchanged_since=created.updated_at, meta={"node": "n1"})
    assert (info.value.current, info.value.wanted) == (CREATED, RUNNING)
    assert store.get_task(TENANT, "t1") == commented  # the comment stands
    moved = store.transition(TENANT, "t1", RUNNING, unchanged_since=commented.updated_at,
                             meta={**commented.meta, "node": "n1"})
    assert moved.meta == {"comments": ["first"], "node": "n1"}
    with pytest.raises(InvalidTransition):  # a move the life cycle refuses is refused as before
        store.transition(TENANT, "t1", CREATED, unchanged_since=moved.updated_at)


def test_transition_of_an_unknown_task_raises_task_not_found(store):
    with pytest.raises(TaskNotFound):
        store.transition(TENANT, "nope", RUNNING)


def test_failed_transition_changes_nothing(store):
    add(store, "t1", parameters={"city": "Paris"})
    with pytest.raises(ValueError, match="unknown task fields"):
        store.transition(TENANT, "t1", RUNNING, parameters={"city": "Rome"}, colour="red")
    task = store.get_task(TENANT, "t1")
    assert (task.state, task.parameters) == (CREATED, {"city": "Paris"})
    store.transition(TENANT, "t1", RUNNING)  # the connection is usable again


def test_update_task_changes_fields_but_not_state(store):
    add(store, "t1")
    assert store.update_task(TENANT, "t1", parameters={"city": "Paris"}, approved=True).parameters == {"city": "Paris"}
    assert store.get_task(TENANT, "t1").approved is True
    with pytest.raises(ValueError, match="transition"):
        store.update_task(TENANT, "t1", state=RUNNING)
    with pytest.raises(ValueError, match="unknown task fields"):
        store.update_task(TENANT, "t1", user_id="bob")
    with pytest.raises(TaskNotFound):
        store.update_task(TENANT, "nope", parameters={})


def _resume(own, task_id: str, who: str, barrier: threading.Barrier, outcomes: dict) -> None:
    barrier.wait()
    try:
        own.transition(TENANT, task_id, RUNNING, expect=PAUSED_STATES, parameters={"resumed_by": who})
        outcomes[who] = "won"
    except InvalidTransition:
        outcomes[who] = "lost"


@pytest.mark.parametrize("resumers", [2, 4])
def test_concurrent_resumers_collide_and_exactly_one_wins(store, make_store, resumers):
    nodes = {f"node-{i}": make_store() for i in range(resumers)}  # each resumer is its own process/node
    for round_ in range(10):
        task_id = f"t{round_}"
        add(store, task_id, state=WAITING_PARAMETERS)
        barrier, outcomes = threading.Barrier(resumers), {}
        threads = [threading.Thread(target=_resume, args=(own, task_id, who, barrier, outcomes))
                   for who, own in nodes.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=20)
        assert sorted(outcomes.values()) == ["lost"] * (resumers - 1) + ["won"], outcomes
        winner = next(who for who, outcome in outcomes.items() if outcome == "won")
        task = store.get_task(TENANT, task_id)
        assert (task.state, task.parameters) == (RUNNING, {"resumed_by": winner})
    assert store.count_by_state(TENANT) == {RUNNING: 10}


def test_concurrent_transitions_leave_one_winner_and_only_its_event(store, make_store):
    add(store, "t1", state=RUNNING)
    nodes = [make_store() for _ in range(4)]
    barrier, outcomes = threading.Barrier(len(nodes)), []

    def finish(own, state):
        barrier.wait()
        try:
            own.transition_recorded(TENANT, "t1", state, PendingEvent(state.upper(), "test"), expect=[RUNNING])
            outcomes.append(state)
        except InvalidTransition:
            pass

    threads = [threading.Thread(target=finish, args=(own, state))
               for own, state in zip(nodes, (COMPLETED, FAILED, CANCELLED, WAITING_APPROVAL))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert len(outcomes) == 1
    assert store.get_task(TENANT, "t1").state == outcomes[0]
    assert [e.event_type for e in store.events(TENANT)] == [outcomes[0].upper()]


def test_another_tenant_cannot_read_or_change_a_task_by_id(store):
    add(store, "t1", parameters={"secret": "s3"})
    assert store.get_task(OTHER_TENANT, "t1") is None
    with pytest.raises(TaskNotFound):
        store.update_task(OTHER_TENANT, "t1", parameters={})
    with pytest.raises(TaskNotFound):
        store.transition(OTHER_TENANT, "t1", CANCELLED)
    assert store.list_tasks(OTHER_TENANT) == [] and store.paused_tasks(OTHER_TENANT, "alice") == []
    assert store.events(OTHER_TENANT) == [] and store.events(OTHER_TENANT, task_id="t1") == []
    assert store.count_by_state(OTHER_TENANT) == {}
    task = store.get_task(TENANT, "t1")
    assert (task.state, task.parameters) == (CREATED, {"secret": "s3"})


def test_the_same_task_id_in_two_tenants_is_two_tasks(store):
    add(store, "t1", tenant=TENANT)
    add(store, "t1", tenant=OTHER_TENANT)
    store.transition(OTHER_TENANT, "t1", CANCELLED)
    assert store.get_task(TENANT, "t1").state == CREATED
    assert store.get_task(OTHER_TENANT, "t1").state == CANCELLED


def test_list_tasks_newest_first(store):
    for task_id in ("t1", "t2", "t3"):
        add(store, task_id)
    assert [t.task_id for t in store.list_tasks(TENANT)] == ["t3", "t2", "t1"]
    assert [t.task_id for t in store.list_tasks(TENANT, limit=2)] == ["t3", "t2"]


def test_list_tasks_filters_by_user_and_state(store):
    add(store, "t1", user="alice", state=RUNNING)
    add(store, "t2", user="bob", state=RUNNING)
    add(store, "t3", user="alice", state=COMPLETED)
    assert [t.task_id for t in store.list_tasks(TENANT, user_id="alice")] == ["t3", "t1"]
    assert [t.task_id for t in store.list_tasks(TENANT, states=[RUNNING])] == ["t2", "t1"]
    assert [t.task_id for t in store.list_tasks(TENANT, user_id="alice", states={RUNNING})] == ["t1"]
    assert store.list_tasks(TENANT, states=[]) == []


def test_paused_tasks_are_the_users_waiting_tasks(store):
    add(store, "t1", user="alice", state=WAITING_PARAMETERS)
    add(store, "t2", user="alice", state=RUNNING)
    add(store, "t3", user="alice", state=WAITING_APPROVAL)
    add(store, "t4", user="bob", state=WAITING_PARAMETERS)
    add(store, "t5", user="alice", state=WAITING_PARAMETERS, tenant=OTHER_TENANT)
    assert [t.task_id for t in store.paused_tasks(TENANT, "alice")] == ["t3", "t1"]


def test_a_change_moves_the_task_in_listings_and_counts(store):
    old = time.time() - 60
    add(store, "t1", state=RUNNING, created_at=old, updated_at=old)
    add(store, "t2", state=RUNNING)
    store.transition(TENANT, "t1", WAITING_PARAMETERS)
    assert [t.task_id for t in store.list_tasks(TENANT)] == ["t1", "t2"]
    assert [t.task_id for t in store.paused_tasks(TENANT, "alice")] == ["t1"]
    assert [t.task_id for t in store.list_tasks(TENANT, states=[RUNNING])] == ["t2"]
    assert store.count_by_state(TENANT) == {RUNNING: 1, WAITING_PARAMETERS: 1}
    store.update_task(TENANT, "t2", parameters={"n": 1})
    assert [t.task_id for t in store.list_tasks(TENANT)] == ["t2", "t1"]
    store.transition(TENANT, "t1", CANCELLED)
    assert store.paused_tasks(TENANT, "alice") == []
    assert store.count_by_state() == {RUNNING: 1, CANCELLED: 1}


def test_list_tasks_over_many_states_keeps_the_newest_first_and_the_limit(store):
    states = [CREATED, PLANNED, RUNNING, WAITING_APPROVAL, COMPLETED, FAILED]
    now = time.time()
    for i in range(30):
        add(store, f"t{i:02}", state=states[i % len(states)], updated_at=now + i)
    assert [t.task_id for t in store.list_tasks(TENANT, limit=7)] == [f"t{i:02}" for i in range(29, 22, -1)]
    assert [t.task_id for t in store.list_tasks(TENANT, states=[RUNNING, FAILED], limit=3)] == ["t29", "t26", "t23"]
    assert store.list_tasks(TENANT, limit=0) == []


def test_unfinished_tasks_of_every_tenant_oldest_first_before_a_time(store):
    now = time.time()
    add(store, "a-run", state=RUNNING, updated_at=now - 30)
    add(store, "b-new", state=CREATED, tenant=OTHER_TENANT, updated_at=now - 40)
    add(store, "a-paused", state=WAITING_PARAMETERS, updated_at=now - 50)
    add(store, "a-done", state=COMPLETED, updated_at=now - 60)
    add(store, "b-run", state=RUNNING, tenant=OTHER_TENANT, updated_at=now - 20)
    add(store, "a-late", state=RUNNING, updated_at=now + 5)
    found = store.unfinished_tasks((CREATED, RUNNING), updated_before=now)
    assert [(t.tenant_id, t.task_id) for t in found] == \
        [(OTHER_TENANT, "b-new"), (TENANT, "a-run"), (OTHER_TENANT, "b-run")]
    assert [t.task_id for t in store.unfinished_tasks([RUNNING], updated_before=now, limit=1)] == ["a-run"]
    assert store.unfinished_tasks([RUNNING], updated_before=now - 30) == []


def test_create_and_transition_write_their_event_with_the_task(store):
    task, created = store.create_recorded(TaskRecord(task_id="t1", tenant_id=TENANT, user_id="alice", content="x"),
                                          PendingEvent("TASK_CREATED", "test", {"n": 1}))
    moved, started = store.transition_recorded(TENANT, "t1", RUNNING, PendingEvent("TASK_STARTED", "test"))
    assert (created.task_id, created.user_id, created.data) == ("t1", "alice", {"n": 1})
    assert store.events(TENANT, task_id="t1") == [created, started]
    assert started.event_id > created.event_id and store.get_task(TENANT, "t1") == moved
    with pytest.raises(InvalidTransition):
        store.transition_recorded(TENANT, "t1", CREATED, PendingEvent("NEVER", "test"))
    assert [e.event_type for e in store.events(TENANT)] == ["TASK_CREATED", "TASK_STARTED"]


def test_json_fields_round_trip_with_unicode(store):
    parameters = {"城市": "北京", "note": "rain 🌧", "nested": {"list": [1, 2.5, None, True, "é"]}}
    missing = [{"name": "日期", "description": "哪一天", "schema": {"type": "string"}, "reason": "must be text"}]
    add(store, "t1", parameters=parameters, missing=missing, result=["晴", {"temp": -3.5}])
    task = store.get_task(TENANT, "t1")
    assert (task.parameters, task.missing, task.result) == (parameters, missing, ["晴", {"temp": -3.5}])


@pytest.mark.parametrize("result", [None, "ok", 0, False, [], {"rows": []}])
def test_any_json_result_round_trips(store, result):
    add(store, "t1", state=RUNNING)
    store.transition(TENANT, "t1", COMPLETED, result=result)
    assert store.get_task(TENANT, "t1").result == result


def test_count_by_state_per_tenant_and_overall(store):
    add(store, "t1", state=RUNNING)
    add(store, "t2", state=RUNNING)
    add(store, "t3", state=COMPLETED)
    add(store, "t4", state=RUNNING, tenant=OTHER_TENANT)
    assert store.count_by_state(TENANT) == {RUNNING: 2, COMPLETED: 1}
    assert store.count_by_state(OTHER_TENANT) == {RUNNING: 1}
    assert store.count_by_state() == {RUNNING: 3, COMPLETED: 1}
    assert store.tenants() == sorted([TENANT, OTHER_TENANT])


# -- drafts -----------------------------------------------------------------------------
def draft(draft_id: str, *, created_at: float, user: str = "alice", tenant: str = TENANT) -> Draft:
    return Draft(draft_id=draft_id, tenant_id=tenant, user_id=user, kind="task_choice", content="which task?",
                 options=[{"id": "1", "label": "天气", "task_id": "t1"}], pending_answer="Paris", created_at=created_at)


def test_open_draft_is_the_newest_open_one_and_closing_reveals_the_older(store):
    now = time.time()
    store.save_draft(draft("d-old", created_at=now - 10))
    store.save_draft(draft("d-new", created_at=now))
    newest = store.open_draft(TENANT, "alice")
    assert newest == draft("d-new", created_at=now)
    store.close_draft(TENANT, "d-new")
    assert store.open_draft(TENANT, "alice").draft_id == "d-old"
    store.close_draft(TENANT, "d-old")
    assert store.open_draft(TENANT, "alice") is None


def test_saving_a_draft_again_replaces_it(store):
    now = time.time()
    store.save_draft(draft("d1", created_at=now))
    store.save_draft(replace(draft("d1", created_at=now), pending_answer="Rome"))
    assert store.open_draft(TENANT, "alice").pending_answer == "Rome"
    store.save_draft(replace(draft("d1", created_at=now), open=False))
    assert store.open_draft(TENANT, "alice") is None


def test_drafts_belong_to_one_user_in_one_tenant(store):
    store.save_draft(draft("d1", created_at=time.time()))
    assert store.open_draft(TENANT, "bob") is None
    assert store.open_draft(OTHER_TENANT, "alice") is None
    store.close_draft(OTHER_TENANT, "d1")
    assert store.open_draft(TENANT, "alice").draft_id == "d1"


# -- events -----------------------------------------------------------------------------
def emit(store, event_type: str, task_id: str, *, user: str = "alice", tenant: str = TENANT, **data):
    return store.append_event(event_type=event_type, task_id=task_id, tenant_id=tenant, user_id=user,
                              source="test", data=data)


def test_events_are_oldest_first_after_since_id(store):
    first = emit(store, "TASK_CREATED", "t1")
    second = emit(store, "TASK_STARTED", "t1")
    third = emit(store, "TASK_COMPLETED", "t1", result="晴")
    assert [e.event_id for e in store.events(TENANT)] == [first.event_id, second.event_id, third.event_id]
    assert store.events(TENANT, since_id=first.event_id) == [second, third]
    assert store.events(TENANT, limit=1) == [first]
    assert store.events(TENANT, since_id=third.event_id) == []


def test_events_filter_by_task_user_and_type(store):
    a = emit(store, "TASK_CREATED", "t1", user="alice")
    b = emit(store, "TASK_CREATED", "t2", user="bob")
    c = emit(store, "TASK_STARTED", "t1", user="alice")
    emit(store, "TASK_CREATED", "t1", tenant=OTHER_TENANT)
    assert store.events(TENANT, task_id="t1") == [a, c]
    assert store.events(TENANT, user_id="bob") == [b]
    assert store.events(TENANT, event_type="TASK_CREATED") == [a, b]
    assert store.events(TENANT, task_id="t1", event_type="TASK_CREATED") == [a]


def test_event_ids_increase_across_tenants_and_paging_by_since_id_sees_each_once(store):
    written = [emit(store, "X", f"t{i % 3}", tenant=(TENANT, OTHER_TENANT)[i % 2], user=f"u{i % 4}", i=i)
               for i in range(40)]
    assert [e.event_id for e in written] == sorted({e.event_id for e in written})
    assert store.last_event_id() == written[-1].event_id
    seen, since = [], 0
    while page := store.events(TENANT, since_id=since, limit=3):
        seen += page
        since = page[-1].event_id
    assert seen == [e for e in written if e.tenant_id == TENANT]


def test_event_filters_applied_after_reading_still_fill_the_limit(store):
    for i in range(300):
        emit(store, "TASK_STARTED", "t1", user="alice" if i % 50 else "bob", i=i)
    last = emit(store, "TASK_DONE", "t1")
    assert store.events(TENANT, event_type="TASK_DONE", limit=1) == [last]
    assert [e.data["i"] for e in store.events(TENANT, task_id="t1", user_id="bob")] == [0, 50, 100, 150, 200, 250]
    assert [e.data["i"] for e in store.events(TENANT, task_id="t1", user_id="bob", limit=2)] == [0, 50]


def test_event_data_round_trips_with_unicode(store):
    event = emit(store, "TASK_PAUSED", "t1", missing=["城市"], note="🌧")
    (stored,) = store.events(TENANT)
    assert stored == event and stored.data == {"missing": ["城市"], "note": "🌧"}


# -- notifications ----------------------------------------------------------------------
def notify(store, note_id: str, *, user: str = "alice", tenant: str = TENANT, at: float) -> Notification:
    return store.add_notification(Notification(notification_id=note_id, tenant_id=tenant, user_id=user,
                                               message=f"提醒 {note_id}", data={"run": 1}, created_at=at))


def test_notifications_oldest_first_and_marking_read_touches_only_the_users_own(store):
    now = time.time()
    second, first = notify(store, "n2", at=now), notify(store, "n1", at=now - 5)
    notify(store, "n3", user="bob", at=now)
    assert store.notifications(TENANT, "alice") == [first, second]
    assert store.notifications(TENANT, "alice", limit=1) == [first]
    assert store.mark_notifications_read(TENANT, "alice", ["n1", "n3", "nope"]) == 1
    assert store.mark_notifications_read(TENANT, "alice", ["n1"]) == 0
    assert store.mark_notifications_read(TENANT, "alice", []) == 0
    assert store.notifications(TENANT, "alice") == [second]
    assert [(n.notification_id, n.read) for n in store.notifications(TENANT, "alice", unread_only=False)] == \
        [("n1", True), ("n2", False)]
    assert [n.read for n in store.notifications(TENANT, "bob")] == [False]


def test_notifications_are_scoped_by_tenant(store):
    notify(store, "n1", at=time.time())
    assert store.notifications(OTHER_TENANT, "alice", unread_only=False) == []
    assert store.mark_notifications_read(OTHER_TENANT, "alice", ["n1"]) == 0
    assert [n.notification_id for n in store.notifications(TENANT, "alice")] == ["n1"]


# -- pending work ---------------------------------------------------------------------
def test_pending_work_is_kept_once_per_key_oldest_first_and_finished_once(store):
    first = WorkItem(TENANT, "memory", "msg_1", {"content": "I live in Shanghai"}, created_at=time.time() - 5)
    assert store.add_work(first)
    assert not store.add_work(replace(first, payload={"content": "again"}))  # the same turn twice: one item
    assert store.add_work(WorkItem(OTHER_TENANT, "memory", "msg_1", {"content": "another tenant's"}))
    assert store.add_work(WorkItem(TENANT, "other_kind", "x", {}))
    pending = store.pending_work("memory")
    assert [(w.tenant_id, w.key, w.payload["content"]) for w in pending] == [
        (TENANT, "msg_1", "I live in Shanghai"), (OTHER_TENANT, "msg_1", "another tenant's")]
    assert store.retry_work(TENANT, "memory", "msg_1") == 1
    assert store.retry_work(TENANT, "memory", "msg_1") == 2
    assert store.retry_work(TENANT, "memory", "gone") == 0
    assert store.pending_work("memory", limit=1)[0].attempts == 2
    assert store.finish_work(TENANT, "memory", "msg_1")
    assert not store.finish_work(TENANT, "memory", "msg_1")
    assert [(w.tenant_id, w.key) for w in store.pending_work("memory")] == [(OTHER_TENANT, "msg_1")]


# -- two processes ----------------------------------------------------------------------
WRITES_PER_PROCESS = 60


def _write_many(config, prefix: str, barrier) -> None:
    """Runs in a child process: its own store on the shared file or Redis, as an actor process does."""
    store = open_store(config)
    barrier.wait()
    for i in range(WRITES_PER_PROCESS):
        task_id = f"{prefix}-{i}"
        store.create_task(TaskRecord(task_id=task_id, tenant_id=TENANT, user_id=prefix, content="x"))
        store.transition(TENANT, task_id, RUNNING, expect=[CREATED])
        store.append_event(event_type="TASK_STARTED", task_id=task_id, tenant_id=TENANT, user_id=prefix,
                           source=prefix, data={"i": i})
        store.transition(TENANT, task_id, COMPLETED, result=i)
    store.close()


def test_two_processes_writing_at_once_lose_nothing(store, store_config):
    ctx = multiprocessing.get_context("spawn")  # fresh interpreters, like actor processes
    barrier = ctx.Barrier(2)
    workers = [ctx.Process(target=_write_many, args=(store_config, name, barrier)) for name in ("p1", "p2")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [w.exitcode for w in workers] == [0, 0]
    assert store.count_by_state(TENANT) == {COMPLETED: 2 * WRITES_PER_PROCESS}
    events = store.events(TENANT)
    assert len(events) == 2 * WRITES_PER_PROCESS
    for name in ("p1", "p2"):
        assert sorted(e.data["i"] for e in events if e.source == name) == list(range(WRITES_PER_PROCESS))
        assert sorted(t.result for t in store.list_tasks(TENANT, user_id=name, limit=1000)) == \
            list(range(WRITES_PER_PROCESS))


# -- sessions --------------------------------------------------------------------------
def test_a_session_keeps_its_messages_in_order_and_takes_its_first_title(store):
    store.save_session(Session(session_id="s1", tenant_id=TENANT, user_id="alice", updated_at=1.0))
    assert store.append_to_session(TENANT, "s1", [{"role": "user", "content": "hi"}], title="hi") is None
    store.append_to_session(TENANT, "s1", [{"role": "assistant", "content": "hello"}], title="later")
    session = store.get_session(TENANT, "s1")
    assert [m["content"] for m in session.messages] == ["hi", "hello"] and session.title == "hi"
    assert session.updated_at > 1.0 and store.list_sessions(TENANT, "alice") == [session]
    assert session.summary()["message_count"] == 2 and "messages" not in session.summary()


def test_many_appends_keep_their_order_and_saving_or_deleting_replaces_every_message(store):
    store.save_session(Session(session_id="s1", tenant_id=TENANT, user_id="alice",
                               messages=[{"role": "user", "content": "first", "at": 1.5}]))
    store.save_session(Session(session_id="s2", tenant_id=TENANT, user_id="alice"))
    for i in range(150):
        store.append_to_session(TENANT, "s1", [{"role": "user", "content": f"q{i}"},
                                               {"role": "assistant", "content": f"a{i}", "reply": {"n": [i]}}])
    expected = ["first"] + [c for i in range(150) for c in (f"q{i}", f"a{i}")]
    session = store.get_session(TENANT, "s1")
    assert [m["content"] for m in session.messages] == expected
    assert session.messages[0] == {"role": "user", "content": "first", "at": 1.5}
    assert session.messages[-1] == {"role": "assistant", "content": "a149", "reply": {"n": [149]}}
    listed = {s.session_id: s for s in store.list_sessions(TENANT, "alice")}
    assert listed["s1"] == session and listed["s2"].messages == []  # each session gets its own messages

    store.save_session(Session(session_id="s1", tenant_id=TENANT, user_id="alice", title="again",
                               messages=[{"role": "user", "content": "only"}]))
    store.append_to_session(TENANT, "s1", [{"role": "assistant", "content": "then"}])
    assert [m["content"] for m in store.get_session(TENANT, "s1").messages] == ["only", "then"]
    assert store.delete_session(TENANT, "s1")
    assert last_messages(store, "s1", 8) is None
    store.save_session(Session(session_id="s1", tenant_id=TENANT, user_id="alice"))
    assert store.get_session(TENANT, "s1").messages == []  # nothing of the deleted one comes back


def last_messages(store, session_id: str, limit: int, tenant: str = TENANT) -> tuple[str, list[dict]] | None:
    """A session's owner and last messages as a message finds them; None: no such session."""
    found = store.standing(tenant, "alice", session_id, limit)
    return (found.owner, found.messages) if found.owner is not None else None


def test_the_recent_messages_are_the_last_ones_oldest_first_with_the_owner(store):
    store.save_session(Session(session_id="s1", tenant_id=TENANT, user_id="alice"))
    assert last_messages(store, "s1", 8) == ("alice", [])
    for i in range(10):
        store.append_to_session(TENANT, "s1", [{"role": "user", "content": f"m{i}"}])
    owner, last = last_messages(store, "s1", 3)
    assert owner == "alice" and [m["content"] for m in last] == ["m7", "m8", "m9"]
    assert [m["content"] for m in last_messages(store, "s1", 50)[1]] == [f"m{i}" for i in range(10)]
    assert last_messages(store, "s1", 0) == ("alice", [])  # the owner alone
    assert last_messages(store, "nope", 8) is None
    assert last_messages(store, "s1", 8, tenant=OTHER_TENANT) is None


def test_where_a_message_finds_the_person_stands_is_one_read_of_its_conversation_and_the_persons_open_work(store):
    assert store.standing(TENANT, "alice", "s1", 8) == Standing(owner=None, messages=[], open_draft=False,
                                                                   paused=False)
    store.save_session(Session(session_id="s1", tenant_id=TENANT, user_id="alice"))
    assert store.standing(TENANT, "alice", "s1", 8) == Standing("alice", [], False, False)
    for i in range(10):
        store.append_to_session(TENANT, "s1", [{"role": "user", "content": f"m{i}"}])
    found = store.standing(TENANT, "bob", "s1", 3)  # whoever asks: the owner says whose it is
    assert found.owner == "alice" and [m["content"] for m in found.messages] == ["m7", "m8", "m9"]
    assert store.standing(TENANT, "alice", "s1", 0).messages == []

    def open_work(user: str) -> tuple[bool, bool]:
        found = store.standing(TENANT, user, "s1", 1)
        return found.open_draft, found.paused

    add(store, "t1", state=WAITING_PARAMETERS)
    add(store, "t2", user="bob", state=RUNNING)
    store.save_draft(Draft(draft_id="d1", tenant_id=TENANT, user_id="bob", kind="task_choice", content="x"))
    assert open_work("alice") == (False, True) and open_work("bob") == (True, False)  # running: nobody waits
    store.close_draft(TENANT, "d1")
    store.transition(TENANT, "t1", CANCELLED)
    assert open_work("alice") == open_work("bob") == (False, False)
    assert store.standing(OTHER_TENANT, "alice", "s1", 8) == Standing(None, [], False, False)


def test_sessions_are_scoped_by_tenant_and_listed_most_recent_first(store):
    for sid in ("old", "new"):
        store.save_session(Session(session_id=sid, tenant_id=TENANT, user_id="alice"))
        time.sleep(0.01)
    store.append_to_session(TENANT, "old", [{"role": "user", "content": "bump"}])
    assert [s.session_id for s in store.list_sessions(TENANT, "alice")] == ["old", "new"]
    assert store.get_session(OTHER_TENANT, "old") is None and store.list_sessions(OTHER_TENANT, "alice") == []
    with pytest.raises(SessionNotFound):
        store.append_to_session(OTHER_TENANT, "old", [{"role": "user", "content": "x"}])
    assert not store.delete_session(OTHER_TENANT, "old")
    assert store.delete_session(TENANT, "old") and store.get_session(TENANT, "old") is None


def test_saving_a_session_again_replaces_it_and_listing_has_a_limit(store):
    for sid, at in (("s1", 1.0), ("s2", 2.0), ("s3", 3.0)):
        store.save_session(Session(session_id=sid, tenant_id=TENANT, user_id="alice", created_at=at, updated_at=at))
    store.save_session(Session(session_id="s1", tenant_id=TENANT, user_id="alice", title="again", updated_at=4.0))
    assert [s.session_id for s in store.list_sessions(TENANT, "alice", limit=2)] == ["s1", "s3"]
    assert store.get_session(TENANT, "s1").title == "again"
    with pytest.raises(SessionNotFound):
        store.append_to_session(TENANT, "nope", [{"role": "user", "content": "x"}])


def _append_at_once(stores, session_id: str, each: int, user_id: str | None = None) -> None:
    """Each store appends ``each`` messages ("<writer>-<i>") to the session from a thread of its own, all at once."""
    def append(s, n):
        for i in range(each):
            s.append_to_session(TENANT, session_id, [{"role": "user", "content": f"{n}-{i}"}], user_id=user_id)

    threads = [threading.Thread(target=append, args=(s, n)) for n, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_concurrent_appends_to_one_session_lose_nothing(store, make_store):
    store.save_session(Session(session_id="s", tenant_id=TENANT, user_id="alice"))
    stores = [make_store() for _ in range(4)]
    _append_at_once(stores, "s", 25)
    messages = [m["content"] for m in store.get_session(TENANT, "s").messages]
    assert sorted(messages) == sorted(f"{n}-{i}" for n in range(4) for i in range(25))
    for n in range(4):  # each writer's messages stay in the order it sent them
        assert [m for m in messages if m.startswith(f"{n}-")] == [f"{n}-{i}" for i in range(25)]
    assert [m["content"] for m in last_messages(store, "s", 5)[1]] == messages[-5:]


def test_the_first_turn_makes_the_session_its_persons_once_whoever_writes_first(store, make_store):
    with pytest.raises(SessionNotFound):
        store.append_to_session(TENANT, "s", [{"role": "user", "content": "lost"}])
    stores = [make_store() for _ in range(4)]
    _append_at_once(stores, "s", 10, user_id="alice")
    session = store.get_session(TENANT, "s")
    assert session.user_id == "alice" and session.title == ""
    assert sorted(m["content"] for m in session.messages) == sorted(f"{n}-{i}" for n in range(4) for i in range(10))
    store.append_to_session(TENANT, "s", [{"role": "user", "content": "named"}], title="Named", user_id="bob")
    session = store.get_session(TENANT, "s")
    assert (session.user_id, session.title, session.messages[-1]["content"]) == ("alice", "Named", "named")
    assert [s.session_id for s in store.list_sessions(TENANT, "alice")] == ["s"]
    assert store.list_sessions(TENANT, "bob") == []  # an append names no new owner


class Traffic:
    """What a store sends to its database and how much work that does, for one block: SQLite's
    statements with their values and the virtual machine's steps; the bytes of Redis's commands and
    of its answers. Counted, not timed, so a comparison cannot flake."""

    def __init__(self, store, backend, monkeypatch):
        self.store, self.backend, self.monkeypatch = store, backend, monkeypatch
        self.sent = self.received = self.steps = 0

    def __enter__(self):
        if self.backend == "sqlite":
            self.store._db.set_trace_callback(lambda sql: setattr(self, "sent", self.sent + len(sql)))
            self.store._db.set_progress_handler(lambda: setattr(self, "steps", self.steps + 1), 1)
        else:
            connection = redis.connection.AbstractConnection
            send, read = connection.send_packed_command, connection.read_response

            def sending(conn, command, *args, **kwargs):
                self.sent += sum(map(len, [command] if isinstance(command, (bytes, str)) else command))
                return send(conn, command, *args, **kwargs)

            def reading(conn, *args, **kwargs):
                response = read(conn, *args, **kwargs)
                self.received += len(repr(response))
                return response

            self.monkeypatch.setattr(connection, "send_packed_command", sending)
            self.monkeypatch.setattr(connection, "read_response", reading)
        return self

    def __exit__(self, *exc):
        if self.backend == "sqlite":
            self.store._db.set_trace_callback(None)
            self.store._db.set_progress_handler(None, 1)
        else:
            self.monkeypatch.undo()


def test_a_turn_costs_the_same_at_the_thousandth_message_as_at_the_eighth(store, backend, monkeypatch):
    """Appending a turn and reading the recent messages send, receive and do as much with 1000
    messages kept as with 6 (a digit more of a sequence number or a time aside); kept as one JSON
    list, every append sent the whole list again."""
    turn = [{"role": "user", "content": "x" * 200}, {"role": "assistant", "content": "y" * 200}]
    store.save_session(Session(session_id="short", tenant_id=TENANT, user_id="alice", messages=turn * 3))
    store.save_session(Session(session_id="long_", tenant_id=TENANT, user_id="alice", messages=turn * 500))
    costs = {}
    for sid in ("short", "long_"):
        with Traffic(store, backend, monkeypatch) as append:
            store.append_to_session(TENANT, sid, turn, title="a title")
        with Traffic(store, backend, monkeypatch) as recent:
            assert len(last_messages(store, sid, 8)[1]) == 8
        costs[sid] = append, recent
    for short, long in zip(costs["short"], costs["long_"]):
        assert long.sent <= short.sent + 32 and long.received <= short.received + 32, (vars(short), vars(long))
        assert long.steps <= short.steps + 8, (short.steps, long.steps)
    assert costs["long_"][0].sent < 2_000  # the turn itself, not the 400 kB kept before it
    assert len(store.get_session(TENANT, "long_").messages) == 1002


def test_last_event_id_is_where_a_live_stream_starts(store):
    assert store.last_event_id() == 0
    event = store.append_event(event_type="X", task_id="t", tenant_id=TENANT, user_id="alice", source="s", data={})
    assert store.last_event_id() == event.event_id


# -- sessions written before their messages were kept one by one ----------------------------
OLD_MESSAGES = [{"role": "user", "content": "bonjour", "at": 1.0},
                {"role": "assistant", "content": "salut", "reply": {"message_type": "chat_reply"}, "at": 2.0}]


def test_an_sqlite_file_with_messages_in_the_session_row_is_moved_once_and_takes_appends(db_path):
    with sqlite3.connect(db_path) as old:  # the sessions table as Flora wrote it before
        old.execute("CREATE TABLE sessions (tenant_id TEXT NOT NULL, session_id TEXT NOT NULL, user_id TEXT NOT NULL, "
                    "title TEXT NOT NULL DEFAULT '', messages TEXT NOT NULL DEFAULT '[]', created_at REAL NOT NULL, "
                    "updated_at REAL NOT NULL, PRIMARY KEY (tenant_id, session_id))")
        old.executemany("INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [(TENANT, "s1", "alice", "bonjour", json.dumps(OLD_MESSAGES), 1.0, 2.0),
                         (TENANT, "s2", "alice", "", "[]", 1.0, 1.0)])
        old.execute("PRAGMA user_version=4")
    old.close()
    store = SQLiteTaskStore(db_path)
    try:
        assert store.get_session(TENANT, "s1") == Session("s1", TENANT, "alice", "bonjour", OLD_MESSAGES, 1.0, 2.0)
        assert last_messages(store, "s1", 1) == ("alice", OLD_MESSAGES[1:])
        store.append_to_session(TENANT, "s1", [{"role": "user", "content": "encore"}])
        again = SQLiteTaskStore(db_path)  # another process opening the file: nothing left to move
        again.close()
        assert [m["content"] for m in store.get_session(TENANT, "s1").messages] == ["bonjour", "salut", "encore"]
        assert store.get_session(TENANT, "s2").messages == []
        with sqlite3.connect(db_path) as raw:
            assert raw.execute("SELECT DISTINCT messages FROM sessions").fetchall() == [("[]",)]
            assert raw.execute("PRAGMA user_version").fetchone()[0] == 5
        raw.close()
    finally:
        store.close()


def _old_redis_session(prefix: str, session_id: str, messages: list[dict]) -> None:
    """A session record as Flora kept it in Redis before: one JSON string holding every message."""
    raw = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        raw.set(f"{prefix}:{{{TENANT}}}:session:{session_id}",
                json.dumps({"session_id": session_id, "tenant_id": TENANT, "user_id": "alice", "title": "bonjour",
                            "messages": messages, "created_at": 1.0, "updated_at": 2.0}))
        raw.zadd(f"{prefix}:{{{TENANT}}}:sessions:alice", {session_id: 2.0})
    finally:
        raw.close()


def test_a_redis_session_record_with_its_messages_inside_reads_and_takes_appends(redis_store, redis_prefix):
    _old_redis_session(redis_prefix, "s1", OLD_MESSAGES)
    old = Session("s1", TENANT, "alice", "bonjour", OLD_MESSAGES, 1.0, 2.0)
    assert redis_store.get_session(TENANT, "s1") == old and redis_store.list_sessions(TENANT, "alice") == [old]
    assert last_messages(redis_store, "s1", 1) == ("alice", OLD_MESSAGES[1:])
    redis_store.append_to_session(TENANT, "s1", [{"role": "user", "content": "encore"}], title="ignored")
    session = redis_store.get_session(TENANT, "s1")
    assert [m["content"] for m in session.messages] == ["bonjour", "salut", "encore"]
    assert session.messages[:2] == OLD_MESSAGES and session.title == "bonjour" and session.updated_at > 2.0
    assert [m["content"] for m in last_messages(redis_store, "s1", 2)[1]] == ["salut", "encore"]
    raw = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:  # the record no longer carries them: they were moved in the append's transaction
        assert "messages" not in raw.get(f"{redis_prefix}:{{{TENANT}}}:session:s1")
    finally:
        raw.close()
    _old_redis_session(redis_prefix, "s2", OLD_MESSAGES)
    redis_store.save_session(Session("s2", TENANT, "alice", messages=[{"role": "user", "content": "new"}]))
    assert [m["content"] for m in redis_store.get_session(TENANT, "s2").messages] == ["new"]
    assert redis_store.delete_session(TENANT, "s2") and redis_store.get_session(TENANT, "s2") is None


def test_concurrent_appends_to_an_old_redis_record_move_its_messages_once(redis_prefix):
    _old_redis_session(redis_prefix, "s", OLD_MESSAGES)
    stores = [RedisTaskStore(REDIS_URL, prefix=redis_prefix) for _ in range(4)]
    _append_at_once(stores, "s", 10)
    messages = [m["content"] for m in stores[0].get_session(TENANT, "s").messages]
    for s in stores:
        s.close()
    assert messages[:2] == ["bonjour", "salut"]
    assert sorted(messages[2:]) == sorted(f"{n}-{i}" for n in range(4) for i in range(10))


# -- Redis only: its key layout ----------------------------------------------------------
@pytest.fixture
def redis_store(redis_prefix):
    s = RedisTaskStore(REDIS_URL, prefix=redis_prefix)
    yield s
    s.close()


def test_redis_keys_of_a_tenant_all_carry_its_hash_tag(redis_store, redis_prefix):
    task = add(redis_store, "t1", state=WAITING_PARAMETERS)
    emit(redis_store, "TASK_PAUSED", "t1")
    notify(redis_store, "n1", at=time.time())
    redis_store.save_draft(draft("d1", created_at=time.time()))
    redis_store.save_session(Session(session_id="s1", tenant_id=TENANT, user_id="alice"))
    raw = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        keys = set(raw.scan_iter(f"{redis_prefix}:*"))
    finally:
        raw.close()
    shared = {f"{redis_prefix}:tenants", f"{redis_prefix}:event_seq"}
    assert shared <= keys
    assert keys - shared and all(k.startswith(f"{redis_prefix}:{{{TENANT}}}:") for k in keys - shared)
    assert redis_store.get_task(TENANT, "t1") == task


@pytest.mark.parametrize("tenant", ["a{b}", "a}b", "a|b", ""])
def test_redis_refuses_a_tenant_id_that_would_break_the_key_layout(redis_store, tenant):
    with pytest.raises(ValueError, match="tenant id"):
        redis_store.get_task(tenant, "t1")
    with pytest.raises(ValueError, match="tenant id"):
        add(redis_store, "t1", tenant=tenant)


def test_redis_creates_a_task_only_in_a_life_cycle_state(redis_store):
    with pytest.raises(ValueError, match="unknown task state"):
        add(redis_store, "t1", state="running:bob")
    assert redis_store.count_by_state() == {}


def test_redis_close_hangs_up(redis_prefix):
    name = f"{redis_prefix}-client"
    own = RedisTaskStore(f"{REDIS_URL}{'&' if '?' in REDIS_URL else '?'}client_name={name}", prefix=redis_prefix)
    own.get_task(TENANT, "t1")
    watcher = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        assert any(c["name"] == name for c in watcher.client_list())
        own.close()
        assert not any(c["name"] == name for c in watcher.client_list())
    finally:
        watcher.close()


def test_processes_opening_a_new_store_at_once_all_open_it(tmp_path):
    """A node's actors open a new data directory together: switching the new file to WAL does
    not wait for the busy timeout by itself, so every opener must still get the store."""
    from common.tasks.sqlite_store import SQLiteTaskStore

    for attempt in range(60):
        path, errors, opened = tmp_path / f"new{attempt}.db", [], []

        def open_it():
            try:
                opened.append(SQLiteTaskStore(path))
            except Exception as exc:  # noqa: BLE001 - reported by the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        for store in opened:
            assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            store.close()
        assert not errors, errors


# -- one transaction per transition (SQLite) ------------------------------------------------
def test_a_transition_is_one_update_and_its_event_in_one_transaction(store, db_path):
    add(store, "t1")
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    store.transition_recorded(TENANT, "t1", RUNNING, PendingEvent("task_started", "test", {}),
                              parameters={"city": "Paris"}, missing=[], meta={"node": "n1"})
    store._db.set_trace_callback(None)
    verbs = [s.split()[0].upper() for s in statements]
    assert verbs == ["BEGIN", "UPDATE", "INSERT", "COMMIT"], statements  # every field in the one UPDATE
    task = store.get_task(TENANT, "t1")
    assert (task.state, task.parameters, task.meta) == (RUNNING, {"city": "Paris"}, {"node": "n1"})


def test_a_transition_whose_event_cannot_be_written_leaves_the_task_as_it_was(store, db_path, monkeypatch):
    add(store, "t1", parameters={"city": "Paris"})

    def refused(task, event):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(store, "_insert_event", refused)
    with pytest.raises(sqlite3.OperationalError):
        store.transition_recorded(TENANT, "t1", RUNNING, PendingEvent("task_started", "test", {}),
                                  parameters={"city": "Rome"})
    monkeypatch.undo()
    task = store.get_task(TENANT, "t1")
    assert (task.state, task.parameters) == (CREATED, {"city": "Paris"})  # all or nothing
    assert store.events(TENANT, task_id="t1") == []
    store.transition(TENANT, "t1", RUNNING)  # the connection is usable again


def test_a_refused_transition_says_what_state_the_task_is_in(store, db_path):
    add(store, "t1", state=COMPLETED)
    with pytest.raises(InvalidTransition, match="is completed"):
        store.transition_recorded(TENANT, "t1", RUNNING, PendingEvent("task_started", "test", {}))
    assert store.events(TENANT, task_id="t1") == []
