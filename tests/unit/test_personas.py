"""Personas as plain classes: the rules in order, auto mode with the scripted fake model,
bad configuration, and the allow-list at routing and at execution."""

from __future__ import annotations

import pytest

from capabilities.cognition.chat import FLORA_PROMPT, LIMITS, SYSTEM_PROMPT, chat_prompt
from capabilities.cognition.intent_router import IntentRouter
from capabilities.cognition.personas import PersonaBook, PersonaChoice, choice_of, task_meta
from capabilities.llm import FunctionLLM, LLMUnavailable, ScriptedLLM
from capabilities.routing.task_router import TaskRouter
from config import ConfigError, load_config
from tests.support.fake_llm import respond

CODER = {"name": "coder", "description": "programming questions", "prompt": "You are Coder. You write code.",
         "capabilities": ["http_request"], "model": "qwen2.5-coder-0.5b",
         "rules": [{"keywords": ["python", "stack trace"]}, {"regex": r"\bSQL\b"}]}
WRITER = {"name": "writer", "description": "stories and poems", "prompt": "You are Writer. You write prose.",
          "capabilities": [], "rules": [{"keywords": ["poem"], "channel": "telegram"}]}
BOSS = {"name": "boss", "prompt": "You are Boss. You decide.", "rules": [{"user": "alice"}]}
TEMPLATE = "You are a specialist in {specialty}. Be exact."


def book(**personas) -> PersonaBook:
    config = load_config({"personas": {"roster": [CODER, WRITER, BOSS], **personas}}, env={})
    return PersonaBook.from_config(config)


# -- rules ---------------------------------------------------------------------------------
def test_a_keyword_rule_chooses_its_persona_and_names_the_rule():
    chosen = book().choose("why does my Python script fail?", user_id="bob")
    assert (chosen.name, chosen.how, chosen.rule) == ("coder", "rule", "coder.rules[0]")
    assert chosen.prompt == CODER["prompt"] and chosen.capabilities == ("http_request",)


def test_keywords_match_whole_words_only():
    assert book().by_rules("a pythonic idea", user_id="bob") is None
    assert book().by_rules("here is the stack   trace".replace("   ", " "), user_id="bob").name == "coder"


def test_a_regex_rule_is_searched_case_insensitively():
    chosen = book().choose("write me some sql please", user_id="bob")
    assert (chosen.name, chosen.rule) == ("coder", "coder.rules[1]")


def test_every_condition_of_a_rule_must_hold():
    assert book().by_rules("a poem about rain", channel="cli", user_id="bob") is None
    assert book().by_rules("a poem about rain", channel="telegram:12345", user_id="bob").name == "writer"


def test_channel_kind_matches_every_conversation_of_it_and_a_full_channel_only_that_one():
    pinned = load_config({"personas": {"roster": [{"name": "tg", "prompt": "x", "rules": [
        {"channel": "telegram:1"}]}]}}, env={})
    personas = PersonaBook.from_config(pinned)
    assert personas.by_rules("hi", channel="telegram:1").name == "tg"
    assert personas.by_rules("hi", channel="telegram:2") is None
    assert personas.by_rules("hi", channel="telegram") is None


def test_a_user_rule_matches_that_user_only():
    assert book().choose("hello", user_id="alice").name == "boss"
    assert book().choose("hello", user_id="bob").name == "flora"


def test_rules_are_evaluated_in_order_first_match_wins():
    # alice's python question matches coder (listed first) and boss: coder wins
    assert book().choose("python help", user_id="alice").name == "coder"
    reordered = load_config({"personas": {"roster": [BOSS, CODER]}}, env={})
    assert PersonaBook.from_config(reordered).choose("python help", user_id="alice").name == "boss"


def test_no_rule_matching_gives_the_default_persona():
    chosen = book().choose("what a nice day", user_id="bob")
    assert (chosen.name, chosen.how, chosen.prompt, chosen.allowed) == ("flora", "default", FLORA_PROMPT, None)
    named = book(default="writer").choose("what a nice day", user_id="bob")
    assert (named.name, named.how) == ("writer", "default")


def test_without_personas_nothing_is_chosen():
    personas = PersonaBook.from_config(load_config({}, env={}))
    assert not personas.enabled and personas.choose("python", user_id="alice") is None


# -- auto ------------------------------------------------------------------------------------
def test_auto_mode_leaves_an_unmatched_message_to_the_model_but_rules_still_come_first():
    personas = book(auto=True)
    assert personas.choose("what a nice day", user_id="bob") is None
    assert personas.choose("python help", user_id="bob").how == "rule"


def test_auto_pick_is_one_constrained_call_with_the_personas_as_an_enum():
    llm = ScriptedLLM([{"persona": "writer"}])
    chosen = book(auto=True).pick(llm, "compose a sonnet about autumn")
    assert (chosen.name, chosen.how, chosen.prompt) == ("writer", "auto", WRITER["prompt"])
    (messages, kwargs), = llm.calls
    assert kwargs["json_schema"]["properties"]["persona"]["enum"] == ["coder", "writer", "boss", "flora"]
    assert "- writer: stories and poems" in messages[0]["content"]
    assert "- boss: You are Boss." in messages[0]["content"]  # no description: its prompt's first sentence
    assert messages[-1]["content"].endswith("Message: compose a sonnet about autumn")


def test_auto_pick_with_the_scripted_fake_model():
    llm = FunctionLLM(respond)
    assert book(auto=True).pick(llm, "could the writer help me here?").name == "writer"
    assert book(auto=True).pick(llm, "something else entirely").name == "flora"


def test_auto_pick_composes_a_specialist_from_the_template():
    chosen = book(auto=True, template=TEMPLATE).pick(FunctionLLM(respond), "I need an expert in tax law.")
    assert (chosen.name, chosen.how, chosen.specialty) == ("specialist", "template", "tax law")
    assert chosen.prompt == "You are a specialist in tax law. Be exact."
    assert chosen.event_data() == {"persona": "specialist", "how": "template", "specialty": "tax law"}


def test_a_specialist_without_a_specialty_is_the_default():
    chosen = book(auto=True, template=TEMPLATE).pick(ScriptedLLM([{"persona": "specialist"}]), "hm")
    assert (chosen.name, chosen.how) == ("flora", "default")


@pytest.mark.parametrize("reply", [LLMUnavailable("down"), {"persona": "nobody"}, "not json"])
def test_a_failed_or_unusable_pick_falls_back_to_the_default(reply):
    chosen = book(auto=True).pick(ScriptedLLM([reply]), "anything")
    assert (chosen.name, chosen.how) == ("flora", "default")


def test_no_model_means_the_default():
    assert book(auto=True).pick(None, "anything").how == "default"


# -- the choice on the wire --------------------------------------------------------------------
def test_a_choice_survives_the_trip_through_a_message():
    chosen = book().choose("python", user_id="bob")
    assert choice_of({"persona": chosen.to_dict()}) == chosen
    assert choice_of({}) is None
    assert task_meta(chosen) == {"persona": "coder", "allowed_capabilities": ["http_request"]}
    assert task_meta(book().default()) == {"persona": "flora"}


@pytest.mark.parametrize("bad, field", [("coder", "object"), ({"name": "x", "prompt": "p"}, "persona.how"),
                                        ({"name": "x", "prompt": "p", "how": "magic"}, "persona.how"),
                                        ({"name": "x", "prompt": "p", "how": "rule", "capabilities": "all"},
                                         "persona.capabilities")])
def test_a_malformed_choice_is_refused_naming_the_field(bad, field):
    with pytest.raises(ValueError, match=field):
        PersonaChoice.from_dict(bad)


# -- configuration ----------------------------------------------------------------------------
@pytest.mark.parametrize("personas, key", [
    ({"roster": [{**CODER, "model": "gpt-9"}]}, "personas.roster.0.model"),
    ({"roster": [{**CODER, "rules": [{"regex": "(unclosed"}]}]}, "personas.roster.0.rules.0.regex"),
    ({"roster": [CODER, {**WRITER, "name": "coder"}]}, "personas.roster"),
    ({"roster": [CODER], "default": "nobody"}, "default"),
    ({"roster": [{**CODER, "rules": [{}]}]}, "personas.roster.0.rules.0"),
    ({"roster": [{**CODER, "rules": [{"keywords": [" "]}]}]}, "personas.roster.0.rules.0.keywords"),
    ({"template": "no placeholder"}, "personas.template"),
    ({"template": "{specialty} and {other}"}, "personas.template"),
    ({"roster": [{**CODER, "name": "specialist"}], "template": TEMPLATE}, "specialist"),
    ({"roster": [{**CODER, "name": "has space"}]}, "personas.roster.0.name"),
])
def test_bad_persona_configuration_fails_at_start_naming_the_key(personas, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config({"personas": personas}, env={})


def test_personas_are_not_the_expert_panel():
    config = load_config({"personas": {"roster": [CODER]}}, env={})
    assert [p.name for p in config.experts.personas] == ["analyst", "practitioner", "critic"]


def test_an_allow_list_naming_no_installed_capability_fails_at_start(tmp_path):
    from init_plugins import build_registry

    config = load_config({"data_dir": str(tmp_path), "llm": {"backend": "none"}, "memory": {"enabled": False},
                          "personas": {"roster": [{**CODER, "capabilities": ["http_request", "htp_request"]}]}},
                         env={})
    with pytest.raises(ConfigError, match=r"personas\.roster\.0\.capabilities: .*'htp_request'"):
        build_registry(config)


# -- the persona's prompt and allow-list ---------------------------------------------------------
def test_a_persona_prompt_is_the_chat_system_prompt_and_keeps_the_limits():
    system = chat_prompt("hi", "en", [], persona_prompt=CODER["prompt"])[0]["content"]
    assert system == CODER["prompt"] + " " + LIMITS
    assert chat_prompt("hi", "en", [], persona_prompt=FLORA_PROMPT)[0]["content"] == SYSTEM_PROMPT
    assert chat_prompt("hi", "en", [])[0]["content"] == SYSTEM_PROMPT


def test_routing_within_an_allow_list_never_picks_another_capability(tmp_path):
    from init_plugins import build_registry

    config = load_config({"data_dir": str(tmp_path), "llm": {"backend": "none"}, "memory": {"enabled": False},
                          "capabilities": {"plugin_modules": ["tests.support.sample_plugins"]}}, env={})
    registry = build_registry(config)
    router = TaskRouter(registry)
    asked = "please add numbers a=2 b=3"
    assert router.confident(asked).spec.name == "add_numbers"
    limited = router.within(["http_request"])
    assert [s.name for s in limited.routable()] == ["http_request"]
    assert limited.confident(asked) is None and limited.rank(asked) == []
    intents = IntentRouter(router).within(["http_request"])
    assert intents.decide_by_rules(asked) is None
    assert intents.decide_by_rules(asked, "add_numbers") is None  # even when chosen by name
    assert IntentRouter(router).within(None).decide_by_rules(asked).capability == "add_numbers"
    # the model is offered only the allowed capabilities
    llm = ScriptedLLM([{"route": "chat"}])
    IntentRouter(router, llm).within(["http_request"]).classify("something vague to do")
    enum = llm.calls[0][1]["json_schema"]["properties"]["route"]["enum"]
    assert "http_request" in enum and "add_numbers" not in enum


# -- execution ---------------------------------------------------------------------------------
def test_execution_refuses_a_capability_outside_the_tasks_allow_list_and_hands_the_list_on(tmp_path):
    from capabilities.base import capability
    from capability_actors.task_execution_service import TaskExecutionService
    from common import messages as m
    from common.tasks.models import TaskRecord
    from common.tasks.store import open_store
    from events.event_bus import EventBus
    from init_plugins import build_registry

    config = load_config({"data_dir": str(tmp_path), "llm": {"backend": "none"}, "memory": {"enabled": False},
                          "capabilities": {"plugin_modules": ["tests.support.sample_plugins"]}}, env={})
    seen: list[dict] = []

    @capability(name="peek_context", description="Report what the task may use.",
                parameters={"type": "object", "properties": {}})
    def peek_context(context) -> dict:
        seen.append(dict(context.meta))
        return {"ok": True}

    registry = build_registry(config)
    registry.register_capability(peek_context)
    store = open_store(config)
    try:
        service = TaskExecutionService(store=store, events=EventBus(store), registry=registry, config=config)
        meta = {"persona": "coder", "allowed_capabilities": ["peek_context"]}
        for task_id, name, parameters in (("task_refused", "add_numbers", {"a": 1, "b": 2}),
                                          ("task_allowed", "peek_context", {})):
            store.create_task(TaskRecord(task_id=task_id, tenant_id="default", user_id="u", content="x",
                                         capability=name, parameters=parameters, meta=meta))
        refused = service.execute(m.execute(task_id="task_refused", tenant_id="default", user_id="u",
                                            capability="add_numbers", parameters={}))
        assert (refused["ok"], refused["error_type"]) == (False, "forbidden")
        assert refused["error"] == "The persona 'coder' may not use 'add_numbers'; it may use: peek_context."
        ran = service.execute(m.execute(task_id="task_allowed", tenant_id="default", user_id="u",
                                        capability="peek_context", parameters={}))
        assert ran["ok"] is True and seen == [{"allowed_capabilities": ["peek_context"]}]
    finally:
        store.close()


def test_a_persona_with_a_model_of_its_own_gets_a_host_and_talks_to_it():
    from capabilities.llm import OpenAICompatibleLLM, persona_llm, persona_models

    local = {"backend": "local", "model": "qwen2.5-coder-1.5b", "understanding_model": "qwen2.5-coder-0.5b",
             "persona_host_urls": {"smollm2-135m": "http://127.0.0.1:9/v1"},
             "understanding_host_url": "http://127.0.0.1:8/v1"}
    assert persona_models(local, ["smollm2-135m", "", "qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b",
                                  "smollm2-135m"]) == ["smollm2-135m"]
    assert persona_models({**local, "backend": "openai"}, ["smollm2-135m"]) == []
    own = persona_llm(local, "smollm2-135m")
    assert isinstance(own, OpenAICompatibleLLM)
    assert persona_llm(local, "qwen2.5-coder-1.5b") is None  # the chat model itself
    assert persona_llm(local, "") is None
    assert persona_llm({**local, "backend": "openai"}, "smollm2-135m") is None  # ignored off backend local


def test_the_persona_prompt_and_model_write_the_chat_reply(tmp_path):
    from capability_actors.task_execution_service import TaskExecutionService
    from common import messages as m
    from common.tasks.store import open_store
    from events.event_bus import EventBus
    from init_plugins import build_registry

    config = load_config({"data_dir": str(tmp_path), "llm": {"backend": "none"}, "memory": {"enabled": False},
                          "personas": {"roster": [CODER], "auto": True}}, env={})
    chat_model, understanding = ScriptedLLM([]), FunctionLLM(respond)
    coder_model = ScriptedLLM(["print('hi')", "a joke"])
    store = open_store(config)
    try:
        service = TaskExecutionService(store=store, events=EventBus(store), registry=build_registry(config),
                                       config=config, llm=chat_model, understanding_llm=understanding,
                                       persona_llms={"qwen2.5-coder-0.5b": coder_model}.get)
        persona = book().choose("python", user_id="u").to_dict()
        result = service.analyze(m.analyze(task_id="t1", tenant_id="default", user_id="u", content="tell me a joke",
                                           persona=persona))
        assert result["message"] == "print('hi')" and "persona" not in result  # chosen upstream: not repeated
        (messages, _), = coder_model.calls
        assert messages[0]["content"] == CODER["prompt"] + " " + LIMITS and chat_model.calls == []
        # auto: the step picks first, says so in its result and in the events
        picked = service.analyze(m.analyze(task_id="t2", tenant_id="default", user_id="u",
                                           content="ask the coder for a joke", pick_persona=True))
        assert picked["persona"]["name"] == "coder" and picked["persona"]["how"] == "auto"
        assert picked["message"] == "a joke" and coder_model.remaining == 0
        events = [e for e in store.events("default", task_id="t2") if e.event_type == "PERSONA_SELECTED"]
        assert [e.data["persona"] for e in events] == ["coder"]
    finally:
        store.close()


def test_the_cli_shows_a_persona_other_than_flora_as_a_tag():
    from common import messages as m

    assert m.reply_text(m.chat_reply(msg_id="m", message="hello", persona="coder")) == "[coder] hello"
    assert m.reply_text(m.chat_reply(msg_id="m", message="hello", persona="flora")) == "hello"
    assert m.reply_text(m.chat_reply(msg_id="m", message="hello")) == "hello"


def test_a_persona_model_that_is_not_installed_fails_at_start_naming_the_key(tmp_path):
    from agents.node import _persona_host

    config = load_config({"data_dir": str(tmp_path), "personas": {"roster": [
        WRITER, {**CODER, "model": "gemma3-270m"}]}}, env={})
    settings = {**config.llm.model_dump(), "data_dir": str(tmp_path)}
    with pytest.raises(ConfigError, match=r"^personas\.roster\.1\.model: .*pip install"):
        _persona_host(config, settings, "gemma3-270m")
