"""The MCP fallback in routing, on plain classes: MCP tools are used when nothing installed
fits and the words clearly ask for one; installed capabilities win; conversation stays
conversation. The tools come from a catalogue as the servers list them (no server runs)."""

from __future__ import annotations

import pytest

from capabilities.agent.loop import ToolBox
from capabilities.cognition.intent_router import IntentRouter, prompt
from capabilities.llm.fake import ScriptedLLM
from capabilities.mcp.tools import MCPTools, approval, capability_name, keywords
from capabilities.routing.task_router import TaskRouter
from config import load_config
from init_plugins import build_registry

TIME_SCHEMA = {"type": "object", "properties": {"timezone": {"type": "string", "description": "IANA timezone name"}},
               "required": ["timezone"]}
CATALOGUE = {"servers": {
    "time": {"error": None, "tools": [
        {"name": "get_current_time", "description": "Get current time in a specific timezone",
         "input_schema": TIME_SCHEMA, "annotations": {"readOnlyHint": True}},
        {"name": "convert_time", "description": "Convert time between timezones",
         "input_schema": {"type": "object", "properties": {"time": {"type": "string"}}, "required": ["time"]},
         "annotations": {"readOnlyHint": True}}]},
    "fetch": {"error": None, "tools": [
        {"name": "fetch", "description": "Fetches a URL from the internet and extracts its contents as markdown.",
         "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
         "annotations": {"readOnlyHint": True, "openWorldHint": True}}]},
    "notes": {"error": None, "tools": [
        {"name": "delete_note", "description": "Delete a note from the notebook for good.",
         "input_schema": {"type": "object", "properties": {"note_id": {"type": "string"}}, "required": ["note_id"]},
         "annotations": {"readOnlyHint": False, "destructiveHint": True}}]},
}}


@pytest.fixture(scope="module")
def registry():
    config = load_config({"llm": {"backend": "none"}, "memory": {"enabled": False}, "mcp": {"servers": {
        "time": {"command": "python"}, "fetch": {"command": "python"}, "notes": {"command": "python"}}}}, env={})
    config.mcp.enabled = False  # the registry without MCP, then the catalogue's tools added by hand
    built = build_registry(config)
    tools = MCPTools(config, CATALOGUE)
    built.register("mcp", tools)
    for spec in tools.specs():
        built.register_capability(spec)
    return built


def understanding(registry, *replies) -> IntentRouter:
    return IntentRouter(TaskRouter(registry), ScriptedLLM([{"route": r} for r in replies]) if replies else None)


def test_names_keep_letters_digits_underscores_and_dots():
    assert capability_name("time", "get_current_time") == "time.get_current_time"
    assert capability_name("notes", "note-count") == "notes.note_count"
    assert capability_name("fs", "files.read all") == "fs.files.read_all"
    assert capability_name("x", "--") == "x.tool"


def test_keywords_come_from_the_name_first_then_the_description():
    named, described = keywords("time", "get_current_time", None, "Get current time in a specific timezone")
    assert named == ("current", "time") and described == ("timezone",)
    assert keywords("gh", "createPullRequest", "Create PR", "")[0] == ("create", "pull", "request")


@pytest.mark.parametrize("approve, annotations, expected", [
    (None, {"readOnlyHint": True}, False),
    (None, {"readOnlyHint": True, "destructiveHint": True}, True),
    (None, {"readOnlyHint": False, "destructiveHint": False}, True),
    (None, {}, True),  # MCP's defaults: not read-only
    ("none", {}, False),
    ("all", {"readOnlyHint": True}, True),
    (["delete_note"], {"readOnlyHint": True}, True),
    (["notes.delete_note"], {}, True),
    (["other"], {"destructiveHint": True}, False),
])
def test_approval_from_config_or_from_the_annotations(approve, annotations, expected):
    assert approval(approve, "delete_note", "notes.delete_note", annotations) is expected


def test_mcp_tools_take_no_part_in_the_ranking_or_the_understanding_prompt(registry):
    router = TaskRouter(registry)
    assert not [s for s in router.routable() if "." in s.name]
    assert "time.get_current_time" not in prompt(router.routable(), "hi")[0]["content"]
    assert router.find("time.get_current_time").name == "time.get_current_time"


@pytest.mark.parametrize("text, capability", [
    ("what is the current time in Tokyo?", "time.get_current_time"),
    ("convert time 15:00 from Warsaw to Tokyo", "time.convert_time"),
    ("delete the note n1 from my notebook", "notes.delete_note"),
    ("use notes.delete_note for n2", "notes.delete_note"),
])
def test_a_request_nothing_installed_fits_goes_to_the_mcp_tool_it_clearly_names(registry, text, capability):
    found = TaskRouter(registry).fallback(text)
    assert found is not None and found.spec.name == capability
    intent = understanding(registry).decide_by_rules(text)
    # its values are in the request, but not as name=value: the agent reads them ("Tokyo" is
    # Asia/Tokyo, "n1" the note's id) and calls the tool, which it is offered
    assert (intent.kind in ("task", "query"), intent.capability) == (True, "agent")
    assert capability in [s.name for s in ToolBox.from_registry(registry).tools]


def test_values_stated_in_the_request_become_the_tools_arguments(registry):
    intent = understanding(registry).decide_by_rules("what is the current time, timezone=Asia/Tokyo")
    assert intent.capability == "time.get_current_time" and intent.parameters == {"timezone": "Asia/Tokyo"}


@pytest.mark.parametrize("text", ["time flies", "a note for you", "what's 17 times 23?", "fetch me a coffee"])
def test_a_single_word_in_common_is_not_enough(registry, text):
    assert TaskRouter(registry).fallback(text) is None


def test_an_installed_capability_wins_over_an_mcp_tool(registry):
    intent = understanding(registry).decide_by_rules("fetch the web page https://example.com/page with http_request")
    assert intent.capability == "http_request"


@pytest.mark.parametrize("text", ["Thanks a lot, that was helpful", "Good morning!", "tell me a joke about time travel",
                                  "Why is the sky blue?", "what's 17 times 23?"])
def test_conversation_stays_conversation(registry, text):
    assert understanding(registry, "chat").classify(text).kind == "chat"


def test_a_reading_of_unsupported_becomes_the_mcp_tool_that_clearly_does_it(registry):
    ir = understanding(registry, "unsupported")
    ir_plain = IntentRouter(_NoFallbackFirst(TaskRouter(registry)), ScriptedLLM([{"route": "unsupported"}]))
    assert ir_plain.classify("please tell me the current time, timezone=Europe/Lisbon").capability \
        == "time.get_current_time"
    assert ir_plain.classify("please tell me the current time in Lisbon").capability == "agent"  # it reads the zone
    assert ir.classify("帮我查一下订单 A-1029 的物流状态").kind == "unsupported"


class _NoFallbackFirst:
    """A TaskRouter whose fallback answers only its second question, so the model is asked
    first and its "unsupported" is what turns into the tool."""

    def __init__(self, router: TaskRouter):
        self._router = router
        self._asked = 0

    def fallback(self, text):
        self._asked += 1
        return self._router.fallback(text) if self._asked > 1 else None

    def __getattr__(self, name):
        return getattr(self._router, name)


def test_a_tool_argument_named_context_reaches_the_tool(registry):
    from capabilities.base import _accepts_context

    config = registry.get_capability("mcp")._config
    listed = {"servers": {"time": {"error": None, "tools": [
        {"name": "summarise", "description": "", "input_schema": {
            "type": "object", "properties": {"context": {"type": "string"}}}}]}}}
    [spec] = MCPTools(config, listed).specs()
    assert not _accepts_context(spec.handler)  # Flora's ExecutionContext would overwrite the argument
    assert _accepts_context(registry.get_executable("time.get_current_time").handler)
