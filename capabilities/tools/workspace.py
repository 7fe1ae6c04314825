"""The workspace: the one directory tree the shell, python_exec and file tools work in.

Each (tenant, user) gets ``<tools.workspace>/<tenant>/<user>`` when ``tools.per_user`` is on (the
default), so one person's files are out of another's reach; with it off everybody shares the root.
A path a user gives is always read relative to that directory, and :meth:`Workspace.resolve`
refuses anything that would land outside it::

    CapabilityError("forbidden")        an absolute path, '..' that climbs out, a symlink (of any
                                        component, followed one at a time) that leads outside,
                                        or a path through something that is not a directory
    CapabilityInputError(parameter)     not a usable path at all: empty, a NUL byte, too long

Symlinks inside the workspace that stay inside it are followed; the check is done on the fully
resolved path, also for a file that does not exist yet (its nearest existing parent is resolved).
Between the check and the use a process could swap a directory for a symlink; the tools open
files with ``O_NOFOLLOW`` on the last component and re-check the resolved path after opening.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capabilities.base import CapabilityError, CapabilityInputError

MAX_PATH_CHARS = 4096
_SAFE_PART = re.compile(r"[^A-Za-z0-9._@-]")


def forbidden(message: str) -> CapabilityError:
    return CapabilityError(message, error_type="forbidden")


def _dir_name(value: str) -> str:
    """A tenant or user id as one safe directory name ('..' and '/' cannot survive)."""
    cleaned = _SAFE_PART.sub("_", value).strip(".") or "_"
    return cleaned[:128]


def tools_settings(context: Any):
    """The ``tools:`` section a running tool obeys (its defaults outside a configured Flora)."""
    from config import ToolsConfig

    return getattr(getattr(context, "config", None), "tools", None) or ToolsConfig()


@dataclass(frozen=True)
class Workspace:
    """One user's workspace directory (``root``), created on first use."""

    root: Path

    @classmethod
    def for_context(cls, context: Any) -> "Workspace":
        """The workspace of the task's user, from ``context.config.tools``."""
        from config import FloraConfig

        config = getattr(context, "config", None) or FloraConfig()
        base = config.workspace_path
        if tools_settings(context).per_user:
            base = base / _dir_name(context.tenant_id or "default") / _dir_name(context.user_id or "anonymous")
        return cls.at(base)

    @classmethod
    def at(cls, directory: str | os.PathLike) -> "Workspace":
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        return cls(Path(os.path.realpath(path)))

    def hand_over(self, made: list[Path], tools: Any) -> None:
        """Flora as root made ``made`` in the workspace: give them to the sandbox's user, so programs
        the person runs can change them too."""
        if os.geteuid() == 0 and tools.isolation != "none":
            from capabilities.tools.kernel_sandbox import adopt

            for path in made:
                adopt(path, tools.sandbox_uid)

    def resolve(self, user_path: str, parameter: str = "path") -> Path:
        """The real path of ``user_path`` (relative to the workspace); refused if outside it."""
        if not isinstance(user_path, str):
            raise CapabilityInputError(parameter, f"{parameter} must be text, not {type(user_path).__name__}.")
        if "\x00" in user_path:
            raise CapabilityInputError(parameter, f"{parameter} contains a NUL character, which no path may hold.")
        if len(user_path) > MAX_PATH_CHARS:
            raise CapabilityInputError(parameter, f"{parameter} is longer than {MAX_PATH_CHARS} characters.")
        text = user_path.strip() or "."
        if text.startswith(("/", "~")):
            raise forbidden(f"{user_path!r} is an absolute path; give a path relative to the workspace "
                            f"(for example 'notes/todo.txt').")
        resolved = self._walk(Path(text), user_path)
        if not self.contains(resolved):
            raise forbidden(f"{user_path!r} leads outside the workspace; only files inside it can be used.")
        return resolved

    def contains(self, path: str | os.PathLike) -> bool:
        """Whether the real path ``path`` is the workspace or inside it."""
        real = os.path.realpath(path)
        return real == str(self.root) or real.startswith(str(self.root) + os.sep)

    def relative(self, path: Path) -> str:
        """``path`` as the user sees it: relative to the workspace, '.' for the root."""
        rel = os.path.relpath(path, self.root)
        return "." if rel == "." else rel

    def _walk(self, relative: Path, shown: str) -> Path:
        """Resolve one component at a time, following symlinks, and stop at the first that escapes."""
        current = self.root
        todo = list(relative.parts)
        hops = 0
        while todo:
            part = todo.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if current == self.root:
                    raise forbidden(f"{shown!r} climbs out of the workspace with '..'; only files inside it "
                                    "can be used.")
                current = current.parent
                continue
            candidate = current / part
            if candidate.is_symlink():
                hops += 1
                if hops > 40:
                    raise forbidden(f"{shown!r} goes through too many symbolic links.")
                target = os.readlink(candidate)
                if os.path.isabs(target):
                    real = Path(os.path.realpath(target))
                    if not self.contains(real):
                        raise forbidden(f"{shown!r} goes through the symbolic link {self.relative(candidate)!r}, "
                                        "which points outside the workspace.")
                    current = real
                else:
                    todo[:0] = list(Path(target).parts)
                continue
            if todo and candidate.exists() and not candidate.is_dir():
                raise CapabilityInputError("path", f"{shown!r}: {self.relative(candidate)!r} is a file, "
                                                   "not a directory.")
            current = candidate
        real = Path(os.path.realpath(current))
        if not self.contains(real):
            raise forbidden(f"{shown!r} leads outside the workspace; only files inside it can be used.")
        return real
