"""A capability's schema read from its function's hints and docstring (capabilities/signature.py)."""

from datetime import date
from enum import Enum
from typing import Annotated, Literal, Optional

import pytest

from capabilities.base import ExecutionContext, capability, spec_of
from capabilities.params import check_parameters
from capabilities.signature import derived_parameters, parameter_descriptions


def test_a_function_with_hints_and_a_google_docstring_needs_nothing_else():
    @capability
    def triangle_area(base: float, height: float = 1.0) -> float:
        """Find the area of a triangle.

        Uses half the base times the height.

        Args:
            base: the length of the base,
                measured along the ground
            height: the height from the base

        Returns:
            the area
        """
        return base * height / 2

    spec = spec_of(triangle_area)
    assert spec.name == "triangle_area"
    assert spec.description == "Find the area of a triangle."
    assert spec.parameters == {
        "type": "object", "additionalProperties": False, "required": ["base"],
        "properties": {"base": {"type": "number", "description": "the length of the base, measured along the ground"},
                       "height": {"type": "number", "description": "the height from the base", "default": 1.0}}}


def test_types_become_json_schema_types():
    class Mode(Enum):
        FAST = "fast"
        SLOW = "slow"

    def f(n: int, ok: bool, names: list[str], weights: dict[str, float], unit: Literal["c", "f"],
          mode: Mode, note: Optional[str] = None, size: Annotated[int, "how many"] = 3, when: date = None,
          *args, context=None, **kwargs):
        """Do it."""

    props = derived_parameters(f)["properties"]
    assert props["n"] == {"type": "integer"}
    assert props["ok"] == {"type": "boolean"}
    assert props["names"] == {"type": "array", "items": {"type": "string"}}
    assert props["weights"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["unit"] == {"type": "string", "enum": ["c", "f"]}
    assert props["mode"] == {"type": "string", "enum": ["fast", "slow"]}
    assert props["note"] == {"type": "string", "default": None}
    assert props["size"] == {"type": "integer", "description": "how many", "default": 3}
    assert props["when"] == {"type": "string", "format": "date", "default": None}
    assert set(props) == {"n", "ok", "names", "weights", "unit", "mode", "note", "size", "when"}
    assert derived_parameters(f)["required"] == ["n", "ok", "names", "weights", "unit", "mode"]


def test_numpy_and_rest_docstrings_are_read():
    numpy = """Sum.

    Parameters
    ----------
    a : float
        the first
        addend
    b : int
        the second

    Returns
    -------
    float
    """
    assert parameter_descriptions(numpy) == {"a": "the first addend", "b": "the second"}
    rest = """Sum.

    :param a: the first
    :param int b: the second
        addend
    :returns: the sum
    """
    assert parameter_descriptions(rest) == {"a": "the first", "b": "the second addend"}


def test_a_call_brings_json_values_that_are_turned_into_what_the_hints_ask_for():
    class Mode(Enum):
        FAST = "fast"
        SLOW = "slow"

    seen = {}

    @capability
    def plan(mode: Mode, day: date, ratio: float, tags: tuple[str, ...] = ()) -> str:
        """Plan a day."""
        seen.update(mode=mode, day=day, ratio=ratio, tags=tags)
        return "ok"

    spec = spec_of(plan)
    values = check_parameters(spec, {"mode": "slow", "day": "2025-03-01", "ratio": "2", "tags": ["a"]}).values
    assert spec.invoke(values, ExecutionContext(task_id="t", user_id="u")) == "ok"
    assert seen == {"mode": Mode.SLOW, "day": date(2025, 3, 1), "ratio": 2.0, "tags": ("a",)}
    assert isinstance(seen["ratio"], float)


def test_a_handler_taking_context_still_gets_it_and_context_is_no_parameter():
    @capability(name="whoami")
    def who(context) -> str:
        """Say who asks."""
        return context.user_id

    spec = spec_of(who)
    assert spec.parameters["properties"] == {}
    assert spec.invoke({}, ExecutionContext(task_id="t", user_id="ann")) == "ann"


def test_a_function_without_docstring_or_description_is_refused_when_loaded():
    with pytest.raises(ValueError, match="needs a description"):
        @capability
        def nameless(x: int) -> int:
            return x


def test_a_type_with_no_json_form_is_refused_naming_the_parameter():
    with pytest.raises(ValueError, match="parameter 'where'"):
        @capability
        def f(where: object) -> None:
            """Go."""


def test_a_schema_given_by_hand_is_used_as_given():
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    @capability(name="count", description="Count.", parameters=schema)
    def count(text: str, extra: int = 0) -> int:
        return len(text)

    assert spec_of(count).parameters == schema
    assert spec_of(count).handler is count
