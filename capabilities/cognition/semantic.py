"""SemanticReader: what a message most resembles among labelled examples of how people talk.

Rules read the words they were written for and a small model reads the rest; both miss
phrasings nobody foresaw ("can you mute the bins reminder for a couple of weeks?" is neither a
new reminder nor chat). The reader embeds the message with the packaged multilingual model
(the one long-term memory uses) and reads it two ways. Its nearest labelled utterances vote:
each of the ``k`` nearest votes for its reading with a weight that falls off with its distance
from the nearest (a softmax over their cosines). And a linear head trained on the whole bank
(reading_head.py) gives each reading a probability. A reading's share is the two mixed, ``MIX``
of the head's and the rest of the vote's; a family's share is the sum of its kinds'. The
result, a :class:`Reading`, says which family won, which kind within it, and by what share.

The head reads better than the vote where a message lies between two crowds of examples: over
the bank read by tenths (bench/semantic_reading.py), the family is right 91 % of the time
instead of 80 %; on the splits of the evaluation set, 91 % instead of 85 %. Mixed, at each
threshold the reading is right more often than the vote alone was (leave-one-out, as the
thresholds were first set) and about as many readings reach it: 50 %, right 95 % of the time
instead of 85 %; 60 %, 97 % instead of 89 %; 90 %, 99.8 % instead of 97 % (docs/conversation.md).
So the reading decides only where it is that sure and another reader (a rule, the model)
disagrees with it.

The bank is JSON lines, ``{"text": ..., "reading": "<family>/<kind>"}``, in
``capabilities/cognition/utterances/`` (the shipped ones) and in any files the configuration
adds (``understanding.examples_files``): an operator teaches Flora how their people talk by
writing more lines, no code. Families::

    chat  task  plan  loop  task_op  loop_op  status  command  unsupported  clarify  answer  memory

``memory`` is what the person asks of Flora's memory of them: ``memory/list`` (what do you remember
about me?), ``memory/forget`` (one thing), ``memory/clear`` (everything).

Installed capabilities add their declared examples (``task/<name>``), so a plugin teaches the
reader what requests for it sound like; a capability the bank does not know by a few examples is
one its reading never overrules (``covered``).

Embedding the bank takes a few seconds; each example's vector is kept per process and on disk
under ``$XDG_CACHE_HOME/flora/readings`` (or ``~/.cache/...``), keyed by the model and the
example's text, so a restart reads them back and a new example costs only its own embedding.
The head (one to two seconds to train) is kept there too, keyed by the whole bank.

Exceptions::

    BankError   a bank file is unreadable or a line is not a labelled utterance (names the file and line)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from capabilities.cognition import reading_head

log = logging.getLogger("flora.semantic")

FAMILIES = ("chat", "task", "plan", "loop", "task_op", "loop_op", "status", "command", "unsupported",
            "clarify", "answer", "memory")
SHIPPED = Path(__file__).resolve().parent / "utterances"
NEIGHBOURS = 10
TEMPERATURE = 0.02  # of the softmax over the neighbours' cosines that weighs their votes
# the head's part in a reading's share (the vote has the rest) and the temperature of its softmax:
# the best of a grid read by tenths of the bank (bench/semantic_reading.py --tune; 91.3 % against
# 91.0-91.2 % for the settings nearest, 80.2 % for the vote alone)
MIX = 0.7
HEAD_TEMPERATURE = 1.4
# The thresholds were set on the vote alone, read leave-one-out: at each, that many readings were
# right (85 %, 89 %, 97 %). The mixed reading, read by tenths, is right more often at each (95 %,
# 97 %, 99.8 %) with about as many readings reaching it (86 %, 74 %, 18 % of the bank, against
# 86 %, 70 %, 21 %), so they stay: lowered to where the mixed reading keeps only the old
# precision, 50 % and 60 % would let every reading through (it is right 91 % of the time
# overall) and 90 % would be 61 %, far more overruling than the rules were ever measured against.
CERTAIN = 0.9  # a reading this sure overrules even a precise rule (a new reminder)
SURE = 0.6  # a reading this sure overrules a rule that reads otherwise
LEANS = 0.5  # ...and this sure, the small model's reading, or a paused question's answer
MAX_CHARS = 500  # of a message, embedded
BATCH = 64


class BankError(ValueError):
    """A bank file cannot be read, or a line of it is not a labelled utterance."""


@dataclass(frozen=True)
class Utterance:
    text: str
    family: str
    kind: str


@dataclass(frozen=True)
class Reading:
    """What a message resembles: ``family`` (one of :data:`FAMILIES`), the ``kind`` within it
    ("cancel", "pause", "clear"…), the family's ``share`` (0–1: the head's probability and the
    nearest examples' vote, mixed) and the cosine of the ``nearest`` example."""

    family: str
    kind: str
    share: float
    nearest: float

    def sure(self, threshold: float = SURE) -> bool:
        return self.share >= threshold

    def to_dict(self) -> dict:
        return {"family": self.family, "kind": self.kind, "share": round(self.share, 3),
                "nearest": round(self.nearest, 3)}

    @classmethod
    def from_dict(cls, data: dict | None) -> "Reading | None":
        """A reading carried in a message; None for none or a malformed one."""
        if not isinstance(data, dict) or data.get("family") not in FAMILIES:
            return None
        try:
            return cls(str(data["family"]), str(data.get("kind", "")), float(data["share"]),
                       float(data.get("nearest", 0.0)))
        except (KeyError, TypeError, ValueError):
            return None


KNOWN_AT = 3  # examples of a capability the bank needs before its reading may overrule a task of it


def covered(bank: Iterable[Utterance], at_least: int = KNOWN_AT) -> frozenset[str]:
    """The capabilities the bank knows by enough examples (``task/<name>``). A reading is blind
    to the rest (a plugin's capability it has never seen said), so it never overrules a task of
    one of those."""
    counts: dict[str, int] = defaultdict(int)
    for u in bank:
        if u.family == "task":
            counts[u.kind] += 1
    return frozenset(name for name, n in counts.items() if n >= at_least)


@dataclass(frozen=True)
class ExampleBank:
    """The utterances a deployment's messages are read by (the registry's ``semantic_examples``),
    with the capabilities they know worked out once."""

    utterances: tuple[Utterance, ...]
    known: frozenset[str]

    @classmethod
    def of(cls, utterances: Iterable[Utterance]) -> "ExampleBank":
        kept = tuple(utterances)
        return cls(kept, covered(kept))


def knows(registry, capability: str | None) -> bool:
    """Whether the registry's example bank knows ``capability`` well enough for a reading to
    overrule a task of it (None: no capability to weigh, so yes; no bank: no)."""
    if capability is None:
        return True
    bank = registry.get_capability("semantic_examples", None)
    return bank is not None and capability in bank.known


def load_bank(paths: Iterable[Path]) -> list[Utterance]:
    """The labelled utterances in ``paths`` (files, or folders of ``*.jsonl``), in order."""
    out: list[Utterance] = []
    for path in paths:
        path = Path(path)
        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        for file in files:
            out += _read_file(file)
    return out


def _read_file(file: Path) -> list[Utterance]:
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BankError(f"{file}: cannot read the examples: {exc}") from None
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            text, reading = row["text"], row["reading"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise BankError(f"{file}:{number}: not a labelled utterance; write "
                            '{"text": "...", "reading": "<family>/<kind>"}') from None
        family, _, kind = str(reading).partition("/")
        if not isinstance(text, str) or not text.strip() or family not in FAMILIES:
            raise BankError(f"{file}:{number}: reading {reading!r} is not one of {', '.join(FAMILIES)} "
                            "(as <family>/<kind>), or the text is empty")
        out.append(Utterance(" ".join(text.split()), family, kind))
    return out


class SemanticReader:
    """Reads a message by the labelled utterances nearest to it and by a head trained on them all
    (``embedder``: a :class:`~capabilities.memory.embedding.Embedder`; ``mix``: the head's part in
    a reading's share, 0 for the vote alone)."""

    def __init__(self, embedder, bank: list[Utterance], *, k: int = NEIGHBOURS, cache_dir: Path | None = None,
                 mix: float = MIX):
        if not bank:
            raise BankError("the example bank is empty")
        self._embedder = embedder
        self._bank = bank
        self._k = min(k, len(bank))
        cache_dir = cache_dir if cache_dir is not None else default_cache_dir()
        self._vectors = _bank_vectors(embedder, bank, cache_dir)
        self._families = np.array([u.family for u in bank])
        labels = [f"{u.family}/{u.kind}" for u in bank]
        self._labels = tuple(dict.fromkeys(labels))  # every reading the bank holds, the head's order
        where = {label: i for i, label in enumerate(self._labels)}
        self._label_of = np.array([where[label] for label in labels])
        self._family_of_label = np.array([FAMILIES.index(label.partition("/")[0]) for label in self._labels])
        self._mix = mix
        self._head = reading_head.cached(embedder.name, [u.text for u in bank], labels, self._vectors,
                                         cache_dir) if mix > 0 else None

    def __len__(self) -> int:
        return len(self._bank)

    def read(self, text: str, *, impossible: Iterable[str] = ()) -> Reading | None:
        """The reading of ``text``; None for an empty message. ``impossible``: families the
        person's situation rules out (no task to operate on, no loop task, no question
        waiting), whose examples do not vote and which the head does not weigh."""
        text = _clean(text)
        if not text:
            return None
        vector = self._embedder.embed_queries([text])[0]
        return self.read_vector(vector, impossible=impossible)

    @property
    def bank(self) -> list[Utterance]:
        return self._bank

    @property
    def vectors(self) -> np.ndarray:
        return self._vectors

    @property
    def k(self) -> int:
        return self._k

    @property
    def head(self) -> reading_head.ReadingHead | None:
        return self._head

    def read_vector(self, vector: np.ndarray, *, impossible: Iterable[str] = (), leave_out: int | None = None) -> Reading:
        """``leave_out``: an example of the bank that does not vote (to read the bank by itself;
        the head, trained on the whole bank, still knows it: bench/semantic_reading.py reads the
        bank by folds instead)."""
        impossible = list(impossible)
        scores = self._scores(vector, impossible, leave_out)
        nearest = np.argpartition(-scores, self._k - 1)[:self._k]
        top = float(scores[nearest].max())
        shares = self._vote(scores, nearest, top)
        if self._head is not None:
            believed = self._believed(vector, impossible)
            if believed.any():
                shares = (1 - self._mix) * shares + self._mix * believed
        families = np.bincount(self._family_of_label, shares, minlength=len(FAMILIES))
        winner = int(np.argmax(families))  # a tie goes to the family named first in FAMILIES
        kind = int(np.argmax(np.where(self._family_of_label == winner, shares, -1.0)))
        return Reading(FAMILIES[winner], self._labels[kind].partition("/")[2], float(families[winner]), top)

    def _scores(self, vector: np.ndarray, impossible: list[str], leave_out: int | None) -> np.ndarray:
        scores = self._vectors @ vector
        if impossible or leave_out is not None:
            scores = np.where(np.isin(self._families, impossible), -2.0, scores)  # below any cosine: never nearest
            if leave_out is not None:
                scores[leave_out] = -2.0
        return scores

    def _vote(self, scores: np.ndarray, nearest: np.ndarray, top: float) -> np.ndarray:
        """Each reading's share of the nearest examples' vote (in the order of ``_labels``)."""
        # the model's cosines crowd together (0.85-0.95): a softmax lets a clearly nearer
        # example count for more than a crowd of middling ones
        weights = np.exp((scores[nearest] - top) / TEMPERATURE)
        votes = np.bincount(self._label_of[nearest], weights, minlength=len(self._labels))
        return votes / (votes.sum() or 1.0)

    def _believed(self, vector: np.ndarray, impossible: list[str]) -> np.ndarray:
        """The head's probability of each reading, those of ``impossible`` families left out
        (all 0 where it leaves none)."""
        believed = self._head.probabilities(vector, HEAD_TEMPERATURE)[0]
        if impossible:
            believed = np.where(np.isin(self._family_of_label, [FAMILIES.index(f) for f in impossible]), 0.0, believed)
            total = believed.sum()
            believed = believed / total if total > 0 else believed
        return believed

    def neighbours(self, text: str, n: int = 5) -> list[tuple[Utterance, float]]:
        """The ``n`` nearest examples with their cosines (to show why a message read as it did)."""
        vector = self._embedder.embed_queries([_clean(text)])[0]
        scores = self._vectors @ vector
        return [(self._bank[i], float(scores[i])) for i in np.argsort(-scores)[:n]]


def _clean(text: str) -> str:
    return " ".join(text.split())[:MAX_CHARS]


# --------------------------------------------------------------------------- bank vectors
_memo: dict[tuple[str, str], np.ndarray] = {}  # (model, text key) -> vector, this process's
_memo_lock = threading.Lock()


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "flora" / "readings"


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def text_vectors(embedder, texts: list[str], cache_dir: Path | None = None) -> np.ndarray:
    """The vectors of ``texts`` (one row each), kept like the bank's: per process and on disk."""
    return _bank_vectors(embedder, [Utterance(" ".join(t.split()), "task", "") for t in texts], cache_dir)


def _bank_vectors(embedder, bank: list[Utterance], cache_dir: Path | None) -> np.ndarray:
    """The bank's vectors, each from this process's memo, else the disk cache, else embedded now
    (and the cache written back). Vectors are kept as float16: one answer whichever way it came."""
    keys = [_key(u.text) for u in bank]
    file = (cache_dir if cache_dir is not None else default_cache_dir()) / f"{embedder.name}.npz"
    with _memo_lock:
        missing = [k for k in dict.fromkeys(keys) if (embedder.name, k) not in _memo]
        if missing:
            _memo.update({(embedder.name, k): v for k, v in _read_cached(file).items()})
            missing = [k for k in missing if (embedder.name, k) not in _memo]
        if missing:
            text_of = {k: u.text for k, u in zip(keys, bank)}
            texts = [text_of[k] for k in missing]
            log.info("embedding %d example utterances (kept in %s)", len(texts), file)
            vectors = np.concatenate([embedder.embed_queries(texts[i:i + BATCH]) for i in range(0, len(texts), BATCH)])
            for k, v in zip(missing, vectors.astype(np.float16).astype(np.float32)):
                _memo[(embedder.name, k)] = v
            _write_cached(file, {k: v for (model, k), v in _memo.items() if model == embedder.name})
        return np.stack([_memo[(embedder.name, k)] for k in keys])


def _read_cached(file: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(file) as data:
            keys, vectors = data["keys"], data["vectors"]
    except (OSError, ValueError, KeyError):
        return {}
    if vectors.ndim != 2 or len(keys) != len(vectors):
        return {}
    return {str(k): v.astype(np.float32) for k, v in zip(keys, vectors)}


def _write_cached(file: Path, vectors: dict[str, np.ndarray]) -> None:
    """Best effort: a cache that cannot be written only costs the next start the embedding.
    Written whole and renamed into place, so another process never reads half of it."""
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=file.parent, suffix=".tmp.npz", delete=False) as out:
            np.savez(out, keys=np.array(list(vectors)), vectors=np.stack(list(vectors.values())).astype(np.float16))
        os.replace(out.name, file)
    except OSError as exc:
        log.info("example vectors not cached at %s: %s", file, exc)


def main(argv: list[str] | None = None) -> int:
    """``python -m capabilities.cognition.semantic warm [--config FILE]``: embed the example bank
    of this configuration once and train its head, so Flora's first start reads messages at once
    (install runs it)."""
    import argparse

    from config import load_config
    from init_plugins import build_registry

    parser = argparse.ArgumentParser(prog="python -m capabilities.cognition.semantic", description=main.__doc__)
    parser.add_argument("command", choices=["warm"])
    parser.add_argument("--config", help="a Flora config file (its understanding.examples_files count too)")
    args = parser.parse_args(argv)
    config = load_config(args.config)
    if not config.understanding.examples:
        print("understanding.examples is off: nothing to embed")
        return 0
    reader = build_registry(config).get_capability("semantic_reader")
    print(f"{len(reader)} example utterances embedded, the head trained (kept in {default_cache_dir()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
