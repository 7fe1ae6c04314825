"""A deterministic model for tests that run actors in several processes.

``FunctionLLM`` objects cannot be handed to another process, so multiprocess tests name
this function in config (``llm.backend: function``); every ExecutionActor process imports
it and gets the same answers. It computes replies from the prompt, like a tiny model that
knows a few phrases, and never invents parameter values.
"""

from __future__ import annotations

import re

# phrase in the request -> (intent, capability)
ROUTES = [
    (re.compile(r"weather|joke|story|天气|笑话", re.I), ("chat", "none")),
    (re.compile(r"sales|revenue|销售", re.I), ("query", "data_query")),
    (re.compile(r"add up|sum of|加起来", re.I), ("task", "add_numbers")),
    (re.compile(r"web ?page|website|网页", re.I), ("task", "http_request")),
    (re.compile(r"the thing|那个东西", re.I), ("task", "none")),  # a request it cannot place
]


def respond(messages: list[dict], json_schema: dict | None) -> str | dict:
    request = messages[-1]["content"]
    if json_schema is None:
        return f"(test model) you said: {request.removeprefix('Request: ').removesuffix(chr(10) + 'JSON:')}"
    for pattern, (intent, capability) in ROUTES:
        if pattern.search(request):
            allowed = json_schema["properties"]["capability"]["enum"]
            return {"intent": intent, "capability": capability if capability in allowed else "none",
                    "parameters": {"api_key": "invented-by-the-model"}}
    return {"intent": "chat", "capability": "none", "parameters": {}}
