"""user_input → task_completed round trips through Flora, beside raw Thespian hops, and where
Flora's time goes.

For each actor system base, in the same run: Flora (fake LLM, a no-op capability, the
SQLite store, memory on as by default) and a raw three-actor chain with the same six hops
(bench/raw_chain.py). For each ``--in-flight`` count: latency p50/p99 (from a message's send
to its reply, with that many outstanding) and throughput, and the ratios Flora/raw.

Then the breakdown: a second Flora with ``actors.spans_dir`` set (common/spans.py) answers
``--breakdown-trips`` sequential round trips, and the time of one is split per component
(the store with its SQL statements, event publishing, the reading, memory bookkeeping,
persona and limit checks, each actor's own code) and per hop: the round trip less everything
the actors did is what moving the messages cost (Thespian's pickling, sockets, the asker).
Spans cost a little themselves, so the latency figures come from the first Flora, untimed.

Last, messages that need the reading and memory (``--model-path-trips``, on the first base):
people who have memories ask things no rule is sure of, and the own time of the reading
(SemanticReader: the embedding and the vote) and of the MemoryActor's recall (the query's
embedding, the Chroma queries) is reported as p50/p99 per call beside the raw dependency each
wraps, timed in the same run: one ``embed_queries`` call of the packaged embedding model.

    .venv/bin/python bench/pipeline.py [--trips 500] [--in-flight 1 16] [--bases simpleSystemBase multiprocTCPBase]
                                       [--breakdown-trips 200] [--content noop] [--model-path-trips 100]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from thespian.actors import ActorSystem  # noqa: E402

import main  # noqa: E402
from agents import actor_system  # noqa: E402
from bench.raw_chain import RawFront  # noqa: E402
from common import messages as m  # noqa: E402
from common import spans  # noqa: E402

WARMUP = 20


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def measure(system, target, make, key, trips: int, in_flight: int, check) -> dict:
    """Latency of each message from its send to its reply and the rate, ``in_flight`` outstanding
    (1: one ``ask`` after another)."""
    for i in range(WARMUP):  # processes, connections, caches
        check(system.ask(target, make(i), 30))
    latencies = []
    first = time.perf_counter()
    if in_flight == 1:
        for i in range(trips):
            started = time.perf_counter()
            check(system.ask(target, make(i), 30))
            latencies.append(time.perf_counter() - started)
    else:
        sent_at: dict = {}

        def send(i: int) -> None:
            msg = make(i)
            sent_at[key(msg)] = time.perf_counter()
            system.tell(target, msg)

        sent = 0
        while sent < min(in_flight, trips):
            send(sent)
            sent += 1
        while len(latencies) < trips:
            # simpleSystemBase's listen() sleeps until the next wake-up of any actor (Flora's actors keep
            # timers) before it hands over replies that are waiting already; listen(0) hands them over
            reply = system.listen(0) or system.listen(30)
            if reply is None:
                raise RuntimeError("no reply within 30 s")
            check(reply)
            latencies.append(time.perf_counter() - sent_at.pop(key(reply)))
            if sent < trips:
                send(sent)
                sent += 1
    return {"p50_ms": statistics.median(latencies) * 1000, "p99_ms": percentile(latencies, 99) * 1000,
            "per_s": trips / (time.perf_counter() - first)}


def start_flora(base: str, **actors):
    data_dir = tempfile.mkdtemp(prefix="flora-bench-")
    return main.start_flora({"data_dir": data_dir, "llm": {"backend": "none"}, "log_level": "ERROR",
                             "actors": {"system_base": base, "execution_pool_size": 2, **actors},
                             "capabilities": {"plugin_modules": ["bench.noop_plugin"], "entry_points": False}})


def flora_message(base: str, content: str):
    def make(i):
        return m.user_input(user_id=f"bench_{i % 50}", content=content, msg_id=f"msg_{base}_{i}_{time.monotonic_ns()}")
    return make


def check_completed(reply) -> None:
    if not isinstance(reply, dict) or reply.get("message_type") != "task_completed":
        raise RuntimeError(f"unexpected reply: {reply!r}")


def bench_flora(base: str, trips: int, in_flights: list[int], content: str) -> dict[int, dict]:
    flora = start_flora(base)
    try:
        return {n: measure(flora.system, flora.interaction, flora_message(base, content), lambda r: r["msg_id"],
                           trips, n, check_completed) for n in in_flights}
    finally:
        flora.shutdown()


def bench_raw(base: str, trips: int, in_flights: list[int]) -> dict[int, dict]:
    capabilities = {} if base == "simpleSystemBase" else {"Admin Port": actor_system.free_port()}
    system = ActorSystem(base, capabilities, logDefs=actor_system.thespian_log_defs())
    try:
        front = system.createActor(RawFront)

        def check(reply):
            if not isinstance(reply, dict) or reply.get("stage") != 2:
                raise RuntimeError(f"unexpected reply: {reply!r}")

        return {n: measure(system, front, lambda i: {"id": f"{i}_{time.monotonic_ns()}", "content": "noop"},
                           lambda r: r["id"], trips, n, check) for n in in_flights}
    finally:
        system.shutdown()


# -- the breakdown ---------------------------------------------------------------------------
COMPONENTS = (  # span name prefix -> the row it is counted in, in the order printed
    ("store.", "store"), ("events", "event publishing"), ("reading", "the reading"),
    ("memory", "memory bookkeeping"), ("persona", "persona"), ("limits", "limit checks"),
    ("conversation_log", "conversation log"), ("front_desk", "front desk rules"), ("rules", "agent rules"),
    ("protocol", "protocol checks"), ("capability", "the capability"), ("handler.", "actor code"),
)


def component(name: str) -> str:
    for prefix, row in COMPONENTS:
        if name.startswith(prefix):
            return row
    return "other"


def breakdown(base: str, trips: int, content: str) -> dict:
    """Per trip: each component's own ms and SQL statements, the messages handled, and the
    round trip; one Flora with spans on, ``trips`` sequential asks."""
    spans_dir = tempfile.mkdtemp(prefix="flora-spans-")
    flora = start_flora(base, spans_dir=spans_dir)
    make = flora_message(base, content)
    try:
        for i in range(WARMUP):
            check_completed(flora.system.ask(flora.interaction, make(i), 30))
        time.sleep(spans.FLUSH_S * 3)
        before = spans.read_totals(spans_dir)
        rounds = []
        for i in range(trips):
            started = time.perf_counter()
            check_completed(flora.system.ask(flora.interaction, make(i), 30))
            rounds.append(time.perf_counter() - started)
        time.sleep(spans.FLUSH_S * 3)
        recorded = spans.difference(spans.read_totals(spans_dir), before)
    finally:
        flora.shutdown()
    rows: dict[str, list[float]] = {}
    handled: dict[str, float] = {}
    for name, (count, seconds, statements) in recorded.items():
        row = rows.setdefault(component(name), [0.0, 0.0])
        row[0] += seconds * 1000 / trips
        row[1] += statements / trips
        if name.startswith("handler."):
            handled[name.split(".", 2)[1]] = handled.get(name.split(".", 2)[1], 0) + count / trips
    store = {name[len("store."):]: (s * 1000 / trips, st / trips, c / trips)
             for name, (c, s, st) in recorded.items() if name.startswith("store.")}
    spans_by_name = {name: (s * 1000 / trips, st / trips, c / trips) for name, (c, s, st) in recorded.items()}
    return {"round_ms": statistics.mean(rounds) * 1000, "round_p50_ms": statistics.median(rounds) * 1000,
            "rows": rows, "handled": handled, "store": store, "spans": spans_by_name}


def print_breakdown(base: str, result: dict, raw_p50_ms: float, detail: bool = False) -> None:
    inside = sum(ms for ms, _ in result["rows"].values())
    messages = sum(result["handled"].values())
    hops = messages + 1  # each message an actor handled came over one hop, and the reply goes back over one
    print(f"\n{base}: where one round trip goes (mean of {result['round_ms']:.2f} ms, spans on; "
          f"{hops:.1f} hops, raw chain p50 {raw_p50_ms:.2f} ms for 6)")
    print(f"  {'component':26} {'ms':>7} {'share':>6} {'SQL':>5}")
    transit = result["round_ms"] - inside
    print(f"  {'actor hops (transport)':26} {transit:7.3f} {transit / result['round_ms']:6.0%} {'':>5}")
    order = [row for _, row in COMPONENTS] + ["other"]
    for row in sorted(result["rows"], key=order.index):
        ms, statements = result["rows"][row]
        print(f"  {row:26} {ms:7.3f} {ms / result['round_ms']:6.0%} {statements:5.1f}")
    print("  messages handled per trip: " + ", ".join(f"{actor} {n:.1f}" for actor, n in
                                                      sorted(result["handled"].items())))
    if detail:
        for name, (ms, statements, calls) in sorted(result["spans"].items(), key=lambda kv: -kv[1][0]):
            print(f"    {name:44} {calls:5.1f}× {ms:7.3f} ms {statements:5.1f} SQL")
    print("  store calls per trip: " + ", ".join(f"{name} {calls:.1f}× {ms:.2f} ms {st:.0f} SQL" for name, (ms, st, calls)
                                                 in sorted(result["store"].items(), key=lambda kv: -kv[1][0])))


# -- messages that need the reading and memory ----------------------------------------------------
ASKED = ("hmm, what do you reckon I should do this weekend?", "能不能帮我想想周末去哪儿玩",
         "could you maybe have a look at that for me", "我最近睡得不太好，有什么办法吗",
         "what should I cook tonight, something light?", "那个事情你怎么看")
TOLD = ("The person lives in Hangzhou", "The person is allergic to peanuts", "The person likes hiking on weekends",
        "The person works as a nurse on night shifts", "The person's dog is called Bruno")
PEOPLE = 10
_SEED = """
import sys
from capabilities.memory.embedding import DEFAULT_EMBEDDING_MODEL, get_embedder
from capabilities.memory.store import MemoryStore
store = MemoryStore(get_embedder(DEFAULT_EMBEDDING_MODEL), path=sys.argv[1])
for i in range({people}):
    for fact in {told!r}:
        store.remember("default", f"bench_mem_{{i}}", fact)
"""


def seed_memories(data_dir: str) -> None:
    """Memories for the bench's people, written before Flora opens the store (in a process of
    their own: embedded Chroma is opened by one process at a time)."""
    subprocess.run([sys.executable, "-c", _SEED.format(people=PEOPLE, told=TOLD), str(Path(data_dir) / "memory")],
                   check=True, cwd=Path(__file__).resolve().parent.parent)


def raw_embedding(trips: int) -> list[float]:
    from capabilities.memory.embedding import DEFAULT_EMBEDDING_MODEL, get_embedder

    embedder = get_embedder(DEFAULT_EMBEDDING_MODEL)
    for text in ASKED:  # loaded and warm
        embedder.embed_queries([text])
    took = []
    for i in range(trips):
        started = time.perf_counter()
        embedder.embed_queries([ASKED[i % len(ASKED)]])
        took.append(time.perf_counter() - started)
    return took


def model_path(base: str, trips: int) -> dict[str, list[float]]:
    """The own times of the reading and the recall, per call, for ``trips`` messages of people
    who have memories (spans on)."""
    spans_dir = tempfile.mkdtemp(prefix="flora-spans-")
    data_dir = tempfile.mkdtemp(prefix="flora-bench-")
    seed_memories(data_dir)
    flora = main.start_flora({"data_dir": data_dir, "llm": {"backend": "none"}, "log_level": "ERROR",
                              "actors": {"system_base": base, "execution_pool_size": 2, "spans_dir": spans_dir},
                              "capabilities": {"plugin_modules": ["bench.noop_plugin"], "entry_points": False}})

    def ask(i):
        reply = flora.system.ask(flora.interaction, m.user_input(user_id=f"bench_mem_{i % PEOPLE}",
                                                                 content=ASKED[i % len(ASKED)]), 60)
        if not isinstance(reply, dict) or reply.get("message_type") == "task_error":
            raise RuntimeError(f"unexpected reply: {reply!r}")

    try:
        for i in range(len(ASKED)):
            ask(i)
        time.sleep(spans.FLUSH_S * 3)
        before = spans.read_samples(spans_dir)
        for i in range(trips):
            ask(i)
        time.sleep(spans.FLUSH_S * 3)
        return spans.samples_between(spans.read_samples(spans_dir), before)
    finally:
        flora.shutdown()


def print_model_path(base: str, samples: dict[str, list[float]], raw: list[float]) -> None:
    print(f"\n{base}: messages that need the reading and memory, each call's own time")
    print(f"  {'component':40} {'calls':>6} {'p50 ms':>8} {'p99 ms':>8}")
    rows = [("embed_queries, raw (the dependency)", raw)]
    rows += [(name, values) for name, values in sorted(samples.items())
             if values and (name == "reading" or name.startswith("handler.memory.") or name == "memory")]
    for name, values in rows:
        ms = [v * 1000 for v in values]
        print(f"  {name:40} {len(ms):6} {percentile(ms, 50):8.2f} {percentile(ms, 99):8.2f}")
    if samples.get("reading"):
        ms = [v * 1000 for v in samples["reading"]]
        print(f"  reading / raw embedding: p50 {percentile(ms, 50) / percentile([v * 1000 for v in raw], 50):.2f}x")


def main_(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trips", type=int, default=500)
    parser.add_argument("--in-flight", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--bases", nargs="+", default=["simpleSystemBase", "multiprocTCPBase"])
    parser.add_argument("--breakdown-trips", type=int, default=200, help="0: no breakdown")
    parser.add_argument("--content", default="noop", help="what each user_input says")
    parser.add_argument("--detail", action="store_true", help="the breakdown's every span name too")
    parser.add_argument("--model-path-trips", type=int, default=100,
                        help="messages that need the reading and memory, on the first base (0: none)")
    args = parser.parse_args(argv)
    print(f"{'base':18} {'flight':>6} {'what':6} {'p50 ms':>8} {'p99 ms':>8} {'trips/s':>9}")
    raws = {}
    for base in args.bases:
        raw = raws[base] = bench_raw(base, args.trips, args.in_flight)
        flora = bench_flora(base, args.trips, args.in_flight, args.content)
        for n in args.in_flight:
            for name, r in (("raw", raw[n]), ("flora", flora[n])):
                print(f"{base:18} {n:6} {name:6} {r['p50_ms']:8.3f} {r['p99_ms']:8.3f} {r['per_s']:9.1f}")
            print(f"{base:18} {n:6} {'ratio':6} {flora[n]['p50_ms'] / raw[n]['p50_ms']:8.2f} "
                  f"{flora[n]['p99_ms'] / raw[n]['p99_ms']:8.2f} {flora[n]['per_s'] / raw[n]['per_s']:9.2f}"
                  "   (flora/raw; targets ≤1.5, ≤1.5, ≥0.8)")
    if args.breakdown_trips:
        for base in args.bases:
            print_breakdown(base, breakdown(base, args.breakdown_trips, args.content), raws[base][1 if 1 in raws[base]
                                                                                               else args.in_flight[0]]["p50_ms"],
                            args.detail)
    if args.model_path_trips:
        raw = raw_embedding(args.model_path_trips)
        print_model_path(args.bases[0], model_path(args.bases[0], args.model_path_trips), raw)
    return 0


if __name__ == "__main__":
    sys.exit(main_())
