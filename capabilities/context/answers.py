"""Reading values out of what a user typed: the rules that work without a model.

``named_values`` finds ``name=value``, ``name: value``, ``name is value`` and JSON objects
for the parameter names it is given; ``spotted`` finds a value by its look, as the
parameter's schema describes it (``x-flora-value-pattern``: "here's the key: app-…", "run
this against the db: SELECT …"; an address for a parameter that takes one); ``answer_values``
maps an answer to the parameters a paused task asked for (a bare value fills the one missing
parameter; N comma- or line-separated values fill N missing parameters in order).

The words read beside the values (go on, help, a request rather than a value) live in the
table ``capabilities/cognition/tables/answers.json`` (rule_tables.py) with the examples that
prove them; the patterns left here read the shape of a value.
"""

from __future__ import annotations

import functools
import json
import re
from urllib.parse import urlsplit

from capabilities.cognition.rule_tables import table
from common.i18n import has_cjk

_ANSWERS = table("answers")
_URL = re.compile(r"https?://[^\s\"'<>，。]+")
# JSON-schema keyword a capability puts on a string parameter: a regular expression that finds
# the value in running text, however it is introduced ("the key is…", "key用这个…", "run this: …")
VALUE_PATTERN = "x-flora-value-pattern"
_CONTINUE = _ANSWERS["continue"]
_HELP = _ANSWERS["help"]


_REQUEST = _ANSWERS["request"]


def sounds_like_request(text: str) -> bool:
    """Whether the text asks for something to be done (rather than giving a value)."""
    return bool(_REQUEST.search(text))


def is_continue(text: str) -> bool:
    return bool(_CONTINUE.match(text))


def is_help(text: str) -> bool:
    return bool(_HELP.match(text))


def is_bare_value(text: str) -> bool:
    """One token of no Chinese and nothing around it ("app-7Fk2x9", "https://…", "42"): given,
    not asked. (Chinese is written without spaces, so a Chinese sentence is never one.)"""
    value = text.strip()
    return len(value) <= 500 and len(value.split()) == 1 and not has_cjk(value)


# the words that only ever answer an approval: a lone one never fills a value
_YES_NO = frozenset({"yes", "y", "yeah", "yep", "sure", "ok", "okay", "no", "n", "nope", "approve", "approved",
                     "cancel", "always", "always allow", "go ahead", "是", "好", "好的", "对", "确认", "可以", "行",
                     "不", "不是", "不行", "不要", "取消", "否", "总是允许", "始终允许"})


def is_yes_or_no(text: str) -> bool:
    """Whether ``text`` is only a yes or a no (an approval's answer), whatever ends it."""
    return " ".join(text.lower().strip(" \t\n.!?。！？~,，").split()) in _YES_NO


def urls(text: str) -> list[str]:
    """The addresses in ``text``, without the punctuation that ends the sentence around them."""
    return [u.rstrip(".,;:!?") for u in _URL.findall(text)]


def page_like(url: str) -> bool:
    """Whether an address looks like a page written for people to read (an article, a post: a
    slug of words joined by hyphens, an .html file, on a named host) rather than an endpoint a
    program calls (an ``api.`` host, an ``/api/`` or ``/v1`` path, a .json file, a query, a
    machine's own address)."""
    parts = urlsplit(url)
    path, host = parts.path.lower(), parts.hostname or ""
    if parts.query or "." not in host or host.replace(".", "").isdigit() or host.startswith("api.") \
            or any(seg in ("api", "rest", "graphql") or (seg[:1] == "v" and seg[1:].isdigit()) for seg in path.split("/")) \
            or path.endswith((".json", ".xml", ".csv", ".txt", ".yaml", ".yml")):
        return False
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return path.endswith((".html", ".htm")) or last.count("-") >= 1 and any(c.isalpha() for c in last)


def _norm(name: str) -> str:
    return "".join(name.lower().replace("_", " ").replace("-", " ").split())


def named_values(text: str, names: list[str]) -> dict:
    """Values given by name for any of ``names`` (JSON object, ``k=v``, ``k: v``, ``k is v``)."""
    wanted = {_norm(n): n for n in names}
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            return {wanted[_norm(k)]: v for k, v in data.items() if _norm(k) in wanted}
    found: dict = {}
    if not wanted:
        return found
    alternatives = "|".join(
        sorted((re.escape(n).replace(r"\_", r"[\s_\-]?").replace("_", r"[\s_\-]?") for n in names), key=len, reverse=True))
    pattern = re.compile(
        rf"(?<![A-Za-z0-9_-])({alternatives})\s*(?:=|:|：|\bis\b|是|为)\s*(\"[^\"]*\"|'[^']*'|[^\s,;，；。！？]+)", re.I)
    for match in pattern.finditer(text):
        key = wanted.get(_norm(match.group(1)))
        if key and key not in found:
            value = match.group(2)
            if value[:1] in "\"'" and value[-1:] == value[:1]:
                value = value[1:-1]
            else:  # "my city is Paris." means Paris
                value = value.rstrip(".!?") or value
            found[key] = value
    return found


def answer_values(text: str, asked: list[str], schemas: dict[str, dict] | None = None) -> dict | None:
    """Map an answer to the asked parameter names, or None when it cannot be mapped.

    With the parameters' JSON schemas, a bare value that fits exactly one of several asked
    parameters (a member of its enum, the one number for the one numeric parameter) goes there.
    """
    named = named_values(text, asked)
    if named:
        return named
    stripped = text.strip()
    if not stripped or not asked:
        return None
    if is_yes_or_no(stripped) and not all((schemas or {}).get(n, {}).get("type") == "boolean" for n in asked):
        return None  # "yes" answers an approval, never a value ("memo_id=yes")
    if len(asked) == 1:
        seen = spotted(stripped, (schemas or {}).get(asked[0], {}), asked[0])
        if seen is not None:  # "sure - https://…", "ok the key: app-…"
            return {asked[0]: seen}
        said = _SAID_VALUE.search(stripped)  # "the key is app-…", "here you go: …", "密钥发你：…"
        return {asked[0]: _unquoted(said.group(1)) if said else stripped}
    parts = [p.strip() for p in re.split(r"\n|;|；|,|，", stripped) if p.strip()]
    if len(parts) == len(asked):
        return dict(zip(asked, parts))
    if schemas:
        placed = values_by_schema(stripped, {n: schemas.get(n, {}) for n in asked}, asked=True)
        if placed:
            return placed
    return None


# one value said last, after the words that hand it over: "the key is app-X", "here you go: X",
# "it's X", "use X please", "地址是 X", "密钥发你：X"
_SAID_VALUE = _ANSWERS["said_value"]


def _unquoted(value: str) -> str:
    return value[1:-1] if len(value) > 1 and value[0] in "\"'“" and value[-1] in "\"'”" else value


def spotted(text: str, schema: dict, name: str = "") -> str | None:
    """The one value in ``text`` that looks like what the parameter takes: a match of its
    ``x-flora-value-pattern``, or the address for a parameter that takes one (named url, or
    ``format: uri``, or a pattern that starts with http); None when there is none, or several
    different ones. What will run (``x-flora-runs``: a command, a script) is also what the person
    set in backticks ("在终端执行一下 `df -h`")."""
    if schema.get(RUNS):
        quoted = backticked(text) or (commands_said(text) if schema[RUNS] == "shell" else [])
        if len(quoted) == 1:
            return quoted[0]
    pattern = schema.get(VALUE_PATTERN)
    if pattern:
        found = [_trimmed(m.group(0)) for m in _compiled(pattern).finditer(text)]
    elif takes_address(name, schema):
        found = [u.rstrip(".,;)!?") for u in urls(text)]
    else:
        return None
    distinct = list(dict.fromkeys(v for v in found if v))
    return distinct[0] if len(distinct) == 1 else None


RUNS = "x-flora-runs"  # capabilities.params.RUNS: a parameter that holds what will run
_BACKTICKED = re.compile(r"`([^`\n]+)`")  # a command or code set in backticks, as people write it in chat


def backticked(text: str) -> list[str]:
    """What ``text`` sets in backticks, each once, in order."""
    return list(dict.fromkeys(m.group(1).strip() for m in _BACKTICKED.finditer(text) if m.group(1).strip()))


_RUNS = _ANSWERS["runs"]


def commands_said(text: str) -> list[str]:
    """The command lines ``text`` gives, each once, in order: set in backticks, else asked to be
    run (``run_asked``)."""
    return backticked(text) or run_asked(text)


def run_asked(text: str) -> list[str]:
    """The command lines said after a word for running them ("could you run git status, …",
    "执行一下 df -h"), each once, in order, when their program exists here ("run a marathon" names
    none)."""
    from capabilities.params import looks_runnable

    said = (_command_line(_before_cjk(next(group for group in found.groups() if group)))
            for found in _RUNS.finditer(text))
    return list(dict.fromkeys(line for line in said if line and looks_runnable("shell", line)))


def _command_line(said: str) -> str:
    """A command line as said in a sentence, without the sentence's last stop: "df -h." is
    ``df -h``, while "df -h ." keeps its argument ``.``."""
    line = said.strip().rstrip(",;，；。!！?？")
    if line.endswith(".") and not line.endswith((" .", "..")):
        line = line[:-1]
    line = line.strip()
    if len(line) > 1 and line[0] == line[-1] and line[0] in "'\"":  # "run 'ls -la'"
        line = line[1:-1].strip()
    return line


def _before_cjk(text: str) -> str:
    """``text`` up to its first Chinese character: where a command said in a Chinese sentence ends."""
    return text[:next((i for i, ch in enumerate(text) if has_cjk(ch)), len(text))]


def takes_address(name: str, schema: dict) -> bool:
    """Whether a parameter takes a web address: named url, base_url or endpoint, ``format:
    uri``, or a pattern that starts with http."""
    return (name in ("url", "base_url", "endpoint") or schema.get("format") == "uri"
            or str(schema.get("pattern", "")).lower().replace("[hh][tt][tt][pp]", "http").startswith("^http"))


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)


def _trimmed(value: str) -> str:
    """Without the punctuation that ends the sentence, and the quotes or backticks that wrap it."""
    value = value.strip().rstrip(" ,;，；。.!！?？").strip()
    for first, last in ("``", '""', "''", "“”", "‘’"):
        if len(value) > 1 and value[0] == first and value[-1] == last:
            return value[1:-1].strip()
    return value.strip("`").strip()


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def values_by_schema(text: str, schemas: dict[str, dict], *, asked: bool = False) -> dict:
    """Values the text states without naming them: enum members written as words, and the
    number when exactly one number and exactly one numeric parameter are in play. In a request
    (not ``asked``: not the answer to a question about these parameters) the number must also be
    tied to the parameter by the words next to it (its name or a word of it: "timeout 9",
    "9 秒超时" for ``timeout_s``); a number inside an address, a path or a command's options
    (``http://127.0.0.1:9/x``, a port 18201, ``-n 5``) is never one."""
    found: dict = {}
    for name, schema in schemas.items():
        hits = [v for v in schema.get("enum", []) if isinstance(v, str) and mentions(text, v)]
        if len(hits) == 1:
            found[name] = hits[0]
    numeric = [n for n, sc in schemas.items() if sc.get("type") in ("number", "integer") and n not in found]
    if len(numeric) != 1:
        return found
    if asked:
        numbers = _NUMBER.findall(text)
        if len(numbers) == 1:
            found[numeric[0]] = numbers[0]
        return found
    words = _loose_words(text)
    numbers = [i for i, w in enumerate(words) if _NUMBER.fullmatch(w)]
    if len(numbers) == 1 and _tied(words, numbers[0], numeric[0], schemas[numeric[0]]):
        found[numeric[0]] = words[numbers[0]]
    return found


def _loose_words(text: str) -> list[str]:
    """The text's words, without addresses, and with the words that hold a path, a port or an
    option (``/``, ``:``, ``=``, a leading ``-``) taken out whole."""
    for address in urls(text):
        text = text.replace(address, " ")
    out = []
    for word in re.split(r"[\s,;，；。！？()（）]+", text):
        word = word.strip("\"'`“”.!?")
        if not word or any(c in word for c in "/:=@") or word.startswith("-") and not _NUMBER.fullmatch(word):
            continue
        out.extend(_split_cjk(word))
    return out


def _split_cjk(word: str) -> list[str]:
    """A Chinese run split from the digits in it ("等9秒" → 等, 9, 秒)."""
    return [p for p in re.split(r"(-?\d+(?:\.\d+)?)", word) if p] if has_cjk(word) else [word]


TIE_DISTANCE = 2  # words between a number and the name it belongs to


_GENERIC_NAMES = frozenset({"value", "amount", "number", "num", "n", "x", "input", "quantity", "arg", "val"})
_DESCRIBING = frozenset({"the", "that", "this", "with", "from", "into", "what", "which", "when", "value", "number",
                         "given", "than", "more", "less", "most", "least", "each", "every", "many", "much"})


def _tied(words: list[str], at: int, name: str, schema: dict) -> bool:
    """Whether a word of the parameter's name (or its unit: ``_s`` seconds), its title or — for a
    name that says nothing, such as ``value`` — its description ("the temperature to convert")
    stands within TIE_DISTANCE words of the number."""
    names = {p for p in name.lower().split("_") if len(p) > 1}
    if name.endswith("_s"):
        names |= {"seconds", "second", "secs", "sec", "s", "秒", "秒钟"}
    title = schema.get("title")
    if isinstance(title, str):
        names |= {title.lower()}
    description = schema.get("description")
    if isinstance(description, str) and name.lower() in _GENERIC_NAMES:
        names |= {w for w in _loose_words(description.lower()) if len(w) > 3 and w.isalpha() and w not in _DESCRIBING}
    near = words[max(0, at - TIE_DISTANCE):at] + words[at + 1:at + 1 + TIE_DISTANCE]
    return any(w.lower() in names or any(n in w.lower() for n in names if len(n) > 3) for w in near)


def mentions(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text``: as a whole word for Latin words ("api" is not
    in "api_key"), anywhere for CJK, which has no spaces between words."""
    if not phrase:
        return False
    cjk, folded, one_word = _phrase(phrase)
    if cjk:
        return _squeezed(phrase) in _squeezed(text)
    if folded is not None:
        text_folded = _ascii_folded(text)
        if text_folded is not None:
            if one_word:  # most keywords: among the text's words or not
                return folded in _ascii_words(text_folded)
            if folded not in text_folded:
                return False  # not even inside a word: no need to look for it as one (most phrases, most texts)
    return _word(phrase).search(text) is not None


@functools.lru_cache(maxsize=4096)
def _phrase(phrase: str) -> tuple[bool, str | None, bool]:
    """Whether ``phrase`` is CJK; its lower case when it is ASCII; whether that is one word (a
    capability's keywords: asked of every message)."""
    folded = phrase.lower() if phrase.isascii() else None
    return has_cjk(phrase), folded, folded is not None and _TOKEN.fullmatch(folded) is not None


@functools.lru_cache(maxsize=4096)
def _squeezed(text: str) -> str:
    """``text`` in lower case without spaces: a Chinese phrase is found whatever the case of the
    Latin words in it and however they are spaced ("用 Python", "用python"; "Python 脚本", "python脚本")."""
    return "".join(text.lower().split())


@functools.lru_cache(maxsize=64)
def _ascii_folded(text: str) -> str | None:
    """``text`` in lower case when it is ASCII (the same message is asked about every keyword)."""
    return text.lower() if text.isascii() else None


_TOKEN = re.compile(r"[a-z0-9_]+")


@functools.lru_cache(maxsize=64)
def _ascii_words(folded: str) -> frozenset[str]:
    """The words of an ASCII text in lower case, as ``_word`` delimits them (runs of letters,
    digits and underscores): a one-word phrase is whole in the text exactly when it is one of them."""
    return frozenset(_TOKEN.findall(folded))


def text_after(text: str, phrases) -> str:
    """What the request says after the last of ``phrases`` it mentions ("ask the experts:
    which database?" → "which database?"), without the punctuation that joins them; "" when
    none is mentioned or nothing follows."""
    ends = []
    for phrase in phrases:
        if not phrase:
            continue
        if has_cjk(phrase):
            at = text.find(phrase)
            if at >= 0:
                ends.append(at + len(phrase))
        else:
            found = _word(phrase).search(text)
            if found is not None:
                ends.append(found.end())
    if not ends:
        return ""
    return text[max(ends):].strip().lstrip(":：,，、-—").strip()



@functools.lru_cache(maxsize=1024)
def _word(phrase: str) -> re.Pattern:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(phrase)}(?![A-Za-z0-9_])", re.I)
