"""Asking the experts through ``system.ask``: routed by rules, paused for the question,
answered by the panel on the configured (deterministic) model."""

from __future__ import annotations

from tests.support.asking import ask_flora

TIMEOUT = 30


def ask(flora, user: str, content: str, **fields) -> dict:
    return ask_flora(flora, user, content, timeout=TIMEOUT, **fields)


def test_ask_the_experts_asks_for_the_question_then_answers_with_the_panel(flora, user):
    paused = ask(flora, user, "让专家们讨论一下")
    assert paused["message_type"] == "task_paused"
    assert [p["name"] for p in paused["missing_parameters"]] == ["question"]

    done = ask(flora, user, "Is Rust faster than Go?")
    assert done["message_type"] == "task_completed", done
    result = done["result"]
    assert result["strategy"] == "summary"
    assert [o["expert"] for o in result["opinions"]] == ["analyst", "practitioner", "critic"]
    # the test model echoes its last message: the moderator's prompt carries every opinion
    assert "Question: Is Rust faster than Go?" in result["answer"]
    assert all(f"[{name}]" in result["answer"] for name in ("analyst", "practitioner", "critic"))
