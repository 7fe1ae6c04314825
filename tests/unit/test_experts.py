"""ExpertPanel and the ask_experts capability, with a fake model that answers per persona."""

import pytest

from capabilities.base import CapabilityError, ExecutionContext
from capabilities.cognition.experts import ExpertPanel, NoModelError, PanelFailed, split_question
from capabilities.llm.base import LLMUnavailable
from capabilities.llm.fake import FunctionLLM
from common.i18n import answer_in
from capabilities.routing.task_router import TaskRouter
from config import ExpertsConfig, load_config
from init_plugins import build_registry

PERSONAS = [{"name": "ann", "prompt": "You are Ann.", "weight": 1.0},
            {"name": "bob", "prompt": "You are Bob.", "weight": 1.0},
            {"name": "cat", "prompt": "You are Cat.", "weight": 3.0}]


def experts(**overrides) -> ExpertsConfig:
    return ExpertsConfig(**{"personas": PERSONAS, **overrides})


def persona_of(messages) -> str:
    return messages[0]["content"].split(".")[0].removeprefix("You are ").lower()


def model(answers: dict, revised: dict | None = None, summary: str = "SUMMARY"):
    """Each persona's first answer; its answer once it has heard the others; the moderator's text."""

    def reply(messages, schema):
        if "moderator" in messages[0]["content"]:
            return summary
        who = persona_of(messages)
        heard = "The other experts answered" in messages[-1]["content"]
        said = (revised or {}).get(who, answers[who]) if heard else answers[who]
        if isinstance(said, BaseException):
            raise said
        return f"I reasoned about it.\nFinal answer: {said}"

    return FunctionLLM(reply)


def calls_of(llm, who: str) -> list[str]:
    return [messages[-1]["content"] for messages, _ in llm.calls if persona_of(messages) == who]


# -- debate rounds ---------------------------------------------------------------------
def test_later_rounds_show_each_expert_the_others_answers_but_not_its_own_as_theirs():
    llm = model({"ann": "4", "bob": "5", "cat": "4"}, revised={"bob": "4"})
    answer = ExpertPanel(llm, config=experts(rounds=2, strategy="voting")).ask("What is 2+2?")
    round2 = calls_of(llm, "bob")[1]
    assert "[ann]\nI reasoned about it.\nFinal answer: 4" in round2
    assert "[cat]" in round2 and "[bob]" not in round2.split("The other experts answered")[1]
    assert "Your previous answer:\nI reasoned about it.\nFinal answer: 5" in round2
    assert calls_of(llm, "ann")[0] == "What is 2+2?"  # round 1: the question alone
    assert [(o.expert, o.round) for o in answer.opinions] == [("ann", 1), ("bob", 1), ("cat", 1),
                                                               ("ann", 2), ("bob", 2), ("cat", 2)]
    assert answer.answer == "4" and answer.detail["votes"] == {"4": 3}  # bob was persuaded


def test_one_round_asks_each_expert_once_and_nobody_hears_the_others():
    llm = model({"ann": "a", "bob": "b", "cat": "c"})
    ExpertPanel(llm, config=experts(rounds=1, strategy="voting", tie="first")).ask("Q?")
    assert len(llm.calls) == 3
    assert all("other experts" not in messages[-1]["content"] for messages, _ in llm.calls)


def test_summary_mode_asks_the_model_once_more_with_every_final_opinion():
    llm = model({"ann": "yes", "bob": "no", "cat": "yes"}, summary="On balance: yes.")
    answer = ExpertPanel(llm, config=experts(rounds=2)).ask("Should we ship?")
    assert len(llm.calls) == 3 * 2 + 1
    moderator = llm.calls[-1][0]
    assert "moderator" in moderator[0]["content"]
    assert "Question: Should we ship?" in moderator[1]["content"]
    assert all(f"[{name}]" in moderator[1]["content"] for name in ("ann", "bob", "cat"))
    assert (answer.answer, answer.strategy) == ("On balance: yes.", "summary")
    assert answer.detail == {"experts": ["ann", "bob", "cat"], "failed": []}


def test_every_expert_and_the_moderator_are_told_to_answer_in_the_askers_language():
    llm = model({"ann": "是", "bob": "否", "cat": "是"})
    ExpertPanel(llm, config=experts(rounds=1)).ask("我们应该把服务迁移到 Rust 吗？")
    assert len(llm.calls) == 4
    assert all(answer_in("zh") in messages[0]["content"] for messages, _ in llm.calls)
    english = model({"ann": "yes", "bob": "no", "cat": "yes"})
    ExpertPanel(english, config=experts(rounds=1)).ask("Should we move the service to Rust?")
    assert all(answer_in("en") in messages[0]["content"] for messages, _ in english.calls)


# -- aggregation strategies ------------------------------------------------------------
def test_voting_picks_the_majority_after_normalising():
    llm = model({"ann": "Paris.", "bob": "paris", "cat": "Lyon"})
    answer = ExpertPanel(llm, config=experts(strategy="summary")).ask("Capital of France?", strategy="voting")
    assert answer.answer == "Paris."
    assert answer.detail["votes"] == {"paris": 2, "lyon": 1}
    assert len(llm.calls) == 3  # no summary call when voting


def test_weighted_lets_the_heavier_persona_win():
    llm = model({"ann": "Paris", "bob": "Paris", "cat": "Lyon"})  # 2.0 against cat's 3.0
    answer = ExpertPanel(llm, config=experts()).ask("Capital?", strategy="weighted")
    assert answer.answer == "Lyon"
    assert answer.detail["scores"] == {"paris": 2.0, "lyon": 3.0}


def test_weighted_numeric_answers_give_the_weighted_mean():
    llm = model({"ann": "10", "bob": "20", "cat": "30"})
    answer = ExpertPanel(llm, config=experts()).ask("How many?", strategy="weighted")
    assert answer.answer == "24"  # (10 + 20 + 3*30) / 5
    assert answer.detail["kind"] == "numeric"


@pytest.mark.parametrize("tie, expected", [("first", "red"), ("weighted", "blue")])
def test_voting_ties_follow_the_configured_policy(tie, expected):
    two = [PERSONAS[0], {"name": "bob", "prompt": "You are Bob.", "weight": 2.0}]
    llm = model({"ann": "red", "bob": "blue"})
    answer = ExpertPanel(llm, config=ExpertsConfig(personas=two, tie=tie)).ask("Colour?", strategy="voting")
    assert answer.answer == expected and answer.detail["tie"] is True


def test_voting_tie_none_says_the_experts_are_split():
    llm = model({"ann": "red", "bob": "blue"})
    config = ExpertsConfig(personas=PERSONAS[:2], tie="none")
    answer = ExpertPanel(llm, config=config).ask("Colour?", strategy="voting")
    assert answer.answer == "The experts are split evenly between: red / blue"


def test_map_reduce_hands_the_parts_to_the_experts_in_turn():
    llm = FunctionLLM(lambda messages, schema: f"{persona_of(messages)} on {messages[-1]['content'].split(': ')[-1]}")
    question = "1. What is X? 2. What is Y? 3. What is Z? 4. What is W?"
    answer = ExpertPanel(llm, config=experts()).ask(question, strategy="map_reduce")
    assert [(o.expert, o.part) for o in answer.opinions] == [
        ("ann", "What is X?"), ("bob", "What is Y?"), ("cat", "What is Z?"), ("ann", "What is W?")]
    assert answer.answer == ("1. What is X?\nann on What is X?\n\n2. What is Y?\nbob on What is Y?\n\n"
                             "3. What is Z?\ncat on What is Z?\n\n4. What is W?\nann on What is W?")
    assert question in llm.calls[0][0][-1]["content"]  # each part is answered knowing the whole question


def test_map_reduce_summary_reduce_joins_the_parts_with_the_model():
    llm = FunctionLLM(lambda messages, schema: "JOINED" if "Combine" in messages[-1]["content"] else "part answer")
    answer = ExpertPanel(llm, config=experts(reduce="summary")).ask("What is the capital of France and what "
                                                                   "is the capital of Spain?", strategy="map_reduce")
    assert answer.answer == "JOINED"
    assert [p["part"] for p in answer.detail["parts"]] == ["What is the capital of France",
                                                           "what is the capital of Spain?"]


@pytest.mark.parametrize("question, parts", [
    ("What is X?", ["What is X?"]),
    ("first question here\nsecond question there", ["first question here", "second question there"]),
    ("Compare: 1) cost of X 2) speed of Y", ["cost of X", "speed of Y"]),
    ("请回答：①北京的人口 ②上海的面积", ["北京的人口", "上海的面积"]),
    ("What are the pros and cons of Rust?", ["What are the pros and cons of Rust?"]),
    ("It costs 3.5 dollars, why?", ["It costs 3.5 dollars, why?"]),
])
def test_split_question(question, parts):
    assert split_question(question) == parts


# -- failures --------------------------------------------------------------------------
def test_no_model_is_a_clear_error():
    with pytest.raises(NoModelError, match="needs a language model, and none is configured"):
        ExpertPanel(None, config=experts()).ask("Anything?")


def test_a_failing_expert_is_left_out_and_named():
    llm = model({"ann": "x", "bob": LLMUnavailable("bob's server is down"), "cat": "x"})
    answer = ExpertPanel(llm, config=experts()).ask("Q?", strategy="voting")
    assert answer.answer == "x" and answer.detail["failed"] == ["bob"]
    assert [o.ok for o in answer.opinions] == [True, False, True]
    assert "down" in answer.opinions[1].error


def test_too_few_answering_experts_fail_the_question():
    llm = model({"ann": "x", "bob": LLMUnavailable("down"), "cat": LLMUnavailable("down")})
    with pytest.raises(PanelFailed, match="Only 1 of 3 experts answered.*at least 2"):
        ExpertPanel(llm, config=experts(min_ok=2)).ask("Q?")


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="strategy: unknown strategy 'majority'"):
        ExpertPanel(model({}), config=experts()).ask("Q?", strategy="majority")


# -- the ask_experts capability ------------------------------------------------------------
@pytest.fixture
def registry(tmp_path):
    config = load_config({"data_dir": str(tmp_path), "llm": {"backend": "none"},
                          "experts": {"personas": PERSONAS, "strategy": "voting"}}, env={})
    return config, build_registry(config)


def test_ask_experts_runs_the_panel_with_the_task_model_and_config(registry):
    config, reg = registry
    spec = reg.get_executable("ask_experts")
    llm = model({"ann": "Blue", "bob": "blue", "cat": "green"})
    context = ExecutionContext(task_id="t1", user_id="u1", config=config, llm=llm, registry=reg)
    result = spec.invoke({"question": "Best colour?"}, context)
    assert result["answer"] == "Blue" and result["strategy"] == "voting"
    assert result["message"] == "Blue\n(voting: blue: 2, green: 1)"
    assert len(result["opinions"]) == 3
    assert spec.invoke({"question": "Best colour?", "strategy": "weighted"}, context)["answer"] == "green"


def test_ask_experts_without_a_model_says_so(registry):
    config, reg = registry
    context = ExecutionContext(task_id="t1", user_id="u1", config=config, llm=None, registry=reg)
    with pytest.raises(CapabilityError, match="needs a language model, and none is configured") as caught:
        reg.get_executable("ask_experts").invoke({"question": "Q?"}, context)
    assert caught.value.retryable is False


@pytest.mark.parametrize("request_text", ["ask the experts whether we should rewrite the billing service",
                                          "让专家们讨论一下远程办公的利弊"])
def test_rule_router_picks_ask_experts(registry, request_text):
    _, reg = registry
    best = TaskRouter(reg).confident(request_text)
    assert best is not None and best.spec.name == "ask_experts"


def test_registry_serves_the_aggregation_and_optimisation_services(registry):
    _, reg = registry
    aggregated = reg.get_capability("result_aggregation").aggregate([], "concat", min_ok=0)
    assert aggregated.value == []
    optimizer = reg.get_capability("parallel_optimization")
    assert optimizer.suggest("ask_experts").concurrency >= 1
