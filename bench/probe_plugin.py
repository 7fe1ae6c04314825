"""A capability whose result is as large as asked, for the probes of Flora's limits."""

from capabilities.base import capability


@capability(name="big_result", description="Return a text of the given size in megabytes.",
            keywords=("big result",),
            parameters={"type": "object", "properties": {"megabytes": {"type": "number"}},
                        "required": ["megabytes"]})
def big_result(megabytes: float) -> dict:
    return {"text": "x" * int(megabytes * 1024 * 1024)}
