"""What the words alone make certain, in English and Chinese.

Rules decide only where a person's meaning is not in doubt; everything else is the
understanding model's to read. Each function here answers one narrow question:

- ``conversation_only``: thanks, greetings, goodbyes — conversation whatever else is around;
- ``command``: a system command (``/status``, "clear my history", "shut down", "switch
  the model") and which one;
- ``asks_about_flora``: a question about Flora's own work for this person (their tasks,
  loop tasks, what Flora is doing) that the store answers, never the model;
- ``asks_about_own_records``: a question about the person's own systems (an order, a
  ticket, an account, their mailbox) — with no capability for it, no model may answer it;
- ``needs_the_world``: that, or live data (today's weather, a flight's status, a price now),
  or an act in the world (book, pay, send, restart a server) — what only a capability could
  answer or do, so a model's answer would be made up;
- ``beyond_this_machine``: the part of that no tool of this machine reaches either (a remote
  machine, records in other systems, an act in the world), which the agent may not take;
- ``computes_on_given_figures``, ``asks_how_it_works``: a sum on figures the message itself
  gives, a question of how something works — conversation, whatever the model read;
- ``reads_as_new_request``: a message that asks for something (a question, a request
  verb, a sentence) rather than giving a value, for telling an answer from a new request
  while a task waits.
"""

from __future__ import annotations

import re

_F = re.IGNORECASE

_THANKS = re.compile(
    r"^\s*(?:ok(?:ay)?[,!.\s]+|great[,!.\s]+|cool[,!.\s]+|perfect[,!.\s]+|awesome[,!.\s]+)?"
    r"(?:thanks?|thank\s+you|thx|ty|many\s+thanks|cheers|much\s+appreciated|appreciate\s+it)\b"
    r"|^\s*(?:谢谢|多谢|感谢|谢啦|谢了|辛苦了|太感谢)", _F)
_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|yo|hiya|howdy|good\s+(?:morning|afternoon|evening|night)|bye|goodbye|see\s+you|"
    r"good\s*night|how\s+are\s+you(?:\s+(?:today|doing))?|what'?s\s+up|"
    r"你好|您好|嗨|哈喽|早上好|早安|中午好|下午好|晚上好|晚安|再见|拜拜|你好吗|在吗)"
    r"(?:\s+(?:there|again|everyone|all|guys|folks|friend|buddy|mate|flora))?[\s!,.?！，。？~～]*$", _F)
# after thanks, words that turn the message into a request ("thanks, now fetch …")
_THEN_ASK = re.compile(r"\b(?:now|next|also|please|could you|can you|then)\b|接下来|然后|再帮|帮我|请", _F)

_COMMANDS: tuple[tuple[str, re.Pattern], ...] = (
    ("clear_history", re.compile(
        r"^\s*/(?:clear|reset)\b|\b(?:clear|delete|erase|wipe|reset|forget)\s+(?:all\s+)?(?:of\s+)?"
        r"(?:my|our|the|this)\s+(?:chat\s+|conversation\s+|message\s+)?(?:history|conversation|chat|messages)\b"
        r"|(?:清空|清除|删除|删掉|清掉)(?:一下)?(?:我的|我们的)?(?:全部|所有)?(?:对话|聊天|会话)(?:历史|记录)?"
        r"|(?:对话|聊天|会话)(?:历史|记录)[^，,。]{0,4}(?:删|清)"
        r"|\b(?:clear|delete|erase|wipe|reset)\s+(?:chat\s+|conversation\s+)?history\s*[.!]*\s*$"
        # the history alone, nothing of whose: "清除历史", "把历史记录都删了"
        r"|^\s*(?:请|帮我|麻烦)?(?:清空|清除|删除|删掉|清掉)(?:一下)?(?:全部|所有)?(?:的)?历史(?:记录)?\s*(?:吧)?\s*[。!！]*\s*$"
        r"|^\s*(?:请|帮我|麻烦)?(?:把|将)(?:我的|我们的)?(?:全部|所有)?(?:的)?历史(?:记录)?(?:都|全)?(?:给)?"
        r"(?:清空|清除|删除|删掉|删了|清掉|清了)"
        # what was said, not its name: "把咱俩之前聊的都清掉", "forget everything we talked about"
        r"|(?:把|将)?(?:咱俩|咱们|我们|我俩)?(?:之前|以前|刚才)?(?:聊的|聊过的)(?:内容|东西)?(?:都|全)?(?:给)?"
        r"(?:清掉|清空|清除|删掉|删了|清了)"
        r"|\b(?:forget|wipe|erase|clear)\s+(?:everything|all)\s+(?:that\s+)?we(?:'ve|\s+have)?\s+(?:talked|chatted|said)\b"
        # the conversation by another name, the verb after it: "把会话清一下", "上下文重置一下",
        # "clear out the context", "reset this chat"
        r"|(?:把|将)\s*(?:我的|我们的|咱们的|这个|当前的?|现在的?|之前的)?(?:全部|所有)?(?:的)?(?:对话|聊天|会话|上下文)"
        r"(?:历史|记录|内容)?(?:都|全)?(?:给)?(?:清|删|重置|重新开始)"
        r"|(?:清空|清除|清理|清掉|重置|删除|删掉)(?:一下)?(?:我的|我们的|这个|当前的?)?(?:全部|所有)?(?:的)?上下文"
        r"|(?:会话|上下文)(?:记录)?(?:都|全)?(?:给)?(?:清空|清除|清理|清掉|清一下|重置)"
        r"|\b(?:clear|wipe|reset|erase|flush|clean)\s+(?:out\s+|up\s+)?(?:all\s+)?(?:of\s+)?(?:my|our|the|this|your)\s+"
        r"(?:chat\s+|conversation\s+)?(?:context|session)\b"
        r"|\b(?:clear|wipe|reset)\s+(?:out\s+)?(?:this|the|our)\s+(?:chat|conversation)\b", _F)),
    ("shutdown", re.compile(
        r"^\s*/(?:shutdown|stop|quit-server)\b|\b(?:shut\s*down|power\s+(?:off|down)|turn\s+off|switch\s+off|kill|stop|terminate|exit|quit|close)"
        r"\s+(?:flora|yourself|the\s+(?:flora\s+)?(?:server|system|assistant|service|process)|flora'?s?\s+(?:server|service|process)"
        r"|your\s+(?:own\s+)?(?:process|server|service)"
        r"|everything|all\s+services)\b"
        r"|\b(?:turn|switch|shut|power)\s+(?:yourself|flora|the\s+(?:server|system|assistant))\s+(?:off|down)\b"
        r"|^\s*shut\s*down\s*[.!]*\s*$"
        r"|(?:关机|关闭|停止|退出|关掉)(?:一下)?\s*(?:flora|系统|服务|服务器|你自己|整个系统)|^\s*关机\s*[。！!]*\s*$"
        # said to Flora, with a reason after it: "你先关机吧，明天再说"
        r"|^\s*(?:(?:那|那你|你|好|好了|行|行了|嗯)\s*)*(?:先|就|现在)*\s*(?:关机|下线)(?:吧|了|啦)?\s*(?:[，,。!！~～]|$)"
        # the object first: "把系统关掉", "将服务停了"
        r"|(?:把|将)\s*(?:flora|系统|服务|服务器|你自己|整个系统|整个服务)\s*(?:给)?(?:关掉|关了|关闭|停掉|停了|停止|关机)"
        # its process, said to Flora: "flora你也下班吧，把进程关了", "把你的进程停掉"
        r"|(?:把|将)\s*(?:你的|你自己的|flora的?\s*)(?:进程|程序)\s*(?:给)?(?:关|停|杀|结束)"
        r"|^(?=.*(?:flora|你))[^。？?]*(?:把|将)\s*(?:进程|程序)\s*(?:给)?(?:关掉|关了|关闭|停掉|停了|杀掉|杀了|结束掉?)", _F)),
    ("switch_model", re.compile(
        r"^\s*/model\b|\b(?:switch|change|swap|use)\s+(?:to\s+)?(?:the\s+|a\s+|another\s+|your\s+)?"
        r"(?:(?:larger|bigger|smaller|faster|better|other|different|\w+)\s+)?(?:language\s+)?(?:model|llm)\b"
        r"|(?:切换|更换|换|改用|换成|改成)(?:一个|一下|成|到|个)?[^，,。]{0,6}?(?:语言)?模型"
        r"|模型\s*(?:改成|换成|切换到|切换成|改为)"
        # a model by its name: "switch over to llama3-70b", "换成 qwen2.5-7b"
        r"|\b(?:switch|change|swap|move)\s+(?:over\s+)?to\s+(?:the\s+)?(?:[\w.-]*(?:llama|qwen|gpt|mistral|gemma|phi|deepseek|claude|glm)"
        r"[\w.-]*|[\w.]+-\d+(?:\.\d+)?b)\b"
        r"|^\s*(?:please\s+|pls\s+|can\s+you\s+|could\s+you\s+|let'?s\s+)?(?:use|try)\s+(?:[\w.-]*(?:llama|qwen|gpt|mistral|gemma|phi|deepseek|claude|glm)"
        r"[\w.-]*|[\w.]+-\d+(?:\.\d+)?b)\s*(?:instead|from\s+now\s+on|for\s+now|going\s+forward|please|pls)?\s*[.!]*\s*$"
        r"|(?:切换|换成|改用|换到|切到)(?:成|到)?\s*(?:[\w.-]*(?:llama|qwen|gpt|mistral|gemma|phi|deepseek|claude|glm)[\w.-]*"
        r"|[\w.]+-\d+(?:\.\d+)?b)\b"
        # the model named first, the switch asked for after it: "这个模型太笨了，给我切个聪明点的",
        # "this model is useless, swap it for a smarter one", "give me a better model"
        r"|模型[^。？?]{0,16}(?:切|换|改用)(?:一?个|成|到|掉)(?:[^，,。？?\s]{0,6}(?:的|模型))?\s*(?:吧|呗|啊|行不行|好不好)?\s*[。!！~～]*\s*$"
        r"|\b(?:model|llm)\b[^.?!]{0,40}\b(?:switch|swap|change)\s+(?:it\s+)?(?:out\s+)?(?:to|for)\s+(?:a|an|another|the)\s+"
        r"(?:\w+\s+)?(?:one|model|llm)\b"
        r"|\b(?:give|get)\s+me\s+(?:a|an|another)\s+(?:smarter|better|bigger|larger|faster|different|new|stronger)\s+(?:language\s+)?(?:model|llm)\b", _F)),
    ("status", re.compile(r"^\s*/status\s*$", _F)),
    ("help", re.compile(r"^\s*/help\s*$|^\s*/\?\s*$", _F)),
)

_ABOUT_FLORA = re.compile(
    r"\b(?:my|our)\s+(?:\w+\s+)?(?:tasks?|jobs|loop\s+tasks?|loops?|reminders?|schedules?|scheduled\s+tasks?)\b"
    # one job: "my backup job", "is my job done?" — "what's my job?" asks about the person's work
    r"|\b(?:my|our)\s+(?:(?!day\b|new\b|old\b|first\b|dream\b)\w+\s+job\b"
    r"|job\s+(?:done|finished|running|still|status|failed|stuck|queued|is\s+(?:done|finished|running)))"
    r"|\bwhat\s+(?:are|were)\s+you\s+(?:doing|working\s+on)\b|\bhow\s+many\s+tasks\b|\btasks?\s+(?:have\s+)?i\s+"
    r"|\bwhat(?:'s|\s+is)\s+(?:still\s+)?(?:running|pending|waiting)\b|\bany(?:thing)?\s+(?:running|pending)\b"
    r"|我的(?:\w{0,4})?(?:任务|定时任务|提醒|计划任务|循环任务)|你(?:在|正在)(?:帮我)?(?:做|干)什么|(?:多少|几)个任务"
    r"|(?:哪些|什么)(?:任务|提醒|定时任务)(?:还)?(?:在|是)?(?:运行|生效|等待|进行)"
    # the work the person handed over, said as such: "我交给你的事情办得怎么样了", "我之前都让你做过哪些任务",
    # "show me what I've had you run so far", "how's the stuff I asked you to do?"
    r"|(?:交给|交代给|托|拜托|让|叫)你(?:帮我)?(?:做|办|跑|执行|处理|弄|查)?(?:过)?的(?:那些|这些|那个|这个)?(?:事|事情|任务|活|东西)"
    r"|你(?:帮我|替我|给我)(?:做|办|跑|执行|处理|弄|查)(?:过)?的(?:那些|这些|那个|这个)?(?:事|事情|任务|活)"
    r"|让你(?:帮我)?(?:做|跑|执行|办|处理|查)(?:过|了)(?:哪些|什么|些什么|多少)"
    r"|\bwhat\s+(?:have|did)\s+i\s+(?:asked|ask|had|have|told|tell|got|get)\s+you\s+(?:to\s+)?(?:do|run|handle|work\s+on|look\s+into)\b"
    r"|\bwhat\s+(?:i'?ve|i\s+have|i)\s+(?:asked|had|told|got)\s+you\s+(?:to\s+)?(?:do|run|handle|work\s+on)\b"
    r"|\b(?:the\s+)?(?:stuff|things|tasks|work|jobs)\s+(?:that\s+)?i\s+(?:asked|gave|handed|told|left)\s+you\b", _F)

_OWN_RECORD_NOUNS = (
    r"orders?|parcels?|packages?|shipments?|deliver(?:y|ies)|tracking|invoices?|bills?|payments?|refunds?|"
    r"tickets?|accounts?|balance|bank|subscriptions?|inbox|e-?mails?|mails?|messages?\s+from|calendar|"
    r"meetings?|appointments?|flights?|bookings?|reservations?|servers?|disk|database\s+password|salary|payslip|"
    r"credit\s+card|password"
)
_SERVICES = (r"淘宝|天猫|拼多多|京东|美团|饿了么|滴滴|携程|12306|禅道|飞书|钉钉|企业微信|支付宝"
             r"|jira|github|gitlab|slack|outlook|gmail|trello|asana|notion")
_OWN_RECORDS = re.compile(
    rf"\b(?:my|our|mine)\s+(?:\w+\s+){{0,2}}(?:{_OWN_RECORD_NOUNS})\b"
    rf"|\b(?:order|ticket|tracking|invoice|booking|case)\s*(?:no\.?|number|#|id)?\s*[:#]?\s*[A-Z]{{0,4}}-?\d{{3,}}\b"
    r"|\b(?:where\s+is|status\s+of|track)\s+(?:my|the)\s+(?:order|parcel|package|shipment|delivery)\b"
    r"|(?:我的|我们的)?(?:订单|快递|包裹|物流|发票|账单|工单|账户|余额|银行卡|邮箱|邮件|日程|会议|航班|机票|预订|服务器|磁盘|工资|密码)"
    r"(?:号|状态|信息|情况|还有|到哪|在哪|多少|里)"
    r"|(?:我的|我们的|我提的|我下的|我买的|我订的|我点的)[^，,。]{0,6}(?:订单|快递|包裹|外卖|工单|票)[^，,。]{0,8}(?:了没|没有|吗|呢|到哪|怎么)"
    r"|外卖[^，,。]{0,6}(?:还没|怎么|到哪|什么时候)|(?:快递|包裹)单号"
    # something bought, by what it is: "我京东买的洗衣机到哪了", "where's the lamp I ordered?"
    r"|(?:我|我们)[^，,。]{0,6}(?:买|订|点|寄|下单|网购)的[^，,。]{0,10}(?:到哪|到了没|到了吗|发货|什么时候到|寄到|送到|物流|还没到|签收)"
    r"|\b(?:i|we)\s+(?:ordered|bought|purchased)\b[^.?!]{0,40}\b(?:ship(?:ped)?|arriv\w*|deliver\w*|here\s+yet|on\s+(?:its|the)\s+way)\b"
    r"|\bwhere(?:'s|\s+is|\s+are)\s+(?:the|my|our)\s+(?:\w+\s+){1,2}(?:i|we)\s+(?:ordered|bought|purchased)\b"
    r"|(?:查|看|查询|查一下|看看|看一下)(?:一下)?(?:我的|我们的)?(?:订单|快递|包裹|物流|发票|账单|工单|账户|余额|邮箱|邮件|日程|航班|服务器)"
    r"|订单\s*[A-Za-z]{0,4}-?\d{3,}"
    # the person's calendar: "我明天有什么会", "下周一我有哪些安排", "what meetings do I have tomorrow"
    r"|(?:我|我们)[^，,。？?]{0,6}有(?:什么|哪些|几个|没有)(?:会议|安排|日程|约会|会(?=\s*(?:[吗呢？?。!！]|$|要开|要参加)))"
    r"|\bwhat\s+(?:meetings|appointments|events)\s+do\s+(?:i|we)\s+have\b|\bam\s+i\s+(?:free|busy|available)\s+(?:on|at|tomorrow|today|tonight|this|next|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    # what reached the person: "did I get a reply from HR?", "我收到银行的短信了吗", "HR回复我了吗"
    r"|\b(?:did|have|has|haven't|hasn't)\s+(?:i|we)\s+(?:got(?:ten)?|get|receive[d]?)(?:\s+(?:a|an|any|the|my|our))?"
    r"\s+(?:reply|response|answer|e-?mail|message|letter|call|text|invoice|parcel|package|delivery)s?\b"
    r"|\bheard\s+back\s+from\b|\b(?:any|new)\s+(?:replies|e-?mails|messages)\s+from\b"
    r"|(?:我|我们)(?:有没有|是否)?收到(?:了)?[^，,。]{0,10}(?:回复|回信|邮件|消息|短信|快递|包裹|通知)"
    r"|[^，,。]{1,8}(?:回复|回信给|回)(?:我|我们)了?(?:吗|没有|没)"
    # someone reaching the person: "did anyone email me about the lease?", "has Tom texted us back?",
    # "who called me this morning?"
    r"|\b(?:did|has|have|hasn't|haven't)\s+(?!you\b|i\b|we\b)(?:any(?:one|body)|some(?:one|body)|\w+)\s+(?:\w+\s+){0,3}"
    r"(?:e-?mail(?:ed)?|messag(?:e|ed)|text(?:ed)?|call(?:ed)?|ping(?:ed)?|dm(?:ed|'d)?|slack(?:ed)?|repl(?:y|ied)\s+to"
    r"|wr(?:ite|ote|itten)\s+(?:to|back\s+to)|got(?:ten)?\s+back\s+to)\s+(?:me|us)\b"
    r"|\bwho\s+(?:e-?mailed|messaged|texted|called|pinged|wrote\s+to|dm'?e?d)\s+(?:me|us)\b"
    r"|\bany\s+(?:new\s+)?(?:e-?mails?|messages?|texts?|calls?|voicemails?)\s+(?:for\s+me|today|this\s+morning|yet)\b"
    # the person's free time: "下周三下午我有空吗", "我周五晚上忙不忙", "do I have anything on Thursday?"
    r"|(?:今天|明天|后天|大后天|周[一二三四五六日天末]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|下周|这周|本周|月底|上午|下午|晚上|中午|\d+\s*[点号])"
    r"[^，,。？?]{0,8}(?:我|我们)[^，,。？?]{0,4}(?:有空|有时间|空闲|闲着|忙|有安排|有事|有约)(?:吗|么|没|不|嘛)"
    r"|(?:我|我们)[^，,。？?]{0,10}(?:有没有空|有没有时间|忙不忙|有空没|有没有安排|哪天有空|什么时候有空|几点有空)"
    r"|\bdo\s+(?:i|we)\s+have\s+(?:anything|something|any\s+(?:meetings?|plans?|appointments?|calls?)|time|a\s+(?:meeting|call|slot))"
    r"\s+(?:on|at|this|next|tomorrow|today|tonight|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\b(?:is|are)\s+(?:my|our)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|morning|afternoon|evening|day)"
    r"(?:\s+\w+)?\s+(?:free|open|busy|booked)\b"
    # something ordered, by the service or by how it was got: "饿了么点的奶茶到哪了", "拼多多买的那个还没发货吗"
    rf"|(?:{_SERVICES}|网上|外卖)[^，,。？?]{{0,12}}(?:到哪|到了没|到了吗|到没到|发货|什么时候到|怎么还没|还没到|还不到|送到|派送|签收)"
    r"|(?:点|买|订|寄|下单|网购)的[^，,。？?]{0,8}(?:到哪|到了没|到了吗|到没到|怎么还没|还没到|还不到|还没发货|发货了没|发货了吗)"
    # a record the person opened: "我上周提的那个IT工单有人接了没", "我报的那个故障处理了吗"
    r"|(?:我|我们)[^，,。？?]{0,6}(?:提|开|报|交|建|发)的[^，,。？?]{0,8}(?:工单|单子|申请|故障|报修|bug|需求|审批|报销)"
    r"[^，,。]{0,10}(?:了没|没有|吗|呢|怎么样|到哪|进度)", _F)

_QUESTION = re.compile(r"[?？]\s*$|^\s*(?:what|which|who|whom|whose|when|where|why|how|is|are|do|does|did|can|could|"
                       r"would|will|should|shall)\b|(?:吗|呢|么|怎么样|怎么|如何|为什么|什么|哪|几|多少)\s*[?？。!！]*\s*$", _F)
_REQUEST_VERB = re.compile(
    r"^\s*(?:please\s+|pls\s+|can\s+you\s+|could\s+you\s+)?(?:run|execute|start|stop|fetch|get|send|show|list|find|"
    r"search|check|tell|give|make|create|write|remind|schedule|cancel|delete|open|call|book|buy|translate|"
    r"summari[sz]e|explain|help)\b"
    r"|^\s*(?:请|帮我|麻烦|给我|替我|执行|运行|启动|查|看|告诉|发|写|提醒|取消|删除|打开|翻译|总结|解释)", _F)


# chat spelling, read as the words it stands for before any rule looks at the message
_TEXT_SPEAK = {
    "u": "you", "ur": "your", "wat": "what", "wut": "what", "wht": "what", "whats": "what's", "hows": "how's",
    "pls": "please", "plz": "please", "thx": "thanks", "tmrw": "tomorrow", "tmr": "tomorrow", "2moro": "tomorrow",
    "abt": "about", "sth": "something", "smth": "something", "msg": "message", "rn": "right now",
    "cuz": "because", "bc": "because", "gimme": "give me", "lemme": "let me", "wanna": "want to",
    "gonna": "going to", "kinda": "kind of", "sorta": "sort of", "dont": "don't", "cant": "can't", "wont": "won't", "im": "I'm", "ive": "I've",
}
_SPOKEN_WORD = re.compile(r"(?<![\w/.:@#-])(?:r(?=\s+u\b)|" + "|".join(sorted(_TEXT_SPEAK, key=len, reverse=True))
                          + r")(?![\w/.:@#-]|'\w)", _F)


def spelled_out(text: str) -> str:
    """The message with chat spelling written out ("wat can u do" -> "what can you do"), so a
    rule reads what a person means however they type it; addresses and ids are left alone."""
    def word(match: re.Match) -> str:
        said = match.group(0).lower()
        return "are" if said == "r" else _TEXT_SPEAK[said]
    return _SPOKEN_WORD.sub(word, text)


def is_greeting(text: str) -> bool:
    """A greeting or a goodbye and nothing else ("hi!", "你好吗", "good night")."""
    return bool(_GREETING.match(text))


def conversation_only(text: str) -> bool:
    """Thanks, greetings and goodbyes: conversation, whatever punctuation splits them."""
    if _GREETING.match(text):
        return True
    if _THANKS.match(text):
        rest = _THANKS.sub("", text, count=1)
        return not _THEN_ASK.search(rest)
    return False


def command(text: str) -> str | None:
    """``clear_history | shutdown | switch_model | status | help`` when the text is that command."""
    for name, pattern in _COMMANDS:
        if pattern.search(text):
            return name
    return None


def asks_about_flora(text: str) -> bool:
    return bool(_ABOUT_FLORA.search(text))


_ABILITIES = re.compile(
    r"\bwhat\s+(?:can|could|do)\s+you\s+(?:do|help)|\bwhat\s+(?:kind|sort)s?\s+of\s+\w+\s+can\s+you|"
    r"\bhow\s+can\s+you\s+help|\bwhat\s+(?:exactly\s+|else\s+)?are\s+you\s+(?:able|good)|\bwho\s+are\s+you\b"
    r"|\byour\s+(?:capabilities|skills|features)|\bwhat\s+(?:exactly|else)\s+(?:can|could)\s+you\s+(?:do|help)"
    r"|\bintroduce\s+yourself|你(?:都)?(?:能|会|可以)(?:帮我)?(?:做|干)?(?:些)?(?:什么|啥)|介绍(?:一下)?你自己|你是谁|你有(?:哪些|什么)(?:能力|功能|本事)"
    # "你除了聊天还能干啥" (撒, 嘛: the spoken 啥)
    r"|你[^，,。？?！!]{0,8}?(?:还|都)(?:能|会|可以)(?:帮我)?(?:做|干)(?:些)?(?:什么|啥|撒|嘛)"
    # the asker left out "你" or said it in other words: "都能帮我干点啥", "说说你的本事", "你擅长什么",
    # "what are you actually capable of?", "what can you actually do", "what are your skills?"
    r"|(?:^|你|[，,。!！?？\s])(?:都|还|又)?(?:能|可以|会)帮(?:我|上|到)?(?:我)?(?:做|干|弄|办|搞)?(?:点|些|一些)?(?:什么|啥|嘛|哪些)"
    r"|(?:说说|讲讲|聊聊|介绍(?:一下)?|展示(?:一下)?|亮亮)你的(?:本事|本领|能力|功能|技能|特长)"
    r"|你的(?:本事|本领|能力|功能|技能|特长)(?:都)?(?:有(?:哪些|什么|啥)|是(?:什么|啥|哪些))|你(?:有|会)(?:啥|哪些|什么)(?:本事|本领|技能|功能|能力|特长)|你(?:最)?擅长(?:什么|啥|哪些|干啥|做什么)"
    r"|\bwhat\s+(?:\w+\s+)?are\s+you\s+(?:\w+\s+)?(?:capable\s+of|able\s+to\s+do|good\s+(?:at|for))"
    r"|\bwhat\s+(?:can|could)\s+you\s+(?:actually|really|even|possibly)\s+(?:do|help)\b"
    r"|\bwhat(?:'s|\s+is|\s+are)\s+your\s+(?:\w+\s+)?(?:abilities|capabilities|skills|skill\s+set|powers|features)\b"
    r"|\bwhat\s+(?:can|could)\s+i\s+(?:use\s+you\s+for|ask\s+you\s+(?:to\s+do|for))\b", _F)


def asks_about_abilities(text: str) -> bool:
    """"what can you do?", "介绍一下你自己能干嘛": answered with what is installed."""
    return bool(_ABILITIES.search(text))


_LIVE_DATA = re.compile(
    r"(?:今天|明天|后天|现在|今晚|这周|本周|周末|下周|此刻|目前|实时)[^，,。？?]{0,8}(?:天气|下雨|下雪|气温|温度|空气质量|"
    r"股价|汇率|油价|金价|路况|堵车|新闻)"
    r"|(?:天气|气温|温度)(?:怎么样|如何|多少|预报|好吗|冷吗|热吗)|会下(?:雨|雪)吗"
    r"|(?:[A-Z]{2}\d{3,4}|航班)[^，,。]{0,8}(?:延误|起飞|到达|状态|准点|取消)"
    r"|\b(?:weather|forecast|temperature|rain(?:ing)?|snow(?:ing)?)\b[^.?!]{0,30}\b(?:today|tomorrow|tonight|now|"
    r"this\s+week(?:end)?|in\s+[A-Z][a-z]+)"
    r"|\b(?:today|tomorrow|tonight|right\s+now)\b[^.?!]{0,30}\b(?:weather|forecast|temperature|rain|snow)\b"
    r"|\b(?:stock\s+price|share\s+price|exchange\s+rate)\b[^.?!]{0,20}\b(?:today|now|currently)\b"
    r"|\bflight\s+[A-Z]{2}\s?\d{2,4}\b|\b[A-Z]{2}\d{3,4}\b[^.?!]{0,20}\b(?:delayed|on\s+time|landed|status)\b"
    # the weather asked for by what it means: "do I need an umbrella today?", "is it gonna be cold tomorrow?", "要带伞吗"
    r"|\bneed\s+(?:an?\s+)?(?:umbrella|raincoat|coat|jacket|sunscreen)\b"
    r"|\b(?:is|will)\s+it\s+(?:\w+\s+){0,2}(?:be\s+)?(?:cold|hot|warm|chilly|rainy|sunny|windy|snowy|freezing)\b"
    r"[^.?!]{0,30}\b(?:today|tomorrow|tonight|this\s+(?:morning|afternoon|evening|week(?:end)?)|out(?:side)?)\b"
    r"|(?:要|需要|得)带(?:把)?伞|(?:冷不冷|热不热|会不会下雨)"
    # what to wear today, how cold it is out: "今天出门要穿羽绒服吗", "外面几度了", "should I wear a jacket today?"
    r"|(?:今天|明天|后天|今晚|明早|现在|出门|待会|等会|一会)[^，,。？?]{0,8}(?:要|需要|得|该|用|能)(?:穿|带)[^，,。？?]{0,6}"
    r"(?:羽绒服|外套|大衣|棉袄|棉服|毛衣|秋裤|短袖|短裤|厚|薄|雨衣|雨伞|防晒)"
    r"|(?:外面|外头|室外|现在|今天|今晚|明天)[^，,。？?]{0,4}(?:几度|多少度|多冷|多热|冷吗|热吗)"
    r"|\bhow\s+(?:cold|hot|warm|chilly)\s+is\s+it\s+(?:\w+\s+)?(?:outside|out\s+there|right\s+now|now|today|tonight|this\s+morning)\b"
    r"|\bhow\s+many\s+degrees\s+is\s+it\b|\btemperature\s+(?:outside|out\s+there)\b"
    r"|\b(?:should|do|will)\s+i\s+(?:need\s+to\s+)?(?:wear|bring|take|pack)\s+(?:a\s+|an\s+|my\s+)?(?:\w+\s+)?"
    r"(?:coat|jacket|umbrella|sweater|scarf|gloves|shorts|raincoat|boots|layers)\b[^.?!]{0,20}\b(?:today|tonight|tomorrow|now|out(?:side)?)\b"
    # flights and machines: "明早北京飞成都最早的航班", "线上那台机器CPU满了没"
    r"|[\u4e00-\u9fff]{2,4}飞[\u4e00-\u9fff]{2,4}[^，,。]{0,6}航班|(?:机器|服务器|主机|实例)[^，,。]{0,6}(?:CPU|cpu|内存|磁盘|负载)"
    r"|(?:CPU|cpu|内存|磁盘|负载)[^，,。]{0,6}(?:满|多少|还剩|高不高|挂)"
    r"|\bis\s+(?:the|our|my)\s+(?:[\w-]+\s+){0,2}(?:server|host|machine|box|vm|instance|cluster|database|db|website|site)"
    r"\s+(?:still\s+)?(?:up|down|alive|online|offline|reachable)\b"
    # a machine of theirs, not this one (where the agent's tools can look): "the server's memory",
    # "disk space on the staging box"
    r"|\b(?:server|host|machine|box|vm|instance|cluster)(?:'s)?\s+(?:cpu|memory|ram|disk)\b"
    r"|\b(?:cpu|memory|ram|disk)\s+(?:usage|load|space)\b[^.?!]{0,30}\b(?:on|of)\s+(?:the\s+|our\s+|my\s+)?"
    r"(?:[\w-]+\s+)?(?:server|host|machine|box|vm|instance|cluster)\b", _F)
_THINGS_ZH = (r"订单|快递|包裹|外卖|邮件|会议|(?:的|个|场)会(?!议)|日程|工单|bug|缺陷|预约|预订|账单|报销单|审批"
              r"|航班|机票|火车票|车票|高铁|动车|酒店|房间")
_ACTS_ZH = (r"取消|退掉|退了|申请|回复|回一下|回个|改到|改成|改期|推迟|提前到|挪到|移到|催一下|催催|催|提个|提一个|关掉|驳回|通过"
            r"|改签|退票|值机|选座|续住|退房")
_THINGS_EN = r"orders?|deliver(?:y|ies)|e-?mails?|messages?|meetings?|calls?|appointments?|standups?|bookings?|reservations?|tickets?|bugs?|issues?"
_ACTS_EN = r"reply|respond|answer|move|reschedule|push\s+back|postpone|cancel|chase|hurry\s+up|close|approve|reject"
_WORLD_ACT = re.compile(
    r"^\s*(?:请|帮我|给我|麻烦|替我|帮忙)?(?:在日历上)?(?:订|预订|预约|买|购买|支付|付款|转账|汇款|打款"
    r"|发(?:一|个)?(?:封|条|份)?(?:邮件|短信|微信|消息)|打电话|重启|部署|回滚|下单|点(?:个|份)?外卖|约(?:个|一下)?|退(?:货|款|订|票|掉))"
    r"|给[^，,。]{1,8}(?:转账|打钱|汇款|发(?:一|个)?(?:封|条|份)?(?:邮件|短信|微信|消息)|打(?:个|一)?(?:个)?电话)"
    # the object first: "把上周买的鞋退掉", "把这个月的电费交了"
    r"|(?:把|将)[^，,。]{1,16}(?:退掉|退了|退货|退款|寄出去|寄回去|寄给|付了|交了|缴了|转给|发给)"
    r"|申请退款|(?:我要|我想)(?:退货|退款)"
    r"|^\s*(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:book|reserve|buy|purchase|pay|transfer|wire|order\s+(?:me\s+)?(?:a|an|some)"
    r"|send\s+(?:an?\s+)?(?:e-?mail|text|sms|message)|e-?mail\s+\w+|text\s+\w+|call\s+(?:my|\w+\s+at)|restart|reboot|"
    r"deploy|roll\s*back|(?:schedule|set\s+up|arrange|organi[sz]e)\s+(?:a|an)\s+(?:[\w-]+\s+)?(?:meeting|call|appointment|interview|sync|session)"
    r"|cancel\s+my\s+(?:order|booking|subscription|flight)"
    r"|return\s+(?:the|my|these|those|this|that)\s+\w+|refund\s+(?:me|my))\b"
    r"|\b(?:want|need|like)\s+to\s+return\s+(?:the|my|these|those|this|that)\b|\b(?:want|need|get)\s+(?:me\s+)?a\s+refund\b"
    # records in the person's own systems: tickets, issues, bug reports
    r"|\b(?:open|create|file|raise|submit|close|assign)\s+(?:a\s+|an\s+|the\s+|my\s+|our\s+)?(?:new\s+)?(?:[\w-]+\s+)?"
    r"(?:ticket|issue|bug(?:\s+report)?|case|pull\s+request|jira)\b"
    r"|(?:开|建|提|创建|新建|关掉|关闭)(?:一个|个|一张|张)?(?:工单|bug单|缺陷单|需求单|jira)", _F)
# an action on one of the person's things, in one clause, either order: "那个订单帮我取消掉", "回一下
# 客户那封邮件", "把下周一的会改到三点", "提个bug", "reply to Tom's email", "move my 3pm meeting";
# asked of a named service of theirs ("在禅道上…", "美团外卖…帮我催一下"). A how-to question about
# the same ("怎么回复客户的邮件比较好") is advice, for chat.
_ACT_ON_THINGS = re.compile(
    rf"(?:{_THINGS_ZH})[^，,。？?；;]{{0,12}}(?:{_ACTS_ZH})|(?:{_ACTS_ZH})[^，,。？?；;]{{0,8}}(?:{_THINGS_ZH})"
    r"|(?:想|要|申请)(?:退货|退款|换货)"
    rf"|^\s*(?:please\s+|pls\s+|can\s+you\s+|could\s+you\s+)?(?:{_ACTS_EN})\s+(?:to\s+)?"
    rf"(?:my|our|the|that|this|his|her|their|\w+'s|tomorrow's|today's)\s+(?:\w+\s+){{0,2}}(?:{_THINGS_EN})\b"
    # a trip of theirs: "change my flight to Friday", "rebook our train for the evening"
    r"|^\s*(?:please\s+|pls\s+|can\s+you\s+|could\s+you\s+)?(?:change|switch|rebook|move|cancel|upgrade|extend|check\s+(?:me\s+)?in\s+for)\s+"
    r"(?:my|our)\s+(?:\w+\s+){0,2}(?:flight|train|hotel|room|seat|booking|reservation|trip)s?\b"
    rf"|(?:{_SERVICES})[^。？?]{{0,24}}(?:帮我|给我|替我|请你|麻烦)"
    rf"|(?:在|到)\s*(?:{_SERVICES})\s*(?:上|里)?[^。？?]{{0,8}}(?:提|发|建|开|回|改|删|取消|催)", _F)
# the person's machines elsewhere — a cluster, its pods, a server reached over ssh — asked about
# or acted on: "帮我看下k8s集群里有几个pod挂了", "ssh into db-02 and tail the logs", "线上那台服务器重启一下".
# The shell and file tools reach this machine only; "how does k8s restart a pod?" is knowledge.
_REMOTE_THING = (r"k8s|kubernetes|kubectl|集群|\bpods?\b|服务器|云主机|跳板机|堡垒机|机房|虚拟机|生产环境|测试环境|预发环境"
                 r"|线上(?:环境|服务|机器|集群)|\b(?:my|our|the|that|these|those|all\s+the)\s+(?:[\w-]+\s+){0,2}"
                 r"(?:clusters?|pods?|servers?|vms?|instances?)\b"
                 r"|\b(?:prod|production|staging|remote|web|db|database|app|build)\s+(?:servers?|boxes|box|hosts?|machines?|clusters?|instances?|vms?)\b")
_REMOTE_STATE = (r"挂了|挂掉|宕机|宕了|掉线|重启|有几个|多少个|几台|状态|正常吗|还活着|跑着|起来了|满了|清理|清一下|清空|删掉|日志|部署|扩容|"
                 r"缩容|看下|看一下|查一下|查下|登录|登上|\bdown\b|\bcrash\w*|\brunning\b|\brestart\w*|\breboot\w*|\bclear\s+out\b"
                 r"|\bclean\s+up\b|\bdelete\b|\blogs?\b|\bdeploy\w*|\bscale\b|\bhealthy\b|\bfailing\b|\bpending\b|\bhow\s+many\b"
                 r"|\bcheck\b|\bup\b")
_REMOTE = re.compile(
    r"\bssh\s+(?:in(?:to)?\s+|onto\s+|to\s+)?(?:the\s+)?(?:[\w.-]+@)?[\w.-]*\d[\w.-]*\b|\bssh\s+(?:into|onto)\b"
    r"|\b(?:log\s*(?:in|on)(?:to)?|connect\s+to|remote\s+into)\s+(?:the\s+)?(?:[\w.-]+@)?[a-z][\w.]*-\d+\b"
    r"|(?:登录|登陆|登上|连上|连到|ssh\s*到?)\s*(?:到|上)?[^，,。]{0,8}(?:服务器|主机|机器|跳板机|堡垒机)"
    rf"|(?:{_REMOTE_THING})[^。？?!！]{{0,20}}(?:{_REMOTE_STATE})|(?:{_REMOTE_STATE})[^。？?!！]{{0,20}}(?:{_REMOTE_THING})", _F)
# knowledge about such things, and code written about them, is conversation
_KNOWLEDGE = re.compile(r"为什么|为啥|是什么|什么是|原理|解释|一般|通常|比较好|最好|建议|写(?:一个|个|段)?[^，,。]{0,20}(?:脚本|代码|程序|函数)"
                        r"|\bwhy\b|\bwhat\s+(?:is|are|does)\b|\bhow\s+(?:does|do|did|is|are|come)\b|\bexplain\b|\bin\s+general\b"
                        r"|\bwrite\b|\bscript\b", _F)
_HOW_TO = re.compile(r"怎么|如何|怎样|咋|\bhow\s+(?:do|should|can|could|would|to)\b|\bbest\s+way\b|\btips?\b", _F)


_REMINDER = re.compile(r"提醒|\bremind", _F)


_QUOTED = re.compile(r"“[^”]*”|「[^」]*」|『[^』]*』|‘[^’]*’|\"[^\"]*\"")


def _unquoted(text: str) -> str:
    """The message without what it quotes: "把“今天天气很好”翻译成英文" asks for a translation,
    not for today's weather."""
    return _QUOTED.sub(" ", text)


def needs_the_world(text: str) -> bool:
    text = _unquoted(text)
    if _REMINDER.search(text):  # "明天提醒我给李老师打电话" asks for a reminder, which Flora does
        return False
    if _WRITES_CODE.search(text) or computes_on_given_figures(text):
        return False  # "写一个检查服务器状态的脚本", "买了3斤苹果，每斤5块，一共多少钱": made here, from what is said
    records = _OWN_RECORDS.search(text)  # "my salary is 5000, …how much…" is a sum (above)
    general = _HOW_IT_WORKS.search(text) and not _SPECIFIC.search(text)  # "为什么航班会延误": how such things go
    return bool(records or not general and (_LIVE_DATA.search(text) or _WORLD_ACT.search(text))
                or (_ACT_ON_THINGS.search(text) or remote_machine(text)) and not _HOW_TO.search(text))


_WRITES_CODE = re.compile(r"(?:写|编)(?:一个|个|段|一段)?[^，,。？?]{0,20}(?:脚本|代码|程序|函数)"
                         r"|\b(?:write|draft|give\s+me)\s+(?:me\s+)?(?:a|an|some)?\s*(?:\w+\s+){0,3}"
                         r"(?:script|code|program|function|snippet)\b", _F)
# the person's own, or one thing in particular ("why is the staging server down?"), not such things in general
_SPECIFIC = re.compile(r"我|咱|这|那|\b(?:my|mine|our|ours|me|i|i'm|i've|the|this|that|these|those)\b", _F)
_THIS_MACHINE = re.compile(r"磁盘|硬盘|\bdisk\b|\bthis\s+(?:machine|box|computer)\b|这台(?:电脑|机器)|本机|\bworkspace\b|工作区", _F)


def beyond_this_machine(text: str) -> bool:
    """What no tool of this machine reaches: a machine of the person's elsewhere, their records
    in other systems (mailbox, tickets, orders — not this machine's disk), an act in the world.
    The agent's tools (a shell, files, the web) cannot look there, so it is not the agent's."""
    text = _unquoted(text)
    if _REMINDER.search(text):
        return False
    return bool(remote_machine(text) or _WORLD_ACT.search(text)
                or _ACT_ON_THINGS.search(text) and not _HOW_TO.search(text)
                or _OWN_RECORDS.search(text) and not _THIS_MACHINE.search(text))


# a sum on the person's own figures: "I earn 6200 a month and save 15%, how much in two years?"
_FIGURE = re.compile(r"(?<![A-Za-z0-9.#/-])\d+(?:[.,]\d+)?\s*(?:%|k|w|万|千|百|元|块|美元|刀|dollars?|bucks)?(?![A-Za-z0-9-])", _F)
_ASKS_AMOUNT = re.compile(
    r"多少|几(?:个|年|月|天|次|倍|成)|总共|一共|合计|平均|划算|能存|能攒|要还|算一?算|算一下|哪个(?:更)?(?:多|少|便宜|贵|省)"
    r"|\bhow\s+(?:much|many|long)\b|\bwhat(?:'s|\s+is|\s+will\s+be|\s+would\s+be)\s+(?:the\s+|my\s+)?(?:total|sum|average|result|difference|monthly|yearly|annual)"
    r"|\bcalculate\b|\bwork\s+out\b|\bwhich\s+is\s+(?:cheaper|more|less|better\s+value)\b", _F)


def computes_on_given_figures(text: str) -> bool:
    """A calculation on figures the message itself gives (two or more, and a question of how
    much / how many): every number is there, so it is conversation, not a look into the
    person's accounts."""
    return len(_FIGURE.findall(text)) >= 2 and bool(_ASKS_AMOUNT.search(text))


# how things work, asked of the things themselves: "how does k8s restart a pod?", "为什么航班会延误"
_HOW_IT_WORKS = re.compile(
    r"^\s*(?:(?:so|and|but|ok(?:ay)?|hmm+)[,\s]+)?(?:how\s+(?:does|do|did|is|are|can|could|would)\s+(?!i\b|we\b|you\b|my\b|our\b)"
    r"|why\s+(?:does|do|did|is|are|would|can)\s+(?!my\b|our\b)|what\s+(?:is|are)\s+(?:a|an)\s|explain\b)"
    r"|为什么|为啥|什么是|原理|是怎么[\u4e00-\u9fff]{1,4}的|怎么(?:工作|运作|实现)的", _F)


def asks_how_it_works(text: str) -> bool:
    """A question of how or why something works — knowledge, for chat — unless it is about the
    person's own things or the live world."""
    return bool(_HOW_IT_WORKS.search(text)) and not needs_the_world(text)


def remote_machine(text: str) -> bool:
    """A question about, or an act on, a machine of the person's other than this one (a
    cluster, a server, a host reached over ssh) — not a question of how such things work."""
    return bool(_REMOTE.search(text)) and not (_HOW_TO.search(text) or _KNOWLEDGE.search(text))


_VAGUE = re.compile(
    r"^\s*(?:please\s+|pls\s+)?(?:do|run|send|handle|process|fix|check|sort\s+out|take\s+care\s+of|finish)\s+"
    r"(?:it|this|that|them|the\s+thing|that\s+thing|this\s+one|it\s+out)\s*(?:please|now)?\s*[.!]*\s*$"
    r"|^\s*(?:帮我|请|麻烦)?(?:发出去|处理一下|弄一下|搞一下|办一下|搞定它|处理它|发一下|执行一下|跑一下)\s*(?:吧|呗)?\s*[。!！]*\s*$", _F)


_UNCLEAR_EN = re.compile(
    r"^\s*(?:(?:hey|ok(?:ay)?|so|um+|also|and)[,\s]+)?(?:please\s+|pls\s+)?"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+|just\s+)?|i\s+need\s+you\s+to\s+|go\s+ahead\s+and\s+)?"
    r"(?:send|forward|fix|change|update|edit|redo|finish|handle|process|check|review|sort\s+out|take\s+care\s+of"
    r"|look\s+at|go\s+over|improve|correct|rewrite|share|post|submit|upload|print|move|rename|resend|delete|remove)"
    r"\s+(?P<ref>it|this|that|them|these|those|this\s+one|that\s+one|the\s+thing|that\s+thing"
    r"|(?:the|that|this)\s+(?:file|document|doc|draft|report|spreadsheet|sheet|deck|slides))"
    r"(?:\s+(?:to|for|with|over\s+to)\s+(?:them|him|her|everyone|everybody|the\s+team|the\s+others|the\s+client|the\s+boss|it))?"
    r"(?:\s+(?:with|using)\s+(?:the\s+)?(?:new|latest|updated|same|other|right|correct)\s+\w+)?"
    r"(?:\s+(?:again|now|please|pls|asap|real\s+quick|for\s+me))*\s*[.!?？。！]*\s*$", _F)
_UNCLEAR_ZH = re.compile(
    r"^\s*(?:(?:帮我|请|麻烦你|麻烦|你|能不能|可以|再)\s*)*(?:把|将)?"
    r"(?P<ref>它|这个文件|那个文件|这份文件|那份文件|这个东西|那个东西|这个|那个|这份|那份|这|那)\s*(?:再)?(?:给)?"
    r"(?:改|修改|处理|弄|搞|发|发出去|整理|检查|看|更新|修)(?:一下|下|好)?"
    r"(?:[，,]?\s*(?:再|然后)?(?:发给|转给|给|交给)(?:他|她|他们|她们|大家|对方|领导|老板))?"
    r"\s*(?:吧|呗|啊)?\s*[。!！?？]*\s*$")


# "就按之前说的办", "do what we discussed": what was said before, as the whole request
_AS_SAID = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|alright|so|then|just)[,\s]+)*(?:please\s+)?(?:(?:just\s+)?(?:do|go\s+with|proceed\s+with|go\s+ahead\s+with)\s+)"
    r"(?P<ref>what\s+(?:we|i)\s+(?:discussed|said|agreed(?:\s+on)?|talked\s+about|planned|mentioned)(?:\s+(?:before|earlier|yesterday))?)"
    r"\s*(?:please|then)?\s*[.!]*\s*$"
    r"|^\s*(?:那|好|行)?(?:就|那就)?(?:按|照|按照|依照)(?P<ref_zh>(?:之前|刚才|上次|我们|咱们|我)(?:说|讲|聊|定|商量)(?:好)?的)"
    r"(?:办|做|来|弄|执行|处理)(?:吧|呗|就行|就好)?\s*[。!！]*\s*$", _F)


# "就用上次那个吧", "do it the other way", "ok now the other one": a choice among things said
# before — the last one, the other one, the same as last time — as the whole request
_EARLIER_CHOICE = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|alright|so|now|and|then|just|fine|hmm+|no|nah)[,\s]+)*(?:please\s+|pls\s+)?"
    r"(?:(?:(?:let'?s|i'?ll|we'?ll)\s+)?(?:do|try|use|go\s+with|pick|take|choose|give\s+me|show\s+me|run|make|send)\s+(?:it\s+|them\s+|that\s+)?)?"
    r"(?P<ref>the\s+other\s+(?:one|ones|way|option|version)|(?:the\s+)?(?:same|usual)(?:\s+(?:one|thing|way))?(?:\s+as\s+(?:before|last\s+time))?"
    r"|(?:the\s+)?(?:last|previous)\s+(?:one|option|version|way)|the\s+one\s+(?:from\s+)?(?:before|last\s+time)"
    r"|(?:like|as)\s+(?:last\s+time|before)|that\s+one\s+again|the\s+first\s+one|the\s+second\s+one)"
    r"(?:\s+(?:please|pls|then|instead|now|again|this\s+time))*\s*[.!?]*\s*$"
    r"|^\s*(?:(?:那|那就|就|好|行|嗯|算了|还是|这次|换)\s*)*(?:用|选|按|要|来|换|照|换成|改成|改用)?\s*"
    r"(?P<ref_zh>上次那个|上回那个|之前那个|刚才那个|原来那个|另一个|另外一个|另一种|别的那个|第一个|第二个|上次的|之前的|原来的"
    r"|(?:跟|和|照)(?:上次|之前|原来)一样(?:的)?|老样子)"
    r"(?:方案|办法|方法|版本|的)?\s*(?:吧|呗|就行|就好|好了|试试|来)?\s*[。!！~～]*\s*$", _F)


def unclear_reference(text: str) -> str | None:
    """"send it to them", "can you fix this?", "把那个文件再改一下发给他": a request that names
    what it acts on only by pointing ("it", "那个文件"). Answers the pointing words; with
    nothing said before in the conversation they point at nothing, and the person is asked."""
    found = (_UNCLEAR_EN.match(text) or _UNCLEAR_ZH.match(text) or _AS_SAID.match(text)
             or _EARLIER_CHOICE.match(text))
    return (found.groupdict().get("ref") or found.groupdict().get("ref_zh")) if found else None


def vague_request(text: str) -> bool:
    """"do the thing", "发出去": a request with nothing to say what it is about."""
    return bool(_VAGUE.match(text))


def is_question(text: str) -> bool:
    return bool(_QUESTION.search(text.strip()))


def asks_about_own_records(text: str) -> bool:
    return bool(_OWN_RECORDS.search(_unquoted(text)))


def reads_as_new_request(text: str) -> bool:
    """A question or a request, not a bare value."""
    stripped = text.strip()
    return bool(_QUESTION.search(stripped) or _REQUEST_VERB.search(stripped))


# -- long-term memory ----------------------------------------------------------------------
_RECALL_ALL = re.compile(
    r"\bwhat\s+(?:do|did)\s+you\s+(?:remember|know|recall)\s+(?:about\s+)?(?:me|of\s+me)\b"
    r"|\bwhat\s+have\s+you\s+(?:remembered|learned|learnt|stored|kept|saved)\s+about\s+me\b"
    r"|\b(?:show|list|tell\s+me)\s+(?:me\s+)?(?:what\s+you\s+(?:remember|know)\s+about\s+me|(?:all\s+)?(?:your\s+)?memories"
    r"(?:\s+(?:of|about)\s+me)?|(?:everything\s+)?you\s+remember(?:\s+about\s+me)?)\b"
    r"|你(?:都)?(?:还)?(?:记得|记住了|知道|了解)(?:关于)?我(?:的)?(?:什么|哪些|些什么|多少)"
    r"|你对我(?:有)?(?:什么|哪些|多少)(?:记忆|了解)|(?:看看|列出|显示)(?:一下)?你(?:对我的|关于我的)?记忆", _F)
_FORGET_ALL = re.compile(
    r"\bforget\s+(?:everything|all)(?:\s+(?:you\s+(?:know|remember)\s+)?about\s+me)?\s*[.!]*\s*$"
    r"|\b(?:delete|erase|wipe|clear)\s+(?:all\s+)?(?:of\s+)?(?:your\s+)?memor(?:y|ies)\s+(?:of|about)\s+me\b"
    r"|(?:忘掉|忘记|删除|清空|清除)(?:关于我的)?(?:一切|所有|全部)(?:记忆|事情)?|(?:清空|清除|删除)(?:你)?(?:对我的|关于我的)记忆", _F)
_FORGET = re.compile(
    r"^\s*(?:please\s+|pls\s+|can\s+you\s+|could\s+you\s+)?(?:forget|don'?t\s+remember|stop\s+remembering)\s+(?:that\s+|about\s+)?"
    r"|^\s*(?:请|麻烦)?(?:你)?(?:忘掉|忘记|忘了吧|别记着|不要记住|删掉关于)", _F)
_SELF = re.compile(
    r"\b(?:i|i'm|im|i've|i'd|i'll|my|me|mine|myself|we|our)\b|我|咱", _F)
_A_TASK = re.compile(r"^(?:(?:about\s+)?(?:that|this|the|my|it|the\s+last|that\s+last)\s+)?(?:task|job|run|request|reminder|workflow|one)s?"
                     r"(?:\s*,.*)?$|^(?:那个|这个|刚才的?)?(?:任务|提醒|请求)", _F)
_NOTHING_NAMED = {"it", "that", "this", "about it", "about that", "it all", "吧", "了", "这个", "那个", "算了"}


def memory_command(text: str) -> tuple[str, str] | None:
    """What a person asks of Flora's memory of them: ``("list", "")`` ("what do you remember
    about me?", "你记得我什么"), ``("clear", "")`` ("forget everything about me"), or
    ``("forget", what)`` ("forget that I live in Shanghai", "忘掉我住在上海") — None otherwise."""
    if _RECALL_ALL.search(text):
        return "list", ""
    if _FORGET_ALL.search(text):
        return "clear", ""
    found = _FORGET.match(text)
    if found and command(text) != "clear_history":
        what = text[found.end():].strip(" \t.。!！")
        if _A_TASK.match(what):  # "forget that task", "forget about the reminder": an operation on it
            return None
        return ("forget", what) if what and what.lower() not in _NOTHING_NAMED else None
    return None


_SELF_FIRST = re.compile(r"^\s*(?:i|i'm|im|i've|we|we're|we've|my|our)\b|^\s*(?:我们|咱们|我|俺)", _F)
_ASKS_ANYWHERE = re.compile(r"[?？]|\b(?:what|what's|whats|which|who|when|where|why|how|whether)\b"
                            r"|吗|呢|什么|哪|几|多少|有没有|是不是|怎么|如何|为什么|谁", _F)
_WANTS = re.compile(
    r"\b(?:want|wanna|need|needs|would\s+like|'d\s+like|wish|have\s+to|has\s+to|must|should|gotta|"
    r"let\s+me|remind|you|your)\b|想|要|需要|希望|麻烦|帮|请|让|给我|提醒|你|您", _F)
_FLORA_THINGS = re.compile(r"\b(?:tasks?|loops?|reminders?|schedules?|flora)\b|任务|定时|循环", _F)
_NAMED_VALUE = re.compile(r"\w\s*=\s*\S")


def states_about_self(text: str) -> bool:
    """A plain statement about the person ("I go running every morning", "we have a standup
    every Monday at 9", "我每天早上跑步"): first person, no question, nothing wanted of anyone,
    nothing about their tasks or outside records. It is conversation (and may be
    remembered), never a request — a time in it is not a schedule to set up."""
    stripped = text.strip()
    if not _SELF_FIRST.search(stripped) or len(stripped) < 4:
        return False
    return not (_ASKS_ANYWHERE.search(stripped) or _WANTS.search(stripped) or _FLORA_THINGS.search(stripped)
                or _NAMED_VALUE.search(stripped) or needs_the_world(stripped) or command(stripped))


def may_tell_about_self(text: str) -> bool:
    """Whether a message may tell something about the person worth remembering (a name, a
    preference, a project, a recurring need): a first-person statement, not a question and
    not a request. Generous on purpose: the distilling model decides; this spares it the
    messages that cannot."""
    if not _SELF.search(text) or len(text.strip()) < 4:
        return False
    return not (is_question(text) or _REQUEST_VERB.search(text) or conversation_only(text))


_ABOUT_SELF = re.compile(
    r"\bwhat(?:'s|\s+is|\s+was)\s+my\s+(?:name|job|role|team|title|age|birthday|favou?rite\s+\w+|\w+'s\s+name)\b"
    r"|\b(?:do|did)\s+you\s+(?:know|remember)\s+(?:my|where\s+i|what\s+i|who\s+i)\b|\bwho\s+am\s+i\b"
    r"|\bwhere\s+do\s+i\s+(?:live|work)\b|\bwhat\s+do\s+i\s+(?:do|like|prefer|love|hate|drink|eat|work\s+on)\b"
    r"|\bwhat\s+am\s+i\s+(?:allergic|working)\b|\bwhich\s+team\s+am\s+i\b"
    r"|我叫什么|我是谁|我的名字(?:是)?(?:什么|叫什么)|我(?:住|家)在哪|我在哪(?:里|儿)?(?:工作|上班)|我(?:做|干)什么工作"
    r"|我(?:最)?喜欢(?:吃|喝|做|看|听|玩)?(?:什么|哪)|我对什么过敏|你(?:还)?(?:记得|知道)我(?:的|是|叫|住|在|喜欢)", _F)


def asks_about_self(text: str) -> bool:
    """A question about the person themselves ("what's my name?", "我住在哪？"), which only
    what they told Flora can answer — not their orders or accounts (``needs_the_world``)."""
    return bool(_ABOUT_SELF.search(text)) and not asks_about_own_records(text)
