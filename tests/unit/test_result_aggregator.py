"""ResultAggregator: each strategy's semantics, ties under each policy, partial failure."""

import pytest

from capabilities.aggregation.result_aggregator import (
    AggregationError, Outcome, ResultAggregator, final_answer, normalize_answer, resolve_path)
from capabilities.llm.base import LLMUnavailable
from capabilities.llm.fake import FunctionLLM, ScriptedLLM


def ok(source, value, weight=1.0):
    return Outcome(source, True, value, weight=weight)


def failed(source, error="boom"):
    return Outcome(source, False, error=error)


agg = ResultAggregator()


# -- normalisation ---------------------------------------------------------------------
@pytest.mark.parametrize("a, b", [
    ("Paris.", "  paris "),
    ("The answer is: PARIS!", "the answer is paris"),
    ("Long reasoning here.\nFinal answer: Paris", "paris"),
    ("思考过程……\n最终答案：北京。", "北京"),
    ("3.5", "3.5 "),
])
def test_normalize_answer_makes_equivalent_answers_equal(a, b):
    assert normalize_answer(a) == normalize_answer(b)


def test_normalize_answer_keeps_decimal_points_and_distinguishes_numbers():
    assert normalize_answer("3.5") != normalize_answer("35")
    assert normalize_answer({"b": 1, "a": 2}) == normalize_answer({"a": 2, "b": 1})


def test_final_answer_takes_the_last_short_final_line():
    assert final_answer("Answer: first guess\nmore thought\nFinal answer: second") == "second"
    assert final_answer("no verdict line") == "no verdict line"


# -- concat and failures ---------------------------------------------------------------
def test_concat_keeps_order_and_names_left_out_sources():
    result = agg.aggregate([ok("s1", 1), failed("s2"), ok("s3", {"x": 1})], "concat")
    assert result.value == [{"source": "s1", "value": 1}, {"source": "s3", "value": {"x": 1}}]
    assert result.failed == ("s2",)
    assert result.detail["errors"] == {"s2": "boom"}


def test_min_ok_raises_naming_the_failed_sources():
    with pytest.raises(AggregationError, match=r"1 of 3 results usable, at least 2 needed.*s2: timeout.*s3: boom"):
        agg.aggregate([ok("s1", 1), failed("s2", "timeout"), failed("s3")], "concat", min_ok=2)


def test_min_ok_zero_allows_an_all_failed_concat_but_not_a_vote():
    assert agg.aggregate([failed("s1")], "concat", min_ok=0).value == []
    with pytest.raises(AggregationError, match="at least 1 needed"):
        agg.aggregate([failed("s1")], "voting", min_ok=0)


def test_unknown_strategy_and_option_are_named():
    with pytest.raises(AggregationError, match="strategy: unknown aggregation strategy 'average'"):
        agg.aggregate([ok("s1", 1)], "average")
    with pytest.raises(AggregationError, match="unknown option.*tie"):
        agg.aggregate([ok("s1", 1)], "concat", tie="first")


# -- map_reduce ------------------------------------------------------------------------
def test_map_reduce_sum_over_a_field_path():
    outcomes = [ok("s1", {"total": 10}), ok("s2", {"total": "2.5"}), ok("s3", {"total": 7})]
    result = agg.aggregate(outcomes, "map_reduce", map="total", reduce="sum")
    assert result.value == 19.5
    assert result.detail["parts"] == [{"source": "s1", "value": 10}, {"source": "s2", "value": "2.5"},
                                      {"source": "s3", "value": 7}]


def test_map_reduce_concat_splices_lists_and_joins_texts():
    lists = [ok("s1", {"rows": [1, 2]}), ok("s2", {"rows": [3]})]
    assert agg.aggregate(lists, "map_reduce", map="rows", reduce="concat").value == [1, 2, 3]
    texts = [ok("s1", "alpha"), ok("s2", "beta")]
    assert agg.aggregate(texts, "map_reduce").value == "alpha\n\nbeta"


def test_map_reduce_count_counts_list_items():
    outcomes = [ok("s1", {"items": [1, 2, 3]}), ok("s2", {"items": []}), ok("s3", {"items": ["x"]})]
    result = agg.aggregate(outcomes, "map_reduce", map="items", reduce="count")
    assert result.value == 4
    assert result.detail["counts"] == {"s1": 3, "s2": 0, "s3": 1}


def test_map_reduce_merge_merges_objects_deeply_and_lists_conflicts():
    outcomes = [ok("s1", {"a": 1, "nested": {"x": 1}}), ok("s2", {"b": 2, "nested": {"y": 2}, "a": 9})]
    result = agg.aggregate(outcomes, "map_reduce", reduce="merge")
    assert result.value == {"a": 9, "b": 2, "nested": {"x": 1, "y": 2}}
    assert result.detail["conflicts"] == [{"key": "a", "kept": 9, "replaced": 1, "source": "s2"}]


def test_map_reduce_with_a_callable_and_indexed_path():
    outcomes = [ok("s1", {"items": [{"name": "a"}]}), ok("s2", {"items": [{"name": "b"}]})]
    assert agg.aggregate(outcomes, "map_reduce", map="items[0].name").value == "a\n\nb"
    assert agg.aggregate(outcomes, "map_reduce", map=lambda v: len(v["items"]), reduce="sum").value == 2


def test_map_reduce_source_without_the_field_counts_as_failed():
    outcomes = [ok("s1", {"total": 3}), ok("s2", {"other": 1}), ok("s3", {"total": 4})]
    result = agg.aggregate(outcomes, "map_reduce", map="total", reduce="sum")
    assert result.value == 7
    assert result.failed == ("s2",)
    with pytest.raises(AggregationError, match="s2: map total"):
        agg.aggregate(outcomes, "map_reduce", map="total", reduce="sum", min_ok=3)


def test_map_reduce_sum_refuses_non_numbers():
    with pytest.raises(AggregationError, match="s2.*'many' is not a number"):
        agg.aggregate([ok("s1", 1), ok("s2", "many")], "map_reduce", reduce="sum")


def test_map_reduce_summary_asks_the_model_with_every_part():
    llm = ScriptedLLM(["Sales rose and returns fell."])
    result = ResultAggregator(llm).aggregate([ok("sales", {"up": 5}), ok("returns", "down 2")], "map_reduce",
                                             reduce="summary", instruction="Summarise for the CEO.")
    assert result.value == "Sales rose and returns fell."
    prompt = llm.calls[0][0][-1]["content"]
    assert "Summarise for the CEO." in prompt and "[sales]" in prompt and '{"up": 5}' in prompt and "down 2" in prompt


def test_map_reduce_summary_without_a_model_is_an_error():
    with pytest.raises(AggregationError, match="needs a model"):
        agg.aggregate([ok("s1", "x")], "map_reduce", reduce="summary")


def test_a_model_provider_is_only_called_when_a_model_is_needed():
    calls = []

    def provider():
        calls.append(1)
        return ScriptedLLM(["joined"])

    lazy = ResultAggregator(llm_provider=provider)
    lazy.aggregate([ok("s1", 1)], "concat")
    assert calls == []
    assert lazy.aggregate([ok("s1", "x")], "map_reduce", reduce="summary").value == "joined"
    assert calls == [1]


# -- voting ----------------------------------------------------------------------------
def test_voting_counts_normalised_answers_and_returns_the_first_wording():
    outcomes = [ok("a", "Paris."), ok("b", "Lyon"), ok("c", "paris"), failed("d")]
    result = agg.aggregate(outcomes, "voting")
    assert result.value == "Paris."
    assert result.detail["votes"] == {"paris": 2, "lyon": 1}
    assert result.detail["tie"] is False
    assert result.failed == ("d",)


def test_voting_on_a_key_of_structured_results():
    outcomes = [ok("a", {"city": "Rome", "why": 1}), ok("b", {"city": "rome", "why": 2}), ok("c", {"city": "Oslo"})]
    assert agg.aggregate(outcomes, "voting", key="city").value == "Rome"


TIED = [ok("a", "blue", weight=1.0), ok("b", "red", weight=3.0), ok("c", "Blue", weight=1.0),
        ok("d", "red", weight=0.5)]  # 2 votes each; weights blue 2.0, red 3.5


def test_voting_tie_first_picks_the_answer_given_first():
    result = agg.aggregate(TIED, "voting", tie="first")
    assert result.value == "blue"
    assert result.detail["tie"] is True and result.detail["tied"] == ["blue", "red"]


def test_voting_tie_weighted_picks_the_heavier_answer():
    result = agg.aggregate(TIED, "voting", tie="weighted")
    assert result.value == "red"
    assert result.detail["winner"] == "red"


def test_voting_tie_none_gives_no_answer_and_lists_the_tied():
    result = agg.aggregate(TIED, "voting", tie="none")
    assert result.value is None
    assert result.detail["tie"] is True and result.detail["tied"] == ["blue", "red"]


def test_voting_tie_llm_lets_the_model_choose_among_the_tied_only():
    llm = ScriptedLLM([{"choice": 1}])
    result = ResultAggregator(llm).aggregate(TIED, "voting", tie="llm")
    assert result.value == "red"
    prompt = llm.calls[0][0][-1]["content"]
    assert "0. blue" in prompt and "1. red" in prompt
    assert llm.calls[0][1]["json_schema"]["properties"]["choice"]["maximum"] == 1


def test_voting_tie_llm_without_a_model_or_with_a_failing_one_is_an_error():
    with pytest.raises(AggregationError, match="needs a model"):
        agg.aggregate(TIED, "voting", tie="llm")
    with pytest.raises(AggregationError, match="could not break the tie"):
        ResultAggregator(ScriptedLLM([LLMUnavailable("down")])).aggregate(TIED, "voting", tie="llm")


def test_voting_without_a_tie_never_consults_the_tie_policy():
    llm = ScriptedLLM([])
    assert ResultAggregator(llm).aggregate([ok("a", "x"), ok("b", "x"), ok("c", "y")], "voting", tie="llm").value == "x"
    assert llm.calls == []


def test_voting_rejects_an_unknown_tie_policy():
    with pytest.raises(AggregationError, match="tie must be one of"):
        agg.aggregate(TIED, "voting", tie="coin")


# -- weighted --------------------------------------------------------------------------
def test_weighted_numbers_give_the_weighted_mean():
    outcomes = [ok("a", 10, weight=3), ok("b", "20", weight=1), failed("c")]
    result = agg.aggregate(outcomes, "weighted")
    assert result.value == 12.5
    assert result.detail["kind"] == "numeric"
    assert result.detail["weights"] == {"a": 3.0, "b": 1.0}


def test_weighted_weights_option_overrides_outcome_weights():
    result = agg.aggregate([ok("a", 10), ok("b", 20)], "weighted", weights={"b": 3})
    assert result.value == 17.5


def test_weighted_categorical_lets_one_heavy_source_outvote_two_light_ones():
    outcomes = [ok("a", "yes", weight=1), ok("b", "Yes.", weight=1), ok("c", "no", weight=2.5)]
    result = agg.aggregate(outcomes, "weighted")
    assert result.value == "no"
    assert result.detail["kind"] == "categorical"
    assert result.detail["scores"] == {"yes": 2.0, "no": 2.5}
    assert result.detail["votes"] == {"yes": 2, "no": 1}


def test_weighted_categorical_tie_policies():
    outcomes = [ok("a", "no", weight=2), ok("b", "yes", weight=1), ok("c", "yes", weight=1)]  # 2.0 each
    assert agg.aggregate(outcomes, "weighted", tie="first").value == "no"
    assert agg.aggregate(outcomes, "weighted", tie="weighted").value == "yes"  # more sources behind it
    assert agg.aggregate(outcomes, "weighted", tie="none").value is None


def test_weighted_refuses_bad_and_all_zero_weights():
    with pytest.raises(AggregationError, match="a has weight -1"):
        agg.aggregate([ok("a", 1, weight=-1)], "weighted")
    with pytest.raises(AggregationError, match="add up to 0"):
        agg.aggregate([ok("a", 1, weight=0), ok("b", 2, weight=0)], "weighted")


def test_resolve_path_reports_what_is_missing():
    assert resolve_path({"a": [{"b": 5}]}, "a[0].b") == 5
    with pytest.raises(KeyError):
        resolve_path({"a": 1}, "b")
    with pytest.raises(TypeError, match="bad path"):
        resolve_path({"a": 1}, "a..b")


def test_aggregate_is_json_and_model_sees_values_in_source_order():
    seen = []
    llm = FunctionLLM(lambda messages, schema: seen.append(messages[-1]["content"]) or "ok")
    result = ResultAggregator(llm).aggregate([ok("z", "last"), ok("a", "first")], "map_reduce", reduce="summary")
    assert seen[0].index("[z]") < seen[0].index("[a]")
    assert result.to_dict() == {"strategy": "map_reduce", "value": "ok", "failed": [],
                                "detail": {"reduce": "summary", "parts": [{"source": "z", "value": "last"},
                                                                          {"source": "a", "value": "first"}]}}
