"""What a python_exec child runs first: read the code, install the guard, run the code.

Started as ``python -I [-S] python_bootstrap.py WORKSPACE NETWORK READ_PATHS CPU_S AS_BYTES NOFILE
NPROC FSIZE GUARD DROP`` with the code on stdin, in the workspace, by :mod:`capabilities.tools.python_exec`. It
imports nothing of Flora. It sets the resource limits first (hard and soft, so the code cannot
raise them again), then reads the code, then installs the guard.

The guard is an audit hook (PEP 578). It refuses, with ``PermissionError`` and a sentence saying
why:

- network, unless NETWORK is ``1``: creating an internet socket, connect, bind, sendto, and
  name look-ups (a Unix socket can be made, as ``socketpair`` needs, but not connected or bound);
- starting programs or processes: ``subprocess``, ``os.system``, ``os.exec*``, ``os.posix_spawn``,
  ``os.fork``, ``os.forkpty``, and signals to other processes;
- native escape hatches: ``ctypes``/``cffi``, ``gc.get_objects`` and friends, replacing a
  function's code or defaults, ``sys.settrace``/``sys.setprofile``;
- changing anything outside the workspace: ``open`` for writing, remove, rename, mkdir, chmod,
  link, symlink (where the link is made), truncate, utime;
- reading outside the workspace, Python's own files (``sys.path``, the prefixes), a few system
  files that libraries read (time zones, CA certificates, CPU and memory counts) and READ_PATHS:
  Flora's data, its config, other users' workspaces and other processes' ``/proc`` are out of reach.

The hook holds everything it uses as default arguments bound when it is made (C functions,
immutable sets), so patching ``os`` or ``builtins`` from the code does not change its decisions.
An audit hook is Python code guarding Python code: a friendly early refusal with a readable
reason, never the boundary. The boundary is the kernel sandbox the process runs in
(:mod:`capabilities.tools.kernel_sandbox`); with GUARD ``0`` (``tools.python.guard: false``) the
hook is not installed at all, and the suite shows every escape still fails.
"""

import os
import sys


def _install(workspace, network, read_roots):
    import _stat

    write_events = frozenset({"os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate",
                              "os.utime", "os.chflags", "os.lchflags", "os.setxattr", "os.removexattr",
                              "os.link", "os.rename", "os.symlink", "shutil.rmtree", "os.mkfifo", "os.mknod"})
    two_paths = frozenset({"os.link", "os.rename"})
    process_events = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                                "os.fork", "os.forkpty", "os.startfile", "pty.spawn", "os.pidfd_open"})
    introspection = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.settrace",
                               "sys.setprofile", "ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata",
                               "ctypes.call_function", "sys.remote_exec", "sys._current_frames"})
    net_events = frozenset({"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg",
                            "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
                            "socket.getnameinfo", "socket.gethostbyname_ex"})
    banned_imports = frozenset({"_ctypes", "ctypes", "cffi", "_cffi_backend"})
    exact_reads = frozenset({"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/etc/localtime",
                             "/etc/mime.types", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat",
                             "/etc/nsswitch.conf", "/etc/host.conf"})
    write_ok = frozenset({"/dev/null"})
    protected = frozenset({"__code__", "__defaults__", "__kwdefaults__", "__globals__", "__closure__"})
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    own_proc = "/proc/%d" % os.getpid()

    def real(path, _getcwd=os.getcwd, _lstat=os.lstat, _readlink=os.readlink, _islnk=_stat.S_ISLNK,
             _fsdecode=os.fsdecode, _OSError=OSError, _list=list, _len=len):
        """The resolved absolute path, symlinks followed (no Python-level helpers that code could patch)."""
        path = _fsdecode(path)
        if not path.startswith("/"):
            path = _getcwd() + "/" + path
        todo = [p for p in path.split("/") if p][::-1]
        done = []
        hops = 0
        while todo:
            part = todo.pop()
            if part == ".":
                continue
            if part == "..":
                if done:
                    done.pop()
                continue
            current = "/" + "/".join(done + [part])
            try:
                is_link = _islnk(_lstat(current).st_mode)
            except _OSError:
                is_link = False
            if is_link and hops < 40:
                hops += 1
                target = _readlink(current)
                if target.startswith("/"):
                    done = []
                todo.extend([p for p in target.split("/") if p][::-1])
                continue
            done.append(part)
        return "/" + "/".join(done)

    def inside(path, roots, _real=real):
        resolved = _real(path)
        for root in roots:
            if resolved == root or resolved.startswith(root + "/"):
                return True
        return False

    def guard(event, args, _ws=(workspace,), _net=network, _reads=tuple(read_roots) + (workspace, own_proc),
              _exact=exact_reads, _write_ok=write_ok, _we=write_events, _two=two_paths, _pe=process_events,
              _ie=introspection, _ne=net_events, _bi=banned_imports, _prot=protected, _wf=write_flags,
              _real=real, _inside=inside, _pid=os.getpid(), _isinstance=isinstance, _str=str, _bytes=bytes,
              _Denied=PermissionError, _FunctionType=type(_install), _fspath=os.fspath):
        if event == "open":
            path, mode, flags = args
            if not _isinstance(path, (_str, _bytes)):
                return  # an already open file descriptor
            if mode is None:
                writes = (flags & _wf) != 0
            else:
                writes = "w" in mode or "a" in mode or "x" in mode or "+" in mode
            if writes:
                if _real(path) not in _write_ok and not _inside(path, _ws):
                    raise _Denied(f"python_exec may only write inside the workspace, not {path!r}")
            elif _real(path) not in _exact and not _inside(path, _reads):
                raise _Denied(f"python_exec may not read {path!r}: only the workspace and Python's own files "
                              "can be read")
        elif event in _we:
            paths = (args[1],) if event == "os.symlink" else (args[0], args[1]) if event in _two else (args[0],)
            for path in paths:
                if _isinstance(path, (_str, _bytes)) and not _inside(path, _ws):
                    raise _Denied(f"python_exec may only change files inside the workspace, not {path!r}")
        elif event == "sqlite3.connect":  # a database file is opened by SQLite's C code, past the open hook
            database = args[0]
            if not _isinstance(database, (_str, _bytes)):
                database = _fspath(database)
            if database not in (":memory:", b":memory:", "", b""):
                if database[:5] in ("file:", b"file:") or not _inside(database, _ws):
                    raise _Denied(f"python_exec may only open databases inside the workspace, not {database!r}")
        elif event in _pe:
            raise _Denied("python_exec runs Python code only: starting programs or processes is not allowed "
                          "(use the shell tool)")
        elif event in ("os.kill", "os.killpg"):
            if args[0] not in (_pid, 0):
                raise _Denied("python_exec may not send signals to other processes")
        elif event in _ie:
            raise _Denied(f"python_exec does not allow {event}")
        elif event == "import":
            if args[0] in _bi:
                raise _Denied(f"python_exec does not allow importing {args[0]} (native code could bypass its limits)")
        elif event == "object.__setattr__":
            if _isinstance(args[0], _FunctionType) and args[1] in _prot:
                raise _Denied(f"python_exec does not allow replacing a function's {args[1]}")
        elif not _net:
            if event in _ne:
                raise _Denied("python_exec has no network access (tools.python.network is false)")
            if event == "socket.__new__" and args[1] != 1:  # AF_UNIX may be created, never connected
                raise _Denied("python_exec has no network access (tools.python.network is false)")

    sys.addaudithook(guard)


def _limit(cpu_s, memory_bytes, open_files, processes, file_bytes):
    """The resource limits, set before the code runs (and before the guard, which would refuse nothing here)."""
    import resource

    for which, value in ((resource.RLIMIT_CPU, cpu_s), (resource.RLIMIT_AS, memory_bytes),
                         (resource.RLIMIT_NOFILE, open_files), (resource.RLIMIT_NPROC, processes),
                         (resource.RLIMIT_FSIZE, file_bytes)):
        if value:
            resource.setrlimit(which, (value, value))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _drop_root(uid=1000):
    """Started as uid 0 of the sandbox's user namespace (Flora runs as root): become the sandbox's
    unprivileged user before anything else, for good (real, effective and saved ids; no groups)."""
    if os.getuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        # a change of uid leaves the process undumpable, its /proc/self files root's: make it an
        # ordinary process of its user again (and forget ctypes, so the guard still sees its import)
        import ctypes

        ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE
        for name in [n for n in sys.modules if n == "ctypes" or n.startswith(("ctypes.", "_ctypes"))]:
            del sys.modules[name]


def main():
    if sys.argv[10:11] == ["1"]:  # started inside the kernel sandbox by a Flora running as root
        _drop_root()
    workspace, network, extra = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
    guarded = sys.argv[9:10] != ["0"]
    _limit(*(int(v) for v in sys.argv[4:9]))
    code = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    sys.stdin = open(os.devnull)
    sys.dont_write_bytecode = True
    sys.argv = ["<python_exec>"]
    sys.path.append(workspace)
    if guarded:
        _guard(workspace, network, extra)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    exec(compile(code, "<python_exec>", "exec"), namespace)


def _guard(workspace, network, extra):
    roots = {os.path.realpath(p) for p in sys.path if p}
    roots.update(os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix))
    roots.update(os.path.realpath(p) for p in ("/usr/share/zoneinfo", "/etc/ssl", "/usr/lib/ssl",
                                              "/etc/pki", "/usr/share/ca-certificates",
                                              "/sys/devices/system/cpu", "/sys/fs/cgroup"))
    roots.update(os.path.realpath(p) for p in extra.split(os.pathsep) if p)
    roots.discard("/")
    import _posixsubprocess

    def fork_exec(*args, **kwargs):
        raise PermissionError("python_exec runs Python code only: starting programs or processes is not allowed "
                              "(use the shell tool)")

    _posixsubprocess.fork_exec = fork_exec  # the unaudited way under subprocess; Popen itself is refused too
    _install(os.path.realpath(workspace), network, sorted(roots))


if __name__ == "__main__":
    main()
