"""Claims of action in a reply, held against what the turn did.

A chat reply is words a model wrote; it may say "好的，我会立即执行「执行Dify工作流」" or "I've
paused the weekly report" when nothing was run or paused. ``ClaimsChecker.check`` finds the
acts a reply claims (run, schedule, cancel, pause, resume, delete, change, note) by the
phrases of a per-language table (``tables/claims.json``: data, with the examples that prove each
row), skipping a phrase with a negation before it in its clause ("I can't run it", "还没有执行");
``honest`` drops the sentences whose claims the turn's actions do not back and says plainly that
nothing was done. The table is matched as text, case- and width-folded: no grammar in code.

What backs a claim is what the store shows for the turn (``acts_of``: its task ran, was
cancelled, registered a loop task...); a chat reply's turn has done nothing, so every claim in it
is unbacked.

Exceptions::

    ClaimsTableError   the table is unreadable or malformed (names the file and the key)
"""

from __future__ import annotations

import functools
import json
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from common.i18n import EN, ZH, language_of, say
from common.tasks.models import CANCELLED, COMPLETED, FAILED, RUNNING, TaskRecord

TABLE = Path(__file__).resolve().parent / "tables" / "claims.json"
ACTS = ("run", "schedule", "cancel", "pause", "resume", "delete", "change", "note")
_CLAUSE_ENDS = set(",，;；:：、")
_SENTENCE_ENDS = set(".!?。！？\n")


class ClaimsTableError(ValueError):
    """The claims table cannot be read, or a part of it is not what it should be."""


@dataclass(frozen=True)
class Claim:
    act: str  # one of ACTS
    phrase: str  # the table's phrase found
    start: int  # where in the reply


class ClaimsChecker:
    def __init__(self, table: dict):
        try:
            self._negations = {lang: [_fold(n) for n in words] for lang, words in table["negations"].items()}
            self._phrases = {lang: sorted(((_fold(p), act) for act, row in table["acts"].items()
                                           for p in row.get(lang, [])), key=lambda pa: -len(pa[0]))
                             for lang in (EN, ZH)}
            unknown = set(table["acts"]) - set(ACTS)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ClaimsTableError(f"{TABLE}: the table needs 'negations' and 'acts' per language ({exc})") from None
        if unknown:
            raise ClaimsTableError(f"{TABLE}: acts {sorted(unknown)} are not among {', '.join(ACTS)}")

    @classmethod
    def load(cls, path: Path = TABLE) -> "ClaimsChecker":
        try:
            return cls(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as exc:
            raise ClaimsTableError(f"{path}: cannot read the claims table: {exc}") from None

    def check(self, reply: str) -> list[Claim]:
        """The acts ``reply`` claims, in order, each once."""
        text = _fold(reply)
        found: list[Claim] = []
        for lang in (EN, ZH):
            for phrase, act in self._phrases[lang]:
                at = _find(text, phrase, lang)
                while at >= 0:
                    if not self._negated(text, at, lang) and not any(c.start <= at < c.start + len(c.phrase)
                                                                    for c in found):
                        found.append(Claim(act, phrase, at))
                    at = _find(text, phrase, lang, at + 1)
        return sorted(found, key=lambda c: c.start)

    def unbacked(self, reply: str, done: Iterable[str]) -> list[Claim]:
        """The claims of ``reply`` that the acts ``done`` in the turn do not back."""
        backed = set(done)
        return [c for c in self.check(reply) if c.act not in backed]

    def honest(self, reply: str, done: Iterable[str], *, said: str = "") -> str:
        """``reply`` without the sentences that claim what the turn did not do, and a plain word
        that nothing was done (in the language of ``said``, the person's message); the reply
        itself when every claim in it is backed."""
        wrong = self.unbacked(reply, done)
        if not wrong:
            return reply
        starts = {c.start for c in wrong}
        kept, begin = [], 0
        for end in [i + 1 for i, ch in enumerate(reply) if ch in _SENTENCE_ENDS] + [len(reply)]:
            if end <= begin:
                continue
            if not any(begin <= s < end for s in starts):
                kept.append(reply[begin:end])
            begin = end
        lang = language_of(said or reply)
        rest = "".join(kept).strip()
        note = say(lang, "nothing_done")
        return f"{rest}\n{note}" if _has_words(rest) else note

    def _negated(self, text: str, at: int, lang: str) -> bool:
        begin = at
        while begin > 0 and text[begin - 1] not in _CLAUSE_ENDS and text[begin - 1] not in _SENTENCE_ENDS:
            begin -= 1
        before = text[begin:at]
        if lang == ZH:
            return any(n in before for n in self._negations.get(ZH, []))
        words = before.replace("’", "'").split()
        return any(w.strip("'\"()") in self._negations.get(EN, []) or w.endswith("n't") for w in words)


@functools.lru_cache(maxsize=1)
def shipped() -> ClaimsChecker:
    """The checker with the shipped table, loaded once per process."""
    return ClaimsChecker.load()


def acts_of(tasks: Iterable[TaskRecord | None]) -> set[str]:
    """What the store shows the turn's tasks did: ran (running or ended), were cancelled,
    registered a loop task."""
    done: set[str] = set()
    for task in tasks:
        if task is None:
            continue
        if task.state in (RUNNING, COMPLETED, FAILED):
            done.add("run")
        if task.state == CANCELLED:
            done.add("cancel")
        if isinstance(task.result, dict) and task.result.get("loop_task_id"):
            done.add("schedule")
    return done


def _fold(text: str) -> str:
    """Case- and width-folded (full-width letters and punctuation as plain ones), one character
    for one, so a place in the folded text is the same place in the reply."""
    out = []
    for ch in text:
        folded = unicodedata.normalize("NFKC", ch).casefold()
        out.append(folded if len(folded) == 1 else ch)
    return "".join(out)


def _find(text: str, phrase: str, lang: str, start: int = 0) -> int:
    """Where ``phrase`` stands in ``text`` from ``start``: for English only as whole words."""
    at = text.find(phrase, start)
    while at >= 0 and lang == EN and not _whole(text, at, at + len(phrase)):
        at = text.find(phrase, at + 1)
    return at


def _whole(text: str, begin: int, end: int) -> bool:
    return (begin == 0 or not text[begin - 1].isalnum()) and (end >= len(text) or not text[end].isalnum())


def _has_words(text: str) -> bool:
    return any(ch.isalnum() for ch in text)
