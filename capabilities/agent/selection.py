"""Which tools the agent offers the model for one request: the few most relevant to it.

Every tool installed (Flora's own, a plugin's, a skill, an MCP server's) would take a small
model's whole context, and a long list of tools makes it choose worse. The request is held
against each tool's texts — its name and description, its description in other languages, the
example requests it declares — with the packaged multilingual embeddings that read messages
(:mod:`capabilities.cognition.semantic`), and each tool scores its nearest text's cosine. The
tools' vectors are kept per process and on disk like the example bank's, so a request costs
one embedding of its own (a few milliseconds) and a matrix product. Without the embedding
model the tools rank by the words of the request found in their name, keywords and examples.

The selection is made once per task and kept in its transcript: every step of the task, and
every run after a pause, offers the same tools, so the prompt's prefix stays the same and the
model host keeps it evaluated.
"""

from __future__ import annotations

import logging
import threading
from typing import Iterable

import numpy as np

from capabilities.agent import prompt
from capabilities.agent.budget import TOOLS_SHARE, ContextBudget, TokenCounter
from capabilities.base import DESCRIPTION_IN, CapabilitySpec
from capabilities.context.answers import mentions

log = logging.getLogger("flora.agent.selection")

MAX_TEXTS = 8  # of a tool's texts embedded: its description and the first examples


def tool_texts(spec: CapabilitySpec) -> list[str]:
    """What a tool is known by: ``name: description``, the description in other languages, and
    its example requests."""
    texts = [f"{spec.name.replace('_', ' ').replace('.', ' ')}: {spec.description}"]
    translated = spec.parameters.get(DESCRIPTION_IN)
    if isinstance(translated, dict):
        texts += [str(v) for v in translated.values() if str(v).strip()]
    texts += [e for e in spec.examples if e.strip()]
    return [" ".join(t.split())[:500] for t in texts[:MAX_TEXTS]]


class EmbeddingRanker:
    """Ranks tools by the cosine of the request to the nearest of their texts."""

    def __init__(self, embedder, cache_dir=None):
        self._embedder = embedder
        self._cache_dir = cache_dir

    def scores(self, request: str, specs: list[CapabilitySpec]) -> list[float]:
        from capabilities.cognition.semantic import text_vectors

        texts, owner = [], []
        for i, spec in enumerate(specs):
            for text in tool_texts(spec):
                texts.append(text)
                owner.append(i)
        if not texts:
            return [0.0] * len(specs)
        vectors = text_vectors(self._embedder, texts, self._cache_dir)
        query = self._embedder.embed_queries([" ".join(request.split())[:500]])[0]
        cosines = vectors @ query
        best = np.full(len(specs), -1.0)
        np.maximum.at(best, np.array(owner), cosines)
        return [float(v) + NAME_WEIGHT * named_share(request, spec) for v, spec in zip(best, specs)]


NAME_WEIGHT = 0.1  # of a cosine: the request saying the tool's name words ("write notes" for write_note)


def named_share(request: str, spec: CapabilitySpec) -> float:
    """The share of the tool's name words (three letters or more) that begin a word of the request."""
    parts = [p for p in spec.name.lower().replace(".", "_").split("_") if len(p) >= 3]
    if not parts:
        return 0.0
    words = [w.strip(".,;:!?'\"()") for w in request.lower().split()]
    return sum(any(w.startswith(p) for w in words) for p in parts) / len(parts)


class WordRanker:
    """Ranks tools by the request's words found in their name, keywords and examples (no model)."""

    def scores(self, request: str, specs: list[CapabilitySpec]) -> list[float]:
        out = []
        for spec in specs:
            score = 3.0 if mentions(request, spec.name) else 0.0
            score += sum(2.0 for kw in spec.keywords if mentions(request, kw))
            words = {w for text in tool_texts(spec) for w in text.lower().replace(":", " ").split() if len(w) > 3}
            score += sum(0.2 for w in words if mentions(request, w))
            out.append(score)
        return out


class ToolSelector:
    """The tools to offer for a request, best first, at most ``max_tools``."""

    def __init__(self, ranker, max_tools: int = 6):
        self._ranker = ranker
        self.max_tools = max_tools

    def ranked(self, request: str, specs: Iterable[CapabilitySpec]) -> list[CapabilitySpec]:
        specs = list(specs)
        if len(specs) <= 1:
            return specs
        try:
            scores = self._ranker.scores(request, specs)
        except Exception as exc:  # a broken embedder must not stop the agent: words still rank
            log.warning("tools ranked by words: the embedding ranker failed: %s", exc)
            scores = WordRanker().scores(request, specs)
        order = sorted(range(len(specs)), key=lambda i: (-scores[i], i))
        return [specs[i] for i in order]


_rankers: dict[str, object] = {}
_lock = threading.Lock()


def ranker_for(config) -> object:
    """The embedding ranker over the configured embedding model (``understanding.embedding_model``),
    kept per process; the word ranker where that model is not installed."""
    name = getattr(getattr(config, "understanding", None), "embedding_model", "") or "multilingual-e5-small"
    with _lock:
        if name not in _rankers:
            try:
                from capabilities.memory.embedding import get_embedder

                _rankers[name] = EmbeddingRanker(get_embedder(name))
            except Exception as exc:
                log.info("tools ranked by words: embedding model %s unavailable (%s)", name, exc)
                _rankers[name] = WordRanker()
        return _rankers[name]


def fit_tools(ranked: list[CapabilitySpec], counter: TokenCounter, budget: ContextBudget,
              max_tools: int) -> list[CapabilitySpec]:
    """The best-ranked tools whose catalogue lines fit the tools' share of the prompt, at most
    ``max_tools``."""
    room = int(budget.prompt_tokens * TOOLS_SHARE)
    chosen: list[CapabilitySpec] = []
    for spec in ranked:
        if len(chosen) >= max_tools:
            break
        cost = counter.count(prompt.tool_line(spec)) + 1
        if cost <= room:
            chosen.append(spec)
            room -= cost
    return chosen
