"""A revision's instruction applied to the parameters of the capability it runs again."""

from __future__ import annotations

from capabilities.base import ExecutionContext, capability, spec_of
from capabilities.llm.base import LLMError
from capabilities.llm.fake import ScriptedLLM
from capabilities.revision import revise_parameters
from examples.my_tools import convert_temperature

SPEC = spec_of(convert_temperature)
OLD = {"value": 21.5, "to": "fahrenheit"}


def test_the_model_proposes_new_values_checked_against_the_schema():
    llm = ScriptedLLM([{"value": 21.5, "to": "celsius"}])
    revision = revise_parameters(SPEC, OLD, "in celsius", llm)
    assert revision.parameters == {"value": 21.5, "to": "celsius"}
    assert revision.changes == {"to": ("fahrenheit", "celsius")}
    [(messages, kwargs)] = llm.calls
    assert "in celsius" in messages[-1]["content"] and "fahrenheit" in messages[-1]["content"]
    assert kwargs["json_schema"]["properties"] == SPEC.parameters["properties"]


def test_old_values_are_kept_without_a_model_or_when_its_answer_is_unusable():
    assert revise_parameters(SPEC, OLD, "in celsius", None).parameters == OLD
    for reply in ({"value": 21.5, "to": "kelvin"}, "not json", LLMError("the model is down")):
        revision = revise_parameters(SPEC, OLD, "in kelvin", ScriptedLLM([reply]))
        assert revision.parameters == OLD and revision.changes == {}


def test_values_the_model_leaves_out_keep_their_old_ones():
    revision = revise_parameters(SPEC, OLD, "in celsius", ScriptedLLM([{"to": "celsius", "value": 21.5}]))
    assert revision.parameters == {"value": 21.5, "to": "celsius"}


def test_invoke_runs_the_revised_parameters_and_says_what_changed():
    context = ExecutionContext(task_id="t", user_id="u", instruction="in celsius",
                               llm=ScriptedLLM([{"value": 21.5, "to": "celsius"}]))
    result = SPEC.invoke(OLD, context)
    assert result["unit"] == "celsius" and result["value"] == -5.83
    assert "to: fahrenheit → celsius" in result["message"] and "in celsius" in result["message"]


def test_a_capability_that_reads_the_instruction_gets_it_and_its_parameters_unchanged():
    @capability(name="write_note", description="Write a note.", reads_instruction=True,
                parameters={"type": "object", "properties": {"topic": {"type": "string"}}})
    def write_note(topic: str, context) -> dict:
        return {"note": f"{topic} ({context.instruction})"}

    llm = ScriptedLLM([])
    result = spec_of(write_note).invoke({"topic": "GRPO"}, ExecutionContext(task_id="t", user_id="u",
                                                                            instruction="shorter", llm=llm))
    assert result["note"] == "GRPO (shorter)" and llm.calls == []
    assert "shorter" in result["message"]


def test_without_an_instruction_nothing_is_asked_or_added():
    llm = ScriptedLLM([])
    assert SPEC.invoke(OLD, ExecutionContext(task_id="t", user_id="u", llm=llm)) == {"value": 70.7,
                                                                                    "unit": "fahrenheit"}
    assert llm.calls == []
