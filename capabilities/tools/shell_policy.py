"""What the ``shell`` tool may run: a command line read without a shell, then checked.

Flora never hands a command to ``/bin/sh``. :class:`ShellPolicy` reads the line itself (words,
'single' and "double" quotes, backslash escapes, ``|`` between programs) into argv lists, expands
``*``/``?``/``[...]`` inside the workspace, and refuses, each with the reason::

    ShellRefused   (a CapabilityError, error_type "forbidden")
      - a destructive pattern: a fork bomb, a download piped into a shell, formatting a disk,
        dd onto a device, a recursive delete / chmod / chown outside the workspace,
        shutdown or reboot, a redirect into a system path
      - shell syntax Flora does not run: ; && || & > < ( ) newlines, $VAR, $(...), `...`
      - a program named by a path, one outside tools.shell.allow (when that list is set), or one
        in tools.shell.deny (shells, interpreters, wrappers that run other programs, privilege
        and machine-wide commands by default)
      - options that make an allowed program run another one (find -exec, tar --to-command, ...)
      - a path argument (absolute, with '..', or through a symlink) that leads outside the
        workspace; /dev/null, /dev/zero and /dev/urandom are the exceptions

This is a policy, not a proof: a program that is allowed can still do what it does (``git`` runs a
repository's hooks, an editor can start a shell). For untrusted use, set ``tools.shell.allow`` to
the few programs needed; docs/tools.md says more.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from capabilities.base import CapabilityError
from capabilities.tools.sandbox import SAFE_PATH

MAX_COMMAND_CHARS = 16 * 1024
MAX_GLOB_MATCHES = 1000
HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/stdin",
                              "/dev/stdout", "/dev/stderr"})
DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "lynx"})
SHELL_LIKE = ("sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "fish", "busybox", "python", "perl",
              "ruby", "node", "php", "lua", "source", "eval")
DISK_TOOLS = ("mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "parted", "mkdosfs")
POWER = ("shutdown", "reboot", "halt", "poweroff", "init", "telinit")
# options of allowed programs that make them run (or write) something else
RUNS_OTHERS = {
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "tar": ("--to-command", "--checkpoint-action", "--use-compress-program", "-I", "--rsh-command",
            "--info-script", "-F", "--new-volume-script"),
    "git": ("-c", "--config-env", "--exec-path", "--upload-pack", "--receive-pack", "-u"),
    "rsync": ("-e", "--rsh", "--rsync-path"),
}
_FORK_BOMB = re.compile(r"(\S+)\s*\(\s*\)\s*\{[^}]*\1[^}]*\|[^}]*&")
_SYSTEM_REDIRECT = re.compile(r">>?\s*['\"]?/(etc|dev|sys|proc|boot|usr|bin|sbin|lib\w*|var|root|opt)\b")
_PROGRAM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_OPERATORS = {";": "';' (run commands one per call)", "&": "'&' and '&&' (run commands one per call)",
              ">": "redirection with '>' (use file_write to write a file)",
              "<": "redirection with '<' (give the file name as an argument)",
              "(": "'(' (subshells and functions)", ")": "')' (subshells and functions)",
              "\n": "a line break (run commands one per call)", "`": "command substitution with `...`"}


class ShellRefused(CapabilityError):
    """The command was not run; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message, error_type="forbidden")


@dataclass(frozen=True)
class _Word:
    text: str
    pattern: bool  # holds an unquoted * ? or [ : expand it as a glob


def _name_matches(name: str, entries: Iterable[str]) -> bool:
    """``python3.11`` matches ``python``; ``mkfs.ext4`` matches ``mkfs``."""
    return any(name == e or re.fullmatch(re.escape(e) + r"[0-9.]*(\.[\w-]+)?", name) for e in entries)


class ShellPolicy:
    """Reads and checks a command line for one workspace."""

    def __init__(self, workspace: Path, *, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.allow = tuple(allow)
        self.deny = tuple(deny)

    def check(self, command: str) -> list[list[str]]:
        """The pipeline ``command`` stands for, as argv lists; ShellRefused with the reason if not allowed."""
        if not command.strip():
            raise ShellRefused("The command is empty.")
        if len(command) > MAX_COMMAND_CHARS:
            raise ShellRefused(f"The command is longer than {MAX_COMMAND_CHARS} characters.")
        if "\x00" in command:
            raise ShellRefused("The command contains a NUL character.")
        self._destructive_text(command)
        stages = self._split(command)
        programs = [stage[0].text for stage in stages]
        for index, name in enumerate(programs):
            if _name_matches(name, DOWNLOADERS) and any(_name_matches(p, SHELL_LIKE) for p in programs[index + 1:]):
                raise ShellRefused(f"Refused: piping a download ({name}) into a shell or interpreter runs code "
                                   "nobody has read.")
        return [self._stage(stage) for stage in stages]

    # -- reading -------------------------------------------------------------------------
    def _destructive_text(self, command: str) -> None:
        if _FORK_BOMB.search(command):
            raise ShellRefused("Refused: this is a fork bomb (a function that starts copies of itself without "
                               "end); it would exhaust the machine's processes.")
        if _SYSTEM_REDIRECT.search(command):
            raise ShellRefused("Refused: this writes into a system path (/etc, /dev, /usr, ...); only the "
                               "workspace can be written.")

    def _split(self, command: str) -> list[list[_Word]]:
        """Words and pipes, read the way sh would, refusing what sh would do beyond that."""
        stages: list[list[_Word]] = [[]]
        text, quoted_glob, in_word = "", False, False
        i, n = 0, len(command)

        def end_word() -> None:
            nonlocal text, quoted_glob, in_word
            if in_word:
                stages[-1].append(_Word(text, quoted_glob))
            text, quoted_glob, in_word = "", False, False

        while i < n:
            c = command[i]
            if c in " \t":
                end_word()
            elif c == "|":
                if command[i + 1:i + 2] == "|":
                    raise ShellRefused("Flora runs one command or a pipeline without a shell; '||' is not "
                                       "supported (run commands one per call).")
                end_word()
                if not stages[-1]:
                    raise ShellRefused("A '|' has no command before it.")
                stages.append([])
            elif c in _OPERATORS or (c == "\r"):
                raise ShellRefused(f"Flora runs one command or a pipeline without a shell; "
                                   f"{_OPERATORS.get(c, 'a line break')} is not supported.")
            elif c == "$":
                raise ShellRefused("Flora runs commands without a shell, so '$' (variables, $(...)) is not "
                                   "expanded; write the value itself, or quote it with '...'.")
            elif c == "\\":
                if i + 1 >= n:
                    raise ShellRefused("The command ends with a lone backslash.")
                if command[i + 1] == "\n":
                    raise ShellRefused("Flora runs one command per call; a line break is not supported.")
                text += command[i + 1]
                in_word = True
                i += 1
            elif c == "'":
                end = command.find("'", i + 1)
                if end < 0:
                    raise ShellRefused("A single quote is not closed.")
                text += command[i + 1:end]
                in_word = True
                i = end
            elif c == '"':
                i += 1
                while i < n and command[i] != '"':
                    if command[i] in "$`":
                        raise ShellRefused("Flora runs commands without a shell, so '$' and '`' inside double "
                                           "quotes are not expanded; use single quotes for literal text.")
                    if command[i] == "\\" and i + 1 < n and command[i + 1] in '"\\':
                        i += 1
                    text += command[i]
                    i += 1
                if i >= n:
                    raise ShellRefused("A double quote is not closed.")
                in_word = True
            else:
                if c in "*?[":
                    quoted_glob = True
                text += c
                in_word = True
            i += 1
        end_word()
        if not stages[-1]:
            raise ShellRefused("A '|' has no command after it.")
        return stages

    # -- checking one program --------------------------------------------------------------
    def _stage(self, words: list[_Word]) -> list[str]:
        name = words[0].text
        if not _PROGRAM_NAME.fullmatch(name):
            raise ShellRefused(f"{name!r}: give the name of a program on the PATH, not a path; programs in the "
                               "workspace are not run.")
        args = self._expand(words[1:])
        self._destructive_args(name, args)
        if self.allow and not _name_matches(name, self.allow):
            raise ShellRefused(f"{name!r} is not in tools.shell.allow; allowed programs: {', '.join(self.allow)}.")
        located = shutil.which(name, path=SAFE_PATH)
        if located is None and not _name_matches(name, self.deny):
            raise CapabilityError(f"There is no program {name!r} on this machine.", error_type="not_found")
        real_name = os.path.basename(os.path.realpath(located)) if located else name
        for shown in {name, real_name}:
            if _name_matches(shown, self.deny):
                raise ShellRefused(f"{name!r} is denied by tools.shell.deny (shells, interpreters and programs "
                                   "that run other programs or change the machine are denied by default).")
        for option in RUNS_OTHERS.get(name, ()):
            for arg in args:
                if arg == option or (option.startswith("--") and arg.startswith(option + "=")):
                    raise ShellRefused(f"{name} {arg!r} is refused: it makes {name} run another program or "
                                       "write outside the workspace.")
        for arg in args:
            self._check_path_argument(name, arg)
        if name == "sed":
            args = ["--sandbox", *args]  # GNU sed: no e/r/w commands (they run programs, touch other files)
        return [name, *args]

    def _expand(self, words: list[_Word]) -> list[str]:
        args: list[str] = []
        for word in words:
            if word.pattern and not word.text.startswith("-") and not word.text.startswith(("/", "~")):
                matches = sorted(glob.glob(word.text, root_dir=self.workspace))
                if len(matches) > MAX_GLOB_MATCHES:
                    raise ShellRefused(f"{word.text!r} matches more than {MAX_GLOB_MATCHES} files; narrow it.")
                args.extend(matches or [word.text])
            else:
                args.append(word.text)
        return args

    def _destructive_args(self, name: str, args: list[str]) -> None:
        if _name_matches(name, DISK_TOOLS):
            raise ShellRefused(f"Refused: {name} formats or repartitions a disk.")
        if _name_matches(name, POWER):
            raise ShellRefused(f"Refused: {name} shuts down or restarts the machine.")
        if name == "dd":
            for arg in args:
                if arg.startswith("of=") and (arg[3:].startswith("/dev/") and arg[3:] not in HARMLESS_DEVICES):
                    raise ShellRefused(f"Refused: dd {arg} writes straight onto a device.")
        if name in ("rm", "chmod", "chown", "chgrp") and any(_recursive(a) for a in args):
            for arg in args:
                if arg == "--no-preserve-root":
                    raise ShellRefused(f"Refused: {name} --no-preserve-root.")
                if not arg.startswith("-") and not self._inside(arg):
                    raise ShellRefused(f"Refused: a recursive {name} of {arg!r}, which is outside the workspace.")

    def _check_path_argument(self, program: str, arg: str) -> None:
        candidates = [arg]
        if "=" in arg:  # --output=/etc/x, of=/dev/sda
            candidates.append(arg.split("=", 1)[1])
        attached = _ATTACHED_PATH.match(arg)
        if attached:  # a value glued to a short option: sort -o/tmp/x, -o~/x, -o../x
            candidates.append(attached.group(1))
        for candidate in list(candidates):
            if candidate.lower().startswith("file:"):  # file:///etc/passwd, file:/etc/passwd
                candidates.append("/" + candidate[5:].lstrip("/"))
        for candidate in candidates:
            if candidate in HARMLESS_DEVICES:
                continue
            if candidate.startswith(("/", "~")) or ".." in Path(candidate).parts or \
                    os.path.lexists(self.workspace / candidate):
                if not self._inside(candidate):
                    raise ShellRefused(f"{program}: the argument {arg!r} is a path outside the workspace; commands "
                                       "may only use files inside it.")

    def _inside(self, path: str) -> bool:
        if path.startswith("~"):
            return False
        real = os.path.realpath(self.workspace / path)  # an absolute path replaces the workspace part
        root = str(self.workspace)
        return real == root or real.startswith(root + os.sep)


_ATTACHED_PATH = re.compile(r"^-[A-Za-z0-9]+?((?:/|~|\.\.).*)$")


def _recursive(arg: str) -> bool:
    return arg in ("--recursive", "-R") or (arg.startswith("-") and not arg.startswith("--")
                                              and ("r" in arg or "R" in arg))
