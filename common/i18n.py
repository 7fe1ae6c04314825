"""The language a person writes in, and Flora's own sentences in that language.

Flora answers in the language of the message it answers. ``language_of`` tells Chinese from
everything else by its script (no model needed; mixed text counts as Chinese once a fair
share of it is Han characters, since that is how Chinese speakers mix in English names).
``say(lang, key, **values)`` returns one of Flora's fixed sentences (pause questions,
clarifications, status answers, refusals) in ``zh`` or ``en``; a key missing in Chinese falls
back to English rather than failing. ``has_cjk``, ``cjk_chars`` and ``without_cjk`` are the one
test for Chinese characters that every reader of the person's words uses.
"""

from __future__ import annotations

import re

ZH, EN = "zh", "en"
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# addresses are names, not words of a language: "拉取一下https://example.com/data.csv" is Chinese
_ADDRESS = re.compile(r"(?<![A-Za-z0-9])(?:[a-z][a-z0-9+.-]*://|www\.)[^\s\u3000-\u303f\uff00-\uffef\u3400-\u9fff]+"
                      r"|[A-Za-z0-9.+_-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+", re.I)


def language_of(text: str, default: str = EN) -> str:
    """``zh`` when the text is (mostly) Chinese, ``en`` for other text, ``default`` for none."""
    han = len(cjk_chars(text or ""))
    words = len(_LATIN_WORD.findall(_ADDRESS.sub(" ", text or "")))
    if han == 0 and words == 0:
        return default
    # a Chinese sentence with an English product name or URL is still Chinese
    return ZH if han >= 2 and han >= words else (ZH if han and not words else EN)


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Chinese (Han) character."""
    return _HAN.search(text) is not None


def cjk_chars(text: str) -> list[str]:
    """The Chinese (Han) characters of ``text``, in order."""
    return _HAN.findall(text)


def without_cjk(text: str) -> str:
    """``text`` with each Chinese (Han) character made a space: its words in other scripts."""
    return _HAN.sub(" ", text)


def answer_in(lang: str) -> str:
    """The instruction that makes a model answer in ``lang`` (the last system message of a
    prompt: small models follow the latest instruction best)."""
    return _ANSWER_IN.get(lang, _ANSWER_IN[EN])


_ANSWER_IN = {ZH: "Always answer in Simplified Chinese (简体中文).", EN: "Always answer in English."}


def is_mostly(text: str, lang: str) -> bool:
    """Whether ``text`` reads as ``lang`` (what a wrong-language check asks)."""
    return language_of(text, default=lang) == lang


_PHRASES: dict[str, dict[str, str]] = {
    "need_parameters": {
        EN: "To {what} I need:",
        ZH: "要{what}，我还需要：",
    },
    "run_capability": {EN: "run {capability}", ZH: "运行 {capability}"},
    "do_request": {EN: "do “{request}” ({capability})", ZH: "完成「{request}」（{capability}）"},
    "not_accepted": {EN: "not accepted: {reason}", ZH: "未被接受：{reason}"},
    "reply_like": {EN: "Reply like: {example}", ZH: "可以这样回复：{example}"},
    "needs_approval": {
        EN: "Before I {what}, please confirm: {description}\nParameters: {parameters}\n"
            "Reply yes to go ahead or no to cancel.",
        ZH: "在{what}之前请确认：{description}\n参数：{parameters}\n回复“是”继续，回复“不”取消。",
    },
    "reconfirm": {EN: "You asked for this {ago} ago: “{request}”. That was a while back, so once more:",
                  ZH: "这是你 {ago}前的请求：「{request}」。时间隔得有点久，再确认一次："},
    "always_hint": {EN: "Reply “always” to allow this tool from now on without asking.",
                    ZH: "回复“总是允许”，以后使用这个工具不再询问。"},
    "which_one": {EN: "Which one do you mean? Reply with the number:",
                  ZH: "你指的是哪一个？请回复编号："},
    "not_sure": {EN: "I'm not sure which of these you mean. Reply with the number:",
                 ZH: "我不太确定你指的是哪一项，请回复编号："},
    "just_chat": {EN: "none of these — just talk", ZH: "都不是，只是聊聊"},
    # a message that may answer a waiting question or be an operation on other work: the two choices
    "option_answer": {EN: "the answer to {capability} ({task_id}), which waits for {names}",
                      ZH: "回答 {capability}（{task_id}）在等的 {names}"},
    "option_operation": {EN: "{operation} {target}", ZH: "{operation} {target}"},
    "nothing_done": {EN: "(I haven't run, scheduled or changed anything for this. Tell me plainly what to do "
                           "— e.g. “pause the weekly report” — and I will.)",
                     ZH: "（这一步我没有执行、安排或更改任何东西。请直接告诉我要做什么，比如“暂停销售周报”，我再去做。）"},
    "the_latest": {EN: "the latest task", ZH: "最近的任务"},
    "op_comment_on_task": {EN: "a note on", ZH: "给它加备注："},
    "op_revise_result": {EN: "revise", ZH: "修改结果："},
    "op_re_run_task": {EN: "run again", ZH: "重新执行"},
    "op_cancel_task": {EN: "cancel", ZH: "取消"},
    "op_list": {EN: "list the loop tasks", ZH: "列出定时任务"},
    "op_pause": {EN: "pause the loop task", ZH: "暂停定时任务"},
    "op_resume": {EN: "resume the loop task", ZH: "恢复定时任务"},
    "op_delete": {EN: "delete the loop task", ZH: "删除定时任务"},
    "op_trigger": {EN: "run the loop task now", ZH: "立即执行定时任务"},
    "op_modify": {EN: "change the loop task", ZH: "修改定时任务"},
    "unclear_reference": {
        EN: "What does “{ref}” refer to? Nothing earlier in our conversation says. Tell me what you mean "
            "(what it is, and who it is for), or reply with the number of the kind of task it is:",
        ZH: "“{ref}”指的是什么？我们之前的对话里没有提到。请告诉我具体是哪一个（是什么、给谁），"
            "或回复下面的编号选一类任务："},
    "unsupported": {
        EN: "I can't {what}: no capability for that is installed, so I won't guess an answer. "
            "What I can do: {abilities}.",
        ZH: "我没法{what}：目前没有安装能做这件事的能力，所以我不会编造答案。我能做的有：{abilities}。",
    },
    "unsupported_what": {EN: "look that up or do that for you", ZH: "帮你查询或办理这件事"},
    "offer_reminder": {EN: "If it helps, I can remind you instead: say “remind me {when} to {what}”.",
                       ZH: "需要的话我可以到时提醒你：说“{when}提醒我{what}”即可。"},
    "no_model": {
        EN: "I can't chat freely without a language model, but I can run tasks.",
        ZH: "没有语言模型时我没法自由聊天，不过我可以执行任务。",
    },
    "model_unavailable": {
        EN: "Sorry, I can't answer right now (the language model is unavailable).",
        ZH: "抱歉，我现在没法回答（语言模型不可用）。",
    },
    "abilities_intro": {EN: "Things I can do:", ZH: "我能做的事："},
    "abilities_outro": {EN: "Ask in your own words; I'll ask for anything that is missing.",
                        ZH: "直接用你自己的话说就行，缺什么我会问你。"},
    "nothing_to_continue": {EN: "There is nothing unfinished to continue.", ZH: "没有需要继续的未完成任务。"},
    "no_longer_waiting": {EN: "That task is no longer waiting for an answer.", ZH: "那个任务已经不在等待回答了。"},
    "history_cleared": {EN: "Done: I cleared our conversation history ({count} messages).",
                        ZH: "好的，我已清空我们的对话历史（{count} 条消息）。"},
    "operator_only": {
        EN: "{what} is an operator command, so I can't do it from a chat. {how}",
        ZH: "{what}是运维命令，不能在聊天里执行。{how}",
    },
    "shutdown_what": {EN: "Shutting Flora down", ZH: "关闭 Flora"},
    "shutdown_how": {EN: "An operator stops it with Ctrl-C or SIGTERM (systemctl stop / docker stop).",
                     ZH: "运维人员可以用 Ctrl-C 或 SIGTERM（systemctl stop / docker stop）停止它。"},
    "switch_model_what": {EN: "Switching the model", ZH: "切换模型"},
    "switch_model_how": {
        EN: "The model now is {current}; an operator sets llm.model (one of: {models}) in the config "
            "and restarts Flora.",
        ZH: "当前模型是 {current}；运维人员可以在配置里设置 llm.model（可选：{models}）然后重启 Flora。",
    },
    "status_title": {EN: "Here is where things stand for you:", ZH: "你目前的情况："},
    "status_tasks": {EN: "Tasks today: {today} ({summary}).", ZH: "今天的任务：{today} 个（{summary}）。"},
    "status_no_tasks": {EN: "You have no tasks yet.", ZH: "你还没有任何任务。"},
    "status_waiting": {EN: "Waiting for your answer:", ZH: "在等你回答的任务："},
    "status_running": {EN: "Running now:", ZH: "正在运行："},
    "status_loops": {EN: "Active loop tasks:", ZH: "生效中的定时任务："},
    "status_no_loops": {EN: "You have no active loop tasks.", ZH: "你没有生效中的定时任务。"},
    "status_paused_loops": {EN: "Paused loop tasks: {count}.", ZH: "已暂停的定时任务：{count} 个。"},
    "status_idle": {EN: "Nothing is running or waiting for you right now.", ZH: "现在没有正在运行或等你回答的任务。"},
    "status_total": {EN: "All time: {total} tasks ({summary}).", ZH: "累计：{total} 个任务（{summary}）。"},
    "status_model": {EN: "Model: {model}.", ZH: "模型：{model}。"},
}

_PHRASES.update({
    "task_finished": {EN: "{capability} finished.", ZH: "{capability} 已完成。"},
    "task_cancelled": {EN: "Cancelled task {task_id}.", ZH: "已取消任务 {task_id}。"},
    "task_cancelled_steps": {EN: "Cancelled task {task_id} and {count} unfinished step(s).",
                             ZH: "已取消任务 {task_id} 及其 {count} 个未完成的步骤。"},
    "loop_registered": {
        EN: "Registered loop task {loop_task_id}: {what}.\nSay \"list my loop tasks\", or pause / resume / delete / "
            "\"run {loop_task_id} now\".",
        ZH: "已登记定时任务 {loop_task_id}：{what}。\n可以说“列出我的定时任务”，或者暂停 / 恢复 / 删除 / "
            "“现在运行 {loop_task_id}”。",
    },
    "loop_list": {EN: "Your loop tasks:", ZH: "你的定时任务："},
    "comment_noted": {EN: "Noted your comment on task {task_id}.", ZH: "已记下你对任务 {task_id} 的备注。"},
    "loop_none": {EN: "You have no loop tasks.", ZH: "你还没有定时任务。"},
    "loop_Paused": {EN: "Paused {loop_task_id}: {what}", ZH: "已暂停 {loop_task_id}：{what}"},
    "loop_Resumed": {EN: "Resumed {loop_task_id}: {what}", ZH: "已恢复 {loop_task_id}：{what}"},
    "loop_Deleted": {EN: "Deleted {loop_task_id}: {what}", ZH: "已删除 {loop_task_id}：{what}"},
    "loop_Changed": {EN: "Changed {loop_task_id}: {what}", ZH: "已修改 {loop_task_id}：{what}"},
})

_PHRASES.update({
    "memory_list": {EN: "Here is what I remember about you:", ZH: "我记得关于你的这些："},
    "memory_none": {EN: "I don't remember anything about you yet. Tell me what you'd like me to keep in mind.",
                    ZH: "我还没有记住关于你的任何事。你可以告诉我希望我记住什么。"},
    "memory_forgot": {EN: "Done: I forgot {count} thing(s) about you.", ZH: "好的，我已忘掉 {count} 条关于你的记忆。"},
    # a question about the person that nothing they told Flora answers: said plainly, never guessed
    "not_told": {EN: "You haven't told me that yet, so I don't know. Tell me and I'll remember it.",
                 ZH: "你还没告诉过我这个，所以我不知道。告诉我的话，我会记住。"},
    "memory_not_found": {EN: "I don't remember anything like that about you.", ZH: "我没有记着关于你的这样的事。"},
    "memory_cleared": {EN: "Done: I forgot everything I remembered about you ({count}).",
                       ZH: "好的，关于你的 {count} 条记忆都已删除。"},
    "memory_off": {EN: "Long-term memory is turned off here (memory.enabled: false), so I keep nothing about you "
                       "between conversations.",
                   ZH: "这里关闭了长期记忆（memory.enabled: false），所以我不会在对话之间记住关于你的事。"},
    "memory_unavailable": {EN: "My memory is unavailable right now ({reason}); please try again later.",
                           ZH: "我的记忆暂时不可用（{reason}），请稍后再试。"},
})

_PHRASES.update({
    # a failure whose own words (a capability's, a library's) are in another language than the person's
    "task_failed": {EN: "That did not work: {reason}", ZH: "这件事没能完成：{reason}"},
    "waiting_hint": {EN: "(task {task_id} is waiting for your answer)", ZH: "（任务 {task_id} 正在等你的回答）"},
    "queued_hint": {EN: "(task {task_id} starts by itself; its result comes as a notification)",
                    ZH: "（任务 {task_id} 会自己开始，结果会以通知发来）"},
    # notifications: a queued task's answer, a loop run's failure or question (in the language
    # the task or the loop was asked in)
    "queued_failed": {EN: "Task {task_id} ({what}) failed: {text}", ZH: "任务 {task_id}（{what}）没能完成：{text}"},
    "queued_waiting": {EN: "Task {task_id} ({what}) is waiting for you:\n{text}",
                       ZH: "任务 {task_id}（{what}）在等你回答：\n{text}"},
    "queued_finished": {EN: "Task {task_id} ({what}) finished: {text}", ZH: "任务 {task_id}（{what}）完成了：{text}"},
    "loop_failed": {EN: "Loop task {loop_id} ({what}) failed: {text}", ZH: "循环任务 {loop_id}（{what}）这次没能完成：{text}"},
    "loop_late": {EN: "⏰ Late: this was due {due} UTC, {ago} ago.\n{text}",
                  ZH: "⏰ 迟到的通知：本应在 {due}（UTC）送达，已过去 {ago}。\n{text}"},
    "ago_minutes": {EN: "{n} min", ZH: "{n} 分钟"},
    "ago_hours": {EN: "{n} h", ZH: "{n} 小时"},
    "ago_days": {EN: "{n} days", ZH: "{n} 天"},
    "loop_waiting": {EN: "Loop task {loop_id} ({what}) is waiting for you:\n{text}",
                     ZH: "循环任务 {loop_id}（{what}）在等你回答：\n{text}"},
    # a plan's step, in the language the plan was asked in
    "plan_step": {EN: "{capability} (step {step} of {task_id})", ZH: "{capability}（计划 {task_id} 的第 {step} 步）"},
    "plan_step_waits": {EN: "Step {step} of task {task_id} needs an answer.", ZH: "计划 {task_id} 的第 {step} 步需要你回答。"},
    # an operation on "it" from someone who has no task yet
    "no_task_yet": {EN: "You have no task yet, so I can't tell what you mean by that. What would you like me to do?",
                    ZH: "你还没有任何任务，所以我不确定你指的是哪一个。你想让我做什么？"},
})

_STATES_ZH = {
    "completed": "已完成", "failed": "失败", "cancelled": "已取消", "running": "运行中",
    "waiting_parameters": "等待参数", "waiting_approval": "等待确认", "queued": "排队中",
    "created": "已创建", "planned": "已规划",
}


def say(lang: str, key: str, **values: object) -> str:
    """Flora's sentence ``key`` in ``lang`` with ``values`` filled in."""
    phrases = _PHRASES[key]
    return phrases.get(lang, phrases[EN]).format(**values)


def state_name(lang: str, state: str) -> str:
    """A task state as a person reads it."""
    return _STATES_ZH.get(state, state) if lang == ZH else state.replace("_", " ")


def join(lang: str, items: list[str]) -> str:
    return ("、" if lang == ZH else ", ").join(items)
