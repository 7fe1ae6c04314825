"""Rules as data: the phrases and patterns Flora's reading rules look for, kept in tables.

What the rules read in a person's words lives in JSON tables under
``capabilities/cognition/tables/`` (one per family of rules: ``cues.json``, ``world.json``...),
not in the code that uses it. A table names its rules; each rule holds its alternatives per
language, and the examples that prove it::

    {"about": "what this table's rules read",
     "rules": {
       "thanks": {
         "about": "a message that thanks (alone or before more)",
         "flags": ["IGNORECASE"],
         "en": ["^\\\\s*(?:thanks?|thank\\\\s+you)\\\\b"],
         "zh": ["^\\\\s*(?:谢谢|多谢)"],
         "phrases": {"en": ["much obliged"]},
         "examples": ["thanks a lot", "谢谢你"],
         "not": ["give thanks to the cook"]}}}

A rule matches where any of its alternatives does: each entry of ``en``, ``zh`` and ``any`` is a
regular expression, each entry of ``phrases`` a literal phrase (a Latin one as whole words, any
run of spaces standing for its spaces; a Chinese one anywhere). ``examples`` must match and
``not`` must not: they are checked when a table is loaded in the tests (``problems``), so a
table never drifts from what it claims.

A table may name ``parts``: pieces of pattern its rules share (the words for "the task", a
polite lead), written once and put into any pattern, or another part, as ``{name}``::

    {"parts": {"task_word_en": "(?:task|job)", "polite_en": "^\\\\s*(?:please\\\\s+)?"},
     "rules": {"cancel": {"en": ["{polite_en}cancel\\\\s+the\\\\s+{task_word_en}"], ...}}}

A part goes in as it is written, so one that is an alternation is wrapped in ``(?:…)`` where
it stands alone; ``{1,40}`` and other counts are not names and stay what they are.

An operator teaches the rules their people's words without code: ``understanding.rule_files``
names JSON files of the same shape whose rules add alternatives to the shipped rules of the same
table and name (``{"table": "cues", "rules": {"remind_me": {"phrases": {"en": ["nudge me"]}}}}``).
:func:`use_operator_files` applies them process-wide; every :class:`Rule` follows at its next use.

Code reads a rule as a compiled pattern: ``_THANKS = table("cues")["thanks"]`` and then
``_THANKS.search(text)``.

Exceptions::

    RuleTableError   a table or an operator file is unreadable, or a rule is malformed (names the file and the rule)
"""

from __future__ import annotations

import functools
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

TABLES = Path(__file__).resolve().parent / "tables"
LANGUAGES = ("en", "zh", "any")
_FLAGS = {"IGNORECASE": re.IGNORECASE, "MULTILINE": re.MULTILINE, "DOTALL": re.DOTALL, "VERBOSE": re.VERBOSE,
          "ASCII": re.ASCII}
_KEYS = {"about", "flags", "phrases", "examples", "not", *LANGUAGES}


class RuleTableError(ValueError):
    """A rule table or an operator's rule file cannot be read, or a rule in it is malformed."""


@dataclass(frozen=True)
class RuleSpec:
    """One rule as a table writes it: its alternatives (regular expressions) in order."""

    table: str
    name: str
    alternatives: tuple[str, ...]
    flags: int = 0
    examples: tuple[str, ...] = ()
    counter: tuple[str, ...] = ()  # the table's "not": must not match
    about: str = ""
    source: str = ""  # the file it was read from

    def compile(self, extra: Iterable[str] = ()) -> re.Pattern:
        parts = [*self.alternatives, *extra]
        if not parts:
            return re.compile(r"(?!)")  # a rule with nothing to match matches nothing
        return re.compile("|".join(f"(?:{p})" for p in parts) if len(parts) > 1 else parts[0], self.flags)


class Rule:
    """A rule's compiled pattern, with what the operator's files add to it: behaves as an
    ``re.Pattern`` (``search``, ``match``, ``fullmatch``, ``finditer``, ``findall``, ``sub``,
    ``split``) and follows :func:`use_operator_files` at its next use."""

    __slots__ = ("spec", "_compiled", "_generation")

    def __init__(self, spec: RuleSpec):
        self.spec = spec
        self._compiled: re.Pattern | None = None
        self._generation = -1

    @property
    def pattern(self) -> re.Pattern:
        if self._generation != _operator.generation:
            self._compiled = self.spec.compile(_operator.extra(self.spec.table, self.spec.name))
            self._generation = _operator.generation
        return self._compiled  # type: ignore[return-value]

    def search(self, text: str, *args):
        return self.pattern.search(text, *args)

    def match(self, text: str, *args):
        return self.pattern.match(text, *args)

    def fullmatch(self, text: str, *args):
        return self.pattern.fullmatch(text, *args)

    def finditer(self, text: str, *args):
        return self.pattern.finditer(text, *args)

    def findall(self, text: str, *args):
        return self.pattern.findall(text, *args)

    def sub(self, repl, text: str, count: int = 0):
        return self.pattern.sub(repl, text, count)

    def split(self, text: str, maxsplit: int = 0):
        return self.pattern.split(text, maxsplit)

    def __repr__(self) -> str:
        return f"Rule({self.spec.table}.{self.spec.name})"


@dataclass
class Table:
    """The rules of one table, by name."""

    name: str
    about: str = ""
    rules: dict[str, Rule] = field(default_factory=dict)
    parts: dict[str, str] = field(default_factory=dict)  # as written, before their own parts are put in

    def __getitem__(self, rule: str) -> Rule:
        try:
            return self.rules[rule]
        except KeyError:
            raise RuleTableError(f"table {self.name!r} has no rule {rule!r}") from None

    def __iter__(self):
        return iter(self.rules.values())

    def __len__(self) -> int:
        return len(self.rules)


def phrase_pattern(phrase: str) -> str:
    """A literal phrase as a pattern: a Latin one as whole words, any run of spaces for its
    spaces; a Chinese one anywhere."""
    words = [re.escape(w) for w in phrase.split()]
    body = r"\s+".join(words)
    if not words:
        raise ValueError("an empty phrase")
    start = r"(?<![A-Za-z0-9_])" if _latin(phrase.strip()[0]) else ""
    end = r"(?![A-Za-z0-9_])" if _latin(phrase.strip()[-1]) else ""
    return start + body + end


def _latin(character: str) -> bool:
    """An ASCII letter, digit or ``_``: where a Latin phrase's word begins or ends."""
    return character.isascii() and (character.isalnum() or character == "_")


_PART = re.compile(r"(?<!\\)\{([A-Za-z_][A-Za-z0-9_]*)\}")  # "{polite_en}"; "{1,40}" and "\{x\}" are not names


def _parts(data: dict, source: str) -> dict[str, str]:
    parts = data.get("parts", {})
    if not isinstance(parts, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in parts.items()):
        raise RuleTableError(f"{source}: 'parts' must map a name to a piece of pattern")
    return parts


def _put_parts(pattern: str, parts: dict[str, str], where: str, using: tuple[str, ...] = ()) -> str:
    """``pattern`` with each ``{name}`` of ``parts`` put in, parts within parts too."""
    def part(found: re.Match) -> str:
        name = found.group(1)
        if name not in parts:
            raise RuleTableError(f"{where}: {{{name}}} names no part (the parts: {', '.join(sorted(parts)) or 'none'})")
        if name in using:
            raise RuleTableError(f"{where}: the part {name!r} contains itself ({' > '.join((*using, name))})")
        return _put_parts(parts[name], parts, where, (*using, name))

    return _PART.sub(part, pattern)


def _alternatives(row: dict, where: str, shared: dict[str, str]) -> list[str]:
    parts: list[str] = []
    for language in LANGUAGES:
        value = row.get(language, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise RuleTableError(f"{where}: {language!r} must be a list of patterns")
        parts += [_put_parts(v, shared, where) for v in value]
    phrases = row.get("phrases", {})
    if not isinstance(phrases, dict):
        raise RuleTableError(f"{where}: 'phrases' must map a language to a list of phrases")
    for language, listed in phrases.items():
        if language not in LANGUAGES or not isinstance(listed, list) \
                or not all(isinstance(p, str) and p.strip() for p in listed):
            raise RuleTableError(f"{where}: phrases[{language!r}] must be a list of phrases in en, zh or any")
        parts += [phrase_pattern(p) for p in listed]
    for part in parts:
        try:
            re.compile(part)
        except re.error as exc:
            raise RuleTableError(f"{where}: {part!r} is not a regular expression ({exc})") from None
    return parts


def _spec(table: str, name: str, row: object, source: str, parts: dict[str, str]) -> RuleSpec:
    where = f"{source}: rule {name!r}"
    if not isinstance(row, dict):
        raise RuleTableError(f"{where}: a rule is an object")
    unknown = set(row) - _KEYS
    if unknown:
        raise RuleTableError(f"{where}: unknown keys {sorted(unknown)} (known: {', '.join(sorted(_KEYS))})")
    flags = 0
    for flag in row.get("flags", []):
        if flag not in _FLAGS:
            raise RuleTableError(f"{where}: unknown flag {flag!r} (known: {', '.join(_FLAGS)})")
        flags |= _FLAGS[flag]
    examples, counter = row.get("examples", []), row.get("not", [])
    if not isinstance(examples, list) or not isinstance(counter, list):
        raise RuleTableError(f"{where}: 'examples' and 'not' are lists of messages")
    return RuleSpec(table, name, tuple(_alternatives(row, where, parts)), flags, tuple(map(str, examples)),
                    tuple(map(str, counter)), str(row.get("about", "")), source)


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RuleTableError(f"{path}: cannot read the rule table ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("rules"), dict):
        raise RuleTableError(f"{path}: a rule table is an object with 'rules'")
    return data


@functools.lru_cache(maxsize=None)
def table(name: str) -> Table:
    """The shipped table ``name`` (``tables/<name>.json``), read once per process."""
    path = TABLES / f"{name}.json"
    data = _read(path)
    parts = _parts(data, str(path))
    rules = {rule: Rule(_spec(name, rule, row, str(path), parts)) for rule, row in data["rules"].items()}
    return Table(name, str(data.get("about", "")), rules, parts)


def shipped_tables() -> list[Table]:
    """Every shipped table that holds rules (``claims.json`` is read by claims.py its own way)."""
    return [table(p.stem) for p in sorted(TABLES.glob("*.json")) if "rules" in json.loads(p.read_text("utf-8"))]


class _OperatorRules:
    """What the operator's files add to the shipped rules, process-wide."""

    def __init__(self):
        self.generation = 0
        self._extra: dict[tuple[str, str], list[str]] = {}
        self._files: tuple[str, ...] = ()
        self._lock = threading.Lock()

    def extra(self, table_name: str, rule: str) -> list[str]:
        return self._extra.get((table_name, rule), [])

    def use(self, paths: Iterable[str | Path]) -> None:
        files = tuple(str(p) for p in paths)
        with self._lock:
            if files == self._files:
                return
            self._extra = read_operator_files(files)
            self._files = files
            self.generation += 1


def read_operator_files(paths: Iterable[str | Path]) -> dict[tuple[str, str], list[str]]:
    """What operator files add, by (table, rule); a file that names a table or rule Flora does
    not ship is refused with both names."""
    extra: dict[tuple[str, str], list[str]] = {}
    for path in map(Path, paths):
        data = _read(path)
        name = data.get("table")
        if not isinstance(name, str) or not (TABLES / f"{name}.json").is_file():
            known = ", ".join(t.name for t in shipped_tables())
            raise RuleTableError(f"{path}: 'table' must name a shipped table ({known})")
        shipped = table(name)
        parts = {**shipped.parts, **_parts(data, str(path))}  # the shipped table's parts, and the file's own
        for rule, row in data["rules"].items():
            if rule not in shipped.rules:
                raise RuleTableError(f"{path}: table {name!r} has no rule {rule!r} "
                                     f"(its rules: {', '.join(sorted(shipped.rules))})")
            extra.setdefault((name, rule), []).extend(_spec(name, rule, row, str(path), parts).alternatives)
    return extra


_operator = _OperatorRules()


def use_operator_files(paths: Iterable[str | Path]) -> None:
    """Make ``paths`` (``understanding.rule_files``) the operator's additions, replacing any
    earlier ones: no files, the shipped rules alone."""
    _operator.use(paths)


def problems(t: Table) -> list[str]:
    """What is wrong with a table's proof: a rule with no example, an example its rule does not
    match, a counter-example it does."""
    found = []
    for rule in t:
        spec = rule.spec
        compiled = spec.compile()
        if not spec.examples:
            found.append(f"{t.name}.{spec.name}: no example proves it")
        found += [f"{t.name}.{spec.name}: does not match its example {e!r}" for e in spec.examples
                  if not compiled.search(e)]
        found += [f"{t.name}.{spec.name}: matches {c!r}, listed under 'not'" for c in spec.counter
                  if compiled.search(c)]
    return found
