"""The ``shell`` capability: run one command, or a pipeline, in the user's workspace.

The command line is read and checked by :class:`~capabilities.tools.shell_policy.ShellPolicy`
(no shell ever runs it), then run by :class:`~capabilities.tools.sandbox.Jail`: workspace as
working directory, scrubbed environment, resource limits, a wall-clock timeout that kills the
whole process group, output capped. It needs the user's approval by default (add ``shell`` to
``capabilities.auto_approve`` to drop that).

Errors::

    ShellRefused (CapabilityError "forbidden")  the policy refused the command; the message says why
    CapabilityError("not_found")                 the program could not be started
    CapabilityError("cancelled")                 the task was cancelled while it ran

A command that runs and fails is a result (its exit code and stderr), not an error.
"""

from __future__ import annotations

from capabilities.base import ExecutionContext, capability
from capabilities.tools.sandbox import Jail, Limits
from capabilities.tools.shell_policy import MAX_COMMAND_CHARS, ShellPolicy
from capabilities.tools.egress import egress_socket
from capabilities.tools.workspace import Workspace, tools_settings

MAX_TIMEOUT_S = 3600

PARAMETERS = {
    "x-flora-description": {"zh": "在工作区里运行一条命令（或用 | 连接的管道），不经过 shell，受安全策略、超时和输出上限约束"},
    "type": "object",
    "properties": {
        "command": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_COMMAND_CHARS,
            "description": "The command line to run in the workspace, e.g. \"ls -la\" or \"grep -c error log.txt | "
                           "sort\". Programs joined by | form a pipeline; ; && > $VAR and $(...) are not supported.",
            "x-flora-description": {"zh": "要在工作区运行的命令，例如 \"ls -la\"；可以用 | 连接多个程序"},
            "x-flora-request-text": True,  # "run the shell command df -h" gives it
            "x-flora-runs": "shell",  # what will run: the model may write it, approval shows it whole
        },
        "timeout_s": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": MAX_TIMEOUT_S,
            "description": "Seconds the command may run before it is killed (at most tools.shell.timeout_s).",
            "x-flora-description": {"zh": "命令最多运行多少秒，超时即终止"},
        },
        "stdin": {
            "type": "string",
            "maxLength": 1024 * 1024,
            "default": "",
            "description": "Text given to the command on its standard input (empty: none).",
        },
    },
    "required": ["command"],
    "additionalProperties": False,
}


@capability(
    name="shell",
    description="Run a command line (one program, or a pipeline joined by |) in the workspace, without a shell, "
                "under the configured policy, a timeout and output limits; returns exit code, stdout and stderr.",
    parameters=PARAMETERS,
    keywords=("shell command", "run command", "run the command", "in the terminal", "在终端", "执行命令", "运行命令"),
    examples=("run ls -la in my workspace", "执行命令 grep -c ERROR app.log"),
    needs_approval=True,
    precheck=lambda values, context: check_command(str(values.get("command", "")), context),
)
def shell(command: str, context: ExecutionContext, timeout_s: float | None = None, stdin: str = "") -> dict:
    tools = tools_settings(context)
    workspace = Workspace.for_context(context)
    policy = ShellPolicy(workspace.root, allow=tools.shell.allow, deny=tools.shell.deny)
    pipeline = policy.check(command)
    limit = min(float(timeout_s), tools.shell.timeout_s) if timeout_s else tools.shell.timeout_s
    jail = shell_jail(tools, workspace, context)
    context.logger.info("shell %s task_id=%s", " | ".join(stage[0] for stage in pipeline), context.task_id)
    result = jail.run(pipeline, timeout_s=limit, stdin=stdin.encode(), cancelled=context.cancelled)
    return {"command": command, "argv": pipeline, **result.to_dict()}


def shell_jail(tools, workspace: Workspace, context: ExecutionContext) -> Jail:
    """The sandbox a command runs in, under the ``tools.shell`` limits."""
    settings = tools.shell
    limits = Limits(cpu_s=settings.cpu_s, memory_bytes=settings.memory_mb * 1024 * 1024,
                    open_files=settings.open_files, processes=settings.processes, file_bytes=tools.max_file_bytes)
    return Jail(workspace.root, limits=limits, isolation=tools.isolation, sandbox_uid=tools.sandbox_uid,
                network_socket=egress_socket(context) if settings.network else "",
                max_output_bytes=tools.max_output_bytes)


def check_command(command: str, context: ExecutionContext) -> list[list[str]]:
    """The command policy's reading of ``command`` for this person's workspace (ShellRefused
    with the reason): run before the person is asked to approve it."""
    tools = tools_settings(context)
    policy = ShellPolicy(Workspace.for_context(context).root, allow=tools.shell.allow, deny=tools.shell.deny)
    return policy.check(command)
