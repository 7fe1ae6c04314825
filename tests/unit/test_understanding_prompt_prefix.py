"""Installing a capability changes only the end of the understanding step's and the planner's
prompts: everything before the capability list is the same, so the model host keeps it evaluated."""

from __future__ import annotations

from dataclasses import dataclass, field

from capabilities.cognition.understanding_prompt import CAPABILITIES_INTRO, prompt
from capabilities.routing.task_planner import _prompt as plan_prompt


@dataclass
class Spec:
    name: str
    description: str
    examples: list[str] = field(default_factory=list)
    properties: dict = field(default_factory=dict)
    required: tuple = ()


BEFORE = [Spec("sql_query", "Query the sales database", ["how many orders today?", "今天有多少订单"]),
          Spec("web_fetch", "Fetch a web page", ["fetch https://example.com"])]
SKILL = Spec("triangle_area", "Area of a triangle from its base and height", ["area of a triangle base 3 height 4"],
             {"base": {"type": "number"}, "height": {"type": "number"}}, ("base", "height"))


def shared(a: list[dict], b: list[dict]) -> int:
    """How many leading messages two prompts share, word for word."""
    count = 0
    for x, y in zip(a, b):
        if x != y:
            break
        count += 1
    return count


def test_a_new_skill_changes_the_understanding_prompt_only_from_the_capability_list_on():
    old, new = prompt(BEFORE, "hello"), prompt([*BEFORE, SKILL], "hello")
    first_list = next(i for i, m in enumerate(new) if m["content"].startswith(CAPABILITIES_INTRO))
    assert shared(old, new) == first_list  # the instructions and every fixed example come before it
    assert first_list > 20 and all("sql_query" not in m["content"] for m in new[:first_list])
    assert "- triangle_area: Area of a triangle" in new[first_list]["content"]
    assert new[-1]["content"] == "Message: hello"
    none = prompt([], "hello")
    assert shared(none, new) == first_list and "(none installed)" in none[first_list]["content"]


def test_a_new_skill_changes_the_planners_prompt_only_at_its_end():
    old, new = plan_prompt(BEFORE, "do this then that"), plan_prompt([*BEFORE, SKILL], "do this then that")
    fixed = old[0]["content"][:old[0]["content"].index("Capabilities:\n")]
    assert new[0]["content"].startswith(fixed + "Capabilities:\n- sql_query")
    assert new[0]["content"].endswith("- triangle_area: Area of a triangle from its base and height "
                                      "Parameters: base (required), height (required).")
