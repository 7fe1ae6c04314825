"""What the words alone make certain, in English and Chinese.

Rules decide only where a person's meaning is not in doubt; everything else is the
understanding model's to read. Each function here answers one narrow question:

- ``conversation_only``: thanks, greetings, goodbyes — conversation whatever else is around;
- ``command``: a system command (``/status``, "clear my history", "shut down", "switch
  the model") and which one;
- ``asks_about_flora``: a question about Flora's own work for this person (their tasks,
  loop tasks, what Flora is doing) that the store answers, never the model;
- ``reads_as_new_request``: a message that asks for something (a question, a request
  verb, a sentence) rather than giving a value, for telling an answer from a new request
  while a task waits.

What needs the person's own world (their records, live data, acts elsewhere) is read by
world.py.
"""

from __future__ import annotations

import functools
import re

from capabilities.cognition.world import asks_about_own_records, needs_the_world

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
        r"^\s*/(?:clear|reset)\b|\b(?:clear|delete|erase|wipe|reset|forget)(?:\s+(?:down|out))?\s+(?:all\s+)?(?:of\s+)?"
        r"(?:my|our|the|this)\s+(?:chat\s+|conversation\s+|message\s+)?(?:history|conversation|chat|messages|thread)\b"
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
        r"|把(?:flora|系统|服务|服务器|你自己|整个系统)(?:给)?(?:关|停)(?:掉|了|一下|下)"
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
    # the person's work still in Flora's hands: "你这会儿手上还有我的活儿没干完吗", "我的事办完了没"
    r"|你[^，。？?]{0,6}(?:手上|手头|手里)[^，。？?]{0,6}我的(?:活儿?|事儿?|事情|任务)"
    r"|我的(?:活儿?|事儿?|事情|任务)(?:都)?(?:还)?(?:没|有没有)(?:干|做|办|弄|跑)完"
    # asked whether something was run: "这个月我有没有让你跑过dify的工作流", "did I have you query the db?"
    r"|(?:有没有|是不是|是否)(?:让|叫|请)你[^，。？?]{0,12}过"
    r"|\b(?:did|have|had)\s+i\s+(?:ever\s+)?(?:ask|asked|have|had|get|got|tell|told)\s+you\s+(?:to\s+)?"
    r"(?:run|query|do|fetch|call|check|execute|hit|send)\b"
    r"|\bhow\s+(?:many\s+times|often)\s+(?:did|have)\s+i\s+(?:had|have|asked|ask|got|get)\s+you\b"
    # one of them pointed at, and the record of them: "我那个dify的任务", "之前的任务记录", "上次让你请求接口…"
    r"|我(?:那个|这个|那几个|那些|刚才那个|之前那个)[^，。,.?？!！]{0,12}?(?:任务|工作流|请求|查询)"
    r"|(?:之前|以前|过去|历史|全部|所有)的?任务(?:记录|历史|清单)?|任务(?:记录|历史)|上次(?:让|叫|请|拜托|托)你"
    r"|(?:哪些|什么)(?:任务|提醒|定时任务)(?:还)?(?:在|是)?(?:运行|生效|等待|进行)"
    # the work the person handed over, said as such: "我交给你的事情办得怎么样了", "我之前都让你做过哪些任务",
    # "show me what I've had you run so far", "how's the stuff I asked you to do?"
    r"|(?:交给|交代给|托|拜托|让|叫)你(?:帮我)?(?:做|办|跑|执行|处理|弄|查|干|搞)?(?:过)?的(?:那些|这些|那个|这个)?(?:事|事情|任务|活|东西)"
    r"|你(?:帮我|替我|给我)(?:做|办|跑|执行|处理|弄|查)(?:过)?的(?:那些|这些|那个|这个)?(?:事|事情|任务|活)"
    r"|让你(?:帮我)?(?:做|跑|执行|办|处理|查)(?:过|了)(?:哪些|什么|些什么|多少)"
    r"|\bwhat\s+(?:have|did)\s+i\s+(?:asked|ask|had|have|told|tell|got|get)\s+you\s+(?:to\s+)?(?:do|run|handle|work\s+on|look\s+into)\b"
    r"|\bwhat\s+(?:i'?ve|i\s+have|i)\s+(?:asked|had|told|got)\s+you\s+(?:to\s+)?(?:do|run|handle|work\s+on)\b"
    r"|\b(?:the\s+)?(?:stuff|things|tasks?|work|jobs?)\s+(?:that\s+)?i\s+(?:asked|gave|handed|told|left)\s+you\b", _F)

_ADDRESS = re.compile(r"(https?://\S+)", _F)  # an address, kept whole
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


# Cantonese words the rules and examples (written in Mandarin) would not know; only words that
# mean nothing else in Mandarin ("听日下昼三点提我去攞药" is "明天下午三点提醒我去拿药")
_CANTONESE = {"听日": "明天", "琴日": "昨天", "寻日": "昨天", "下昼": "下午", "朝早": "早上", "晏昼": "中午",
              "提我": "提醒我", "攞": "拿", "冇": "没有", "点样": "怎么", "唔该": "麻烦", "嘅": "的",
              "佢哋": "他们", "佢": "他", "畀": "给", "睇": "看"}
_CANTONESE_WORD = re.compile("|".join(sorted(_CANTONESE, key=len, reverse=True)))


def in_simplified(text: str) -> str:
    """Chinese as the rules and examples read it: traditional characters in simplified ones
    (OpenCC), Cantonese words in Mandarin ones. Text without Chinese is returned as it is."""
    if not re.search(r"[\u4e00-\u9fff]", text):
        return text
    pieces = _ADDRESS.split(text)  # addresses as written: "https://zh.wikipedia.org/wiki/臺灣" stays
    return "".join(piece if i % 2 else _CANTONESE_WORD.sub(lambda m: _CANTONESE[m.group(0)],
                                                           _simplifier().convert(piece))
                   for i, piece in enumerate(pieces))


# a value taken back and said again in one message: "查一下 https://…/v1 不对不对，是 https://…/v2",
# "key is app-3x9k… no wait, app-7hq2…"
_CORRECTION = re.compile(
    r"[\s,，。.;；]*(?:(?:哦|噢|啊)?不对(?:不对)?|不是不是|说错了|写错了|打错了|更正一下|更正|哦不|噢不|no\s*no|no\s+wait|wait\s+no"
    r"|sorry,?\s+i\s+meant?|i\s+meant?|correction|oops)[\s,，:：!！.。~]*"
    r"(?:是|应该是|改成|换成|改为|make\s+(?:that|it)|it'?s|it\s+is|should\s+be)?[\s:：]*", _F)
_VALUE = re.compile(r"https?://[^\s，。！？、）)\]]+|(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{5,}")


def corrected(text: str) -> str:
    """``text`` with a value the person took back replaced by the one they said instead ("查一下
    https://a/v1 不对不对，是 https://a/v2" → "查一下 https://a/v2"): the correction and its words
    go. Only where the new value, right after the words of correction, is of the same kind (an
    address, or a token of letters and digits) as a value said before them."""
    start = 0
    while (said := _CORRECTION.search(text, start)) is not None:
        new = _VALUE.match(text, said.end())
        old = [v for v in _VALUE.finditer(text, 0, said.start()) if _same_kind(v.group(0), new.group(0))] if new else []
        if not old:
            start = said.end() or start + 1
            continue
        taken_back = old[-1]
        text = text[:taken_back.start()] + new.group(0) + text[taken_back.end():said.start()] + text[new.end():]
        start = 0
    return text


def _same_kind(a: str, b: str) -> bool:
    """Both addresses, or neither."""
    return bool(_ADDRESS.match(a)) == bool(_ADDRESS.match(b))


@functools.cache
def _simplifier():
    import opencc

    return opencc.OpenCC("t2s")


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


_LEAD_IN = " \t,.!;:~-—，。！；：～、"  # what splits thanks from what follows them


def conversation_only(text: str) -> bool:
    """Thanks, greetings and goodbyes: conversation, whatever punctuation splits them. Thanks
    followed by a question or a request is that question ("谢谢，顺便问一下上海下周天气怎么样？")."""
    if _GREETING.match(text):
        return True
    if _THANKS.match(text):
        rest = _THANKS.sub("", text, count=1).lstrip(_LEAD_IN)
        return not (_THEN_ASK.search(rest) or reads_as_new_request(rest) or needs_the_world(rest))
    return False


def _as_you(text: str) -> str:
    """"您" read as "你": the polite "you" asks the same ("麻烦您把系统关一下", "您能帮我干啥")."""
    return text.replace("您", "你")


def command(text: str) -> str | None:
    """``clear_history | shutdown | switch_model | status | help`` when the text is that command."""
    text = _as_you(text)
    for name, pattern in _COMMANDS:
        if pattern.search(text):
            return name
    return None


def asks_about_flora(text: str) -> bool:
    return bool(_ABOUT_FLORA.search(_as_you(text)))


def asks(text: str) -> bool:
    """Whether a question is asked anywhere in ``text`` ("…有没有学校发过来的通知…", "what …")."""
    return bool(_ASKS_ANYWHERE.search(text))


def asks_about_own_work(text: str) -> bool:
    """A question about the work the person gave Flora ("我那个dify的任务现在什么情况了", "did the
    task I gave you earlier ever finish?"): to be answered from their tasks, never by running
    another. A question word anywhere counts, as Chinese asks without a final particle. An
    address in it is something to call ("我那个请求为什么一直报错？帮我重新请求 https://…")."""
    return asks_about_flora(text) and (is_question(text) or asks(text)) and not _ADDRESS.search(text)


_ABILITIES = re.compile(
    r"\bwhat\s+(?:can|could|do)\s+you\s+(?:do|help)|\bwhat\s+(?:kind|sort)s?\s+of\s+\w+\s+can\s+you|"
    r"\bhow\s+can\s+you\s+help|\bwhat\s+(?:exactly\s+|else\s+)?are\s+you\s+(?:able|good)|\bwho\s+are\s+you\b"
    r"|\byour\s+(?:capabilities|skills|features)|\bwhat\s+(?:exactly|else)\s+(?:can|could)\s+you\s+(?:do|help)"
    r"|\bintroduce\s+yourself|你(?:都)?(?:能|会|可以)(?:帮我)?(?:做|干)?(?:些)?(?:什么|啥)|介绍(?:一下)?你自己|你是谁|你有(?:哪些|什么)(?:能力|功能|本事)"
    # "你除了聊天还能干啥" (撒, 嘛: the spoken 啥)
    r"|你[^，,。？?！!]{0,8}?(?:还|都)(?:能|会|可以)(?:帮我)?(?:做|干)(?:些)?(?:什么|啥|撒|嘛)"
    # the asker left out "你" or said it in other words: "都能帮我干点啥", "说说你的本事", "你擅长什么",
    # "what are you actually capable of?", "what can you actually do", "what are your skills?"
    r"|(?:^|你|助手|[，,。!！?？\s])(?:都|还|又)?(?:能|可以|会)帮(?:我|上|到)?(?:我)?(?:做|干|弄|办|搞)?(?:点|些|一些)?(?:什么|啥|嘛|哪些)"
    r"|(?:说说|讲讲|聊聊|介绍(?:一下)?|展示(?:一下)?|亮亮)你的(?:本事|本领|能力|功能|技能|特长)"
    r"|你的(?:本事|本领|能力|功能|技能|特长)(?:都)?(?:有(?:哪些|什么|啥)|是(?:什么|啥|哪些))|你(?:有|会)(?:啥|哪些|什么)(?:本事|本领|技能|功能|能力|特长)|你(?:最)?擅长(?:什么|啥|哪些|干啥|做什么)"
    r"|\bwhat\s+(?:\w+\s+)?are\s+you\s+(?:\w+\s+)?(?:capable\s+of|able\s+to\s+do|good\s+(?:at|for))"
    r"|\bwhat\s+(?:can|could)\s+you\s+(?:actually|really|even|possibly)\s+(?:do|help)\b"
    r"|\bwhat(?:'s|\s+is|\s+are)\s+your\s+(?:\w+\s+)?(?:abilities|capabilities|skills|skill\s+set|powers|features)\b"
    r"|\bwhat\s+(?:can|could)\s+i\s+(?:use\s+you\s+for|ask\s+you\s+(?:to\s+do|for))\b", _F)


_HYPOTHETICAL = re.compile(r"^\s*(?:so\s+|ok\s+|hey\s+)?(?:if|suppose|imagine)\s+you\s+(?:could|were|had|was|can)\b"
                           r"|^\s*(?:如果|要是|假如|假设)你(?:能|可以|是|有|会)", _F)


def asks_hypothetical(text: str) -> bool:
    """A what-if put to Flora ("if you could have a body for one day…", "如果你是人，你想干嘛"):
    conversation, not a question about what it can do."""
    return bool(_HYPOTHETICAL.search(text))


def asks_about_abilities(text: str) -> bool:
    """"what can you do?", "介绍一下你自己能干嘛": answered with what is installed."""
    return bool(_ABILITIES.search(_as_you(text)))


_ADVICE = re.compile(
    r"\b(?:any|some|got\s+any|give\s+me(?:\s+some|\s+a\s+few)?|a\s+few)\s+(?:\w+\s+)?"
    r"(?:tips|advice|suggestions|ideas|recommendations|pointers)\b"
    r"|\bwhat\s+(?:do|would)\s+you\s+(?:suggest|recommend|advise)\b|\b(?:tips|advice)\s+(?:on|for)\b"
    r"|建议|有什么(?:好的?)?(?:办法|窍门|技巧|诀窍|推荐|方法)|给点(?:意见|思路)|推荐(?:一下|几个|几本|几部|点)", _F)


def asks_for_advice(text: str) -> bool:
    """"any tips for a first job interview?", "有什么练习建议吗": advice, which conversation gives,
    unless it is about the person's records or the live world."""
    return bool(_ADVICE.search(text)) and not needs_the_world(text)


_VAGUE = re.compile(
    r"^\s*(?:please\s+|pls\s+)?(?:do|run|send|handle|process|fix|check|sort\s+out|take\s+care\s+of|finish)\s+"
    r"(?:it|this|that|them|the\s+thing|that\s+thing|this\s+one|it\s+out)\s*(?:please|now)?\s*[.!]*\s*$"
    r"|^\s*(?:帮我|请|麻烦)?(?:发出去|处理一下|弄一下|搞一下|办一下|搞定它|处理它|发一下|执行一下|跑一下)\s*(?:吧|呗)?\s*[。!！]*\s*$", _F)


_UNCLEAR_EN = re.compile(
    r"^\s*(?:(?:hey|ok(?:ay)?|so|um+|also|and)[,\s]+)?(?:please\s+|pls\s+)?"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+|just\s+)?|i\s+need\s+you\s+to\s+|go\s+ahead\s+and\s+)?"
    r"(?:send|forward|fix|change|update|edit|redo|finish|handle|process|check|review|sort\s+out|take\s+care\s+of"
    r"|look\s+at|go\s+over|improve|correct|rewrite|share|post|submit|upload|print|move|rename|resend|delete|remove"
    r"|sort|figure|deal\s+with)"
    r"\s+(?P<ref>it|this|that|them|these|those|this\s+one|that\s+one|the\s+thing|that\s+thing"
    r"|(?:the|that|this)\s+(?:file|document|doc|draft|report|spreadsheet|sheet|deck|slides))(?:\s+out)?"
    r"(?:\s+(?:to|for|with|over\s+to)\s+(?:them|him|her|everyone|everybody|the\s+team|the\s+others|the\s+client|the\s+boss|it))?"
    r"(?:\s+(?:with|using)\s+(?:the\s+)?(?:new|latest|updated|same|other|right|correct)\s+\w+)?"
    r"(?:\s+(?:again|now|please|pls|asap|real\s+quick|for\s+me))*\s*[.!?？。！]*\s*$", _F)
_UNCLEAR_ZH_PERSON = re.compile(
    r"^\s*(?:(?:帮我|请|麻烦你|麻烦|你|能不能|可以|再)\s*)*(?:跟|和|给|替我跟|替我给|告诉)"
    r"(?P<ref>他|她|他们|她们|对方)\s*(?:说|讲|回|打个招呼|带个话|捎个话)(?:一声|一下|下)?"
    r"\s*(?:吧|呗|啊)?\s*[。!！?？]*\s*$")
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
    found = (_UNCLEAR_EN.match(text) or _UNCLEAR_ZH.match(text) or _UNCLEAR_ZH_PERSON.match(text)
             or _AS_SAID.match(text) or _EARLIER_CHOICE.match(text))
    return (found.groupdict().get("ref") or found.groupdict().get("ref_zh")) if found else None


# "and tomorrow?", "what about Shanghai?", "same for the returns", "那明天呢？", "上海呢", "北京也一样":
# a message that says only what changes, and leaves the rest to what was asked just before ("改成下午4点"
# is not one: it changes the work itself)
_FOLLOW_UP = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|so|hmm+|then)[,\s]+)*(?:and\s+)?(?:what|how)\s+about\s+\S.{0,40}$"
    r"|^\s*and\s+(?:for\s+|in\s+|on\s+|at\s+|with\s+)?(?:the\s+)?(?:\w[\w'-]*\s*){1,3}[?？]\s*$"
    r"|^\s*(?:(?:now|then|please|ok(?:ay)?)[,\s]+)*(?:(?:can|could)\s+you\s+)?(?:do\s+)?(?:the\s+)?same\s+(?:thing\s+)?"
    r"(?:for|with|in)\s+\S.{0,40}$"
    r"|^\s*(?:(?:now|then|please|ok(?:ay)?)[,\s]+)*(?:(?:can|could)\s+you\s+)?(?:do|run|check)\s+(?:it|that|this)\s+"
    r"(?:again\s+)?(?:for|with|in)\s+\S.{0,40}$"
    r"|^\s*(?:那|那么|那要是|要是|如果是)?\s*[^，,。！!？?\s]{1,12}呢\s*[？?]?\s*$"
    r"|^\s*(?:那)?\s*[^，,。！!？?\s]{1,12}也(?:一样|这样|照样|照这样)(?:来|弄|查|做|办)?(?:一下|一遍|一份)?\s*(?:吧|呢)?\s*[？?。]?\s*$", _F)


def follows_up(text: str) -> bool:
    """"and tomorrow?", "what about Shanghai?", "do the same for the returns", "那明天呢？",
    "上海也一样": a message read together with what was asked before it."""
    return bool(_FOLLOW_UP.match(text))


def vague_request(text: str) -> bool:
    """"do the thing", "发出去": a request with nothing to say what it is about."""
    return bool(_VAGUE.match(text))


def is_question(text: str) -> bool:
    return bool(_QUESTION.search(text.strip()))



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


# an address the person came across, told of: "saw https://… on a bus ad this morning", "收到一个
# https://… 的短信"
_TOLD_OF_ADDRESS = re.compile(
    r"\b(?:saw|seen|spotted|noticed|came\s+across|stumbled\s+(?:on|upon)|got|received|clicked(?:\s+on)?"
    r"|heard\s+(?:of|about))\b[^.!?\n]{0,40}?(?:https?://|www\.)"
    r"|(?:看到|看见|刷到|收到|点了|点开了|碰到)[^，。！？\n]{0,15}?(?:https?://|www\.)", _F)


_PLEASE = re.compile(r"\b(?:please|pls|plz)\b", _F)
_CLAUSES = re.compile(r"[,，;；.。!！]\s*")


def tells_of_an_address(text: str) -> bool:
    """An address the person tells of having come across, asking nothing about it ("saw
    https://win-a-car.example on a bus ad, obvious scam lol"): no address to fetch."""
    return bool(_TOLD_OF_ADDRESS.search(text)) and not (
        asks(text) or _WANTS.search(text) or _PLEASE.search(text)
        or any(_REQUEST_VERB.search(clause) for clause in _CLAUSES.split(_ADDRESS.sub(" ", text))))  # "…, fetch it"


def speaks_of_self(text: str) -> bool:
    """Whether the person speaks of themselves anywhere in ``text`` (I, my, we, 我, 咱…)."""
    return bool(_SELF.search(text))
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
                            # "…落地了没，CZ3102": 没 ending a clause asks whether it happened
                            # 啥: 什么 said plainly; 来着: asking to be reminded of something known ("他叫啥来着")
                            r"|吗|呢|什么|啥|来着|哪|几|多少|有没有|是不是|怎么|如何|为什么|谁|[了完]没有?(?:啊|呀|哇)?\s*(?:[，,。.!！~]|$)"
                            r"|没有?\s*[。.!！~]*\s*$", _F)
_WANTS = re.compile(
    r"\b(?:want|wanna|need|needs|would\s+like|'d\s+like|wish|have\s+to|has\s+to|must|should|gotta|"
    r"let\s+me|remind|you|your)\b|想|要|需要|希望|麻烦|帮|请|让|给我|提醒|你|您", _F)
# "要" right after a day or a time to come says what the person is going to do, not what they want
# of anyone: "我下周要去上海出差", "我明天要开会", "我快要考试了" (but "我每天9点要看报表" wants a report,
# and "我明天要订机票" may want it booked)
_GOING_TO = re.compile(r"(?:今天|今晚|明天|明早|明晚|后天|下周[一二三四五六日天]?|下星期|下礼拜|下个?月|明年|这周|本周|这个?月|周末"
                       r"|月底|年底|过几天|过两天|马上|快|就)要(?!订|预订|预约|买|购|付|支付|转账|汇款|退|下单|点|寄|发|交|缴|查)")
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
    return not (_ASKS_ANYWHERE.search(stripped) or _WANTS.search(_GOING_TO.sub("", stripped))
                or _FLORA_THINGS.search(stripped)
                or _NAMED_VALUE.search(stripped) or needs_the_world(stripped) or command(stripped))


def may_tell_about_self(text: str) -> bool:
    """Whether a message may tell something about the person worth remembering (a name, a
    preference, a project, a recurring need): a first-person statement, not a question and
    not a request. Generous on purpose: the distilling model decides; this spares it the
    messages that cannot."""
    if not _SELF.search(text) or len(text.strip()) < 4:
        return False
    # a question asked anywhere ("我在你这儿设了哪些定时的事儿"), a reminder asked for ("每天早上9点提醒我复习")
    return not (is_question(text) or asks(text) or _REQUEST_VERB.search(text) or _REMIND_ME.search(text)
                or conversation_only(text))


_REMIND_ME = re.compile(r"提醒我|叫醒我|通知我|\bremind\s+me\b|\bwake\s+me\b", _F)


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
