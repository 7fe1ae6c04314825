"""A 50-step plan (a DAG of mixed widths, fixed seed) run by Flora's TaskGroupAggregatorActor
and its ExecutionActors (multiprocTCPBase, SQLite store), over a capability with simulated
latency (bench/plan_plugin.py).

1. Wall time beside the critical-path lower bound (the longest chain of step latencies: no
   schedule on any number of workers finishes sooner), concurrency = the widest layer.
   Target: wall ≤ 1.2 × critical path.
2. Concurrency tuned by Optuna (``parallel_optimization``) beside a sweep of fixed settings
   (concurrency 1, 2, 4, 8), on a backend that slows down past 4 calls at once, same run.

    .venv/bin/python bench/plan_dag.py [--steps 50] [--seed 7] [--trials 12] [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from thespian.actors import ActorExitRequest, ActorSystem  # noqa: E402

from agents.coordination.plan_desk import PlanDesk  # noqa: E402
from capabilities.routing.plan import Plan  # noqa: E402
from capabilities.routing.plan_graph import PlanGraph  # noqa: E402
from capability_actors.task_group_aggregator_actor import TaskGroupAggregatorActor  # noqa: E402
from common import messages as m  # noqa: E402
from common.runtime import Runtime  # noqa: E402
from config import load_config  # noqa: E402

CAPACITY, SLOWDOWN = 4, 1.0  # the simulated backend: each call past 4 at once adds 100% latency
SWEEP = (1, 2, 4, 8)


def dag(steps: int, seed: int, ms: tuple[float, float], extra: dict) -> Plan:
    """Layers of random width (1 to 10); each step needs one or two steps of the layer before."""
    rng = random.Random(seed)
    layers, left = [], steps
    while left:
        width = min(left, rng.randint(1, 10))
        layers.append([f"s{steps - left + i + 1}" for i in range(width)])
        left -= width
    plan = []
    for depth, layer in enumerate(layers):
        for sid in layer:
            needs = rng.sample(layers[depth - 1], min(len(layers[depth - 1]), rng.randint(1, 2))) if depth else []
            plan.append({"id": sid, "capability": "sim_work", "depends_on": needs, "kind": "leaf",
                         "parameters": {"ms": round(rng.uniform(*ms)), **extra}})
    return Plan.from_dict({"steps": plan, "aggregation": {"strategy": "concat"}})


def config(data_dir: Path, planning: dict, seed: int, trials: int) -> dict:
    return {"data_dir": str(data_dir), "log_level": "ERROR", "llm": {"backend": "none"},
            "actors": {"system_base": "multiprocTCPBase"},
            "capabilities": {"plugin_modules": ["bench.plan_plugin"]},
            "parallel": {"max_concurrency": 8, "max_batch": 2, "explore_trials": trials, "seed": seed},
            "planning": {"max_steps": 1000, "max_workers": 8, "max_retries": 0, **planning}}


class Group:
    """A TaskGroupAggregatorActor of its own config, and a way to run one plan through it."""

    def __init__(self, system: ActorSystem, cfg: dict):
        self.system, self.runtime = system, Runtime.from_config(cfg)
        self.desk = PlanDesk(self.runtime.store, self.runtime.events, self.runtime.registry, None,
                             start=lambda *a: [], pending={})
        self.actor = system.createActor(TaskGroupAggregatorActor)
        system.ask(self.actor, m.configure(config=load_config(cfg, env={}).to_dict(), role="task_group"), 30)

    def run(self, plan: Plan) -> tuple[float, dict]:
        request = m.agent_task(task_id=m.new_id("task"), msg_id=m.new_id("msg"), tenant_id="default",
                               user_id="bench", content="a 50-step plan")
        ((_, run),) = self.desk.start(request, plan)
        started = time.perf_counter()
        reply = self.system.ask(self.actor, run, 600)
        elapsed = time.perf_counter() - started
        if not reply or not reply.get("ok"):
            raise RuntimeError(f"the plan did not complete: {reply!r}")
        return elapsed, self.runtime.store.get_task("default", request["task_id"]).meta

    def close(self) -> None:
        self.system.tell(self.actor, ActorExitRequest())
        self.runtime.close()


def bound(plan: Plan) -> float:
    return PlanGraph(plan).critical_path({s.id: s.parameters["ms"] / 1000 for s in plan.steps})


def width(plan: Plan) -> int:
    depth: dict[str, int] = {}
    for s in plan.steps:
        depth[s.id] = 1 + max((depth[d] for d in s.depends_on), default=0)
    return max(list(depth.values()).count(d) for d in set(depth.values()))


def run(steps: int, seed: int, trials: int, ms: tuple[float, float]) -> dict:
    data_dir = Path(tempfile.mkdtemp(prefix="flora-bench-plan-"))
    active = data_dir / "active"
    active.mkdir()
    system = ActorSystem("multiprocTCPBase")
    result: dict = {"steps": steps, "seed": seed}
    try:
        # 1. wall time against the critical path, as wide as the plan's widest layer
        plan = dag(steps, seed, ms, {})
        wide = width(plan)
        group = Group(system, config(data_dir, {"parallelism": "fixed", "concurrency": wide, "max_workers": wide},
                                     seed, trials))
        group.run(plan)  # warm-up: the group's ExecutionActors start
        walls = [group.run(plan)[0] for _ in range(3)]
        group.close()
        result.update(width=wide, critical_path_s=bound(plan), wall_s=min(walls), walls_s=walls)

        # 2. on an overloadable backend: a sweep of fixed settings, then Optuna in the same run
        loaded = dag(steps, seed, ms, {"capacity": CAPACITY, "slowdown": SLOWDOWN, "active_dir": str(active)})
        sweep = {}
        for concurrency in SWEEP:
            group = Group(system, config(data_dir, {"parallelism": "fixed", "concurrency": concurrency}, seed, trials))
            group.run(loaded)
            sweep[concurrency] = group.run(loaded)[0]
            group.close()
        group = Group(system, config(data_dir, {"parallelism": "tuned"}, seed, trials))
        group.run(loaded)  # warm-up (counts as a trial)
        tuned = [group.run(loaded)[0] for _ in range(trials)]
        optimizer = group.runtime.registry.get_capability("parallel_optimization")
        best = optimizer.best("sim_work")
        settled = [group.run(loaded)[0] for _ in range(2)]  # suggestions now exploit the best found
        group.close()
        result.update(sweep_s=sweep, tuned_trials_s=tuned, tuned_best={"concurrency": best.concurrency,
                                                                        "batch_size": best.batch_size},
                      tuned_wall_s=min(settled))
    finally:
        system.shutdown()
    return result


def report(r: dict) -> None:
    ratio = r["wall_s"] / r["critical_path_s"]
    print(f"plan: {r['steps']} steps (seed {r['seed']}), widest layer {r['width']}")
    print(f"{'':44}{'seconds':>9}")
    print(f"{'critical-path lower bound':44}{r['critical_path_s']:9.3f}")
    print(f"{'Flora wall time (best of 3)':44}{r['wall_s']:9.3f}   ratio {ratio:.2f}×  target ≤ 1.2×")
    print(f"backend slows past {CAPACITY} calls at once: fixed settings vs Optuna")
    best_fixed = min(r["sweep_s"], key=r["sweep_s"].get)
    for concurrency, wall in r["sweep_s"].items():
        mark = "  ← best fixed" if concurrency == best_fixed else ""
        print(f"{'fixed concurrency ' + str(concurrency):44}{wall:9.3f}{mark}")
    best = r["tuned_best"]
    print(f"{'Optuna best (c=%d, batch=%d) after %d trials' % (best['concurrency'], best['batch_size'], len(r['tuned_trials_s'])):44}"
          f"{r['tuned_wall_s']:9.3f}   vs best fixed {r['tuned_wall_s'] / r['sweep_s'][best_fixed]:.2f}×")


def main_(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--trials", type=int, default=12, help="Optuna trials before it settles")
    parser.add_argument("--quick", action="store_true", help="shorter latencies and fewer trials")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    ms = (40.0, 80.0) if args.quick else (150.0, 300.0)
    result = run(args.steps, args.seed, 6 if args.quick else args.trials, ms)
    report(result)
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main_())
