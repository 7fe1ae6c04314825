"""TaskPlanner: rules and templates in Chinese and English, the model's plan with one retry,
and operations on existing tasks read from plain words."""

from __future__ import annotations

import pytest

from capabilities.base import capability
from capabilities.cognition.reading import read
from capabilities.llm.base import LLMUnavailable
from capabilities.llm.fake import ScriptedLLM
from capabilities.registry import CapabilityRegistry
from capabilities.routing.context_resolver import ContextResolver
from capabilities.routing.plan import PLAN_SCHEMA, Plan
from capabilities.routing.plan_graph import PlanGraph
from capabilities.routing.task_planner import TaskOperation, TaskPlanner, asks_beyond
from capabilities.routing.task_router import TaskRouter
from config import ConfigError, load_config
from init_plugins import build_registry


@capability(name="http_get", description="Download a web address",
            parameters={"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"],
                        "additionalProperties": False},
            keywords=("download", "fetch", "api", "下载", "获取", "接口"))
def http_get(url: str) -> str:
    return url


@capability(name="sql_query", description="Query the database",
            parameters={"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]},
            keywords=("database", "sql", "数据库", "查询"))
def sql_query(sql: str) -> list:
    return [sql]


@capability(name="send_mail", description="Send an e-mail",
            parameters={"type": "object", "required": ["to"],
                        "properties": {"to": {"type": "string"}, "body": {}, "api_key": {"type": "string"}}},
            keywords=("email", "mail", "邮件"))
def send_mail(to: str, body=None, api_key: str = "") -> str:
    return to


@capability(name="translate", description="Translate text",
            parameters={"type": "object", "properties": {"text": {}, "target": {"type": "string"}}},
            keywords=("translate", "翻译"))
def translate(text=None, target: str = "en") -> str:
    return str(text)


@capability(name="report_workflow", description="Run the report workflow",
            parameters={"type": "object", "properties": {"inputs": {"type": "object"}}},
            keywords=("workflow", "工作流"))
def report_workflow(inputs=None) -> dict:
    return inputs or {}


@pytest.fixture
def registry() -> CapabilityRegistry:
    registry = CapabilityRegistry()
    registry.register("routing", TaskRouter, factory=True)
    for fn in (http_get, sql_query, send_mail, translate, report_workflow):
        registry.register_capability(fn)
    return registry


@pytest.fixture
def planner(registry) -> TaskPlanner:
    return TaskPlanner(registry)


def shape(plan: Plan) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(s.id, s.capability, s.depends_on) for s in plan.steps]


# -- rules ---------------------------------------------------------------------------------

def test_then_orders_steps_and_it_passes_the_result_on(planner):
    plan = planner.plan("download https://a.example/sales.json then translate it")
    assert shape(plan) == [("s1", "http_get", ()), ("s2", "translate", ("s1",))]
    assert plan.step("s1").parameters == {"url": "https://a.example/sales.json"}
    assert plan.step("s2").parameters == {"text": "${s1.result}"}
    assert [s.kind for s in plan.steps] == ["intermediate", "leaf"]
    assert plan.source == "rules" and plan.aggregation == {"strategy": "concat"}


def test_and_runs_steps_side_by_side(planner):
    plan = planner.plan("download https://a.example/sales and query the returns from the database")
    assert shape(plan) == [("s1", "http_get", ()), ("s2", "sql_query", ())]
    assert len(PlanGraph(plan).ready(set(), set())) == 2


def test_a_later_stage_waits_for_every_step_of_the_stage_before(planner):
    plan = planner.plan("download https://a.example/x, query the returns from the database, "
                        "then email the results to boss")
    assert shape(plan) == [("s1", "http_get", ()), ("s2", "sql_query", ()), ("s3", "send_mail", ("s1", "s2"))]
    assert plan.step("s3").parameters["body"] == ["${s1.result}", "${s2.result}"]


def test_then_without_a_reference_orders_but_passes_nothing(planner):
    plan = planner.plan("download https://a.example/a and then download https://a.example/b")
    assert shape(plan) == [("s1", "http_get", ()), ("s2", "http_get", ("s1",))]
    assert [s.kind for s in plan.steps] == ["leaf", "leaf"]
    assert plan.step("s2").parameters == {"url": "https://a.example/b"}


def test_a_back_reference_beside_a_step_depends_on_it(planner):
    plan = planner.plan("query the sales from the database and email it to boss")
    assert shape(plan) == [("s1", "sql_query", ()), ("s2", "send_mail", ("s1",))]


def test_step_numbers_name_the_step_referred_to(planner):
    plan = planner.plan("download https://a.example/a, download https://a.example/b and translate the output of step 1")
    assert shape(plan) == [("s1", "http_get", ()), ("s2", "http_get", ()), ("s3", "translate", ("s1",))]
    assert plan.step("s3").parameters == {"text": "${s1.result}"}


def test_a_written_reference_becomes_an_implied_dependency(planner):
    plan = planner.plan("query the database with sql=select_total, and email body=${s1.result.rows} to boss")
    assert shape(plan) == [("s1", "sql_query", ()), ("s2", "send_mail", ("s1",))]
    assert plan.step("s2").parameters["body"] == "${s1.result.rows}"


def test_a_part_without_a_capability_word_repeats_the_one_before(planner):
    plan = planner.plan("download https://a.example/a, https://a.example/b and https://a.example/c")
    assert [(s.capability, s.parameters["url"]) for s in plan.steps] == [
        ("http_get", "https://a.example/a"), ("http_get", "https://a.example/b"), ("http_get", "https://a.example/c")]
    assert all(s.depends_on == () for s in plan.steps)


def test_zh_a_bare_object_after_dunhao_repeats_the_capability_before(planner):
    plan = planner.plan("查询数据库里的销售、退货")
    assert shape(plan) == [("s1", "sql_query", ()), ("s2", "sql_query", ())]
    assert plan.step("s2").description == "退货"


def test_a_part_with_its_own_verb_is_not_taken_for_the_same_work(planner):
    assert planner.plan("download https://a.example/a, bake a cake") is None


def test_a_closing_summary_becomes_the_aggregation(planner):
    plan = planner.plan("fetch last month's sales from the API, the returns from the database, and write me a summary")
    assert shape(plan) == [("s1", "http_get", ()), ("s2", "sql_query", ())]
    assert plan.aggregation == {"strategy": "map_reduce", "reduce": "summary", "instruction": "write me a summary"}
    assert plan.source == "template"


def test_a_number_with_a_thousands_comma_is_not_a_separator(planner):
    plan = planner.plan("query the database for orders over 1,000 and download https://a.example/x")
    assert shape(plan) == [("s1", "sql_query", ()), ("s2", "http_get", ())]
    assert plan.step("s1").description == "query the database for orders over 1,000"


def test_zh_ranran_orders_and_jieguo_passes_the_result(planner):
    plan = planner.plan("查询数据库里的销售数据，然后把结果发邮件给老板")
    assert shape(plan) == [("s1", "sql_query", ()), ("s2", "send_mail", ("s1",))]
    assert plan.step("s2").parameters["body"] == "${s1.result}"


def test_zh_dunhao_runs_side_by_side_then_a_later_stage_waits(planner):
    plan = planner.plan("下载 https://a.example/x、查询数据库里的退货，然后翻译结果")
    assert shape(plan) == [("s1", "http_get", ()), ("s2", "sql_query", ()), ("s3", "translate", ("s1", "s2"))]
    assert plan.step("s3").parameters == {"text": ["${s1.result}", "${s2.result}"]}


def test_zh_zai_orders_steps(planner):
    plan = planner.plan("查询数据库的订单再下载 https://a.example/y")
    assert shape(plan) == [("s1", "sql_query", ()), ("s2", "http_get", ("s1",))]


def test_zh_step_numbers_and_summary_template(planner):
    plan = planner.plan("下载 https://a.example/a，查询数据库，然后翻译第一步的内容，最后汇总一下")
    assert shape(plan) == [("s1", "http_get", ()), ("s2", "sql_query", ()), ("s3", "translate", ("s1", "s2"))]
    assert plan.step("s3").parameters == {"text": "${s1.result}"}
    assert plan.aggregation["reduce"] == "summary" and plan.source == "template"


def test_a_workflow_capability_makes_a_workflow_step(planner):
    plan = planner.plan("run the workflow then email its result to boss")
    assert [s.kind for s in plan.steps] == ["workflow", "leaf"]
    assert plan.step("s2").parameters["body"] == "${s1.result}"


def test_a_result_passed_to_an_object_parameter_is_wrapped(planner):
    plan = planner.plan("query the database then run the workflow with it")
    assert plan.step("s2").parameters == {"inputs": {"input": "${s1.result}"}}


def test_a_request_said_in_two_clauses_is_one_step(planner):
    # the later clause points back at the earlier and asks the same capability: no second step
    assert planner.plan("we need last month's sales by region from the database, could you query that with sql?") is None
    assert planner.plan("查询上个月的销售额，这个从数据库里查询就行") is None
    # or leaves its object unsaid: "…, 帮我从数据库里查询一下" does what was just named
    assert planner.plan("财务要去年每个季度的退款数据库查询结果，帮我从数据库里查询一下") is None


def test_a_clause_that_names_more_to_do_is_still_a_step_of_its_own(planner):
    plan = planner.plan("查询一下数据库里的订单，再把退货也查询一下")
    assert plan is not None and [s.capability for s in plan.steps] == ["sql_query", "sql_query"]


def test_a_clause_that_asks_again_with_nothing_of_its_own_is_the_same_step(planner):
    # what someone said about an address, then the ask for it: one request, not a second one without a value
    assert planner.plan("测试说 https://example.com/login 一直报500，你帮我获取一下看看返回啥") is None
    assert planner.plan("my colleague says https://example.com/login is down, can you fetch it") is None
    two = planner.plan("fetch https://example.com/a, fetch https://example.com/b")
    assert [s.parameters["url"] for s in two.steps] == ["https://example.com/a", "https://example.com/b"]


def test_a_later_clause_that_only_gives_the_values_is_the_same_step(planner):
    assert planner.plan("download this quarter's figures, the address's https://example.com/q3") is None
    assert planner.plan("download this quarter's figures, from https://example.com/q3 please") is None
    assert planner.plan("下载一下季度数据，地址在这 https://example.cn/q3") is None
    # a clause that asks for work with its value is a step of its own
    two = planner.plan("download the summary, then download https://example.com/detail")
    assert two is not None and len(two.steps) == 2


def test_a_clause_about_the_person_is_not_a_bare_object_for_the_step_before(planner):
    assert planner.plan("帮我获取一下 https://example.com/a ，我怀疑分页坏了") is None
    assert planner.plan("查询本周的退货数，帮我从库里拉一下") is None  # a request said again, not an object


def test_a_single_step_request_is_left_to_the_normal_path(planner):
    assert planner.plan("download https://a.example/a") is None
    assert planner.plan("hello there") is None
    assert planner.plan("   ") is None


def test_without_a_model_an_unroutable_part_leaves_the_request_alone(planner):
    assert planner.plan("download https://a.example/a and bake a cake") is None


def test_a_step_number_that_names_no_step_is_not_planned_by_rules(planner):
    assert planner.plan("download https://a.example/a then translate step 7") is None


def test_rules_respect_max_steps(registry):
    text = ", ".join(f"download https://a.example/{i}" for i in range(4))
    assert len(TaskPlanner(registry, max_steps=4).plan(text).steps) == 4
    assert TaskPlanner(registry, max_steps=3).plan(text) is None


# -- the model -----------------------------------------------------------------------------

MODEL_PLAN = {
    "steps": [
        {"id": "s1", "capability": "sql_query", "parameters": {"sql": "select * from close"}, "depends_on": []},
        {"id": "s2", "capability": "send_mail", "parameters": {"to": "finance", "body": "${s1.result}"},
         "depends_on": [], "description": "notify finance"},
    ],
    "aggregation": {"strategy": "concat"},
}
MULTI_STEP_UNROUTABLE = "do the monthly close and notify finance"


def test_the_model_plans_what_the_rules_cannot_route(registry):
    llm = ScriptedLLM([MODEL_PLAN])
    plan = TaskPlanner(registry, llm).plan(MULTI_STEP_UNROUTABLE)
    assert plan.source == "llm"
    assert shape(plan) == [("s1", "sql_query", ()), ("s2", "send_mail", ("s1",))]
    assert len(llm.calls) == 1
    messages, kwargs = llm.calls[0]
    assert kwargs["json_schema"] == PLAN_SCHEMA
    assert MULTI_STEP_UNROUTABLE in messages[-1]["content"]
    assert "send_mail" in messages[0]["content"]


def test_an_invalid_model_plan_is_sent_back_once_with_the_error(registry):
    bad = {"steps": [{"id": "s1", "capability": "bake", "parameters": {}}]}
    llm = ScriptedLLM([bad, MODEL_PLAN])
    plan = TaskPlanner(registry, llm).plan(MULTI_STEP_UNROUTABLE)
    assert plan is not None and plan.source == "llm"
    retry_messages = llm.calls[1][0]
    assert "steps[0].capability: unknown capability 'bake'" in retry_messages[-1]["content"]
    assert retry_messages[-2]["role"] == "assistant" and "bake" in retry_messages[-2]["content"]


@pytest.mark.parametrize("first, second, error", [
    ("not json at all", {"steps": []}, "not JSON"),
    ({"steps": [{"id": "s1", "capability": "http_get", "parameters": {"address": "x"}}]},
     {"steps": [{"id": "s1", "capability": "sql_query", "parameters": {}, "depends_on": ["s5"]}]},
     "http_get has no parameter 'address'"),
    ({"steps": [{"id": "s1", "capability": "sql_query", "parameters": {"q": "${s1.output}"}}]},
     {"plan": "two steps"}, "is not a reference"),
])
def test_a_model_plan_invalid_twice_falls_back_to_the_rules(registry, first, second, error):
    llm = ScriptedLLM([first, second])
    assert TaskPlanner(registry, llm).plan(MULTI_STEP_UNROUTABLE) is None
    assert len(llm.calls) == 2 and llm.remaining == 0
    assert error in llm.calls[1][0][-1]["content"]


def test_the_model_plan_is_held_to_max_steps(registry):
    three = {"steps": [{"id": f"s{i}", "capability": "sql_query", "parameters": {}} for i in range(3)]}
    llm = ScriptedLLM([three, MODEL_PLAN])
    plan = TaskPlanner(registry, llm, max_steps=2).plan(MULTI_STEP_UNROUTABLE)
    assert len(plan.steps) == 2
    assert "more than the 2 allowed" in llm.calls[1][0][-1]["content"]


def test_an_unreachable_model_leaves_the_request_to_the_normal_path(registry):
    llm = ScriptedLLM([LLMUnavailable("down")])
    assert TaskPlanner(registry, llm).plan(MULTI_STEP_UNROUTABLE) is None
    assert len(llm.calls) == 1


def test_the_model_is_not_asked_when_the_rules_plan_or_the_request_is_one_step(registry):
    llm = ScriptedLLM([])
    planner = TaskPlanner(registry, llm)
    assert planner.plan("download https://a.example/a then translate it") is not None
    assert planner.plan("download https://a.example/a") is None
    assert planner.plan("tell me a joke") is None
    assert llm.calls == []


def test_the_model_is_asked_when_two_capabilities_are_named_without_a_separator(registry):
    llm = ScriptedLLM([MODEL_PLAN])
    assert TaskPlanner(registry, llm).plan("mail the database totals") is not None
    assert len(llm.calls) == 1


def test_a_secret_the_model_invents_is_dropped_and_one_written_is_kept(registry):
    invented = {"steps": [{"id": "s1", "capability": "sql_query", "parameters": {"sql": "select 1"}},
                          {"id": "s2", "capability": "send_mail",
                           "parameters": {"to": "finance", "api_key": "sk-made-up", "body": "${s1.result}"}}]}
    plan = TaskPlanner(registry, ScriptedLLM([invented])).plan(MULTI_STEP_UNROUTABLE)
    assert "api_key" not in plan.step("s2").parameters
    written = {"steps": [dict(invented["steps"][1], id="s1", parameters={"to": "f", "api_key": "sk-real"}),
                         invented["steps"][0] | {"id": "s2"}]}
    plan = TaskPlanner(registry, ScriptedLLM([written])).plan(MULTI_STEP_UNROUTABLE + " with key sk-real")
    assert plan.step("s1").parameters["api_key"] == "sk-real"


def test_a_coupled_model_plan_is_one_unit(registry):
    coupled = {"steps": [{"id": "s1", "capability": "translate", "parameters": {"text": "${s2.result}"}},
                         {"id": "s2", "capability": "send_mail", "parameters": {"to": "x", "body": "${s1.result}"}}]}
    plan = TaskPlanner(registry, ScriptedLLM([coupled])).plan(MULTI_STEP_UNROUTABLE)
    assert [u.id for u in PlanGraph(plan).units()] == ["scc:s1+s2"]


# -- operations on existing tasks ----------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("cancel task t_123", TaskOperation("cancel_task", "t_123", "")),
    ("please cancel it", TaskOperation("cancel_task", "last", "")),
    ("stop the running task", TaskOperation("cancel_task", "last", "")),
    ("取消刚才的任务", TaskOperation("cancel_task", "last", "")),
    ("把任务 task_3fa9 取消", TaskOperation("cancel_task", "task_3fa9", "")),
    ("re-run it", TaskOperation("re_run_task", "last", "")),
    ("run task_ab12 again", TaskOperation("re_run_task", "task_ab12", "")),
    ("重新执行", TaskOperation("re_run_task", "last", "")),
    ("重新执行刚才的任务", TaskOperation("re_run_task", "last", "")),
    ("revise it: use euros", TaskOperation("revise_result", "last", "use euros")),
    ("change the result of t_7 to euros", TaskOperation("revise_result", "t_7", "to euros")),
    ("re-run it with prices in euros", TaskOperation("revise_result", "last", "with prices in euros")),
    ("把结果改成英文", TaskOperation("revise_result", "last", "改成英文")),
    ("重新执行，用欧元", TaskOperation("revise_result", "last", "用欧元")),
    ("comment on t_1: looks good", TaskOperation("comment_on_task", "t_1", "looks good")),
    ("comment on it: remind me to check the totals", TaskOperation("comment_on_task", "last",
                                                                   "remind me to check the totals")),
    ("给任务t_1评论：很好", TaskOperation("comment_on_task", "t_1", "很好")),
    ("评论：数据不全", TaskOperation("comment_on_task", "last", "数据不全")),
    # the verb alone: the latest unfinished task
    ("cancel", TaskOperation("cancel_task", "last", "")),
    ("never mind, stop", TaskOperation("cancel_task", "last", "")),
    ("算了，不用跑了，取消吧", TaskOperation("cancel_task", "last", "")),
    ("别执行了", TaskOperation("cancel_task", "last", "")),
    ("cancel that pls", TaskOperation("cancel_task", "last", "")),
    ("把结果重新整理一下，按日期排序", TaskOperation("revise_result", "last", "按日期排序")),
    ("把刚才的任务重新生成一次", TaskOperation("re_run_task", "last", "")),
    ("make the result shorter", TaskOperation("revise_result", "last", "shorter")),
    ("try the last one again pls", TaskOperation("re_run_task", "last", "")),
    ("run it one more time", TaskOperation("re_run_task", "last", "")),
    ("把它撤了吧", TaskOperation("cancel_task", "last", "")),
    ("redo the answer as a table?", TaskOperation("revise_result", "last", "as a table")),
    ("给这个任务留个言：已核对", TaskOperation("comment_on_task", "last", "已核对")),
    # what leads up to the operation in a clause of its own is said about it, not asked
    ("ok, that's enough, scratch that", TaskOperation("cancel_task", "last", "")),
    ("the server was down earlier. give it one more try", TaskOperation("re_run_task", "last", "")),
    ("网络刚才断了，再重新跑一次吧", TaskOperation("re_run_task", "last", "")),
    ("哦 先别执行了，撤掉吧", TaskOperation("cancel_task", "last", "")),
])
def test_operations_on_a_task_are_read_in_both_languages(text, expected):
    assert read(text).task_operation == expected


@pytest.mark.parametrize("text", [
    "stop the server", "cancel my subscription", "取消订阅", "rerun the build pipeline",
    "cancel the reminder", "取消提醒", "暂停 loop_3f2a9c", "download https://a.example/a then translate it",
    "fix it", "重新", "comment", "算了", "不用了", "never mind", "重新整理我的书架",
    # after a chat reply these are about that reply: the model reads them
    "重新写一下，更短", "make it shorter", "make the coffee stronger",
    # a lead that is a request or a step of its own: the whole is a request
    "fetch https://a.example/a, re-run it", "check the logs, then stop it", "search the web for cats, stop it",
])
def test_ordinary_requests_and_loop_operations_are_not_task_operations(text):
    assert read(text).task_operation is None


@pytest.mark.parametrize("text, expected", [
    # the task no longer wanted, with or without a lead, a task named or pointed at, a reason after it
    ("哎，刚才那个任务不需要了", TaskOperation("cancel_task", "last", "")),
    ("那个就不用做了吧", TaskOperation("cancel_task", "last", "")),
    ("不要刚才那个任务了", TaskOperation("cancel_task", "last", "")),
    ("任务 t_42 不要了", TaskOperation("cancel_task", "t_42", "")),
    ("这个任务我不要了，我自己来", TaskOperation("cancel_task", "last", "")),
    ("先不做了", TaskOperation("cancel_task", "last", "")),
    ("ok, forget it", TaskOperation("cancel_task", "last", "")),
    ("ditch that job", TaskOperation("cancel_task", "last", "")),
    ("drop task t_8", TaskOperation("cancel_task", "t_8", "")),
    ("never mind, we don't need it any more", TaskOperation("cancel_task", "last", "")),
    ("that task is no longer needed", TaskOperation("cancel_task", "last", "")),
    ("scrap it, I'll do it myself", TaskOperation("cancel_task", "last", "")),
    # a revision asked politely or as a question
    ("可不可以把结果翻译成英文？", TaskOperation("revise_result", "last", "翻译成英文")),
    ("你能把输出改成中文吗", TaskOperation("revise_result", "last", "改成中文")),
    ("麻烦你帮我把结果按金额排序", TaskOperation("revise_result", "last", "按金额排序")),
    ("could you make this output more concise, only the totals",
     TaskOperation("revise_result", "last", "more concise, only the totals")),
    ("turn the answer into a bullet list", TaskOperation("revise_result", "last", "into a bullet list")),
    ("make the output a table", TaskOperation("revise_result", "last", "a table")),
])
def test_a_task_no_longer_wanted_and_a_revision_asked_politely_are_read(text, expected):
    assert read(text).task_operation == expected


@pytest.mark.parametrize("text", [
    "能不能帮我写一封邮件", "可以把这个文件改成PDF吗", "能不能把这句话翻译成英文",  # a request, no task named
    "不需要了", "算了，不用了",  # an offer declined: nothing says which task
    "I don't need help with that anymore", "we don't need an umbrella anymore", "make that a table",
    "the reminder for standup, drop it", "forget the reminder",  # the loop reader's
])
def test_polite_requests_declined_offers_and_loop_tasks_are_not_task_operations(text):
    assert read(text).task_operation is None


# -- wiring --------------------------------------------------------------------------------

def test_planning_and_context_resolver_are_registered_services():
    registry = build_registry(load_config({"llm": {"backend": "none"}}, env={}))
    planner = registry.get_capability("planning")
    assert isinstance(planner, TaskPlanner)
    assert isinstance(registry.get_capability("context_resolver"), ContextResolver)
    plan = planner.plan("fetch last month's sales from the API, the returns from the database, and write me a summary")
    assert [s.capability for s in plan.steps] == ["http_request", "data_query"]
    assert plan.aggregation["strategy"] == "map_reduce"


def test_planning_config_has_defaults_and_names_a_bad_key():
    config = load_config({}, env={})
    assert (config.planning.coupled_rounds, config.planning.max_steps) == (2, 50)
    assert load_config({}, env={"FLORA_PLANNING__COUPLED_ROUNDS": "3"}).planning.coupled_rounds == 3
    with pytest.raises(ConfigError, match="planning.max_steps"):
        load_config({"planning": {"max_steps": 0}}, env={})


def test_two_addresses_joined_by_he_run_side_by_side_and_a_short_summary_line_combines_them(planner):
    plan = planner.plan("先请求 https://api.example.com/a 和 https://api.example.com/b，然后把两个结果汇总一下")
    assert [(s.capability, s.parameters.get("url")) for s in plan.steps] == [
        ("http_get", "https://api.example.com/a"), ("http_get", "https://api.example.com/b")]
    assert plan.aggregation["reduce"] == "summary"


def test_he_inside_a_noun_phrase_and_thanks_after_a_comma_make_no_plan(planner):
    assert planner.plan("销售和退货数据") is None
    assert planner.plan("Thanks a lot, that was helpful") is None


def test_the_model_planner_reads_what_is_known_about_the_person_before_the_request(registry):
    llm = ScriptedLLM([MODEL_PLAN])
    known = [{"memory_id": "mem_1", "fact": "The person works in the finance team"}]
    assert TaskPlanner(registry, llm).plan(MULTI_STEP_UNROUTABLE, known) is not None
    without = TaskPlanner(registry, ScriptedLLM([MODEL_PLAN]))
    without.plan(MULTI_STEP_UNROUTABLE)
    messages = llm.calls[0][0]
    assert messages[0] == without._llm.calls[0][0][0]  # the fixed prefix does not change with the person
    last = messages[-1]["content"]
    assert last.index("Known about the person:\n- The person works in the finance team") \
        < last.index(f"Request: {MULTI_STEP_UNROUTABLE}")


def test_a_secret_is_never_taken_from_memory_into_a_plan(registry):
    invented = {"steps": [{"id": "s1", "capability": "sql_query", "parameters": {"sql": "select 1"}},
                          {"id": "s2", "capability": "send_mail",
                           "parameters": {"to": "finance", "api_key": "sk-remembered", "body": "${s1.result}"}}]}
    known = [{"memory_id": "mem_1", "fact": "My mail key is sk-remembered"}]
    plan = TaskPlanner(registry, ScriptedLLM([invented])).plan(MULTI_STEP_UNROUTABLE, known)
    assert "api_key" not in plan.step("s2").parameters  # a secret must be written in the request itself


@pytest.mark.parametrize("text", [
    "run the report workflow, the api key is app-77QkLm",
    "发一封邮件给 li@example.com，密钥是 app-3Kd9",
    "download https://example.com/a.csv, token: abc123",
    "solve the quadratic equation with a=1, b=-3, and c=2",  # values named one by one: one request
    "算一下这个二次方程 a=1，b=-3，c=2",
])
def test_a_clause_that_only_gives_a_value_is_part_of_the_step_before(registry, text):
    llm = ScriptedLLM([])  # one request with its value: no plan, and no model asked for one
    assert TaskPlanner(registry, llm).plan(text) is None
    assert llm.calls == []


@pytest.mark.parametrize("text", ["查询数据库里各省的销量，按从高到低排一下", "从数据库查本月的新用户，只要前十个"])
def test_a_short_clause_that_says_how_is_no_second_object(planner, text):
    assert planner.plan(text) is None


def test_a_step_that_names_its_values_with_equals_is_still_a_step(planner):
    plan = planner.plan("download url=https://a.example/a, send mail to=li@example.com")
    assert [s.capability for s in plan.steps] == ["http_get", "send_mail"]


# -- several pieces of work, only one of them known to the rules -------------------------

def _router(registry) -> TaskRouter:
    return TaskRouter(registry)


@pytest.mark.parametrize("text", [
    "download https://shop.example.net/prices.json, then look up last week's returns in the warehouse system",
    "fetch https://feeds.example.org/rates.csv, also search our ledger for unpaid invoices, "
    "then tell me which customers are late",
    "把 https://cdn.example.org/stock.json 下载下来，再查下仓库系统里上周的出库记录，最后两边比较一下",
    "两件事：获取 https://metrics.example.cn/api/daily 的接口数据，然后搜一下客服记录里的投诉",
    "1. download https://a.example.com/orders.json\n2. pull the refunds from our books\n3. tell me what changed",
])
def test_a_request_asking_for_other_work_beside_the_known_capability_asks_beyond_it(registry, text):
    assert asks_beyond(_router(registry), text, registry.get_executable("http_get"))


@pytest.mark.parametrize("text, capability", [
    ("download https://x.example.com/a.json and show me the result", "http_get"),
    ("fetch https://x.example.com/a.json, then tell me whether it is up", "http_get"),
    ("获取 https://x.example.com/v2/ping 接口，看看返回什么", "http_get"),
    ("run the report workflow, the api key is app-Qm71Kd", "report_workflow"),
    ("查询数据库里各部门的报销金额，按从高到低排个序", "sql_query"),
    ("download https://x.example.com/a.json", "http_get"),
    ("download https://x.example.com/a.json and send the results back to me", "http_get"),
    ("把 https://x.example.com/a.json 下载下来，跑出来发我", "http_get"),
])
def test_one_request_with_its_value_its_manner_or_its_result_shown_asks_nothing_beyond(registry, text, capability):
    assert not asks_beyond(_router(registry), text, registry.get_executable(capability))


def test_the_model_plans_a_request_whose_second_piece_of_work_the_rules_cannot_route(registry):
    answer = {"steps": [{"id": "s1", "capability": "http_get", "parameters": {"url": "https://a.example.com/stock"}},
                        {"id": "s2", "capability": "sql_query", "parameters": {"sql": "select * from orders"}}],
              "aggregation": {"strategy": "map_reduce", "reduce": "summary"}}
    llm = ScriptedLLM([answer])
    plan = TaskPlanner(registry, llm).plan("fetch https://a.example.com/stock, look up today's orders in our books")
    assert [s.capability for s in plan.steps] == ["http_get", "sql_query"] and len(llm.calls) == 1


def test_a_closing_comparison_of_several_steps_is_how_their_results_combine(planner):
    plan = planner.plan("download https://a.example.com/q1.json and https://a.example.com/q2.json, then compare the two")
    assert [s.capability for s in plan.steps] == ["http_get", "http_get"]
    assert plan.aggregation == {"strategy": "map_reduce", "reduce": "summary", "instruction": "compare the two"}
    plan = planner.plan("下载 https://a.example.com/1.csv 和 https://a.example.com/2.csv，然后两边对比一下")
    assert len(plan.steps) == 2 and plan.aggregation["instruction"] == "两边对比一下"


def test_a_judgement_after_a_single_step_is_no_plan(planner):
    assert planner.plan("download https://a.example.com/q1.json, then tell me whether it changed") is None


def test_a_lead_in_that_counts_the_steps_and_a_numbered_list_are_no_steps_of_their_own(planner):
    plan = planner.plan("two things: download https://a.example.com/a.json, then send mail to li@example.com")
    assert [(s.capability, s.description) for s in plan.steps] == [
        ("http_get", "download https://a.example.com/a.json"), ("send_mail", "send mail to li@example.com")]
    plan = planner.plan("1. 下载 https://a.example.com/a.json\n2. 翻译一下结果")
    assert shape(plan) == [("s1", "http_get", ()), ("s2", "translate", ("s1",))]


def test_a_clause_that_only_shows_the_result_is_no_step(planner):
    assert planner.plan("download https://a.example.com/a.json and show me what it returns") is None
    assert planner.plan("下载 https://a.example.com/a.json，看看返回了什么") is None


def test_a_sql_statement_is_one_value_whatever_commas_it_holds(planner):
    assert planner.plan("查一下库存不足的商品，SQL是 SELECT name, qty FROM stock WHERE qty < 10") is None
    plan = planner.plan("run SELECT a, b FROM t in the database, then download https://example.com/x")
    assert [s.capability for s in plan.steps] == ["sql_query", "http_get"]
    assert plan.step("s1").description == "run SELECT a, b FROM t in the database"


@pytest.mark.parametrize("text", ["Kick off the Dify workflow that prices our stock, API key app-R4nT9bLe",
                                  "跑一下排班的dify工作流，API key app-Qm8x2LkP"])
def test_a_clause_of_a_value_and_its_name_is_the_step_before_it_even_with_another_tools_keyword(text):
    # "API" is a keyword of http_request; the clause only gives the workflow its key
    from config import load_config
    from init_plugins import build_registry

    installed = build_registry(load_config({"llm": {"backend": "none"}, "memory": {"enabled": False}}, env={}))
    assert TaskPlanner(installed).plan(text) is None
    assert not asks_beyond(TaskRouter(installed), text, installed.get_executable("dify_workflow"))


def test_the_ends_of_a_range_are_one_step(planner):
    assert planner.plan("use the sql query to count the orders between 3 March 2026 and 19 November 2026") is None
    plan = planner.plan("query the database for orders between May and June, then translate the totals into French")
    assert [s.capability for s in plan.steps] == ["sql_query", "translate"]
