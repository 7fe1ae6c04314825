"""A plugin module as a user would write one: decorated functions become capabilities."""

from capabilities.base import CapabilityError, capability


@capability(
    name="add_numbers",
    description="Add two whole numbers.",
    parameters={
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "the first number"},
            "b": {"type": "integer", "description": "the second number"},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    },
    keywords=("add numbers", "加法"),
)
def add_numbers(a: int, b: int) -> dict:
    return {"sum": a + b}


@capability(
    name="delete_file",
    description="Delete a file in the workspace (asks for approval first).",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string", "description": "the file to delete"}},
        "required": ["path"],
    },
    keywords=("delete file", "删除文件"),
    needs_approval=True,
)
def delete_file(path: str, context) -> dict:
    return {"deleted": path, "by": context.user_id}


@capability(
    name="always_fails",
    description="A capability that fails, for error paths.",
    parameters={"type": "object", "properties": {}},
    keywords=("please fail",),
)
def always_fails() -> None:
    raise CapabilityError("the backend said no", retryable=True)
