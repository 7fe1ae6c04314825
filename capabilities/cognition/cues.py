"""What the words alone make certain, in English and Chinese.

Rules decide only where a person's meaning is not in doubt; everything else is the
understanding model's to read. Each function here answers one narrow question:

- ``conversation_only``: thanks, greetings, goodbyes — conversation whatever else is around;
- ``command``: a system command (``/status``, "clear my history", "shut down", "switch
  the model") and which one;
- ``asks_about_flora``: a question about Flora's own work for this person (their tasks,
  loop tasks, what Flora is doing) that the store answers, never the model;
- ``reads_as_new_request``: a message that asks for something (a question, a request
  verb, a sentence) rather than giving a value, for telling an answer from a new request
  while a task waits.

What needs the person's own world (their records, live data, acts elsewhere) is read by
world.py.

The words each rule looks for live in the table ``tables/cues.json`` (rule_tables.py), each
rule with the examples that prove it, so an operator adds their people's words without code.
What stays here reads the shape of a value (an address, an id) or rewrites spelling (chat
spelling, Cantonese words), which a table of patterns cannot say.
"""

from __future__ import annotations

import functools
import re

from capabilities.cognition.rule_tables import Rule, table
from capabilities.cognition.world import asks_about_own_records, needs_the_world
from common.i18n import has_cjk

_F = re.IGNORECASE
_CUES = table("cues")

_THANKS = _CUES["thanks"]
_GREETING = _CUES["greeting"]
# after thanks, words that turn the message into a request ("thanks, now fetch …")
_THEN_ASK = _CUES["then_ask"]

_COMMANDS: tuple[tuple[str, Rule], ...] = tuple(
    (name, _CUES[name]) for name in ("clear_history", "shutdown", "switch_model", "status", "help"))

_ABOUT_FLORA = _CUES["about_flora"]

_ADDRESS = re.compile(r"(https?://\S+)", _F)  # an address, kept whole
_QUESTION = _CUES["question"]
_REQUEST_VERB = _CUES["request_verb"]


# chat spelling, read as the words it stands for before any rule looks at the message
_TEXT_SPEAK = {
    "u": "you", "ur": "your", "wat": "what", "wut": "what", "wht": "what", "whats": "what's", "hows": "how's",
    "pls": "please", "plz": "please", "thx": "thanks", "tmrw": "tomorrow", "tmr": "tomorrow", "2moro": "tomorrow",
    "abt": "about", "sth": "something", "smth": "something", "msg": "message", "rn": "right now",
    "cuz": "because", "bc": "because", "gimme": "give me", "lemme": "let me", "wanna": "want to",
    "gonna": "going to", "kinda": "kind of", "sorta": "sort of", "dont": "don't", "cant": "can't", "wont": "won't", "im": "I'm", "ive": "I've",
}
_SPOKEN_WORD = re.compile(r"(?<![\w/.:@#-])(?:r(?=\s+u\b)|" + "|".join(sorted(_TEXT_SPEAK, key=len, reverse=True))
                          + r")(?![\w/.:@#-]|'\w)", _F)


# Cantonese words the rules and examples (written in Mandarin) would not know; only words that
# mean nothing else in Mandarin ("听日下昼三点提我去攞药" is "明天下午三点提醒我去拿药")
_CANTONESE = {"听日": "明天", "琴日": "昨天", "寻日": "昨天", "下昼": "下午", "朝早": "早上", "晏昼": "中午",
              "提我": "提醒我", "攞": "拿", "冇": "没有", "点样": "怎么", "唔该": "麻烦", "嘅": "的",
              "佢哋": "他们", "佢": "他", "畀": "给", "睇": "看"}
_CANTONESE_WORD = re.compile("|".join(sorted(_CANTONESE, key=len, reverse=True)))


def in_simplified(text: str) -> str:
    """Chinese as the rules and examples read it: traditional characters in simplified ones
    (OpenCC), Cantonese words in Mandarin ones. Text without Chinese is returned as it is."""
    if not has_cjk(text):
        return text
    pieces = _ADDRESS.split(text)  # addresses as written: "https://zh.wikipedia.org/wiki/臺灣" stays
    return "".join(piece if i % 2 else _CANTONESE_WORD.sub(lambda m: _CANTONESE[m.group(0)],
                                                           _simplifier().convert(piece))
                   for i, piece in enumerate(pieces))


# a value taken back and said again in one message: "查一下 https://…/v1 不对不对，是 https://…/v2",
# "key is app-3x9k… no wait, app-7hq2…"
_CORRECTION = _CUES["correction"]
_VALUE = re.compile(r"https?://[^\s，。！？、）)\]]+|(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{5,}")


def corrected(text: str) -> str:
    """``text`` with a value the person took back replaced by the one they said instead ("查一下
    https://a/v1 不对不对，是 https://a/v2" → "查一下 https://a/v2"): the correction and its words
    go. Only where the new value, right after the words of correction, is of the same kind (an
    address, or a token of letters and digits) as a value said before them."""
    start = 0
    while (said := _CORRECTION.search(text, start)) is not None:
        new = _VALUE.match(text, said.end())
        old = [v for v in _VALUE.finditer(text, 0, said.start()) if _same_kind(v.group(0), new.group(0))] if new else []
        if not old:
            start = said.end() or start + 1
            continue
        taken_back = old[-1]
        text = text[:taken_back.start()] + new.group(0) + text[taken_back.end():said.start()] + text[new.end():]
        start = 0
    return text


def _same_kind(a: str, b: str) -> bool:
    """Both addresses, or neither."""
    return bool(_ADDRESS.match(a)) == bool(_ADDRESS.match(b))


@functools.cache
def _simplifier():
    import opencc

    return opencc.OpenCC("t2s")


def spelled_out(text: str) -> str:
    """The message with chat spelling written out ("wat can u do" -> "what can you do"), so a
    rule reads what a person means however they type it; addresses and ids are left alone."""
    def word(match: re.Match) -> str:
        said = match.group(0).lower()
        return "are" if said == "r" else _TEXT_SPEAK[said]
    return _SPOKEN_WORD.sub(word, text)


def is_greeting(text: str) -> bool:
    """A greeting or a goodbye and nothing else ("hi!", "你好吗", "good night")."""
    return bool(_GREETING.match(text))


_LEAD_IN = " \t,.!;:~-—，。！；：～、"  # what splits thanks from what follows them


def conversation_only(text: str) -> bool:
    """Thanks, greetings and goodbyes: conversation, whatever punctuation splits them. Thanks
    followed by a question or a request is that question ("谢谢，顺便问一下上海下周天气怎么样？")."""
    if _GREETING.match(text):
        return True
    if _THANKS.match(text):
        rest = _THANKS.sub("", text, count=1).lstrip(_LEAD_IN)
        return not (_THEN_ASK.search(rest) or reads_as_new_request(rest) or needs_the_world(rest))
    return False


def _as_you(text: str) -> str:
    """"您" read as "你": the polite "you" asks the same ("麻烦您把系统关一下", "您能帮我干啥")."""
    return text.replace("您", "你")


def command(text: str) -> str | None:
    """``clear_history | shutdown | switch_model | status | help`` when the text is that command."""
    text = _as_you(text)
    for name, pattern in _COMMANDS:
        if pattern.search(text):
            return name
    return None


def asks_about_flora(text: str) -> bool:
    return bool(_ABOUT_FLORA.search(_as_you(text)))


def asks(text: str) -> bool:
    """Whether a question is asked anywhere in ``text`` ("…有没有学校发过来的通知…", "what …")."""
    return bool(_ASKS_ANYWHERE.search(text))


def asks_about_own_work(text: str) -> bool:
    """A question about the work the person gave Flora ("我那个dify的任务现在什么情况了", "did the
    task I gave you earlier ever finish?"): to be answered from their tasks, never by running
    another. A question word anywhere counts, as Chinese asks without a final particle. An
    address in it is something to call ("我那个请求为什么一直报错？帮我重新请求 https://…")."""
    return asks_about_flora(text) and (is_question(text) or asks(text)) and not _ADDRESS.search(text)


_ABILITIES = _CUES["abilities"]
_HYPOTHETICAL = _CUES["hypothetical"]


def asks_hypothetical(text: str) -> bool:
    """A what-if put to Flora ("if you could have a body for one day…", "如果你是人，你想干嘛"):
    conversation, not a question about what it can do."""
    return bool(_HYPOTHETICAL.search(text))


def asks_about_abilities(text: str) -> bool:
    """"what can you do?", "介绍一下你自己能干嘛": answered with what is installed."""
    return bool(_ABILITIES.search(_as_you(text)))


_ADVICE = _CUES["advice"]


def asks_for_advice(text: str) -> bool:
    """"any tips for a first job interview?", "有什么练习建议吗": advice, which conversation gives,
    unless it is about the person's records or the live world."""
    return bool(_ADVICE.search(text)) and not needs_the_world(text)


_VAGUE = _CUES["vague_request"]
_UNCLEAR_EN = _CUES["unclear_thing_en"]
_UNCLEAR_ZH_PERSON = _CUES["unclear_person_zh"]
_UNCLEAR_ZH = _CUES["unclear_thing_zh"]


# "就按之前说的办", "do what we discussed": what was said before, as the whole request
_AS_SAID = _CUES["as_said"]


# "就用上次那个吧", "do it the other way", "ok now the other one": a choice among things said
# before — the last one, the other one, the same as last time — as the whole request
_EARLIER_CHOICE = _CUES["earlier_choice"]


def unclear_reference(text: str) -> str | None:
    """"send it to them", "can you fix this?", "把那个文件再改一下发给他": a request that names
    what it acts on only by pointing ("it", "那个文件"). Answers the pointing words; with
    nothing said before in the conversation they point at nothing, and the person is asked."""
    found = (_UNCLEAR_EN.match(text) or _UNCLEAR_ZH.match(text) or _UNCLEAR_ZH_PERSON.match(text)
             or _AS_SAID.match(text) or _EARLIER_CHOICE.match(text))
    return (found.groupdict().get("ref") or found.groupdict().get("ref_zh")) if found else None


# "and tomorrow?", "what about Shanghai?", "same for the returns", "那明天呢？", "上海呢", "北京也一样":
# a message that says only what changes, and leaves the rest to what was asked just before ("改成下午4点"
# is not one: it changes the work itself)
_FOLLOW_UP = _CUES["follow_up"]


def follows_up(text: str) -> bool:
    """"and tomorrow?", "what about Shanghai?", "do the same for the returns", "那明天呢？",
    "上海也一样": a message read together with what was asked before it."""
    return bool(_FOLLOW_UP.match(text))


def vague_request(text: str) -> bool:
    """"do the thing", "发出去": a request with nothing to say what it is about."""
    return bool(_VAGUE.match(text))


def is_question(text: str) -> bool:
    return bool(_QUESTION.search(text.strip()))



def reads_as_new_request(text: str) -> bool:
    """A question or a request, not a bare value."""
    stripped = text.strip()
    return bool(_QUESTION.search(stripped) or _REQUEST_VERB.search(stripped))


# -- long-term memory ----------------------------------------------------------------------
_RECALL_ALL = _CUES["recall_all"]
_FORGET_ALL = _CUES["forget_all"]
_FORGET = _CUES["forget"]
_SELF = _CUES["self"]


# an address the person came across, told of: "saw https://… on a bus ad this morning", "收到一个
# https://… 的短信"
_TOLD_OF_ADDRESS = _CUES["told_of_address"]
_PLEASE = _CUES["please"]
_CLAUSES = re.compile(r"[,，;；.。!！]\s*")


def tells_of_an_address(text: str) -> bool:
    """An address the person tells of having come across, asking nothing about it ("saw
    https://win-a-car.example on a bus ad, obvious scam lol"): no address to fetch."""
    return bool(_TOLD_OF_ADDRESS.search(text)) and not (
        asks(text) or _WANTS.search(text) or _PLEASE.search(text)
        or any(_REQUEST_VERB.search(clause) for clause in _CLAUSES.split(_ADDRESS.sub(" ", text))))  # "…, fetch it"


def speaks_of_self(text: str) -> bool:
    """Whether the person speaks of themselves anywhere in ``text`` (I, my, we, 我, 咱…)."""
    return bool(_SELF.search(text))


_A_TASK = _CUES["a_task"]
_NOTHING_NAMED = {"it", "that", "this", "about it", "about that", "it all", "吧", "了", "这个", "那个", "算了"}


def memory_command(text: str) -> tuple[str, str] | None:
    """What a person asks of Flora's memory of them: ``("list", "")`` ("what do you remember
    about me?", "你记得我什么"), ``("clear", "")`` ("forget everything about me"), or
    ``("forget", what)`` ("forget that I live in Shanghai", "忘掉我住在上海") — None otherwise."""
    if _RECALL_ALL.search(text):
        return "list", ""
    if _FORGET_ALL.search(text):
        return "clear", ""
    found = _FORGET.match(text)
    if found and command(text) != "clear_history":
        what = text[found.end():].strip(" \t.。!！")
        if _A_TASK.match(what):  # "forget that task", "forget about the reminder": an operation on it
            return None
        return ("forget", what) if what and what.lower() not in _NOTHING_NAMED else None
    return None


_SELF_FIRST = _CUES["self_first"]
_ASKS_ANYWHERE = _CUES["asks_anywhere"]
_WANTS = _CUES["wants"]
# "要" right after a day or a time to come says what the person is going to do, not what they want
# of anyone: "我下周要去上海出差", "我明天要开会", "我快要考试了" (but "我每天9点要看报表" wants a report,
# and "我明天要订机票" may want it booked)
_GOING_TO = _CUES["going_to"]
_FLORA_THINGS = _CUES["flora_things"]
_NAMED_VALUE = re.compile(r"\w\s*=\s*\S")


def states_about_self(text: str) -> bool:
    """A plain statement about the person ("I go running every morning", "we have a standup
    every Monday at 9", "我每天早上跑步"): first person, no question, nothing wanted of anyone,
    nothing about their tasks or outside records. It is conversation (and may be
    remembered), never a request — a time in it is not a schedule to set up."""
    stripped = text.strip()
    if not _SELF_FIRST.search(stripped) or len(stripped) < 4:
        return False
    return not (_ASKS_ANYWHERE.search(stripped) or _WANTS.search(_GOING_TO.sub("", stripped))
                or _FLORA_THINGS.search(stripped)
                or _NAMED_VALUE.search(stripped) or needs_the_world(stripped) or command(stripped))


def may_tell_about_self(text: str) -> bool:
    """Whether a message may tell something about the person worth remembering (a name, a
    preference, a project, a recurring need): a first-person statement, not a question and
    not a request. Generous on purpose: the distilling model decides; this spares it the
    messages that cannot."""
    if not _SELF.search(text) or len(text.strip()) < 4:
        return False
    # a question asked anywhere ("我在你这儿设了哪些定时的事儿"), a reminder asked for ("每天早上9点提醒我复习")
    return not (is_question(text) or asks(text) or _REQUEST_VERB.search(text) or _REMIND_ME.search(text)
                or conversation_only(text))


_REMIND_ME = _CUES["remind_me"]
_ABOUT_SELF = _CUES["about_self"]


def asks_about_self(text: str) -> bool:
    """A question about the person themselves ("what's my name?", "我住在哪？"), which only
    what they told Flora can answer — not their orders or accounts (``needs_the_world``)."""
    return bool(_ABOUT_SELF.search(text)) and not asks_about_own_records(text)
