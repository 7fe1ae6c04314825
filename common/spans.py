"""Spans: where a message's time goes inside each process, for ``bench/pipeline.py``.

Off unless ``actors.spans_dir`` names a folder, and then free: ``span(name)`` returns one
shared do-nothing context manager. On, each process keeps, per span name, how often it ran,
its own time (its nested spans' time is theirs, so the names add up to the whole) and the
SQL statements run while it was the innermost span (``count_statements`` hooks a SQLite
connection). Spans nest per thread. A daemon thread writes the totals to
``<spans_dir>/<pid>.json`` every ``FLUSH_S``: actors live in several processes
(multiprocTCPBase) and the bench adds the files up (``read_totals``), before and after the
trips it times. Each call's own time is kept too, up to ``MAX_SAMPLES`` per name, in
``<spans_dir>/<pid>.samples`` (``read_samples``): a component's p50 and p99, not only its mean.

Span names are ``component`` or ``component.detail``: ``store.get_task``, ``reading``,
``memory``, ``persona``, ``limits``, ``events``, ``conversation_log``, ``rules``, and
``handler.<actor>.<message_type>`` for an actor's own code around them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

FLUSH_S = 0.2
OUTSIDE = "(no span)"
MAX_SAMPLES = 20_000  # per name and process: the calls' own times kept for percentiles


class _Off:
    """The span when recording is off: enters and leaves, nothing else."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


_OFF = _Off()
_recorder: "Recorder | None" = None


def span(name: str):
    """A context manager that times its block under ``name`` when recording is on."""
    return _OFF if _recorder is None else _Span(_recorder, name)


def enabled() -> bool:
    return _recorder is not None


def configure(spans_dir: str) -> None:
    """Start recording into ``spans_dir`` (once per process; empty: leave it off). An actor
    process forked from a recording one starts afresh: its parent's totals and file are not
    its own, and its parent's writer thread did not come along."""
    global _recorder
    if spans_dir and (_recorder is None or _recorder.pid != os.getpid()):
        _recorder = Recorder(Path(spans_dir) / f"{os.getpid()}.json")
        _recorder.start()


def count_statements(db: sqlite3.Connection) -> None:
    """Count the statements ``db`` runs, under the span that runs them (when recording is on)."""
    if _recorder is not None:
        db.set_trace_callback(_recorder.statement)


class _Span:
    __slots__ = ("recorder", "name", "started", "nested")

    def __init__(self, recorder: "Recorder", name: str):
        self.recorder, self.name = recorder, name

    def __enter__(self) -> None:
        self.nested = 0.0
        self.recorder.stack().append(self)
        self.started = time.perf_counter()

    def __exit__(self, *exc: Any) -> None:
        elapsed = time.perf_counter() - self.started
        stack = self.recorder.stack()
        stack.pop()
        if stack:
            stack[-1].nested += elapsed
        self.recorder.add(self.name, elapsed - self.nested)


class Recorder:
    """One process's totals: name -> [count, own seconds, SQL statements]."""

    def __init__(self, path: Path):
        self.path = path
        self.pid = os.getpid()
        self.totals: dict[str, list[float]] = {}
        self.samples: dict[str, list[float]] = {}
        self._lock = threading.Lock()
        self._local = threading.local()
        self._written = ""

    def stack(self) -> list[_Span]:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def add(self, name: str, seconds: float) -> None:
        with self._lock:
            entry = self.totals.setdefault(name, [0, 0.0, 0])
            entry[0] += 1
            entry[1] += seconds
            kept = self.samples.setdefault(name, [])
            if len(kept) < MAX_SAMPLES:
                kept.append(seconds)

    def statement(self, _sql: str) -> None:
        stack = self.stack()
        name = stack[-1].name if stack else OUTSIDE
        with self._lock:
            self.totals.setdefault(name, [0, 0.0, 0])[2] += 1

    def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        threading.Thread(target=self._flush_forever, name="flora-spans", daemon=True).start()

    def flush(self) -> None:
        with self._lock:
            text = json.dumps(self.totals)
            samples = json.dumps(self.samples) if text != self._written else ""
        if text != self._written:
            _write_whole(self.path.with_suffix(".samples"), samples)
            _write_whole(self.path, text)
            self._written = text

    def _flush_forever(self) -> None:
        while True:
            time.sleep(FLUSH_S)
            try:
                self.flush()
            except OSError:  # its folder is gone: the run it measured has ended
                return


def _write_whole(path: Path, text: str) -> None:
    # a writer's own partial file: two recorders of one process (a fork's, its parent's) never
    # replace each other's half-written one
    partial = path.with_suffix(f"{path.suffix}.{threading.get_ident()}.part")
    partial.write_text(text)
    partial.replace(path)  # a reader never sees half a file


def read_samples(spans_dir: str | Path) -> dict[str, list[float]]:
    """Every process's kept call times (seconds), keyed by process and name, in the order they
    ran (``samples_between`` takes the ones kept between two readings)."""
    out: dict[str, list[float]] = {}
    for path in Path(spans_dir).glob("*.samples"):
        for name, values in json.loads(path.read_text()).items():
            out.setdefault(f"{path.stem}\0{name}", []).extend(values)
    return out


def samples_between(after: dict[str, list[float]], before: dict[str, list[float]]) -> dict[str, list[float]]:
    """The call times kept between two ``read_samples``, per name (processes merged)."""
    out: dict[str, list[float]] = {}
    for key, values in after.items():
        name = key.split("\0", 1)[1]
        out.setdefault(name, []).extend(values[len(before.get(key, [])):])
    return out


def read_totals(spans_dir: str | Path) -> dict[str, list[float]]:
    """Every process's totals in ``spans_dir``, added up."""
    totals: dict[str, list[float]] = {}
    for path in Path(spans_dir).glob("*.json"):
        data = json.loads(path.read_text())  # replaced whole when written: never half a file
        for name, (count, seconds, statements) in data.items():
            entry = totals.setdefault(name, [0, 0.0, 0])
            entry[0] += count
            entry[1] += seconds
            entry[2] += statements
    return totals


def difference(after: dict[str, list[float]], before: dict[str, list[float]]) -> dict[str, list[float]]:
    """What was recorded between two ``read_totals``."""
    out = {}
    for name, (count, seconds, statements) in after.items():
        b = before.get(name, [0, 0.0, 0])
        if count - b[0] or statements - b[2]:
            out[name] = [count - b[0], seconds - b[1], statements - b[2]]
    return out


class Timed:
    """``target`` with each public method call timed as ``<prefix>.<method>`` (a store, while
    recording: each of its calls is a span of its own)."""

    def __init__(self, target: Any, prefix: str):
        self._target = target
        self._prefix = prefix

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name.startswith("_") or not callable(value):
            return value
        label = f"{self._prefix}.{name}"

        def timed(*args: Any, **kwargs: Any) -> Any:
            with span(label):
                return value(*args, **kwargs)

        return timed
