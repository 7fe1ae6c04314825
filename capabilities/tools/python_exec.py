"""The ``python_exec`` capability: run a Python script in a separate, limited process.

The child is ``sys.executable -I`` (isolated mode: no ``PYTHON*`` variables, no user site, neither
the script's nor the working directory on ``sys.path``; ``-S`` too when
``tools.python.site_packages`` is off), started by :class:`~capabilities.tools.sandbox.Jail` in
the user's workspace with a scrubbed environment, ``RLIMIT_CPU``/``AS``/``NOFILE``/``NPROC``/
``FSIZE``, a wall-clock timeout that kills its process group, and, where Linux namespaces can be
had, PID and mount namespaces of its own and (unless ``tools.python.network``) a network
namespace without any network. Before the code runs, :mod:`capabilities.tools.python_bootstrap`
installs an audit hook that refuses network, processes, native code and changes outside the
workspace.

It needs approval by default: the sandbox limits what the code can do, but running code the model
wrote is still a change made on the user's behalf. ``capabilities.auto_approve: [python_exec]``
lets it run without asking.

The result is ``{exit_code, stdout, stderr, stdout_truncated, stderr_truncated, elapsed_s,
timed_out, killed, kill_reason, isolated}``; an exception in the code is a result (exit code 1,
the traceback in stderr), not an error. Errors: ``CapabilityError("cancelled")`` when the task is
cancelled while the code runs.
"""

from __future__ import annotations

import hashlib
import io
import py_compile
import sys
import tokenize
from pathlib import Path

from capabilities.base import CapabilityInputError, ExecutionContext, capability
from capabilities.tools.kernel_sandbox import python_paths
from capabilities.tools.sandbox import Jail, Limits
from capabilities.tools.egress import egress_socket
from capabilities.tools.workspace import Workspace, tools_settings

BOOTSTRAP = Path(__file__).with_name("python_bootstrap.py")
_compiled: dict[Path, Path] = {}
MAX_CODE_CHARS = 256 * 1024
MAX_TIMEOUT_S = 3600

PARAMETERS = {
    "x-flora-description": {"zh": "在独立受限的进程中运行一段 Python 代码（默认无网络，限制 CPU、内存和时间），返回输出和退出码"},
    "type": "object",
    "properties": {
        "code": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_CODE_CHARS,
            "description": "The Python 3 source to run as a script; print() what should be seen. Files it uses are "
                           "read and written relative to the workspace.",
            "x-flora-description": {"zh": "要运行的 Python 3 代码；用 print() 输出结果"},
            "x-flora-request-text": True,  # "run python code: print(6*7)" gives it
            "x-flora-runs": "python",  # what will run: the model may write it, approval shows it whole
        },
        "timeout_s": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": MAX_TIMEOUT_S,
            "description": "Seconds of wall-clock time the script may take before it is killed (at most "
                           "tools.python.timeout_s).",
            "x-flora-description": {"zh": "脚本最多运行多少秒，超时即终止"},
        },
    },
    "required": ["code"],
    "additionalProperties": False,
}


@capability(
    name="python_exec",
    description="Run a Python script in a separate sandboxed process (workspace as working directory, no network "
                "unless configured, CPU, memory and time limits) and return its stdout, stderr and exit code.",
    parameters=PARAMETERS,
    keywords=("run python", "python script", "python code", "execute code",
              "运行代码", "执行代码", "Python 脚本", "Python 代码"),
    examples=("run this python: print(sum(range(100)))", "用 Python 算一下 2 的 100 次方"),
    needs_approval=True,
    precheck=lambda values, context: check_code(str(values.get("code", ""))),
    prepare=lambda values: {**values, "code": lines_of(values["code"])} if isinstance(values.get("code"), str)
    else values,
)
def python_exec(code: str, context: ExecutionContext, timeout_s: float | None = None) -> dict:
    tools = tools_settings(context)
    settings = tools.python
    workspace = Workspace.for_context(context)
    limits = Limits(cpu_s=settings.cpu_s, memory_bytes=settings.memory_mb * 1024 * 1024,
                    open_files=settings.open_files, processes=settings.processes, file_bytes=tools.max_file_bytes)
    cache = Path(context.config.data_dir).resolve() / "cache" if getattr(context.config, "data_dir", None) else None
    bootstrap = bootstrap_file(cache)
    jail = Jail(workspace.root, limits=limits, isolation=tools.isolation, sandbox_uid=tools.sandbox_uid,
                read_only=(*python_paths(), str(bootstrap), *settings.read_paths), drops_root=True,
                network_socket=egress_socket(context) if settings.network else "",
                max_output_bytes=tools.max_output_bytes)
    argv = [sys.executable, "-I", *([] if settings.site_packages else ["-S"]), str(bootstrap),
            str(workspace.root), "1" if settings.network else "0", ":".join(settings.read_paths), *limits.argv(),
            "1" if settings.guard else "0", "1" if tools.isolation != "none" else "0"]
    limit = min(float(timeout_s), settings.timeout_s) if timeout_s else settings.timeout_s
    context.logger.info("python_exec %d chars task_id=%s", len(code), context.task_id)
    result = jail.run([argv], timeout_s=limit, stdin=code.encode("utf-8"), cancelled=context.cancelled)
    return result.to_dict()


def bootstrap_file(cache_dir: Path | None) -> Path:
    """The bootstrap to run: compiled once into ``cache_dir`` (under the data directory, out of
    the sandbox's reach), because Python compiles a script given as source on every start —
    about 6 ms of each run. The source itself where no cache can be written."""
    if cache_dir is None:
        return BOOTSTRAP
    found = _compiled.get(cache_dir)
    if found is not None and found.exists():
        return found
    source = BOOTSTRAP.read_bytes()
    target = cache_dir / f"python_bootstrap-{hashlib.sha256(source).hexdigest()[:16]}.pyc"
    if not target.exists():
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
            py_compile.compile(str(BOOTSTRAP), cfile=str(target), doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        except (OSError, py_compile.PyCompileError):
            return BOOTSTRAP
    _compiled[cache_dir] = target
    return target


COMPOUND = frozenset({"with", "for", "if", "while", "try", "def", "class", "async"})


def lines_of(code: str) -> str:
    """A script written on one line with ';' before a compound statement ("import hashlib; with
    open('d.txt', 'w') as f: f.write(x)", which Python refuses), split into lines there; and a
    script whose last line is the body of the statement before it, left unindented ("with
    open('t.txt', 'w') as f:\nf.write(s)"), indented: what a model writing JSON often does, and
    what it means. Code that compiles, or that does not once mended, is returned as it is."""
    if not _fails(code):
        return code
    return _body_indented(_split_at_semicolons(code))


def _body_indented(code: str) -> str:
    """The last line indented under a compound statement's header just before it, where it is not."""
    lines = code.rstrip("\n").split("\n")
    if len(lines) < 2 or not _fails(code):
        return code
    header, body = lines[-2], lines[-1]
    indent = header[:len(header) - len(header.lstrip())]
    if not header.rstrip().endswith(":") or body[:len(body) - len(body.lstrip())] != indent or not body.strip():
        return code
    mended = "\n".join([*lines[:-1], indent + "    " + body.lstrip()])
    return code if _fails(mended) else mended


def _split_at_semicolons(code: str) -> str:
    """A one-line script split into lines at each ';' that comes before a compound statement."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    cuts, depth = [], 0
    for token, after in zip(tokens, tokens[1:]):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif token.type == tokenize.OP and token.string == ";" and depth == 0 \
                and after.type == tokenize.NAME and after.string in COMPOUND:
            cuts.append((token.start, after.start))
    if not cuts:
        return code
    lines = code.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    split = code
    for (row, col), (after_row, after_col) in reversed(cuts):
        start, end = offsets[row - 1] + col, offsets[after_row - 1] + after_col
        line = lines[row - 1]
        indent = line[:len(line) - len(line.lstrip(" \t"))]
        split = split[:start] + "\n" + indent + split[end:]
    return code if _fails(split) else split


def _fails(code: str) -> bool:
    try:
        compile(code, "<script>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return True
    return False


def check_code(code: str) -> None:
    """Code that is not Python (a syntax error) is refused before the person is asked to run it."""
    try:
        compile(code, "<script>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        where = f" (line {exc.lineno})" if getattr(exc, "lineno", None) else ""
        raise CapabilityInputError("code", f"This is not valid Python{where}: {getattr(exc, 'msg', exc)}") from None
