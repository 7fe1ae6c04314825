"""While a task waits for an answer, what the person says about their other work acts on that
work: each operation on a task (comment, revise, re-run, cancel) and on a loop task (pause,
resume, delete, run now, change), in Chinese and English, with one task waiting and with two.
Only a value that fits the waiting question answers it; where a message could be either, Flora
asks which, naming both. The front desk reads the operation (``Decision.operation``) and the
AgentActor's coordinator does it on the task the front desk found."""

from __future__ import annotations

import pytest

from agents.coordination.task_coordinator import TaskCoordinator
from capabilities.cognition.intent_router import IntentRouter
from capabilities.context.conversation_manager import ConversationManager
from capabilities.routing.task_planner import TaskPlanner
from capabilities.routing.task_router import TaskRouter
from common import messages as m
from common.tasks.models import TaskRecord
from events.event_bus import EventBus
from init_plugins import build_registry

TENANT, USER = "acme", "lin"
LOOP = {"zh": "帮我请求一下 https://example.com/sales/weekly.json ，这是销售周报",
        "en": "fetch https://example.com/sales/weekly.json - that's the weekly sales report"}
DONE = {"zh": "帮我请求一下 https://example.com/report.json", "en": "fetch https://example.com/report.json"}
DIFY = {"zh": "执行Dify工作流", "en": "run my dify workflow"}
URL_TASK = {"zh": "帮我调个接口", "en": "call an api for me"}


class Situation:
    """A weekly loop task, a finished task, a Dify workflow waiting for its api_key (and, with
    ``two``, an HTTP request waiting for its address), all the person's."""

    def __init__(self, store, config, lang: str, *, two: bool = False):
        self.store, self.events = store, EventBus(store)
        self.registry = build_registry(config, store=store, events=self.events, llm=None)
        self.loops = self.registry.get_capability("loop_tasks")
        self.loop = self.loops.register(tenant_id=TENANT, user_id=USER, content=LOOP[lang],
                                        schedule=self.loops.parse("every Monday at 9:00").schedule,
                                        capability="http_request",
                                        parameters={"url": "https://example.com/sales/weekly.json"})
        self._task("task_done", DONE[lang], "http_request", {"url": "https://example.com/report.json"}, at=1.0)
        self.store.transition(TENANT, "task_done", "running")
        self.store.transition(TENANT, "task_done", "completed", result={"rows": 3})
        dify = self.registry.get_executable("dify_workflow")
        self._task("task_dify", DIFY[lang], "dify_workflow", {}, at=2.0)
        self.store.transition(TENANT, "task_dify", "waiting_parameters", missing=[
            {"name": "api_key", "description": dify.describe_parameter("api_key"),
             "schema": dify.properties["api_key"]}])
        if two:
            http = self.registry.get_executable("http_request")
            self._task("task_url", URL_TASK[lang], "http_request", {}, at=3.0)
            self.store.transition(TENANT, "task_url", "waiting_parameters", missing=[
                {"name": "url", "description": http.describe_parameter("url"), "schema": http.properties["url"]}])
        self.desk = ConversationManager(store, self.events, self.registry)
        self.coordinator = TaskCoordinator(store, self.events, rules=IntentRouter(TaskRouter(self.registry)),
                                           loops=self.loops, tenant_id=TENANT,
                                           planner=TaskPlanner(self.registry, None), registry=self.registry)

    def _task(self, task_id: str, content: str, capability: str, parameters: dict, *, at: float) -> None:
        self.events.create_task(TaskRecord(task_id=task_id, tenant_id=TENANT, user_id=USER, content=content,
                                           capability=capability, parameters=parameters, created_at=at),
                                source="test")

    def decide(self, text: str):
        return self.desk.handle_user_input({"user_id": USER, "content": text, "tenant_id": TENANT})

    def act(self, text: str, decision) -> list[tuple[str, dict]]:
        """What the AgentActor does with the front desk's new task."""
        request = m.agent_task(task_id="task_new", msg_id="msg_new", tenant_id=TENANT, user_id=USER, content=text,
                               pending_task_id=decision.pending_task_id, reading=decision.reading,
                               operation=decision.operation)
        return self.coordinator.on_agent_task(request)

    def waiting_untouched(self) -> bool:
        dify = self.store.get_task(TENANT, "task_dify")
        return dify.state == "waiting_parameters" and dify.parameters == {}


@pytest.fixture
def situation(store, store_config):
    return lambda lang, two=False: Situation(store, store_config, lang, two=two)


LOOP_OPERATIONS = [
    ("zh", "每周那个销售报表的任务先暂停一下", "pause"),
    ("en", "pause the weekly sales report task", "pause"),
    ("zh", "销售报表那个任务现在就跑一次", "trigger"),
    ("en", "run the sales report task now", "trigger"),
    ("zh", "每周的销售周报不需要了，删了吧", "delete"),
    ("en", "we don't need the weekly sales report anymore, delete it", "delete"),
    ("zh", "销售周报重新开起来吧", "resume"),
    ("en", "switch the weekly sales report back on", "resume"),
    ("zh", "销售周报改成每周五下午5点", "modify"),
    ("en", "move the weekly sales report to Fridays at 5pm", "modify"),
]


@pytest.mark.parametrize("two", [False, True], ids=["one waiting", "two waiting"])
@pytest.mark.parametrize("lang, said, op", LOOP_OPERATIONS)
def test_an_operation_on_a_loop_task_named_by_its_words_acts_on_it_not_on_the_waiting_task(situation, lang, said,
                                                                                            op, two):
    s = situation(lang, two)
    decision = s.decide(said)
    assert decision.action == "new_task" and decision.pending_task_id is None
    assert decision.operation == {"on": "loop", "op": op, "target": s.loop.loop_task_id,
                                  **({"schedule_text": decision.operation["schedule_text"]} if op == "modify" else {})}
    [(to, command)] = s.act(said, decision)
    assert to == "loops" and command["message_type"] == "loop_command"
    assert (command["op"], command["reference"]) == (op, s.loop.loop_task_id)
    if op == "modify":
        assert "5" in command["schedule_text"]
    assert s.waiting_untouched()


TASK_OPERATIONS = [
    ("zh", "重新执行上一个任务", "re_run_task"),
    ("en", "re-run the last task", "re_run_task"),
    ("zh", "刚才那个报表的请求再跑一遍", "re_run_task"),
    ("en", "run the report.json fetch again", "re_run_task"),
    ("zh", "结果不对，日期应该是上个月的，重新弄一下", "revise_result"),
    ("en", "the result is wrong, the date should be last month's - redo it", "revise_result"),
    ("zh", "给刚才那个报表任务备注一下：数据已经跟财务核对过", "comment_on_task"),
    ("en", "add a note to the report task: numbers checked with finance", "comment_on_task"),
]


@pytest.mark.parametrize("two", [False, True], ids=["one waiting", "two waiting"])
@pytest.mark.parametrize("lang, said, op", TASK_OPERATIONS)
def test_an_operation_on_the_finished_task_acts_on_it_not_on_the_waiting_task(situation, lang, said, op, two):
    s = situation(lang, two)
    decision = s.decide(said)
    assert decision.action == "new_task" and decision.pending_task_id is None
    assert decision.operation["on"] == "task" and decision.operation["op"] == op
    assert decision.operation["target"] == "task_done"  # the last one that ran, not the one waiting
    outs = s.act(said, decision)
    if op == "comment_on_task":
        [(to, reply)] = outs
        assert to == "reply" and reply["task_id"] == "task_done"
        assert s.store.get_task(TENANT, "task_done").meta["comments"][0]["text"]
    else:
        assert [to for to, _ in outs] == ["worker"] and outs[0][1]["capability"] == "http_request"
        again = s.store.get_task(TENANT, "task_new")
        assert again.meta.get("rerun_of" if op == "re_run_task" else "revision_of") == "task_done"
    assert s.waiting_untouched()


@pytest.mark.parametrize("lang, said", [("zh", "Dify那个先不跑了，取消吧"), ("en", "forget the dify one, cancel it")])
@pytest.mark.parametrize("two", [False, True], ids=["one waiting", "two waiting"])
def test_a_cancel_that_names_a_waiting_task_cancels_that_one(situation, lang, said, two):
    s = situation(lang, two)
    decision = s.decide(said)
    assert decision.operation == {"on": "task", "op": "cancel_task", "target": "task_dify"}
    outs = s.act(said, decision)
    assert outs[0][1]["result"]["state"] == "cancelled"
    assert s.store.get_task(TENANT, "task_dify").state == "cancelled"
    if two:
        assert s.store.get_task(TENANT, "task_url").state == "waiting_parameters"


@pytest.mark.parametrize("lang, said", [("zh", "我都设了哪些定时的任务？"), ("en", "list my scheduled tasks")])
def test_the_list_of_loop_tasks_asked_for_while_a_task_waits_is_listed(situation, lang, said):
    s = situation(lang)
    decision = s.decide(said)
    assert decision.operation == {"on": "loop", "op": "list"}
    [(to, command)] = s.act(said, decision)
    assert (to, command["op"]) == ("loops", "list")


@pytest.mark.parametrize("lang, said, key", [("zh", "哦 密钥是 app-Zt71Pq0v，你跑吧", "app-Zt71Pq0v"),
                                             ("en", "oh right, the key's app-Zt71Pq0v, go ahead", "app-Zt71Pq0v"),
                                             ("en", "app-Qw83Lm2x", "app-Qw83Lm2x")])
@pytest.mark.parametrize("two", [False, True], ids=["one waiting", "two waiting"])
def test_a_value_that_fits_the_waiting_question_still_answers_it(situation, lang, said, key, two):
    s = situation(lang, two)
    decision = s.decide(said)
    assert (decision.action, decision.task_id) == ("parameter_completion", "task_dify")
    assert s.store.get_task(TENANT, "task_dify").parameters == {"api_key": key}


@pytest.mark.parametrize("lang, said", [("zh", "https://example.com/report.json 再请求一次"),
                                        ("en", "fetch https://example.com/report.json again")])
def test_a_message_that_could_answer_or_operate_gets_a_question_naming_both(situation, lang, said):
    s = situation(lang, two=True)  # the HTTP request waits for an address; the finished one fetched this one
    decision = s.decide(said)
    assert decision.action == "clarification"
    assert [o.get("task_id") for o in decision.options] == ["task_url", None]
    assert decision.options[1]["operation"] == {"on": "task", "op": "re_run_task", "target": "task_done"}
    assert "task_url" in decision.message and "task_done" in decision.message
    picked = s.decide("2")  # the re-run, not the answer
    assert picked.action == "new_task" and picked.operation["target"] == "task_done"
    assert s.store.get_task(TENANT, "task_url").parameters == {}
    s.decide(said)
    answered = s.decide("1")
    assert (answered.action, answered.task_id) == ("parameter_completion", "task_url")
    assert s.store.get_task(TENANT, "task_url").parameters == {"url": "https://example.com/report.json"}


@pytest.mark.parametrize("lang, said", [("zh", "地址是 https://api.example.com/v1/ping"),
                                        ("en", "the endpoint is https://api.example.com/v1/ping")])
def test_with_two_tasks_waiting_a_value_goes_to_the_one_whose_question_it_fits_by_its_look(situation, lang, said):
    s = situation(lang, two=True)
    decision = s.decide(said)
    assert (decision.action, decision.task_id) == ("parameter_completion", "task_url")
    assert s.store.get_task(TENANT, "task_url").parameters == {"url": "https://api.example.com/v1/ping"}
    assert s.waiting_untouched()


@pytest.mark.parametrize("lang, said, op", [
    ("en", "the numbers were in dollars, they should be in euros, run it again", "revise_result"),
    ("zh", "上次那个结果有问题，应该用去年的数据，重做", "revise_result"),
    ("en", "the server was down, run it again", "re_run_task"),
    ("zh", "刚才网络抽风了，再重跑一遍", "re_run_task"),
])
def test_a_redo_that_says_what_should_differ_is_a_revision_and_one_with_a_reason_a_rerun(situation, lang, said, op):
    s = situation(lang)
    decision = s.decide(said)
    assert decision.operation["op"] == op and decision.operation["target"] == "task_done"
    if op == "revise_result":
        assert decision.operation["text"] == said  # the whole message is the instruction
