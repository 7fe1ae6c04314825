"""The boundary around every program a tool runs: Linux namespaces, seccomp and rlimits, set up by
bubblewrap (``bwrap``).

Why bubblewrap: it is a small, audited setuid-free launcher from Debian's packages that works
both as root and as an unprivileged user (where the kernel allows user namespaces), needs no
daemon, starts in a few milliseconds, and does only what it is told: every mount and namespace
below is ours to choose. A container runtime would need a daemon and images; nsjail is not
packaged here; a Python audit hook or a deny list of programs is a friendly refusal that native
code walks past, never a boundary.

What a program started through :meth:`KernelSandbox.wrap` gets:

- new user, mount, PID, IPC, UTS, cgroup and network namespaces; inside, uid and gid 1000, all
  capabilities dropped, no new privileges, no further user namespaces, and the seccomp filter
  of :mod:`capabilities.tools.seccomp`;
- outside, an unprivileged uid even when Flora runs as root (``setpriv`` to
  ``tools.sandbox_uid`` before bwrap starts), so files the kernel checks are checked against a
  nobody;
- a file system built from nothing: ``/usr`` (and the ``/bin``, ``/lib``... links into it), a
  short list of ``/etc`` files programs need, the Python installation when Python runs,
  read-only; a fresh ``/proc`` of its own PID namespace, a minimal ``/dev``, a small ``/tmp``;
  and the person's workspace, the only thing it can write. Flora's data directory, its
  config and keys, the stores, the Chroma files, other persons' workspaces, Flora's code and
  the host's ``/proc`` and ``/sys`` are not there at all;
- no network: the namespace has a loopback of its own and nothing else, so none of Flora's
  ports, Redis, RabbitMQ, the model host or the HTTP API can be reached. Where an operator
  turns network on for a tool, the only way out is Flora's egress proxy
  (:mod:`capabilities.tools.egress`), which applies the web tools' address guard;
- kernel resource limits set before it starts (``prlimit``: CPU seconds, address space, open
  files, processes, file size, no core files); the wall clock and the kill of the whole tree
  are :class:`~capabilities.tools.sandbox.Jail`'s (the PID namespace dies with its first
  process, and bwrap's child dies with bwrap).

cgroup v2 limits are not used: they need a delegated cgroup subtree, which a process in a
container or a plain service rarely has; the rlimits above and the PID namespace bound the
same things per run.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from capabilities.tools import seccomp

log = logging.getLogger("flora.capability.sandbox")

INSIDE_UID = 1000
TMP_BYTES = 64 * 1024 * 1024
HOSTNAME = "sandbox"

# What programs read from /etc; nothing else of it is there (no shadow, no private keys, no host config).
ETC_FILES = ("passwd", "group", "nsswitch.conf", "hosts", "ld.so.cache", "localtime", "alternatives", "magic",
             "mime.types")
# ...and what reaching out needs, shown only where the operator gave the tool network
ETC_NETWORK_FILES = ("resolv.conf", "gai.conf", "services", "protocols", "ssl/certs", "ssl/openssl.cnf",
                     "ca-certificates")
# Top-level names that are links into /usr on merged-/usr systems, or directories elsewhere.
SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
BRIDGE = Path(__file__).with_name("egress_bridge.py")
EGRESS_SOCKET = "/run/flora/egress.sock"  # where the sandbox sees Flora's egress proxy
BRIDGE_PORT = 3128  # where, on the sandbox's own loopback, the bridge to it listens


class SandboxUnavailable(RuntimeError):
    """The kernel sandbox cannot be set up on this machine; the message says what is missing."""


@dataclass(frozen=True)
class Limits:
    """Per-process resource limits; 0 leaves one as it is."""

    cpu_s: int = 0
    memory_bytes: int = 0
    open_files: int = 0
    processes: int = 0
    file_bytes: int = 0

    def any(self) -> bool:
        return any((self.cpu_s, self.memory_bytes, self.open_files, self.processes, self.file_bytes))

    def argv(self) -> list[str]:
        """The limits as words, for a child that sets them itself (python_bootstrap)."""
        return [str(v) for v in (self.cpu_s, self.memory_bytes, self.open_files, self.processes, self.file_bytes)]

    def apply(self) -> None:
        """Set the limits on the calling process (a child between fork and exec, without the sandbox)."""
        self.set_on(0)

    def set_on(self, pid: int) -> None:
        """Set the limits on process ``pid`` (0: this one), before it runs anything of the person's."""
        import resource

        pairs = ((resource.RLIMIT_CPU, self.cpu_s), (resource.RLIMIT_AS, self.memory_bytes),
                 (resource.RLIMIT_NOFILE, self.open_files), (resource.RLIMIT_NPROC, self.processes),
                 (resource.RLIMIT_FSIZE, self.file_bytes), (resource.RLIMIT_CORE, 0))
        for which, value in pairs:
            if value or which == resource.RLIMIT_CORE:
                resource.prlimit(pid, which, (value, value))

    def prlimit(self) -> list[str]:
        """The ``prlimit`` command line that starts a program under these limits (hard and soft)."""
        pairs = (("--cpu", self.cpu_s), ("--as", self.memory_bytes), ("--nofile", self.open_files),
                 ("--nproc", self.processes), ("--fsize", self.file_bytes))
        return [_tool("prlimit"), *(f"{flag}={value}:{value}" for flag, value in pairs if value), "--core=0:0", "--"]


@dataclass(frozen=True)
class KernelSandbox:
    """Where a program runs: the writable ``workdir`` and what else it may read."""

    workdir: Path
    read_only: tuple[str, ...] = ()  # more paths to show, read-only, at the same place
    network_socket: str = ""  # the egress proxy's Unix socket, shown at EGRESS_SOCKET; "" = no network
    sandbox_uid: int = 65534
    limits: Limits = field(default_factory=Limits)
    drops_root: bool = False  # the program itself leaves uid 0 for INSIDE_UID first thing (python_bootstrap)

    def launch(self, argv: list[str], **popen: object) -> subprocess.Popen:
        """Start ``argv`` inside the sandbox (``popen``: Popen's stdio, cwd, env, process_group)."""
        fds: list[int] = []
        handshake: tuple[int, int] | None = None
        try:
            command = self.wrap(argv, fds)
            if os.geteuid() == 0:
                info_r, info_w = os.pipe()
                block_r, block_w = os.pipe()
                fds += [info_w, block_r]
                handshake = (info_r, block_w)
                at = command.index("--unshare-user") + 1
                command[at:at] = ["--info-fd", str(info_w), "--userns-block-fd", str(block_r)]
            proc = subprocess.Popen(command, close_fds=True, pass_fds=fds, **popen)  # type: ignore[arg-type]
        except BaseException:
            for fd in (*fds, *(handshake or ())):
                os.close(fd)
            raise
        for fd in fds:
            os.close(fd)
        if handshake is not None:
            self._map_users(proc, *handshake)
        return proc

    def _map_users(self, proc: subprocess.Popen, info_r: int, block_w: int) -> None:
        """Flora as root: the sandbox's user namespace maps uid 0 to root (only setpriv runs as it, to
        switch away) and uid 1000 to ``sandbox_uid``, and the limits are set on the namespace's
        first process; both here, while bwrap waits, then bwrap is let go on."""
        try:
            with os.fdopen(info_r, "rb") as info:
                data = b""
                while b"}" not in data:
                    chunk = info.read1(4096)
                    if not chunk:
                        raise SandboxUnavailable("bwrap ended before its user namespace was ready")
                    data += chunk
                child = json.loads(data[:data.index(b"}") + 1])["child-pid"]
                mapping = f"0 0 1\n{INSIDE_UID} {self.sandbox_uid} 1\n"
                for name in ("uid_map", "gid_map"):
                    with open(f"/proc/{child}/{name}", "w") as handle:
                        handle.write(mapping)
                self.limits.set_on(child)  # before it starts anything: all it starts inherits them
            os.write(block_w, b"1")
        except (OSError, ValueError, KeyError, SandboxUnavailable):
            proc.kill()
            proc.wait()
            raise
        finally:
            os.close(block_w)

    def wrap(self, argv: list[str], fds: list[int]) -> list[str]:
        """``argv`` as a command line that runs it inside the sandbox. The file descriptors the
        command line names are appended to ``fds``: the caller passes them to the child and closes
        them once it has started."""
        filter_fd = seccomp_fd()
        fds.append(filter_fd)
        if self.network_socket:
            argv = [sys.executable, "-I", "-S", str(BRIDGE), EGRESS_SOCKET, str(BRIDGE_PORT), "--", *argv]
        prefix = [] if os.geteuid() == 0 else self.limits.prlimit()
        if os.geteuid() == 0:
            # bwrap leaves the process as uid 0 of the namespace when the map is written from outside,
            # holding only the capabilities to leave it: setpriv, the first thing that runs inside (or
            # the program itself, with drops_root), switches to the unprivileged uid for good
            if not self.drops_root or self.network_socket:
                argv = [_tool("setpriv"), f"--reuid={INSIDE_UID}", f"--regid={INSIDE_UID}", "--clear-groups",
                        "--bounding-set=-all", "--inh-caps=-all", "--", *argv]
            caps = ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                    "--cap-add", "CAP_SETPCAP"]
        else:  # (--disable-userns cannot go with a map written from outside; there seccomp refuses unshare)
            caps = ["--uid", str(INSIDE_UID), "--gid", str(INSIDE_UID), "--cap-drop", "ALL", "--disable-userns"]
        return [*prefix, _tool("bwrap"), *self.bwrap_args(), *caps,
                "--seccomp", str(filter_fd), "--", *argv]

    def bwrap_args(self) -> list[str]:
        """bwrap's namespaces and the file system it builds."""
        args = ["--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--die-with-parent", "--new-session",
                "--hostname", HOSTNAME, "--ro-bind", "/usr", "/usr"]
        args += _system_links()
        for name in ETC_FILES + (ETC_NETWORK_FILES if self.network_socket else ()):
            if os.path.lexists(f"/etc/{name}"):  # each bind costs a mount: none for what is not there
                args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        read_only = self.read_only + ((*python_paths(), str(BRIDGE)) if self.network_socket else ())
        args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
        # the folders above what is bound are made here, open to the sandbox's user (bwrap would
        # copy the host's modes, and /root is 0700), and hold nothing but the way down
        socket_place = [EGRESS_SOCKET] if self.network_socket else []
        for folder in _ancestors([*read_only, str(self.workdir), *socket_place]):
            args += ["--perms", "0755", "--dir", folder]
        for path in dict.fromkeys(read_only):
            args += ["--ro-bind-try", path, path]
        args += ["--bind", str(self.workdir), str(self.workdir), "--chdir", str(self.workdir)]
        if self.network_socket:
            args += ["--ro-bind", self.network_socket, EGRESS_SOCKET]
        return args

    def prepare(self) -> None:
        """Flora as root: give the workspace to the sandbox's uid, group root, mode 0770 (the sandbox
        writes it as its owner; bwrap, still uid 0 of its namespace without capabilities while it
        sets up, enters it through the group; no other user of the machine can)."""
        if os.geteuid() == 0:
            adopt(self.workdir, self.sandbox_uid)
            try:
                if os.stat(self.workdir).st_mode & 0o7777 != 0o770:
                    os.chmod(self.workdir, 0o770)
            except OSError as exc:
                log.warning("could not set the mode of the workspace %s: %s", self.workdir, exc)


def _ancestors(paths: list[str]) -> list[str]:
    """The folders above ``paths`` that the sandbox's file system does not already have, parents first."""
    found: dict[str, None] = {}
    for path in paths:
        parts = Path(path).parts[1:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/" + "/".join(parts[:depth])
            if folder not in ("/usr", "/tmp", "/proc", "/dev", "/etc") and not folder.startswith("/usr/"):
                found[folder] = None
    return list(found)


def adopt(path: Path, uid: int) -> None:
    """Make ``path`` (a file or directory Flora made as root inside a workspace) the sandbox user's."""
    try:
        info = os.lstat(path)
        if info.st_uid != uid or info.st_gid != 0:
            os.lchown(path, uid, 0)
    except OSError as exc:
        log.warning("could not hand %s to the sandbox user %d: %s", path, uid, exc)


def python_paths() -> tuple[str, ...]:
    """What the running Python needs to start inside the sandbox: its installation and its environment."""
    paths = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))
    environment = Path(os.path.abspath(sys.executable)).parent.parent  # a virtual environment, also with -I
    if (environment / "pyvenv.cfg").exists():
        paths.update((os.path.realpath(environment), str(environment)))  # as named, when it is a link
    paths = {p for p in paths if not p.startswith("/usr/") and p != "/usr"}
    # a folder inside another one shown is shown with it: one mount less at every start
    return tuple(sorted(p for p in paths if not any(p.startswith(other + "/") for other in paths)))


def seccomp_fd() -> int:
    """A fresh file descriptor holding the filter (bwrap reads it to its end, so one per start)."""
    fd = os.memfd_create("flora-seccomp", 0)
    os.write(fd, _filter())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@functools.cache
def _filter() -> bytes:
    return seccomp.build_filter()


@functools.cache
def _tool(name: str) -> str:
    found = shutil.which(name, path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    if not found:
        raise SandboxUnavailable(_MISSING.get(name, f"{name} is not installed"))
    return found


@functools.cache
def _system_links() -> tuple[str, ...]:
    args: list[str] = []
    for name in SYSTEM_DIRS:
        host = f"/{name}"
        if os.path.islink(host):
            args += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            args += ["--ro-bind", host, host]
    return tuple(args)


_MISSING = {
    "bwrap": "bubblewrap (bwrap) is not installed: scripts/install.sh installs it (Debian/Ubuntu: "
             "apt-get install bubblewrap)",
    "prlimit": "prlimit (util-linux) is not installed",
    "setpriv": "setpriv (util-linux) is not installed",
}


@functools.cache
def probe(sandbox_uid: int = 65534) -> str:
    """'' when a sandbox can be started here, else why not (probed once per process)."""
    if not seccomp.supported():
        return f"no seccomp filter is defined for the {os.uname().machine} architecture"
    empty = Path(tempfile.mkdtemp(prefix="flora-sandbox-probe-"))
    try:
        sandbox = KernelSandbox(empty, sandbox_uid=sandbox_uid)
        sandbox.prepare()
        proc = sandbox.launch(["/bin/true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, cwd="/")
        _, stderr = proc.communicate(timeout=20)
    except SandboxUnavailable as exc:
        return str(exc)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap could not be started: {exc}"
    finally:
        empty.rmdir()
    if proc.returncode != 0:
        detail = stderr.decode(errors="replace").strip().splitlines()
        hint = ("; the kernel must allow user namespaces (sysctl kernel.unprivileged_userns_clone=1 and "
                "user.max_user_namespaces > 0, or an AppArmor profile that permits bwrap)")
        return f"bwrap failed: {detail[-1] if detail else 'exit ' + str(proc.returncode)}{hint}"
    return ""


@functools.cache
def version() -> str:
    """bwrap's version line, asked once per process (``/health`` reports it on every probe)."""
    try:
        out = subprocess.run([_tool("bwrap"), "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError, SandboxUnavailable):
        return ""
    return out.strip()


def status(isolation: str, sandbox_uid: int = 65534) -> dict:
    """The isolation in force, for ``--status`` and ``/health``."""
    if isolation == "none":
        return {"isolation": "none", "state": "off", "reason": "tools.isolation is 'none': tools run unconfined"}
    reason = probe(sandbox_uid)
    if reason:
        return {"isolation": "kernel", "state": "unavailable", "reason": reason}
    return {"isolation": "kernel", "state": "ready", "mechanism": version() or "bubblewrap",
            "seccomp": True, "network": "none (egress proxy where enabled)"}


def warn_at_start(config, registry) -> None:
    """Say at start what confines the tools that run programs, when one of them is installed."""
    if not any(registry.has_executable(name) for name in ("shell", "python_exec")):
        return
    tools = config.tools
    if tools.isolation == "none":
        log.warning("tools.isolation is 'none': shell and python_exec run programs UNCONFINED, as Flora's own "
                    "user, with Flora's files and network in reach; use it only where every person is trusted")
        return
    reason = probe(tools.sandbox_uid)
    if reason:
        log.error("the tool sandbox cannot be set up (%s): shell and python_exec will refuse to run anything "
                  "until it can (scripts/install.sh installs bubblewrap)", reason)
