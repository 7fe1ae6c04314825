"""The ``agent`` capability: the handler ExecutionActor runs for a request that needs tools.

It only wires the task to an :class:`~capabilities.agent.loop.AgentLoop`: the model, the
tools this task may use, the budgets and approvals from config, and where the person's
yes or answer stands. Everything it did is in the task's transcript, so a second call (on
resume) goes on where the first stopped.
"""

from __future__ import annotations

from capabilities.agent.budget import counter_for
from capabilities.agent.loop import ANSWER, NAME, AgentLoop, Approvals, Budgets, ToolBox
from capabilities.agent.selection import ToolSelector, ranker_for
from capabilities.base import CapabilityError, ExecutionContext, capability

APPROVED_CALL = "approved_call"  # ExecutionContext.meta: the call the person said yes to
ALLOWED = "allowed_capabilities"  # ExecutionContext.meta: a persona's list of the tools it may use


@capability(
    name=NAME,
    description="Works on a request that needs tools, several steps or a look at this machine or the web: "
                "decides which tool to call, runs it, reads the result and goes on until it can answer.",
    parameters={
        "type": "object",
        "properties": {
            "request": {"type": "string", "description": "what to do (default: the words of the task)"},
            ANSWER: {"type": "string", "description": "the answer to the agent's question",
                     "x-flora-description": {"zh": "对助手问题的回答"}},
        },
        "x-flora-description": {"zh": "处理需要工具或多个步骤的请求：决定调用哪个工具、运行它、读取结果，直到能够回答。"},
    },
    # words that only a look at this machine, a script or a live source can answer; "summarise" alone
    # is not one (a text given in the message is the chat's to summarise), a page to summarise is
    keywords=("disk space", "free space", "run a script", "write a script", "list the files", "which files",
              "the time in", "time is it in", "use your tools", "summarise http", "summarise https",
              "summarize http", "summarize https",
              "磁盘空间", "硬盘空间", "写个脚本", "写一个脚本", "运行脚本", "哪些文件", "这个目录", "现在几点", "用工具"),
    examples=("how much disk space is left here?", "帮我看看这个目录里有哪些文件",
              "write a script that renames these photos and run it", "summarise https://example.org/page",
              "what's the time in Tokyo?", "what does todo.md in my workspace say about the deadline?",
              "看看 report.txt 里写的负责人是谁", "use python to work out the md5 of my name"),
    reads_memories=True,
)
def agent(context: ExecutionContext, request: str = "", answer: str | None = None) -> dict:
    request = (request or "").strip() or context.request.strip()
    if not request:
        raise CapabilityError("There is nothing to do: the request is empty.", error_type="invalid_parameter")
    settings = context.config.agent if context.config is not None else None
    if settings is not None and not settings.enabled:
        raise CapabilityError("The agent is switched off (agent.enabled).", error_type="unavailable")
    allowed = context.meta.get(ALLOWED)
    tools = ToolBox.from_registry(context.registry, configured=settings.tools if settings is not None else None,
                    allowed=list(allowed) if isinstance(allowed, (list, tuple)) else None)
    auto = set(context.config.capabilities.auto_approve) if context.config is not None else set()
    store = context.store
    approvals = Approvals(auto, (lambda: store.allowed_tools(context.tenant_id, context.user_id))
                          if store is not None else set)
    config = context.config
    n_ctx = config.llm.n_ctx if config is not None else Budgets.n_ctx
    loop = AgentLoop(llm=context.llm, tools=tools, context=context, approvals=approvals,
                     budgets=Budgets.from_config(settings, n_ctx) if settings is not None else Budgets(n_ctx=n_ctx),
                     selector=ToolSelector(ranker_for(config), settings.max_tools if settings is not None else 6),
                     counter=counter_for(config) if config is not None else None)
    if context.llm is None:
        raise CapabilityError("The agent needs a model and none is configured.", error_type="unavailable")
    return loop.run(request, approved_call=context.meta.get(APPROVED_CALL), answer=answer)
