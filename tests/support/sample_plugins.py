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


@capability(
    name="slow_job",
    description="Write this worker's process id to a file, then wait (for worker-failure tests).",
    parameters={
        "type": "object",
        "properties": {
            "seconds": {"type": "number", "description": "how long to wait"},
            "pid_file": {"type": "string", "description": "where to write the process id"},
        },
        "required": ["seconds", "pid_file"],
    },
    keywords=("slow job",),
)
def slow_job(seconds: float, pid_file: str) -> dict:
    import os
    import time

    with open(pid_file + ".tmp", "w") as out:
        out.write(str(os.getpid()))
    os.replace(pid_file + ".tmp", pid_file)
    time.sleep(seconds)
    return {"slept": seconds}
