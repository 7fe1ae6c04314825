"""A model that claims to have done what it was asked, and does nothing: every message is chat
to it, and its chat replies say the work is being run, paused or scheduled ("好的，我会立即执行
「执行Dify工作流」", as the small model once wrote). Named in config (``llm.backend: function``)
so every actor process gets the same answers; the tests show such claims never reach a person
unbacked, and that operations on the person's work never depend on it."""

from __future__ import annotations

import re

_HAN = re.compile(r"[\u4e00-\u9fff]")


def respond(messages: list[dict], json_schema: dict | None) -> str | dict:
    said = messages[-1]["content"]
    if json_schema is not None:
        if "route" in json_schema.get("properties", {}):
            return {"route": "chat"}
        return {}
    if _HAN.search(said):
        return "好的，我会立即执行「执行Dify工作流」。已为你暂停销售周报。"
    return "Sure! I'm running the sales report task now. I've paused the weekly report too."
