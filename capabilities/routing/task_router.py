"""TaskRouter (the ``routing`` capability): which executable capability fits a request.

Rules rank the routable capabilities by the keywords and name words they declare found
in the request; IntentRouter asks the model when the rules are unsure. Parameters whose
values stand in the request (``name=value``, a URL for a ``url`` parameter) are picked up.

MCP tools (the ``mcp`` service, docs/mcp.md) are the fallback: they take no part in the
ranking above, nor in the understanding step's list, so an installed capability always wins;
:meth:`TaskRouter.fallback` looks for one only when nothing installed fits, by the words of
its name (weighing more) and of its description.
"""

from __future__ import annotations

import functools
import re

from dataclasses import dataclass
from typing import Iterable

from capabilities.base import DESCRIPTION_IN, CapabilitySpec
from capabilities.context.answers import (
    VALUE_PATTERN, backticked, mentions, named_values, page_like, run_asked, spotted, takes_address, text_after,
    urls, values_by_schema,
)
from capabilities.cognition import world
from capabilities.cognition.rule_tables import table
from capabilities.params import RUNS, WRITTEN, looks_runnable
from capabilities.registry import CapabilityRegistry
from capabilities.secrets import is_secret
from common.i18n import cjk_chars

CONFIDENT_SCORE = 2.0
NAMED_AS_MEANS = 1.0  # beside the name word's own 1.0: "use python to …" names python_exec as surely as a keyword
QUOTED_RUN_EVIDENCE = 2.0  # a command or script set in backticks that a capability runs: as good as its keyword
# the evidence a built-in capability needs to be sure beside the deployment's own functions (a
# keyword and a name word, two keywords): one keyword of it ("table") may be a word of theirs
BESIDE_OWN_SCORE = 3.0
FALLBACK_SCORE = 3.0  # an MCP tool is used only on this much evidence: a name word and one more word
NAME_WORD_SCORE = 2.0
DESCRIPTION_WORD_SCORE = 1.0
# JSON-schema keyword a capability puts on one string parameter: the words after its keywords
# in the request are that parameter ("ask the experts: which database?" → the question)
REQUEST_TEXT = "x-flora-request-text"
AGENT = "agent"  # the capability that calls the others as tools (capabilities/agent)


@dataclass(frozen=True)
class Candidate:
    spec: CapabilitySpec
    score: float


BUILTIN_PACKAGE = "capabilities."  # Flora's own capabilities live under it


def is_builtin(spec) -> bool:
    """Whether a capability is one of Flora's own (not a plugin's, a skill's or an MCP server's)."""
    return getattr(getattr(spec, "handler", None), "__module__", "").startswith(BUILTIN_PACKAGE)


class TaskRouter:
    def __init__(self, registry: CapabilityRegistry, *, allowed: Iterable[str] | None = None):
        """``allowed``: the only capabilities it may pick (a persona's allow-list); None: all."""
        self._registry = registry
        self._allowed = frozenset(allowed) if allowed is not None else None

    @property
    def registry(self) -> CapabilityRegistry:
        return self._registry

    def within(self, allowed: Iterable[str] | None) -> "TaskRouter":
        """The same router, picking only among ``allowed`` (None: this router unchanged)."""
        return self if allowed is None else TaskRouter(self._registry, allowed=allowed)

    def routable(self) -> list[CapabilitySpec]:
        """What a request may be routed to (within the allow-list, if any; MCP tools are only the
        fallback, see ``fallback``): the capabilities this deployment installed (plugins,
        skills) before Flora's built-in ones, each group in registration order — so where
        nothing in a request ranks them (a vague request's options, ties), the deployment's
        own come first."""
        fallbacks = self._fallback_names()
        specs = [spec for spec in self._registry.executables()
                 if spec.routable and spec.name not in fallbacks and self._may(spec.name)]
        return sorted(specs, key=is_builtin)

    def own_may_fit(self, content: str) -> bool:
        """Whether a function of the deployment's own may be what ``content`` asks for: a word of
        its name or of its description (four letters or more) is in it."""
        words = _without_addresses(content)
        for spec in self.routable():
            if is_builtin(spec) or spec.name == AGENT:
                continue
            if any(mentions(words, w) for w in _own_words(spec.name, spec.description)):
                return True
        return False

    def installed_own(self) -> bool:
        """Whether the deployment installed routable capabilities of its own (plugins, skills)."""
        return any(not is_builtin(spec) for spec in self.routable())

    def _may(self, name: str) -> bool:
        return self._allowed is None or name in self._allowed

    def find(self, name: str) -> CapabilitySpec | None:
        """The routable capability or MCP tool of that name (one the person chose)."""
        spec = next((s for s in self._registry.executables() if s.name == name), None)
        if spec is None or not self._may(name):
            return None
        return spec if spec.routable or spec.name in self._fallback_names() else None

    def fallback(self, content: str, *, min_score: float = FALLBACK_SCORE) -> Candidate | None:
        """The MCP tool the request clearly asks for, when no installed capability does."""
        tools = self._registry.get_capability("mcp", None)
        if tools is None or not tools.tools:
            return None
        ranked = []
        for tool in tools.tools.values():
            if not self._may(tool.capability):
                continue
            score = sum(NAME_WORD_SCORE for word in tool.named if mentions(content, word))
            score += sum(DESCRIPTION_WORD_SCORE for word in tool.described if mentions(content, word))
            if mentions(content, tool.capability) or not tool.tool.isalpha() and mentions(content, tool.tool):
                score += 3.0  # named outright ("notes.delete_note", "delete_note"; "fetch" is only a word)
            if score:
                ranked.append((score, tool.capability))
        ranked.sort(reverse=True)
        if not ranked or ranked[0][0] < min_score or len(ranked) > 1 and ranked[1][0] >= ranked[0][0]:
            return None
        return Candidate(self._registry.get_executable(ranked[0][1]), ranked[0][0])

    def _fallback_names(self) -> set[str]:
        tools = self._registry.get_capability("mcp", None)
        return tools.names() if tools is not None else set()

    @staticmethod
    def has_evidence_beyond_name(spec: CapabilitySpec, content: str) -> bool:
        """Whether ``content`` points at ``spec`` by more than its name: a keyword, an address
        for a capability that takes one, or what it runs, asked to be run ("could you run git
        status?"). Not its name said as the means: "how do I use python to parse json?" asks how,
        it asks nothing to be run."""
        words = _without_addresses(content)
        return any(mentions(words, kw) for kw in spec.keywords) or bool(urls(content) and _takes_url(spec)) \
            or _runs_one_of(spec, _asked_to_run(content))

    @staticmethod
    def named_as_means(spec: CapabilitySpec, content: str) -> bool:
        """Whether ``content`` names ``spec`` as the means to use ("use python to…", "write some
        python that…", "用命令行看看…"): the person chose the tool."""
        words = _without_addresses(content)
        return any(_as_means(words, word) for word in spec.name.split("_") if len(word) > 2 and mentions(words, word))

    def named(self, content: str) -> CapabilitySpec | None:
        """The installed capability ``content`` calls by its own name ("noop", "run
        dify_workflow"), if any: asked for outright."""
        words = _without_addresses(content)
        return next((spec for spec in self.routable() if mentions(words, spec.name)), None)

    def rank(self, content: str) -> list[Candidate]:
        """Capabilities with any evidence in ``content``, best first."""
        ranked = []
        found_urls = urls(content)
        quoted = backticked(content) or _asked_to_run(content)
        words = _without_addresses(content)  # "data" in https://data.example.com is no keyword
        for spec in self.routable():
            score = sum(2.0 for kw in spec.keywords if mentions(words, kw))
            if quoted and _runs_one_of(spec, quoted):  # "run `df -h`", "试试 `print(2**10)`": what runs, given
                score += QUOTED_RUN_EVIDENCE
            named = [word for word in spec.name.split("_") if len(word) > 2 and mentions(words, word)]
            score += len(named)
            # named as the means ("use python to …", "用 python 算一下"): the person chose this tool
            score += sum(NAMED_AS_MEANS for word in named if _as_means(words, word))
            if mentions(words, spec.name):
                score += 3.0
            if found_urls and _takes_url(spec):  # "post the result to https://…": an address is evidence
                pages = spec.page_evidence is not None and all(page_like(u) for u in found_urls)
                score += spec.page_evidence if pages else spec.address_evidence
            if score:
                ranked.append(Candidate(spec, score))
        ranked.sort(key=lambda c: c.score, reverse=True)
        return ranked

    def confident(self, content: str, *, min_score: float = CONFIDENT_SCORE) -> Candidate | None:
        """The best candidate when it is clearly ahead, else None."""
        ranked = self.rank(content)
        if not ranked or ranked[0].score < min_score:
            return None
        if len(ranked) > 1 and ranked[1].score >= ranked[0].score:
            return None
        if ranked[0].score < BESIDE_OWN_SCORE and is_builtin(ranked[0].spec) and self.own_may_fit(content) \
                and not named_values(content, list(ranked[0].spec.properties)):
            # one word of Flora's ("table") where a function of the deployment's own may fit ("the area
            # of a round table top"): not sure, unless a value of it is given by name ("command=pwd")
            return None
        return ranked[0]

    def written_by_agent(self, spec: CapabilitySpec, values: dict, request: str = "") -> bool:
        """Whether a request for ``spec`` leaves out a required value the agent can supply: what
        will run (a script, a command) or a text it may compose (``x-flora-written``: a file's
        content), which it writes and shows for approval; or any other value the rules did not
        find stated outright ("which file mentions 'rotate the keys'?" says what to look for in
        words no pattern reads), which the model reads from the whole request. Then the request is
        the agent's: the person is never asked for code or for what they already said, and the
        agent still asks for a value the request truly lacks. A secret is the exception: it is
        asked of the person directly, never passed through the model."""
        agent = self.find(AGENT)
        if agent is None or spec.name == AGENT or not spec.offered_to_agent:
            return False
        missing = [name for name in unmet(spec, values) if not is_secret(spec.properties.get(name, {}))]
        if any(spec.properties.get(n, {}).get(RUNS) or spec.properties.get(n, {}).get(WRITTEN) for n in missing):
            return True
        if not is_builtin(spec):  # a person's own function: its values are read against its schema
            return False          # (capabilities/arguments.py), and what the request lacks is asked
        # a value to read is the agent's only when words can say it — a value known by its look (an
        # address, a query, a key) that the request does not hold is not there to read: asked at once —
        # and the request says something the capability's own words do not explain ("what is the
        # current time?" holds no zone: asked at once)
        if any(_has_a_look(spec.properties.get(n, {}), n) for n in missing):
            return False
        return bool(missing) and bool(unexplained_words(spec, request))

    def tool_value_in(self, content: str, *, besides: CapabilitySpec | None = None, given: dict | None = None) -> bool:
        """Whether ``content`` holds, by its look (``x-flora-value-pattern``), a value that a tool
        offered to the agent takes: a file's name, a query, a key; with ``besides``, one of a kind
        that capability takes no parameter for ("fetch https://… and save the number to
        build.txt": a file, which http_request does not write — a second step). Values already
        read as ``besides``'s own (``given``: "delete file path=notes.txt") and its own name (an MCP
        tool's "notes.fail") are not another's."""
        words = _without_addresses(content)
        own = [besides.name if besides else "", *(given or {}).values()]
        # its own values, and its own name ("notes.fail": no file); the longest first, so a short one
        # ("3") does not cut a longer one it stands in ("/tmp/run-38/pid") before that is taken out
        for value in sorted((v for v in own if isinstance(v, str) and v), key=len, reverse=True):
            words = words.replace(value, " ")
        taken = {schema.get(VALUE_PATTERN) for schema in besides.properties.values()} if besides else set()
        return any(schema.get(VALUE_PATTERN) and schema.get(VALUE_PATTERN) not in taken
                   and spotted(words, schema, name) is not None
                   for spec in self.routable() if spec.name != AGENT and spec.offered_to_agent
                   for name, schema in spec.properties.items())

    @staticmethod
    def extract_parameters(spec: CapabilitySpec, content: str) -> dict:
        """Values the request states outright; never guesses."""
        # values known by their look first ("here's the key: app-…", "the database: SELECT …"): the
        # words around them are not values of other parameters
        seen = {name: value for name, schema in spec.properties.items()
                if (schema.get(VALUE_PATTERN) or schema.get(RUNS))
                and (value := spotted(content, schema, name)) is not None}
        around = content
        for value in seen.values():
            around = around.replace(value, " ", 1)
        values = {**named_values(around, list(spec.properties)), **seen}
        for name, value in list(values.items()):
            # a parameter that takes the request's own text, named ("python code: import os; print(1)"):
            # all that follows its name, not the first word of it
            if name not in seen and spec.properties[name].get(REQUEST_TEXT) and isinstance(value, str):
                whole = text_after(content, (name,))
                if whole and whole != value and whole.startswith(value):
                    values[name] = whole
        found_urls = urls(content)
        for name, schema in spec.properties.items():
            if name in values or not found_urls:
                continue
            if takes_address(name, schema):
                values[name] = found_urls[0]
                break
        unclaimed = content
        for value in values.values():  # a value already given by name is not given twice
            unclaimed = unclaimed.replace(str(value), " ", 1)
        rest = {n: sc for n, sc in spec.properties.items() if n not in values}
        for name, schema in list(rest.items()):
            # a parameter that takes what the request says after the capability's keywords
            if schema.get(REQUEST_TEXT) and not values:
                said = text_after(content, (*spec.keywords, spec.name.replace("_", " ")))
                if said and schema.get(RUNS) and not looks_runnable(schema[RUNS], said):
                    break  # "run python to compute …" describes the code: it is written, not taken
                if said:
                    values[name] = said
                    rest.pop(name)
                break
        return {**values_by_schema(unclaimed, rest), **values}


def unmet(spec: CapabilitySpec, values: dict) -> list[str]:
    """The required parameters ``values`` leaves out: those the schema requires, and where it asks
    for one of several groups (``anyOf``/``oneOf`` of ``required``, such as file_search's name or
    contains) and none is given, those of every group."""
    missing = [name for name in spec.required if name not in values]
    for key in ("anyOf", "oneOf"):
        groups = [g.get("required") for g in spec.parameters.get(key) or [] if isinstance(g, dict)]
        groups = [g for g in groups if isinstance(g, list) and g]
        if groups and not any(all(name in values for name in group) for group in groups):
            missing += [name for group in groups for name in group if name not in missing]
    return missing


# words that say nothing of a value: asking, pointing, helping (a request's frame, not its content)
FRAME_WORDS = frozenset("""a about all an and any are as at be by can could do does for from get give has have
he her here his how i if in into is it its let me much many my now of on or our please run see she show so some
tell than that the their them then there these they this to up use us was we what when where which who whom why
will with would you your""".split())
_LATIN_WORD = re.compile(r"[a-z0-9][a-z0-9_\-]*")  # a word, a number, an id such as n1 or A-1029
# the frame of a Chinese request, taken out before its characters are held against the capability's words
_CJK_FRAME = table("routing")["frame_zh"]


@functools.lru_cache(maxsize=1024)
def _own_words(name: str, description: str) -> frozenset[str]:
    """The words of a function's name and description that may tie a request to it (four
    letters or more, not the frame of a request); worked out once per function."""
    return frozenset(w for w in _LATIN_WORD.findall(f"{name.replace('_', ' ')} {description}".lower())
                     if len(w) >= 4 and w.isalpha() and w not in FRAME_WORDS)


def _has_a_look(schema: dict, name: str) -> bool:
    """Whether a parameter's values are known by their look (``x-flora-value-pattern``, an
    address, a format such as uri or email)."""
    return bool(schema.get(VALUE_PATTERN) or schema.get("format") or takes_address(name, schema))


def unexplained_words(spec: CapabilitySpec, request: str) -> list[str]:
    """The words of ``request`` that none of ``spec``'s own words (its name, keywords,
    descriptions, parameter names; not its examples, whose values are samples) hold and that are not the request's frame ("what",
    "please", "一下"): where they are, the request says more than which capability to run —
    likely the values it needs, in words no pattern reads. Chinese counts by characters."""
    translated = spec.parameters.get(DESCRIPTION_IN)
    own = " ".join([spec.name.replace("_", " ").replace(".", " "), spec.description, *spec.keywords,
                    *(translated.values() if isinstance(translated, dict) else ()),
                    *(name.replace("_", " ") for name in spec.properties)]).lower()
    owned = set(_LATIN_WORD.findall(own))
    text = _without_addresses(request).lower()
    latin = [w for w in _LATIN_WORD.findall(text) if (len(w) >= 3 or not w.isalpha()) and w not in FRAME_WORDS
             and w not in owned and w.rstrip("s") not in owned]
    chinese = [c for c in cjk_chars(_CJK_FRAME.sub(" ", text)) if c not in own]
    return latin + chinese


# names of other things that hold a keyword: a pull request is code to review, a leave request a
# form, neither a call to a web address; "data" in a data scientist is no data to query
_OTHER_THINGS = table("routing")["other_things"]


_MAILBOX = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")  # an e-mail address
_BY_MEANS = table("routing")["by_means"]  # "use …", "用 …" just before a tool's name


def _without_addresses(content: str) -> str:
    """The words that may be evidence: without web and e-mail addresses ("data" in
    https://data.example.com, a file's look in bob@example.com) and without names of other
    things that hold a keyword ("my pull request")."""
    for address in urls(content):
        content = content.replace(address, " ")
    return _OTHER_THINGS.sub(" ", _MAILBOX.sub(" ", content))


def _as_means(text: str, word: str) -> bool:
    """Whether ``word`` stands in ``text`` right after words that name it as the means ("use",
    "with the", "用", "通过")."""
    for found in re.finditer(re.escape(word), text, re.I):
        if _BY_MEANS.search(text[:found.start()]):
            return True
    return False


def _asked_to_run(content: str) -> list[str]:
    """The command lines ``content`` asks to run ("could you run git status?"), unless it asks
    how to ("how do I run git status?": advice, nothing to run)."""
    return [] if world.asks_how_to(content) else run_asked(content)


def _runs_one_of(spec: CapabilitySpec, quoted: list[str]) -> bool:
    """Whether one of the spans set in backticks is what a parameter of ``spec`` runs: a command
    line whose program exists for a shell, else Python that parses."""
    kinds = {str(schema[RUNS]) for schema in spec.properties.values() if schema.get(RUNS)}
    for text in quoted:
        if "shell" in kinds and looks_runnable("shell", text):
            return True
        if "python" in kinds and looks_runnable("python", text) and not looks_runnable("shell", text):
            return True
    return False


def _takes_url(spec: CapabilitySpec) -> bool:
    return any(name == "url" or schema.get("format") == "uri" for name, schema in spec.properties.items())
