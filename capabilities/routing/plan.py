"""A plan: the subtasks one request becomes, their dependencies, and how their results combine.

A plan travels as JSON (in the task's result, in events, from the model), so its shape is
one JSON schema, :data:`PLAN_SCHEMA`, which is also the schema a model's reply is
constrained to::

    {"steps": [{"id": "s1", "capability": "http_request", "parameters": {"url": "https://..."},
                "depends_on": [], "description": "fetch last month's sales", "kind": "leaf"},
               {"id": "s2", "capability": "data_query", "parameters": {"sql": "..."},
                "depends_on": ["s1"], "description": "...", "kind": "leaf"}],
     "aggregation": {"strategy": "concat"},
     "source": "rules"}

A step's parameters may refer to other steps' results (``${s1.result.rows[0]}``, see
:mod:`capabilities.routing.context_resolver`); every step a step refers to is one it depends
on, so ``depends_on`` always holds those, whether the plan was built in code or read from
JSON. Dependencies may form cycles: such strongly coupled steps are planned and run
together (:mod:`capabilities.routing.plan_graph`).

Exceptions::

    PlanError (ValueError)   the plan is malformed; the message starts with the field,
                             e.g. "steps[2].depends_on: unknown step 's9'"
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from capabilities.routing.context_resolver import STEP_ID, ContextResolver

STEP_KINDS = ("leaf", "workflow", "intermediate")
AGGREGATION_STRATEGIES = ("concat", "map_reduce", "voting", "weighted")
PLAN_SOURCES = ("llm", "rules", "template")
DEFAULT_AGGREGATION = {"strategy": "concat"}

_ID = re.compile(rf"^{STEP_ID}$")
_resolver = ContextResolver()

PLAN_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Plan",
    "type": "object",
    "properties": {
        "steps": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "pattern": _ID.pattern,
                           "description": "Unique in the plan: s1, s2, ..."},
                    "capability": {"type": "string", "minLength": 1,
                                   "description": "The name of the capability that does this step."},
                    "parameters": {"type": "object",
                                   "description": "Values for the capability; '${s1.result}' or "
                                                  "'${s1.result.items[0].name}' stands for another step's result."},
                    "depends_on": {"type": "array", "items": {"type": "string", "pattern": _ID.pattern},
                                   "uniqueItems": True,
                                   "description": "Steps whose results this step needs first."},
                    "description": {"type": "string"},
                    "kind": {"enum": list(STEP_KINDS)},
                },
                "required": ["id", "capability", "parameters"],
                "additionalProperties": False,
            },
        },
        "aggregation": {
            "type": "object",
            "properties": {"strategy": {"enum": list(AGGREGATION_STRATEGIES)}},
            "required": ["strategy"],
        },
        "source": {"enum": list(PLAN_SOURCES)},
    },
    "required": ["steps"],
    "additionalProperties": False,
}
jsonschema.Draft202012Validator.check_schema(PLAN_SCHEMA)
_VALIDATOR = jsonschema.Draft202012Validator(PLAN_SCHEMA)


class PlanError(ValueError):
    """A malformed plan; the message names the field."""


@dataclass(frozen=True)
class PlanStep:
    id: str
    capability: str
    parameters: dict
    depends_on: tuple[str, ...] = ()
    description: str = ""
    kind: str = "leaf"

    def __post_init__(self) -> None:
        # explicit dependencies first, in the order given, then those the references imply
        explicit = tuple(dict.fromkeys(self.depends_on))
        implied = sorted(_resolver.references(self.parameters) - set(explicit)) \
            if isinstance(self.parameters, dict) else []
        object.__setattr__(self, "depends_on", explicit + tuple(implied))

    @property
    def self_loop(self) -> bool:
        """The step refers to its own earlier result (it is refined over rounds)."""
        return self.id in self.depends_on

    def to_dict(self) -> dict:
        return {"id": self.id, "capability": self.capability, "parameters": copy.deepcopy(self.parameters),
                "depends_on": list(self.depends_on), "description": self.description, "kind": self.kind}


@dataclass(frozen=True)
class Plan:
    steps: tuple[PlanStep, ...]
    aggregation: dict = field(default_factory=lambda: dict(DEFAULT_AGGREGATION))
    source: str = "rules"

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", tuple(self.steps))
        _check(self)

    def step(self, step_id: str) -> PlanStep:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)

    @property
    def step_ids(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.steps)

    def to_dict(self) -> dict:
        """JSON; ``Plan.from_dict(plan.to_dict()) == plan``."""
        return {"steps": [s.to_dict() for s in self.steps], "aggregation": copy.deepcopy(self.aggregation),
                "source": self.source}

    @classmethod
    def from_dict(cls, data: Any, *, max_steps: int | None = None) -> "Plan":
        """Validate ``data`` against PLAN_SCHEMA, then ids, dependencies and references."""
        if not isinstance(data, dict):
            raise PlanError(f"(root): a plan is a JSON object, not {type(data).__name__}")
        error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(data))
        if error is not None:
            raise PlanError(f"{_where(error.absolute_path)}: {error.message}")
        if max_steps is not None and len(data["steps"]) > max_steps:
            raise PlanError(f"steps: {len(data['steps'])} steps, more than the {max_steps} allowed")
        steps = tuple(PlanStep(id=s["id"], capability=s["capability"], parameters=copy.deepcopy(s["parameters"]),
                               depends_on=tuple(s.get("depends_on", ())), description=s.get("description", ""),
                               kind=s.get("kind", "leaf"))
                      for s in data["steps"])
        return cls(steps, copy.deepcopy(data.get("aggregation", DEFAULT_AGGREGATION)), data.get("source", "rules"))


def _check(plan: Plan) -> None:
    """What the schema cannot say, and what a plan built in code must also obey."""
    if not plan.steps:
        raise PlanError("steps: a plan has at least one step")
    ids: dict[str, int] = {}
    for i, step in enumerate(plan.steps):
        where = f"steps[{i}]"
        if not isinstance(step, PlanStep):
            raise PlanError(f"{where}: not a PlanStep ({type(step).__name__})")
        if not isinstance(step.id, str) or not _ID.match(step.id):
            raise PlanError(f"{where}.id: {step.id!r} is not 1 to 32 letters, digits, '_' or '-'")
        if step.id in ids:
            raise PlanError(f"{where}.id: {step.id!r} is already the id of steps[{ids[step.id]}]")
        ids[step.id] = i
        if not isinstance(step.capability, str) or not step.capability:
            raise PlanError(f"{where}.capability: a capability name is required")
        if not isinstance(step.parameters, dict):
            raise PlanError(f"{where}.parameters: must be an object, not {type(step.parameters).__name__}")
        if step.kind not in STEP_KINDS:
            raise PlanError(f"{where}.kind: {step.kind!r} is not one of {', '.join(STEP_KINDS)}")
        for place, text in _resolver.malformed(step.parameters):
            raise PlanError(f"{where}.{place}: {text!r} is not a reference; write ${{<step>.result}} "
                            "or ${<step>.result.<key>[<n>]}")
    for i, step in enumerate(plan.steps):
        for dep in step.depends_on:
            if dep not in ids:
                field_name = "parameters" if dep in _resolver.references(step.parameters) else "depends_on"
                raise PlanError(f"steps[{i}].{field_name}: unknown step {dep!r}")
    if not isinstance(plan.aggregation, dict) or plan.aggregation.get("strategy") not in AGGREGATION_STRATEGIES:
        got = plan.aggregation.get("strategy") if isinstance(plan.aggregation, dict) else plan.aggregation
        raise PlanError(f"aggregation.strategy: {got!r} is not one of {', '.join(AGGREGATION_STRATEGIES)}")
    if plan.source not in PLAN_SOURCES:
        raise PlanError(f"source: {plan.source!r} is not one of {', '.join(PLAN_SOURCES)}")


def _where(path) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(root)"
