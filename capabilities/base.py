"""What an executable capability is, and the decorator that declares one.

An executable capability is a named function with a JSON-schema for its parameters.
ExecutionActor checks the parameters it has against that schema before it runs the
function: anything required and missing pauses the task and the user is asked for it.

Exceptions::

    CapabilityError            a capability could not do its work (shown to the user)
    └── CapabilityInputError   the parameters were accepted by the schema but are still
                               unusable (bad URL, rejected key): the user is asked again

    TaskPause                  not a failure: the capability cannot go on without the person;
    │                          the task pauses and the handler runs again on the answer
    ├── ApprovalRequired       one call of a tool needs the person's yes first
    └── InputRequired          a value only the person can give (a question to put to them)
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

CAPABILITY_ATTR = "__flora_capability__"


class CapabilityError(Exception):
    """A capability failed; ``retryable`` says whether trying again may help."""

    def __init__(self, message: str, *, retryable: bool = False, error_type: str = "capability_failed"):
        super().__init__(message)
        self.retryable = retryable
        self.error_type = error_type


class CapabilityInputError(CapabilityError):
    """A parameter value was refused by the outside world; ask the user again for it."""

    def __init__(self, parameter: str, message: str):
        super().__init__(message, error_type="invalid_parameter")
        self.parameter = parameter


class TaskPause(Exception):
    """A capability stops for the person (not a failure). The handler must be re-entrant: it
    keeps what it did with the task (the store) and is called again once the person answers."""


class ApprovalRequired(TaskPause):
    """``tool`` is to be called with ``arguments`` and that needs the person's yes.
    ``call_id`` names this one call: the yes is for it, and the next call asks again."""

    def __init__(self, tool: str, arguments: dict, call_id: str, description: str = ""):
        super().__init__(f"{tool} needs approval")
        self.tool, self.arguments, self.call_id, self.description = tool, dict(arguments), call_id, description


class InputRequired(TaskPause):
    """Only the person can say: the task asks ``question`` and waits; the answer comes back
    to the handler as the parameter ``parameter``."""

    def __init__(self, parameter: str, question: str):
        super().__init__(question)
        self.parameter, self.question = parameter, question


@dataclass
class ExecutionContext:
    """What a running capability may know about the task it serves.

    A handler receives it when it declares a parameter named ``context``.
    ``settings`` is the capability's own section of the configuration
    (``capabilities.settings.<name>``), ``config`` the whole typed config, ``registry``
    the process's CapabilityRegistry (for services such as ``data_access``).
    ``instruction`` is what the user added when asking for a revision ("shorter, in
    French"); a capability that writes text should honour it and declare
    ``reads_instruction``; for any other, the instruction is applied to its parameters before
    it runs (:mod:`capabilities.revision`). A long-running capability
    checks ``cancelled()`` now and then and stops (raising ``CapabilityError`` with
    ``error_type="cancelled"``) once the user cancelled its task.
    """

    task_id: str
    user_id: str
    tenant_id: str = "default"
    config: Any = None
    settings: dict = field(default_factory=dict)
    llm: Any = None
    registry: Any = None
    meta: dict = field(default_factory=dict)  # about the task: {"loop_task_id": ...} for a loop run
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("flora.capability"))
    instruction: str = ""
    store: Any = None  # the TaskStore, for cancelled(); None outside a running Flora
    events: Any = None  # the EventBus; None outside a running Flora
    request: str = ""

    def cancelled(self) -> bool:
        """Whether the task was cancelled meanwhile (read from the store: the cancel may come
        from another process). False when there is no store to ask."""
        if self.store is None:
            return False
        task = self.store.get_task(self.tenant_id, self.task_id)
        return task is not None and task.state == "cancelled"


# JSON-schema keyword for a description in other languages, on the parameters schema (the
# capability) or on one parameter: {"zh": "…"}; Flora uses it when it speaks that language
DESCRIPTION_IN = "x-flora-description"


def described(schema: dict, default: str, language: str) -> str:
    """``schema``'s description in ``language`` if it has one, else ``default``."""
    translated = schema.get(DESCRIPTION_IN)
    return translated.get(language) or default if isinstance(translated, dict) else default


@dataclass(frozen=True)
class CapabilitySpec:
    """A registered executable capability.

    ``parameters`` is a JSON schema of type object. ``keywords`` help the rule-based
    router when no model is available. ``needs_approval`` pauses the task for an explicit
    yes before the handler runs (unless the tool is auto-approved in config): always when
    True, or when a function of the parameters says so (a change rather than a read).
    """

    name: str
    description: str
    parameters: dict
    handler: Callable[..., Any]
    keywords: tuple[str, ...] = ()
    needs_approval: bool | Callable[[dict], bool] = False
    routable: bool = True  # False: run only when Flora itself asks (chat replies, help)
    examples: tuple[str, ...] = ()  # sample requests; they teach the model router this capability
    reads_instruction: bool = False  # True: it honours ExecutionContext.instruction itself
    agent_tool: bool | None = None  # offered to the agent loop as a tool; None: when it is routable
    # how much a web address in a request counts toward this capability when it takes one
    # (a ``url`` parameter): the rule router adds it for "post the result to https://…"
    address_evidence: float = 2.0
    # ...and where every address in the request looks like a page to read (an article, a blog
    # post: answers.page_like) rather than an endpoint; None: as any address
    page_evidence: float | None = None
    # True: it answers what chat could answer too (the expert panel), so it runs only when the
    # words ask for it by its keywords, never on the model's reading alone
    asked_for_by_name: bool = False
    # the agent loop asks the person's yes before a call of it when this says so for the call's
    # arguments and the person's request (True: always): a call that sends data out or changes
    # something, which words planted in what the model read could cause
    agent_approval: bool | Callable[[dict, str], bool] = False
    # checks a call's values before anyone is asked to approve it (the command policy, a
    # script's syntax): raises CapabilityError / CapabilityInputError with the reason
    precheck: Callable[[dict, "ExecutionContext"], None] | None = None
    # True: it reads what is remembered of the person (``ExecutionContext.meta["memories"]``: the
    # agent loop's prompt), so a request that names it still recalls them before it is routed
    reads_memories: bool = False
    # puts a call's values as the model wrote them into the form the tool runs (a script written
    # on one line with ';' before a compound statement, split into lines), before they are checked
    # or shown for approval; returns new values, never changes their meaning
    prepare: Callable[[dict], dict] | None = None

    @property
    def offered_to_agent(self) -> bool:
        return self.routable if self.agent_tool is None else self.agent_tool

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").replace(".", "").isalnum():
            raise ValueError(f"capability name {self.name!r} must be letters, digits, '_' or '.'")
        if self.parameters.get("type") != "object":
            raise ValueError(f"capability {self.name!r}: parameters must be a JSON schema of type object")
        try:
            Draft202012Validator.check_schema(self.parameters)
        except SchemaError as exc:
            raise ValueError(f"capability {self.name!r}: invalid parameter schema: {exc.message}") from exc

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required", []))

    @property
    def properties(self) -> dict[str, dict]:
        return dict(self.parameters.get("properties", {}))

    def approval_needed(self, parameters: dict) -> bool:
        """Whether running with these parameters needs the person's yes first."""
        return bool(self.needs_approval(parameters)) if callable(self.needs_approval) else self.needs_approval

    def agent_approval_needed(self, parameters: dict, request: str = "") -> bool:
        """Whether the agent loop asks the person before this call (beside ``approval_needed``)."""
        return bool(self.agent_approval(parameters, request)) if callable(self.agent_approval) \
            else self.agent_approval

    def check_before_approval(self, parameters: dict, context: "ExecutionContext") -> None:
        """The capability's own check of these values (``precheck``), run before any approval
        question: what it would refuse is refused now, never offered to the person."""
        if self.precheck is not None:
            self.precheck(parameters, context)

    def prepared(self, parameters: dict) -> dict:
        """The values in the form the tool runs them (``prepare``); the same values without one."""
        return self.prepare(dict(parameters)) if self.prepare is not None else parameters

    def describe_parameter(self, name: str) -> str:
        schema = self.properties.get(name, {})
        return schema.get("description") or schema.get("title") or name

    def describe(self, language: str = "en") -> str:
        """What the capability does, in ``language`` where it says so."""
        return described(self.parameters, self.description, language)

    def invoke(self, parameters: dict, context: ExecutionContext) -> Any:
        """Call the handler with the parameters as keyword arguments (plus ``context``).

        A revision (``context.instruction``) is applied first: to the parameters, unless the
        capability reads the instruction itself; a dict result then says what changed. A
        result larger than MAX_RESULT_BYTES is refused (``CapabilityError``, ``too_large``): it
        would travel between actor processes, into the task store and to the user whole,
        several copies of it at once."""
        revision = None
        if context.instruction:
            from capabilities.revision import Revision, revise_parameters

            revision = (Revision(context.instruction, dict(parameters), passed_on=True) if self.reads_instruction
                        else revise_parameters(self, parameters, context.instruction, context.llm))
            parameters = revision.parameters
        kwargs = dict(parameters)
        if _accepts_context(self.handler):
            kwargs["context"] = context
        result = self.handler(**kwargs)
        result = revision.told(result) if revision is not None else result
        size = _size_over(result, MAX_RESULT_BYTES)
        if size > MAX_RESULT_BYTES:
            raise CapabilityError(
                f"{self.name} returned more than {MAX_RESULT_BYTES // (1024 * 1024)} MB, the most a result may hold; "
                "ask for less (a filter, a limit, a summary) or have the capability write it to a file and return "
                "where", error_type="too_large")
        return result

    def summary(self) -> dict:
        """JSON view for prompts, listings and the HTTP API."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters,
                "needs_approval": "depends on the parameters" if callable(self.needs_approval)
                else self.needs_approval}


MAX_RESULT_BYTES = 8 * 1024 * 1024


def _size_over(value: Any, limit: int) -> int:
    """About how many bytes ``value`` takes as JSON, counting only until ``limit`` is passed."""
    total, todo = 0, [value]
    while todo and total <= limit:
        item = todo.pop()
        if isinstance(item, (str, bytes, bytearray)):
            total += len(item) + 2
        elif isinstance(item, dict):
            total += 2 + 4 * len(item)
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            total += 2 + len(item)
            todo.extend(item)
        else:
            total += 8
    return total


def _accepts_context(fn: Callable[..., Any]) -> bool:
    try:
        return "context" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def capability(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict | None = None,
    keywords: tuple[str, ...] | list[str] = (),
    needs_approval: bool | Callable[[dict], bool] = False,
    routable: bool = True,
    examples: tuple[str, ...] | list[str] = (),
    reads_instruction: bool = False,
    agent_tool: bool | None = None,
    address_evidence: float = 2.0,
    page_evidence: float | None = None,
    asked_for_by_name: bool = False,
    agent_approval: bool | Callable[[dict, str], bool] = False,
    precheck: Callable[[dict, ExecutionContext], None] | None = None,
    reads_memories: bool = False,
    prepare: Callable[[dict], dict] | None = None,
) -> Any:
    """Mark a function as an executable capability (``@capability`` or ``@capability(...)``).

    What is not given is read from the function (:mod:`capabilities.signature`): the name from
    its name, the description from its docstring's first paragraph, the parameter schema from
    its type hints and the docstring's ``Args:`` — and then the JSON values of a call are
    turned into what the hints ask for (an Enum member, a date) before it runs. The decorator
    only attaches a :class:`CapabilitySpec` to the function; nothing is registered until a
    registry loads the module (``CapabilityRegistry.register_module``), so importing a plugin
    module has no global side effect.
    """

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        from capabilities import signature

        said = description or signature.derived_description(fn)
        if not said:
            raise ValueError(f"capability {name or fn.__name__!r} needs a description: give one or write a docstring")
        spec = CapabilitySpec(
            name=name or fn.__name__,
            description=said,
            parameters=parameters or signature.derived_parameters(fn),
            handler=fn if parameters else signature.converting(fn),
            keywords=tuple(keywords),
            needs_approval=needs_approval,
            routable=routable,
            examples=tuple(examples),
            reads_instruction=reads_instruction,
            agent_tool=agent_tool,
            address_evidence=address_evidence,
            page_evidence=page_evidence,
            asked_for_by_name=asked_for_by_name,
            agent_approval=agent_approval,
            precheck=precheck,
            reads_memories=reads_memories,
            prepare=prepare,
        )
        setattr(fn, CAPABILITY_ATTR, spec)
        return fn

    return mark(fn) if fn is not None else mark


def spec_of(obj: Any) -> CapabilitySpec | None:
    """The spec a decorated function carries, or the spec itself, or None."""
    if isinstance(obj, CapabilitySpec):
        return obj
    return getattr(obj, CAPABILITY_ATTR, None)
