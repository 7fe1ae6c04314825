"""Applying a revision's instruction ("in celsius", "use euros") to a capability's parameters.

When a user asks to revise a task, the task runs again with the instruction recorded. A
capability that reads the instruction itself (``reads_instruction``: it writes text and can
honour "shorter, in French") gets it as ``ExecutionContext.instruction`` and its parameters
unchanged. For any other capability the instruction can only change what runs through its
parameters: the model is asked once, constrained by the capability's own parameter schema,
for the values to run with now, given the old ones and the instruction. Its answer counts
only if the old values with the proposed ones on top still satisfy the schema; without a
model, or when it fails or answers something unusable, the old values run.

The reply then says what was changed (or that nothing was).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from capabilities.llm.base import LLMError, complete_json
from common.messages import preview

log = logging.getLogger("flora.revision")

SCHEMA_TITLE = "Revised parameters"
PROMPT = ("The capability {name} ({description}) ran with these parameters:\n{old}\n"
          "The user asked to revise the result: \"{instruction}\".\n"
          "Give the parameters to run it with now, as one JSON object. Change only what the instruction "
          "asks for and keep every other value exactly as it was.")


@dataclass
class Revision:
    instruction: str
    parameters: dict
    changes: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # name -> (old, new)
    passed_on: bool = False  # the capability reads the instruction itself

    def told(self, result: Any) -> Any:
        """``result`` with a ``message`` saying what the revision changed (dict results only:
        any other result is left as it is)."""
        if not isinstance(result, dict):
            return result
        said = "; ".join(line.strip() for line in self.instruction.splitlines() if line.strip())
        if self.passed_on:
            note = f"Revised as asked (\"{said}\")."
        elif self.changes:
            note = f"Revised as asked (\"{said}\"): " + ", ".join(
                f"{name}: {_show(old)} → {_show(new)}" for name, (old, new) in self.changes.items()) + "."
        else:
            note = f"Ran it again; \"{said}\" changed none of its parameters."
        shown = {k: v for k, v in result.items() if k != "message"}
        body = result["message"] if isinstance(result.get("message"), str) else preview(shown)
        return {**result, "message": f"{note}\n{body}"}


def revise_parameters(spec, parameters: dict, instruction: str, llm) -> Revision:
    """The parameters to run ``spec`` with after ``instruction``; the old ones when the model
    cannot say."""
    kept = Revision(instruction, dict(parameters))
    if llm is None or not spec.properties:
        return kept
    prompt = PROMPT.format(name=spec.name, description=spec.description, instruction=instruction,
                           old=json.dumps(parameters, ensure_ascii=False, default=str))
    try:
        proposed = complete_json(llm, [{"role": "user", "content": prompt}],
                                 {**spec.parameters, "title": SCHEMA_TITLE}, max_tokens=256)
    except LLMError as exc:
        log.warning("revision of %s: the model did not answer usably (%s); the old parameters run", spec.name, exc)
        return kept
    merged = {**parameters, **{k: v for k, v in proposed.items() if k in spec.properties}}
    problem = next(iter(Draft202012Validator(spec.parameters).iter_errors(merged)), None)
    if problem is not None:
        log.warning("revision of %s: proposed parameters refused (%s); the old parameters run", spec.name,
                    problem.message)
        return kept
    changes = {name: (parameters.get(name), value) for name, value in merged.items()
               if parameters.get(name) != value}
    log.info("revision of %s: changed %s", spec.name, sorted(changes))
    return Revision(instruction, merged, changes)


def _show(value: Any) -> str:
    return "(none)" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
