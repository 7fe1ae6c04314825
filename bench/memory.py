"""Long-term memory: which embedding model, and how fast recall is. Data: bench/memory/facts.jsonl
(facts in Chinese and English, each with a paraphrased question that shares few words with it;
a few pairs cross languages).

    .venv/bin/python bench/memory.py                 # everything, a table
    .venv/bin/python bench/memory.py --json out.json # and the figures as JSON
    .venv/bin/python bench/memory.py --quick         # a small slice, seconds (the unit test runs it)
    .venv/bin/python bench/memory.py --no-questions  # without the model-written questions (no LLM loaded)

What it measures:

- recall@1 and recall@5: every fact stored for one person, each question asked, is its fact
  among the top 1 / 5? For every installed catalogue model (capabilities/memory/embedding.py)
  and for BM25 over the same texts (tokens: latin words, Chinese characters and bigrams),
  overall and per language pair; beside each model, its cosines less each fact's hubness
  (``- hubness``: the order recall uses, capabilities/memory/hubness.py);
- the same through ``MemoryStore.recall`` as Flora runs it, each fact stored with the questions
  capabilities/memory/questions.py has the packaged model write for it (``+ questions`` row).
  The questions are written once per (model, prompt, fact) and kept in
  data/bench/memory-questions.json, so a second run loads no model; the first run writes
  ~840 questions (13–17 minutes on two cores);
- recall latency at 100, 1,000 and 10,000 memories of one person in an embedded Chroma, each
  memory with four questions: ``MemoryStore.recall`` (the question embedded, then the queries
  by fact and by question) beside one Chroma query alone with a vector made beforehand (the
  raw dependency), p50/p99 and the ratio. The filler memories are synthetic facts, embedded
  for real; their questions' vectors are the fact's with noise (what the index does does not
  depend on what a question says, and embedding 40,000 texts would take minutes);
- bytes on disk per stored memory at each size;
- embedding throughput: texts/s one per call and 32 per call;
- calibration: on bench/memory/pairs.jsonl (pairs labelled "the same fact" or not, and "what
  forget's words name" or not), each model's cosines and what its thresholds get wrong;
- what reaches a prompt: at each model's floor (``Calibration.bears_on``), how many questions
  still reach their fact (each fact a person's one memory, with its written questions) and how
  many chat messages about other things (bench/conversation's chat cases, the memory dialogs'
  chat turns) are kept from five persons' memories.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from capabilities.llm.models import DEFAULT_MODEL  # noqa: E402
from capabilities.memory.embedding import (CATALOGUE, DEFAULT_EMBEDDING_MODEL,  # noqa: E402
                                           DEFAULT_MEMORY_EMBEDDING_MODEL, EmbeddingModelMissing, get_embedder)
from capabilities.memory.hubness import Hubness, discounted  # noqa: E402

FACTS_FILE = ROOT / "bench" / "memory" / "facts.jsonl"
PAIRS_FILE = ROOT / "bench" / "memory" / "pairs.jsonl"  # labelled pairs: the same fact or not, forget's words or not
QUESTIONS_CACHE = ROOT / "data" / "bench" / "memory-questions.json"
QUESTIONS_PER_MEMORY = 4  # of the filler memories in the latency figures: as many as questions_per_language: 2 writes
SIZES = (100, 1_000, 10_000)
QUICK_SIZES = (100,)
LATENCY_QUERIES = 300
TARGET_RECALL_AT_5 = 0.90
TARGET_OVER_BM25 = 0.10
TARGET_P99_MS = 25.0
TENANT, USER = "bench", "person"


def load_facts(limit: int | None = None) -> list[dict]:
    rows = [json.loads(line) for line in FACTS_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:limit] if limit else rows


# --------------------------------------------------------------------------- BM25
_LATIN = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u4e00-\u9fff]+")
STOPWORDS = set("a an the i i'm my me is am are do does did what which who how when where why to of in on at for "
                "and or with should you your about be can there any".split())


def tokens(text: str) -> list[str]:
    """Latin words (minus stopwords) and, for Chinese, every character and every bigram."""
    text = text.lower()
    out = [w for w in _LATIN.findall(text) if w not in STOPWORDS]
    for run in _CJK.findall(text):
        out += list(run) + [run[i:i + 2] for i in range(len(run) - 1)]
    return out


class BM25:
    def __init__(self, docs: list[str], k1: float = 1.5, b: float = 0.75):
        self.docs = [Counter(tokens(d)) for d in docs]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / max(len(self.docs), 1)
        df = Counter(t for d in self.docs for t in d)
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.k1, self.b = k1, b

    def scores(self, query: str) -> np.ndarray:
        q = tokens(query)
        out = np.zeros(len(self.docs))
        for i, (doc, length) in enumerate(zip(self.docs, self.lengths)):
            norm = self.k1 * (1 - self.b + self.b * length / self.avg)
            out[i] = sum(self.idf.get(t, 0.0) * doc[t] * (self.k1 + 1) / (doc[t] + norm) for t in q if t in doc)
        return out


# --------------------------------------------------------------------------- recall@k
def ranks_of_answers(score_rows: np.ndarray) -> np.ndarray:
    """Row i scores every fact for question i; the rank (0 = first) of fact i. Facts that
    score the same as the answer share their places: the answer gets the middle of them. (A
    keyword method scores 0 for every fact without a word of the question; counting only the
    facts ranked strictly above would call such an answer found whenever few facts share a
    word with the question.)"""
    own = score_rows[np.arange(len(score_rows)), np.arange(len(score_rows))]
    above = (score_rows > own[:, None]).sum(1)
    tied = (score_rows == own[:, None]).sum(1) - 1
    return above + tied / 2


def recall_figures(ranks: np.ndarray, facts: list[dict]) -> dict:
    pairs = [f"{f['fact_lang']}->{f['question_lang']}" for f in facts]
    out = {"recall@1": float((ranks < 1).mean()), "recall@5": float((ranks < 5).mean()), "n": len(ranks)}
    for pair in sorted(set(pairs)):
        chosen = np.array([p == pair for p in pairs])
        out[f"recall@5 {pair}"] = float((ranks[chosen] < 5).mean())
    return out


def bench_recall(facts: list[dict], models: list[str]) -> dict:
    texts, questions = [f["fact"] for f in facts], [f["question"] for f in facts]
    bm25 = BM25(texts)
    results = {"bm25": recall_figures(ranks_of_answers(np.array([bm25.scores(q) for q in questions])), facts)}
    for name in models:
        embedder = get_embedder(name)
        p, q = embedder.embed_passages(texts), embedder.embed_queries(questions)
        results[name] = recall_figures(ranks_of_answers(q @ p.T), facts)
        hubs = Hubness(embedder).of(p)  # the order recall uses: less each fact's hubness
        results[f"{name} - hubness"] = recall_figures(ranks_of_answers(discounted(q @ p.T, hubs[None, :])), facts)
    return results


# --------------------------------------------------------------------------- with questions
def written_questions(facts: list[dict], model: str) -> list[list[str]]:
    """The questions QuestionWriter writes for each fact with packaged model ``model``, from the
    cache where it has them (keyed by model, prompt and fact), else written now."""
    from capabilities.memory.questions import DEFAULT_PER_LANGUAGE, PROMPT, QuestionWriter

    def key(fact: str) -> str:
        return hashlib.sha256("\x00".join([model, str(DEFAULT_PER_LANGUAGE), PROMPT, fact]).encode()).hexdigest()

    cache = json.loads(QUESTIONS_CACHE.read_text(encoding="utf-8")) if QUESTIONS_CACHE.exists() else {}
    missing = [f["fact"] for f in facts if key(f["fact"]) not in cache]
    if missing:
        from capabilities.llm.local import LocalLlamaLLM
        from capabilities.llm.models import ensure_model

        llm = LocalLlamaLLM(ensure_model(model, ROOT / "data"), n_ctx=2048, n_threads=2)
        writer = QuestionWriter(llm)
        started = time.perf_counter()
        for i, fact in enumerate(missing, 1):
            cache[key(fact)] = list(writer.questions(fact))
            if i % 20 == 0 or i == len(missing):
                print(f"  questions written for {i}/{len(missing)} facts ({time.perf_counter() - started:.0f} s)",
                      file=sys.stderr, flush=True)
                QUESTIONS_CACHE.parent.mkdir(parents=True, exist_ok=True)
                QUESTIONS_CACHE.write_text(json.dumps(cache, ensure_ascii=False, indent=0), encoding="utf-8")
        llm.close()
    return [cache[key(f["fact"])] for f in facts]


def bench_recall_with_questions(facts: list[dict], model: str, embedding_model: str) -> dict:
    """recall@1/@5 through MemoryStore.recall, every fact stored with its written questions."""
    from capabilities.memory.store import MemoryStore

    asked = written_questions(facts, model)
    work = Path(tempfile.mkdtemp(prefix="flora-memory-bench-"))
    try:
        store = MemoryStore(get_embedder(embedding_model), path=work)
        records = store.import_facts(TENANT, USER, [f["fact"] for f in facts], questions=asked)
        ids = [r.memory_id for r in records]
        ranks = []
        for fact, memory_id in zip(facts, ids):
            found = [h.record.memory_id for h in store.recall(TENANT, USER, fact["question"], 5)]
            ranks.append(found.index(memory_id) if memory_id in found else 5)
        del store
    finally:
        shutil.rmtree(work, ignore_errors=True)
    figures = recall_figures(np.array(ranks, dtype=float), facts)
    figures["questions_per_fact"] = float(np.mean([len(a) for a in asked]))
    return figures


# --------------------------------------------------------------------------- latency and size
FILLER_PARTS = {
    "en": (["Alex", "Maria", "Chen", "Omar", "Ines", "Kofi", "Yuki", "Lars", "Noor", "Pablo"],
           ["likes", "is learning", "writes about", "often cooks", "collects", "fixes", "teaches", "photographs"],
           ["old maps", "sourdough bread", "vintage cameras", "tide tables", "alpine flowers", "jazz records",
            "board games", "paper kites", "street food", "river fish", "wooden boats", "night trains"],
           ["on weekends", "every spring", "with friends", "before work", "in the garden", "at the club",
            "after dinner", "twice a month"]),
    "zh": (["小张", "老李", "王芳", "陈杰", "刘洋", "赵敏", "孙磊", "周婷", "吴昊", "郑爽"],
           ["喜欢", "正在学", "经常做", "收藏", "研究", "修理", "教别人", "拍摄"],
           ["老地图", "手工面包", "胶片相机", "潮汐表", "高山植物", "爵士唱片", "桌游", "风筝", "街头小吃",
            "河鱼", "木船", "夜班火车"],
           ["在周末", "每年春天", "和朋友一起", "上班前", "在院子里", "在俱乐部", "晚饭后", "每月两次"]),
}


def filler_facts(count: int) -> list[str]:
    """``count`` distinct synthetic facts, half English, half Chinese."""
    out = []
    for i in range(count):
        names, verbs, things, times = FILLER_PARTS["en" if i % 2 == 0 else "zh"]
        j = i // 2
        name, verb = names[j % 10], verbs[(j // 10) % 8]
        thing, when = things[(j // 80) % 12], times[(j // 960) % 8]
        sep = " " if i % 2 == 0 else ""
        out.append(sep.join([f"{name}'s friend #{j}" if i % 2 == 0 else f"{name}的第{j}位朋友", verb, thing, when]))
    return out


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q)) if values else float("nan")


def bench_latency(facts: list[dict], sizes: tuple[int, ...], queries: int,
                  model: str = DEFAULT_MEMORY_EMBEDDING_MODEL) -> list[dict]:
    from capabilities.memory.store import MemoryStore

    embedder = get_embedder(model)
    questions = [f["question"] for f in facts]
    real = [f["fact"] for f in facts]
    work = Path(tempfile.mkdtemp(prefix="flora-memory-bench-"))
    rows = []
    try:
        filler = filler_facts(max(sizes))
        filler_vectors = np.concatenate([embedder.embed_passages(filler[i:i + 64]) for i in range(0, len(filler), 64)])
        real_vectors = embedder.embed_passages(real)
        query_vectors = embedder.embed_queries(questions)
        rng = np.random.default_rng(7)

        def asked(vectors: np.ndarray) -> tuple[list[list[str]], list[np.ndarray]]:
            noisy = vectors[:, None, :] + rng.normal(0, 0.02, (len(vectors), QUESTIONS_PER_MEMORY, vectors.shape[1]))
            noisy /= np.linalg.norm(noisy, axis=2, keepdims=True)
            return [[f"question {j}" for j in range(QUESTIONS_PER_MEMORY)]] * len(vectors), list(noisy)

        for size in sizes:
            path = work / f"size-{size}"
            store = MemoryStore(embedder, path=path)
            n_real = min(len(real), size)
            for texts, vectors in ((real[:n_real], real_vectors[:n_real]),
                                   (filler[:size - n_real], filler_vectors[:size - n_real])):
                if texts:
                    q_texts, q_vectors = asked(vectors)
                    store.import_facts(TENANT, USER, texts, vectors, questions=q_texts, question_vectors=q_vectors)
            assert store.count(TENANT, USER) == size
            for q in questions[:5]:  # warm the index and the engine
                store.recall(TENANT, USER, q, 5)
            full, raw = [], []
            for i in range(queries):
                question = questions[i % len(questions)]
                started = time.perf_counter()
                store.recall(TENANT, USER, question, 5)
                full.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                store.raw_query(TENANT, USER, query_vectors[i % len(questions)], 5)
                raw.append((time.perf_counter() - started) * 1000)
            disk = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
            rows.append({"memories": size, "recall_p50_ms": percentile(full, 50), "recall_p99_ms": percentile(full, 99),
                         "chroma_p50_ms": percentile(raw, 50), "chroma_p99_ms": percentile(raw, 99),
                         "ratio_p50": percentile(full, 50) / percentile(raw, 50),
                         "bytes_per_memory": disk / size, "queries": queries})
            del store
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def bench_throughput(models: list[str], texts: list[str]) -> dict:
    out = {}
    for name in models:
        embedder = get_embedder(name)
        started = time.perf_counter()
        for text in texts:
            embedder.embed_passages([text])
        single = len(texts) / (time.perf_counter() - started)
        batch_texts = (texts * (1 + 128 // len(texts)))[:128]
        started = time.perf_counter()
        for i in range(0, len(batch_texts), 32):
            embedder.embed_passages(batch_texts[i:i + 32])
        out[name] = {"single_per_s": single, "batch32_per_s": len(batch_texts) / (time.perf_counter() - started)}
    return out


def bench_calibration(models: list[str]) -> dict:
    """Per model, on the labelled pairs: the cosines of pairs that say the same and of pairs
    that do not, and how many of each the model's calibrated threshold gets wrong."""
    pairs = [json.loads(line) for line in PAIRS_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = {}
    for name in models:
        embedder = get_embedder(name)
        a, b = embedder.embed_passages([p["a"] for p in pairs]), embedder.embed_passages([p["b"] for p in pairs])
        cosines = (a * b).sum(1)
        out[name] = {}
        for use, threshold in (("dedup", embedder.calibration.same_fact), ("forget", embedder.calibration.says_the_same)):
            same = [float(c) for c, p in zip(cosines, pairs) if p["use"] == use and p["same"]]
            other = [float(c) for c, p in zip(cosines, pairs) if p["use"] == use and not p["same"]]
            out[name][use] = {"threshold": threshold, "same_min": min(same), "other_max": max(other),
                              "missed": sum(c < threshold for c in same), "wrong": sum(c >= threshold for c in other),
                              "pairs": len(same) + len(other)}
    return out


def chat_messages() -> list[str]:
    """Messages about other things than the person: the conversation bench's chat cases and the
    memory dialogs' chat turns."""
    from bench.conversation_score import DEV_FILE, load_cases
    from bench.memory_dialogs import load_dialogs

    return ([c["say"] for c in load_cases(DEV_FILE) if c.get("expect", {}).get("intent") == "chat"]
            + [text for d in load_dialogs() for text in d["chat"]])


def bench_bearing(facts: list[dict], models: list[str], asked: list[list[str]] | None = None,
                  people: int = 5) -> dict:
    """Per model with a measured floor (``Calibration.bears_on``): each fact as a person's one
    memory (with its written questions where given, scored as recall scores it: ranking.fused),
    how many of the questions reach it at the floor, and of chat messages about other things,
    each asked of ``people`` such persons, how many are kept out of the prompt."""
    from capabilities.memory.ranking import fused

    chats = chat_messages()
    rng = np.random.default_rng(11)
    others = [rng.choice(len(facts), people, replace=False) for _ in chats]
    out = {}
    for name in models:
        embedder = get_embedder(name)
        floor = embedder.calibration.bears_on
        if floor <= -1:
            continue
        passages = embedder.embed_passages([f["fact"] for f in facts])
        questions = embedder.embed_queries([f["question"] for f in facts])
        chat_vectors = embedder.embed_queries(chats)
        written = [embedder.embed_passages(a) if a else None for a in (asked or [[]] * len(facts))]

        def score(query: np.ndarray, i: int) -> float:
            return fused(float(passages[i] @ query), None if written[i] is None else float((written[i] @ query).max()))

        related = np.array([score(q, i) for i, q in enumerate(questions)])
        unrelated = np.array([score(v, int(i)) for v, chosen in zip(chat_vectors, others) for i in chosen])
        out[name] = {"floor": floor, "related_kept": float(np.mean(related >= floor)),
                     "related_p1": float(np.percentile(related, 1)),
                     "unrelated_left_out": float(np.mean(unrelated < floor)),
                     "unrelated_p50": float(np.median(unrelated)), "related": len(related), "unrelated": len(unrelated),
                     "with_questions": asked is not None}
    return out


# --------------------------------------------------------------------------- report
def installed_models(wanted: list[str] | None) -> tuple[list[str], dict[str, str]]:
    chosen, missing = [], {}
    for name in wanted or list(CATALOGUE):
        try:
            get_embedder(name)
            chosen.append(name)
        except EmbeddingModelMissing as exc:
            missing[name] = str(exc)
    return chosen, missing


def run(quick: bool = False, models: list[str] | None = None, questions_model: str | None = None,
        latency_model: str = DEFAULT_MEMORY_EMBEDDING_MODEL) -> dict:
    """``questions_model``: the packaged LLM that writes each fact's questions (None: no such row)."""
    facts = load_facts()[::9] if quick else load_facts()  # quick: every 9th, all language pairs
    if quick and models is None:
        models = [DEFAULT_MEMORY_EMBEDDING_MODEL]
    models, missing = installed_models(models)
    recall = bench_recall(facts, models)
    if questions_model:  # the shipped model, and the one model alone it was chosen over
        for name in dict.fromkeys([DEFAULT_EMBEDDING_MODEL, DEFAULT_MEMORY_EMBEDDING_MODEL]):
            if name in models:
                recall[f"{name} + questions"] = bench_recall_with_questions(facts, questions_model, name)
    latency = bench_latency(load_facts(), QUICK_SIZES if quick else SIZES, 20 if quick else LATENCY_QUERIES,
                            latency_model)
    throughput = bench_throughput(models, [f["fact"] for f in facts[:32]])
    calibration = bench_calibration(models)
    bearing = bench_bearing(facts, models, written_questions(facts, questions_model) if questions_model else None)
    chosen = (recall.get(f"{DEFAULT_MEMORY_EMBEDDING_MODEL} + questions")
              or recall.get(f"{DEFAULT_MEMORY_EMBEDDING_MODEL} - hubness", {}))
    largest = latency[-1]
    targets = {
        "recall@5 >= 0.90": chosen.get("recall@5", 0.0) >= TARGET_RECALL_AT_5,
        "recall@5 >= BM25 + 10 points": chosen.get("recall@5", 0.0) - recall["bm25"]["recall@5"] >= TARGET_OVER_BM25,
        f"p99 <= 25 ms at {largest['memories']:,}": largest["recall_p99_ms"] <= TARGET_P99_MS,
    }
    return {"facts": len(facts), "models": models, "missing_models": missing, "recall": recall,
            "questions_model": questions_model, "latency_model": latency_model,
            "latency": latency, "throughput": throughput, "calibration": calibration, "bearing": bearing,
            "targets": targets,
            "quick": quick}


def report(result: dict) -> str:
    lines = [f"recall over {result['facts']} facts of one person (question -> its fact)", ""]
    columns = sorted({k for r in result["recall"].values() for k in r if k.startswith("recall@5 ")})
    head = f"{'method':45} {'recall@1':>9} {'recall@5':>9} " + " ".join(f"{c[9:]:>9}" for c in columns)
    lines += [head, "-" * len(head)]
    for name, r in result["recall"].items():
        lines.append(f"{name:45} {r['recall@1']:9.3f} {r['recall@5']:9.3f} "
                     + " ".join(f"{r.get(c, float('nan')):9.3f}" for c in columns))
    for name, why in result["missing_models"].items():
        lines.append(f"{name:27} not installed: {why}")
    if result.get("questions_model"):
        lines.append(f"(+ questions: each fact stored with the questions {result['questions_model']} wrote for it, "
                     "recalled through MemoryStore.recall)")
    model = result.get("latency_model", DEFAULT_MEMORY_EMBEDDING_MODEL)
    lines += ["", f"recall latency, {model}, embedded Chroma, one person's memories "
                  f"({QUESTIONS_PER_MEMORY} questions each), k=5", ""]
    head = (f"{'memories':>9} {'recall p50':>11} {'recall p99':>11} {'chroma p50':>11} {'chroma p99':>11} "
            f"{'ratio p50':>10} {'bytes/mem':>10}")
    lines += [head, "-" * len(head)]
    for row in result["latency"]:
        lines.append(f"{row['memories']:>9,} {row['recall_p50_ms']:>9.2f}ms {row['recall_p99_ms']:>9.2f}ms "
                     f"{row['chroma_p50_ms']:>9.2f}ms {row['chroma_p99_ms']:>9.2f}ms {row['ratio_p50']:>9.2f}x "
                     f"{row['bytes_per_memory']:>10,.0f}")
    lines += ["", "embedding throughput (texts/s)", ""]
    for name, t in result["throughput"].items():
        lines.append(f"{name:27} one per call {t['single_per_s']:8.1f}   32 per call {t['batch32_per_s']:8.1f}")
    lines += ["", "calibration on bench/memory/pairs.jsonl: cosine of pairs saying the same (lowest) and not "
                  "(highest), the model's threshold, what it gets wrong", ""]
    for name, uses in result.get("calibration", {}).items():
        for use, c in uses.items():
            lines.append(f"{name:27} {use:6} same >= {c['same_min']:.3f}  other <= {c['other_max']:.3f}  "
                         f"threshold {c['threshold']:.3f}: {c['missed']} missed, {c['wrong']} wrong of {c['pairs']}")
    lines += ["", "what reaches a prompt: each fact a person's one memory"
                  + (" with its written questions" if any(b["with_questions"] for b in result.get("bearing", {}).values())
                     else "") + "; its question kept at the model's floor (bears_on), and chat messages about "
                  "other things left out", ""]
    for name, b in result.get("bearing", {}).items():
        lines.append(f"{name:27} floor {b['floor']:.2f}: questions kept {b['related_kept']:.3f} of {b['related']} "
                     f"(p1 {b['related_p1']:.3f}), unrelated left out {b['unrelated_left_out']:.3f} of {b['unrelated']} "
                     f"(p50 {b['unrelated_p50']:.3f})")
    lines += ["", "targets"]
    lines += [f"  {'met ' if ok else 'MISSED'} {name}" for name, ok in result["targets"].items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small slice: every 9th fact, 100 memories, default model")
    parser.add_argument("--model", action="append", choices=list(CATALOGUE), help="only these models (repeatable)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--questions-model", default=DEFAULT_MODEL,
                        help=f"packaged LLM that writes each fact's questions (default {DEFAULT_MODEL})")
    parser.add_argument("--no-questions", action="store_true", help="facts alone: no questions, no LLM")
    parser.add_argument("--latency-model", default=DEFAULT_MEMORY_EMBEDDING_MODEL, choices=list(CATALOGUE),
                        help="the model the latency figures embed with (default: memory's)")
    args = parser.parse_args(argv)
    result = run(quick=args.quick, models=args.model,
                 questions_model=None if args.no_questions or args.quick else args.questions_model,
                 latency_model=args.latency_model)
    print(report(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    return result


if __name__ == "__main__":
    from capabilities.memory.embedding import allow_threads

    allow_threads()  # as in the MemoryActor's process; this one forks nothing either (not so under pytest)
    main()
