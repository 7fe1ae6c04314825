"""ExecutionPool without actors: which worker takes a batch, held work, what to give up on."""

from __future__ import annotations

from capability_actors.execution_pool import UNPLACED_BEATS, ExecutionPool


def msg(task_id: str) -> dict:
    return {"message_type": "execute", "task_id": task_id}


def test_work_waits_until_a_worker_is_ready_then_goes_to_the_least_busy_one():
    pool = ExecutionPool(2)
    pool.add("w1"), pool.add("w2")
    assert pool.assign([msg("t1")]) is None and pool.assign([msg("t2"), msg("t3")]) is None
    assert pool.ready("w1", "A") == [[msg("t1")], [msg("t2"), msg("t3")]]
    assert pool.backlog == []
    assert pool.ready("nobody", "A") == []
    pool.ready("w2", "B")
    first = pool.assign([msg("t1"), msg("t2")])
    second = pool.assign([msg("t3")])
    assert (first.address, second.address) == ("w1", "w2")  # the batch stays on one worker
    assert set(first.in_flight) == {"t1", "t2"}
    pool.answered("w1", "t1"), pool.answered("w1", "t2")
    assert pool.idle().address == "w1"
    assert pool.snapshot() == [{"node": "A", "ready": True, "in_flight": 0}, {"node": "B", "ready": True, "in_flight": 1}]


def test_a_named_worker_takes_the_batch_even_before_it_is_ready():
    pool = ExecutionPool(1)
    fresh = pool.add("w1")
    assert pool.has_room() is False and pool.idle() is None
    assert pool.assign([msg("t1")], fresh) is fresh and pool.backlog == []


def test_removing_a_worker_gives_back_what_it_had_in_flight():
    pool = ExecutionPool(2)
    worker = pool.add("w1")
    pool.ready("w1", "A")
    pool.assign([msg("t1")])
    assert pool.remove(worker) == [msg("t1")]
    assert pool.find("w1") is None and pool.missing() == 2


def test_workers_on_a_node_gone_from_the_registry_or_never_placed_are_given_up():
    pool = ExecutionPool(3)
    pool.add("local"), pool.add("remote"), pool.add("unplaced")
    pool.ready("local", "A"), pool.ready("remote", "W")
    assert pool.to_replace({"A", "W"}, "A") == []  # all alive; "unplaced" has waited one beat
    assert pool.to_replace(None, "A") == []  # no shared registry: nothing to check nodes against
    gone = pool.to_replace({"A"}, "A")  # W's entry expired; the own node is never doubted
    assert [(w.address, why) for w, why in gone] == [("remote", "node W stopped answering"),
                                                      ("unplaced", "it was never placed on a node")]
    assert UNPLACED_BEATS == 3


def test_an_unplaced_worker_is_waited_for_at_least_half_a_minute_whatever_the_heartbeat():
    from capability_actors.execution_pool import unplaced_beats

    assert unplaced_beats(5.0) == 6 and unplaced_beats(0.5) == 60 and unplaced_beats(60.0) == UNPLACED_BEATS
    pool = ExecutionPool(1, unplaced_beats=unplaced_beats(0.5))
    pool.add("slow")
    assert all(pool.to_replace(None, "A") == [] for _ in range(59))  # a loaded node is still starting it
    assert [w.address for w, _ in pool.to_replace(None, "A")] == ["slow"]
