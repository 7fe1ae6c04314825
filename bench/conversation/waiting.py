"""Writes ``waiting.jsonl``: what people say about their other work while a task waits for an answer.

Each case's setup leaves the person with a weekly loop task (a sales report fetched every
Monday), a finished task (a report fetched once) and then a Dify workflow paused for its
``api_key``; in the second situation an HTTP request paused for its address waits too. The
message scored then operates on one of the others (pause, resume, delete, run now or change
the loop task; comment on, revise, re-run or cancel a task), asks for the list, answers the
waiting question, or could be either: an address that answers the waiting HTTP request's
question and is also the finished task's, said with "once more" (Flora should ask which).

``operates_on`` names the capability of the task an operation must land on (the finished
report's ``http_request``, or the Dify task a cancel names): a re-run of the waiting task is
the waiting task asking its question again, not the operation the person asked for. Operations
are ``must_not_claim``: a chat reply that only says it did something is counted.

    .venv/bin/python bench/conversation/waiting.py

Ids are ``<lang>-<intent>-w<number>``. Edit the cases here, never the .jsonl by hand.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "waiting.jsonl"

HTTP, DIFY = "http_request", "dify_workflow"

# the person's world before the message: a weekly loop task, a finished task, a task waiting
ZH_LOOP = "每周一早上9点帮我请求一下 https://example.com/sales/weekly.json ，这是销售周报"
EN_LOOP = "every Monday at 9am fetch https://example.com/sales/weekly.json - that's the weekly sales report"
ZH_DONE = "帮我请求一下 https://example.com/report.json"
EN_DONE = "fetch https://example.com/report.json"
ZH_DIFY = "执行Dify工作流"
EN_DIFY = "run my dify workflow"
ZH_URL = "帮我调个接口"  # a second task waiting, for its address
EN_URL = "call an api for me"
ZH_ONE = [ZH_LOOP, ZH_DONE, ZH_DIFY]
EN_ONE = [EN_LOOP, EN_DONE, EN_DIFY]
ZH_PAUSED = [ZH_LOOP, "把销售周报那个定时任务暂停", ZH_DONE, ZH_DIFY]
EN_PAUSED = [EN_LOOP, "pause the weekly sales report loop task", EN_DONE, EN_DIFY]
ZH_TWO = [ZH_LOOP, ZH_DONE, ZH_DIFY, ZH_URL]
EN_TWO = [EN_LOOP, EN_DONE, EN_DIFY, EN_URL]

CASES: list[dict] = []


def case(lang: str, category: str, say: str, setup: list[str], **expect) -> None:
    intent = category.split("/", 1)[0]
    if intent in ("task_op", "loop_op"):
        expect.setdefault("must_not_claim", True)
    CASES.append({"lang": lang, "category": category, "setup": setup, "say": say,
                  "expect": {"intent": intent, **expect}})


# --------------------------------------------------------------------------- one task waiting: zh
case("zh", "loop_op/pause", "每周那个销售报表的任务先暂停一下", ZH_ONE)
case("zh", "loop_op/pause", "下周放假，销售周报先别发了，停一段时间", ZH_ONE)
case("zh", "loop_op/trigger", "销售报表那个任务现在就跑一次", ZH_ONE)
case("zh", "loop_op/trigger", "周报等不到周一了，马上给我执行一次", ZH_ONE)
case("zh", "loop_op/delete", "每周的销售周报不需要了，删了吧", ZH_ONE)
case("zh", "loop_op/resume", "销售周报重新开起来吧", ZH_PAUSED)
case("zh", "loop_op/modify", "销售周报改成每周五下午5点", ZH_ONE)
case("zh", "loop_op/list", "我现在都设了哪些定时的东西？", ZH_ONE)
case("zh", "task_op/rerun", "重新执行上一个任务", ZH_ONE, operates_on=HTTP)
case("zh", "task_op/rerun", "刚才那个报表的请求再跑一遍", ZH_ONE, operates_on=HTTP)
case("zh", "task_op/revise", "结果不对，日期应该是上个月的，重新弄一下", ZH_ONE, operates_on=HTTP)
case("zh", "task_op/revise", "report.json 那个结果帮我整理成表格", ZH_ONE, operates_on=HTTP)
case("zh", "task_op/comment", "给刚才那个报表任务备注一下：数据已经跟财务核对过", ZH_ONE, operates_on=HTTP)
case("zh", "task_op/cancel", "Dify那个先不跑了，取消吧", ZH_ONE, operates_on=DIFY)
case("zh", "answer/api_key", "app-Qw83Lm2x", ZH_ONE, capability=DIFY, parameters={"api_key": "app-Qw83Lm2x"})
case("zh", "answer/api_key", "哦 密钥是 app-Zt71Pq0v，你跑吧", ZH_ONE, capability=DIFY,
     parameters={"api_key": "app-Zt71Pq0v"})

# --------------------------------------------------------------------------- one task waiting: en
case("en", "loop_op/pause", "pause the weekly sales report task", EN_ONE)
case("en", "loop_op/pause", "I'm off next week, can you hold the sales report thing until I'm back?", EN_ONE)
case("en", "loop_op/trigger", "run the sales report task now", EN_ONE)
case("en", "loop_op/trigger", "can't wait till Monday, fire off the weekly report right now", EN_ONE)
case("en", "loop_op/delete", "we don't need the weekly sales report anymore, get rid of it", EN_ONE)
case("en", "loop_op/resume", "switch the weekly sales report back on", EN_PAUSED)
case("en", "loop_op/modify", "move the weekly sales report to Fridays at 5pm", EN_ONE)
case("en", "loop_op/list", "remind me, what have I got running on a schedule?", EN_ONE)
case("en", "task_op/rerun", "re-run the last task", EN_ONE, operates_on=HTTP)
case("en", "task_op/rerun", "that report fetch from before, do it again please", EN_ONE, operates_on=HTTP)
case("en", "task_op/revise", "the result is wrong, the date should be last month's - redo it", EN_ONE,
     operates_on=HTTP)
case("en", "task_op/revise", "can you turn the report.json result into a table?", EN_ONE, operates_on=HTTP)
case("en", "task_op/comment", "add a note to the report task: numbers checked with finance", EN_ONE,
     operates_on=HTTP)
case("en", "task_op/cancel", "forget the dify one, cancel it", EN_ONE, operates_on=DIFY)
case("en", "answer/api_key", "app-Qw83Lm2x", EN_ONE, capability=DIFY, parameters={"api_key": "app-Qw83Lm2x"})
case("en", "answer/api_key", "oh right, the key's app-Zt71Pq0v, go ahead", EN_ONE, capability=DIFY,
     parameters={"api_key": "app-Zt71Pq0v"})

# --------------------------------------------------------------------------- two tasks waiting: zh
case("zh", "loop_op/pause", "先把销售周报停掉，最近不用看", ZH_TWO)
case("zh", "loop_op/trigger", "周报那个定时的现在手动跑一下", ZH_TWO)
case("zh", "task_op/rerun", "上一个跑完的任务再来一遍", ZH_TWO, operates_on=HTTP)
case("zh", "task_op/comment", "在report.json那个任务下面留个言：下周一再看", ZH_TWO, operates_on=HTTP)
case("zh", "answer/url", "地址是 https://api.example.com/v1/ping", ZH_TWO, capability=HTTP,
     parameters={"url": "https://api.example.com/v1/ping"})
case("zh", "answer/api_key", "key: app-Mn45Rt8y", ZH_TWO, capability=DIFY, parameters={"api_key": "app-Mn45Rt8y"})
case("zh", "clarify/ambiguous", "https://example.com/report.json 再请求一次", ZH_TWO)

# --------------------------------------------------------------------------- two tasks waiting: en
case("en", "loop_op/pause", "put the weekly sales report on hold", EN_TWO)
case("en", "loop_op/trigger", "trigger the sales report now, I need the numbers", EN_TWO)
case("en", "task_op/rerun", "run the last finished one again", EN_TWO, operates_on=HTTP)
case("en", "task_op/comment", "note on the report.json task: look again on Monday", EN_TWO, operates_on=HTTP)
case("en", "answer/url", "the endpoint is https://api.example.com/v1/ping", EN_TWO, capability=HTTP,
     parameters={"url": "https://api.example.com/v1/ping"})
case("en", "answer/api_key", "key: app-Mn45Rt8y", EN_TWO, capability=DIFY, parameters={"api_key": "app-Mn45Rt8y"})
case("en", "clarify/ambiguous", "https://example.com/report.json one more time", EN_TWO)


def numbered(cases: list[dict]) -> list[dict]:
    counts: dict[tuple[str, str], int] = defaultdict(int)
    out = []
    for c in cases:
        key = (c["lang"], c["expect"]["intent"])
        counts[key] += 1
        out.append({"id": f"{key[0]}-{key[1]}-w{counts[key]:03d}", **c})
    return out


def main() -> None:
    cases = numbered(CASES)
    OUT.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
    zh = sum(c["lang"] == "zh" for c in cases)
    print(f"{len(cases)} cases of operations while a task waits ({zh} zh, {len(cases) - zh} en)")


if __name__ == "__main__":
    main()
