"""FactDistiller with scripted models: what it keeps, what it refuses, and that it never loops."""

from __future__ import annotations

import pytest

from capabilities.llm.fake import FunctionLLM, ScriptedLLM
from capabilities.memory.distill import FACTS_SCHEMA, FactDistiller


def fact(text, subject="s", kind="personal", confidence=1.0, **extra):
    return {"fact": text, "subject": subject, "kind": kind, "confidence": confidence, **extra}


def test_facts_about_the_person_come_back_with_their_source_message():
    llm = ScriptedLLM([{"facts": [fact("The person's name is Li Wei", "name", "name"),
                                  fact("Works on the billing team", "team", "work", 0.9)]}])
    out = FactDistiller(llm).distill("I'm Li Wei, I work on the billing team", "Nice to meet you, Li Wei!",
                                     message_id="m1", reply_id="r1")
    assert out.error == ""
    assert [(f.fact, f.subject, f.kind, f.confidence, f.source_message_ids) for f in out.facts] == [
        ("The person's name is Li Wei", "name", "name", 1.0, ("m1",)),
        ("Works on the billing team", "team", "work", 0.9, ("m1",))]


def test_one_call_constrained_by_the_schema_with_the_message_in_the_prompt():
    llm = ScriptedLLM([{"facts": []}])
    FactDistiller(llm).distill("我对花生过敏", "好的，记住了。", message_id="m2")
    assert len(llm.calls) == 1
    messages, kwargs = llm.calls[0]
    assert kwargs["json_schema"] == FACTS_SCHEMA
    assert "我对花生过敏" in messages[-1]["content"] and "m2" in messages[-1]["content"]


def test_chinese_facts_stay_chinese():
    llm = ScriptedLLM([{"facts": [fact("对花生过敏", "过敏")]}])
    out = FactDistiller(llm).distill("我对花生过敏", message_id="m3")
    assert out.facts[0].fact == "对花生过敏"


def test_small_talk_gives_no_facts():
    out = FactDistiller(ScriptedLLM([{"facts": []}])).distill("what's the weather tomorrow?", message_id="m4")
    assert out.facts == [] and out.error == ""


def test_an_empty_message_costs_no_model_call():
    llm = ScriptedLLM([])
    assert FactDistiller(llm).distill("   ", message_id="m5").facts == [] and llm.calls == []


def test_a_fact_copied_from_floras_reply_is_dropped():
    llm = ScriptedLLM([{"facts": [fact("The capital of France is Paris"), fact("Is going to Paris in May", "trip")]}])
    out = FactDistiller(llm).distill("I'm going to Paris in May, any tips?",
                                     "The capital of France is Paris. Enjoy your trip!", message_id="m6")
    assert [f.fact for f in out.facts] == ["Is going to Paris in May"]


def test_a_source_id_the_model_invented_is_replaced_by_the_message():
    llm = ScriptedLLM([{"facts": [fact("Likes jazz", source_message_ids=["made-up"])]}])
    assert FactDistiller(llm).distill("I like jazz", message_id="m7").facts[0].source_message_ids == ("m7",)


def test_output_that_is_not_json_gives_no_facts_and_an_error_after_one_call():
    llm = ScriptedLLM(["Sure! The person likes jazz."])
    out = FactDistiller(llm).distill("I like jazz", message_id="m8")
    assert out.facts == [] and "not JSON" in out.error and len(llm.calls) == 1


def test_output_that_breaks_the_schema_gives_no_facts_and_an_error():
    llm = FunctionLLM(lambda messages, schema: {"facts": [{"fact": "Likes jazz", "kind": "hobby"}]})
    out = FactDistiller(llm).distill("I like jazz", message_id="m9")
    assert out.facts == [] and "fails the schema" in out.error and len(llm.calls) == 1


def test_a_model_that_is_down_or_busy_raises_so_the_turn_waits_rather_than_being_refused():
    from capabilities.llm.base import LLMRequestRejected, LLMUnavailable

    with pytest.raises(LLMUnavailable, match="host down"):  # not distilled yet: nothing about the turn was refused
        FactDistiller(ScriptedLLM([LLMUnavailable("host down")])).distill("I like jazz", message_id="m10")
    out = FactDistiller(ScriptedLLM([LLMRequestRejected("too long", status_code=400)])).distill(
        "I like jazz", message_id="m11")
    assert out.facts == [] and "LLMRequestRejected: too long" in out.error  # the request itself is at fault


def test_a_fact_written_in_the_persons_first_person_is_kept_about_them():
    said = [fact("我是一名小学数学老师"), fact("我们团队在杭州"), fact("My dog is called Biscuit"),
            fact("I'm learning the cello"), fact("I keep bees")]
    out = FactDistiller(ScriptedLLM([{"facts": said}])).distill("我是一名小学数学老师 …", message_id="m9")
    assert [f.fact for f in out.facts] == ["用户是一名小学数学老师", "我们团队在杭州", "The person's dog is called Biscuit",
                                          "The person is learning the cello", "I keep bees"]


def test_a_name_the_message_never_gives_is_not_kept():
    guessed = {"facts": [fact("The person's name is Nurse", "name", "name"), fact("Works as a nurse", "job", "work")]}
    out = FactDistiller(ScriptedLLM([guessed])).distill("I work as a nurse in the night shift", message_id="m10")
    assert [f.fact for f in out.facts] == ["Works as a nurse"]
    guessed = {"facts": [fact("The person's name is John", "name", "name"), fact("Is allergic to shellfish")]}
    out = FactDistiller(ScriptedLLM([guessed])).distill("I'm allergic to shellfish", message_id="m10")
    assert [f.fact for f in out.facts] == ["Is allergic to shellfish"]  # "I'm" + a lower-case word names no one
    for said, name in (("my name is Li Wei", "Li Wei"), ("I'm Daniel, hi", "Daniel"), ("i am Tom", "Tom"),
                       ("我叫王晓明", "王晓明"), ("everyone calls me Sam", "Sam"), ("I go by Sam", "Sam")):
        out = FactDistiller(ScriptedLLM([{"facts": [fact(f"The person's name is {name}", "name", "name")]}])) \
            .distill(said, message_id="m11")
        assert [f.fact for f in out.facts] == [f"The person's name is {name}"], said


def test_a_name_the_message_never_gives_is_not_kept_whatever_kind_the_model_gave_it():
    guessed = {"facts": [fact("The person's name is unknown", "name", "personal"),
                         fact("The person's name is user", "club", "other"),
                         fact("用户的名字是用户", "身份", "personal"),
                         fact("The person's favourite football club is Arsenal", "club", "preference")]}
    out = FactDistiller(ScriptedLLM([guessed])).distill("my favourite football club is Arsenal", message_id="m12")
    assert [f.fact for f in out.facts] == ["The person's favourite football club is Arsenal"]
    kept = {"facts": [fact("The person's dog's name is Biscuit", "dog's name", "relation"),
                      fact("The person's sister is called Priya", "sister", "relation")]}
    out = FactDistiller(ScriptedLLM([kept])).distill("my dog Biscuit and my sister Priya", message_id="m13")
    assert len(out.facts) == 2  # other people's and pets' names are theirs to give


def test_the_model_is_told_which_language_to_write_the_facts_in():
    llm = ScriptedLLM([{"facts": []}, {"facts": []}])
    FactDistiller(llm).distill("我平时在家跟父母说粤语", message_id="m12")
    FactDistiller(llm).distill("I speak Portuguese at home", message_id="m13")
    assert "write the facts in Chinese" in llm.calls[0][0][-1]["content"]
    assert "write the facts in English" in llm.calls[1][0][-1]["content"]


def test_the_examples_the_model_is_shown_are_in_the_persons_language():
    # a small model writes in the language of its examples more than in the one it is told
    llm = ScriptedLLM([{"facts": []}, {"facts": []}])
    FactDistiller(llm).distill("我在深圳一家银行上班", message_id="m14")
    FactDistiller(llm).distill("I work at a bank in Shenzhen", message_id="m15")
    chinese, english = (call[0][-1]["content"].split("Examples:")[1].split("The person's message")[0]
                        for call in llm.calls)
    assert "用户名叫李伟" in chinese and "The person" not in chinese
    assert "The person's name is Li Wei" in english and "用户" not in english
