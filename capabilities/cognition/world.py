"""The person's own world, read from the words: what only a capability could answer or do.

A small model asked "where's my parcel?" or "is it raining in Shenzhen right now?" answers
anyway, and its answer is made up. These readers tell such messages apart, in English and
Chinese, so they are routed to a capability or answered with an honest "I can't":

- ``asks_about_own_records``: a question about the person's own systems (an order, a ticket,
  an account, their mailbox, their calendar) — with no capability for it, no model may answer;
- ``needs_the_world``: that, or live data (today's weather, a flight's status, a price now),
  or an act in the world (book, pay, send, restart a server);
- ``beyond_this_machine``: the part of that no tool of this machine reaches either (a remote
  machine, records in other systems, an act in the world), which the agent may not take;
- ``remote_machine``: a machine of the person's other than this one, asked about or acted on;
- ``computes_on_given_figures``, ``asks_how_it_works``: a sum on figures the message itself
  gives, a question of how something works — conversation, whatever else the words name.

What is quoted is left out ("把“今天天气很好”翻译成英文" asks for a translation, not for today's
weather). cues.py holds the rest of what the words alone make certain.

The words each reader looks for live in the table ``tables/world.json`` (rule_tables.py), each
rule with the examples that prove it; what stays here reads the shape of a value (a figure, a
quotation).
"""

from __future__ import annotations

import re

from capabilities.cognition.rule_tables import table

_F = re.IGNORECASE
_WORLD = table("world")

_OWN_RECORDS = _WORLD["own_records"]
_LIVE_DATA = _WORLD["live_data"]
_WORLD_ACT = _WORLD["world_act"]
# an action on one of the person's things, in one clause, either order: "那个订单帮我取消掉", "回一下
# 客户那封邮件", "把下周一的会改到三点", "提个bug", "reply to Tom's email", "move my 3pm meeting";
# asked of a named service of theirs ("在禅道上…", "美团外卖…帮我催一下"). A how-to question about
# the same ("怎么回复客户的邮件比较好") is advice, for chat.
_ACT_ON_THINGS = _WORLD["act_on_things"]
# the person's machines elsewhere — a cluster, its pods, a server reached over ssh — asked about
# or acted on: "帮我看下k8s集群里有几个pod挂了", "ssh into db-02 and tail the logs", "线上那台服务器重启一下".
# The shell and file tools reach this machine only; "how does k8s restart a pod?" is knowledge.
_REMOTE = _WORLD["remote"]
# knowledge about such things, and code written about them, is conversation
_KNOWLEDGE = _WORLD["knowledge"]
_HOW_TO = _WORLD["how_to"]
_REMINDER = _WORLD["reminder"]


# in single quotes only between word boundaries: "put 'see you at 6' in it", never "don't … it's"
_QUOTED = re.compile(r"“[^”]*”|「[^」]*」|『[^』]*』|‘[^’]*’|\"[^\"]*\"|(?<!\w)'[^'\n]+'(?!\w)")


def unquoted(text: str) -> str:
    """The message without what it quotes: "把“今天天气很好”翻译成英文" asks for a translation,
    not for today's weather."""
    return _QUOTED.sub(" ", text)


def needs_the_world(text: str) -> bool:
    text = unquoted(text)
    if _REMINDER.search(text):  # "明天提醒我给李老师打电话" asks for a reminder, which Flora does
        return False
    if _WRITES_CODE.search(text) or computes_on_given_figures(text):
        return False  # "写一个检查服务器状态的脚本", "买了3斤苹果，每斤5块，一共多少钱": made here, from what is said
    if _IN_THE_DATABASE.search(text):
        return False  # "把这周退款超过500元的订单从库里捞出来": the organisation's data, where a capability looks
    records = _OWN_RECORDS.search(text)  # "my salary is 5000, …how much…" is a sum (above)
    general = _HOW_IT_WORKS.search(text) and not _SPECIFIC.search(text)  # "为什么航班会延误": how such things go
    return bool(records or not general and (_LIVE_DATA.search(text) or _WORLD_ACT.search(text))
                or (_ACT_ON_THINGS.search(text) or remote_machine(text)) and not _HOW_TO.search(text))


# where the organisation's data is looked up (not a database server, which is a machine elsewhere)
_IN_THE_DATABASE = _WORLD["in_the_database"]
_WRITES_CODE = _WORLD["writes_code"]
# the person's own, or one thing in particular ("why is the staging server down?"), not such things in general
_SPECIFIC = _WORLD["specific"]
_THIS_MACHINE = _WORLD["this_machine"]


def beyond_this_machine(text: str) -> bool:
    """What no tool of this machine reaches: a machine of the person's elsewhere, their records
    in other systems (mailbox, tickets, orders — not this machine's disk), an act in the world.
    The agent's tools (a shell, files, the web) cannot look there, so it is not the agent's."""
    text = unquoted(text)
    if _REMINDER.search(text):
        return False
    return bool(remote_machine(text) or _WORLD_ACT.search(text)
                or _ACT_ON_THINGS.search(text) and not _HOW_TO.search(text)
                or _OWN_RECORDS.search(text) and not _THIS_MACHINE.search(text))


# a sum on the person's own figures: "I earn 6200 a month and save 15%, how much in two years?"
_FIGURE = re.compile(r"(?<![A-Za-z0-9.#/-])\d+(?:[.,]\d+)?\s*(?:%|k|w|万|千|百|元|块|美元|刀|dollars?|bucks)?(?![A-Za-z0-9-])", _F)
_ASKS_AMOUNT = _WORLD["asks_amount"]


def computes_on_given_figures(text: str) -> bool:
    """A calculation on figures the message itself gives (two or more, and a question of how
    much / how many): every number is there, so it is conversation, not a look into the
    person's accounts."""
    return len(_FIGURE.findall(text)) >= 2 and bool(_ASKS_AMOUNT.search(text))


# how things work, asked of the things themselves: "how does k8s restart a pod?", "为什么航班会延误"
_HOW_IT_WORKS = _WORLD["how_it_works"]


def asks_how_to(text: str) -> bool:
    """A how-to question ("how do I run git status?"): advice on doing a thing, not a request to do it."""
    return bool(_HOW_TO.search(text))


def asks_how_it_works(text: str) -> bool:
    """A question of how or why something works — knowledge, for chat — unless it is about the
    person's own things or the live world."""
    return bool(_HOW_IT_WORKS.search(text)) and not needs_the_world(text)


def remote_machine(text: str) -> bool:
    """A question about, or an act on, a machine of the person's other than this one (a
    cluster, a server, a host reached over ssh) — not a question of how such things work."""
    return bool(_REMOTE.search(text)) and not (_HOW_TO.search(text) or _KNOWLEDGE.search(text))



def asks_about_own_records(text: str) -> bool:
    return bool(_OWN_RECORDS.search(unquoted(text)))


_NAMES_OWN_RECORDS = _WORLD["names_own_records"]


def names_own_records(text: str) -> bool:
    """Whether a message names one of the person's own records ("my parcel", "我的银行卡"),
    asked about or not: "我的银行卡被冻结了" says no question, yet wants what only the bank can do."""
    return bool(_NAMES_OWN_RECORDS.search(unquoted(text)))
