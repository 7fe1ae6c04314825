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
    name="misconfigured_tool",
    description="Fails the way a capability without its settings does.",
    keywords=("misconfigured tool",),
)
def misconfigured_tool() -> None:
    raise CapabilityError("No databases are configured for queries", error_type="misconfigured")


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


@capability(
    name="slow_once",
    description="Write this worker's process id to a file and wait, the first time only; run again "
                "(the file is there) it returns at once (for retry tests).",
    parameters={
        "type": "object",
        "properties": {
            "seconds": {"type": "number", "description": "how long the first run waits"},
            "pid_file": {"type": "string", "description": "where to write the process id"},
        },
        "required": ["seconds", "pid_file"],
    },
    keywords=("slow once",),
)
def slow_once(seconds: float, pid_file: str) -> dict:
    import os

    if os.path.exists(pid_file):
        return {"ran_again": True}
    return {**slow_job(seconds, pid_file), "ran_again": False}



class _UnreadableResult(dict):
    """A result that breaks Flora's own handling after the capability returned (a stand-in
    for a bug in Flora between running a task and reporting it)."""

    def get(self, *args, **kwargs):
        raise RuntimeError("this result cannot be read")


@capability(
    name="broken_result",
    description="Return a result Flora itself fails on (for internal-error tests).",
    parameters={"type": "object", "properties": {}},
    keywords=("broken result",),
)
def broken_result() -> dict:
    return _UnreadableResult(value=1)
