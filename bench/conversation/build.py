"""Writes the conversation evaluation set: ``cases.jsonl`` (dev), ``heldout.jsonl``, ``fresh.jsonl``,
``fresh2.jsonl``, ``fresh3.jsonl``, ``fresh4.jsonl``, ``fresh5.jsonl``, ``fresh6.jsonl``,
``fresh7.jsonl``, ``fresh8.jsonl``, ``fresh9.jsonl``, ``fresh10.jsonl`` and ``fresh11.jsonl``.

The cases below are what people say to an assistant, written by hand; each is labelled with
the intent Flora should read in it. One case in five of every category of ``CASES`` goes to
the held-out file, drawn with a fixed seed, so the split is the same on every run:

    .venv/bin/python bench/conversation/build.py

``FRESH`` (at the end) is a third split, written after the held-out split had been looked at
in tuning: never tuned against, reported apart, and not part of the dev/held-out draw.
``FRESH2`` is a fourth, written the same way after the fresh split's misses had been read;
``FRESH3`` a fifth, written the same way after the second fresh split's misses had been read;
``FRESH4`` a sixth, written the same way after the third fresh split's misses had been read;
``FRESH5`` a seventh, written the same way after the fourth fresh split had been run;
``FRESH6`` an eighth, written the same way after the fifth fresh split had been read and fixed;
``FRESH7`` a ninth, written the same way after the sixth fresh split had been read and fixed;
``FRESH8`` a tenth, written the same way after the seventh fresh split had been read and fixed;
``FRESH9`` an eleventh, written the same way after the eighth, and the first with the hands
(files, Python, shell, web pages) and memory;
``FRESH10`` a twelfth, written the same way after the ninth, with the hands and memory too;
``FRESH11`` a thirteenth, written the same way after the tenth, with the hands and memory too.

Edit the cases here, never the .jsonl files by hand.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261124
HELDOUT_SHARE = 5  # one case in this many

CASES: list[dict] = []


FRESH: list[dict] = []  # the fresh split: see the end of this file
FRESH2: list[dict] = []  # the second fresh split, after it
FRESH3: list[dict] = []  # the third fresh split, after that
FRESH4: list[dict] = []  # the fourth fresh split, after that
FRESH5: list[dict] = []  # the fifth fresh split, after that
FRESH6: list[dict] = []  # the sixth fresh split, after that
FRESH7: list[dict] = []  # the seventh fresh split, after that
FRESH8: list[dict] = []  # the eighth fresh split, after that
FRESH9: list[dict] = []  # the ninth fresh split, after that
FRESH10: list[dict] = []  # the tenth fresh split, after that
FRESH11: list[dict] = []  # the eleventh fresh split, after that


def make(lang: str, category: str, say: str, setup: list[str] | None, expect: dict) -> dict:
    """One case; the intent is the category's first part ("chat/feelings" -> chat)."""
    case = {"lang": lang, "category": category}
    if setup:
        case["setup"] = setup
    case["say"] = say
    case["expect"] = {"intent": category.split("/", 1)[0], **expect}
    return case


def add(lang: str, category: str, say: str, setup: list[str] | None = None, **expect) -> None:
    """One dev/held-out case."""
    CASES.append(make(lang, category, say, setup, expect))


def many(lang: str, category: str, says: list[str], setup: list[str] | None = None, **expect) -> None:
    for say in says:
        add(lang, category, say, setup, **expect)


# --------------------------------------------------------------------------- chat
many("zh", "chat/greeting", ["你好", "早上好呀～", "嗨 在吗", "hello 小助手 👋", "晚上好，忙不忙"])
many("en", "chat/greeting", ["hi", "Good morning!", "hey there 👋", "yo, you around?", "hello again"])
many("zh", "chat/thanks", ["谢谢你", "太感谢了，帮了大忙！", "thx 辛苦啦", "好的 多谢🙏", "ok 没问题了，谢谢"])
many("en", "chat/thanks", ["thanks!", "thank you so much, that really helped", "ty", "cheers mate 🙏",
                           "perfect, thanks a lot"])
many("zh", "chat/feelings", ["今天心情不太好", "好累啊，感觉加班加不完了😩", "我有点焦虑，明天要面试",
                             "刚被老板骂了，好烦", "今天升职了！！开心🎉", "最近老是失眠，怎么办"])
many("en", "chat/feelings", ["I'm feeling kind of down today", "ugh, so tired of this week 😩",
                             "I got the job!!! 🎉", "I'm nervous about my exam tomorrow",
                             "honestly I feel a bit lonely lately", "my cat died yesterday"])
many("zh", "chat/smalltalk", ["你叫什么名字呀", "你喜欢吃火锅吗", "周末有什么好玩的推荐吗", "你觉得猫好还是狗好",
                              "今天是星期几来着", "你会做梦吗"])
many("en", "chat/smalltalk", ["what's your favourite movie?", "do you like music?", "cats or dogs?",
                              "any fun plans for the weekend?", "do you ever sleep lol", "what's up"])
many("zh", "chat/joke", ["讲个笑话", "给我讲个冷笑话呗😂", "来个程序员的段子"])
many("en", "chat/joke", ["tell me a joke", "got any dad jokes?", "make me laugh pls"])
many("zh", "chat/knowledge", ["光速是多少", "为什么天空是蓝色的", "长城有多长", "李白是哪个朝代的",
                              "Python里list和tuple有什么区别", "什么是机器学习，简单说说"])
many("en", "chat/knowledge", ["who wrote Hamlet?", "why is the sky blue", "what's the capital of Australia?",
                              "how does a vaccine work, in simple words", "what's the difference between TCP and UDP",
                              "when did World War 2 end?"])
add("en", "chat/knowledge", "what is the capital of France?", answer_contains=["Paris"])
add("zh", "chat/knowledge", "中国的首都是哪里", answer_contains=["北京"])
add("zh", "chat/arithmetic", "17乘以23等于多少", answer_contains=["391"])
add("zh", "chat/arithmetic", "帮我算一下 125+378", answer_contains=["503"])
add("zh", "chat/arithmetic", "1000除以8是多少？", answer_contains=["125"])
add("zh", "chat/arithmetic", "三百减去一百二十七", answer_contains=["173", "一百七十三"])
add("zh", "chat/arithmetic", "12的平方", answer_contains=["144"])
add("en", "chat/arithmetic", "what's 17 * 23?", answer_contains=["391"])
add("en", "chat/arithmetic", "quick one: 256 + 512", answer_contains=["768"])
add("en", "chat/arithmetic", "how much is 15% of 200", answer_contains=["30"])
add("en", "chat/arithmetic", "what is 144 divided by 12", answer_contains=["12", "twelve"])
add("en", "chat/arithmetic", "9 squared?", answer_contains=["81"])
many("zh", "chat/advice", ["怎么提高写代码的效率", "第一次带团队，有什么建议吗", "想学英语，从哪开始比较好",
                           "跟同事吵架了，该不该先道歉"])
many("en", "chat/advice", ["how can I get better at public speaking?", "any tips for a first job interview?",
                           "should I learn Rust or Go first?", "how do I stop procrastinating"])
add("zh", "chat/translation", "把“今天天气很好”翻译成英文", answer_contains=["weather"])
add("zh", "chat/translation", "thank you very much 用中文怎么说", answer_contains=["谢谢"])
add("zh", "chat/translation", "帮我把这句翻成日语：我明天去东京")
add("en", "chat/translation", "how do you say 'good morning' in Chinese?", answer_contains=["早上好", "早安"])
add("en", "chat/translation", "translate 'I love you' into French", answer_contains=["t'aime", "t’aime"])
add("en", "chat/translation", "what does 加油 mean?")
many("zh", "chat/writing", ["帮我写一首关于春天的短诗", "帮我写个请假条，明天发烧去医院",
                            "给客户写一封道歉邮件的草稿，发货延迟了三天", "帮我润色一下这句话：我们的产品非常很好用"])
many("en", "chat/writing", ["write a short poem about autumn", "help me write a birthday message for my mum",
                            "can you draft a polite email declining a meeting?",
                            "make this sound more professional: hey guys the thing is broken again"])

# --------------------------------------------------------------------------- task: one capability now
HTTP = "http_request"
add("zh", "task/http_request", "帮我请求一下 https://api.example.com/v1/health", capability=HTTP,
    parameters={"url": "https://api.example.com/v1/health"})
add("zh", "task/http_request", "GET 一下 http://localhost:8080/metrics 看看返回啥", capability=HTTP,
    parameters={"url": "http://localhost:8080/metrics"})
add("zh", "task/http_request", "访问这个网址 https://example.com/report.json 把内容给我", capability=HTTP,
    parameters={"url": "https://example.com/report.json"})
add("zh", "task/http_request", "调一下接口 https://httpbin.org/get", capability=HTTP,
    parameters={"url": "https://httpbin.org/get"})
add("zh", "task/http_request", "麻烦用POST请求 https://hooks.example.com/notify ，body是 {\"text\": \"部署完成\"}",
    capability=HTTP, parameters={"url": "https://hooks.example.com/notify", "method": "POST"})
add("zh", "task/http_request", "看下 https://status.example.org 现在能不能打开", capability=HTTP,
    parameters={"url": "https://status.example.org"})
add("zh", "task/http_request", "帮我ping一下这个api：http://10.0.0.5:9000/api/ping", capability=HTTP,
    parameters={"url": "http://10.0.0.5:9000/api/ping"})
add("zh", "task/http_request", "拉取一下https://example.com/data.csv", capability=HTTP,
    parameters={"url": "https://example.com/data.csv"})
add("zh", "task/http_request", "我想调用一个web接口", capability=HTTP)
add("en", "task/http_request", "fetch https://api.example.com/v1/users", capability=HTTP,
    parameters={"url": "https://api.example.com/v1/users"})
add("en", "task/http_request", "can you hit http://localhost:3000/health and tell me the status code?",
    capability=HTTP, parameters={"url": "http://localhost:3000/health"})
add("en", "task/http_request", "download https://example.com/report.json", capability=HTTP,
    parameters={"url": "https://example.com/report.json"})
add("en", "task/http_request", "send a DELETE to https://api.example.com/items/42", capability=HTTP,
    parameters={"url": "https://api.example.com/items/42", "method": "DELETE"})
add("en", "task/http_request", "post {\"ok\": true} to https://hooks.example.com/ci please", capability=HTTP,
    parameters={"url": "https://hooks.example.com/ci", "method": "POST"})
add("en", "task/http_request", "could you maybe check whether https://example.org responds?", capability=HTTP,
    parameters={"url": "https://example.org"})
add("en", "task/http_request", "GET https://httpbin.org/json", capability=HTTP,
    parameters={"url": "https://httpbin.org/json"})
add("en", "task/http_request", "whats on http://intranet.local/status rn", capability=HTTP,
    parameters={"url": "http://intranet.local/status"})
add("en", "task/http_request", "I need to call a REST endpoint", capability=HTTP)

DQ = "data_query"
many("zh", "task/data_query", ["上个月的销售额是多少", "查一下昨天新注册了多少用户", "帮我看看今年每个季度的营收",
                               "销售额最高的前10个产品是哪些", "数据库里一共有多少个客户",
                               "统计一下北京地区上周的订单量", "查下用户表里最近7天活跃的人数",
                               "去年12月的revenue多少来着"], capability=DQ)
many("en", "task/data_query", ["what were our sales last month?", "how many users signed up yesterday",
                               "show me revenue by region for Q3", "top 5 customers by total spend",
                               "query the database: how many active users do we have",
                               "what's the average order value this year?", "count the rows in the users table",
                               "pull monthly revenue for 2025 from the db"], capability=DQ)
add("en", "task/data_query", "run this SQL: SELECT count(*) FROM users", capability=DQ,
    parameters={"sql": "SELECT count(*) FROM users"})
add("zh", "task/data_query", "执行SQL：SELECT name, total FROM sales LIMIT 5", capability=DQ,
    parameters={"sql": "SELECT name, total FROM sales LIMIT 5"})

DIFY = "dify_workflow"
many("zh", "task/dify_workflow", ["执行Dify工作流", "帮我跑一下dify的那个工作流", "触发一下工作流",
                                  "运行 dify workflow，输入 topic=新能源汽车", "启动我们在Dify上搭的客服流程"],
     capability=DIFY)
many("en", "task/dify_workflow", ["run my dify workflow", "trigger the Dify app please",
                                  "start the onboarding workflow on Dify", "kick off the dify flow with query=pricing",
                                  "execute the workflow"], capability=DIFY)
add("zh", "task/dify_workflow", "用 app-Xk29sLq 这个key跑一下dify工作流", capability=DIFY,
    parameters={"api_key": "app-Xk29sLq"})
add("en", "task/dify_workflow", "run the dify workflow with key app-7hQ2mZ", capability=DIFY,
    parameters={"api_key": "app-7hQ2mZ"})

EXP = "ask_experts"
many("zh", "task/ask_experts", ["请专家们讨论一下：小公司该不该上微服务", "找几个专家帮我评估下这个创业想法：做宠物社交app",
                                "让专家组分析一下明年房价走势", "问问专家：我们的数据库该选PostgreSQL还是MongoDB"],
     capability=EXP)
many("en", "task/ask_experts", ["ask the experts whether we should rewrite our backend in Rust",
                                "get the expert panel's opinion on remote vs office work",
                                "have your experts debate: monorepo or polyrepo?",
                                "I'd like a few expert views on pricing our SaaS at $20/month"], capability=EXP)

# --------------------------------------------------------------------------- plan: several steps
many("zh", "plan/multi_step", [
    "先请求 https://api.example.com/a 和 https://api.example.com/b，然后把两个结果汇总一下",
    "查一下上个月销售额，再让专家们分析下原因",
    "抓取 https://example.com/news.json ，然后让专家点评一下",
    "帮我查本周订单量和上周订单量，对比一下",
    "先跑dify工作流，跑完再调用 https://hooks.example.com/done 通知一下",
    "分别获取 https://a.example.com/status 和 https://b.example.com/status ，最后告诉我哪个挂了",
])
many("en", "plan/multi_step", [
    "fetch https://api.example.com/a and https://api.example.com/b, then summarise both",
    "get last month's revenue from the database and then ask the experts what it means",
    "call https://example.com/prices.json, then post the result to https://hooks.example.com/prices",
    "pull this week's and last week's signups and compare them",
    "first run the dify workflow, then notify https://hooks.example.com/ci when it's done",
    "check https://a.example.com/health and https://b.example.com/health and tell me which one is down",
])

# --------------------------------------------------------------------------- loop: new schedules
add("zh", "loop/reminder", "下午3点半提醒我开会", schedule="today at 15:30")
add("zh", "loop/reminder", "明天早上8点叫我起床", schedule="tomorrow at 08:00")
add("zh", "loop/reminder", "15:30提醒我给妈妈打电话", schedule="today at 15:30")
add("zh", "loop/reminder", "晚上十点提醒我吃药💊", schedule="today at 22:00")
add("zh", "loop/reminder", "提醒我喝水")
add("zh", "loop/reminder", "周五下午5点提醒我交周报", schedule="Friday at 17:00")
add("en", "loop/reminder", "remind me at 15:30 to call the bank", schedule="today at 15:30")
add("en", "loop/reminder", "remind me tomorrow at 9am to send the invoice", schedule="tomorrow at 09:00")
add("en", "loop/reminder", "set a reminder for 6pm: pick up the kids", schedule="today at 18:00")
add("en", "loop/reminder", "pls remind me to take my meds at 10 pm", schedule="today at 22:00")
add("en", "loop/reminder", "remind me to stretch")
add("en", "loop/reminder", "can you remind me on Friday at 5pm to submit the timesheet", schedule="Friday at 17:00")
add("zh", "loop/recurring", "每天早上9点提醒我站会", schedule="every day at 09:00")
add("zh", "loop/recurring", "每周一上午10点抓取一下 https://example.com/weekly.json",
    capability=HTTP, schedule="every Monday at 10:00")
add("zh", "loop/recurring", "每个工作日下午6点提醒我写日报", schedule="every weekday at 18:00")
add("zh", "loop/recurring", "每小时检查一次 https://status.example.com", capability=HTTP, schedule="every hour")
add("zh", "loop/recurring", "每天晚上11点查一下当天的销售额", capability=DQ, schedule="every day at 23:00")
add("zh", "loop/recurring", "以后每周五提醒我备份数据", schedule="every Friday")
add("en", "loop/recurring", "every day at 9:00 remind me about standup", schedule="every day at 09:00")
add("en", "loop/recurring", "every Monday at 10:00 fetch https://example.com/weekly.json", capability=HTTP,
    schedule="every Monday at 10:00")
add("en", "loop/recurring", "check https://status.example.com every 30 minutes", capability=HTTP,
    schedule="every 30 minutes")
add("en", "loop/recurring", "each morning at 8 pull yesterday's sales from the db", capability=DQ,
    schedule="every day at 08:00")
add("en", "loop/recurring", "remind me every weekday at 6pm to log my hours", schedule="every weekday at 18:00")
add("en", "loop/recurring", "every hour, ping http://localhost:8080/health", capability=HTTP, schedule="every hour")
add("zh", "loop/relative", "20分钟后提醒我看一下构建", schedule="in 20 minutes")
add("zh", "loop/relative", "半小时后叫我一声", schedule="in 30 minutes")
add("zh", "loop/relative", "10分钟后检查一下 https://ci.example.com/build/42", capability=HTTP,
    schedule="in 10 minutes")
add("en", "loop/relative", "in 20 minutes check the build", schedule="in 20 minutes")
add("en", "loop/relative", "remind me in an hour to take the pizza out", schedule="in 1 hour")
add("en", "loop/relative", "ping me in 5 min to join the call", schedule="in 5 minutes")

# --------------------------------------------------------------------------- task_op: an existing task
ZH_TASK = ["执行Dify工作流"]
EN_TASK = ["run my dify workflow"]
ZH_DONE = ["帮我请求一下 https://example.com/report.json"]
EN_DONE = ["fetch https://example.com/report.json"]
many("zh", "task_op/cancel", ["取消刚才的任务", "算了，不用跑了，取消吧", "把这个任务停掉", "取消它"], setup=ZH_TASK)
many("en", "task_op/cancel", ["cancel it", "never mind, stop that task", "abort the last task", "cancel that pls"],
     setup=EN_TASK)
many("zh", "task_op/revise", ["把结果改成英文", "结果里的金额换成欧元", "改一下：只要前5条", "重新整理一下，用表格展示"],
     setup=ZH_DONE)
many("en", "task_op/revise", ["revise it: in euros", "can you redo that but only the first 5 items?",
                              "change the result to Chinese", "make the result shorter"], setup=EN_DONE)
many("zh", "task_op/comment", ["评论：这个结果不错", "给刚才的任务加个备注：下周再看", "备注一下，这个数据有问题"],
     setup=ZH_DONE)
many("en", "task_op/comment", ["comment on it: looks good", "add a note to the last task: check again monday",
                               "note on that task - numbers look off"], setup=EN_DONE)
many("zh", "task_op/rerun", ["重新执行", "再跑一次", "刚才那个再试一下"], setup=ZH_DONE)
many("en", "task_op/rerun", ["re-run it", "run that again", "try the last one again pls"], setup=EN_DONE)

# --------------------------------------------------------------------------- loop_op: the person's loop tasks
ZH_LOOP = ["每天早上9点提醒我站会"]
EN_LOOP = ["every day at 9:00 remind me about standup"]
many("zh", "loop_op/list", ["我有哪些定时任务", "列出我的提醒", "看看我设置了哪些循环任务"], setup=ZH_LOOP)
many("en", "loop_op/list", ["list my reminders", "what loop tasks do I have?", "show my scheduled tasks"],
     setup=EN_LOOP)
many("zh", "loop_op/pause", ["暂停站会提醒", "先把那个每天的提醒停一下"], setup=ZH_LOOP)
many("en", "loop_op/pause", ["pause my standup reminder", "hold the daily reminder for now"], setup=EN_LOOP)
many("zh", "loop_op/resume", ["恢复站会提醒", "把暂停的提醒重新打开"], setup=ZH_LOOP + ["暂停站会提醒"])
many("en", "loop_op/resume", ["resume my standup reminder", "turn the standup reminder back on"],
     setup=EN_LOOP + ["pause my standup reminder"])
many("zh", "loop_op/delete", ["删除站会提醒", "不需要那个每天的提醒了，删掉吧"], setup=ZH_LOOP)
many("en", "loop_op/delete", ["delete my standup reminder", "get rid of the daily reminder"], setup=EN_LOOP)
many("zh", "loop_op/trigger", ["现在就执行一次站会提醒", "立刻触发一下那个定时任务"], setup=ZH_LOOP)
many("en", "loop_op/trigger", ["run my standup reminder now", "trigger the daily reminder right now"],
     setup=EN_LOOP)

# --------------------------------------------------------------------------- status: Flora itself
many("zh", "status/abilities", ["你能做什么", "你有哪些功能", "你都会些啥？", "介绍一下你自己能干嘛"])
many("en", "status/abilities", ["what can you do?", "help", "what are your capabilities", "what kind of stuff can you help with?"])
many("zh", "status/state", ["/status", "你现在在帮我做什么", "我有没有正在运行的任务", "我的任务进行到哪一步了"],
     must_not_claim=True)
many("en", "status/state", ["/status", "what are you doing for me?", "is anything still running?",
                            "any tasks waiting on me?"], must_not_claim=True)
many("zh", "status/history", ["我今天跑了几个任务", "我最近的任务有哪些"], must_not_claim=True)
many("en", "status/history", ["how many tasks have I run today?", "show me my recent tasks"], must_not_claim=True)

# --------------------------------------------------------------------------- command: the system
many("zh", "command/clear", ["清空我的聊天记录", "清除历史", "把我们的对话记录删了吧"])
many("en", "command/clear", ["clear my history", "/clear", "wipe our conversation history"])
many("zh", "command/switch_model", ["切换到gpt-4模型", "换个大一点的模型", "把模型改成 qwen2.5-7b"])
many("en", "command/switch_model", ["switch the model to gpt-4o", "use a bigger model please", "/model qwen2.5-7b"])
many("zh", "command/shutdown", ["关机", "把系统关掉", "停止flora服务"])
many("en", "command/shutdown", ["shut down", "/shutdown", "please stop the flora server"])

# --------------------------------------------------------------------------- unsupported: no capability
NO = {"must_not_claim": True}
many("zh", "unsupported/orders", ["我的订单到哪了", "帮我查一下订单号 20261118003 的状态", "退掉我昨天买的那双鞋"], **NO)
many("en", "unsupported/orders", ["where is my order?", "what's the status of order #A-10442",
                                  "cancel my amazon order from yesterday"], **NO)
many("zh", "unsupported/email", ["帮我看看有没有新邮件", "给张经理发封邮件说我明天请假", "我邮箱里有几封未读"], **NO)
many("en", "unsupported/email", ["check my inbox", "email Sarah that I'll be late",
                                 "did I get a reply from HR?"], **NO)
many("zh", "unsupported/calendar", ["我明天有什么会", "帮我在日历上约周三下午和李总开会"], **NO)
many("en", "unsupported/calendar", ["what's on my calendar tomorrow?", "book a meeting with Tom on Thursday at 2"], **NO)
many("zh", "unsupported/weather", ["今天北京天气怎么样", "明天上海会下雨吗"], **NO)
many("en", "unsupported/weather", ["what's the weather like today?", "will it rain in London tomorrow?"], **NO)
many("zh", "unsupported/flights", ["帮我订一张明天去深圳的机票", "CA1234航班延误了吗"], **NO)
many("en", "unsupported/flights", ["book me a flight to Berlin next Friday", "is flight BA287 on time?"], **NO)
many("zh", "unsupported/bank", ["我银行卡里还有多少钱", "给房东转账3000块"], **NO)
many("en", "unsupported/bank", ["what's my bank balance?", "transfer $200 to my savings account"], **NO)
many("zh", "unsupported/delivery", ["我的快递到哪了，单号SF1234567890", "外卖怎么还没到"], **NO)
many("en", "unsupported/delivery", ["track my package 1Z999AA10123456784", "when will my DHL parcel arrive?"], **NO)
many("zh", "unsupported/servers", ["服务器磁盘还剩多少空间", "帮我重启一下生产环境的nginx"], **NO)
many("en", "unsupported/servers", ["how much disk space is left on our prod server?",
                                   "restart the web server on box-3"], **NO)
many("zh", "unsupported/tickets", ["帮我在Jira上开个bug单", "我提的工单处理了没有"], **NO)
many("en", "unsupported/tickets", ["open a ticket for the login bug", "what's the status of my support ticket?"],
     **NO)

# --------------------------------------------------------------------------- clarify: two close readings
many("zh", "clarify/ambiguous", ["发出去", "处理一下", "帮我弄一下那个", "跑一下", "查一下", "就按之前说的办"])
many("en", "clarify/ambiguous", ["send it", "do the thing", "run it", "check it", "can you handle that?",
                                 "same as before"])

# --------------------------------------------------------------------------- answer: a paused task's question
add("zh", "answer/api_key", "app-Xk29sLqP0", setup=["执行Dify工作流"], capability=DIFY,
    parameters={"api_key": "app-Xk29sLqP0"})
add("zh", "answer/api_key", "key是 app-7hQ2mZ9w", setup=["帮我跑一下dify的那个工作流"], capability=DIFY,
    parameters={"api_key": "app-7hQ2mZ9w"})
add("zh", "answer/api_key", "api_key=app-aa11bb22", setup=["触发一下工作流"], capability=DIFY,
    parameters={"api_key": "app-aa11bb22"})
add("zh", "answer/api_key", "好的，用这个：app-ZZ90xy", setup=["运行dify工作流"], capability=DIFY,
    parameters={"api_key": "app-ZZ90xy"})
add("en", "answer/api_key", "app-Xk29sLqP0", setup=["run my dify workflow"], capability=DIFY,
    parameters={"api_key": "app-Xk29sLqP0"})
add("en", "answer/api_key", "the key is app-7hQ2mZ9w", setup=["trigger the Dify app please"], capability=DIFY,
    parameters={"api_key": "app-7hQ2mZ9w"})
add("en", "answer/api_key", "api_key=app-aa11bb22", setup=["execute the dify workflow"], capability=DIFY,
    parameters={"api_key": "app-aa11bb22"})
add("en", "answer/api_key", "sure, it's app-ZZ90xy", setup=["start the dify workflow"], capability=DIFY,
    parameters={"api_key": "app-ZZ90xy"})
add("zh", "answer/url", "https://api.example.com/v1/ping", setup=["我想调用一个web接口"], capability=HTTP,
    parameters={"url": "https://api.example.com/v1/ping"})
add("zh", "answer/url", "地址是 http://localhost:8080/health", setup=["帮我发个http请求"], capability=HTTP,
    parameters={"url": "http://localhost:8080/health"})
add("en", "answer/url", "https://api.example.com/v1/ping", setup=["I need to call a REST endpoint"], capability=HTTP,
    parameters={"url": "https://api.example.com/v1/ping"})
add("en", "answer/url", "use http://localhost:8080/health", setup=["make an http request for me"], capability=HTTP,
    parameters={"url": "http://localhost:8080/health"})
add("zh", "answer/time", "下午3点", setup=["提醒我喝水"])
add("zh", "answer/time", "明天早上9点吧", setup=["提醒我交报告"])
add("en", "answer/time", "at 3pm", setup=["remind me to drink water"])
add("en", "answer/time", "tomorrow 9am", setup=["remind me to send the report"])


# =========================================================================== FRESH
# A third split, written after the held-out split had been used in tuning, from how people
# talk rather than from Flora's rules; never tuned against, reported apart. Not part of the
# dev/held-out draw above: these go to fresh.jsonl only, with ids like zh-chat-f001.


def fresh(lang: str, category: str, say: str, setup: list[str] | None = None, **expect) -> None:
    """One fresh case."""
    FRESH.append(make(lang, category, say, setup, expect))


# --------------------------------------------------------------------------- fresh: chat
fresh("zh", "chat/greeting", "下午好呀，好久不见～")
fresh("en", "chat/greeting", "Good evening! hope you're doing well 🙂")
fresh("zh", "chat/thanks", "收到，感谢感谢🙏 你真靠谱")
fresh("en", "chat/thanks", "appreciate it, you're a lifesaver")
fresh("zh", "chat/feelings", "唉，和对象分手了，心里空落落的")
fresh("zh", "chat/feelings", "今天终于把驾照考过了！！！")
fresh("en", "chat/feelings", "I'm so stressed, deadline is tomorrow and I haven't even started 😭")
fresh("zh", "chat/smalltalk", "你平时无聊的时候都干嘛")
fresh("en", "chat/smalltalk", "if you could live anywhere, where would it be?")
fresh("zh", "chat/joke", "无聊死了，说个段子听听呗")
fresh("en", "chat/joke", "know any good puns?")
fresh("zh", "chat/knowledge", "水的化学式是什么", answer_contains=["H2O", "H₂O"])
fresh("en", "chat/knowledge", "which planet is the largest in our solar system?", answer_contains=["Jupiter"])
fresh("en", "chat/knowledge", "what's photosynthesis? explain like I'm 5")
fresh("zh", "chat/arithmetic", "帮忙算下 48×25 是多少", answer_contains=["1200", "1,200"])
fresh("zh", "chat/arithmetic", "一打鸡蛋12个，买5打一共多少个", answer_contains=["60"])
fresh("en", "chat/arithmetic", "if I split a $96 bill between 4 people how much does each pay?",
      answer_contains=["24"])
fresh("zh", "chat/advice", "工作三年了想跳槽，但又怕新环境不适应，你怎么看")
fresh("en", "chat/advice", "my roommate never does the dishes, how do I bring it up without a fight?")
fresh("zh", "chat/translation", "“好久不见”用英语怎么说比较地道", answer_contains=["long time no see"])
fresh("en", "chat/translation", "what's 'thank you' in Japanese?", answer_contains=["ありがとう", "arigat"])
fresh("zh", "chat/writing", "帮我写段朋友圈文案，周末去海边玩了，轻松一点的")
fresh("en", "chat/writing", "can u write a quick thank-you note to my team for shipping the release on time")

# --------------------------------------------------------------------------- fresh: task
fresh("zh", "task/http_request",
      "麻烦帮我调用下这个接口看看返回什么 https://api.example.com/v2/products?page=2 ，我怀疑分页有问题", capability=HTTP, parameters={"url": "https://api.example.com/v2/products?page=2"})
fresh("zh", "task/http_request", "这个endpoint帮我request一下：http://192.168.1.20:5000/api/stats 看看是不是200",
      capability=HTTP, parameters={"url": "http://192.168.1.20:5000/api/stats"})
fresh("en", "task/http_request", "hey can u quickly curl https://api.example.com/version for me", capability=HTTP,
      parameters={"url": "https://api.example.com/version"})
fresh("en", "task/http_request", "Please send a POST request to https://api.example.com/v1/jobs with the body "
      "{\"name\": \"nightly\"}.", capability=HTTP,
      parameters={"url": "https://api.example.com/v1/jobs", "method": "POST"})
fresh("zh", "task/data_query", "老板要数据：这周每天的订单数，帮我从库里拉一下", capability=DQ)
fresh("zh", "task/data_query", "今年截至目前公司的总营收是多少", capability=DQ)
fresh("en", "task/data_query", "how many people signed up for our product in March?", capability=DQ)
fresh("en", "task/data_query", "hi! our finance team needs the total revenue for Q2 broken down by month, could you "
      "pull that from the database when you get a chance? thanks 🙏", capability=DQ)
fresh("zh", "task/dify_workflow", "dify上那个翻译流程帮我跑一下，文本是“欢迎光临”", capability=DIFY)
fresh("en", "task/dify_workflow", "need the weekly-report workflow on dify run, pls", capability=DIFY)
fresh("en", "task/dify_workflow", "can you fire off our Dify workflow? key is app-Qm81tTz", capability=DIFY,
      parameters={"api_key": "app-Qm81tTz"})
fresh("zh", "task/ask_experts", "我在纠结要不要辞职去读研，能不能叫专家团帮我分析分析", capability=EXP)
fresh("zh", "task/ask_experts", "让专家们从技术和成本两个角度讨论下：要不要把服务迁到k8s", capability=EXP)
fresh("en", "task/ask_experts", "get a couple of expert opinions on whether we should open an office in Singapore",
      capability=EXP)

# --------------------------------------------------------------------------- fresh: plan
fresh("zh", "plan/multi_step", "先从数据库查下上季度各地区的销售额，然后把结果POST到 https://hooks.example.com/report")
fresh("en", "plan/multi_step", "grab https://api.example.com/rates.json and then get the expert panel's take on "
      "whether now is a good time to buy euros")

# --------------------------------------------------------------------------- fresh: loop
fresh("zh", "loop/reminder", "今晚8点提醒我给狗狗喂药🐶", schedule="today at 20:00")
fresh("en", "loop/reminder", "pls remind me tmrw 8am to 交房租 🏠", schedule="tomorrow at 08:00")
fresh("zh", "loop/recurring", "每周三下午两点提醒我交水电费", schedule="every Wednesday at 14:00")
fresh("en", "loop/recurring", "every night at 11pm, pull today's order count from the database", capability=DQ,
      schedule="every day at 23:00")
fresh("zh", "loop/relative", "过15分钟喊我一下，要去接孩子", schedule="in 15 minutes")
fresh("en", "loop/relative", "remind me in 45 mins to check the oven", schedule="in 45 minutes")

# --------------------------------------------------------------------------- fresh: task_op (same setups as above)
fresh("zh", "task_op/cancel", "哎 先别跑了，把它撤了吧", setup=ZH_TASK)
fresh("en", "task_op/cancel", "actually scratch that, cancel the workflow", setup=EN_TASK)
fresh("zh", "task_op/revise", "结果太长了，帮我精简成三句话", setup=ZH_DONE)
fresh("en", "task_op/revise", "could you redo the result as a bullet list?", setup=EN_DONE)
fresh("zh", "task_op/comment", "给这个任务留个言：数据已经跟财务核对过了", setup=ZH_DONE)
fresh("zh", "task_op/rerun", "刚才网络抽风了，再重跑一遍", setup=ZH_DONE)
fresh("en", "task_op/rerun", "hmm that didn't work, give it another go", setup=EN_DONE)

# --------------------------------------------------------------------------- fresh: loop_op (same setups as above)
fresh("zh", "loop_op/list", "我设的那些定时提醒都给我看看", setup=ZH_LOOP)
fresh("en", "loop_op/pause", "I'm on holiday next week, can you pause the standup reminder?", setup=EN_LOOP)
fresh("zh", "loop_op/resume", "我回来了，站会提醒重新开起来吧", setup=ZH_LOOP + ["暂停站会提醒"])
fresh("en", "loop_op/delete", "I don't do standups anymore, please remove that reminder", setup=EN_LOOP)
fresh("zh", "loop_op/trigger", "站会那个提醒，现在手动跑一次", setup=ZH_LOOP)

# --------------------------------------------------------------------------- fresh: status
fresh("zh", "status/abilities", "你除了聊天还能干撒？")
fresh("en", "status/abilities", "so what exactly are you able to do for me?")
fresh("zh", "status/state", "现在后台有任务在跑吗", must_not_claim=True)
fresh("en", "status/state", "do I have anything pending rn?", must_not_claim=True)
fresh("en", "status/history", "which tasks did I run yesterday?", must_not_claim=True)

# --------------------------------------------------------------------------- fresh: command
fresh("zh", "command/clear", "把咱俩之前聊的都清掉，重新开始吧")
fresh("en", "command/clear", "can you wipe the chat so far? I want a clean slate")
fresh("zh", "command/switch_model", "模型换成deepseek吧")
fresh("en", "command/switch_model", "can you switch over to llama3-70b?")
fresh("zh", "command/shutdown", "把flora关了吧，今天用不上了")
fresh("en", "command/shutdown", "turn yourself off pls")

# --------------------------------------------------------------------------- fresh: unsupported
fresh("zh", "unsupported/orders", "拼多多那个订单帮我取消掉", **NO)
fresh("zh", "unsupported/orders", "我在淘宝买的耳机想退货，帮我申请一下", **NO)
fresh("en", "unsupported/orders", "did my order from last Tuesday ship yet?", **NO)
fresh("zh", "unsupported/email", "帮我回一下客户那封邮件，说周五前给报价", **NO)
fresh("en", "unsupported/email", "any new emails from my boss today?", **NO)
fresh("zh", "unsupported/calendar", "把下周一上午的会改到下午三点", **NO)
fresh("en", "unsupported/calendar", "am I free Thursday afternoon?", **NO)
fresh("zh", "unsupported/weather", "这周末杭州天气咋样，要不要带伞", **NO)
fresh("en", "unsupported/weather", "is it gonna be cold in NYC tomorrow?", **NO)
fresh("en", "unsupported/weather", "do I need an umbrella today?", **NO)
fresh("zh", "unsupported/flights", "帮我查下明早北京飞成都最早的航班", **NO)
fresh("en", "unsupported/flights", "can you move my flight to an earlier one?", **NO)
fresh("zh", "unsupported/bank", "信用卡这个月账单多少钱", **NO)
fresh("en", "unsupported/bank", "how much did I spend on my credit card last month?", **NO)
fresh("zh", "unsupported/delivery", "美团外卖超时半小时了，帮我催一下", **NO)
fresh("en", "unsupported/delivery", "where's my UPS package? tracking number 1Z84X6E20392817461", **NO)
fresh("zh", "unsupported/servers", "看看线上那台机器CPU是不是又满了", **NO)
fresh("en", "unsupported/servers", "can you roll back the deployment on prod-api-2?", **NO)
fresh("zh", "unsupported/tickets", "在禅道上给前端提个bug：登录页样式乱了", **NO)
fresh("en", "unsupported/tickets", "assign JIRA-4521 to Mike and bump the priority", **NO)

# --------------------------------------------------------------------------- fresh: clarify
fresh("zh", "clarify/ambiguous", "把那个文件再改一下发给他")
fresh("en", "clarify/ambiguous", "can you update it with the new numbers?")

# --------------------------------------------------------------------------- fresh: answer (setups as above)
fresh("zh", "answer/api_key", "密钥发你：app-Lp3vN8qR", setup=["执行Dify工作流"], capability=DIFY,
      parameters={"api_key": "app-Lp3vN8qR"})
fresh("en", "answer/api_key", "oh right, here you go: app-Wc72Hd5k", setup=["run my dify workflow"], capability=DIFY,
      parameters={"api_key": "app-Wc72Hd5k"})
fresh("en", "answer/url", "it's https://api.example.com/v3/status", setup=["I need to call a REST endpoint"],
      capability=HTTP, parameters={"url": "https://api.example.com/v3/status"})
fresh("zh", "answer/time", "今晚9点吧", setup=["提醒我交报告"])
fresh("en", "answer/time", "make it 4:30pm", setup=["remind me to drink water"])


# =========================================================================== FRESH2
# A fourth split, written after the fresh split's misses had been read and fixed, the same way:
# from how people talk, without reading Flora's rules first. These go to fresh2.jsonl only, with
# ids like zh-chat-g001.


def fresh2(lang: str, category: str, say: str, setup: list[str] | None = None, **expect) -> None:
    """One case of the second fresh split."""
    FRESH2.append(make(lang, category, say, setup, expect))


# --------------------------------------------------------------------------- fresh2: chat
fresh2("zh", "chat/greeting", "哈喽哈喽，周一快乐呀")
fresh2("en", "chat/greeting", "morning! coffee's kicking in slowly ☕")
fresh2("zh", "chat/thanks", "懂了懂了，谢啦，讲得挺清楚的")
fresh2("en", "chat/thanks", "cool cool, thank u!!")
fresh2("zh", "chat/feelings", "考研又没上岸，不知道还要不要再坚持一年")
fresh2("zh", "chat/feelings", "今天被同事抢了功劳，气死我了")
fresh2("en", "chat/feelings", "my cat passed away this morning. I don't really know what to do with myself")
fresh2("en", "chat/feelings", "FINALLY got the job offer!!! 🎉🎉")
fresh2("zh", "chat/smalltalk", "你觉得猫和狗哪个更好养")
fresh2("en", "chat/smalltalk", "what's your favourite season and why")
fresh2("zh", "chat/joke", "讲个程序员才懂的笑话")
fresh2("en", "chat/joke", "tell me something funny, rough day")
fresh2("zh", "chat/knowledge", "中国的首都是哪个城市", answer_contains=["北京"])
fresh2("en", "chat/knowledge", "who wrote Pride and Prejudice?", answer_contains=["Austen"])
fresh2("en", "chat/knowledge", "how does a rainbow form? couple of sentences is fine")
fresh2("zh", "chat/arithmetic", "15的平方是多少", answer_contains=["225"])
fresh2("zh", "chat/arithmetic", "一件衣服原价200，打八折是多少钱", answer_contains=["160"])
fresh2("en", "chat/arithmetic", "quick one: 144 divided by 12?", answer_contains=["12"])
fresh2("en", "chat/arithmetic", "what's 15% of 80", answer_contains=["12"])
fresh2("zh", "chat/advice", "第一次去女朋友家见家长，带点什么礼物比较好")
fresh2("en", "chat/advice", "any tips for actually waking up early? I keep hitting snooze")
fresh2("zh", "chat/translation", "把“I'm looking forward to hearing from you”翻成中文", answer_contains=["期待"])
fresh2("en", "chat/translation", "how do you say 'good luck' in Chinese?", answer_contains=["好运", "加油"])
fresh2("zh", "chat/writing", "帮我写个请假条，明天家里有事想请一天假")
fresh2("en", "chat/writing", "write me a two-line birthday message for my sister, something sweet")

# --------------------------------------------------------------------------- fresh2: task
fresh2("zh", "task/http_request", "帮我访问下 https://status.example.com/api/health 看看挂没挂", capability=HTTP,
       parameters={"url": "https://status.example.com/api/health"})
fresh2("zh", "task/http_request", "GET一下 http://10.0.0.5:9000/metrics 把返回给我", capability=HTTP,
       parameters={"url": "http://10.0.0.5:9000/metrics"})
fresh2("en", "task/http_request", "could you hit https://api.example.com/users/42 and tell me what comes back?",
       capability=HTTP, parameters={"url": "https://api.example.com/users/42"})
fresh2("en", "task/http_request", "check if https://api.example.com/healthz is responding", capability=HTTP,
       parameters={"url": "https://api.example.com/healthz"})
fresh2("zh", "task/data_query", "查一下数据库里上个月新增了多少用户", capability=DQ)
fresh2("zh", "task/data_query", "统计下各个城市的订单量，按多到少排个序", capability=DQ)
fresh2("en", "task/data_query", "what were our top 5 products by sales last quarter? it's all in the db", capability=DQ)
fresh2("en", "task/data_query", "run a query to count our active customers", capability=DQ)
fresh2("zh", "task/dify_workflow", "用dify跑一下客服问答那个工作流", capability=DIFY)
fresh2("zh", "task/dify_workflow", "跑下dify工作流，api key是 app-Hx5kP29m", capability=DIFY,
       parameters={"api_key": "app-Hx5kP29m"})
fresh2("en", "task/dify_workflow", "trigger the dify flow that summarises support tickets", capability=DIFY)
fresh2("zh", "task/ask_experts", "请几位专家评估一下，我们五个人的小团队要不要上微服务", capability=EXP)
fresh2("en", "task/ask_experts", "I'd like a panel of experts to weigh in: should we rewrite the backend in Rust?",
       capability=EXP)
fresh2("en", "task/ask_experts", "ask the experts what they think about raising our prices by 10%", capability=EXP)

# --------------------------------------------------------------------------- fresh2: plan
fresh2("zh", "plan/multi_step", "先请求 https://api.example.com/orders 拿到数据，再让专家看看有没有异常")
fresh2("en", "plan/multi_step", "query the database for last week's signups, then POST the number to "
       "https://hooks.example.com/signups")
fresh2("en", "plan/multi_step", "fetch https://example.com/prices.json and after that ask the expert panel "
       "whether we're priced too high")

# --------------------------------------------------------------------------- fresh2: loop
fresh2("zh", "loop/reminder", "明天下午三点提醒我去银行办卡", schedule="tomorrow at 15:00")
fresh2("en", "loop/reminder", "remind me at 6pm to call mom", schedule="today at 18:00")
fresh2("zh", "loop/recurring", "以后每天早上七点半叫我起床", schedule="every day at 07:30")
fresh2("en", "loop/recurring", "every Monday at 10am remind me to submit my timesheet", schedule="every Monday at 10:00")
fresh2("en", "loop/recurring", "every 30 minutes, ping https://api.example.com/health", capability=HTTP,
       schedule="every 30 minutes")
fresh2("zh", "loop/relative", "半小时后提醒我关火", schedule="in 30 minutes")
fresh2("en", "loop/relative", "ping me in 20 min about the meeting", schedule="in 20 minutes")

# --------------------------------------------------------------------------- fresh2: task_op
fresh2("zh", "task_op/cancel", "算了，这个任务不要了", setup=ZH_TASK)
fresh2("en", "task_op/cancel", "nah forget it, stop that task", setup=EN_TASK)
fresh2("zh", "task_op/revise", "能不能把结果改成表格的形式", setup=ZH_DONE)
fresh2("en", "task_op/revise", "make that result shorter, just the key numbers", setup=EN_DONE)
fresh2("zh", "task_op/comment", "备注一下：这个接口下周要下线", setup=ZH_DONE)
fresh2("en", "task_op/comment", "add a note to that task: numbers confirmed with sales", setup=EN_DONE)
fresh2("zh", "task_op/rerun", "刚才那个再跑一次", setup=ZH_DONE)
fresh2("en", "task_op/rerun", "can you run that again?", setup=EN_DONE)

# --------------------------------------------------------------------------- fresh2: loop_op
fresh2("zh", "loop_op/list", "我现在都有哪些定时任务", setup=ZH_LOOP)
fresh2("en", "loop_op/list", "what reminders have I got set up?", setup=EN_LOOP)
fresh2("zh", "loop_op/pause", "站会提醒先停几天", setup=ZH_LOOP)
fresh2("en", "loop_op/resume", "ok I'm back, switch the standup reminder on again", setup=EN_LOOP + ["pause the standup reminder"])
fresh2("zh", "loop_op/delete", "站会那个提醒删了吧，用不着了", setup=ZH_LOOP)
fresh2("en", "loop_op/delete", "get rid of the standup reminder", setup=EN_LOOP)
fresh2("zh", "loop_op/trigger", "站会提醒现在立刻执行一下", setup=ZH_LOOP)
fresh2("en", "loop_op/trigger", "fire the standup reminder now so I can see what it looks like", setup=EN_LOOP)

# --------------------------------------------------------------------------- fresh2: status
fresh2("zh", "status/abilities", "你都会些什么呀")
fresh2("en", "status/abilities", "wat kind of stuff can u help me with")
fresh2("zh", "status/state", "我交给你的事情办得怎么样了", must_not_claim=True)
fresh2("en", "status/state", "what are you working on for me right now?", must_not_claim=True)
fresh2("zh", "status/history", "我之前都让你做过哪些任务", must_not_claim=True)
fresh2("en", "status/history", "show me what I've had you run so far", must_not_claim=True)

# --------------------------------------------------------------------------- fresh2: command
fresh2("zh", "command/clear", "清空聊天记录")
fresh2("en", "command/clear", "reset this chat please")
fresh2("zh", "command/switch_model", "能换个大一点的模型吗")
fresh2("en", "command/switch_model", "use gpt-4o from now on")
fresh2("zh", "command/shutdown", "你先关机吧，明天再说")
fresh2("en", "command/shutdown", "shut down the server please")

# --------------------------------------------------------------------------- fresh2: unsupported
fresh2("zh", "unsupported/orders", "我京东买的洗衣机到哪了", **NO)
fresh2("en", "unsupported/orders", "cancel my Amazon order for the headphones", **NO)
fresh2("zh", "unsupported/email", "看看我邮箱里有没有HR发来的offer", **NO)
fresh2("en", "unsupported/email", "send an email to Sarah saying I'll be late", **NO)
fresh2("zh", "unsupported/calendar", "明天我日程上都有什么安排", **NO)
fresh2("en", "unsupported/calendar", "set up a call with the design team for Friday at 3", **NO)
fresh2("zh", "unsupported/weather", "后天广州下不下雨啊", **NO)
fresh2("en", "unsupported/weather", "what's the temperature in London right now?", **NO)
fresh2("zh", "unsupported/flights", "帮我订一张下周五去深圳的机票", **NO)
fresh2("en", "unsupported/flights", "is my flight CA1234 delayed?", **NO)
fresh2("zh", "unsupported/bank", "我银行卡里还剩多少钱", **NO)
fresh2("en", "unsupported/bank", "transfer 200 dollars to my brother", **NO)
fresh2("zh", "unsupported/delivery", "顺丰单号SF1234567890123，帮我查下到哪了", **NO)
fresh2("en", "unsupported/delivery", "has my DoorDash order been picked up yet?", **NO)
fresh2("zh", "unsupported/servers", "帮我重启一下测试环境的nginx", **NO)
fresh2("en", "unsupported/servers", "is the prod server up? check its memory usage", **NO)
fresh2("zh", "unsupported/tickets", "把工单#3381关掉，问题已经解决了", **NO)
fresh2("en", "unsupported/tickets", "open a GitHub issue on our repo: the login button is broken on Safari", **NO)

# --------------------------------------------------------------------------- fresh2: clarify
fresh2("zh", "clarify/ambiguous", "帮我把它改一下")
fresh2("en", "clarify/ambiguous", "send it to them")
fresh2("en", "clarify/ambiguous", "can you fix this?")

# --------------------------------------------------------------------------- fresh2: answer
fresh2("zh", "answer/api_key", "app-Rt6yU1oP", setup=["帮我运行dify工作流"], capability=DIFY,
       parameters={"api_key": "app-Rt6yU1oP"})
fresh2("en", "answer/api_key", "the key is app-Nb4cX8vZ", setup=["please run the Dify workflow"], capability=DIFY,
       parameters={"api_key": "app-Nb4cX8vZ"})
fresh2("zh", "answer/url", "就请求这个吧 https://api.example.com/v1/items", setup=["帮我调个接口"], capability=HTTP,
       parameters={"url": "https://api.example.com/v1/items"})
fresh2("en", "answer/url", "http://localhost:3000/api/ping", setup=["call an api for me"], capability=HTTP,
       parameters={"url": "http://localhost:3000/api/ping"})
fresh2("zh", "answer/time", "后天上午十点", setup=["提醒我去体检"])
fresh2("en", "answer/time", "8:30 tomorrow morning", setup=["remind me to pick up the dry cleaning"])


# =========================================================================== FRESH3
# A fifth split, written after the second fresh split's misses had been read and fixed, the same
# way: from how people talk, without reading Flora's rules first, new situations and new wordings.
# These go to fresh3.jsonl only, with ids like zh-chat-h001.


def fresh3(lang: str, category: str, say: str, setup: list[str] | None = None, **expect) -> None:
    """One case of the third fresh split."""
    FRESH3.append(make(lang, category, say, setup, expect))


ZH_PILLS = ["每天晚上10点提醒我吃药"]
EN_VITAMINS = ["every day at 10pm remind me to take my vitamins"]

# --------------------------------------------------------------------------- fresh3: chat
fresh3("zh", "chat/greeting", "嘿嘿，我又来啦～")
fresh3("en", "chat/greeting", "heyyy, long time no chat! how's it going?")
fresh3("zh", "chat/thanks", "多亏你了，不然今晚得通宵🙏")
fresh3("en", "chat/thanks", "thx a ton, saved me like an hour lol")
fresh3("zh", "chat/feelings", "明天就要论文答辩了，手心一直冒汗")
fresh3("zh", "chat/feelings", "宝宝今天第一次开口叫妈妈，我直接感动哭了😭")
fresh3("en", "chat/feelings", "been feeling really burnt out at work lately, like nothing I do matters")
fresh3("en", "chat/feelings", "my best friend is moving abroad next month and I'm kinda gutted tbh")
fresh3("zh", "chat/smalltalk", "你喜欢下雨天还是大晴天呀")
fresh3("en", "chat/smalltalk", "ok be honest, pineapple on pizza: yes or no? 🍍")
fresh3("zh", "chat/joke", "来个谐音梗，越冷越好")
fresh3("en", "chat/joke", "got a joke about cats? my 6yo wants one before bed")
fresh3("zh", "chat/knowledge", "世界上最高的山峰叫什么名字", answer_contains=["珠穆朗玛", "珠峰"])
fresh3("zh", "chat/knowledge", "《红楼梦》是谁写的来着", answer_contains=["曹雪芹"])
fresh3("en", "chat/knowledge", "what's the boiling point of water in Fahrenheit?", answer_contains=["212"])
fresh3("zh", "chat/arithmetic", "36乘25等于几", answer_contains=["900"])
fresh3("zh", "chat/arithmetic", "我月薪8500，每个月存30%，一年下来能存多少钱？", answer_contains=["30600", "30,600", "3.06万"])
fresh3("en", "chat/arithmetic", "if a train goes 90 km/h for 2.5 hours, how far does it get?", answer_contains=["225"])
fresh3("en", "chat/arithmetic", "2 to the power of 10 = ?", answer_contains=["1024", "1,024"])
fresh3("zh", "chat/advice", "租房是选离公司近但贵的，还是远点但便宜的，纠节死了")
fresh3("en", "chat/advice", "how do I tell my manager I'm overwhelmed without sounding like I can't cope?")
fresh3("zh", "chat/translation", "帮我把“see you tomorrow”翻译成中文", answer_contains=["明天见"])
fresh3("en", "chat/translation", "how would I ask 'where is the bathroom' in Spanish?", answer_contains=["baño", "bano"])
fresh3("zh", "chat/writing", "帮我给房东写条微信，说空调坏了麻烦找人来修一下，语气客气点")
fresh3("en", "chat/writing", "can you write a short LinkedIn post saying I've joined a new company? not too cheesy")

# --------------------------------------------------------------------------- fresh3: task
fresh3("zh", "task/http_request", "能不能帮我看下 https://shop.example.com/api/inventory?sku=A12 返回的库存是多少",
       capability=HTTP, parameters={"url": "https://shop.example.com/api/inventory?sku=A12"})
fresh3("zh", "task/http_request", "用POST把 {\"status\": \"ok\"} 发到 https://hooks.example.net/deploy 这个地址",
       capability=HTTP, parameters={"url": "https://hooks.example.net/deploy", "method": "POST"})
fresh3("en", "task/http_request", "yo can u pull https://data.example.com/exports/latest.csv real quick",
       capability=HTTP, parameters={"url": "https://data.example.com/exports/latest.csv"})
fresh3("en", "task/http_request", "I think https://blog.example.com/feed.xml is broken, can you load it and see what "
       "you get?", capability=HTTP, parameters={"url": "https://blog.example.com/feed.xml"})
fresh3("zh", "task/data_query", "帮我从数据库里拉一下上周退款最多的10个商品", capability=DQ)
fresh3("en", "task/data_query", "could you maybe check how many orders came in over the weekend? should be in the db",
       capability=DQ)
fresh3("en", "task/data_query", "run this against the db: SELECT region, SUM(amount) FROM orders GROUP BY region",
       capability=DQ, parameters={"sql": "SELECT region, SUM(amount) FROM orders GROUP BY region"})
fresh3("zh", "task/dify_workflow", "把dify里的“合同审查”工作流跑一遍", capability=DIFY)
fresh3("zh", "task/dify_workflow", "dify那个workflow帮我trigger一下吧，key用这个 app-Jd72nQs5", capability=DIFY,
       parameters={"api_key": "app-Jd72nQs5"})
fresh3("en", "task/dify_workflow", "can you kick off the lead-scoring workflow in Dify? here's the key: app-Pf93kLm2",
       capability=DIFY, parameters={"api_key": "app-Pf93kLm2"})
fresh3("zh", "task/ask_experts", "想听听专家们的意见：我们要不要把客服外包出去", capability=EXP)
fresh3("en", "task/ask_experts", "could your expert panel debate whether we should go fully remote next year?",
       capability=EXP)
fresh3("en", "task/ask_experts", "get the experts to weigh this up for me: is it smart to launch in Japan before the US?",
       capability=EXP)

# --------------------------------------------------------------------------- fresh3: plan
fresh3("zh", "plan/multi_step", "帮我把 https://api.example.com/competitors 的数据抓下来，再查下我们库里同类产品的价格，"
       "两边对比一下")
fresh3("zh", "plan/multi_step", "让专家们先讨论下要不要做会员制，讨论完把结论POST到 https://hooks.example.com/decisions")
fresh3("en", "plan/multi_step", "ask the experts whether we should sunset the free tier, and run the dify pricing "
       "workflow too so I can compare")
fresh3("en", "plan/multi_step", "three things: fetch https://api.example.com/stock, look up today's orders in the db, "
       "then tell me if we're about to run out of anything")

# --------------------------------------------------------------------------- fresh3: loop
fresh3("zh", "loop/reminder", "明早六点半remind我去机场", schedule="tomorrow at 06:30")
fresh3("en", "loop/reminder", "can u remind me at 2:15pm to move the car 🚗", schedule="today at 14:15")
fresh3("zh", "loop/recurring", "工作日每天下午5点半提醒我打卡下班", schedule="every weekday at 17:30")
fresh3("zh", "loop/recurring", "每隔两小时查一下数据库里待发货的订单有多少", capability=DQ, schedule="every 2 hours")
fresh3("en", "loop/recurring", "every Sunday at 8pm remind me to plan the week ahead", schedule="every Sunday at 20:00")
fresh3("en", "loop/recurring", "check https://api.example.com/queue/depth every 10 minutes and tell me what it says",
       capability=HTTP, schedule="every 10 minutes")
fresh3("zh", "loop/relative", "40分钟后提醒我收衣服", schedule="in 40 minutes")
fresh3("en", "loop/relative", "nudge me in 90 minutes to get up and walk around", schedule="in 90 minutes")

# --------------------------------------------------------------------------- fresh3: task_op
fresh3("zh", "task_op/cancel", "诶等下，key我还没找到，这个任务先取消掉吧", setup=ZH_TASK)
fresh3("en", "task_op/cancel", "oops, wrong workflow. kill that task", setup=EN_TASK)
fresh3("zh", "task_op/revise", "结果能不能按时间倒序重新排一下", setup=ZH_DONE)
fresh3("en", "task_op/revise", "redo that, but only keep the name and price fields", setup=EN_DONE)
fresh3("zh", "task_op/comment", "在这个任务下面写一句：客户反馈数字对不上，周三前复查", setup=ZH_DONE)
fresh3("en", "task_op/comment", "leave a comment on that task saying it's for the Q3 audit", setup=EN_DONE)
fresh3("zh", "task_op/rerun", "服务器刚才重启了，麻烦重新请求一次", setup=ZH_DONE)
fresh3("en", "task_op/rerun", "one more time pls, the endpoint should be back up now", setup=EN_DONE)

# --------------------------------------------------------------------------- fresh3: loop_op
fresh3("zh", "loop_op/list", "我都定了些啥提醒来着？", setup=ZH_PILLS)
fresh3("en", "loop_op/list", "can I see evrything I've got scheduled?", setup=EN_VITAMINS)
fresh3("zh", "loop_op/pause", "下周休年假，站会提醒先暂停，回来再开", setup=ZH_LOOP)
fresh3("en", "loop_op/pause", "put the vitamins reminder on hold till I buy more", setup=EN_VITAMINS)
fresh3("zh", "loop_op/resume", "药又买回来了，吃药的提醒继续吧", setup=ZH_PILLS + ["暂停吃药提醒"])
fresh3("en", "loop_op/resume", "standups are starting again, un-pause that reminder pls",
       setup=EN_LOOP + ["pause my standup reminder"])
fresh3("zh", "loop_op/delete", "疗程结束了，每天那个吃药提醒帮我删掉", setup=ZH_PILLS)
fresh3("en", "loop_op/delete", "remove the standup reminder for good, the team got disbanded", setup=EN_LOOP)
fresh3("zh", "loop_op/trigger", "站会提醒能不能现在先响一次，我看看是啥效果", setup=ZH_LOOP)
fresh3("en", "loop_op/trigger", "run the vitamin reminder right now, I want to test it", setup=EN_VITAMINS)

# --------------------------------------------------------------------------- fresh3: status
fresh3("zh", "status/abilities", "说说你的本事呗，都能帮我干点啥")
fresh3("en", "status/abilities", "before we start — what are you actually capable of?")
fresh3("zh", "status/state", "有没有啥任务卡住了在等我回复的？", must_not_claim=True)
fresh3("en", "status/state", "are you in the middle of something for me, or is it all done?", must_not_claim=True)
fresh3("zh", "status/history", "帮我回顾下，这个月一共跑了多少个任务，成功几个失败几个", must_not_claim=True)
fresh3("en", "status/history", "give me a rundown of the tasks I had you do this week", must_not_claim=True)

# --------------------------------------------------------------------------- fresh3: command
fresh3("zh", "command/clear", "上下文太乱了，帮我把会话清一下")
fresh3("en", "command/clear", "let's start from scratch, clear the conversation")
fresh3("zh", "command/switch_model", "这个模型太笨了，给我切个聪明点的")
fresh3("en", "command/switch_model", "could you swap to claude-3-opus for the rest of this chat?")
fresh3("zh", "command/shutdown", "收工！flora你也下班吧，把进程关了")
fresh3("en", "command/shutdown", "power down flora, we're done for today")

# --------------------------------------------------------------------------- fresh3: unsupported
fresh3("zh", "unsupported/orders", "唯品会那单能不能帮我改个收货地址", **NO)
fresh3("en", "unsupported/orders", "can you reorder the coffee beans I bought on Amazon last month?", **NO)
fresh3("zh", "unsupported/email", "把这个月的报销单用邮件发给财务老王", **NO)
fresh3("en", "unsupported/email", "did anyone email me about the contract today?", **NO)
fresh3("zh", "unsupported/calendar", "下周三下午我有空吗", **NO)
fresh3("en", "unsupported/calendar", "put a dentist appointment in my calendar on the 14th at 10am", **NO)
fresh3("zh", "unsupported/weather", "今天出门要穿羽绒服吗，外面几度了", **NO)
fresh3("en", "unsupported/weather", "how windy is it in Chicago today?", **NO)
fresh3("zh", "unsupported/flights", "我那趟航班帮我改签到明天下午", **NO)
fresh3("en", "unsupported/flights", "find me the cheapest flight from Tokyo to Seoul next weekend", **NO)
fresh3("zh", "unsupported/bank", "帮我查下支付宝上个月一共花了多少", **NO)
fresh3("en", "unsupported/bank", "pay my electricity bill from my checking account", **NO)
fresh3("zh", "unsupported/delivery", "饿了么点的奶茶到哪了，等了快一个小时", **NO)
fresh3("en", "unsupported/delivery", "my 顺丰 parcel has been stuck for 3 days, where is it now?", **NO)
fresh3("zh", "unsupported/servers", "帮我看下k8s集群里有几个pod挂了", **NO)
fresh3("en", "unsupported/servers", "ssh into web-01 and clear out the /tmp folder", **NO)
fresh3("zh", "unsupported/tickets", "我上周提的那个IT工单有人接了没", **NO)
fresh3("en", "unsupported/tickets", "create a Zendesk ticket for the customer who can't log in", **NO)

# --------------------------------------------------------------------------- fresh3: clarify
fresh3("zh", "clarify/ambiguous", "就用上次那个吧")
fresh3("en", "clarify/ambiguous", "do it the other way")
fresh3("en", "clarify/ambiguous", "ok now the other one")

# --------------------------------------------------------------------------- fresh3: answer
fresh3("zh", "answer/api_key", "哦对，key在这：app-Ug58wQ3z", setup=["帮我把dify上的工作流跑一下"], capability=DIFY,
       parameters={"api_key": "app-Ug58wQ3z"})
fresh3("en", "answer/api_key", "use app-Ke27rT6y", setup=["can you run our Dify workflow?"], capability=DIFY,
       parameters={"api_key": "app-Ke27rT6y"})
fresh3("zh", "answer/url", "请求这个地址就行 https://api.example.com/v2/orders", setup=["帮我发个GET请求"],
       capability=HTTP, parameters={"url": "https://api.example.com/v2/orders"})
fresh3("en", "answer/url", "sure - https://api.example.com/v2/orders?limit=10", setup=["can you make an http call for me?"],
       capability=HTTP, parameters={"url": "https://api.example.com/v2/orders?limit=10"})
fresh3("zh", "answer/time", "下班前吧，6点", setup=["提醒我给花浇水"])
fresh3("en", "answer/time", "tomorrow around 7 in the evening", setup=["remind me to call the plumber"])


# =========================================================================== FRESH4
# A sixth split, written after the third fresh split's misses had been read and fixed, the same
# way: from how people talk, without reading Flora's rules first, new situations and new wordings
# (follow-ups that lean on an earlier turn, requests wrapped in a reason, chat that looks like
# work and the person's own data asked for like chat). These go to fresh4.jsonl only, with ids
# like zh-chat-i001.


def fresh4(lang: str, category: str, say: str, setup: list[str] | None = None, **expect) -> None:
    """One case of the fourth fresh split."""
    FRESH4.append(make(lang, category, say, setup, expect))


ZH_PLANTS = ["每周六上午10点提醒我给花浇水"]
EN_BINS = ["every Tuesday at 8pm remind me to take the bins out"]

# --------------------------------------------------------------------------- fresh4: chat
fresh4("zh", "chat/greeting", "在不在呀～刚下班，想找你唠两句")
fresh4("en", "chat/greeting", "hiya! just got back from vacation, did u miss me? 😄")
fresh4("zh", "chat/thanks", "搞定了！谢谢你哈，改天请你喝奶茶（虽然你喝不了😂）")
fresh4("en", "chat/thanks", "that fixed it. honestly thank you, I was about to throw my laptop out the window")
fresh4("zh", "chat/feelings", "这周的deadline又被提前了三天，整个人都emo了😮‍💨")
fresh4("zh", "chat/feelings", "终于还完最后一期房贷了，感觉整个人都轻了！！")
fresh4("en", "chat/feelings", "failed my driving test for the 3rd time... starting to think I'm just not cut out for it")
fresh4("en", "chat/feelings", "just found out I'm gonna be an uncle!! 🥳")
fresh4("zh", "chat/smalltalk", "你说AI会不会有一天也想放个假")
fresh4("en", "chat/smalltalk", "do u have a favourite book, or is that a wierd thing to ask an AI")
fresh4("zh", "chat/joke", "周一太难熬了，来个跟上班有关的笑话让我乐一乐")
fresh4("en", "chat/joke", "tell me a knock-knock joke")
fresh4("zh", "chat/knowledge", "地球绕太阳转一圈要多久", answer_contains=["365", "一年"])
fresh4("zh", "chat/knowledge", "HTTP请求里GET和POST到底有啥区别")
fresh4("zh", "chat/knowledge", "那光从月球照到地球要多久？", setup=["月球离地球大概多远"])
fresh4("en", "chat/knowledge", "what does a 404 error actually mean?", answer_contains=["not found", "Not Found"])
fresh4("en", "chat/knowledge", "how do cron schedules work? like what does '*/5 * * * *' mean",
       answer_contains=["5 minutes", "five minutes", "5th minute", "fifth minute"])
fresh4("en", "chat/knowledge", "and roughly when did he paint it?", setup=["who painted the Mona Lisa?"])
fresh4("zh", "chat/arithmetic", "买了3杯咖啡每杯28，再加一个45的蛋糕，一共多少钱", answer_contains=["129"])
fresh4("zh", "chat/arithmetic", "7的三次方是多少", answer_contains=["343"])
fresh4("en", "chat/arithmetic", "I drove 340 miles on 10 gallons, what's that in mpg?", answer_contains=["34"])
fresh4("en", "chat/arithmetic", "dinner was $64, add a 15% tip, what's the total?", answer_contains=["73.6"])
fresh4("zh", "chat/advice", "孩子老是玩手机不写作业，说了也不听，有什么办法吗")
fresh4("en", "chat/advice", "thinking of adopting a dog but I work 9-5 in an office, is that unfair on the dog?")
fresh4("en", "chat/advice", "is it better to watch a website's uptime with my own script or just pay for a "
       "monitoring service? what would you do")
fresh4("zh", "chat/translation", "给外国同事发祝福，“生日快乐”英文咋写",
       answer_contains=["happy birthday", "Happy birthday", "Happy Birthday"])
fresh4("en", "chat/translation", "what's 'cheers' in German? heading to Munich next week 🍺", answer_contains=["Prost", "prost"])
fresh4("zh", "chat/writing", "帮我写几句欢迎新同事的话，发群里那种，活泼点")
fresh4("en", "chat/writing", "could you help me write a short toast for my parents' 30th wedding anniversary? "
       "they're not into mushy stuff")

# --------------------------------------------------------------------------- fresh4: task
fresh4("zh", "task/http_request", "老板说官网打不开，你帮我请求一下 https://www.example.com/ 看看是不是真挂了",
       capability=HTTP, parameters={"url": "https://www.example.com/"})
fresh4("zh", "task/http_request", "帮我调下 http://127.0.0.1:8000/api/v1/orders?status=pending ，看看返回了几条",
       capability=HTTP, parameters={"url": "http://127.0.0.1:8000/api/v1/orders?status=pending"})
fresh4("en", "task/http_request", "could you maybe do a quick GET on https://api.example.com/v1/weather?city=Paris "
       "for me? just want to see the raw json", capability=HTTP,
       parameters={"url": "https://api.example.com/v1/weather?city=Paris"})
fresh4("en", "task/http_request", "send a PUT to https://api.example.com/v1/users/7 with {\"role\": \"admin\"}",
       capability=HTTP, parameters={"url": "https://api.example.com/v1/users/7", "method": "PUT"})
fresh4("zh", "task/data_query", "财务那边催了，帮我查下数据库里3月份的退款总额是多少", capability=DQ)
fresh4("zh", "task/data_query", "帮我query一下db，看看复购率最高的是哪个城市", capability=DQ)
fresh4("en", "task/data_query", "sorry to bug you again — how many orders did we ship last Friday? the db should have it",
       capability=DQ)
fresh4("en", "task/data_query", "can you run SELECT email FROM users WHERE created_at > '2025-01-01' LIMIT 20 on the "
       "database", capability=DQ,
       parameters={"sql": "SELECT email FROM users WHERE created_at > '2025-01-01' LIMIT 20"})
fresh4("zh", "task/dify_workflow", "dify上有个“周报生成”的工作流，帮我跑下，key是 app-Vt4mRk81", capability=DIFY,
       parameters={"api_key": "app-Vt4mRk81"})
fresh4("zh", "task/dify_workflow", "不知道能不能帮我把dify上那个简历筛选的流程跑一遍？", capability=DIFY)
fresh4("en", "task/dify_workflow", "our marketing folks set up a Dify workflow for blog outlines, could you run it?",
       capability=DIFY)
fresh4("zh", "task/ask_experts", "公司在考虑给员工发期权，能请专家们帮忙分析下利弊吗", capability=EXP)
fresh4("en", "task/ask_experts", "let the experts argue it out: should a 3-person startup hire a salesperson before "
       "product-market fit?", capability=EXP)

# --------------------------------------------------------------------------- fresh4: plan
fresh4("zh", "plan/multi_step", "先从数据库里查一下这个月每天的注册数，再把结果发到 https://hooks.example.com/daily ，"
       "最后让专家看看趋势正不正常")
fresh4("zh", "plan/multi_step", "先跑一下dify的舆情分析工作流，跑完让专家们根据结果给点建议")
fresh4("en", "plan/multi_step", "grab https://api.example.com/reviews?product=42, then run the dify sentiment "
       "workflow on what comes back")
fresh4("en", "plan/multi_step", "could you do two things for me: check https://staging.example.com/health, and if "
       "it's fine, query the db for how many test orders came in today")

# --------------------------------------------------------------------------- fresh4: loop
fresh4("zh", "loop/reminder", "周四晚上7点提醒我给老爸打电话，那天他生日", schedule="Thursday at 19:00")
fresh4("en", "loop/reminder", "oh and remind me tomorrow at 7:45 to put the bins out, I always forget",
       schedule="tomorrow at 07:45")
fresh4("zh", "loop/recurring", "每天中午12点半提醒我起来活动一下，老坐着腰疼", schedule="every day at 12:30")
fresh4("zh", "loop/recurring", "每天早上8点帮我请求一次 https://api.example.com/daily-report", capability=HTTP,
       schedule="every day at 08:00")
fresh4("en", "loop/recurring", "every weekday at 5:30pm remind me to stop working. seriously.",
       schedule="every weekday at 17:30")
fresh4("en", "loop/recurring", "could you count new signups in the database every 6 hours and let me know?",
       capability=DQ, schedule="every 6 hours")
fresh4("zh", "loop/relative", "一个半小时后叫我去楼下取快递", schedule="in 90 minutes")
fresh4("en", "loop/relative", "can you ping me in 25 mins? need to switch the laundry over", schedule="in 25 minutes")

# --------------------------------------------------------------------------- fresh4: task_op
fresh4("zh", "task_op/cancel", "同事说那个流程今天不用跑了，你把它取消了吧", setup=ZH_TASK)
fresh4("en", "task_op/cancel", "ugh, wrong button. please cancel whatever you just started", setup=EN_TASK)
fresh4("zh", "task_op/revise", "结果里的时间都换成北京时间，再给我一版", setup=ZH_DONE)
fresh4("en", "task_op/revise", "can you rework that result into plain English? my boss can't read JSON", setup=EN_DONE)
fresh4("zh", "task_op/comment", "在刚才那条任务上记一笔：数据来源已确认，可以归档", setup=ZH_DONE)
fresh4("en", "task_op/comment", "attach a note to that last task — \"sent to legal on Tuesday\"", setup=EN_DONE)
fresh4("zh", "task_op/rerun", "那边数据刚更新过，再拉一次看看", setup=ZH_DONE)
fresh4("en", "task_op/rerun", "same request again please, I want to see if the numbers changed", setup=EN_DONE)

# --------------------------------------------------------------------------- fresh4: loop_op
fresh4("zh", "loop_op/list", "我现在挂着几个定时提醒？列出来我看看", setup=ZH_PLANTS)
fresh4("en", "loop_op/list", "remind me what reminders I have lol", setup=EN_BINS)
fresh4("zh", "loop_op/pause", "这周出差不在家，浇花的提醒先停一停", setup=ZH_PLANTS)
fresh4("en", "loop_op/pause", "can you mute the bins reminder for a couple of weeks? we're away", setup=EN_BINS)
fresh4("zh", "loop_op/resume", "花都快干死了😂 赶紧把浇花提醒重新打开", setup=ZH_PLANTS + ["暂停浇花提醒"])
fresh4("en", "loop_op/resume", "reactivate the Tuesday bins reminder please", setup=EN_BINS + ["pause the bins reminder"])
fresh4("zh", "loop_op/delete", "花送人了，浇花提醒没用了，删了吧", setup=ZH_PLANTS)
fresh4("en", "loop_op/delete", "the council collects on Wednesdays now, so delete the Tuesday bins reminder",
       setup=EN_BINS)
fresh4("zh", "loop_op/trigger", "浇花那个提醒，你现在立马给我发一次", setup=ZH_PLANTS)
fresh4("en", "loop_op/trigger", "send me the bins reminder now instead of waiting till Tuesday", setup=EN_BINS)

# --------------------------------------------------------------------------- fresh4: status
fresh4("zh", "status/abilities", "我刚开始用你，不太懂，你能帮我处理哪些事情？")
fresh4("en", "status/abilities", "is there a list somewhere of the things you can do?")
fresh4("zh", "status/state", "刚才让你跑的那个还在跑吗", must_not_claim=True)
fresh4("en", "status/state", "quick check: is anything queued or running on your end?", must_not_claim=True)
fresh4("zh", "status/history", "上周我都让你查过哪些东西来着", must_not_claim=True)
fresh4("en", "status/history", "how many of my tasks failed recently?", must_not_claim=True)

# --------------------------------------------------------------------------- fresh4: command
fresh4("zh", "command/clear", "记录太多了看着乱，全部清空")
fresh4("en", "command/clear", "forget everything we've talked about, fresh start pls")
fresh4("zh", "command/switch_model", "能不能切到qwen2.5-14b试试，感觉回答会好点")
fresh4("en", "command/switch_model", "I'd rather you ran on mistral-7b, can you change models?")
fresh4("zh", "command/shutdown", "flora，把你自己的服务停了吧，我要升级版本")
fresh4("en", "command/shutdown", "kill the flora process, I need the port back")

# --------------------------------------------------------------------------- fresh4: unsupported
fresh4("zh", "unsupported/orders", "上周在抖音下单的那个充电宝怎么还没发货", **NO)
fresh4("en", "unsupported/orders", "the jacket I ordered doesn't fit, can you start a return for me?", **NO)
fresh4("zh", "unsupported/email", "老板刚才是不是给我发邮件了？帮我看看写的啥", **NO)
fresh4("en", "unsupported/email", "reply to the last email from Priya and tell her Thursday works", **NO)
fresh4("zh", "unsupported/calendar", "我今天下午是不是有个会来着，几点？", **NO)
fresh4("en", "unsupported/calendar", "clear my afternoon, cancel all my meetings after 2pm today", **NO)
fresh4("zh", "unsupported/weather", "那明天呢？", setup=["今天成都天气怎么样"], **NO)
fresh4("en", "unsupported/weather", "hmm and what about Saturday?", setup=["what's the weather like in Lisbon today?"],
       **NO)
fresh4("zh", "unsupported/flights", "帮我看看下周一上海飞北京还有没有经济舱", **NO)
fresh4("en", "unsupported/flights", "what gate does my flight leave from? it's UA837 tonight", **NO)
fresh4("zh", "unsupported/bank", "我工资到账了没？", **NO)
fresh4("en", "unsupported/bank", "send 50 quid to Jamie from my account for the concert", **NO)
fresh4("zh", "unsupported/delivery", "菜鸟显示已签收但我根本没收到啊，帮我查查包裹到底在哪", **NO)
fresh4("en", "unsupported/delivery", "is my grocery delivery still coming before 6?", **NO)
fresh4("zh", "unsupported/servers", "prod的redis内存是不是快爆了，帮我看一眼", **NO)
fresh4("en", "unsupported/servers", "our api box keeps throwing 502s, can you restart the service on it?", **NO)
fresh4("zh", "unsupported/tickets", "我名下还有几个没关的工单？", **NO)
fresh4("en", "unsupported/tickets", "escalate ticket SUP-2281 to tier 2, the customer's been waiting since Monday", **NO)

# --------------------------------------------------------------------------- fresh4: clarify
fresh4("zh", "clarify/ambiguous", "照这个再弄一份吧")
fresh4("en", "clarify/ambiguous", "can you do the same for the other ones?")
fresh4("zh", "clarify/ambiguous", "把那俩调个顺序再发一遍")

# --------------------------------------------------------------------------- fresh4: answer
fresh4("zh", "answer/api_key", "稍等我翻一下…找到了 app-Mz63pHw9", setup=["dify那个工作流帮我跑一下"], capability=DIFY,
       parameters={"api_key": "app-Mz63pHw9"})
fresh4("en", "answer/api_key", "ah sorry, forgot — app-Qr48vLn2", setup=["please kick off the Dify workflow"],
       capability=DIFY, parameters={"api_key": "app-Qr48vLn2"})
fresh4("zh", "answer/url", "https://api.example.com/v1/report?date=today 这个", setup=["帮我请求个接口"],
       capability=HTTP, parameters={"url": "https://api.example.com/v1/report?date=today"})
fresh4("en", "answer/url", "the url's http://192.168.0.12:8080/status", setup=["can you send an http request for me?"],
       capability=HTTP, parameters={"url": "http://192.168.0.12:8080/status"})
fresh4("zh", "answer/time", "周五上午吧，十点左右", setup=["提醒我给车续保险"])
fresh4("en", "answer/time", "next Monday at noon", setup=["remind me to renew my passport"])


# =========================================================================== FRESH5
# A seventh split, written after the fourth fresh split had been run, the same way: from how
# people talk, without reading Flora's rules first, new situations and new wordings (follow-ups
# that lean on a setup turn, requests wrapped in a reason or an excuse, technical how-it-works
# questions and opinions that look like work, the person's own data asked for like chat, new
# loop setups). These go to fresh5.jsonl only, with ids like zh-chat-j001.


def fresh5(lang: str, category: str, say: str, setup: list[str] | None = None, **expect) -> None:
    """One case of the fifth fresh split."""
    FRESH5.append(make(lang, category, say, setup, expect))


ZH_YOGA = ["每周三晚上7点提醒我去上瑜伽课"]
EN_UPTIME = ["check https://status.example.net every 30 minutes"]
EN_PIANO = ["every Thursday at 6:30pm remind me about Lily's piano lesson"]

# --------------------------------------------------------------------------- fresh5: chat
fresh5("zh", "chat/greeting", "早上好呀，今天也要元气满满☀️")
fresh5("en", "chat/greeting", "heya, hows ur day going")
fresh5("zh", "chat/thanks", "牛啊，一下就整明白了，感恩🙏")
fresh5("en", "chat/thanks", "thats exactly what i needed, thank youuu")
fresh5("zh", "chat/feelings", "孩子半夜发高烧送急诊了，我在医院陪着，心里特别慌")
fresh5("zh", "chat/feelings", "年终奖比预期多了一倍！！忍不住想找人分享一下🤑")
fresh5("en", "chat/feelings", "moved to a new city a month ago and I still don't really know anyone here")
fresh5("zh", "chat/smalltalk", "如果你能尝一种食物，你最想吃啥")
fresh5("en", "chat/smalltalk", "are you more of a morning person or a night owl? I'm def a night owl 🦉")
fresh5("zh", "chat/joke", "来个关于数学老师的笑话")
fresh5("en", "chat/joke", "got any coffee jokes? need one before my 8am ☕")
fresh5("zh", "chat/knowledge", "一年有多少个星期", answer_contains=["52"])
fresh5("zh", "chat/knowledge", "数据库索引为什么能让查询变快？讲讲原理")
fresh5("zh", "chat/knowledge", "他还写过哪些别的小说？", setup=["《三体》的作者是谁"])
fresh5("en", "chat/knowledge", "how many bones are in the adult human body?", answer_contains=["206"])
fresh5("en", "chat/knowledge", "how does a webhook actually work? is it just an http request going the other way?")
fresh5("en", "chat/knowledge", "and how many floors does it have?", setup=["what's the tallest building in the world?"])
fresh5("zh", "chat/arithmetic", "房租4200，三个人平摊，每人出多少", answer_contains=["1400", "1,400"])
fresh5("zh", "chat/arithmetic", "这个月用了286度电，每度0.56元，电费一共多少钱", answer_contains=["160.16"])
fresh5("en", "chat/arithmetic", "a pack of 6 muffins costs $9, so how much is one muffin?", answer_contains=["1.5"])
fresh5("en", "chat/arithmetic", "had 1250 followers, lost 487 after that post 😅 how many are left?",
       answer_contains=["763"])
fresh5("zh", "chat/advice", "下个月去新公司报到，第一周要注意些啥")
fresh5("zh", "chat/advice", "写个小工具存点数据，用SQLite够不够，还是直接上MySQL？你怎么看")
fresh5("en", "chat/advice", "my parents want me to take over the family restaurant but I love my job in tech. "
       "how do I even decide?")
fresh5("zh", "chat/translation", "“三思而后行”英文有没有现成的说法",
       answer_contains=["look before you leap", "Look before you leap", "think twice", "Think twice"])
fresh5("en", "chat/translation", "how do I say 'nice to meet you' in Korean?",
       answer_contains=["반갑습니다", "반가워", "bangapseumnida"])
fresh5("en", "chat/translation", "what does 躺平 mean? keep seeing it on weibo")
fresh5("zh", "chat/writing", "帮我写个小红书标题，卖自家果园的橙子，要吸引人一点🍊")
fresh5("zh", "chat/writing", "帮我起草一封给HR的邮件，问问剩余年假在哪查——我自己发，你帮我写就行")
fresh5("en", "chat/writing", "can you write a polite note to my neighbour asking them to keep the music down after 11? "
       "don't want to start a feud")

# --------------------------------------------------------------------------- fresh5: task
fresh5("zh", "task/http_request", "客户说回调一直没收到，你帮我往 https://partner.example.com/callback/test 发个POST试试",
       capability=HTTP, parameters={"url": "https://partner.example.com/callback/test", "method": "POST"})
fresh5("zh", "task/http_request", "麻烦GET下 http://10.1.2.3:8500/v1/agent/services ，想看看上面注册了哪些服务",
       capability=HTTP, parameters={"url": "http://10.1.2.3:8500/v1/agent/services"})
fresh5("en", "task/http_request", "the docs say https://api.example.com/v2/ping should return pong — can you check "
       "that it does?", capability=HTTP, parameters={"url": "https://api.example.com/v2/ping"})
fresh5("en", "task/http_request", "can you load https://cdn.example.com/assets/app.js and tell me roughly how big it is",
       capability=HTTP, parameters={"url": "https://cdn.example.com/assets/app.js"})
fresh5("zh", "task/data_query", "运营要个数：上个月每个渠道各带来多少新用户，从库里查一下", capability=DQ)
fresh5("en", "task/data_query", "out of curiosity, what hour of the day do we usually get the most orders? the db "
       "should know", capability=DQ)
fresh5("en", "task/data_query", "please execute SELECT product_id, COUNT(*) FROM reviews GROUP BY product_id ORDER BY 2 "
       "DESC LIMIT 3", capability=DQ,
       parameters={"sql": "SELECT product_id, COUNT(*) FROM reviews GROUP BY product_id ORDER BY 2 DESC LIMIT 3"})
fresh5("zh", "task/dify_workflow", "用 app-Ws84nTq6 跑一下dify上的发票识别流程", capability=DIFY,
       parameters={"api_key": "app-Ws84nTq6"})
fresh5("zh", "task/dify_workflow", "dify上那个自动生成FAQ的流程帮我跑跑", capability=DIFY)
fresh5("en", "task/dify_workflow", "the content team's Dify workflow for product descriptions — can you run it with "
       "key app-Cd39fGh7?", capability=DIFY, parameters={"api_key": "app-Cd39fGh7"})
fresh5("zh", "task/ask_experts", "拿不准主意，想请专家组帮我看看：30岁转行做产品经理还来得及吗", capability=EXP)
fresh5("en", "task/ask_experts", "I'd love to hear what your experts think about moving our whole team to a 4-day week",
       capability=EXP)
fresh5("en", "task/ask_experts", "we got an acquisition offer from a competitor — can the expert panel talk through "
       "whether we should even consider it?", capability=EXP)

# --------------------------------------------------------------------------- fresh5: plan
fresh5("zh", "plan/multi_step", "先GET一下 https://api.example.com/v1/inventory ，再从数据库里查出最近7天的销量，"
       "算算哪些货撑不过一周")
fresh5("zh", "plan/multi_step", "帮我做两件事：一是跑dify的周报工作流，二是把跑出来的结果POST到 https://hooks.example.com/weekly")
fresh5("en", "plan/multi_step", "look up yesterday's refunds in the db and then have the experts tell me if anything "
       "looks off")
fresh5("en", "plan/multi_step", "hit https://api.example.com/v1/errors?since=24h, and once you've got it, send a "
       "summary to https://hooks.example.com/oncall")

# --------------------------------------------------------------------------- fresh5: loop
fresh5("zh", "loop/reminder", "周日晚上9点提醒我把下周要穿的衬衫熨好", schedule="Sunday at 21:00")
fresh5("en", "loop/reminder", "at 4:45pm remind me to leave for the dentist, I'm always late",
       schedule="today at 16:45")
fresh5("zh", "loop/recurring", "每周一早上9点从数据库拉一下上周的订单总数", capability=DQ,
       schedule="every Monday at 09:00")
fresh5("zh", "loop/recurring", "每天晚上九点半提醒我检查孩子作业", schedule="every day at 21:30")
fresh5("en", "loop/recurring", "every 15 minutes hit https://shop.example.com/health and tell me if it's down",
       capability=HTTP, schedule="every 15 minutes")
fresh5("en", "loop/recurring", "remind me every Saturday at 10am to call grandma", schedule="every Saturday at 10:00")
fresh5("zh", "loop/relative", "2小时后提醒我去挪车，停车场只能停两小时", schedule="in 2 hours")
fresh5("en", "loop/relative", "remind me in 12 minutes to take the tea bag out", schedule="in 12 minutes")

# --------------------------------------------------------------------------- fresh5: task_op
fresh5("zh", "task_op/cancel", "不好意思发错了，刚才那条不算，任务撤销", setup=ZH_TASK)
fresh5("en", "task_op/cancel", "my manager just said we're not using Dify anymore, so drop that task", setup=EN_TASK)
fresh5("zh", "task_op/revise", "结果里只留 status code 和耗时两项，其他的都去掉", setup=ZH_DONE)
fresh5("en", "task_op/revise", "the result's fine but could you group the entries by category?", setup=EN_DONE)
fresh5("zh", "task_op/comment", "给这条任务打个标记：已同步给产品组", setup=ZH_DONE)
fresh5("en", "task_op/comment", "jot down on that task that the vendor promised a fix by Friday", setup=EN_DONE)
fresh5("zh", "task_op/rerun", "VPN刚连上，刚才那个请求再发一遍", setup=ZH_DONE)
fresh5("en", "task_op/rerun", "hit it again, the cache should've cleared by now", setup=EN_DONE)

# --------------------------------------------------------------------------- fresh5: loop_op
fresh5("zh", "loop_op/list", "帮我盘点一下，现在一共开着哪些定时任务", setup=ZH_YOGA)
fresh5("en", "loop_op/list", "wait, what have I got scheduled with you? lost track tbh", setup=EN_PIANO)
fresh5("zh", "loop_op/pause", "脚扭了，这两周去不了瑜伽，提醒先停一下", setup=ZH_YOGA)
fresh5("en", "loop_op/pause", "stop checking the status page for now, it's down for planned maintenance till tomorrow",
       setup=EN_UPTIME)
fresh5("zh", "loop_op/resume", "脚好利索了，瑜伽那个提醒接着给我发吧", setup=ZH_YOGA + ["暂停瑜伽提醒"])
fresh5("en", "loop_op/resume", "maintenance is done, you can start checking the status page again",
       setup=EN_UPTIME + ["pause the status check"])
fresh5("zh", "loop_op/delete", "瑜伽卡到期不续了，周三那个提醒就别留着了", setup=ZH_YOGA)
fresh5("en", "loop_op/delete", "Lily quit piano 🙃 so scrap the Thursday reminder", setup=EN_PIANO)
fresh5("zh", "loop_op/trigger", "吃药提醒现在先推一条给我，我看看手机有没有声音", setup=ZH_PILLS)
fresh5("en", "loop_op/trigger", "run that status check now, don't wait for the next half hour", setup=EN_UPTIME)

# --------------------------------------------------------------------------- fresh5: status
fresh5("zh", "status/abilities", "新同事问我你都能干啥，我也说不清，你自己介绍一下吧")
fresh5("en", "status/abilities", "quick q before I waste your time: can you do things like call APIs or run "
       "workflows, or just chat?")
fresh5("zh", "status/state", "我是不是有个任务还卡着在等我给key？", must_not_claim=True)
fresh5("en", "status/state", "are any of my tasks still going, or did everything finish?", must_not_claim=True)
fresh5("zh", "status/history", "昨晚我让你跑的那些任务，结果都怎么样了", must_not_claim=True)
fresh5("en", "status/history", "what was the last task I had you run?", must_not_claim=True)

# --------------------------------------------------------------------------- fresh5: command
fresh5("zh", "command/clear", "出于隐私考虑，把咱们的聊天记录全删了")
fresh5("en", "command/clear", "nuke our chat history pls, I'm sharing my screen in 5 min")
fresh5("zh", "command/switch_model", "帮我把模型换成 qwen2.5-32b，想要回答质量高一点")
fresh5("en", "command/switch_model", "swap the model to gpt-4.1-mini, the current one's too slow for me")
fresh5("zh", "command/shutdown", "服务器今晚要断电维护，flora先停掉吧")
fresh5("en", "command/shutdown", "go ahead and shut flora down for the night")

# --------------------------------------------------------------------------- fresh5: unsupported
fresh5("zh", "unsupported/orders", "上个月在小米商城买的手环，帮我把发票开一下", **NO)
fresh5("en", "unsupported/orders", "the blender I ordered arrived broken, can you get the store to send me a replacement?",
       **NO)
fresh5("zh", "unsupported/email", "写得挺好，直接帮我发到领导邮箱吧", setup=["帮我写个请假条，明天要去医院复查"], **NO)
fresh5("en", "unsupported/email", "anything urgent in my inbox I should deal with before lunch?", **NO)
fresh5("zh", "unsupported/calendar", "帮我把周五的牙医预约往后推一周", **NO)
fresh5("zh", "unsupported/calendar", "下个月我哪几天在出差来着", **NO)
fresh5("en", "unsupported/calendar", "how many meetings do I have this week? feels like a lot 😩", **NO)
fresh5("zh", "unsupported/weather", "我在深圳，这会儿外面下雨没", **NO)
fresh5("en", "unsupported/weather", "should I bring a jacket to the game in Boston tonight?", **NO)
fresh5("zh", "unsupported/flights", "航班MU5101帮我在线值机，选个靠窗的位子", **NO)
fresh5("en", "unsupported/flights", "did my flight to Denver get cancelled? nobody's told me anything", **NO)
fresh5("zh", "unsupported/bank", "帮我看看这个月房贷扣款成功了没", **NO)
fresh5("en", "unsupported/bank", "how much room is left on my visa this month before I hit the limit?", **NO)
fresh5("zh", "unsupported/delivery", "中通单号75318642097531，显示派送中好几天了，帮我查查", **NO)
fresh5("en", "unsupported/delivery", "the FedEx guy left a note saying he missed me — can you reschedule the delivery "
       "for tomorrow?", **NO)
fresh5("zh", "unsupported/servers", "staging那台机器的磁盘又报警了，帮我把旧日志清一清", **NO)
fresh5("en", "unsupported/servers", "scale the worker pool on staging up to 6 instances", **NO)
fresh5("zh", "unsupported/tickets", "帮我在工单系统里把#5120的优先级改成紧急", **NO)
fresh5("en", "unsupported/tickets", "any updates on the helpdesk ticket I filed about my laptop?", **NO)

# --------------------------------------------------------------------------- fresh5: clarify
fresh5("zh", "clarify/ambiguous", "你看着改吧，改完跟我说一声")
fresh5("en", "clarify/ambiguous", "put it with the others")
fresh5("en", "clarify/ambiguous", "hmm, try the shorter version instead")

# --------------------------------------------------------------------------- fresh5: answer
fresh5("zh", "answer/api_key", "刚从后台复制的：app-Bn57kWq3", setup=["dify工作流帮我执行一下"], capability=DIFY,
       parameters={"api_key": "app-Bn57kWq3"})
fresh5("en", "answer/api_key", "here, app-Ty29mXc4 (it's the staging one)", setup=["run the Dify workflow for me"],
       capability=DIFY, parameters={"api_key": "app-Ty29mXc4"})
fresh5("zh", "answer/url", "发到这个：http://172.16.0.8:9090/api/queue/size", setup=["帮我发一个HTTP请求"],
       capability=HTTP, parameters={"url": "http://172.16.0.8:9090/api/queue/size"})
fresh5("en", "answer/url", "oh it's https://api.example.com/v1/invoices?status=overdue", setup=["I want to call an API"],
       capability=HTTP, parameters={"url": "https://api.example.com/v1/invoices?status=overdue"})
fresh5("zh", "answer/time", "周六上午11点", setup=["提醒我去取干洗的衣服"])
fresh5("en", "answer/time", "hmm, let's say Wednesday at 9:15", setup=["remind me to book the vet"])


# =========================================================================== FRESH6
# An eighth split, written after the fifth fresh split had been read and fixed, the same way:
# from how people talk, without reading Flora's rules first, new situations and new wordings
# (news and venting, recipes and recommendations, a pun, a pep talk, plain-words explanations
# and quick definitions, sarcasm and rhetorical questions, plans about oneself that are only
# talk, follow-ups that lean on a setup turn, the person's own data asked for like chat, new
# loop setups). These go to fresh6.jsonl only, with ids like zh-chat-k001.


def fresh6(lang: str, category: str, say: str, setup: list[str] | None = None, **expect) -> None:
    """One case of the sixth fresh split."""
    FRESH6.append(make(lang, category, say, setup, expect))


ZH_RUN = ["每周二早上6点半提醒我去晨跑"]
# the SQL said with it, so the loop task is registered at once (without it, it waits for the SQL)
ZH_REFUNDS = ["每天下午5点查一下数据库里当天的退货单数，SQL用 SELECT COUNT(*) FROM returns WHERE day = date('now')"]
EN_SPANISH = ["every day at 9pm remind me to practise my Spanish"]

# --------------------------------------------------------------------------- fresh6: chat
fresh6("zh", "chat/greeting", "哟～又是我，周五啦周五啦🎉")
fresh6("en", "chat/greeting", "g'day! just popping in to say hi before my shift")
fresh6("zh", "chat/thanks", "原来是这样，受教了，谢谢！")
fresh6("en", "chat/thanks", "you're a star, cheers for sorting that out")
fresh6("zh", "chat/feelings", "跟你说个好消息，我家猫今天生了四只小猫！！🐱")
fresh6("zh", "chat/feelings", "真的服了我们组那个同事，开会永远迟到，活儿全甩给我，在领导面前还装得特别努力")
fresh6("en", "chat/feelings", "passed my citizenship test today, still shaking 😭🇨🇦")
fresh6("en", "chat/feelings", "I've got 40 pages of thesis left and zero motivation. give me a pep talk?")
fresh6("en", "chat/feelings", "wow, three meetings before lunch. living the dream 🙃")
fresh6("zh", "chat/smalltalk", "我下周要去大理玩几天，第一次去云南，好期待")
fresh6("en", "chat/smalltalk", "heading to Iceland next month for the northern lights, first big solo trip!")
fresh6("en", "chat/smalltalk", "why is it that the printer always jams exactly when I'm already late?")
fresh6("zh", "chat/joke", "我闺女非要听一个关于恐龙的笑话，你有吗🦖")
fresh6("en", "chat/joke", "give me your worst pun about cheese")
fresh6("zh", "chat/knowledge", "用大白话给我讲讲什么是通货膨胀")
fresh6("zh", "chat/knowledge", "“内卷”到底是啥意思，一句话说清楚")
fresh6("zh", "chat/knowledge", "一支足球队上场比赛是几个人", answer_contains=["11", "十一"])
fresh6("zh", "chat/knowledge", "Docker容器和虚拟机到底差在哪？组里天天在说，我一直没搞懂")
fresh6("en", "chat/knowledge", "what's the chemical symbol for gold?", answer_contains=["Au"])
fresh6("en", "chat/knowledge", "in plain words, what's compound interest?")
fresh6("en", "chat/knowledge", "what year was that?", setup=["who discovered penicillin?"], answer_contains=["1928"])
fresh6("zh", "chat/arithmetic", "一箱牛奶24瓶，我买了3箱，送人17瓶，还剩几瓶", answer_contains=["55"])
fresh6("zh", "chat/arithmetic", "88除以4等于多少", answer_contains=["22"])
fresh6("en", "chat/arithmetic", "what's 7 times 8? my kid's asking and my brain is fried", answer_contains=["56"])
fresh6("en", "chat/arithmetic", "if I put away $350 a month, how much do I have after 2 years?",
       answer_contains=["8400", "8,400"])
fresh6("zh", "chat/advice", "想给爸妈推荐几本书，他们六十多了，喜欢看历史，有啥推荐的吗")
fresh6("zh", "chat/advice", "番茄炒蛋怎么做才好吃？我每次炒出来都水水的")
fresh6("en", "chat/advice", "any good sci-fi movies for a rainy sunday? already seen interstellar")
fresh6("en", "chat/advice", "honestly, is GraphQL worth it for a small team or is plain REST fine?")
fresh6("zh", "chat/translation", "“I miss you”用中文怎么说", answer_contains=["想你"])
fresh6("en", "chat/translation", "how do you say 'excuse me' in Italian?",
       answer_contains=["scusi", "Scusi", "scusa", "Scusa", "permesso", "Permesso"])
fresh6("en", "chat/translation", "my chinese colleague left 辛苦了 on my pull request, what does it mean?")
fresh6("zh", "chat/writing", "帮我给小区物业写个投诉，楼上装修天天早上七点就开钻，措辞正式一点")
fresh6("zh", "chat/writing", "再短一点，能写在贺卡上的那种", setup=["帮我写一段生日祝福，给我奶奶的，她今年80岁"])
fresh6("en", "chat/writing", "can you help me write a resignation letter? leaving on good terms, two weeks' notice")
fresh6("en", "chat/writing", "nice, now one about mountains", setup=["write a haiku about the sea"])

# --------------------------------------------------------------------------- fresh6: task
fresh6("zh", "task/http_request", "测试说 https://test.example.com/api/v1/login 一直报500，你帮我请求一下看看返回啥",
       capability=HTTP, parameters={"url": "https://test.example.com/api/v1/login"})
fresh6("zh", "task/http_request", "往 https://api.example.com/v1/sessions/9921 发一个DELETE请求", capability=HTTP,
       parameters={"url": "https://api.example.com/v1/sessions/9921", "method": "DELETE"})
fresh6("en", "task/http_request", "quick favour - GET https://api.example.com/v1/time and tell me what time the server "
       "thinks it is", capability=HTTP, parameters={"url": "https://api.example.com/v1/time"})
fresh6("en", "task/http_request", "I was wondering if you could look at what https://jobs.example.com/api/openings "
       "returns? thinking of applying somewhere", capability=HTTP,
       parameters={"url": "https://jobs.example.com/api/openings"})
fresh6("zh", "task/data_query", "帮我查查库里今年退货率最高的三个品类", capability=DQ)
fresh6("zh", "task/data_query", "跑一下这条SQL：SELECT city, COUNT(*) FROM users GROUP BY city", capability=DQ,
       parameters={"sql": "SELECT city, COUNT(*) FROM users GROUP BY city"})
fresh6("en", "task/data_query", "how many customers haven't ordered anything in the last 90 days? pull it from the db",
       capability=DQ)
fresh6("zh", "task/dify_workflow", "dify里那个整理会议纪要的工作流，帮我运行一下", capability=DIFY)
fresh6("en", "task/dify_workflow", "could you run the Dify workflow that drafts our release notes? key: app-Rn58dKx2",
       capability=DIFY, parameters={"api_key": "app-Rn58dKx2"})
fresh6("zh", "task/ask_experts", "想让专家团帮我把把关：在小区门口开个咖啡店，启动资金30万够不够", capability=EXP)
fresh6("en", "task/ask_experts", "can the expert panel weigh in on whether we should open-source our SDK?",
       capability=EXP)

# --------------------------------------------------------------------------- fresh6: plan
fresh6("zh", "plan/multi_step", "我想做个对比：先请求 https://api.example.com/v1/plans 看现在的套餐价格，再从数据库里"
       "查各个套餐的订阅人数，最后放在一起给我")
fresh6("zh", "plan/multi_step", "跑完dify上的客户评价汇总工作流之后，把结果交给专家们，让他们给下季度提几条改进建议")
fresh6("en", "plan/multi_step", "pull today's failed payments from the database, then POST the count to "
       "https://hooks.example.com/payments")
fresh6("en", "plan/multi_step", "fetch https://api.example.com/v1/carts/average, then ask the experts whether raising "
       "our minimum order to $25 makes sense given that number")

# --------------------------------------------------------------------------- fresh6: loop
fresh6("zh", "loop/reminder", "周二上午十点提醒我去交社保材料", schedule="Tuesday at 10:00")
fresh6("en", "loop/reminder", "can you remind me at 7pm tonight to water the tomatoes 🍅", schedule="today at 19:00")
fresh6("zh", "loop/recurring", "每个月1号早上9点提醒我交房租", schedule="every month on the 1st at 09:00")
fresh6("zh", "loop/recurring", "每隔20分钟请求一次 https://api.example.com/v1/queue ，看看积压了多少", capability=HTTP,
       schedule="every 20 minutes")
fresh6("en", "loop/recurring", "every Friday at 4pm remind me to send the client update", schedule="every Friday at 16:00")
fresh6("en", "loop/recurring", "every morning at 7:15 query the db for overnight signups", capability=DQ,
       schedule="every day at 07:15")
fresh6("zh", "loop/relative", "三刻钟后叫我把洗衣机里的衣服晾了", schedule="in 45 minutes")
fresh6("en", "loop/relative", "noodles are on 🍜 give me a shout in 8 minutes", schedule="in 8 minutes")

# --------------------------------------------------------------------------- fresh6: task_op
fresh6("zh", "task_op/cancel", "我看错了，不是这个工作流，先给我停了", setup=ZH_TASK)
fresh6("en", "task_op/cancel", "please call that off, I'll run it myself later", setup=EN_TASK)
fresh6("zh", "task_op/revise", "能把结果里的数字都保留两位小数吗", setup=ZH_DONE)
fresh6("en", "task_op/revise", "could you turn that result into a little table, one row per item?", setup=EN_DONE)
fresh6("zh", "task_op/comment", "这个任务记个备忘：下次请求记得带上token", setup=ZH_DONE)
fresh6("en", "task_op/comment", "tag that task with a note: baseline for the May comparison", setup=EN_DONE)
fresh6("zh", "task_op/rerun", "好像超时了，再请求一次看看", setup=ZH_DONE)
fresh6("en", "task_op/rerun", "do that one more time? I just pushed a fix", setup=EN_DONE)

# --------------------------------------------------------------------------- fresh6: loop_op
fresh6("zh", "loop_op/list", "我在你这儿设了哪些定时的事儿，给我报一下", setup=ZH_RUN)
fresh6("en", "loop_op/list", "what's on my list of scheduled stuff again?", setup=EN_SPANISH)
fresh6("zh", "loop_op/pause", "这两周膝盖疼，晨跑提醒先别发了", setup=ZH_RUN)
fresh6("en", "loop_op/pause", "I'm travelling for 10 days, can you hold off on the Spanish reminders till I'm back?",
       setup=EN_SPANISH)
fresh6("zh", "loop_op/resume", "膝盖好了，晨跑提醒可以恢复了", setup=ZH_RUN + ["暂停晨跑提醒"])
fresh6("en", "loop_op/resume", "ok I'm home, bring back the Spanish reminder", setup=EN_SPANISH + ["pause the Spanish reminder"])
fresh6("zh", "loop_op/delete", "退货单数那个每天的查询不用再跑了，直接删掉", setup=ZH_REFUNDS)
fresh6("en", "loop_op/delete", "gave up on Spanish 😅 you can bin the daily practice reminder", setup=EN_SPANISH)
fresh6("zh", "loop_op/trigger", "别等五点了，退货单数那个定时查询现在就给我跑一下", setup=ZH_REFUNDS)
fresh6("en", "loop_op/trigger", "send me the Spanish reminder now please, I've got a free moment to practise",
       setup=EN_SPANISH)

# --------------------------------------------------------------------------- fresh6: status
fresh6("zh", "status/abilities", "你是不是只会聊天啊？还能帮我干点正事不")
fresh6("en", "status/abilities", "my friend said you can schedule stuff and call APIs, is that true? what else?")
fresh6("zh", "status/state", "我那个dify的任务现在什么情况了", must_not_claim=True)
fresh6("en", "status/state", "did the task I gave you earlier ever finish?", must_not_claim=True)
fresh6("zh", "status/history", "帮我翻一下之前的任务记录，上次让你请求接口是哪天", must_not_claim=True)
fresh6("en", "status/history", "what did I have you run on Monday? can't remember if I already did the report",
       must_not_claim=True)

# --------------------------------------------------------------------------- fresh6: command
fresh6("zh", "command/clear", "删掉我们所有的对话记录，一条都别留")
fresh6("en", "command/clear", "could you erase this conversation? my kid's been typing nonsense in here")
fresh6("zh", "command/switch_model", "切换模型：llama3.1-8b")
fresh6("en", "command/switch_model", "is it possible to run you on phi-3 instead? switch it over please")
fresh6("zh", "command/shutdown", "关掉flora吧，电脑要重启了")
fresh6("en", "command/shutdown", "time to shut yourself down, flora. night night 🌙")

# --------------------------------------------------------------------------- fresh6: unsupported
fresh6("zh", "unsupported/orders", "我在闲鱼上卖的那个相机，买家付款了没？帮我看一眼", **NO)
fresh6("en", "unsupported/orders", "can you check if my Etsy order shipped? the seller hasn't replied", **NO)
fresh6("zh", "unsupported/email", "好久没看邮箱了，估计堆了一堆，帮我挑重要的说说", **NO)
fresh6("en", "unsupported/email", "forward yesterday's invoice email to accounting@example.com", **NO)
fresh6("zh", "unsupported/calendar", "我下周二的日程是不是排满了？想约个牙医", **NO)
fresh6("en", "unsupported/calendar", "can you block out Friday morning on my calendar for deep work?", **NO)
fresh6("zh", "unsupported/weather", "明天去爬香山，会不会下雨啊", **NO)
fresh6("en", "unsupported/weather", "is it still snowing in Denver right now? my mom says the roads are bad", **NO)
fresh6("zh", "unsupported/flights", "我下周三飞三亚的航班几点起飞来着", **NO)
fresh6("en", "unsupported/flights", "can you get me an aisle seat on my flight to Toronto on Friday?", **NO)
fresh6("zh", "unsupported/bank", "昨天那笔2000块的转账，对方收到了吗", **NO)
fresh6("en", "unsupported/bank", "did my paycheck clear yet? rent's due tomorrow 😬", **NO)
fresh6("zh", "unsupported/delivery", "韵达单号4312567890123，帮我看看还要几天到", **NO)
fresh6("en", "unsupported/delivery", "oh great, my parcel is 'out for delivery' for the 4th day in a row. where is it "
       "actually?", **NO)
fresh6("zh", "unsupported/servers", "线上mysql主库的连接数是不是打满了，帮我看看", **NO)
fresh6("en", "unsupported/servers", "can you check the load on our build server? jobs are crawling", **NO)
fresh6("zh", "unsupported/tickets", "帮我给IT提个工单，三楼会议室的投影仪坏了", **NO)
fresh6("en", "unsupported/tickets", "close out my open Jira tickets from last sprint, they're all done", **NO)

# --------------------------------------------------------------------------- fresh6: clarify
fresh6("zh", "clarify/ambiguous", "你先处理前面那几个，后面的等我消息")
fresh6("zh", "clarify/ambiguous", "把它弄成跟上次一样的格式")
fresh6("en", "clarify/ambiguous", "just go with the second option")

# --------------------------------------------------------------------------- fresh6: answer
fresh6("zh", "answer/api_key", "app-Hq36zPm8，这个是测试环境的", setup=["帮我跑一下dify上的工作流"], capability=DIFY,
       parameters={"api_key": "app-Hq36zPm8"})
fresh6("en", "answer/api_key", "oh yeah — app-Vj71sNb4", setup=["can you run the Dify workflow?"], capability=DIFY,
       parameters={"api_key": "app-Vj71sNb4"})
fresh6("zh", "answer/url", "喏，用 https://api.example.com/v2/members?page=1", setup=["帮我调一个接口"],
       capability=HTTP, parameters={"url": "https://api.example.com/v2/members?page=1"})
fresh6("en", "answer/url", "here: http://10.20.0.4:8081/actuator/health", setup=["I'd like to send an HTTP request"],
       capability=HTTP, parameters={"url": "http://10.20.0.4:8081/actuator/health"})
fresh6("zh", "answer/time", "星期四下午四点吧", setup=["提醒我去还图书馆的书"])
fresh6("en", "answer/time", "Friday morning, 8ish", setup=["remind me to cancel the free trial"])


# =========================================================================== FRESH7
# A ninth split, written after the sixth fresh split had been read and fixed, the same way:
# from how people talk, without reading Flora's rules first, new situations and new wordings
# (dictation run on without punctuation, very short replies and emoji after a setup turn, all
# caps, a greeting with a request in it, a complaint about Flora's answer, opinions and
# hypotheticals, parents, students, shop owners, developers and older people, health, cooking
# and travel, money and plans that are only talk, Cantonese and Taiwanese wording, mixed Chinese
# and English, polite long-winded requests and requests wrapped in a story, new loop setups).
# These go to fresh7.jsonl only, with ids like zh-chat-m001.


def fresh7(lang: str, category: str, say: str, setup: list[str] | None = None, **expect) -> None:
    """One case of the seventh fresh split."""
    FRESH7.append(make(lang, category, say, setup, expect))


ZH_GRANNY = ["每周日下午4点提醒我给外婆打视频电话"]
# the SQL said with it, so the loop task is registered at once (without it, it waits for the SQL)
ZH_STOCK = ["每天早上8点查一下库存不足的商品，SQL是 SELECT name, qty FROM stock WHERE qty < 10"]
EN_SHOPCHECK = ["hit https://myshop.example.com/health every 15 minutes and tell me if it breaks"]
EN_MEALPREP = ["remind me every Sunday at 3pm to batch-cook my lunches"]

# --------------------------------------------------------------------------- fresh7: chat
fresh7("zh", "chat/greeting", "早晨！食咗早餐未呀😄")
fresh7("en", "chat/greeting", "HEYYY FLORA 👋👋")
fresh7("zh", "chat/thanks", "嗯嗯 好嘞 谢啦", setup=["溏心蛋要煮几分钟"])
fresh7("en", "chat/thanks", "👍🙏", setup=["how long should I rest between sets at the gym?"])
fresh7("zh", "chat/feelings", "老伴走了一年了，家里太安静，有时候就想找个人说说话")
fresh7("zh", "chat/feelings", "刚考完期末数学最后两道大题都没写完感觉要挂了怎么办啊我爸妈肯定要骂死我")
fresh7("en", "chat/feelings", "I FINALLY PAID OFF MY CAR LOAN!!! no more $412 a month 🎉")
fresh7("en", "chat/feelings", "first day of kindergarten for my daughter today. she didn't even look back and I cried "
       "in the car")
fresh7("zh", "chat/smalltalk", "你觉得豆腐脑应该是甜的还是咸的？我们办公室为这个吵了一中午")
fresh7("zh", "chat/smalltalk", "我等下六点去健身房，今天练腿，已经开始腿软了哈哈")
fresh7("en", "chat/smalltalk", "if you could have a body for one day, what's the first thing you'd do?")
fresh7("en", "chat/smalltalk", "lol true", setup=["why do cats knock stuff off tables?"])
fresh7("en", "chat/smalltalk", "just landed in Seoul and the street food smells are unreal, already in love")
fresh7("zh", "chat/joke", "讲个跟减肥有关的笑话吧，我正饿着肚子呢")
fresh7("en", "chat/joke", "meh, make it funnier", setup=["tell me a joke about accountants"])
fresh7("zh", "chat/knowledge", "一斤是多少克", answer_contains=["500"])
fresh7("zh", "chat/knowledge", "地球上總共有幾個大洲啊？我孫子在考我", answer_contains=["7", "七"])
fresh7("en", "chat/knowledge", "hi flora! quick q, what's the capital of Canada?", answer_contains=["Ottawa"])
fresh7("en", "chat/knowledge", "for my bio homework: what's the powerhouse of the cell?",
       answer_contains=["mitochondria", "Mitochondria", "mitochondrion", "Mitochondrion"])
fresh7("en", "chat/knowledge", "hmm are you sure? I thought Saturn overtook Jupiter a couple of years ago",
       setup=["which planet has the most moons?"])
fresh7("zh", "chat/arithmetic", "进货价一件35，卖58，这个月卖了40件，毛利一共多少", answer_contains=["920"])
fresh7("zh", "chat/arithmetic", "我每个月退休金3260块，一年下来一共多少钱", answer_contains=["39120", "39,120", "3.912万"])
fresh7("en", "chat/arithmetic", "recipe serves 4 and needs 300g of flour, I'm cooking for 10 — how much flour?",
       answer_contains=["750"])
fresh7("zh", "chat/advice", "女儿上初一了，最近不爱跟我们说话，房门一关就是一晚上，当爸妈的该怎么跟她沟通")
fresh7("zh", "chat/advice", "那五十多岁的人呢？", setup=["刚开始健身，一周练几次比较合适"])
fresh7("en", "chat/advice", "what about if I'm self-employed?",
       setup=["what's a good way to start saving for retirement in my 20s?"])
fresh7("zh", "chat/translation", "那法语呢？", setup=["“祝你一路顺风”英文怎么说"],
       answer_contains=["bon voyage", "Bon voyage", "Bon Voyage"])
fresh7("en", "chat/translation", "how do I ask for the bill in Japanese? off to Osaka next week 🍜",
       answer_contains=["お会計", "会計", "okaikei", "o-kaikei", "お勘定", "勘定", "kanjou", "kanjō"])
fresh7("en", "chat/translation", "what's the english word for 螺丝刀? my dad keeps asking me to fetch one",
       answer_contains=["screwdriver", "Screwdriver"])
fresh7("zh", "chat/writing", "帮我写个店门口小黑板的文案，奶茶第二杯半价，要有点网感")
fresh7("zh", "chat/writing", "太正式了，口语化一点，就像在家长群里说话那样",
       setup=["帮我写一段给班主任的感谢话，孩子小学毕业了"])
fresh7("en", "chat/writing", "Hello, I hope you don't mind me asking, but I was wondering whether you might be able to "
       "help me put together a short, friendly message to the other parents in my son's class, inviting them to a "
       "picnic in the park on Saturday afternoon? Thank you so much in advance.")
fresh7("en", "chat/writing", "write a commit message for this: fixed the off-by-one in pagination and added a test")

# --------------------------------------------------------------------------- fresh7: task
fresh7("zh", "task/http_request", "帮我call一下这个endpoint https://api.example.cn/v1/coupons/active ，看下现在店里有哪些优惠券",
       capability=HTTP, parameters={"url": "https://api.example.cn/v1/coupons/active"})
fresh7("zh", "task/http_request", "可以幫我打一下 https://api.example.tw/v1/menu 這支API嗎？想確認菜單有沒有更新",
       capability=HTTP, parameters={"url": "https://api.example.tw/v1/menu"})
fresh7("en", "task/http_request", "so my cofounder swears our status endpoint is fine but customers keep telling me "
       "otherwise — could you hit https://app.example.io/api/status and settle this?", capability=HTTP,
       parameters={"url": "https://app.example.io/api/status"})
fresh7("en", "task/http_request", "CAN YOU CHECK https://api.example.com/v1/alerts RIGHT NOW, MY PAGER WON'T STOP",
       capability=HTTP, parameters={"url": "https://api.example.com/v1/alerts"})
fresh7("zh", "task/data_query", "店里上个月卖得最差的五个商品是哪几个，从数据库里查一下", capability=DQ)
fresh7("zh", "task/data_query", "执行一下 SELECT COUNT(*) FROM members WHERE level = 'gold'", capability=DQ,
       parameters={"sql": "SELECT COUNT(*) FROM members WHERE level = 'gold'"})
fresh7("en", "task/data_query", "hey so I need the number of new subscribers we got each week in april from the "
       "database can you pull that", capability=DQ)
fresh7("zh", "task/dify_workflow", "麻烦跑一下dify上的商品文案生成流程，key是 app-Gd84Lm2x", capability=DIFY,
       parameters={"api_key": "app-Gd84Lm2x"})
fresh7("en", "task/dify_workflow", "Could you please run the Dify workflow that sorts customer feedback into "
       "categories? Thanks ever so much.", capability=DIFY)
fresh7("zh", "task/ask_experts", "我在犹豫要不要把实体店关了全转线上，能不能请专家们帮我分析一下", capability=EXP)
fresh7("en", "task/ask_experts", "have the expert panel argue both sides: should my kid's school ban phones entirely?",
       capability=EXP)

# --------------------------------------------------------------------------- fresh7: plan
fresh7("zh", "plan/multi_step", "把这周退款超过500元的订单从库里捞出来，然后用POST发到 https://hooks.example.cn/refund-alert")
fresh7("zh", "plan/multi_step", "先请求 https://api.example.com/v1/competitor-prices 拿到对手的价格，然后让专家们说说我们该不该降价")
fresh7("en", "plan/multi_step", "run the dify workflow that summarises this week's reviews, then post the summary to "
       "https://hooks.example.com/team-digest")
fresh7("en", "plan/multi_step", "my boss wants two numbers by noon: today's signups from the database and whatever "
       "https://api.example.com/v1/ads/spend says we've spent — grab both and put them side by side")

# --------------------------------------------------------------------------- fresh7: loop
fresh7("zh", "loop/reminder", "明天上午九点半提醒我去社区医院量血压", schedule="tomorrow at 09:30")
fresh7("zh", "loop/reminder", "听日下昼三点提我去攞药", schedule="tomorrow at 15:00")
fresh7("en", "loop/reminder", "REMIND ME AT 5:15PM TO GRAB THE CAKE FROM THE BAKERY, IT'S MY WIFE'S BIRTHDAY",
       schedule="today at 17:15")
fresh7("zh", "loop/recurring", "每周一三五早上七点提醒我去游泳", schedule="every Monday, Wednesday and Friday at 07:00")
fresh7("zh", "loop/recurring", "每5分钟请求一下 https://pay.example.cn/api/health ，看看支付接口还通不通", capability=HTTP,
       schedule="every 5 minutes")
fresh7("en", "loop/recurring", "every weekday at 8:40am remind me it's time to leave for school drop-off",
       schedule="every weekday at 08:40")
fresh7("en", "loop/recurring", "every Sunday at 6pm query the database for how many loyalty points got redeemed that "
       "week", capability=DQ, schedule="every Sunday at 18:00")
fresh7("zh", "loop/relative", "面膜刚敷上，15分钟后叫我揭掉", schedule="in 15 minutes")
fresh7("en", "loop/relative", "bread's proofing, give me a nudge in 50 minutes", schedule="in 50 minutes")

# --------------------------------------------------------------------------- fresh7: task_op
fresh7("zh", "task_op/cancel", "老板说这个流程要等法务审完才能跑，你先把它撤了", setup=ZH_TASK)
fresh7("en", "task_op/cancel", "NO WAIT. CANCEL THAT.", setup=EN_TASK)
fresh7("zh", "task_op/revise", "結果可以改成繁體字再給我一次嗎", setup=ZH_DONE)
fresh7("en", "task_op/revise", "can you redo that result and put anything that looks like an error in bold?",
       setup=EN_DONE)
fresh7("zh", "task_op/comment", "给它挂个备注吧，就写“双十一备货参考，别删”", setup=ZH_DONE)
fresh7("en", "task_op/comment", "pin a note on that task: Dave says these numbers are preliminary", setup=EN_DONE)
fresh7("zh", "task_op/rerun", "那边说接口修好了，麻烦你再打一次", setup=ZH_DONE)
fresh7("en", "task_op/rerun", "ok run it back", setup=EN_DONE)

# --------------------------------------------------------------------------- fresh7: loop_op
fresh7("zh", "loop_op/list", "我在你这儿挂了些啥定时的东西？我自己都记不住了", setup=ZH_GRANNY)
fresh7("en", "loop_op/list", "which things are you checking or reminding me about on a schedule?", setup=EN_SHOPCHECK)
fresh7("zh", "loop_op/pause", "外婆这个月去舅舅家住了，视频提醒先停一停", setup=ZH_GRANNY)
fresh7("en", "loop_op/pause", "we're putting the shop in maintenance mode tonight, so pause that health check for now",
       setup=EN_SHOPCHECK)
fresh7("zh", "loop_op/resume", "外婆回来了，周日打视频那个提醒恢复吧", setup=ZH_GRANNY + ["暂停给外婆打视频的提醒"])
fresh7("en", "loop_op/resume", "shop's back up, start the health check again",
       setup=EN_SHOPCHECK + ["pause the myshop.example.com check"])
fresh7("zh", "loop_op/delete", "库存那个每天早上的查询不要了，我换了个进销存软件，删掉吧", setup=ZH_STOCK)
fresh7("en", "loop_op/delete", "I've started getting meal kits delivered, so scrap the Sunday batch-cooking reminder",
       setup=EN_MEALPREP)
fresh7("zh", "loop_op/trigger", "今天要提前进货，库存不足那个查询现在就跑一下，别等明早了", setup=ZH_STOCK)
fresh7("en", "loop_op/trigger", "can I get the batch-cooking reminder now? I'm at the supermarket anyway",
       setup=EN_MEALPREP)

# --------------------------------------------------------------------------- fresh7: status
fresh7("zh", "status/abilities", "我是第一次用这个，孙子给我装的，你能帮我做些什么呀")
fresh7("en", "status/abilities", "I'm a teacher, not a techie — what sorts of jobs can you actually take off my hands?")
fresh7("zh", "status/state", "你这会儿手上还有我的活儿没干完吗", must_not_claim=True)
fresh7("en", "status/state", "ARE YOU STILL WORKING ON MY THING OR DID IT DIE", must_not_claim=True)
fresh7("zh", "status/history", "这个月我有没有让你跑过dify的工作流？忘了", must_not_claim=True)
fresh7("en", "status/history", "how many times did I have you query the database last week? my boss is asking",
       must_not_claim=True)

# --------------------------------------------------------------------------- fresh7: command
fresh7("zh", "command/clear", "把我们的聊天记录清一清，我手机要借给同学用")
fresh7("en", "command/clear", "clear this thread out, it's gotten way too long")
fresh7("zh", "command/switch_model", "model 换成 gemma-2-9b 吧，想试试效果")
fresh7("en", "command/switch_model", "can you switch to a smaller model? my laptop fan sounds like a jet engine")
fresh7("zh", "command/shutdown", "可以把你自己關機嗎？我要搬家，主機要拔插頭了")
fresh7("en", "command/shutdown", "please shut flora down, we're moving the machine it runs on to another room")

# --------------------------------------------------------------------------- fresh7: unsupported
fresh7("zh", "unsupported/orders", "早啊～我在得物买的球鞋鉴定完了没，帮我看看", **NO)
fresh7("en", "unsupported/orders", "can you check whether my wholesale order on the supplier portal got confirmed? "
       "it's PO-88213", **NO)
fresh7("zh", "unsupported/email", "帮我看一下我邮箱里面有没有学校发过来的家长会通知我记得是这周但是忘了具体哪天", **NO)
fresh7("en", "unsupported/email", "Would you be so kind as to send a quick email to my landlord letting him know the "
       "boiler's been fixed?", **NO)
fresh7("zh", "unsupported/calendar", "幫我看一下我下禮拜三的行事曆有沒有空", **NO)
fresh7("en", "unsupported/calendar", "add my son's parent-teacher conference to my calendar for next Tuesday at 4",
       **NO)
fresh7("zh", "unsupported/weather", "今日香港落唔落雨呀？我冇帶遮", **NO)
fresh7("en", "unsupported/weather", "heading to Edinburgh on Thursday, what's the forecast looking like there?", **NO)
fresh7("zh", "unsupported/flights", "我妈明天坐的那班飞机落地了没，CZ3102", **NO)
fresh7("en", "unsupported/flights", "can you upgrade my seat to business on tomorrow's flight to Madrid? I've got "
       "the miles", **NO)
fresh7("zh", "unsupported/bank", "帮我看看微信零钱里还剩多少，够不够交这个月的话费", **NO)
fresh7("en", "unsupported/bank", "move $500 from checking into my kid's college fund", **NO)
fresh7("zh", "unsupported/delivery", "京东快递显示今天送达，现在到哪了？我好下楼去拿", **NO)
fresh7("en", "unsupported/delivery", "WHERE IS MY PACKAGE. TRACKING 9400111899223100012345", **NO)
fresh7("zh", "unsupported/servers", "线上那台 api-03 的 nginx 日志帮我 tail 一下，看看有没有 502", **NO)
fresh7("en", "unsupported/servers", "can you check whether the backup job on our NAS actually ran last night?", **NO)
fresh7("zh", "unsupported/tickets", "我在客服系统里提的那个退款工单，处理到哪一步了", **NO)
fresh7("en", "unsupported/tickets", "reopen ticket #7731, the bug came back after the update", **NO)

# --------------------------------------------------------------------------- fresh7: clarify
fresh7("zh", "clarify/ambiguous", "你帮我跟他说一声")
fresh7("en", "clarify/ambiguous", "can you move it to later?")
fresh7("en", "clarify/ambiguous", "make it match the other one")

# --------------------------------------------------------------------------- fresh7: answer
fresh7("zh", "answer/api_key", "我看看哈……app-Pw39qKd7，應該是這個", setup=["dify上那个流程你帮我启动下"],
       capability=DIFY, parameters={"api_key": "app-Pw39qKd7"})
fresh7("en", "answer/api_key", "ugh hang on. ok: app-Jx62tRf5", setup=["need the Dify workflow run — can you do it?"],
       capability=DIFY, parameters={"api_key": "app-Jx62tRf5"})
fresh7("zh", "answer/url", "http://192.168.31.7:5000/api/printer/status 就这个", setup=["我想让你访问一个网址"],
       capability=HTTP, parameters={"url": "http://192.168.31.7:5000/api/printer/status"})
fresh7("en", "answer/url", "it's https://api.example.com/v1/shipments?carrier=ups, thx",
       setup=["there's an HTTP endpoint I'd like you to call for me"], capability=HTTP,
       parameters={"url": "https://api.example.com/v1/shipments?carrier=ups"})
fresh7("zh", "answer/time", "下午四点二十", setup=["提醒我去接孩子放学"])
fresh7("en", "answer/time", "Thursday at 8:05am, before her shift starts",
       setup=["remind me to text my sister happy birthday"])

# =========================================================================== FRESH8
# A tenth split, written after the seventh fresh split had been read and fixed, the same way:
# from how people talk, without reading Flora's rules first, new situations and new wordings
# (fragments and lists, voice-assistant openings, people adding to their own last message,
# corrections mid-message, hedging and double negatives, requests said as a need, questions about
# Flora's earlier answer, meta questions, rude and impatient people, nurses, teachers, farmers,
# lawyers, drivers, gamers and retirees, Chinese internet slang and pinyin abbreviations, Chinese
# with English tech words, the polite 您, British, Indian and Singapore English, a long ramble with
# one request inside, a capability's keyword in what is only chat and requests that name none,
# new loop setups). These go to fresh8.jsonl only, with ids like zh-chat-n001.


def fresh8(lang: str, category: str, say: str, setup: list[str] | None = None, **expect) -> None:
    """One case of the eighth fresh split."""
    FRESH8.append(make(lang, category, say, setup, expect))


ZH_HENS = ["每天早上6点提醒我去喂鸡"]
# the SQL said with it, so the loop task is registered at once (without it, it waits for the SQL)
ZH_HOMEWORK = ["每周五下午5点查一下数据库里这周没交作业的学生，SQL是 SELECT name FROM homework WHERE submitted = 0"]
EN_WARD = ["every day at 2pm remind me to do the medication round on ward 4"]
EN_GAMESERVER = ["check https://game.example.gg/api/server-status every 20 minutes and tell me if it goes down"]

# --------------------------------------------------------------------------- fresh8: chat
fresh8("zh", "chat/greeting", "哈喽哈喽～今天也是元气满满的打工人一枚🙋‍♀️")
fresh8("en", "chat/greeting", "Evening, Flora! Hope you're keeping well.")
fresh8("zh", "chat/thanks", "这个回答yyds，感谢感谢🙏", setup=["感冒了喝姜汤到底有没有用"])
fresh8("en", "chat/thanks", "cheers, that's sorted it", setup=["how do I get red wine out of a carpet?"])
fresh8("zh", "chat/feelings", "连上了三个夜班刚下班，腿都不是自己的了，病房今晚走了一位老人家，心里堵得慌")
fresh8("zh", "chat/feelings", "emo了，打了一晚上排位一直掉分，队友全是演员，我真的会谢")
fresh8("en", "chat/feelings", "a kid at the bus stop called me a useless old man today. shouldn't bother me at 74, "
       "but it does")
fresh8("en", "chat/feelings", "PASSED THE BAR EXAM!!! three years of hell and it's finally done")
fresh8("zh", "chat/smalltalk", "我们公司数据库昨天被实习生删了一张表，全组加班恢复到半夜，xswl，还好不是我干的")
fresh8("zh", "chat/smalltalk", "今年雨水足，我家玉米长得比我还高了，你见过玉米地没有？")
fresh8("zh", "chat/smalltalk", "你是真人还是机器人啊，说话怎么这么像人")
fresh8("en", "chat/smalltalk", "my nan just discovered reminder apps and now she sets one for literally everything, "
       "even 'drink tea'. honestly iconic")
fresh8("en", "chat/smalltalk", "wah lau, the queue at the hawker centre today damn long sia, waited 40 minutes for "
       "chicken rice")
fresh8("en", "chat/smalltalk", "saw https://win-a-tesla.example.net on a bus ad this morning, most obvious scam I've "
       "ever seen lol")
fresh8("zh", "chat/joke", "再来一个，刚那个xswl", setup=["讲个程序员的笑话"])
fresh8("en", "chat/joke", "I'm a nurse halfway through a 12-hour shift, I need a medical joke that won't get me fired")
fresh8("zh", "chat/knowledge", "老师上课讲SQL的JOIN我听得一脸懵，能用大白话讲讲left join和inner join有啥区别吗")
fresh8("zh", "chat/knowledge", "请问您，中国最长的河是哪一条？", answer_contains=["长江"])
fresh8("zh", "chat/knowledge", "一亩地是多少平方米来着", answer_contains=["666"])
fresh8("en", "chat/knowledge", "ELI5: what's an API key and why does everyone keep telling me not to paste it in "
       "Slack?")
fresh8("en", "chat/knowledge", "wait, why 8? I thought all bugs had 6", setup=["how many legs does a spider have?"])
fresh8("en", "chat/knowledge", "how many players on a cricket team, mate? settling a pub argument",
       answer_contains=["11", "eleven", "Eleven"])
fresh8("zh", "chat/arithmetic", "病人体重60公斤，医嘱按每公斤5毫克给药，一共要给多少毫克", answer_contains=["300"])
fresh8("zh", "chat/arithmetic", "一亩地打小麦850斤，我家种了12亩，总共能收多少斤",
       answer_contains=["10200", "10,200", "1.02万", "一万零二百"])
fresh8("en", "chat/arithmetic", "ugh just answer the question. what's 15 x 16", answer_contains=["240"])
fresh8("en", "chat/arithmetic", "how did you get that? walk me through it", setup=["what's 18% of 250?"],
       answer_contains=["45"])
fresh8("zh", "chat/advice", "退休两年了，天天在家闲得发慌，有没有适合六十多岁的人培养的爱好")
fresh8("zh", "chat/advice", "跑了半年网约车，想换去跑货运，你觉得哪个更适合一个快五十岁的人")
fresh8("en", "chat/advice", "new teacher here and my Year 9s walk all over me. how do I get a rowdy class to actually "
       "listen without shouting?")
fresh8("en", "chat/advice", "oh and she's a girl, forgot to say",
       setup=["any good name ideas for a golden retriever puppy?"])
fresh8("zh", "chat/translation", "“护士站”英语怎么说？病房来了个外国病人", answer_contains=["station", "Station"])
fresh8("en", "chat/translation", "what does yyds mean? my Chinese teammates spam it in our game chat",
       answer_contains=["永远的神", "forever", "Forever", "GOAT", "greatest of all time", "Greatest of all time"])
fresh8("zh", "chat/writing", "哦对了补充一下，是请两天病假，周四周五，理由写急性肠胃炎", setup=["帮我写一段跟领导请假的微信"])
fresh8("zh", "chat/writing", "帮我写个朋友圈文案，晒晒我家今年的大丰收，土一点没关系，要接地气")
fresh8("en", "chat/writing", "draft a polite but firm letter to my tenant about the rent being three weeks late — "
       "I'm a retired schoolteacher, not a lawyer, so keep it plain")
fresh8("en", "chat/writing", "write me a short bio for my Twitch channel. I stream cozy farming games and I'm terrible "
       "at them")

# --------------------------------------------------------------------------- fresh8: task
fresh8("zh", "task/http_request", "帮我查一下 https://api.example.cn/v1/stores 不对不对，是 https://api.example.cn/v2/stores",
       capability=HTTP, parameters={"url": "https://api.example.cn/v2/stores"})
fresh8("zh", "task/http_request", "您好，请问您能帮我请求一下 https://gov.example.cn/api/notice/latest 吗？我想看看最新的通知",
       capability=HTTP, parameters={"url": "https://gov.example.cn/api/notice/latest"})
fresh8("en", "task/http_request", "can help me check https://shop.example.sg/api/ping or not? the page like got "
       "problem leh",
       capability=HTTP, parameters={"url": "https://shop.example.sg/api/ping"})
fresh8("en", "task/http_request", "I need whatever https://api.example.com/v1/queue/depth is returning right now",
       capability=HTTP, parameters={"url": "https://api.example.com/v1/queue/depth"})
fresh8("zh", "task/data_query", "老板要上季度各区域的销售额，帮我从 orders 表里拉一下", capability=DQ)
fresh8("zh", "task/data_query", "sql给你：SELECT name FROM students WHERE score < 60 ，跑一下，看看这次期中谁没及格",
       capability=DQ, parameters={"sql": "SELECT name FROM students WHERE score < 60"})
fresh8("en", "task/data_query", "db. orders table. total per month this year. thx", capability=DQ)
fresh8("en", "task/data_query", "So we had the quarterly meeting today and honestly it went on for three hours, Karen "
       "from finance kept asking about churn and nobody had the figures, then the projector died and I spilled "
       "coffee all over my notes — anyway, long story short, could you pull how many members cancelled in each of "
       "the last three months from our database? I'd like to walk in tomorrow with the numbers.", capability=DQ)
fresh8("zh", "task/dify_workflow", "dify那个病历摘要的workflow帮忙run一下，key: app-Nr57vB2c", capability=DIFY,
       parameters={"api_key": "app-Nr57vB2c"})
fresh8("en", "task/dify_workflow", "Kindly run the Dify workflow for the contract clause review and revert with the "
       "output.", capability=DIFY)
fresh8("zh", "task/ask_experts", "村里想把闲置的老房子改成民宿，到底靠不靠谱，找几个专家帮我们合计合计", capability=EXP)
fresh8("en", "task/ask_experts", "get a few expert opinions on whether I should switch from PC to console gaming, "
       "my rig is getting old", capability=EXP)

# --------------------------------------------------------------------------- fresh8: plan
fresh8("zh", "plan/multi_step", "先调一下 https://api.example.cn/v1/greenhouse/3/climate 拿到大棚的温湿度，再请专家们看看要不要开风机")
fresh8("zh", "plan/multi_step", "帮我办三件事：1. 跑一下dify的周报生成流程 2. 查一下数据库里这周新注册的用户数 3. 两个结果汇总成一段话给我")
fresh8("en", "plan/multi_step", "first pull last month's overdue invoices from the database, then have the experts "
       "suggest how we should chase them")
fresh8("en", "plan/multi_step", "kindly fetch https://api.example.in/v1/fx/inr-usd and then post the rate to "
       "https://hooks.example.in/finance-channel")

# --------------------------------------------------------------------------- fresh8: loop
fresh8("zh", "loop/reminder", "明早8点 提醒 买菜：牛奶 鸡蛋 面包", schedule="tomorrow at 08:00")
fresh8("zh", "loop/reminder", "您好，麻烦您今天下午两点提醒我吃降压药", schedule="today at 14:00")
fresh8("en", "loop/reminder", "remind me at 4pm — no wait, make it 4:30pm — to call the vet about Biscuit's jab",
       schedule="today at 16:30")
fresh8("en", "loop/reminder", "I'm knackered. pop a reminder in for half nine tomorrow morning to ring the council "
       "about my parking permit", schedule="tomorrow at 09:30")
fresh8("zh", "loop/recurring", "每天清晨5点半提醒我去大棚放风", schedule="every day at 05:30")
fresh8("zh", "loop/recurring", "每30分钟帮我跑一下这条SQL：SELECT COUNT(*) FROM orders WHERE status = 'pending' ，积压多了我好知道",
       capability=DQ, schedule="every 30 minutes")
fresh8("en", "loop/recurring", "every Friday at 4pm remind me to enter the week's grades, teacher life",
       schedule="every Friday at 16:00")
fresh8("en", "loop/recurring", "can check https://api.example.sg/v1/queue every 10 minutes or not? want to know if it "
       "jam", capability=HTTP, schedule="every 10 minutes")
fresh8("zh", "loop/relative", "半小时后叫我一声，我眯一会儿，下午还有课", schedule="in 30 minutes")
fresh8("en", "loop/relative", "hey Flora, give me a shout in twelve minutes, the eggs will be done",
       schedule="in 12 minutes")

# --------------------------------------------------------------------------- fresh8: task_op
fresh8("zh", "task_op/cancel", "也不是说不要……就是那个任务先别跑了吧，撤掉", setup=ZH_TASK)
fresh8("en", "task_op/cancel", "ffs stop it, wrong workflow", setup=EN_TASK)
fresh8("zh", "task_op/revise", "结果太长了，挑重点整理成表格，再给我一版", setup=ZH_DONE)
fresh8("en", "task_op/revise", "that's not quite what I was after — could you redo the result but keep only the bits "
       "with dates in them?", setup=EN_DONE)
fresh8("zh", "task_op/comment", "给这个任务记一笔：数据是给周五例会用的", setup=ZH_DONE)
fresh8("en", "task_op/comment", "add a note to that one for me: checked by Priya, looks fine", setup=EN_DONE)
fresh8("zh", "task_op/rerun", "不是我不信你哈，但能不能再跑一遍，我怕刚才那次数据还没更新", setup=ZH_DONE)
fresh8("en", "task_op/rerun", "it's not that I don't trust the numbers, but could you give that another go? the feed "
       "updates on the hour", setup=EN_DONE)

# --------------------------------------------------------------------------- fresh8: loop_op
fresh8("zh", "loop_op/list", "定时的那些，给我列一下", setup=ZH_HENS)
fresh8("en", "loop_op/list", "what reminders have I got going at the moment, mate?", setup=EN_WARD)
fresh8("zh", "loop_op/pause", "这周进城看病，喂鸡的事托给邻居了，那个提醒先停几天", setup=ZH_HENS)
fresh8("en", "loop_op/pause", "the server's down for maintenance all weekend anyway, no point pinging it — put that "
       "check on hold", setup=EN_GAMESERVER)
fresh8("zh", "loop_op/resume", "期中考完了，没交作业那个查询接着开起来吧", setup=ZH_HOMEWORK + ["先把没交作业那个查询暂停"])
fresh8("en", "loop_op/resume", "I'm back on days, so turn the ward 4 medication reminder back on",
       setup=EN_WARD + ["pause the medication round reminder"])
fresh8("zh", "loop_op/delete", "学期结束了，作业那个每周的查询用不着了，删了吧", setup=ZH_HOMEWORK)
fresh8("en", "loop_op/delete", "we've moved to a different game, so get rid of the server-status check for good",
       setup=EN_GAMESERVER)
fresh8("zh", "loop_op/trigger", "喂鸡那个提醒现在先给我来一下，我想看看你提醒起来是啥样", setup=ZH_HENS)
fresh8("en", "loop_op/trigger", "run the server-status check right now, the lads are asking if it's up",
       setup=EN_GAMESERVER)

# --------------------------------------------------------------------------- fresh8: status
fresh8("zh", "status/abilities", "您好，我是种地的，不太懂这些，您这个助手都能帮上什么忙")
fresh8("en", "status/abilities", "so like… what's your deal, what can you actually do? list it")
fresh8("zh", "status/state", "刚才让你干的那个活儿到底跑完没有啊，急死了", must_not_claim=True)
fresh8("en", "status/state", "is anything of mine still running in the background rn?", must_not_claim=True)
fresh8("zh", "status/history", "我上礼拜是不是让你查过数据库来着？查的啥我都忘了", must_not_claim=True)
fresh8("en", "status/history", "what have I had you do today so far? just the list", must_not_claim=True)

# --------------------------------------------------------------------------- fresh8: command
fresh8("zh", "command/clear", "把咱俩之前聊的都清掉吧，感觉你被前面的话带偏了")
fresh8("en", "command/clear", "Could you clear down our conversation? It's got a bit muddled.")
fresh8("zh", "command/switch_model", "能不能换成qwen2.5-7b，这个模型回答有点拉")
fresh8("en", "command/switch_model", "switch over to llama-3.1-8b please, I want to compare the answers")
fresh8("zh", "command/shutdown", "您好，麻烦您把系统关一下，今晚机房要断电检修")
fresh8("en", "command/shutdown", "kindly shut down the Flora service, the server is being patched tonight")

# --------------------------------------------------------------------------- fresh8: unsupported
fresh8("zh", "unsupported/orders", "拼多多上砍了半天那个订单，商家发货没，帮我瞅一眼", **NO)
fresh8("en", "unsupported/orders", "can you cancel the graphics card I ordered on Newegg last night? buyer's remorse",
       **NO)
fresh8("zh", "unsupported/email", "帮我看看邮箱，律所那边有没有回我合同的事", **NO)
fresh8("en", "unsupported/email", "hey flora, read me my latest emails", **NO)
fresh8("zh", "unsupported/calendar", "我下个月哪几天排了夜班？帮我看下日历", **NO)
fresh8("en", "unsupported/calendar", "block out Thursday afternoon in my calendar for the court hearing", **NO)
fresh8("zh", "unsupported/weather", "明天我们镇上下不下霜？我得决定要不要给大棚加盖一层膜", **NO)
fresh8("en", "unsupported/weather", "is it going to rain in Mumbai this evening, yaar? need to know before I leave for "
       "the match", **NO)
fresh8("zh", "unsupported/flights", "帮我值个机，明早上海飞成都的MU5401，要靠窗的座位", **NO)
fresh8("en", "unsupported/flights", "check if my flight SQ322 tomorrow is delayed lah", **NO)
fresh8("zh", "unsupported/bank", "我的养老金这个月到账了没有？您帮我查查", **NO)
fresh8("en", "unsupported/bank", "how much is left in my Steam wallet? there's a sale on", **NO)
fresh8("zh", "unsupported/delivery", "顺丰那个件 SF1402938475612 到哪了，急用", **NO)
fresh8("en", "unsupported/delivery", "my Royal Mail parcel has said 'out for delivery' since 7am, where is it actually "
       "right now?", **NO)
fresh8("zh", "unsupported/servers", "帮我看下生产环境那几台机器的CPU是不是又飙到100%了", **NO)
fresh8("en", "unsupported/servers", "the shared drive at work is crawling, can you see how much disk is left on our "
       "file server?", **NO)
fresh8("zh", "unsupported/tickets", "我在物业App上报修的那个漏水工单，师傅接单了没", **NO)
fresh8("en", "unsupported/tickets", "escalate my Jira ticket OPS-2291 to P1, the client is screaming", **NO)

# --------------------------------------------------------------------------- fresh8: clarify
fresh8("zh", "clarify/ambiguous", "就按上次那样弄吧")
fresh8("zh", "clarify/ambiguous", "那个，你懂的，就那个，帮我搞一下")
fresh8("en", "clarify/ambiguous", "same again but for her this time")
fresh8("en", "clarify/ambiguous", "hey, could you sort that out for me?")

# --------------------------------------------------------------------------- fresh8: answer
fresh8("zh", "answer/api_key", "稍等我翻下笔记……找到了 app-Hs83Kd2m，不对不对，是 app-Hs83Kd2n",
       setup=["帮我把dify上那个翻译流程跑一下"], capability=DIFY, parameters={"api_key": "app-Hs83Kd2n"})
fresh8("en", "answer/api_key", "PFA the key: app-Lq49Wm8t", setup=["kindly run the dify workflow for me"],
       capability=DIFY, parameters={"api_key": "app-Lq49Wm8t"})
fresh8("zh", "answer/url", "地址：https://api.example.cn/v1/greenhouse/7/sensors", setup=["帮我调一个接口"],
       capability=HTTP, parameters={"url": "https://api.example.cn/v1/greenhouse/7/sensors"})
fresh8("en", "answer/url", "oh sorry, here — https://api.example.co.uk/v2/trains/departures?station=LDS",
       setup=["I've got an endpoint I need you to hit"], capability=HTTP,
       parameters={"url": "https://api.example.co.uk/v2/trains/departures?station=LDS"})
fresh8("zh", "answer/time", "晚上十一点半吧", setup=["提醒我给3床的病人换药"])
fresh8("en", "answer/time", "tomorrow, 7 sharp — no, make it 6:45 to be safe",
       setup=["remind me to move the car for street cleaning"])


# =========================================================================== FRESH9
# An eleventh split, written after the eighth fresh split had been read and fixed, the same way:
# from how people talk, without reading Flora's rules first, new situations and new wordings
# (bakers, plumbers, new parents, vets, night-shift nurses, landlords, beekeepers, PhD students,
# a wedding's best man, retirees; typos and run-on dictation, Chinese and English mixed, slang),
# and the first to cover Flora's hands and memory: files in the person's workspace, Python and
# shell run for them, web pages read and searched, telling Flora something about oneself,
# asking what it remembers, having it forget, and questions about the person's own facts that
# they never told (`must_not_invent`). These go to fresh9.jsonl only, with ids like zh-chat-p001.


def fresh9(lang: str, category: str, say: str, setup: list[str] | None = None, **expect) -> None:
    """One case of the ninth fresh split."""
    FRESH9.append(make(lang, category, say, setup, expect))


FILE_LIST, FILE_READ, FILE_WRITE, FILE_SEARCH = "file_list", "file_read", "file_write", "file_search"
PYTHON, SHELL, WEB_FETCH, WEB_SEARCH = "python_exec", "shell", "web_fetch", "web_search"
ZH_INVOICE_FLOW = ["帮我跑一下Dify上那个发票识别的工作流"]  # pauses for its api_key
EN_NEWSLETTER_FLOW = ["start the dify workflow for the weekly newsletter"]
ZH_SALES_FETCHED = ["请求一下 https://api.example.cn/shop/sales.json"]
EN_ROSTER_FETCHED = ["get https://api.example.com/team/roster.json"]
ZH_BATH = ["每天晚上9点提醒我给宝宝洗澡"]
ZH_SHOP_PING = ["每隔10分钟检查一下 https://shop.example.cn/ping 能不能打开"]
EN_INVOICES = ["every Monday at 9am remind me to send the invoices"]

# --------------------------------------------------------------------------- fresh9: chat
fresh9("zh", "chat/greeting", "嗨～好久没来找你聊了，最近咋样")
fresh9("en", "chat/greeting", "yo flora, long time no see 👋")
fresh9("zh", "chat/thanks", "谢啦，按你说的方法面包终于发起来了🍞", setup=["面团发不起来一般是什么原因"])
fresh9("en", "chat/thanks", "you're a lifesaver honestly, thank you!!", setup=["how do I unclog a bathroom sink without chemicals"])
fresh9("zh", "chat/feelings", "孩子刚满月，天天睡不够，感觉自己快崩了")
fresh9("en", "chat/feelings", "failed my driving test for the third time and I just feel so stupid")
fresh9("zh", "chat/smalltalk", "今天我们这儿下了第一场雪，整条街都白了，好美")
fresh9("zh", "chat/smalltalk", "你说养蜂的人是不是都不怕被蛰啊哈哈")
fresh9("en", "chat/smalltalk", "my cat just knocked my coffee off the desk AGAIN lol")
fresh9("en", "chat/smalltalk", "do you ever get bored answering the same stuff all day?")
fresh9("zh", "chat/joke", "来个程序员的冷笑话，越冷越好")
fresh9("en", "chat/joke", "got any bread puns? I run a bakery, I can take it")
fresh9("zh", "chat/knowledge", "为啥在高原上水不到一百度就开了")
fresh9("zh", "chat/knowledge", "通货膨胀到底是个啥，用大白话讲讲呗")
fresh9("en", "chat/knowledge", "whats the actual difference between a virus and a bacteria")
fresh9("en", "chat/knowledge", "who painted the ceiling of the Sistine Chapel?")
fresh9("zh", "chat/arithmetic", "一箱苹果48个，平分给6个班，每班几个？", answer_contains=["8"])
fresh9("zh", "chat/arithmetic", "3.5公斤，每公斤12块，一共多少钱", answer_contains=["42"])
fresh9("en", "chat/arithmetic", "what's 15% of 240", answer_contains=["36"])
fresh9("en", "chat/arithmetic", "if I drive 180 miles at 60 mph how many hours is that?", answer_contains=["3"])
fresh9("zh", "chat/advice", "第一次当伴郎，婚礼当天要注意点啥")
fresh9("en", "chat/advice", "how do I ask my landlord to fix the boiler without sounding rude?")
fresh9("zh", "chat/translation", "“早日康复”用英语怎么说比较地道")
fresh9("en", "chat/translation", "how do you say 'where is the train station' in Chinese?")
fresh9("zh", "chat/writing", "帮我写段朋友圈文案，庆祝我家面包店开业三周年，要温馨一点")
fresh9("en", "chat/writing", "can you polish this line for my CV: 'did lots of stuff with excel and customers'")
# the person's own facts, never told: the reply must say it does not know, not make one up
fresh9("zh", "chat/about_me", "我女儿几月几号生日来着？", must_not_invent=True)
fresh9("zh", "chat/about_me", "上回跟你说的我家狗叫啥来着", must_not_invent=True)
fresh9("en", "chat/about_me", "what's my blood type again?", must_not_invent=True)
fresh9("en", "chat/about_me", "remind me, what did I say my boss's name was?", must_not_invent=True)

# --------------------------------------------------------------------------- fresh9: task
fresh9("zh", "task/http_request", "麻烦调一下这个接口 https://inventory.example.cn/api/items?shop=12 ，我看看库存",
       capability=HTTP, parameters={"url": "https://inventory.example.cn/api/items?shop=12"})
fresh9("en", "task/http_request", "ping https://status.example.io/api/health and show me what comes back",
       capability=HTTP, parameters={"url": "https://status.example.io/api/health"})
fresh9("zh", "task/data_query", "查一下数据库里上个月退货最多的五个商品", capability=DQ)
fresh9("en", "task/data_query", "query the db: SELECT * FROM bookings WHERE day = '2026-12-24'", capability=DQ,
       parameters={"sql": "SELECT * FROM bookings WHERE day = '2026-12-24'"})
fresh9("zh", "task/dify_workflow", "用Dify跑一下我们的合同审核流程，key是 app-Qw82Lp0z", capability=DIFY,
       parameters={"api_key": "app-Qw82Lp0z"})
fresh9("en", "task/dify_workflow", "kick off the dify workflow that summarises customer complaints", capability=DIFY)
fresh9("zh", "task/ask_experts", "找几个专家一起分析分析，我这个小咖啡馆要不要开外卖", capability=EXP)
fresh9("en", "task/ask_experts", "I'd like a panel of experts to weigh in: should our vet clinic move to a four-day week?",
       capability=EXP)
# the hands: files in the person's workspace, Python, the shell, web pages
fresh9("zh", "task/files", "我工作区里现在都有哪些文件？列出来看看", capability=FILE_LIST)
fresh9("zh", "task/files", "在工作区新建一个 shopping.txt，写上：鸡蛋、牛奶、全麦面包", capability=FILE_WRITE,
       parameters={"path": "shopping.txt"})
fresh9("en", "task/files", "can u open notes/todo.md and tell me whats on it", capability=FILE_READ,
       parameters={"path": "notes/todo.md"})
fresh9("en", "task/files", "which of my files mention the word invoice? have a look through the workspace",
       capability=FILE_SEARCH)
fresh9("zh", "task/python", "用Python跑一下，算算1到1000里所有质数的和", capability=PYTHON)
fresh9("en", "task/python", "run this python for me: import math; print(math.factorial(20))", capability=PYTHON)
fresh9("zh", "task/shell", "帮我在终端跑个命令 wc -l orders.csv，看看有多少行", capability=SHELL)
fresh9("en", "task/shell", "can you run `grep -rn TODO src/` and give me the output", capability=SHELL)
fresh9("zh", "task/web", "帮我看看 https://www.example.org/news/today 这个网页上都说了啥", capability=WEB_FETCH,
       parameters={"url": "https://www.example.org/news/today"})
fresh9("zh", "task/web", "上网搜一下2026年春节放假安排", capability=WEB_SEARCH)
fresh9("en", "task/web", "read https://blog.example.com/posts/sourdough-basics and give me the gist",
       capability=WEB_FETCH, parameters={"url": "https://blog.example.com/posts/sourdough-basics"})
fresh9("en", "task/web", "look up online what time the Louvre opens on sundays", capability=WEB_SEARCH)

# --------------------------------------------------------------------------- fresh9: plan
fresh9("zh", "plan/multi_step", "先查一下数据库里这周的订单总数，然后把结果发到 https://hooks.example.cn/report")
fresh9("en", "plan/multi_step", "fetch https://api.example.com/leads.json, count how many are from Germany, "
       "then save that number into leads.txt in my workspace")

# --------------------------------------------------------------------------- fresh9: loop
fresh9("zh", "loop/reminder", "明天早上七点提醒我带孩子去打疫苗", schedule="tomorrow at 07:00")
fresh9("en", "loop/reminder", "remind me at 16:30 to pick up the dry cleaning", schedule="at 16:30")
fresh9("zh", "loop/recurring", "每个工作日早上8点提醒我吃降压药", schedule="every weekday at 08:00")
fresh9("en", "loop/recurring", "check https://shop.example.com/api/health every 15 minutes and ping me if it's down",
       capability=HTTP, schedule="every 15 minutes")
fresh9("zh", "loop/relative", "二十分钟后提醒我关火，汤在炖着", schedule="in 20 minutes")
fresh9("en", "loop/relative", "nudge me in 45 mins to move the laundry to the dryer", schedule="in 45 minutes")

# --------------------------------------------------------------------------- fresh9: task_op
fresh9("zh", "task_op/cancel", "算了算了，那个流程不跑了，取消吧", setup=ZH_INVOICE_FLOW, operates_on=DIFY)
fresh9("en", "task_op/cancel", "scrap that, don't need the newsletter thing after all", setup=EN_NEWSLETTER_FLOW,
       operates_on=DIFY)
fresh9("zh", "task_op/revise", "刚那个结果只留销售额那一列，重新弄一版给我", setup=ZH_SALES_FETCHED, operates_on=HTTP)
fresh9("en", "task_op/revise", "redo that but sort the people by surname this time", setup=EN_ROSTER_FETCHED,
       operates_on=HTTP)
fresh9("zh", "task_op/comment", "在刚才那个任务上备注一下：这是给财务老王看的", setup=ZH_SALES_FETCHED, operates_on=HTTP)
fresh9("en", "task_op/comment", "pin a note on that one: March figures look off, double-check later",
       setup=EN_ROSTER_FETCHED, operates_on=HTTP)
fresh9("zh", "task_op/rerun", "再拉一次吧，刚才那会儿数据可能还没更新", setup=ZH_SALES_FETCHED, operates_on=HTTP)
fresh9("en", "task_op/rerun", "run it again pls", setup=EN_ROSTER_FETCHED, operates_on=HTTP)

# --------------------------------------------------------------------------- fresh9: loop_op
fresh9("zh", "loop_op/list", "我现在都设了哪些定时提醒？", setup=ZH_BATH)
fresh9("en", "loop_op/list", "show me everything you've got scheduled for me", setup=EN_INVOICES)
fresh9("zh", "loop_op/pause", "这周宝宝去外婆家了，洗澡那个提醒先停一停", setup=ZH_BATH)
fresh9("en", "loop_op/pause", "I'm away for two weeks, hold off on the invoice reminders till I'm back", setup=EN_INVOICES)
fresh9("zh", "loop_op/resume", "宝宝回来了，洗澡提醒恢复吧", setup=ZH_BATH + ["先暂停给宝宝洗澡的提醒"])
fresh9("en", "loop_op/resume", "back from holiday — switch the invoice reminder back on",
       setup=EN_INVOICES + ["pause the invoice reminder"])
fresh9("zh", "loop_op/delete", "那个检查网站的定时任务删了吧，网站已经下线了", setup=ZH_SHOP_PING)
fresh9("en", "loop_op/delete", "get rid of the monday invoice reminder for good, the accountant does it now",
       setup=EN_INVOICES)
fresh9("zh", "loop_op/trigger", "现在就检查一次网站，别等十分钟了", setup=ZH_SHOP_PING)
fresh9("en", "loop_op/trigger", "fire the invoice reminder right now, I want to see what it looks like", setup=EN_INVOICES)

# --------------------------------------------------------------------------- fresh9: status
fresh9("zh", "status/abilities", "你到底能帮我干些啥？说说看")
fresh9("en", "status/abilities", "ok so whats actually in your toolbox? like what can u do")
fresh9("zh", "status/state", "你现在在忙啥？有任务在跑没", must_not_claim=True)
fresh9("en", "status/state", "anything still running on your end?", must_not_claim=True)
fresh9("zh", "status/history", "我今天都让你干过哪些活？", must_not_claim=True)
fresh9("en", "status/history", "what have you done for me so far today?", must_not_claim=True)

# --------------------------------------------------------------------------- fresh9: command
fresh9("zh", "command/clear", "把咱俩的聊天记录清空，从头来")
fresh9("en", "command/clear", "wipe our chat history please")
fresh9("zh", "command/switch_model", "换个大点的模型来回答我")
fresh9("en", "command/switch_model", "switch to a different model, this one's too slow")
fresh9("zh", "command/shutdown", "把你自己关了吧，今天用不上了")
fresh9("en", "command/shutdown", "shut yourself down flora")

# --------------------------------------------------------------------------- fresh9: unsupported
fresh9("zh", "unsupported/orders", "我在淘宝买的那双鞋发货了没？", **NO)
fresh9("en", "unsupported/orders", "did my amazon order for the printer ink go through?", **NO)
fresh9("zh", "unsupported/email", "看看我邮箱里有没有房东发来的新邮件", **NO)
fresh9("en", "unsupported/email", "any new emails from HR in my inbox?", **NO)
fresh9("zh", "unsupported/calendar", "我下周二下午有空吗，帮我看下日程", **NO)
fresh9("en", "unsupported/calendar", "what's on my calendar for friday?", **NO)
fresh9("zh", "unsupported/weather", "明天杭州会下雨吗？要不要带伞", **NO)
fresh9("en", "unsupported/weather", "is it gonna be windy in Brighton this afternoon?", **NO)
fresh9("zh", "unsupported/flights", "我订的去成都的航班改签成功了吗", **NO)
fresh9("en", "unsupported/flights", "has my flight to Lisbon been delayed?", **NO)
fresh9("zh", "unsupported/bank", "帮我看下工资卡上还剩多少钱", **NO)
fresh9("en", "unsupported/bank", "how much have I spent on my credit card this month?", **NO)
fresh9("zh", "unsupported/delivery", "我的顺丰快递现在到哪了", **NO)
fresh9("en", "unsupported/delivery", "where's my DPD parcel right now?", **NO)
fresh9("zh", "unsupported/servers", "我们公司那台生产服务器现在CPU多高", **NO)
fresh9("en", "unsupported/servers", "is our staging server still up?", **NO)
fresh9("zh", "unsupported/tickets", "周杰伦演唱会的票我抢到了没", **NO)
fresh9("en", "unsupported/tickets", "did I get the tickets for saturday's match?", **NO)

# --------------------------------------------------------------------------- fresh9: clarify
fresh9("zh", "clarify/ambiguous", "就照刚才那样再来一个")
fresh9("zh", "clarify/ambiguous", "帮我弄一下那个呗")
fresh9("en", "clarify/ambiguous", "same as usual pls")
fresh9("en", "clarify/ambiguous", "can you sort it like last time?")

# --------------------------------------------------------------------------- fresh9: answer
fresh9("zh", "answer/api_key", "key：app-Tz71Bn4x", setup=ZH_INVOICE_FLOW, capability=DIFY,
       parameters={"api_key": "app-Tz71Bn4x"})
fresh9("en", "answer/api_key", "here you go app-Mk20Rf9s", setup=EN_NEWSLETTER_FLOW, capability=DIFY,
       parameters={"api_key": "app-Mk20Rf9s"})
fresh9("zh", "answer/url", "https://api.example.cn/v1/bakery/orders", setup=["帮我调个接口看看数据"],
       capability=HTTP, parameters={"url": "https://api.example.cn/v1/bakery/orders"})
fresh9("en", "answer/url", "it's https://api.example.com/v3/tickets?open=true", setup=["send a request to our api for me"],
       capability=HTTP, parameters={"url": "https://api.example.com/v3/tickets?open=true"})
fresh9("zh", "answer/time", "就后天上午十点半吧", setup=["提醒我给房东转房租"])
fresh9("en", "answer/time", "tomorrow at 9:15", setup=["remind me to call the vet"])

# --------------------------------------------------------------------------- fresh9: memory
fresh9("zh", "memory/tell", "跟你说下，我是做烘焙的，自己开了家小面包店")
fresh9("en", "memory/tell", "just so you know, I'm vegetarian")
fresh9("zh", "memory/ask", "你都记得我哪些事？", setup=["我住在成都，养了一只叫豆豆的柯基"])
fresh9("zh", "memory/ask", "关于我，你现在知道些啥")
fresh9("en", "memory/ask", "what do you know about me?", setup=["I'm a night-shift nurse in Glasgow"])
fresh9("en", "memory/ask", "what have you got stored on me?")
fresh9("zh", "memory/forget", "把我养狗这事儿忘了吧", setup=["我养了一只叫豆豆的柯基"])
fresh9("en", "memory/forget", "please forget where I work", setup=["I work at the Royal Infirmary in Glasgow"])

# =========================================================================== FRESH10
# A twelfth split, written the same way after the ninth, by someone who had not read Flora's
# understanding rules: from how people talk, in new situations and new wordings (a florist, a
# pharmacist, a swimming coach, a removals firm, a translator, a wedding planner, a student
# before exams, an IT admin, a grandmother, a startup founder; Cantonese, Taiwanese and
# northern colloquial Chinese, Australian, Irish and US English, typos, dictation without
# punctuation, a request buried in a story, polite indirect and impatient ones, Chinese and
# English mixed, very short follow-ups after a setup turn), every category in both languages,
# the hands and memory included. These go to fresh10.jsonl only, with ids like zh-chat-q001.


def fresh10(lang: str, category: str, say: str, setup: list[str] | None = None, **expect) -> None:
    """One case of the tenth fresh split."""
    FRESH10.append(make(lang, category, say, setup, expect))


ZH_CONTRACT_FLOW = ["帮我跑一下Dify里那个合同审核的工作流"]  # pauses for its api_key
EN_QUOTE_FLOW = ["run the dify workflow that drafts our moving quotes"]
ZH_PRICES_FETCHED = ["请求一下 https://api.example.cn/florist/wholesale-prices.json"]
EN_TIMES_FETCHED = ["fetch https://api.example.com/swimclub/race-times.json"]
ZH_PRESCRIPTION = ["每周三下午两点提醒我去药房拿降压药"]
EN_BACKUP_CHECK = ["every night at 11pm remind me to check the server backups"]

# --------------------------------------------------------------------------- fresh10: chat
fresh10("zh", "chat/greeting", "早晨呀Flora！今日开铺前同你倾两句先")
fresh10("en", "chat/greeting", "G'day Flora, how ya going this arvo?")
fresh10("zh", "chat/thanks", "感謝你喔，照你說的練，今天那幾個小朋友都沒再嗆到水了",
        setup=["教小朋友游泳换气，他们老是呛水怎么办"])
fresh10("en", "chat/thanks", "cheers, the iron and brown paper trick worked a treat, you're a legend",
        setup=["how do I get candle wax out of a carpet"])
fresh10("zh", "chat/feelings", "明天就考高数了我还有三章没看 心慌得睡不着 感觉要挂了")
fresh10("en", "chat/feelings", "moved my mum into the care home today. I know it's the right thing but I feel wrecked")
fresh10("zh", "chat/smalltalk", "豆腐脑你站甜的还是咸的？反正我们天津人只认咸的")
fresh10("zh", "chat/smalltalk", "今儿这风刮得，骑车上班差点给我吹沟里去，哈哈")
fresh10("en", "chat/smalltalk", "honestly, who still irons their bedsheets? is that a normal thing people do")
fresh10("en", "chat/smalltalk", "did you catch the Matildas last night? what a finish eh")
fresh10("zh", "chat/joke", "来个跟药剂师有关的笑话呗，给药房同事午休解解闷")
fresh10("en", "chat/joke", "tell me a joke about wedding planners, I need a laugh after the bride I had today")
fresh10("zh", "chat/knowledge", "布洛芬跟对乙酰氨基酚到底有啥区别，哪个更伤胃？")
fresh10("zh", "chat/knowledge", "光合作用的暗反应是在叶绿体哪个部位进行的来着，明天生物要考")
fresh10("en", "chat/knowledge", "why do swimmers shave their legs before a big meet, does it actually make them faster")
fresh10("en", "chat/knowledge", "whats the actual difference between RAID 1 and RAID 5, in plain english")
fresh10("zh", "chat/arithmetic", "一束玫瑰11支，我要包18束，总共得备多少支？", answer_contains=["198"])
fresh10("zh", "chat/arithmetic", "搬家师傅一个钟头收280，搬了三个半小时，我该付多少", answer_contains=["980"])
fresh10("en", "chat/arithmetic", "if the pool's 50 metres how many laps is 1.5 km", answer_contains=["30"])
fresh10("en", "chat/arithmetic", "quick one — what's 15% of 2,340?", answer_contains=["351"])
fresh10("zh", "chat/advice", "婚礼定在户外草坪，万一那天下雨，有什么靠谱的备选方案吗")
fresh10("en", "chat/advice", "my cofounder wants to raise a seed round now but we've got 14 months of runway. "
                             "is it smarter to wait? what would you do")
fresh10("zh", "chat/translation", "把「请将本品放在儿童接触不到的地方」翻成英文，要贴在药袋上的")
fresh10("en", "chat/translation", "how would I say 'the movers arrive at 8am sharp' in Mandarin?")
fresh10("zh", "chat/writing", "帮我写段婚礼主持的开场白，温馨一点，一百来字就行")
fresh10("en", "chat/writing", "can you write a short farewell card message for Dave from IT, he's retiring after "
                              "30 years. keep it light")
fresh10("zh", "chat/about_me", "我上回体检量的血压是多少来着？", must_not_invent=True)
fresh10("zh", "chat/about_me", "我孙女叫啥名字，你还记得不", must_not_invent=True)
fresh10("en", "chat/about_me", "what was the name of the removalist company I booked? can't remember", must_not_invent=True)
fresh10("en", "chat/about_me", "hey what did I say my locker code at the pool was", must_not_invent=True)

# --------------------------------------------------------------------------- fresh10: task
fresh10("zh", "task/http_request", "帮我调一下这个接口 https://api.flowers.example.cn/v2/orders/today 看看今天进了多少单",
        capability=HTTP, parameters={"url": "https://api.flowers.example.cn/v2/orders/today"})
fresh10("en", "task/http_request", "can ya hit https://api.movers.example.com.au/v1/jobs?date=today for me",
        capability=HTTP, parameters={"url": "https://api.movers.example.com.au/v1/jobs?date=today"})
fresh10("zh", "task/data_query", "库房那个数据库帮我查下，SQL是 SELECT drug_name, qty FROM pharmacy_stock WHERE qty < 20",
        capability=DQ, parameters={"sql": "SELECT drug_name, qty FROM pharmacy_stock WHERE qty < 20"})
fresh10("en", "task/data_query", "run this against the db pls: SELECT swimmer, best_time FROM results ORDER BY best_time LIMIT 5",
        capability=DQ, parameters={"sql": "SELECT swimmer, best_time FROM results ORDER BY best_time LIMIT 5"})
fresh10("zh", "task/dify_workflow", "用Dify上合同翻译那个工作流跑一下，key 是 app-Tr4nsL8q",
        capability=DIFY, parameters={"api_key": "app-Tr4nsL8q"})
fresh10("en", "task/dify_workflow", "kick off my dify workflow for the wedding invites, api key app-W3dd1ngZ",
        capability=DIFY, parameters={"api_key": "app-W3dd1ngZ"})
fresh10("zh", "task/ask_experts", "让专家们议一议：我们这种三个人的初创公司，先做To B还是To C？", capability=EXP)
fresh10("en", "task/ask_experts", "get the expert panel's take on whether a small florist should sell on Instagram "
                                  "or build its own website", capability=EXP)
fresh10("zh", "task/files", "工作区里有个 exams/revision_plan.md，打开念给我听听", capability=FILE_READ,
        parameters={"path": "exams/revision_plan.md"})
fresh10("zh", "task/files", "翻翻我文件里哪些提到了“押金”两个字", capability=FILE_SEARCH)
fresh10("en", "task/files", "make a new file called packing_list.txt with: boxes, tape, bubble wrap, marker pens",
        capability=FILE_WRITE, parameters={"path": "packing_list.txt"})
fresh10("en", "task/files", "cna you lsit whats in the clients folder in my workspace", capability=FILE_LIST,
        parameters={"path": "clients"})
fresh10("zh", "task/python", "用python算一下 本金20万 年化3.5% 复利10年以后是多少", capability=PYTHON)
fresh10("zh", "task/python", "写段python代码把30个学员随机分成5组 跑一下把结果给我看", capability=PYTHON)
fresh10("en", "task/python", "can you execute this python: print(sorted(['Zoe', 'amy', 'Liam'], key=str.lower))",
        capability=PYTHON)
fresh10("en", "task/python", "chuck this into python and run it for me: print(sum(x*x for x in range(1, 101)))",
        capability=PYTHON)
fresh10("zh", "task/shell", "在终端执行一下 `df -h`，看看磁盘还剩多少", capability=SHELL,
        parameters={"command": "df -h"})
fresh10("zh", "task/shell", "帮我 run 一下 `du -sh photos`，睇下啲相占咗几多位", capability=SHELL,
        parameters={"command": "du -sh photos"})
fresh10("en", "task/shell", "run `tail -n 50 server.log` in the shell and show me what it says", capability=SHELL,
        parameters={"command": "tail -n 50 server.log"})
fresh10("en", "task/shell", "could you run git log --oneline -5 in my workspace? want to see the last few commits",
        capability=SHELL)
fresh10("zh", "task/web", "读一下这个网页 https://www.example.cn/news/2026/swim-rules.html 讲了啥，给我总结下",
        capability=WEB_FETCH, parameters={"url": "https://www.example.cn/news/2026/swim-rules.html"})
fresh10("zh", "task/web", "上网搜一下今年考研国家线大概什么时候出", capability=WEB_SEARCH)
fresh10("en", "task/web", "have a read of https://blog.example.org/how-to-pack-a-kitchen and give me the gist",
        capability=WEB_FETCH, parameters={"url": "https://blog.example.org/how-to-pack-a-kitchen"})
fresh10("en", "task/web", "search the web for wedding venues near Galway that take 150 guests", capability=WEB_SEARCH)

# --------------------------------------------------------------------------- fresh10: plan
fresh10("zh", "plan/multi_step", "先去 https://api.example.cn/pharmacy/sales 拉一下本月销量，再用数据库查库存"
                                 "（SELECT name, qty FROM stock），最后两边对一对，给我写个补货建议")
fresh10("en", "plan/multi_step", "first search the web for removalist prices in Sydney, then read the top result, "
                                 "and after that draft me a quote template based on it")

# --------------------------------------------------------------------------- fresh10: loop
fresh10("zh", "loop/reminder", "明天下午三点提醒我给李太太送新娘捧花", schedule="tomorrow at 15:00")
fresh10("en", "loop/reminder", "remind me Friday at 4:30pm to ring the Hendersons about the piano move",
        schedule="Friday at 16:30")
fresh10("zh", "loop/recurring", "以后每个礼拜一早上七点提醒我给泳队发这周的训练计划", schedule="every Monday at 7:00")
fresh10("en", "loop/recurring", "every Sunday at 6pm remind me to send the squad list to the parents",
        schedule="every Sunday at 18:00")
fresh10("zh", "loop/relative", "四十分钟后喊我一声，锅里还炖着汤呢", schedule="in 40 minutes")
fresh10("en", "loop/relative", "give me a shout in 25 minutes to move the car before the parking inspector comes round",
        schedule="in 25 minutes")

# --------------------------------------------------------------------------- fresh10: task_op
fresh10("zh", "task_op/cancel", "哎算了算了，那个先别弄了，撤了吧", setup=ZH_CONTRACT_FLOW, operates_on=DIFY)
fresh10("en", "task_op/cancel", "actually scrap that, don't bother", setup=EN_QUOTE_FLOW, operates_on=DIFY)
fresh10("zh", "task_op/revise", "能不能按价格从高到低重新排一下再给我", setup=ZH_PRICES_FETCHED, operates_on=HTTP)
fresh10("en", "task_op/revise", "redo that but only the under-12s please", setup=EN_TIMES_FETCHED, operates_on=HTTP)
fresh10("zh", "task_op/comment", "在这个任务上记一笔：玫瑰进价下礼拜要涨", setup=ZH_PRICES_FETCHED, operates_on=HTTP)
fresh10("en", "task_op/comment", "stick a note on that one: Jack's 200m time looks off, check with his coach",
        setup=EN_TIMES_FETCHED, operates_on=HTTP)
fresh10("zh", "task_op/rerun", "再拉一遍，供应商刚说价格更新了", setup=ZH_PRICES_FETCHED, operates_on=HTTP)
fresh10("en", "task_op/rerun", "go again on that, the club just uploaded the new results", setup=EN_TIMES_FETCHED,
        operates_on=HTTP)

# --------------------------------------------------------------------------- fresh10: loop_op
fresh10("zh", "loop_op/list", "我在你这儿定了哪些到点提醒的事来着，给我瞅一眼", setup=ZH_PRESCRIPTION)
fresh10("en", "loop_op/list", "hey what reminders and scheduled bits have I set up with you, I can't keep track", setup=EN_BACKUP_CHECK)
fresh10("zh", "loop_op/pause", "这两个礼拜我去女儿家住，药是她带我去拿，拿药那个提醒先停一停", setup=ZH_PRESCRIPTION)
fresh10("en", "loop_op/pause", "I'm on leave all next week so put the backup reminder on hold for now",
        setup=EN_BACKUP_CHECK)
fresh10("zh", "loop_op/resume", "我回来了，拿药那个提醒接着响吧", setup=ZH_PRESCRIPTION + ["先把拿药的提醒暂停一下"])
fresh10("en", "loop_op/resume", "back from leave, switch the backup one on again cheers",
        setup=EN_BACKUP_CHECK + ["pause the backup reminder"])
fresh10("zh", "loop_op/delete", "医生说降压药不用吃了，拿药那个提醒删了吧", setup=ZH_PRESCRIPTION)
fresh10("en", "loop_op/delete", "we've moved the backups to the cloud, so kill that 11pm reminder for good",
        setup=EN_BACKUP_CHECK)
fresh10("zh", "loop_op/trigger", "拿药那个提醒现在就给我来一遍，我看看它长啥样", setup=ZH_PRESCRIPTION)
fresh10("en", "loop_op/trigger", "set the backup nag off now, I want to check it actually pings my phone",
        setup=EN_BACKUP_CHECK)

# --------------------------------------------------------------------------- fresh10: status
fresh10("zh", "status/abilities", "我开了个小花店，想问问你到底能帮我干点啥？")
fresh10("en", "status/abilities", "so what are you actually capable of? like could you be any use to a small removals business")
fresh10("zh", "status/state", "我交给你的活儿现在都咋样了？有没有卡住的", must_not_claim=True)
fresh10("en", "status/state", "are you still chewing on any of the jobs I handed you, or is it all wrapped up?", must_not_claim=True)
fresh10("zh", "status/history", "这礼拜我都让你跑过哪些任务？列一下", must_not_claim=True)
fresh10("en", "status/history", "give me a rundown of the stuff you've run for me since Monday", must_not_claim=True)

# --------------------------------------------------------------------------- fresh10: command
fresh10("zh", "command/clear", "咱俩的聊天记录太乱了，清一下吧，我想从头来")
fresh10("en", "command/clear", "clear out our chat history, it's getting way too cluttered")
fresh10("zh", "command/switch_model", "換個聰明一點的模型好不好，改用 qwen2.5-14b")
fresh10("en", "command/switch_model", "swap to llama3 70b for the rest of this convo")
fresh10("zh", "command/shutdown", "你先关了吧，今晚机房断电维护")
fresh10("en", "command/shutdown", "power yourself off mate, we're done for the day")

# --------------------------------------------------------------------------- fresh10: unsupported
fresh10("zh", "unsupported/orders", "帮我把京东上那单打印纸改成周六送", **NO)
fresh10("en", "unsupported/orders", "can you cancel the extra boxes I ordered from Officeworks last night", **NO)
fresh10("zh", "unsupported/email", "帮我回一下王总那封邮件，就说报价单明天上午发他", **NO)
fresh10("en", "unsupported/email", "so the venue was meant to confirm numbers by today and I'm flat out with a "
                                   "rehearsal, did their email come in this morning?", **NO)
fresh10("zh", "unsupported/calendar", "我下礼拜二下午有没有别的安排？帮我看看日程", **NO)
fresh10("en", "unsupported/calendar", "pop the Henderson move into my calendar for the 14th", **NO)
fresh10("zh", "unsupported/weather", "周六在广州办户外婚礼，那天会不会下雨啊", **NO)
fresh10("en", "unsupported/weather", "what's the swell and wind looking like at Bondi tomorrow morning?", **NO)
fresh10("zh", "unsupported/flights", "帮我查查下周五北京飞成都最早那班还有没有票", **NO)
fresh10("en", "unsupported/flights", "is my 6:40 Ryanair out of Dublin running late? stuck in traffic on the M50", **NO)
fresh10("zh", "unsupported/bank", "帮我看下招行卡上，房东的押金退回来没有", **NO)
fresh10("en", "unsupported/bank", "transfer 500 bucks to my cofounder's account would ya", **NO)
fresh10("zh", "unsupported/delivery", "我嗰個順豐件而家去到邊啦？單號 SF1234567890", **NO)
fresh10("en", "unsupported/delivery", "where's my Australia Post parcel at, it's been a week", **NO)
fresh10("zh", "unsupported/servers", "帮我登一下公司那台生产服务器，看看CPU是不是又满了", **NO)
fresh10("en", "unsupported/servers", "restart nginx on our prod box, it's throwing 502s again", **NO)
fresh10("zh", "unsupported/tickets", "帮我抢两张周六晚上那场演唱会的票，内场的", **NO)
fresh10("en", "unsupported/tickets", "book me two tickets for the Saturday matinee of Hamilton", **NO)

# --------------------------------------------------------------------------- fresh10: clarify
fresh10("zh", "clarify/ambiguous", "那啥，你给整一下呗")
fresh10("zh", "clarify/ambiguous", "就照上回那样弄")
fresh10("en", "clarify/ambiguous", "yeah go ahead with it")
fresh10("en", "clarify/ambiguous", "can u sort that one out")

# --------------------------------------------------------------------------- fresh10: answer
fresh10("zh", "answer/api_key", "app-9FlorA22 给你", setup=["运行一下Dify里做报价单的那个工作流"], capability=DIFY,
        parameters={"api_key": "app-9FlorA22"})
fresh10("en", "answer/api_key", "oh right, the key. app-GlossX71", setup=["start the dify workflow for the translation glossary"],
        capability=DIFY, parameters={"api_key": "app-GlossX71"})
fresh10("zh", "answer/url", "就这个地址 https://booking.example.cn/api/pool/slots", setup=["帮我发个HTTP请求查一下泳池的预约情况"],
        capability=HTTP, parameters={"url": "https://booking.example.cn/api/pool/slots"})
fresh10("en", "answer/url", "my bad, here: https://api.example.com/v2/stock-levels", setup=["I need you to call an API for me"],
        capability=HTTP, parameters={"url": "https://api.example.com/v2/stock-levels"})
fresh10("zh", "answer/time", "晚上八点半，她那会儿才下班", setup=["提醒我给新娘回个电话"])
fresh10("en", "answer/time", "tomorrow, 5:30pm, once I've finished at the shop", setup=["remind me to collect the keys from the agent"])

# --------------------------------------------------------------------------- fresh10: memory
fresh10("zh", "memory/tell", "跟你说一声，我对青霉素过敏，以后说到用药的时候注意点")
fresh10("en", "memory/tell", "fyi I coach at the local leisure centre, mostly the under-10s squad")
fresh10("zh", "memory/ask", "你那个小本本上关于我都记了点啥？", setup=["我在佛山开花店，店叫小满花房"])
fresh10("zh", "memory/ask", "之前聊了那么多，你对我都记下了些什么")
fresh10("en", "memory/ask", "go on then, tell me everything you've picked up about me",
        setup=["I'm a translator, mostly Japanese to English"])
fresh10("en", "memory/ask", "hang on, do you actually keep stuff about me? like what?")
fresh10("zh", "memory/forget", "我住哪儿那条你忘了吧，不想让你记着", setup=["我家在朝阳区望京那边"])
fresh10("en", "memory/forget", "forget what I told you about my partner, please", setup=["my partner's name is Siobhan"])


# =========================================================================== FRESH11
# A thirteenth split, written the same way after the tenth, by someone who had not read Flora's
# understanding rules, its example banks or the earlier splits' messages: from how people talk,
# in new situations and new wordings (a tattoo artist, a ferry captain, a school bus driver, a
# dental hygienist, a wine shop owner, a choir director, an indie game developer, a hotel night
# porter, a beekeeper on a Hong Kong rooftop, a nursing student, a Chengdu taxi driver, a
# marathon runner, a second-hand bookseller; Sichuan, Dongbei and Shanghai colloquial Chinese,
# Hong Kong Cantonese, Taiwanese, simplified and traditional characters, Scottish, South African,
# Indian, Canadian and Singapore English, typos, dictation without punctuation, emoji, Chinese
# and English mixed, very short follow-ups after a setup turn, requests wrapped in a story,
# hedged and impatient ones), every category in both languages, the hands and memory included.
# These go to fresh11.jsonl only, with ids like zh-chat-r001.


def fresh11(lang: str, category: str, say: str, setup: list[str] | None = None, **expect) -> None:
    """One case of the eleventh fresh split."""
    FRESH11.append(make(lang, category, say, setup, expect))


ZH_ROSTER_FLOW = ["跑一下dify上排夜班的那个工作流"]  # pauses for its api_key
EN_HANDOVER_FLOW = ["can you run the dify workflow that writes up the night handover notes"]  # pauses for its api_key
ZH_CELLAR_FETCHED = ["帮我调一下 https://api.example.cn/cellar/stock.json 看看库存"]
EN_BOOKINGS_FETCHED = ["get https://api.example.com/hotel/bookings/tonight.json for me"]
ZH_HIVE_CHECK = ["每个星期六早上九点提醒我上天台检查蜂箱"]  # a weekly loop task
EN_STRETCH = ["remind me every day at 7pm to stretch after my run"]  # a daily loop task

# --------------------------------------------------------------------------- fresh11: chat
fresh11("zh", "chat/greeting", "嗨Flora～好耐冇見，最近點呀？")
fresh11("en", "chat/greeting", "Awright Flora! How's it gaun the day?")
fresh11("zh", "chat/thanks", "多谢多谢🙏 照你讲的先夸再提，今晚排练那两个男高音真的稳多了",
        setup=["合唱团里有两个男高音老是抢拍，我该怎么跟他们说才不伤和气"])
fresh11("en", "chat/thanks", "brilliant, the breathing thing sorted it, ta very much 🙏",
        setup=["my choir keeps going flat on the long notes in the second verse, any tips?"])
fresh11("zh", "chat/feelings", "今天在病房实习被带教老师当着病人的面骂了一顿，憋了一整天，回宿舍才敢哭")
fresh11("en", "chat/feelings",
        "honestly so burnt out. three months on this indie game and my playtesters just said it's boring")
fresh11("zh", "chat/smalltalk", "巴适得很！今天拉了个老外，一路跟我学说“安逸”，笑死我了")
fresh11("zh", "chat/smalltalk", "我們家天台那幾箱蜜蜂今日好乖，一隻都冇叮我，開心😆")
fresh11("en", "chat/smalltalk",
        "ja nee, load shedding again tonight so I'm sitting here with a candle chatting to you, lekker 😅")
fresh11("en", "chat/smalltalk", "watched the sun come up from the wheelhouse this morning. never gets old, that")
fresh11("zh", "chat/joke", "侬讲只笑话拨我听听好伐，跟老酒有关系的，今朝店里向一个客人也没")
fresh11("en", "chat/joke", "got any dad jokes about teeth? need one for my 3 o'clock patient lol")
fresh11("zh", "chat/knowledge", "为啥蜜蜂蜇了人之后自己就会死啊？")
fresh11("zh", "chat/knowledge", "跑马拉松说的“撞墙”到底是怎么回事，身体里发生了啥")
fresh11("en", "chat/knowledge", "why do old paperbacks go yellow when the hardbacks from the same year don't?")
fresh11("en", "chat/knowledge", "how do bees actually decide which larva gets to be the queen?")
fresh11("zh", "chat/arithmetic", "起步价8块含2公里，之后每公里1块9，我这单一共跑了12公里，该收好多钱？",
        answer_contains=["27"])
fresh11("zh", "chat/arithmetic", "一箱6瓶，每瓶138，客人要3箱，打九折的话一共多少钱",
        answer_contains=["2235.6", "2,235.6"])
fresh11("en", "chat/arithmetic", "my three 5k splits were 24:30, 25:10 and 23:50 - what's that all added up?",
        answer_contains=["1:13:30", "73:30", "73 minutes and 30", "73 minutes 30", "73 min 30",
                         "1 hour 13 minutes", "1 hour, 13 minutes", "1 hour and 13 minutes", "1h 13m"])
fresh11("en", "chat/arithmetic", "room's £89 a night, guest stayed 4 nights, plus 20% VAT on top. total?",
        answer_contains=["427.2"])
fresh11("zh", "chat/advice", "我那个二手书店门口想摆个一块钱的书箱招客，会不会光招来只翻不买的？你帮我出出主意")
fresh11("en", "chat/advice",
        "I'm a nursing student and I freeze up whenever I have to give an injection with my tutor watching. "
        "any advice?")
fresh11("zh", "chat/translation", "幫我把「請勿觸碰蜂箱，蜜蜂會螫人」翻成英文，要貼喺天台門口")
fresh11("en", "chat/translation",
        "translate 'please keep your seatbelt on until the bus stops' into Afrikaans for me, it's for the bus")
fresh11("zh", "chat/writing", "帮我写段朋友圈文案，宣传周六合唱团在社区的义演，轻松点别太官方")
fresh11("en", "chat/writing",
        "can you write a short friendly insta caption for our flash tattoo day this saturday, walk-ins welcome 10 to 6")
fresh11("zh", "chat/about_me", "我上回洗牙是哪天来着？你帮我想想", must_not_invent=True)
fresh11("zh", "chat/about_me", "哎我车牌号多少来着，脑壳突然短路了", must_not_invent=True)
fresh11("en", "chat/about_me", "what's my sister's husband called again? drawing a total blank", must_not_invent=True)
fresh11("en", "chat/about_me", "what's the code for my bike lock, I've gone completely blank", must_not_invent=True)

# --------------------------------------------------------------------------- fresh11: the hands
fresh11("zh", "task/files", "把工作区里 setlists/spring_concert.txt 打开念给我听",
        capability="file_read", parameters={"path": "setlists/spring_concert.txt"})
fresh11("zh", "task/files", "我那堆笔记里哪个文件提到过“蜂王浆”？帮我搜一下", capability="file_search")
fresh11("en", "task/files", "what's in the chapters folder? just list the files for me",
        capability="file_list", parameters={"path": "chapters"})
fresh11("en", "task/files",
        "make a file called shift_notes/tuesday.txt and put 'room 212 wants a 5am wake-up call' in it",
        capability="file_write", parameters={"path": "shift_notes/tuesday.txt"})
fresh11("zh", "task/python", "用python算一下1到1000里面能被7整除、但不能被5整除的数有几个，跑出来给我看",
        capability="python_exec")
fresh11("zh", "task/python", "夜班要换门禁密码了，你写段Python生成10个不重复的6位数，跑一下把结果给我",
        capability="python_exec")
fresh11("en", "task/python",
        "can help me run python to count how many days from 2025-03-01 to 2025-10-12 or not? need exact one lah",
        capability="python_exec")
fresh11("en", "task/python",
        "use python to shuffle these 12 into 3 teams of 4 pls: Ava, Ben, Cole, Dara, Eli, Fay, Gus, Hana, Ivo, "
        "Jess, Kai, Lou", capability="python_exec")
fresh11("zh", "task/shell", "终端里执行一下 du -sh * 看看哪个文件夹最占地方",
        capability="shell", parameters={"command": "du -sh *"})
fresh11("zh", "task/shell", "跑一下 ls -lt photos 我看下今天那几张纹身照片传上去没",
        capability="shell", parameters={"command": "ls -lt photos"})
fresh11("en", "task/shell", "could you run git status, wanna see what I haven't committed before the build",
        capability="shell", parameters={"command": "git status"})
fresh11("en", "task/shell", "pls run wc -l guests.csv and tell me the number",
        capability="shell", parameters={"command": "wc -l guests.csv"})
fresh11("zh", "task/web", "这个网页讲了啥 https://www.example.org/beekeeping/hk-swarm-season 帮我读一下概括几句",
        capability="web_fetch", parameters={"url": "https://www.example.org/beekeeping/hk-swarm-season"})
fresh11("zh", "task/web", "上网搜搜今年成都马拉松啥时候开始报名", capability="web_search")
fresh11("en", "task/web", "have a read of https://www.example.com/blog/ferry-safety-2025 and give me the gist",
        capability="web_fetch", parameters={"url": "https://www.example.com/blog/ferry-safety-2025"})
fresh11("en", "task/web", "search the web for second-hand book fairs in Edinburgh this autumn", capability="web_search")

# --------------------------------------------------------------------------- fresh11: the other tasks
fresh11("zh", "task/http_request", "GET 一下 https://api.example.cn/ferry/schedule?route=3 看看返回啥",
        capability=HTTP, parameters={"url": "https://api.example.cn/ferry/schedule?route=3"})
fresh11("en", "task/http_request", "hit https://api.example.com/schoolbus/routes/14 and show me the JSON, eh",
        capability=HTTP, parameters={"url": "https://api.example.com/schoolbus/routes/14"})
fresh11("zh", "task/data_query", "在库里跑这句：SELECT name, vintage FROM wines WHERE stock < 5",
        capability=DQ, parameters={"sql": "SELECT name, vintage FROM wines WHERE stock < 5"})
fresh11("en", "task/data_query",
        "Kindly run this on the clinic database: SELECT patient_id, next_visit FROM recalls WHERE next_visit < "
        "'2025-07-01'", capability=DQ,
        parameters={"sql": "SELECT patient_id, next_visit FROM recalls WHERE next_visit < '2025-07-01'"})
fresh11("zh", "task/dify_workflow", "用dify那个排班工作流给我排下礼拜的夜班，key是 app-Qm8x2LkP",
        capability=DIFY, parameters={"api_key": "app-Qm8x2LkP"})
fresh11("en", "task/dify_workflow", "start the Dify workflow that prices our new stock, the key's app-Zp41vRwe",
        capability=DIFY, parameters={"api_key": "app-Zp41vRwe"})
fresh11("zh", "task/ask_experts", "让专家们讨论一下：新手纹身师应该先练线条还是先练打雾？", capability=EXP)
fresh11("en", "task/ask_experts",
        "put this to your panel of experts: should a two-person indie studio go early access or wait for a full "
        "release?", capability=EXP)

# --------------------------------------------------------------------------- fresh11: plans and loops
fresh11("zh", "plan/multi_step",
        "先把 https://api.example.cn/clinic/appointments.json 里的预约拉下来，再把明天上午的挑出来写进 tomorrow.txt")
fresh11("en", "plan/multi_step",
        "grab https://api.example.com/choir/members.json, then count how many sopranos there are and write "
        "their names to sopranos.txt")
fresh11("zh", "loop/reminder", "明天早上六点半叫我起床去码头，别忘了哈", schedule="tomorrow at 6:30")
fresh11("en", "loop/reminder", "remind me friday at 4:45pm to cash up the till before I lock the shop",
        schedule="Friday at 16:45")
fresh11("zh", "loop/recurring", "每个礼拜四晚上七点半提醒我合唱团排练", schedule="every Thursday at 19:30")
fresh11("en", "loop/recurring", "every weekday at 6:40am ping me to do the pre-trip check on the bus",
        schedule="every weekday at 6:40")
fresh11("zh", "loop/relative", "二十分钟后喊我一声 炉子上还炖着汤", schedule="in 20 minutes")
fresh11("en", "loop/relative", "give us a shout in 45 mins, the numbing cream needs to come off",
        schedule="in 45 minutes")

# --------------------------------------------------------------------------- fresh11: operations on tasks
fresh11("zh", "task_op/comment", "这数据不对吧，波尔多那几款我上礼拜就卖光了",
        setup=ZH_CELLAR_FETCHED, operates_on=HTTP, must_not_claim=True)
fresh11("en", "task_op/comment", "hmm, that's missing the late check-ins, half of them aren't on there",
        setup=EN_BOOKINGS_FETCHED, operates_on=HTTP, must_not_claim=True)
fresh11("zh", "task_op/revise", "刚才那个改成查二号店的，地址后面加上 ?shop=2",
        setup=ZH_CELLAR_FETCHED, operates_on=HTTP, must_not_claim=True)
fresh11("en", "task_op/revise", "tweak that last one so it pulls tomorrow's bookings instead of tonight's",
        setup=EN_BOOKINGS_FETCHED, operates_on=HTTP, must_not_claim=True)
fresh11("zh", "task_op/rerun", "再跑一遍刚才那个，我刚入完一批货",
        setup=ZH_CELLAR_FETCHED, operates_on=HTTP, must_not_claim=True)
fresh11("en", "task_op/rerun", "run that again would you, a couple more have just checked in",
        setup=EN_BOOKINGS_FETCHED, operates_on=HTTP, must_not_claim=True)
fresh11("zh", "task_op/cancel", "算了算了，排班那个不弄了，取消吧",
        setup=ZH_ROSTER_FLOW, operates_on=DIFY, must_not_claim=True)
fresh11("en", "task_op/cancel", "actually scrap that, the day manager's doing the handover herself",
        setup=EN_HANDOVER_FLOW, operates_on=DIFY, must_not_claim=True)

# --------------------------------------------------------------------------- fresh11: operations on loop tasks
fresh11("zh", "loop_op/list", "我而家設咗幾多個定時提醒？列出嚟睇下", setup=ZH_HIVE_CHECK, must_not_claim=True)
fresh11("en", "loop_op/list", "what reminders have I got set up at the moment?", setup=EN_STRETCH,
        must_not_claim=True)
fresh11("zh", "loop_op/pause", "呢排成日落雨，檢查蜂箱嗰個提醒暫停住先", setup=ZH_HIVE_CHECK, must_not_claim=True)
fresh11("en", "loop_op/pause", "put the stretching reminder on hold for a bit, I've strained my calf",
        setup=EN_STRETCH, must_not_claim=True)
fresh11("zh", "loop_op/resume", "天台修好了，蜂箱那个提醒恢复吧",
        setup=ZH_HIVE_CHECK + ["天台在维修，检查蜂箱那个提醒先停一停"], must_not_claim=True)
fresh11("en", "loop_op/resume", "calf's fine now, turn the stretching one back on",
        setup=EN_STRETCH + ["pause the stretch reminder, I'm injured"], must_not_claim=True)
fresh11("zh", "loop_op/delete", "蜂箱都送人了，周六那个提醒删掉吧", setup=ZH_HIVE_CHECK, must_not_claim=True)
fresh11("en", "loop_op/delete", "get rid of the 7pm stretch reminder altogether", setup=EN_STRETCH,
        must_not_claim=True)
fresh11("zh", "loop_op/trigger", "检查蜂箱那个提醒现在就跑一次，我看看效果", setup=ZH_HIVE_CHECK,
        must_not_claim=True)
fresh11("en", "loop_op/trigger", "fire the stretch reminder now so I can see what it looks like",
        setup=EN_STRETCH, must_not_claim=True)

# --------------------------------------------------------------------------- fresh11: status and commands
fresh11("zh", "status/abilities", "欸你到底可以幫我做什麼啊？我開計程車的，用得到嗎")
fresh11("en", "status/abilities", "so what sort of things can you actually do? could you be any use in a bookshop?")
fresh11("zh", "status/state", "你现在在忙啥呢？手上有活儿在跑没", must_not_claim=True)
fresh11("en", "status/state", "are you in the middle of anything right now?", must_not_claim=True)
fresh11("zh", "status/history", "今天我都让你干过哪些活儿？给我捋一下", must_not_claim=True)
fresh11("en", "status/history", "what have I asked you to do so far today?", must_not_claim=True)
fresh11("zh", "command/clear", "咱俩唠嗑的记录全给整没了吧，从头来")
fresh11("en", "command/clear", "wipe our chat history pls, I want a clean slate")
fresh11("zh", "command/switch_model", "給我換一個大一點的模型好不好，這個回答又慢又笨")
fresh11("en", "command/switch_model", "switch yourself over to a bigger model, this one's a bit slow on the uptake")
fresh11("zh", "command/shutdown", "Flora你自己关掉吧，把服务停了，今天用不着了")
fresh11("en", "command/shutdown", "shut yourself down for the night, Flora")

# --------------------------------------------------------------------------- fresh11: what no tool reaches
fresh11("zh", "unsupported/orders", "帮我看下我上个月在淘宝下的订单一共花了多少钱", must_not_claim=True)
fresh11("en", "unsupported/orders", "has my Takealot order for the brake pads been dispatched yet?",
        must_not_claim=True)
fresh11("zh", "unsupported/email", "帮我看看邮箱，合唱团团长回我邮件没有", must_not_claim=True)
fresh11("en", "unsupported/email", "check my gmail and tell me if the publisher's replied about the first editions",
        must_not_claim=True)
fresh11("zh", "unsupported/calendar", "我下礼拜三日历上有安排没？看看能不能约去洗牙", must_not_claim=True)
fresh11("en", "unsupported/calendar", "what's on my calendar for thursday? pretty sure I double-booked a client",
        must_not_claim=True)
fresh11("zh", "unsupported/weather", "明早码头那边风大不大？我要开头班船", must_not_claim=True)
fresh11("en", "unsupported/weather", "is it gonna be blowing a gale on the Minch tomorrow morning? I sail at 6",
        must_not_claim=True)
fresh11("zh", "unsupported/flights", "我下周飞昆明那班改签成功没有？帮我查下我的航班", must_not_claim=True)
fresh11("en", "unsupported/flights", "is my Air Canada flight to Halifax on Sunday still on time?",
        must_not_claim=True)
fresh11("zh", "unsupported/bank", "我工行卡里还剩好多钱，帮我看一眼", must_not_claim=True)
fresh11("en", "unsupported/bank", "how much is left in my DBS account after the rent went out ah?",
        must_not_claim=True)
fresh11("zh", "unsupported/delivery", "顺丰寄给我的蜂箱配件到哪儿了 快递帮我查查", must_not_claim=True)
fresh11("en", "unsupported/delivery", "where's the DPD parcel from the tattoo supply place? should've come yesterday",
        must_not_claim=True)
fresh11("zh", "unsupported/servers", "我游戏的服务器是不是又挂了？帮我看下我那台阿里云机器CPU多少", must_not_claim=True)
fresh11("en", "unsupported/servers", "is my game's build server still up? it was acting weird last night",
        must_not_claim=True)
fresh11("zh", "unsupported/tickets", "帮我看看我买的周六成都去重庆的高铁票是几号车厢", must_not_claim=True)
fresh11("en", "unsupported/tickets", "which seats did I end up getting for the Chiefs game on Saturday?",
        must_not_claim=True)

# --------------------------------------------------------------------------- fresh11: ambiguous, answers
fresh11("zh", "clarify/ambiguous", "帮我把那个发给她")
fresh11("zh", "clarify/ambiguous", "就按上回那样把它弄一下")
fresh11("en", "clarify/ambiguous", "can you send it to him before lunch?")
fresh11("en", "clarify/ambiguous", "change it to the other one like we said")
fresh11("zh", "answer/api_key", "key 係 app-Hx93TqLm 呀", setup=ZH_ROSTER_FLOW,
        capability=DIFY, parameters={"api_key": "app-Hx93TqLm"})
fresh11("en", "answer/api_key", "oh right, it's app-Wn7cB2yQ", setup=EN_HANDOVER_FLOW,
        capability=DIFY, parameters={"api_key": "app-Wn7cB2yQ"})
fresh11("zh", "answer/url", "地址是 https://api.example.cn/ferry/tomorrow",
        setup=["帮我调一下我们的接口，发个GET请求查明天的轮渡班次"],
        capability=HTTP, parameters={"url": "https://api.example.cn/ferry/tomorrow"})
fresh11("en", "answer/url", "https://api.example.com/buses/live?route=7 that's the one",
        setup=["send a GET request to the school bus tracking API for me"],
        capability=HTTP, parameters={"url": "https://api.example.com/buses/live?route=7"})
fresh11("zh", "answer/time", "下午四点吧", setup=["提醒我给客人回个电话，说纹身图改好了"])
fresh11("en", "answer/time", "monday 10am", setup=["remind me to order more wine glasses"])

# --------------------------------------------------------------------------- fresh11: memory
fresh11("zh", "memory/tell", "跟你说一声，我对青霉素过敏，以后记着点")
fresh11("en", "memory/tell", "fyi I'm vegetarian and I can't stand coriander, in case it ever comes up")
fresh11("zh", "memory/ask", "你都记住了我哪些事？说来听听")
fresh11("zh", "memory/ask", "你还记得我是干啥的不？", setup=["我在成都开出租，一般跑夜班"])
fresh11("en", "memory/ask", "what have you got stored on me, if anything?")
fresh11("en", "memory/ask", "sorry, what did I tell you I do for work?",
        setup=["I drive the school bus for a primary school in Durban"])
fresh11("zh", "memory/forget", "小雯那事你忘了吧，别再提了", setup=["我前女友叫小雯，下个月结婚"])
fresh11("en", "memory/forget", "scrub the Darren thing from your memory, I don't want it in there",
        setup=["my ex is called Darren, long story"])


def numbered(cases: list[dict], prefix: str = "", width: int = 4) -> list[dict]:
    """Ids like zh-chat-0007 (or zh-chat-f007 with prefix "f", width 3): language, intent, a
    running number per both."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    out = []
    for case in cases:
        key = (case["lang"], case["expect"]["intent"])
        counts[key] += 1
        out.append({"id": f"{key[0]}-{key[1]}-{prefix}{counts[key]:0{width}d}", **case})
    return out


def split(cases: list[dict]) -> tuple[list[dict], list[dict]]:
    """One case in HELDOUT_SHARE of every (category, language), at least one where there are
    three or more, then one more of any category left with none held out; drawn with SEED."""
    rng = random.Random(SEED)
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for case in cases:
        groups[(case["category"], case["lang"])].append(case)
    held: set[str] = set()
    for key in sorted(groups):
        group = groups[key]
        n = round(len(group) / HELDOUT_SHARE)
        if n == 0 and len(group) >= 3:
            n = 1
        held.update(c["id"] for c in rng.sample(group, n))
    for category in sorted({c["category"] for c in cases}):
        mine = [c for c in cases if c["category"] == category]
        if not any(c["id"] in held for c in mine):
            held.add(rng.choice(mine)["id"])
    return [c for c in cases if c["id"] not in held], [c for c in cases if c["id"] in held]


def write(path: Path, cases: list[dict]) -> None:
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")


def main() -> None:
    cases = numbered(CASES)
    dev, heldout = split(cases)
    write(HERE / "cases.jsonl", dev)
    write(HERE / "heldout.jsonl", heldout)
    zh = sum(c["lang"] == "zh" for c in cases)
    print(f"{len(cases)} cases ({zh} zh, {len(cases) - zh} en): {len(dev)} dev, {len(heldout)} held out")
    fresh_splits = (("fresh", FRESH, "f", "fresh"), ("fresh2", FRESH2, "g", "second fresh"),
                    ("fresh3", FRESH3, "h", "third fresh"), ("fresh4", FRESH4, "i", "fourth fresh"),
                    ("fresh5", FRESH5, "j", "fifth fresh"), ("fresh6", FRESH6, "k", "sixth fresh"),
                    ("fresh7", FRESH7, "m", "seventh fresh"), ("fresh8", FRESH8, "n", "eighth fresh"),
                    ("fresh9", FRESH9, "p", "ninth fresh"),
                    ("fresh10", FRESH10, "q", "tenth fresh"),
                    ("fresh11", FRESH11, "r", "eleventh fresh"))
    for name, written, prefix, label in fresh_splits:
        numbered_cases = numbered(written, prefix=prefix, width=3)
        write(HERE / f"{name}.jsonl", numbered_cases)
        zh = sum(c["lang"] == "zh" for c in numbered_cases)
        print(f"{len(numbered_cases)} {label} cases ({zh} zh, {len(numbered_cases) - zh} en)")


if __name__ == "__main__":
    main()
