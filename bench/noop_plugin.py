"""A capability that does nothing, so the benchmark measures Flora rather than the work."""

from capabilities.base import capability


@capability(name="noop", description="Do nothing and say so.", keywords=("noop",),
            parameters={"type": "object", "properties": {}})
def noop() -> dict:
    return {"ok": True}
