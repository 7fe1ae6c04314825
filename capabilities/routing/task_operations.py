"""Operations on a task the user already has, read from plain words, Chinese or English.

``read_operation`` answers a :class:`TaskOperation` or None (an ordinary request):

====================  ==============================================  ===========================
kind                  said as                                         ``text``
====================  ==============================================  ===========================
``comment_on_task``   "comment on t_1: looks good", "评论：不错",        the comment
                      "在这个任务下面写一句：…"
``revise_result``     "revise it: use euros", "把结果改成英文",          the added instruction
                      "re-run it with prices in euros", "结果按时间排一下"
``re_run_task``       "re-run it", "run task_3f… again", "重新执行",    ""
                      "重新请求一次", "once more, the api is back up"
``cancel_task``       "cancel task t_123", "stop it", "取消刚才的任务",   ""
                      "这个任务不要了", "I don't need that anymore"
====================  ==============================================  ===========================

``task_ref`` is the task id written in the text (``task_…`` or ``t_…``) or ``"last"`` (the
user's most recent task). Each pattern covers the whole message, with the operation word
and a word for the task ("it", "the task", "刚才的任务", an id): "stop the server" or "取消
订阅" is a request to do something, not an operation on a task. Loop tasks (``loop_…``,
reminders, schedules) have their own reader, ``capabilities.loop.requests``, and are left to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from capabilities.cognition.cues import reads_as_new_request

KINDS = ("comment_on_task", "revise_result", "re_run_task", "cancel_task")
LAST = "last"

_F = re.IGNORECASE
_ID = r"(?<![A-Za-z0-9_])(?:task|t)_[A-Za-z0-9]{1,40}(?![A-Za-z0-9_])"
_TASK_ID = re.compile(_ID)
_EN_REF = (rf"(?:(?:the\s+)?task\s+)?{_ID}|(?:the\s+)?result\s+of\s+(?:task\s+)?{_ID}|it|that|this|that\s+one|this\s+one"
           r"|the\s+(?:last|previous|latest|current|running|same)\s+(?:task|job|one|run|request|result|answer)"
           r"|the\s+(?:task|job|run|result|results|answer|output|response|workflow|query|download|search|lookup)"
           r"|(?:my|that|this)\s+(?:last\s+|previous\s+)?(?:task|job|request|result)")
_ZH_WHICH = r"(?:刚才|刚刚|上一个|上个|之前|前面|最近|这个|那个|该)?(?:的)?"
_ZH_THAT_TASK = r"(?:刚才|刚刚|上一个|上个|之前|最近)(?:那个|这个)(?:任务|请求)"  # "刚才那个任务"
_ZH_REF = (rf"(?:任务\s*)?{_ID}(?:\s*的?(?:结果|输出))?|(?:{_ZH_THAT_TASK}|{_ZH_WHICH}(?:任务|请求))(?:的?(?:结果|输出))?"
           rf"|{_ZH_WHICH}(?:结果|回答|答案|输出)|(?:刚才|刚刚|上一个|之前)(?:那个|这个|的)?|它")
# "it's not that I don't trust the numbers, but could you give that another go?": a clause that
# concedes something first
_LEAD_EN = r"(?:[^,，.!?]{0,60}[,，]\s*but\s+)?(?:(?:never\s*mind|actually|ok(?:ay)?|sorry|hmm|no|wait)\s*[,，.!]?\s*)?"
_POLITE_EN = rf"^\s*{_LEAD_EN}(?:please\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
# a request's polite or question lead: "请", "帮我", "麻烦你", "能不能", "可不可以帮我", "你能"
_ASK_ZH = (r"(?:(?:你|您)?(?:能不能|能否|可不可以|可否|可以|能|帮忙)(?:请)?|麻烦(?:你|您)?|请(?:你|您)?)?"
           r"\s*(?:帮我|帮忙|给我)?")
_POLITE_ZH = rf"^\s*(?:(?:算了|不用了|等等|哦|嗯|哎|唉|好吧)\s*[,，。!！]?\s*)?{_ASK_ZH}\s*"
_AFTERWORD = r"please|pls|plz|for\s+now|now|again|thanks|thx"  # what may end an operation and add nothing to it
_END = rf"\s*(?:[,，]?\s*(?:{_AFTERWORD}))?\s*[.!。！?？]*\s*$"
_END_ZH = r"\s*(?:掉了|掉|了)?\s*(?:吧|一下|呗)?\s*[.!。！?？]*\s*$"
_LEADS_ZH = r"(?:(?:算了|不用了|不要了|等等|哦|嗯|哎|唉|哎呀|好吧)\s*[,，。!！]?\s*)*"
_NO_MORE_ZH = r"(?:先)?(?:(?:不用|别|不要)(?:再)?|不)(?:跑|做|执行|运行|弄|查)了"  # "先别跑了", "不做了": stop it
# the task no longer wanted: "这个任务不要了", "刚才那个就不用做了", "不需要这个任务了" (bare "不要了",
# "不用了" answer an offer as often as they stop a task: those need a task named)
_UNWANTED_ZH = (r"(?:我|咱们|我们)?(?:就|也|都|先|暂时|还是)?(?:不要了|不用了|不需要了|用不着了|没必要了"
                r"|(?:(?:不用|别|不要|不必|不需要)(?:再)?|不)(?:跑|做|执行|运行|弄|查|继续)了)")
_ZH_TASK_REF = rf"(?:任务\s*)?{_ID}|{_ZH_THAT_TASK}|{_ZH_WHICH}(?:任务|请求)|(?:刚才|刚刚|上一个|之前|这个|那个)(?:那个|这个|的)?|它"
# a reason after it, which adds nothing to do: "这个任务不要了，用不着了", "forget it, I'll do it myself"
_REASON_ZH = (r"(?:\s*[,，。!！]\s*(?:(?:已经|真的|暂时)?(?:用不着了?|没必要了?|不需要了|不用了|没用了|不急了?)"
              r"|我自己(?:来|弄|做|查)(?:吧)?|太慢了|等不及了))?")
_REASON_EN = (r"(?:\s*[,;.!-]+\s*(?:i(?:'ll|\s+will)\s+(?:do|run|handle)\s+it\s+(?:myself|later)(?:\s+later)?|(?:i|we)\s+don'?t\s+need\s+it(?:\s+any\s*more)?"
              r"|(?:it'?s\s+)?(?:not\s+needed|no\s+longer\s+needed)(?:\s+any\s*more)?|it'?s\s+taking\s+too\s+long))?")
_EN_TASK_REF = (rf"(?:the\s+)?(?:task\s+)?{_ID}"
                r"|(?:the|that|this|my)\s+(?:last\s+|previous\s+|current\s+|running\s+)?(?:task|job|run|request)")
# the result to be made into something else: "the result", "that output", "task_12's output"
_MADE = (rf"(?:the\s+)?(?:task\s+)?{_ID}(?:'s)?(?:\s+(?:result|output))?"
         r"|(?:the|that|this)\s+(?:last\s+|previous\s+)?(?:task'?s?\s+)?(?:result|results|output|answer|report)")
_CANCEL_ZH = r"(?:取消|终止|停止|中止|停掉|撤销|撤掉|撤回|撤|叫停)"
# how the act is put, adding nothing to it: "这个任务先取消掉吧", "直接取消刚才的任务"
_ADVERB_ZH = r"(?:先|就|还是|直接|干脆|暂时|都|也)*"
_CANCEL_VERB_ZH = rf"(?:还是)?(?:请|帮我)?(?:{_CANCEL_ZH}|停下来?)"
_REDO_ZH = r"重新(?:整理|生成|写|编写|排版|组织|输出|格式化|总结|汇总)(?:一次|一遍|一下)?"
_ZH_CHANGE = (r"改成|改为|换成|改用|修改为|修改成|调整为|调整成|翻译成|译成|翻成|转成|转换成|写成|改写成|改写为|变成"
              r"|精简成|简化成|缩短成|压缩成|总结成|概括成|整理成|弄成|做成|搞成|整成|列成|排成|输出成|输出为")
# how the result is to be shown: "把结果用表格展示", "把结果按日期排序"
_ZH_SHOW = (r"(?:用|以|按照?)[^，,。]{1,20}?(?:展示|显示|呈现|列出来?|输出|排列|排序|整理|表示|重写|重新写|再写"
            r"|(?:重新)?排(?:列|序)?|重排|分组|归类)(?:一下|一遍|出来)?")
# the result said first, as what the sentence is about: "结果能不能按时间倒序排一下", "输出帮我改成英文"
_ZH_RESULT = (rf"(?:(?:任务\s*{_ID}|{_ZH_THAT_TASK}|{_ZH_WHICH}(?:任务|请求))的?|{_ZH_WHICH})(?:结果|输出)")
# what may end a revision said as a question and add nothing to it: "…改成表格的形式吗？"
_ASKED_END = re.compile(r"\s*(?:吗|呢|吧|呀|啊|好吗|好不好|行吗|行不行|可以吗|可不可以|谢谢"
                        r"|[,，]?\s*(?:please|pls|plz|thanks|thx|thank\s+you))?\s*[?？.!。！]*\s*$", _F)
_LOOP = re.compile(r"\bloop_[0-9a-f]|\bloop\s*tasks?\b|\breminders?\b|\bschedul\w*|循环任务|定时|提醒|计划任务", _F)

_CLOSE_ZH = rf"\s*(?:吧|呗|啊|哈)?{_REASON_ZH}{_END_ZH}"  # how a no-longer-wanted clause may end: "…吧，我自己来"

_CANCEL = (
    re.compile(rf"{_POLITE_EN}(?:just\s+)?(?:cancel|abort|stop|kill|terminate|halt|drop|scrap|ditch|forget(?:\s+about)?)"
               rf"\s+(?P<ref>{_EN_REF}){_REASON_EN}{_END}", _F),
    # no longer wanted: "I don't need that anymore", "we no longer need the task", "that job is not needed anymore"
    re.compile(rf"{_POLITE_EN}(?:i|we)\s+(?:really\s+)?(?:don'?t|do\s+not|no\s+longer)\s+(?:really\s+)?(?:need|want)\s+"
               rf"(?:(?P<ref>it|that|this|that\s+one|this\s+one)\s+(?:any\s*more|after\s+all)"
               rf"|(?P<ref2>{_EN_TASK_REF})(?:\s+(?:any\s*more|after\s+all))?){_END}", _F),
    # "please call that off, I'll run it myself later", "call off the task"
    re.compile(rf"{_POLITE_EN}(?:just\s+)?call\s+(?:(?P<ref>it|that|this|that\s+one|this\s+one|{_EN_TASK_REF})\s+off"
               rf"|off\s+(?P<ref2>{_EN_TASK_REF})){_REASON_EN}{_END}", _F),
    re.compile(rf"{_POLITE_EN}(?P<ref>it|that|this|that\s+one|this\s+one|{_EN_TASK_REF})\s*(?:is|'s)\s+"
               rf"(?:no\s+longer\s+needed|not\s+needed\s+any\s*more){_END}", _F),
    # the task no longer wanted: "算了，这个任务不要了", "刚才那个就不用做了", "不需要这个任务了"
    re.compile(rf"^\s*{_LEADS_ZH}(?:把|将)?(?P<ref>{_ZH_TASK_REF})\s*{_UNWANTED_ZH}{_CLOSE_ZH}", _F),
    re.compile(rf"^\s*{_LEADS_ZH}(?:我|咱们|我们)?(?:就|也|都|先|暂时|还是)?(?:不要|不用|不需要|不做|别做)(?:了)?"
               rf"\s*(?P<ref>{_ZH_TASK_REF})\s*了{_CLOSE_ZH}", _F),
    re.compile(rf"{_POLITE_ZH}(?:把|将)?(?P<ref>{_ZH_REF})\s*{_ADVERB_ZH}(?:给)?{_CANCEL_ZH}{_END_ZH}", _F),
    re.compile(rf"{_POLITE_ZH}{_ADVERB_ZH}{_CANCEL_ZH}(?:掉)?\s*(?P<ref>{_ZH_REF}){_END_ZH}", _F),
    # the verb alone ("cancel", "never mind, stop", "scratch that", "算了，不用跑了，取消吧"): the latest unfinished task
    re.compile(rf"{_POLITE_EN}(?:just\s+)?(?:(?:cancel|abort|stop)(?:\s+(?:it|that|this))?|scratch\s+that|call\s+it\s+off)"
               rf"{_END}", _F),
    re.compile(rf"^\s*{_LEADS_ZH}(?:{_NO_MORE_ZH}(?:\s*[,，。!！]?\s*{_CANCEL_VERB_ZH})?|{_CANCEL_VERB_ZH})"
               rf"\s*(?:吧|呗)?{_REASON_ZH}{_END_ZH}", _F),
)
# what a task does, said again to re-run it: "重新请求一次", "fetch it again"
_FETCH_ZH = r"请求|查询|查|获取|调用|调|抓取|抓|拉取|拉|下载|搜索|搜|访问|发送|发|提交|同步|导出"
_FETCH_EN = (r"fetch|call|request|query|send|hit|ping|check|load|pull|get|download|search|look\s+up|submit"
             r"|sync|export")
_SERVICE_REF_EN = r"the\s+(?:endpoint|api|url|page|site|server|call|service|feed)"
_RERUN = (
    re.compile(rf"{_POLITE_EN}(?:re-?run|re-?execute|retry|redo|repeat|restart)(?:\s+(?P<ref>{_EN_REF}))?"
               r"(?P<rest>.*)$", _F),
    # the task's own act said again: "run it again", "fetch that again", "call the endpoint one more time"
    re.compile(rf"{_POLITE_EN}(?:run|execute|do|try|{_FETCH_EN})\s+(?P<ref>{_EN_REF}|{_SERVICE_REF_EN})\s+"
               r"(?:again|one\s+more\s+time|once\s+more)\b(?P<rest>.*)$", _F),
    re.compile(rf"{_POLITE_EN}give\s+(?P<ref>it|that|the\s+(?:task|job|request))\s+(?:another|one\s+more)\s+(?:go|try|shot)"
               r"\b(?P<rest>.*)$", _F),
    # redoing the writing: only with the task named ("把结果重新整理一下"), since "重新写一下" after a
    # chat reply is about that reply
    re.compile(rf"{_POLITE_ZH}(?:(?:把|将)?(?P<ref>{_ZH_REF})\s*{_REDO_ZH}|{_REDO_ZH}\s*(?P<ref2>{_ZH_REF}))(?P<rest>.*)$", _F),
    # "重新执行", "再跑一次", and the task's own act again: "重新请求一次", "再查一遍"
    re.compile(rf"{_POLITE_ZH}(?:把|将)?(?P<ref>{_ZH_REF})?\s*{_ADVERB_ZH}再?(?:重新执行|重新运行|重新跑|重跑|重新做|重做|重试"
               rf"|再(?:执行|运行|跑|做|试|来)(?:一次|一遍|一下)?|重新(?:{_FETCH_ZH})|再(?:{_FETCH_ZH})(?=一次|一遍))"
               r"(?:一次|一遍|一下)?\s*"
               rf"(?P<ref2>{_ZH_REF})?(?P<rest>.*)$", _F),
)
_REVISE = (
    re.compile(rf"{_POLITE_EN}(?:revise|rewrite|redo|change|modify|fix|amend|update|edit|adjust)\s+(?P<ref>{_EN_REF})"
               r"(?:\s*[:：,，;-]\s*|\s+(?:and|so\s+that|so)\s+|\s+(?=(?:to|with|using|by|in(?:to)?)\s))"
               r"(?P<text>\S.*)$", _F),
    # "make the result shorter", "make that result shorter, just the key numbers", "turn the output
    # into a table", "make task_12's output more formal" ("make it shorter" after a chat reply is
    # about that reply: the model reads it)
    re.compile(rf"{_POLITE_EN}make\s+(?P<ref>{_MADE})\s+(?P<text>(?:(?:a\s+(?:bit|little|lot)\s+|much\s+|way\s+)?(?:(?:more|less)\s+\w+|\w+er"
               r"|concise|brief|formal|informal|casual|simple|readable|compact|detailed|professional|polite|friendly)"
               r"|in\s+\w+|into\s+.+|(?:an?\s+|one\s+)(?:\w+\s+){0,2}(?:table|list|chart|paragraph|summary|bullet\s+list|csv|spreadsheet)"
               r"|bullet\s+points)\b.*)$", _F),
    re.compile(rf"{_POLITE_EN}turn\s+(?P<ref>{_MADE})\s+(?P<text>into\s+\S.*)$", _F),
    re.compile(rf"{_POLITE_ZH}(?:把|将)(?P<ref>{_ZH_REF})\s*(?P<text>(?:{_ZH_CHANGE}).+)$", _F),
    re.compile(rf"{_POLITE_ZH}(?:把|将)(?P<ref>{_ZH_REF})\s*(?P<text>{_ZH_SHOW}.*)$", _F),
    re.compile(rf"^\s*(?P<ref>{_ZH_RESULT})\s*[,，]?\s*{_ASK_ZH}\s*(?:再|重新)?(?P<text>(?:{_ZH_SHOW}|{_ZH_CHANGE}).*)$", _F),
    # put in another order: "sort the results by date, newest first", "could you re-sort that output by price"
    re.compile(rf"{_POLITE_EN}(?P<text>(?:sort|re-?sort|order|re-?order|rearrange|arrange|rank|re-?rank|group|regroup)\s+"
               rf"(?P<ref>{_MADE})\s+(?:by|in|from|with|according\s+to|alphabetically|chronologically"
               r"|newest|oldest|latest|earliest|highest|lowest|largest|smallest)\b.*)$", _F),
    # "结果里的金额换成欧元": what in the result, and what it becomes
    re.compile(rf"{_POLITE_ZH}(?:把|将)?(?P<ref>{_ZH_WHICH}(?:结果|输出|回答))(?:里|中)?的?"
               rf"(?P<text>[^，,。]{{1,12}}(?:{_ZH_CHANGE}).+)$", _F),
    re.compile(rf"{_POLITE_ZH}(?:修改|修订|调整|重写|改一下|改改)\s*(?P<ref>{_ZH_REF})?\s*[:：,，]\s*(?P<text>.+)$", _F),
)
_NOTE_EN = (r"(?:(?:add|leave|put|write|post|attach|drop|pin|make|jot\s+down)\s+(?:a\s+|an\s+|one\s+|this\s+)?"
            r"(?:quick\s+|short\s+|little\s+)?)?(?:comment|note|remark)")
_ON_EN = r"(?:on|to|for|under|against|with)"
_SAYING_EN = r"(?:saying|that\s+says|which\s+says|that\s+reads|reading|to\s+say|that)"
_COMMENT = (
    re.compile(rf"{_POLITE_EN}(?:add\s+(?:a\s+)?)?(?:comment|note|remark)(?:\s+(?:on|to|for)\s+(?P<ref>{_EN_REF}))?"
               r"(?:\s+for\s+me)?\s*[:：,，-]\s*(?P<text>\S.*)$", _F),
    # left on a task named, after a colon or a word: "leave a note on that job saying the figures
    # are provisional", "post a remark to task_9: checked"
    re.compile(rf"{_POLITE_EN}{_NOTE_EN}\s+{_ON_EN}\s+(?P<ref>{_EN_REF})(?:\s+for\s+me)?(?:\s*[:：,，-]\s*|\s+{_SAYING_EN}(?:\s*[:：,，]\s*|\s+))"
               r"(?P<text>\S.*)$", _F),
    # written where the task is: "在这个任务下面写一句：…", "给刚才的任务补充一条：…"
    re.compile(rf"{_POLITE_ZH}(?:在|给|对|往)\s*(?P<ref>{_ZH_REF})\s*(?:下面|下边|底下|下方|里面|里|上面|上|后面|下)?"
               r"\s*(?:添加|加上|加|写上|写|留下|留|补充|补|附上|附|记上|记)\s*(?:一句话|一句|几句话|几句|一条|一笔|一下|点|个|句话)?"
               r"\s*(?:评论|备注|批注|留言|说明|话)?\s*(?:[:：,，]|说)\s*(?P<text>.+)$", _F),
    re.compile(rf"{_POLITE_ZH}(?:给|对|在)?\s*(?P<ref>{_ZH_REF})?\s*(?:添加|加|写|留|记|做|挂|打|标|贴)?(?:一条|一个|个|一下|下)?"
               r"(?:评论|备注|批注|留言|言|备忘|笔记)(?:一下)?\s*(?:吧|呗)?\s*[:：,，]\s*(?:就|内容)?(?:写|是|写上|写着)?\s*[:：]?\s*"
               r"(?P<text>.+)$", _F),
    re.compile(rf"{_POLITE_ZH}(?:评论|备注|批注)\s*(?P<ref>{_ZH_REF})\s*[:：,，]\s*(?P<text>.+)$", _F),
)
# what may follow "re-run it" and still be a re-run: an instruction after a separator or a joining word
_RERUN_REST = re.compile(r"^\s*(?:[:：,，;；?？.!！-]+\s*|(?:but|and|so\s+that)\s+|(?=(?:with|using|in|to|as)\s))"
                         r"(?P<text>\S.*)$", _F)
_RERUN_REST_ZH = re.compile(r"^\s*(?:[:：,，;；?？。!！]+\s*|(?:但是|但|并且|并)\s*)(?P<text>\S.*)$")
_TRAILING = " \t.!。！?？"


@dataclass(frozen=True)
class TaskOperation:
    kind: str  # "comment_on_task" | "revise_result" | "re_run_task" | "cancel_task"
    task_ref: str  # a task id said in the text, or "last" (the user's most recent task)
    text: str  # the comment / revision instruction ("" when none)


# a reading's kind (capabilities/cognition/semantic.py: task_op/<kind>) and the operation it names
_READ_KINDS = {"cancel": "cancel_task", "revise": "revise_result", "rerun": "re_run_task", "comment": "comment_on_task"}
# what a comment says, after its lead: 'note on that task: "sent to legal"', "在刚才的任务上记一笔：已确认"
_SAID = re.compile(r"[:：]\s*(.+)$|[“\"「『](.+?)[”\"」』]|\s[—–-]+\s*(.+)$", re.S)


# once a message is known to be an operation on a task, the words that say which one
_OPERATION_WORDS = (
    ("comment", re.compile(r"\b(?:note|comment|remark|annotate)\b|备注|备忘|记一笔|留言|评论|写一句|记一下", _F)),
    ("cancel", re.compile(r"\b(?:cancel|kill|stop|abort|scrap|drop)\b|取消|撤|停掉|别跑|不用跑|不要了", _F)),
    ("rerun", re.compile(r"\b(?:again|once\s+more|re-?run|re-?try|retry|re-?fetch|re-?send)\b|再(?:来|跑|拉|请求|查|试|发|执行)"
                         r"|重新(?:跑|拉|请求|查|试|发|执行|运行)|重跑|重试", _F)),
    ("revise", re.compile(r"\b(?:redo|rework|rewrite|reformat|revise|instead|into|as\s+a)\b|改成|改为|换成|整理|重新(?:写|整理|排)", _F)),
)


def operation_read_as(kind: str, content: str, *, needs_word: bool = False) -> TaskOperation | None:
    """The operation on the person's latest task that a semantic reading of ``content`` names
    (``cancel``, ``revise``, ``rerun``, ``comment``), when no rule read one. The nearest examples
    tell the topic better than the verb, so an operation word in the text decides which, and the
    reading's kind only where there is none (``needs_word``: not even then — a reading that only
    leans needs a word for the operation beside it). A comment is what follows a colon or dash or
    stands in quotes (else the whole message); a revision's instruction is the whole message."""
    if kind not in _READ_KINDS:
        return None
    said = next((k for k, pattern in _OPERATION_WORDS if pattern.search(content)), None)
    if said is None and needs_word:
        return None
    kind = said or kind
    operation = _READ_KINDS.get(kind)
    text = content.strip()
    if operation is None or not text:
        return None
    if operation == "comment_on_task":
        said = _SAID.search(text)
        note = next((g for g in said.groups() if g), "") if said else ""
        return TaskOperation(operation, _ref_in(text), note.strip().strip("“”\"") or text)
    return TaskOperation(operation, _ref_in(text), text if operation == "revise_result" else "")


def said_operation(content: str) -> TaskOperation | None:
    """The operation on a task that an operation word of ``content`` says ("…再请求一次", "… again"),
    when no rule read one: to be taken only where the message names one of the person's tasks
    (its id, the words of what it did, its address), which the caller checks."""
    said = next((k for k, pattern in _OPERATION_WORDS if pattern.search(content)), None)
    return operation_read_as(said, content) if said is not None else None


def _ref_in(text: str) -> str:
    named = _TASK_ID.search(text)
    return named.group(0) if named else LAST


def read_operation(content: str) -> TaskOperation | None:
    """The operation ``content`` asks for on an existing task, or None. What leads up to it
    in clauses of its own is said about it, not asked ("actually scratch that, cancel the
    workflow", "刚才网络抽风了，再重跑一遍"), unless it is a request or a step of its own, or
    names a loop task ("reminder for standup, kill it" is the loop reader's)."""
    text = content.strip()
    if not text:
        return None
    found = _read_whole(text) or _retry_when_back(text)
    if found is not None:
        return found
    for clause in _CLAUSE_END.finditer(text):
        lead, rest = text[:clause.end()], text[clause.end():].strip()
        if not rest or _NOT_A_LEAD.search(lead) or _LOOP.search(lead) or reads_as_new_request(lead.strip()):
            return None
        found = _read_whole(rest)
        if found is not None:
            return found
    return None


_CLAUSE_END = re.compile(r"[,，。.!！?？;；]+\s*|(?<=[了啊哎唉嗯哦])\s+")
# a lead that is a step or an address of its own: "fetch https://…, then re-run it" is a request
_NOT_A_LEAD = re.compile(r"https?://|\b(?:then|after\s+that|afterwards|next)\b|然后|接着|之后|再把", _F)


def _read_whole(text: str) -> TaskOperation | None:
    for kind, patterns in (("comment_on_task", _COMMENT), ("cancel_task", _CANCEL),
                           ("revise_result", _REVISE)):
        for pattern in patterns:
            match = pattern.match(text)
            if match and not _about_loops(text, match):
                said = (match.groupdict().get("text") or "").strip()
                if kind == "revise_result":
                    said = _ASKED_END.sub("", said)
                if kind == "comment_on_task":  # the note, not the quotes around it
                    said = said.strip(_TRAILING).strip("“”\"「」『』")
                return TaskOperation(kind, _task_ref(match), said.rstrip(_TRAILING) if said else "")
    for pattern in _RERUN:
        match = pattern.match(text)
        if not match or _about_loops(text, match):
            continue
        rest = match.group("rest").strip().rstrip(_TRAILING)
        if not rest or re.fullmatch(rf"(?:{_AFTERWORD}|吧|一下|一次|一遍|吗|好吗|行吗|可以吗)", rest, _F):
            return TaskOperation("re_run_task", _task_ref(match), "")
        added = _RERUN_REST.match(rest) or _RERUN_REST_ZH.match(rest)
        if added and _BACK_UP.search(added.group("text")) and not _asks(added.group("text")):
            return TaskOperation("re_run_task", _task_ref(match), "")  # "re-run it, the server is back"
        if added:  # a re-run with something to change is a revision
            return TaskOperation("revise_result", _task_ref(match), added.group("text").strip())
    return None


# "again" with nothing else to say what: "one more time pls", "再来一次", "try again"
_BARE_REPEAT = re.compile(r"^\s*(?:ok(?:ay)?\s*[,，]?\s*)?(?:please\s+|pls\s+)?(?:(?:try|do|run|send|go)\s+(?:it\s+|that\s+)?)?"
                          r"(?:one\s+more\s+time|once\s+more|again|one\s+more\s+(?:go|try|shot))"
                          r"(?:\s*[,，]?\s*(?:please|pls|plz|now|then|thanks))*\s*[.!。！]*\s*$"
                          r"|^\s*(?:那|那就|麻烦|请)?(?:你)?(?:再|重新)(?:来|试)(?:一次|一遍|一下|试)?(?:吧|呗)?\s*[.!。！]*\s*$", _F)
# what failed is working again: the reason to try once more
_BACK_UP = re.compile(
    r"\b(?:back\s+(?:up|online|on)|up\s+(?:again|now)|online\s+(?:again|now)|working\s+(?:again|now)|works\s+now"
    r"|(?:is|'s|are|should\s+be|seems?\s+to\s+be)\s+(?:fixed|restored|reachable|running|available|up|back)"
    r"|(?:restarted|rebooted|recovered|reconnected|fixed)\b"
    # a fix went out: "I just pushed a fix", "we deployed the patch"
    r"|\b(?:pushed|deployed|shipped|merged|applied|released|rolled\s+out)\s+(?:a\s+|the\s+|my\s+|our\s+)?(?:\w+\s+)?"
    r"(?:fix|patch|hotfix|change)\w*)"
    r"|(?:服务器|接口|网络|网站|服务|数据库|连接|系统|网|页面|链接|网页|代理|VPN|它)[^，,。]{0,8}"
    r"(?:恢复|好了|重启|正常|修好|通了|上线|可以了|能用|稳定|起来了)"
    r"|(?:修复|补丁|hotfix|fix)[^，,。]{0,6}(?:上线|发布|部署|合进去|合了|推上去|推了)了?|(?:刚|已经)(?:修好|修复|改好)了", _F)


def _retry_when_back(text: str) -> TaskOperation | None:
    """A bare "again" is about the last task when another clause says what failed works again
    ("one more time, the endpoint should be back up now", "网站恢复了，再来一次"); alone, after a
    chat reply, it asks for that reply again."""
    clauses = [c for c in _CLAUSE_END.split(text) if c.strip()]
    repeats = [c for c in clauses if _BARE_REPEAT.match(c)]
    reasons = [c for c in clauses if c not in repeats]
    if len(repeats) == 1 and reasons and all(_BACK_UP.search(c) and not _asks(c) for c in reasons):
        return TaskOperation("re_run_task", LAST, "")
    return None


def _asks(clause: str) -> bool:
    return "?" in clause or "？" in clause or reads_as_new_request(clause.strip())


def _task_ref(match: re.Match) -> str:
    for group in ("ref", "ref2"):
        said = match.groupdict().get(group)
        if said:
            found = _TASK_ID.search(said)
            if found:
                return found.group(0)
    return LAST


def _about_loops(text: str, match: re.Match) -> bool:
    """Loop tasks are another reader's; the words after a comment's colon do not count."""
    head = text[: match.start("text")] if match.groupdict().get("text") else text
    return bool(_LOOP.search(head))
