"""ScriptedLLM, FunctionLLM and complete_json: the fakes behave like a real LLM."""

from __future__ import annotations

import pytest

from capabilities.llm import (
    LLM,
    FunctionLLM,
    LLMOutputError,
    LLMReply,
    LLMScriptExhausted,
    LLMUnavailable,
    ScriptedLLM,
    complete_json,
)

USER = [{"role": "user", "content": "hello there"}]
SCHEMA = {
    "type": "object",
    "properties": {"intent": {"type": "string", "enum": ["task", "chat"]}},
    "required": ["intent"],
}


def test_fakes_implement_the_llm_protocol():
    assert isinstance(ScriptedLLM([]), LLM)
    assert isinstance(FunctionLLM(lambda m, s: ""), LLM)


def test_scripted_llm_replays_replies_in_order_and_serializes_dicts():
    llm = ScriptedLLM(["first", {"intent": "chat"}, LLMReply("third", model="m", completion_tokens=1)])
    assert llm.complete(USER).text == "first"
    assert llm.complete(USER).text == '{"intent": "chat"}'
    assert llm.complete(USER) == LLMReply("third", model="m", completion_tokens=1)
    assert llm.remaining == 0


def test_scripted_llm_raises_when_the_script_runs_out():
    llm = ScriptedLLM(["only"])
    llm.complete(USER)
    with pytest.raises(LLMScriptExhausted, match="had 1 replies"):
        llm.complete(USER)


def test_scripted_llm_raises_a_scripted_exception():
    llm = ScriptedLLM([LLMUnavailable("down"), "after"])
    with pytest.raises(LLMUnavailable, match="down"):
        llm.complete(USER)
    assert llm.complete(USER).text == "after"


def test_scripted_llm_records_messages_and_arguments_of_every_call():
    llm = ScriptedLLM(["a", "b"])
    messages = [{"role": "user", "content": "x"}]
    llm.complete(messages, json_schema=SCHEMA, max_tokens=9, stop=["\n"])
    messages.append({"role": "assistant", "content": "mutated later"})
    list(llm.stream(USER, temperature=0.5))
    assert llm.calls[0] == (
        [{"role": "user", "content": "x"}],
        {"json_schema": SCHEMA, "max_tokens": 9, "temperature": 0.0, "stop": ["\n"]},
    )
    assert llm.calls[1] == (USER, {"max_tokens": 256, "temperature": 0.5, "stop": None, "stream": True})


def test_fake_stream_yields_the_reply_in_several_chunks():
    chunks = list(ScriptedLLM(["a reply long enough to split"]).stream(USER))
    assert len(chunks) > 1
    assert "".join(chunks) == "a reply long enough to split"


def test_fake_stream_is_lazy_like_the_real_adapters():
    llm = ScriptedLLM(["x"])
    stream = llm.stream(USER)
    assert llm.calls == [] and llm.remaining == 1
    assert list(stream) == ["x"]


def test_fakes_cut_replies_at_stop_strings_like_a_real_backend():
    llm = ScriptedLLM(["line one\nline two", "abc"])
    assert llm.complete(USER, stop=["\n"]).text == "line one"
    assert "".join(llm.stream(USER, stop=["c"])) == "ab"


def test_function_llm_computes_replies_from_the_prompt_and_schema():
    def echo(messages, json_schema):
        if json_schema is not None:
            return {"intent": "task"}
        return messages[-1]["content"].upper()

    llm = FunctionLLM(echo)
    assert llm.complete(USER).text == "HELLO THERE"
    assert complete_json(llm, USER, SCHEMA) == {"intent": "task"}
    assert "".join(llm.stream(USER)) == "HELLO THERE"
    assert llm.name == "function:test_function_llm_computes_replies_from_the_prompt_and_schema.<locals>.echo"
    assert len(llm.calls) == 3


def test_complete_json_returns_the_validated_object_and_passes_the_schema():
    llm = ScriptedLLM([{"intent": "chat"}])
    assert complete_json(llm, USER, SCHEMA, max_tokens=40) == {"intent": "chat"}
    assert llm.calls[0][1]["json_schema"] == SCHEMA
    assert llm.calls[0][1]["max_tokens"] == 40


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("not json at all", "not JSON"),
        ("[1, 2]", "not an object"),
        ({"intent": "dance"}, "fails the schema at intent"),
        ({}, "fails the schema at \\(root\\)"),
    ],
)
def test_complete_json_raises_output_error_on_a_bad_reply(reply, problem):
    with pytest.raises(LLMOutputError, match=problem) as caught:
        complete_json(ScriptedLLM([reply]), USER, SCHEMA)
    assert caught.value.text
