"""A deterministic model for tests that run actors in several processes.

``FunctionLLM`` objects cannot be handed to another process, so multiprocess tests name
this function in config (``llm.backend: function``); every ExecutionActor process imports
it and gets the same answers. It computes replies from the prompt, like a tiny model that
knows a few phrases, and never invents parameter values.
"""

from __future__ import annotations

import json
import re

from capabilities.arguments import ARGUMENTS, CALL, NONE
from capabilities.cognition.chat import SYSTEM_PROMPT
from capabilities.memory import recalled

CRASH = "crash the model"  # a request the model raises on (poison-message tests)

# phrase in the request -> (intent, capability)
ROUTES = [
    (re.compile(r"weather|joke|story|天气|笑话", re.I), ("chat", "none")),
    (re.compile(r"sales|revenue|销售", re.I), ("query", "data_query")),
    (re.compile(r"add up|sum of|加起来", re.I), ("task", "add_numbers")),
    (re.compile(r"web ?page|website|网页", re.I), ("task", "http_request")),
    (re.compile(r"the thing|那个东西", re.I), ("task", "none")),  # a request it cannot place
    (re.compile(r"use your tools|用工具", re.I), ("task", "agent")),
    (re.compile(r"run this python", re.I), ("task", "python_exec")),
]


def respond(messages: list[dict], json_schema: dict | None) -> str | dict:
    request = messages[-1]["content"]
    if CRASH in request:  # a back end with a bug: what it raises is not an LLMError, so it reaches the actor
        raise RuntimeError("the test model crashed on this prompt")
    if json_schema is not None and json_schema.get("title") == "Plan":
        return _plan(request)
    if json_schema is not None and json_schema.get("title") == "Revised parameters":
        return _revised(request, json_schema)
    if json_schema is not None and json_schema.get("title") == "Facts about the person":
        return _facts(request)
    if json_schema is not None and json_schema.get("title") == "Questions the note answers":
        return _questions(request, json_schema)
    if json_schema is not None and json_schema.get("title") == "Persona":
        return _persona(messages, json_schema)
    if json_schema is not None and json_schema.get("title") == "Agent step":
        return agent_step(messages)
    if json_schema is not None and json_schema.get("title") == ARGUMENTS:
        return {name: None for name in json_schema["properties"]}  # it reads no value the rules did not
    if json_schema is not None and json_schema.get("title") == CALL:
        return _call(request, json_schema)
    if json_schema is None:
        reply = f"(test model) you said: {request.removeprefix('Request: ').removesuffix(chr(10) + 'JSON:')}"
        remembered = [m["content"].split("\n", 1)[1] for m in messages[:-1] if m["role"] == "system"
                      and m["content"].startswith(recalled.INTRO)]
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        if system and system != SYSTEM_PROMPT and not system.startswith("You read the messages"):
            reply += f" (as: {system.split('.', 1)[0]})"  # a persona's prompt, echoed so tests can see it
        return reply + (f" (remembering: {'; '.join(remembered)})" if remembered else "")
    said = request.rsplit("Message: ", 1)[-1]  # the understanding step's message, after its context
    if "numbers report" in said:
        return {"route": "plan"}
    allowed = json_schema["properties"]["route"]["enum"]
    for pattern, (intent, capability) in ROUTES:
        if pattern.search(said):
            if intent in ("task", "query"):
                return {"route": capability if capability in allowed else "clarify"}
            return {"route": intent}
    return {"route": "chat"}


def _call(request: str, schema: dict) -> dict:
    """The function whose name's words the request holds ("add numbers a=2": add_numbers), with no
    value read (the rules' stand); none when no function is named so."""
    said = request.rsplit("Request: ", 1)[-1].lower()
    for option in schema["anyOf"]:
        name = option["properties"]["function"]["const"]
        if name != NONE and all(word in said for word in name.lower().split("_")):
            return {"function": name, "arguments": {n: None for n in option["properties"]["arguments"]["properties"]}}
    return {"function": NONE}


_SPECIALTY = re.compile(r"\bexpert (?:in|on) ([a-z ]+?)(?:[,.?!]|$)", re.I)


def _persona(messages: list[dict], schema: dict) -> dict:
    """The persona a message names ("ask the coder ..."), a specialist when it wants "an expert
    in X" and the template is offered, else the default the prompt names."""
    said = messages[-1]["content"].rsplit("Message: ", 1)[-1]
    names = schema["properties"]["persona"]["enum"]
    for name in names:
        if name != "specialist" and re.search(rf"\b{re.escape(name)}\b", said, re.I):
            return {"persona": name}
    wanted = _SPECIALTY.search(said)
    if wanted and "specialist" in names:
        return {"persona": "specialist", "specialty": wanted.group(1).strip()}
    return {"persona": re.search(r"If none fits clearly, choose (\S+?)\.", messages[0]["content"]).group(1)}


def _revised(request: str, schema: dict) -> dict:
    """The old parameters, with each one that has a choice of values set to the choice the
    instruction names ("in celsius" → to=celsius)."""
    old = json.loads(re.search(r"^\{.*\}$", request, re.M).group(0))
    instruction = re.search(r'revise the result: "(.*)"', request).group(1).lower()
    for name, prop in schema["properties"].items():
        named = [v for v in prop.get("enum", []) if isinstance(v, str) and v.lower() in instruction]
        if named:
            old[name] = named[0]
    return old


def _plan(request: str) -> dict:
    """A plan for the one request it knows ("the numbers report"); an empty, invalid one
    otherwise, which the planner refuses, leaving the request to the normal path."""
    if "numbers report" not in request:
        return {"steps": []}
    steps = [{"id": "s1", "capability": "add_numbers", "parameters": {"a": 1, "b": 2}, "depends_on": []},
             {"id": "s2", "capability": "add_numbers", "parameters": {"a": "${s1.result.sum}", "b": 10},
              "depends_on": ["s1"]}]
    return {"steps": steps, "aggregation": {"strategy": "concat"}}


# a name: after "my name is" and the like, or after "I am" / "I'm" when it is capitalised ("I'm Daniel",
# not "I am allergic to peanuts")
_NAMED = re.compile(r"(?:my name is|call me|我叫|我的名字是)\s*([^,，。.!！]+)|\b(?:i am|i'm)\s+((?-i:[A-Z])[^,，。.!！]*)", re.I)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|my|we|our)\b|我", re.I)


def _questions(prompt: str, schema: dict) -> dict:
    """Questions a note answers: "What about <the note's last words>?", as many as asked for."""
    note = prompt.rsplit('Note: "', 1)[1].split('"', 1)[0]
    n = schema["properties"]["english_questions"]["minItems"]
    return {"english_questions": [f"What about {note.split()[-1]}? ({i})" for i in range(n)],
            "chinese_questions": [f"{note[-4:]}是什么？({i})" for i in range(n)]}


def _facts(prompt: str) -> dict:
    """What the person's message says about them: its first-person clauses, each a fact (a
    name said as "my name is …" as the person's name), like a careful small model."""
    said = prompt.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
    facts = []
    for clause in re.split(r"[,，。;；!！]|\band\b", said):
        clause = clause.strip(" .")
        if not clause or not _FIRST_PERSON.search(clause) or clause.endswith(("?", "？")):
            continue
        named = _NAMED.search(clause)
        if named:
            name = (named.group(1) or named.group(2)).strip()
            facts.append({"fact": f"The person's name is {name}", "subject": "name", "kind": "name", "confidence": 1.0})
        else:
            facts.append({"fact": clause, "subject": " ".join(clause.split()[1:3]) or clause[:4], "kind": "other",
                          "confidence": 1.0})
    return {"facts": facts}


# -- the agent's steps ---------------------------------------------------------------------
# A request the agent knows (a phrase in it) -> its steps, in order. A step is a tool call,
# the final answer, a question, or a raw reply (text the loop must refuse); a function of the
# results so far computes a step from what the tools returned.
AGENT_SCRIPTS: list[tuple[re.Pattern, list]] = [
    (re.compile(r"total of (\d+) plus (\d+)", re.I), [
        lambda said, results: {"tool": "add_numbers", "arguments": {"a": int(said.group(1)), "b": int(said.group(2))}},
        lambda said, results: {"tool": "echo", "arguments": {"text": str(json.loads(results[0])["sum"])}},
        lambda said, results: {"final": f"The sum is {json.loads(results[1])['text']}."}]),
    (re.compile(r"write notes (\w+) and (\w+)", re.I), [
        lambda said, results: {"tool": "write_note", "arguments": {"name": said.group(1), "text": "first"}},
        lambda said, results: {"tool": "write_note", "arguments": {"name": said.group(2), "text": "second"}},
        lambda said, results: {"final": "Both notes are written."}]),
    (re.compile(r"mark then ask", re.I), [
        lambda said, results: {"tool": "count_mark", "arguments": {"label": "one"}},
        lambda said, results: {"ask": "Which label should the next mark have?"},
        lambda said, results: {"ask": "Which label should the next mark have?"},  # asked again after the reminder
        lambda said, results: {"tool": "count_mark", "arguments": {"label": results[-1]}},
        lambda said, results: {"final": f"Marked one and {results[-2]}."}]),
    (re.compile(r"wait until cancelled", re.I), [
        lambda said, results: {"tool": "wait_for_cancel", "arguments": {"seconds": 60}},
        lambda said, results: {"final": "waited"}]),
    (re.compile(r"stumble then add", re.I), [
        lambda said, results: "this is not json at all",
        lambda said, results: {"tool": "rm_rf", "arguments": {"path": "/"}},
        lambda said, results: {"tool": "add_numbers", "arguments": {"a": "two", "b": 3}},
        lambda said, results: {"tool": "add_numbers", "arguments": {"a": 2, "b": 3}},
        lambda said, results: {"final": "Recovered: the sum is 5."}]),
]


def agent_step(messages: list[dict]):
    """The next step of a scripted agent run: which request (the first person's turn), and how
    many steps were taken (the model's earlier turns) pick it; each tool's result (or the
    person's answer) is handed to the step functions, newest last."""
    request = messages[1]["content"]
    taken = sum(1 for turn in messages[2:] if turn["role"] == "assistant")
    results = [_told(turn["content"]) for turn in messages[2:] if turn["role"] == "user"]
    for pattern, steps in AGENT_SCRIPTS:
        said = pattern.search(request)
        if said:
            return steps[min(taken, len(steps) - 1)](said, results)
    return {"final": f"(test model) no tools needed for: {request}"}


def _told(content: str) -> str:
    """What a tool returned or the person answered, from the turn that tells the model."""
    if content.startswith("Result of "):
        return content.split("\n", 1)[1]
    if content.startswith("The person answered: "):
        return content.removeprefix("The person answered: ")
    return content
