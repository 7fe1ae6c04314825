"""Native function calling (OpenAI ``tools``/``tool_calls``) against a real HTTP server on
127.0.0.1, and the agent's step read from it."""

from __future__ import annotations

import json

from capabilities.agent.loop import Budgets, ToolBox, propose
from capabilities.agent.native import api_name
from capabilities.agent.transcript import Transcript
from capabilities.base import CapabilitySpec
from capabilities.llm import OpenAICompatibleLLM

from .chat_server import Answer, completion

TIME = CapabilitySpec(name="time.get_current_time", description="The time in a zone.", handler=lambda **_: None,
                      parameters={"type": "object", "properties": {"timezone": {"type": "string"}},
                                  "required": ["timezone"], "additionalProperties": False})


def calling(name: str, arguments: str) -> Answer:
    return Answer(body={"model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}]}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 9}})


def client(server) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(server.base_url, model="m", backoff_s=0.001)


def test_complete_tools_offers_functions_and_reads_the_call(chat_server):
    chat_server.answers.append(calling("time__get_current_time", '{"timezone": "Asia/Tokyo"}'))
    reply = client(chat_server).complete_tools([{"role": "user", "content": "time in Tokyo?"}],
                                               [{"name": "time__get_current_time", "description": "d",
                                                 "parameters": TIME.parameters}])
    assert reply.calls == [("time__get_current_time", '{"timezone": "Asia/Tokyo"}')]
    assert (reply.prompt_tokens, reply.completion_tokens) == (50, 9)
    sent = chat_server.requests[0]
    assert sent["tool_choice"] == "auto" and sent["tools"][0]["type"] == "function"
    assert sent["tools"][0]["function"]["name"] == "time__get_current_time" and "response_format" not in sent


def test_the_agents_native_step_maps_the_name_back_and_checks_the_arguments(chat_server):
    tools = ToolBox([TIME])
    chat_server.answers += [calling(api_name(TIME.name), '{"timezone": "Asia/Tokyo"}'),
                            calling(api_name(TIME.name), '{"zone": 9}'),
                            calling("ask_person", '{"question": "Which city?"}'),
                            calling(api_name(TIME.name), "not json"),
                            completion("It is 9 o'clock in Tokyo.")]
    asked = [propose(client(chat_server), tools, Transcript(request="time in Tokyo?"), Budgets(), native=True)
             for _ in range(5)]
    assert asked[0].step == {"tool": "time.get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}
    assert asked[0].tokens == 59
    assert asked[1].step is None and "no parameter 'zone'" in asked[1].error
    assert asked[2].step == {"ask": "Which city?"}
    assert asked[3].step is None and "not JSON" in asked[3].error
    assert asked[4].step == {"final": "It is 9 o'clock in Tokyo."}
    offered = [t["function"]["name"] for t in chat_server.requests[0]["tools"]]
    assert offered == ["time__get_current_time", "ask_person"]
    assert json.dumps(chat_server.requests[0]["messages"][0]).count("time.get_current_time") >= 1
