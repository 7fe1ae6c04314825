"""A capability that needs one parameter, so a task can be held paused and resumed with no
model involved (bench/pause_resume.py)."""

from capabilities.base import capability


@capability(name="hold", description="Echo a value once it is given.", keywords=("hold",),
            parameters={"type": "object", "properties": {"value": {"type": "string", "description": "any text"}},
                        "required": ["value"]})
def hold(value: str) -> dict:
    return {"value": value}
