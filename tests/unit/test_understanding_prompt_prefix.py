"""Installing a capability changes only the end of the understanding step's and the planner's
prompts: everything before the capability list is the same, so the model host keeps it evaluated."""

from __future__ import annotations

from dataclasses import dataclass, field

from capabilities.cognition.understanding_prompt import CAPABILITIES_INTRO, INSTALLED_INTRO, prompt
from capabilities.routing.task_planner import _prompt as plan_prompt


def builtin_handler(**_):
    """A handler of Flora's own (its module is under capabilities.)."""


builtin_handler.__module__ = "capabilities.tools.stand_in"


def skill_handler(**_):
    """A handler of a skill (its module is the skill file's)."""


@dataclass
class Spec:
    name: str
    description: str
    examples: list[str] = field(default_factory=list)
    properties: dict = field(default_factory=dict)
    required: tuple = ()
    handler: object = builtin_handler


BEFORE = [Spec("sql_query", "Query the sales database", ["how many orders today?", "今天有多少订单"]),
          Spec("web_fetch", "Fetch a web page", ["fetch https://example.com"])]
OLD_SKILL = Spec("weather_at_home", "The weather at the person's home station", ["what's it like outside?"],
                 handler=skill_handler)
SKILL = Spec("triangle_area", "Area of a triangle from its base and height", ["area of a triangle base 3 height 4"],
             {"base": {"type": "number"}, "height": {"type": "number"}}, ("base", "height"), skill_handler)


def shared(a: list[dict], b: list[dict]) -> int:
    """How many leading messages two prompts share, word for word."""
    count = 0
    for x, y in zip(a, b):
        if x != y:
            break
        count += 1
    return count


def test_a_new_skill_changes_the_understanding_prompt_only_from_the_installed_capabilities_on():
    # routable() puts a deployment's own capabilities first; the prompt puts Flora's own first
    old, new = prompt([OLD_SKILL, *BEFORE], "hello"), prompt([SKILL, OLD_SKILL, *BEFORE], "hello")
    own = next(i for i, m in enumerate(new) if m["content"].startswith(CAPABILITIES_INTRO))
    installed = next(i for i, m in enumerate(new) if m["content"].startswith(INSTALLED_INTRO))
    assert shared(old, new) == installed  # the instructions, the fixed examples and Flora's own come first
    assert own > 20 and all("sql_query" not in m["content"] for m in new[:own])
    assert "- sql_query: Query the sales database" in new[own]["content"] and own < installed
    assert new[installed]["content"].split("\n")[1:] == ["- triangle_area: Area of a triangle from its base and height",
                                                         "- weather_at_home: The weather at the person's home station"]
    assert new[-1]["content"] == "Message: hello"
    first_skill = prompt([SKILL, *BEFORE], "hello")
    assert shared(prompt(BEFORE, "hello"), first_skill) == installed  # the first skill: the same
    none = prompt([], "hello")
    assert shared(none, new) == own and "(none installed)" in none[own]["content"]


def test_a_new_skill_changes_the_planners_prompt_only_at_its_end():
    old, new = plan_prompt(BEFORE, "do this then that"), plan_prompt([SKILL, *BEFORE], "do this then that")
    fixed = old[0]["content"][:old[0]["content"].index("Capabilities:\n")]
    assert new[0]["content"].startswith(fixed + "Capabilities:\n- sql_query")
    assert new[0]["content"].endswith("- triangle_area: Area of a triangle from its base and height "
                                      "Parameters: base (required), height (required).")
