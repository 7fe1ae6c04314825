"""ExecutionPool: the ExecutionActors an actor keeps, as a plain class.

Both the AgentActor (single tasks) and the TaskGroupAggregatorActor (the steps of plans)
run their work on a pool of ExecutionActor children. The pool decides which worker takes a
batch of messages (the least busy ready one, or the one the caller names), remembers what
each has in flight until it answers, holds work while no worker is ready (none placed on a
node yet), and says which workers to give up on: one whose node left the node registry, one
Thespian never placed. The actor creates and stops the actors and sends the messages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

UNPLACED_BEATS = 3  # heartbeats to wait for an ExecutionActor to be placed before asking again
# ... and at least this long: a placement on another node starts a process there, which on a
# loaded machine takes seconds; giving up sooner kills each one before it is ready, forever
UNPLACED_MIN_S = 30.0


def unplaced_beats(heartbeat_interval_s: float) -> int:
    """How many heartbeats an unplaced ExecutionActor is waited for."""
    return max(UNPLACED_BEATS, math.ceil(UNPLACED_MIN_S / heartbeat_interval_s))


@dataclass
class Worker:
    """An ExecutionActor and the messages it has not answered yet (addresses are not
    hashable, so workers are kept in a list)."""

    address: Any
    in_flight: dict[str, dict] = field(default_factory=dict)  # by task_id
    node: str = ""  # where Thespian placed it, known once it answers ``configured``
    ready: bool = False
    beats_unready: int = 0  # heartbeats seen while not ready: placement has not happened


class ExecutionPool:
    def __init__(self, size: int, *, unplaced_beats: int = UNPLACED_BEATS):
        self.size = size  # the most workers; the AgentActor keeps this many, the group grows to it
        self.unplaced_beats = unplaced_beats
        self.workers: list[Worker] = []
        self.backlog: list[list[dict]] = []  # batches held while no worker is ready

    def add(self, address: Any) -> Worker:
        worker = Worker(address)
        self.workers.append(worker)
        return worker

    def find(self, address: Any) -> Worker | None:
        return next((w for w in self.workers if w.address == address), None)

    def ready(self, address: Any, node: str) -> list[list[dict]]:
        """A worker answered ``configured``: it takes work now. Returns the held batches, to assign again."""
        worker = self.find(address)
        if worker is None:
            return []
        worker.ready, worker.node = True, node
        backlog, self.backlog = self.backlog, []
        return backlog

    def assign(self, batch: list[dict], worker: Worker | None = None) -> Worker | None:
        """``worker`` (or else the least busy ready one), now holding the batch in flight; None
        when no worker is ready: the batch is held until one is."""
        if worker is None:
            ready = [w for w in self.workers if w.ready]
            if not ready:
                self.backlog.append(batch)
                return None
            worker = min(ready, key=lambda w: len(w.in_flight))
        for msg in batch:
            worker.in_flight[msg["task_id"]] = msg
        return worker

    def idle(self) -> Worker | None:
        """A ready worker with nothing in flight."""
        return next((w for w in self.workers if w.ready and not w.in_flight), None)

    def has_room(self) -> bool:
        return len(self.workers) < self.size

    def answered(self, address: Any, task_id: str | None) -> None:
        worker = self.find(address)
        if worker is not None:
            worker.in_flight.pop(task_id, None)

    def remove(self, worker: Worker) -> list[dict]:
        """Drop a worker; returns what it had in flight, to settle."""
        self.workers.remove(worker)
        return list(worker.in_flight.values())

    def to_replace(self, live_nodes: set[str] | None, own_node: str) -> list[tuple[Worker, str]]:
        """At a heartbeat: the workers to give up on, with why. ``live_nodes`` is None when
        there is no shared node registry to check against."""
        gone = []
        for worker in self.workers:
            remote = worker.node and worker.node != own_node
            if worker.ready and live_nodes is not None and remote and worker.node not in live_nodes:
                # its node's entry expired: killed, or cut off; Thespian would notice far later
                gone.append((worker, f"node {worker.node} stopped answering"))
            elif not worker.ready:
                worker.beats_unready += 1
                if worker.beats_unready >= self.unplaced_beats:
                    gone.append((worker, "it was never placed on a node"))
        return gone

    def missing(self) -> int:
        return max(0, self.size - len(self.workers))

    def any_ready(self) -> bool:
        return any(w.ready for w in self.workers)

    def snapshot(self) -> list[dict]:
        return [{"node": w.node, "ready": w.ready, "in_flight": len(w.in_flight)} for w in self.workers]
