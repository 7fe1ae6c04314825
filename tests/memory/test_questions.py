"""QuestionWriter: the questions a fact answers, from one schema-constrained model call."""

from __future__ import annotations

from capabilities.llm.fake import ScriptedLLM
from capabilities.memory.questions import QuestionWriter, questions_schema


def test_the_questions_come_english_first_without_repeats_or_the_fact_itself():
    llm = ScriptedLLM([{"english_questions": ["What is my dog's name?", "What  breed is my dog?"],
                        "chinese_questions": ["我的狗叫什么？", "What is my dog's name?"]}])
    writer = QuestionWriter(llm)
    assert writer.questions("My dog is a golden retriever called Biscuit") == (
        "What is my dog's name?", "What breed is my dog?", "我的狗叫什么？")
    messages, kwargs = llm.calls[0]
    assert kwargs["json_schema"] == questions_schema(2) and kwargs["temperature"] == 0.0
    assert "My dog is a golden retriever called Biscuit" in messages[-1]["content"]


def test_one_question_per_language_is_asked_for_when_configured():
    llm = ScriptedLLM([{"english_questions": ["When do I swim?"], "chinese_questions": ["我什么时候游泳？"]}])
    assert QuestionWriter(llm, per_language=1).questions("I swim on Wednesdays") == ("When do I swim?", "我什么时候游泳？")
    schema = llm.calls[0][1]["json_schema"]["properties"]["english_questions"]
    assert schema["minItems"] == schema["maxItems"] == 1


def test_a_refused_reply_gives_no_questions_and_is_not_retried():
    for reply in ("not JSON at all", {"english_questions": ["only one"], "chinese_questions": []}):
        llm = ScriptedLLM([reply])
        assert QuestionWriter(llm).questions("I drink my coffee black") == ()
        assert len(llm.calls) == 1


def test_an_empty_fact_asks_nothing():
    llm = ScriptedLLM([])
    assert QuestionWriter(llm).questions("   ") == ()
    assert llm.calls == []
