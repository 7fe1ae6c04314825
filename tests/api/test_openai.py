"""The official ``openai`` client against ``/v1/chat/completions`` and ``/v1/models``,
plain and streaming; a paused task's question comes back as the assistant's message and
the next user message answers it."""

from __future__ import annotations

import httpx
import openai
import pytest


@pytest.fixture
def client(api_server):
    with openai.OpenAI(base_url=api_server.url + "/v1", api_key=api_server.key, max_retries=0, timeout=30) as c:
        yield c


def chat(client, user: str, text: str, **kwargs):
    return client.chat.completions.create(model="flora", user=user, messages=[{"role": "user", "content": text}],
                                          **kwargs)


def test_models_lists_flora(client):
    assert [model.id for model in client.models.list()] == ["flora"]


def test_a_chat_message_gets_an_assistant_message(client, user):
    reply = chat(client, user, "hello")
    choice = reply.choices[0]
    assert choice.message.role == "assistant" and choice.message.content and choice.finish_reason == "stop"
    assert reply.model == "flora" and reply.usage.total_tokens > 0
    assert reply.model_extra["flora"]["message_type"] == "chat_reply"


def test_a_paused_task_asks_as_the_assistant_and_the_next_message_answers(client, user):
    asked = chat(client, user, "add numbers a=2")
    question = asked.choices[0].message.content
    assert "b" in question and "waiting for your answer" in question
    history = [{"role": "user", "content": "add numbers a=2"}, {"role": "assistant", "content": question},
               {"role": "user", "content": "3"}]
    done = client.chat.completions.create(model="flora", user=user, messages=history)
    assert "5" in done.choices[0].message.content
    assert done.model_extra["flora"]["result"] == {"sum": 5}


def test_streaming_sends_the_role_then_pieces_that_join_to_the_whole_reply(client, user):
    said = "hello there, a fine morning for a long walk along the river"
    whole = chat(client, user, said).choices[0].message.content
    pieces, roles, finishes = [], [], []
    for chunk in chat(client, user, said, stream=True):
        assert chunk.object == "chat.completion.chunk"
        delta = chunk.choices[0].delta
        roles += [delta.role] if delta.role else []
        pieces += [delta.content] if delta.content else []
        finishes += [chunk.choices[0].finish_reason] if chunk.choices[0].finish_reason else []
    assert roles == ["assistant"] and finishes == ["stop"]
    assert len(pieces) > 1 and "".join(pieces) == whole


def test_a_streamed_pause_and_answer(client, user):
    text = "".join(c.choices[0].delta.content or "" for c in chat(client, user, "add numbers a=4", stream=True))
    assert "b" in text
    text = "".join(c.choices[0].delta.content or "" for c in chat(client, user, "b=4", stream=True))
    assert "8" in text


def test_content_parts_are_read_as_text(client, user):
    reply = client.chat.completions.create(model="flora", user=user, messages=[
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "add numbers a=1 b=1"}]}])
    assert reply.model_extra["flora"]["result"] == {"sum": 2}


def test_a_wrong_key_is_an_authentication_error(api_server):
    with openai.OpenAI(base_url=api_server.url + "/v1", api_key="sk-wrong", max_retries=0) as bad:
        with pytest.raises(openai.AuthenticationError) as caught:
            bad.models.list()
    assert caught.value.body["type"] == "unauthorized"


def test_an_unknown_model_or_no_user_message_is_a_clear_4xx(client, api_server):
    with pytest.raises(openai.UnprocessableEntityError) as caught:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert "unknown model" in caught.value.body["message"]
    with pytest.raises(openai.UnprocessableEntityError):
        client.chat.completions.create(model="flora", messages=[{"role": "system", "content": "hi"}])
    raw = httpx.post(api_server.url + "/v1/chat/completions", headers={"Authorization": f"Bearer {api_server.key}"},
                     json={"model": "flora", "messages": "hello"})
    assert raw.status_code == 422 and raw.json()["error"]["field"] == "messages"
