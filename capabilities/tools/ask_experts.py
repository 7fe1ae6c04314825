"""The ``ask_experts`` capability: put a question to the configured panel of experts.

The panel (``capabilities.cognition.experts.ExpertPanel``) uses the task's model
(``context.llm``) and the ``experts`` section of the configuration; the strategy is the
configured one unless the request names another. The experts read the task's whiteboard (its
plan's, for a plan's step), and the panel's answer is written on it as a decision. Without a model the task fails with a
sentence that says so, rather than pretending to have asked anyone.
"""

from __future__ import annotations

from capabilities.aggregation.result_aggregator import ResultAggregator
from capabilities.base import CapabilityError, ExecutionContext, capability
from capabilities.cognition.experts import STRATEGIES, ExpertPanel, ExpertPanelError, NoModelError
from capabilities.memory.whiteboard import Whiteboard, render, task_board
from common.i18n import language_of
from config import ExpertsConfig

PARAMETERS = {
    "x-flora-description": {"zh": "请一组专家角色回答一个问题（可以辩论），再把他们的回答合成一个"},
    "type": "object",
    "properties": {
        "question": {
            "type": "string",
            "minLength": 1,
            "description": "The question to put to the panel of experts.",
            "x-flora-description": {"zh": "要请专家们讨论的问题"},
            "x-flora-request-text": True,  # "ask the experts: <question>" gives it
        },
        "strategy": {
            "type": "string",
            "enum": list(STRATEGIES),
            "description": "How their answers become one: summary (they debate, then one summary), voting "
                           "(the most common answer), weighted (answers count by each expert's weight) or "
                           "map_reduce (each part of the question goes to one expert). Leave it out for the "
                           "configured strategy.",
        },
    },
    "required": ["question"],
    "additionalProperties": False,
}


@capability(
    name="ask_experts",
    asked_for_by_name=True,  # "租房选近的还是便宜的，纠结死了" is a dilemma to talk over
    description="Ask a panel of expert personas a question; they answer (and debate), and one answer is "
                "made from theirs by summary, voting, weights or map-reduce over the question's parts.",
    parameters=PARAMETERS,
    keywords=("experts", "expert panel", "ask the experts", "panel of experts", "debate",
              "expert opinion", "expert opinions", "expert views", "专家意见",
              "several opinions", "multiple opinions", "a few opinions", "several perspectives",
              "专家", "专家们", "讨论一下", "辩论", "会诊", "多方意见", "几方意见", "多听几个意见", "几个人的意见"),
    examples=("ask the experts whether we should move the service to Rust",
              "让专家们讨论一下远程办公的利弊"),
)
def ask_experts(question: str, context: ExecutionContext, strategy: str | None = None) -> dict:
    if context.llm is None:
        raise CapabilityError("Asking the experts needs a language model, and none is configured "
                              "(llm.backend is 'none'); set llm.backend to local or openai.",
                              error_type="unavailable")
    settings = getattr(context.config, "experts", None) or ExpertsConfig()
    panel = ExpertPanel(context.llm, ResultAggregator(context.llm), settings)
    board_id = task_board(context.store, context.tenant_id, context.task_id) if context.store else None
    shared = render(context.store.whiteboard(context.tenant_id, board_id), language_of(question)) if board_id else ""
    try:
        answer = panel.ask(question, strategy, shared=shared)
    except NoModelError as exc:
        raise CapabilityError(str(exc), error_type="unavailable") from exc
    except ExpertPanelError as exc:
        raise CapabilityError(str(exc), retryable=True, error_type="capability_failed") from exc
    context.logger.info("experts answered task_id=%s strategy=%s opinions=%d", context.task_id,
                        answer.strategy, len(answer.opinions))
    if board_id:  # what the panel concluded is a decision the plan's later steps read
        Whiteboard(context.store, context.events).write(
            context.tenant_id, board_id, decisions=[f"Experts on \"{question}\": {answer.answer}"],
            author=f"ask_experts:{context.task_id}", user_id=context.user_id)
    return {"message": _message(answer), **answer.to_dict()}


def _message(answer) -> str:
    """The answer as the user reads it, with the count behind a vote."""
    counts = answer.detail.get("votes") if answer.strategy == "voting" else answer.detail.get("scores")
    if not counts or answer.strategy not in ("voting", "weighted"):
        return answer.answer
    tally = ", ".join(f"{choice}: {count:g}" for choice, count in counts.items())
    return f"{answer.answer}\n({answer.strategy}: {tally})"
