"""The dependency graph of a plan, condensed into the units that are scheduled.

Steps that depend on each other in a cycle (``s2`` needs ``s3``'s result and ``s3`` needs
``s2``'s), or a step that refines its own previous result, are *strongly coupled*: no order
runs one before the other, so they are planned and run together as one unit, in rounds.
Tarjan's algorithm finds these strongly connected components (SCCs); every step is in
exactly one. Collapsing each SCC to one node leaves a DAG of units (the condensation),
which is what a scheduler walks: a unit is ready when every unit it waits for is done.

Inside a coupled unit the steps run in the plan's order, one round after another (the
number of rounds is the caller's, ``planning.coupled_rounds``); a reference to a step of the
same unit that has not run yet in this round reads its previous round's result (null in the
first round).

Tarjan runs iteratively, so a 5,000-step chain needs no recursion limit.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from capabilities.routing.plan import Plan, PlanStep

COUPLED_PREFIX = "scc:"


@dataclass(frozen=True)
class Unit:
    """One step, or a group of strongly coupled steps run together."""

    id: str  # the step id, or "scc:s2+s3" for a coupled group ("scc:s4" for a step that refers to itself)
    step_ids: tuple[str, ...]  # in execution order within the unit (the plan's order)
    depends_on: frozenset[str]  # ids of the units it waits for

    @property
    def coupled(self) -> bool:
        return self.id.startswith(COUPLED_PREFIX)


class PlanGraph:
    def __init__(self, plan: Plan):
        self.plan = plan
        self._order = {step.id: i for i, step in enumerate(plan.steps)}
        self._steps: dict[str, PlanStep] = {step.id: step for step in plan.steps}
        self._sccs = [tuple(sorted(component, key=self._order.__getitem__))
                      for component in _tarjan([s.id for s in plan.steps], {s.id: s.depends_on for s in plan.steps})]
        self._units = self._condense()
        self._unit_of = {sid: unit.id for unit in self._units for sid in unit.step_ids}
        self._by_id = {unit.id: unit for unit in self._units}

    def sccs(self) -> list[tuple[str, ...]]:
        """The strongly connected components, dependencies before dependents; each in plan order."""
        return list(self._sccs)

    def units(self) -> list[Unit]:
        """The condensation DAG in topological order (ties broken by the plan's order)."""
        return list(self._units)

    def unit(self, unit_id: str) -> Unit:
        return self._by_id[unit_id]

    def unit_of(self, step_id: str) -> Unit:
        """The unit that runs ``step_id``."""
        return self._by_id[self._unit_of[step_id]]

    def ready(self, done: set[str], running: set[str]) -> list[Unit]:
        """Units not done or running whose units waited for are all in ``done`` (unit ids)."""
        return [u for u in self._units if u.id not in done and u.id not in running and u.depends_on <= done]

    def width(self) -> int:
        """How many units can run at once, at least: the most units at one depth (the longest
        chain of units before them). 1 means the units form one chain: nothing runs in parallel."""
        depth: dict[str, int] = {}
        for unit in self._units:  # topological
            depth[unit.id] = 1 + max((depth[dep] for dep in unit.depends_on), default=-1)
        counts: dict[int, int] = {}
        for level in depth.values():
            counts[level] = counts.get(level, 0) + 1
        return max(counts.values(), default=0)

    def critical_path(self, durations: dict[str, float], *, rounds: int = 1) -> float:
        """The longest chain of units by duration: no schedule can finish sooner.

        ``durations`` holds each step's duration; a coupled unit lasts the sum of its steps'
        durations times ``rounds`` (its steps run one after another, round after round).
        """
        if rounds < 1:
            raise ValueError(f"rounds must be at least 1, not {rounds}")
        finish: dict[str, float] = {}
        for unit in self._units:  # topological: what a unit waits for is already computed
            missing = [sid for sid in unit.step_ids if sid not in durations]
            if missing:
                raise ValueError(f"durations: no duration for step {missing[0]!r}")
            own = sum(float(durations[sid]) for sid in unit.step_ids) * (rounds if unit.coupled else 1)
            finish[unit.id] = own + max((finish[dep] for dep in unit.depends_on), default=0.0)
        return max(finish.values(), default=0.0)

    def _condense(self) -> list[Unit]:
        unit_of: dict[str, str] = {}
        members: dict[str, tuple[str, ...]] = {}
        for component in self._sccs:
            ordered = component
            coupled = len(ordered) > 1 or self._steps[ordered[0]].self_loop
            uid = COUPLED_PREFIX + "+".join(ordered) if coupled else ordered[0]
            members[uid] = ordered
            for sid in ordered:
                unit_of[sid] = uid
        waits: dict[str, set[str]] = {uid: set() for uid in members}
        for sid, uid in unit_of.items():
            waits[uid].update(unit_of[dep] for dep in self._steps[sid].depends_on if unit_of[dep] != uid)
        # Kahn's algorithm, lowest plan position first, so the order is stable and reads like the plan
        first = {uid: self._order[ids[0]] for uid, ids in members.items()}
        dependents: dict[str, list[str]] = {uid: [] for uid in members}
        pending = {uid: len(deps) for uid, deps in waits.items()}
        for uid, deps in waits.items():
            for dep in deps:
                dependents[dep].append(uid)
        heap = [(first[uid], uid) for uid, n in pending.items() if n == 0]
        heapq.heapify(heap)
        units: list[Unit] = []
        while heap:
            _, uid = heapq.heappop(heap)
            units.append(Unit(uid, members[uid], frozenset(waits[uid])))
            for nxt in dependents[uid]:
                pending[nxt] -= 1
                if pending[nxt] == 0:
                    heapq.heappush(heap, (first[nxt], nxt))
        return units


def _tarjan(nodes: list[str], edges: dict[str, tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Tarjan's SCC algorithm with an explicit stack instead of recursion.

    Edges run from a step to what it depends on, so a component is finished only after
    everything it depends on: the components come out dependencies first.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[tuple[str, ...]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(edges[succ])))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(tuple(component))
    return components
