"""Which of the person's things a message names, by the words of what they are.

``content_words`` gives the content words of a text (Latin words, and Chinese by character
pairs, without the words for operations and for tasks themselves), so "the bins reminder" names
the loop task that takes the bins out and "销售周报那个任务" the one that fetches the weekly sales
report: two texts name the same thing when their content words meet.
"""

from __future__ import annotations

import re

from common.i18n import cjk_chars

_STOP = {"the", "my", "a", "an", "to", "me", "remind", "reminder", "loop", "task", "tasks", "pause", "resume",
         "delete", "cancel", "stop", "run", "now", "trigger", "it", "please", "and", "of", "for", "that", "this"}


def content_words(text: str) -> set[str]:
    """Content words, for matching a reference to a task; CJK text by character pairs."""
    lowered = text.lower()
    latin = {w for w in re.findall(r"[a-z0-9]{2,}", lowered) if w not in _STOP}
    cjk = "".join(cjk_chars(lowered))
    for verb in ("提醒", "暂停", "恢复", "删除", "取消", "运行", "执行", "任务", "循环", "定时", "一下", "我的", "现在"):
        cjk = cjk.replace(verb, " ")
    pairs = {a + b for part in cjk.split() for a, b in zip(part, part[1:])}
    return latin | pairs
