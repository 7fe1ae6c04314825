"""Scoring of the conversation evaluation set (bench/conversation/*.jsonl), as plain functions.

``infer_intent`` reads which intent a reply shows, ``wrong_language`` whether a person would
read it in the wrong language, ``score_case`` compares one reply with its case's expectation,
and ``summarise`` turns the per-case scores into the figures bench/conversation.py prints.
No actor system and no model here: the unit tests drive these on hand-made replies.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

DATA_DIR = Path(__file__).resolve().parent / "conversation"
DEV_FILE = DATA_DIR / "cases.jsonl"
HELDOUT_FILE = DATA_DIR / "heldout.jsonl"
FRESH_FILE = DATA_DIR / "fresh.jsonl"  # written after the held-out split was used in tuning
FRESH2_FILE = DATA_DIR / "fresh2.jsonl"  # written after the fresh split's misses were read
FRESH3_FILE = DATA_DIR / "fresh3.jsonl"  # written after the second fresh split's misses were read
FRESH4_FILE = DATA_DIR / "fresh4.jsonl"  # written after the third fresh split's misses were read
FRESH5_FILE = DATA_DIR / "fresh5.jsonl"  # written after the fourth fresh split had been run
FRESH6_FILE = DATA_DIR / "fresh6.jsonl"  # written after the fifth fresh split had been read and fixed
FRESH7_FILE = DATA_DIR / "fresh7.jsonl"  # written after the sixth fresh split had been read and fixed
FRESH8_FILE = DATA_DIR / "fresh8.jsonl"  # written after the seventh fresh split had been read and fixed
FRESH9_FILE = DATA_DIR / "fresh9.jsonl"  # after the eighth; the first with the hands and memory
FRESH10_FILE = DATA_DIR / "fresh10.jsonl"  # after the ninth, by someone who had not read the rules
FRESH11_FILE = DATA_DIR / "fresh11.jsonl"  # after the tenth, by someone who had not read the rules
FRESH12_FILE = DATA_DIR / "fresh12.jsonl"  # after the eleventh, by someone who had not read the rules
WAITING_FILE = DATA_DIR / "waiting.jsonl"  # a family: what people say about other work while a task waits
SPLITS = (("dev", DEV_FILE), ("heldout", HELDOUT_FILE), ("fresh", FRESH_FILE),
          ("fresh2", FRESH2_FILE), ("fresh3", FRESH3_FILE), ("fresh4", FRESH4_FILE),
          ("fresh5", FRESH5_FILE), ("fresh6", FRESH6_FILE), ("fresh7", FRESH7_FILE),
          ("fresh8", FRESH8_FILE), ("fresh9", FRESH9_FILE), ("fresh10", FRESH10_FILE),
          ("fresh11", FRESH11_FILE), ("fresh12", FRESH12_FILE), ("waiting", WAITING_FILE))  # the order they are reported in

INTENTS = ("chat", "task", "plan", "loop", "task_op", "loop_op", "status", "command", "unsupported",
           "clarify", "answer", "memory")
# Categories a reply of another intent also answers rightly. Telling Flora about oneself is
# answered as conversation (the fact is written in the background after the reply), or by a
# reply that names memory; a question about the person's own facts is conversation, or memory's
# answer when Flora looks it up there. A task is wrong for both.
ALSO_RIGHT = {"memory/tell": ("chat",), "chat/about_me": ("memory",)}
TASK_REPLIES = ("task_completed", "task_paused", "task_error", "task_queued")
LOOP_OPS_CAPABILITY = "loop_tasks"
PLAN_CAPABILITY = "plan"

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_NOT_PROSE = re.compile(r"https?://\S+|\b[\w.-]*(?:_|\d)[\w.-]*\b|`[^`]*`")  # addresses, ids, code
_DATA = re.compile(r"```.*?```|\{.*\}", re.S)  # a result a capability returned (JSON, a code block): data, not prose
# what a reply quotes (a translation, the person's own words): in whatever language it is in
_QUOTED = re.compile(r"“[^”]*”|「[^」]*」|\"[^\"]*\"")
# Saying one does not know or was not told, in either language: a negation before a verb of
# knowing, telling or keeping, within a clause. Many wordings, none of them Flora's own.
_NOT_KNOWN_EN = re.compile(
    r"\b(?:don'?t|do not|didn'?t|did not|haven'?t|have not|hasn'?t|has not|never|can'?t|cannot|couldn'?t|"
    r"not|no|nothing|without)\b[^.!?\n]{0,40}?\b(?:know|knew|told|tell|mention(?:ed)?|said|say|shared?|"
    r"remember(?:ed)?|recall|record(?:s|ed)?|info(?:rmation)?|details?|sure|access|saved|stored|aware)\b", re.I)
_NOT_KNOWN_ZH = re.compile(
    r"不知道|不清楚|不了解|不确定|不记得|无从|无法(?:得知|知道|确定|获取|回答|查)|"
    r"(?:没|未|并未|还没)有?(?:[^，。！？\n]{0,12})(?:告诉|提到|提起|提过|提及|说过|讲过|说起|记录|记下|记住|保存|"
    r"存|信息|资料|相关|分享|提供)")
_DIGITS = re.compile(r"\d+")


def load_cases(path: str | Path) -> list[dict]:
    """The cases of one .jsonl file, one JSON object a line (blank lines skipped)."""
    cases = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                cases.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
    return cases


# --------------------------------------------------------------------------- language
def cjk_share(text: str) -> float | None:
    """How much of the prose is Chinese: CJK characters against English words (one each, as a
    word and a character carry about as much). Addresses, ids, code, returned data (JSON) and
    what the reply quotes around prose of its own (a translation: 译文是：“…”) are left out. None when
    there is no prose to judge."""
    prose = _NOT_PROSE.sub(" ", _DATA.sub(" ", text or ""))
    unquoted = _QUOTED.sub(" ", prose)
    if _CJK.search(unquoted) or _WORD.search(unquoted):  # quotes around the prose's own words are judged
        prose = unquoted
    cjk = len(_CJK.findall(prose))
    words = len(_WORD.findall(prose))
    if cjk + words == 0:
        return None
    return cjk / (cjk + words)


def wrong_language(lang: str, message: str) -> bool:
    """A reply to a Chinese case that is not mostly Chinese, or to an English case that is."""
    share = cjk_share(message)
    if share is None:
        return False
    return share < 0.5 if lang == "zh" else share >= 0.5


# --------------------------------------------------------------------------- the person's own facts
def admits_not_knowing(message: str) -> bool:
    """The reply says it does not know, or was not told: the honest answer to a question about
    the person's own facts when nothing they said answers it."""
    return bool(_NOT_KNOWN_EN.search(message) or _NOT_KNOWN_ZH.search(message))


def invented(question: str, message: str) -> bool:
    """A reply to a question about the person's own facts, which they never told, states one.

    A list of plausible wrong values would only catch the inventions its writer foresaw (a
    name, a plate, a date can be anything), and the absence of a value proves nothing about a
    reply that answers with one in words. So the reply must positively say that it does not
    know or was not told (``admits_not_knowing``), and must carry no number the question did
    not (dates, plates, phone numbers, ages: the commonest inventions, in either language)."""
    if not admits_not_knowing(message):
        return True
    return bool(set(_DIGITS.findall(message)) - set(_DIGITS.findall(question)))


# --------------------------------------------------------------------------- intent
def infer_intent(reply: dict | None, *, record: dict | None = None, setup_paused: Iterable[str] = ()) -> str | None:
    """The intent a reply shows: ``reply["intent"]`` when Flora says it, else read from the
    reply's type and content. ``record`` is the replied task as stored, when there is one
    (``capability``, ``meta``: a revision, a re-run, a plan or a loop leave their mark there;
    a ``task_error`` names no capability itself); ``setup_paused`` the ids of tasks the
    case's setup left waiting. None: the reply shows no intent (a timeout, an error)."""
    if not isinstance(reply, dict):
        return None
    if reply.get("intent"):
        return str(reply["intent"])
    kind = reply.get("message_type")
    if kind == "chat_reply":
        return "chat"
    if kind == "clarification":
        return "clarify"
    if kind not in TASK_REPLIES:
        return None
    record = record or {}
    meta = record.get("meta") or {}
    capability = reply.get("capability") or record.get("capability")
    result = reply.get("result") if isinstance(reply.get("result"), dict) else {}
    if capability == LOOP_OPS_CAPABILITY or "run" in meta:  # a loop run answering the message: triggered
        return "loop_op"
    waiting = set(setup_paused)
    if waiting and (meta.get("revision_of") in waiting or meta.get("rerun_of") in waiting):
        return "answer"  # the waiting task done again: it asks its question again, whatever was said
    if "comment" in result or "steps_cancelled" in result or meta.get("revision_of") or meta.get("rerun_of"):
        return "task_op"
    if reply.get("task_id") and reply["task_id"] in set(setup_paused):
        return "answer"
    if capability == PLAN_CAPABILITY or "plan" in result or "plan" in meta:
        return "plan"
    if "loop_task_id" in result or "loop" in meta or reply.get("field") == "time" \
            or kind == "task_paused" and any(p.get("name") == "time" for p in reply.get("missing_parameters") or []):
        return "loop"
    if capability:
        return "task"
    return None


# --------------------------------------------------------------------------- one case
@dataclass
class CaseScore:
    id: str
    split: str
    lang: str
    category: str
    expected: str
    got: str | None
    intent_ok: bool
    capability_ok: bool | None = None  # None: not expected, so not scored
    parameters_ok: bool | None = None
    answer_ok: bool | None = None
    schedule_ok: bool | None = None
    target_ok: bool | None = None  # an operation landed on the task of the capability expected
    wrong_language: bool = False
    hallucination: bool = False
    must_not_claim: bool = False
    invented: bool = False  # a must-not-invent question answered with a fact nobody told
    must_not_invent: bool = False
    seconds: float = 0.0
    understand_ms: float | None = None
    first_token_ms: float | None = None
    reply_type: str | None = None
    ran: str | None = None  # the capability of the task the reply names, when there is one
    message: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def score_case(case: dict, reply: dict | None, *, split: str = "dev", seconds: float = 0.0,
               record: dict | None = None, setup_paused: Iterable[str] = ()) -> CaseScore:
    """Compare one reply with what the case expects. ``record`` is the replied task as stored
    (capability, parameters, meta), when there is one."""
    expect = case["expect"]
    record = record or {}
    got = infer_intent(reply, record=record, setup_paused=setup_paused)
    reply = reply if isinstance(reply, dict) else {}
    message = str(reply.get("message") or "")
    score = CaseScore(id=case["id"], split=split, lang=case["lang"], category=case["category"],
                      expected=expect["intent"], got=got, seconds=seconds,
                      intent_ok=got == expect["intent"] or got in ALSO_RIGHT.get(case["category"], ()),
                      reply_type=reply.get("message_type"), message=message[:300],
                      ran=reply.get("capability") or record.get("capability"))
    if "capability" in expect:
        have = reply.get("capability") or record.get("capability")
        score.capability_ok = have == expect["capability"]
    if "operates_on" in expect:
        have = record.get("capability") or reply.get("capability")
        score.target_ok = got == expect["intent"] and have == expect["operates_on"]
    if "parameters" in expect:
        have = record.get("parameters") or {}
        score.parameters_ok = all(_same(have.get(k), v) for k, v in expect["parameters"].items())
    if "answer_contains" in expect:
        score.answer_ok = any(s.casefold() in message.casefold() for s in expect["answer_contains"])
    if "schedule" in expect:
        described = (record.get("meta") or {}).get("loop", {}).get("description") or message
        score.schedule_ok = schedule_matches(expect["schedule"], described)
    if message and reply.get("message_type") != "task_error":
        score.wrong_language = wrong_language(case["lang"], message)
    score.must_not_claim = bool(expect.get("must_not_claim"))
    score.hallucination = score.must_not_claim and got == "chat"
    score.must_not_invent = bool(expect.get("must_not_invent"))
    if score.must_not_invent and score.intent_ok:  # an answer (not a task or a reminder): does it say it does not know?
        score.invented = invented(case["say"], message)
        score.intent_ok = score.intent_ok and not score.invented
    timing = reply.get("timing") if isinstance(reply.get("timing"), dict) else {}
    score.understand_ms = timing.get("understand_ms")
    score.first_token_ms = timing.get("first_token_ms")
    return score


def _same(have: Any, want: Any) -> bool:
    if isinstance(want, str):
        return isinstance(have, str) and have.strip().rstrip("/").casefold() == want.strip().rstrip("/").casefold()
    return have == want


_RECURRING = re.compile(r"\b(every|each|daily|weekly|hourly|weekdays?)\b|每", re.I)


def schedule_matches(expected: str, described: str) -> bool:
    """A loose match of a schedule's description: the same numbers (9:00 and 09:00 alike), and
    recurring when "every …" was expected. "in 20 minutes" is described by the clock time it
    comes to, so only its being once is checked."""
    def numbers(text: str) -> set[int]:
        return {int(n) for n in re.findall(r"\d+", text)} - {0}
    if not described:
        return False
    if expected.lower().startswith("in "):
        return not _RECURRING.search(described)
    if not numbers(expected) <= numbers(described):
        return False
    return not expected.lower().startswith("every") or bool(_RECURRING.search(described))


# --------------------------------------------------------------------------- the figures
def percentile(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(p / 100 * len(ordered))))
    return ordered[rank - 1]


def summarise(scores: list[CaseScore]) -> dict:
    """Accuracy per split (dev, heldout, fresh, then any other) and category, the counts that
    matter, and latencies per intent."""
    out: dict[str, Any] = {"splits": {}, "latency": {}}
    order = [name for name, _ in SPLITS]
    for split in sorted({s.split for s in scores},
                        key=lambda name: (order.index(name) if name in order else len(order), name)):
        mine = [s for s in scores if s.split == split]
        categories: dict[str, list[int]] = {}
        for s in mine:
            right_total = categories.setdefault(s.category, [0, 0])
            right_total[0] += s.intent_ok
            right_total[1] += 1
        checks = {}
        for name in ("capability_ok", "parameters_ok", "answer_ok", "schedule_ok", "target_ok"):
            scored = [getattr(s, name) for s in mine if getattr(s, name) is not None]
            checks[name.removesuffix("_ok")] = [sum(scored), len(scored)]
        out["splits"][split] = {
            "cases": len(mine),
            "intent_right": sum(s.intent_ok for s in mine),
            "categories": dict(sorted(categories.items())),
            "checks": checks,
            "hallucinations": sum(s.hallucination for s in mine),
            "must_not_claim": sum(s.must_not_claim for s in mine),
            "invented": sum(s.invented for s in mine),
            "must_not_invent": sum(s.must_not_invent for s in mine),
            "wrong_language": sum(s.wrong_language for s in mine),
            "no_reply": sum(s.reply_type is None for s in mine),
        }
    for intent in INTENTS:
        mine = [s for s in scores if s.expected == intent]
        if not mine:
            continue
        whole = [s.seconds * 1000 for s in mine]
        understand = [s.understand_ms for s in mine if s.understand_ms is not None]
        first = [s.first_token_ms for s in mine if s.first_token_ms is not None]
        out["latency"][intent] = {
            "n": len(mine), "p50_ms": percentile(whole, 50), "p99_ms": percentile(whole, 99),
            "understand_p50_ms": percentile(understand, 50), "understand_p99_ms": percentile(understand, 99),
            "first_token_p50_ms": percentile(first, 50),
        }
    return out
