"""ResultAggregator (the ``result_aggregation`` capability): many results, one answer.

The results of a plan's subtasks, or the opinions of a panel of experts, arrive as
:class:`Outcome` values; :meth:`ResultAggregator.aggregate` turns them into one
:class:`Aggregate` by a strategy:

``concat``
    every successful value, in the given order, as ``{"source", "value"}`` items.
``map_reduce``
    ``map`` takes a part of each value (a field path such as ``"rows"`` or
    ``"items[0].name"``, or a callable), ``reduce`` combines the parts: ``concat`` (lists
    spliced, texts joined), ``sum`` (numbers), ``merge`` (objects, later sources win, clashes
    listed), ``count`` (items; a list counts its elements) or ``summary`` (the model writes
    one text from the parts). A source whose value has no such field counts as failed.
``voting``
    each source one vote for its answer after normalisation (case, spacing, punctuation,
    and only the "Final answer:" line when the text has one), so "Paris." and "paris" agree.
    A tie between the leading answers is settled by the ``tie`` policy: ``first`` (the
    tied answer given first), ``weighted`` (the larger summed weight, then first), ``none``
    (no answer: ``value`` is None and ``detail["tied"]`` lists them) or ``llm`` (the model
    picks one of the tied answers).
``weighted``
    numbers give the weighted mean; anything else is a vote where each source counts its
    weight (ties as in voting, with ``weighted`` meaning "more sources, then first").
    ``weights`` (``{source: weight}``) overrides the outcomes' own weights.

Partial failure: failed outcomes are left out and named in ``Aggregate.failed``; fewer than
``min_ok`` (default 1) successful ones raise :class:`AggregationError`.

Exceptions::

    AggregationError (ValueError)   bad strategy or option, too few results, values the
                                    strategy cannot combine, a model step that failed
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable

from capabilities.cognition.rule_tables import table
from capabilities.llm.base import LLMError, complete_json

STRATEGIES = ("concat", "map_reduce", "voting", "weighted")
TIE_POLICIES = ("first", "weighted", "none", "llm")
REDUCERS = ("concat", "sum", "merge", "count", "summary")
DEFAULT_TIE = "first"
DEFAULT_REDUCE = "concat"
SUMMARY_MAX_TOKENS = 512

_OPTIONS = {
    "concat": {"min_ok"},
    "map_reduce": {"min_ok", "map", "reduce", "instruction"},
    "voting": {"min_ok", "key", "tie"},
    "weighted": {"min_ok", "key", "tie", "weights"},
}
_FINAL_LINE = table("aggregation")["final_answer_line"]  # "Final answer: X", "结论：X" -> X
_MAX_FINAL_CHARS = 200  # a longer "answer:" line is prose, not a short verdict to count
_NUMBER_TEXT = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")


class AggregationError(ValueError):
    """Results could not be combined; the message names the strategy, option or sources."""


@dataclass(frozen=True)
class Outcome:
    """One subtask's or one expert's result."""

    source: str  # step id or expert name
    ok: bool
    value: Any = None
    error: str = ""
    weight: float = 1.0


@dataclass(frozen=True)
class Aggregate:
    """The combined answer, how it was reached, and who was left out."""

    strategy: str
    value: Any  # JSON
    detail: dict  # votes per answer, tie flag, weights used, per-part results ...
    failed: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"strategy": self.strategy, "value": self.value, "detail": self.detail, "failed": list(self.failed)}


class ResultAggregator:
    """Stateless apart from the model, which only ``summary`` reduction and ``tie="llm"`` use.

    ``llm_provider`` (a function returning the model, or None) defers building the model
    until one of those needs it: most aggregations never do.
    """

    def __init__(self, llm=None, *, llm_provider: Callable[[], Any] | None = None):
        self._given = llm
        self._provider = llm_provider

    @property
    def _llm(self):
        if self._given is None and self._provider is not None:
            self._given, self._provider = self._provider(), None
        return self._given

    def aggregate(self, outcomes: list[Outcome], strategy: str = "concat", **options: Any) -> Aggregate:
        if strategy not in STRATEGIES:
            raise AggregationError(f"strategy: unknown aggregation strategy {strategy!r}; "
                                   f"use one of {', '.join(STRATEGIES)}")
        unknown = sorted(set(options) - _OPTIONS[strategy])
        if unknown:
            raise AggregationError(f"{strategy}: unknown option(s) {', '.join(unknown)}; "
                                   f"known: {', '.join(sorted(_OPTIONS[strategy]))}")
        min_ok = options.get("min_ok", 1)
        if isinstance(min_ok, bool) or not isinstance(min_ok, int) or min_ok < 0:
            raise AggregationError(f"{strategy}: min_ok must be a whole number >= 0, got {min_ok!r}")
        errors = {o.source: o.error or "failed" for o in outcomes if not o.ok}
        ok = [o for o in outcomes if o.ok]
        if strategy == "map_reduce":  # a value without the mapped part is a failure of its source
            ok, errors = _map_all(ok, options.get("map"), errors)
        # a vote needs at least one ballot whatever min_ok says; a list may be empty
        needs_one = strategy in ("voting", "weighted") or options.get("reduce") == "summary"
        needed = max(min_ok, 1) if needs_one else min_ok
        if len(ok) < needed:
            named = "; ".join(f"{s}: {e}" for s, e in errors.items()) or "none"
            raise AggregationError(f"{strategy}: {len(ok)} of {len(outcomes)} results usable, at least "
                                   f"{needed} needed; failed: {named}")
        value, detail = getattr(self, f"_{strategy}")(ok, options)
        if errors:
            detail = {**detail, "errors": errors}
        return Aggregate(strategy, value, detail, tuple(errors))

    # -- strategies --------------------------------------------------------------------
    def _concat(self, ok: list[Outcome], options: dict) -> tuple[Any, dict]:
        return [{"source": o.source, "value": o.value} for o in ok], {"count": len(ok)}

    def _map_reduce(self, ok: list[Outcome], options: dict) -> tuple[Any, dict]:
        reduce = options.get("reduce", DEFAULT_REDUCE)
        if reduce not in REDUCERS:
            raise AggregationError(f"map_reduce: reduce must be one of {', '.join(REDUCERS)}, got {reduce!r}")
        parts = [{"source": o.source, "value": o.value} for o in ok]
        detail: dict = {"reduce": reduce, "parts": parts}
        if reduce == "concat":
            return _reduce_concat([o.value for o in ok]), detail
        if reduce == "sum":
            total = sum(_as_number(o.value, f"map_reduce sum: {o.source}") for o in ok)
            return _tidy_number(total), detail
        if reduce == "count":
            counts = {o.source: _count(o.value) for o in ok}
            return sum(counts.values()), {**detail, "counts": counts}
        if reduce == "merge":
            merged, conflicts = _merge(ok)
            return merged, {**detail, "conflicts": conflicts}
        return self._summary(ok, options.get("instruction", "")), detail

    def _voting(self, ok: list[Outcome], options: dict) -> tuple[Any, dict]:
        tie = _tie_policy(options, "voting")
        ballots = _ballots(ok, options.get("key"))
        votes: dict[str, int] = {}
        weights: dict[str, float] = {}
        for norm, o, _ in ballots:
            votes[norm] = votes.get(norm, 0) + 1
            weights[norm] = weights.get(norm, 0.0) + _weight(o, {})
        return self._decide(ballots, votes, tie, secondary=weights, strategy="voting")

    def _weighted(self, ok: list[Outcome], options: dict) -> tuple[Any, dict]:
        overrides = options.get("weights") or {}
        if not isinstance(overrides, dict):
            raise AggregationError("weighted: weights must map source names to numbers")
        used = {o.source: _weight(o, overrides) for o in ok}
        picked = [_pick(o, options.get("key")) for o in ok]
        if all(_is_number(v) for v in picked):
            total = sum(used.values())
            if total <= 0:
                raise AggregationError("weighted: the weights of the usable results add up to 0")
            mean = sum(used[o.source] * _as_number(v, o.source) for o, v in zip(ok, picked)) / total
            return _tidy_number(mean), {"kind": "numeric", "weights": used, "total_weight": total}
        tie = _tie_policy(options, "weighted")
        ballots = _ballots(ok, options.get("key"))
        scores: dict[str, float] = {}
        votes: dict[str, int] = {}
        for norm, o, _ in ballots:
            scores[norm] = scores.get(norm, 0.0) + used[o.source]
            votes[norm] = votes.get(norm, 0) + 1
        value, detail = self._decide(ballots, scores, tie, secondary=votes, strategy="weighted")
        return value, {"kind": "categorical", "weights": used, "votes": votes, **detail}

    # -- shared steps ------------------------------------------------------------------
    def _decide(self, ballots: list[tuple[str, Outcome, Any]], scores: dict[str, float], tie: str, *,
                secondary: dict[str, float], strategy: str) -> tuple[Any, dict]:
        """The leading answer by ``scores``; ``secondary`` breaks a tie under the ``weighted`` policy."""
        first_value = {}
        for norm, _, value in ballots:
            first_value.setdefault(norm, value)
        top = max(scores.values())
        tied = [norm for norm in first_value if math.isclose(scores[norm], top)]  # in order of first appearance
        key = "scores" if strategy == "weighted" else "votes"
        detail: dict = {key: scores, "tie": len(tied) > 1, "tie_policy": tie}
        if len(tied) == 1:
            winner = tied[0]
        elif tie == "first":
            winner = tied[0]
        elif tie == "weighted":
            best = max(secondary[n] for n in tied)
            winner = next(n for n in tied if math.isclose(secondary[n], best))
        elif tie == "none":
            return None, {**detail, "tied": [first_value[n] for n in tied], "winner": None}
        else:
            winner = self._llm_pick([first_value[n] for n in tied], tied)
        if len(tied) > 1:
            detail["tied"] = [first_value[n] for n in tied]
        return first_value[winner], {**detail, "winner": winner}

    def _llm_pick(self, answers: list[Any], normalised: list[str]) -> str:
        if self._llm is None:
            raise AggregationError("tie='llm': breaking a tie by the model needs a model, and none is configured")
        listed = "\n".join(f"{i}. {_text(a)}" for i, a in enumerate(answers))
        schema = {"type": "object", "properties": {"choice": {"type": "integer", "minimum": 0,
                                                              "maximum": len(answers) - 1}},
                  "required": ["choice"]}
        prompt = ("These answers received the same support. Pick the one most likely to be correct "
                  f"and answer with its number as JSON {{\"choice\": N}}.\n{listed}")
        try:
            choice = complete_json(self._llm, [{"role": "user", "content": prompt}], schema, max_tokens=32)
        except LLMError as exc:
            raise AggregationError(f"tie='llm': the model could not break the tie: {exc}") from exc
        return normalised[choice["choice"]]

    def _summary(self, ok: list[Outcome], instruction: str) -> str:
        if self._llm is None:
            raise AggregationError("map_reduce: reduce='summary' needs a model, and none is configured")
        parts = "\n\n".join(f"[{o.source}]\n{_text(o.value)}" for o in ok)
        ask = instruction or "Combine these partial results into one clear, complete answer."
        try:
            reply = self._llm.complete([{"role": "user", "content": f"{ask}\n\n{parts}"}],
                                       max_tokens=SUMMARY_MAX_TOKENS)
        except LLMError as exc:
            raise AggregationError(f"map_reduce: the model could not write the summary: {exc}") from exc
        return reply.text.strip()


# -- normalisation ---------------------------------------------------------------------
def final_answer(text: str) -> str:
    """The short "Final answer: ..." (or "答案：...") line of a text when it has one, else the text."""
    found = [m.group(1) for m in _FINAL_LINE.finditer(text) if len(m.group(1)) <= _MAX_FINAL_CHARS]
    return found[-1] if found else text


def normalize_answer(value: Any) -> str:
    """The form answers are compared in: texts reduced to their final answer, case-folded,
    punctuation dropped (but not a decimal point inside a number), spacing collapsed;
    other JSON values as canonical JSON."""
    if not isinstance(value, str):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    text = final_answer(value)
    chars = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch).startswith("P"):
            between_digits = ch in ".," and 0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit()
            chars.append(ch if between_digits else " ")
        else:
            chars.append(ch)
    return " ".join("".join(chars).casefold().split())


def _ballots(ok: list[Outcome], key: Any) -> list[tuple[str, Outcome, Any]]:
    ballots = []
    for o in ok:
        value = _pick(o, key)
        shown = final_answer(value).strip() if isinstance(value, str) else value
        ballots.append((normalize_answer(value), o, shown))
    return ballots


def _pick(o: Outcome, key: Any) -> Any:
    if key is None:
        return o.value
    try:
        return resolve_path(o.value, key) if isinstance(key, str) else key(o.value)
    except (KeyError, IndexError, TypeError) as exc:
        raise AggregationError(f"key: {o.source} has no {key!r} ({exc})") from None


def _tie_policy(options: dict, strategy: str) -> str:
    tie = options.get("tie", DEFAULT_TIE)
    if tie not in TIE_POLICIES:
        raise AggregationError(f"{strategy}: tie must be one of {', '.join(TIE_POLICIES)}, got {tie!r}")
    return tie


def _weight(o: Outcome, overrides: dict) -> float:
    weight = overrides.get(o.source, o.weight)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0 or math.isnan(weight):
        raise AggregationError(f"weights: {o.source} has weight {weight!r}; weights are numbers >= 0")
    return float(weight)


# -- map / reduce helpers --------------------------------------------------------------
def resolve_path(value: Any, path: str) -> Any:
    """``value`` at a field path such as ``"rows"``, ``"items[0].name"`` or ``"[2]"``."""
    if path in ("", "$"):
        return value
    end = 0
    for match in _PATH_PART.finditer(path):
        if match.start() != end and path[end:match.start()] != ".":
            raise TypeError(f"bad path {path!r}")
        end = match.end()
        name, index = match.groups()
        if name is not None:
            if not isinstance(value, dict):
                raise TypeError(f"{type(value).__name__} has no field {name!r}")
            value = value[name]
        else:
            if not isinstance(value, list):
                raise TypeError(f"{type(value).__name__} is not a list")
            value = value[int(index)]
    if end != len(path):
        raise TypeError(f"bad path {path!r}")
    return value


def _map_all(ok: list[Outcome], mapper: Any, errors: dict[str, str]) -> tuple[list[Outcome], dict[str, str]]:
    if mapper is None:
        return ok, errors
    if not (isinstance(mapper, str) or callable(mapper)):
        raise AggregationError(f"map_reduce: map must be a field path or a function, got {mapper!r}")
    mapped, errors = [], dict(errors)
    for o in ok:
        try:
            part = resolve_path(o.value, mapper) if isinstance(mapper, str) else mapper(o.value)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            errors[o.source] = f"map {mapper if isinstance(mapper, str) else 'function'}: {exc}"
            continue
        mapped.append(Outcome(o.source, True, part, weight=o.weight))
    return mapped, errors


def _reduce_concat(values: list[Any]) -> Any:
    if values and all(isinstance(v, str) for v in values):
        return "\n\n".join(v for v in values if v)
    joined: list = []
    for v in values:
        joined.extend(v if isinstance(v, list) else [v])
    return joined


def _count(value: Any) -> int:
    if value is None:
        return 0
    return len(value) if isinstance(value, (list, dict)) else 1


def _merge(ok: list[Outcome]) -> tuple[dict, list[dict]]:
    merged: dict = {}
    conflicts: list[dict] = []
    for o in ok:
        if not isinstance(o.value, dict):
            raise AggregationError(f"map_reduce merge: {o.source} gave a {type(o.value).__name__}, not an object")
        _merge_into(merged, o.value, o.source, "", conflicts)
    return merged, conflicts


def _merge_into(target: dict, incoming: dict, source: str, prefix: str, conflicts: list[dict]) -> None:
    for key, value in incoming.items():
        path = f"{prefix}{key}"
        if key in target and isinstance(target[key], dict) and isinstance(value, dict):
            _merge_into(target[key], value, source, f"{path}.", conflicts)
            continue
        if key in target and target[key] != value:
            conflicts.append({"key": path, "kept": value, "replaced": target[key], "source": source})
        target[key] = value if not isinstance(value, dict) else json.loads(json.dumps(value))


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    return isinstance(value, str) and bool(_NUMBER_TEXT.match(value.strip()))


def _as_number(value: Any, where: str) -> float:
    if not _is_number(value):
        raise AggregationError(f"{where}: {value!r} is not a number")
    return float(value) if isinstance(value, str) else value


def _tidy_number(value: float) -> float | int:
    return int(value) if isinstance(value, float) and value.is_integer() and abs(value) < 2**53 else value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
