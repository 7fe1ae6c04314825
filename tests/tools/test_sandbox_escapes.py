"""Escape attempts against the kernel sandbox, each run with the friendly layers switched off.

The attacker here holds a full shell inside the sandbox (``sh -c`` through the same Jail the
``shell`` tool builds, with no command policy in front) and arbitrary Python through
``python_exec`` with its audit hook disabled (``tools.python.guard: false``); the Python attempts
run once more with the hook on. Around them lies an estate laid out as a Flora installation's:
a data directory with the API keys, the task store, the Chroma files and the config, another
person's workspace with their memories, a copy of Flora's code, a process environment holding a
secret, a loopback listener standing for Flora's actor ports, and the real Redis and RabbitMQ.

What decides, after every attempt, is the estate itself, not the attempt's own report:
- the canary token is in no output;
- no file outside the person's workspace was created, changed or removed;
- the loopback listener saw no connection, and Redis holds no key the attempt tried to set;
- nothing the attempt started is still running.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
import uuid
from pathlib import Path

import pytest
import redis

from capabilities.base import ExecutionContext
from capabilities.tools.shell import shell_jail
from capabilities.tools.workspace import Workspace
from tests.conftest import REDIS_URL
from tests.tools.sandbox_support import TcpServer, Tools, wait_until_gone

TOKEN = f"flora-escape-canary-{uuid.uuid4().hex[:12]}"
ENV_SECRET = "FLORA_ESCAPE_SECRET"


class Estate:
    """A Flora installation's secrets around one person's workspace, and the checks that decide."""

    def __init__(self, base: Path) -> None:
        self.data = base / "data"
        self.workspaces = self.data / "workspace"
        self.tools = Tools(self.workspaces, python={"guard": False})
        self.guarded = Tools(self.workspaces)
        self.keys = self.data / "keys.yaml"
        self.store = self.data / "flora.db"
        self.chroma = self.data / "chroma" / "chroma.sqlite3"
        self.config = base / "flora.yaml"
        self.code = base / "code" / "main.py"
        self.bob = self.workspaces / "acme" / "bob" / "memories.txt"
        self.data.mkdir(parents=True)
        self.keys.write_text(f"tenants:\n  acme:\n    key: {TOKEN}\n")
        for database in (self.store, self.chroma):
            database.parent.mkdir(parents=True, exist_ok=True)
            with sqlite3.connect(database) as db:
                db.execute("create table secrets (value text)")
                db.execute("insert into secrets values (?)", (TOKEN,))
        self.config.write_text(f"llm:\n  api_key: {TOKEN}\n")
        self.code.parent.mkdir()
        self.code.write_text(f"SECRET = '{TOKEN}'\n")
        self.bob.parent.mkdir(parents=True)
        self.bob.write_text(f"bob's allergy: {TOKEN}\n")
        self.alice = self.tools.workspace
        self.listener = TcpServer()
        self.redis = redis.Redis.from_url(REDIS_URL)
        self.tools("python_exec", code="pass")  # Flora's own first-run cache (the compiled bootstrap)
        self.snapshot = self._files()

    def targets(self) -> dict[str, str]:
        return {"keys": str(self.keys), "store": str(self.store), "chroma": str(self.chroma),
                "config": str(self.config), "code": str(self.code), "bob": str(self.bob),
                "environ": f"/proc/{os.getpid()}/environ"}

    def _files(self) -> dict[str, str]:
        """Every file of the estate outside alice's workspace, with its content's hash."""
        found = {}
        for root, _, names in os.walk(self.data.parent):
            if Path(root) == self.alice or self.alice in Path(root).parents:
                continue
            for name in names:
                path = Path(root) / name
                try:
                    found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
                except OSError:
                    found[str(path)] = "unreadable"
        return found

    def check(self, output: str, redis_key: str = "") -> None:
        assert TOKEN not in output, f"the canary leaked: {output[:500]!r}"
        now = self._files()
        changed = {path for path in set(now) | set(self.snapshot) if now.get(path) != self.snapshot.get(path)}
        changed = {path for path in changed if not path.endswith(("-journal", "-wal", "-shm"))}
        assert not changed, f"files outside the workspace changed: {sorted(changed)}"
        assert self.listener.connections == 0, "the loopback listener was reached"
        if redis_key:
            assert not self.redis.exists(redis_key), "Redis was written from the sandbox"

    def shell(self, script: str) -> str:
        context = ExecutionContext(task_id="t", user_id="alice", tenant_id="acme", config=self.tools.config)
        workspace = Workspace.for_context(context)
        jail = shell_jail(self.tools.config.tools, workspace, context)
        result = jail.run([["/bin/sh", "-c", script]], timeout_s=30)
        assert result.isolated
        return result.stdout + result.stderr

    def python(self, code: str, guarded: bool = False) -> str:
        result = (self.guarded if guarded else self.tools)("python_exec", code=code)
        assert result["isolated"]
        return result["stdout"] + result["stderr"]


@pytest.fixture(scope="module")
def estate(tmp_path_factory):
    os.environ[ENV_SECRET] = TOKEN  # in the environment of this process, the one the tools start from
    estate = Estate(tmp_path_factory.mktemp("estate"))
    try:
        yield estate
    finally:
        estate.listener.close()
        os.environ.pop(ENV_SECRET, None)


# -- reading what lies outside, every way a shell knows ------------------------------------------------

READS = {
    "cat": "cat {t}",
    "head": "head -c 100000 {t}",
    "dd": "dd if={t} status=none",
    "copy-in": "cp {t} ./copied && cat ./copied",
    "symlink": "ln -sf {t} ./lnk && cat ./lnk",
    "hardlink": "ln {t} ./hard 2>&1; cat ./hard",
    "tar": "tar cf - {t} 2>&1",
    "root-link": "cat /proc/self/root{t}",
    "pid1-root": "cat /proc/1/root{t}",
    "cwd-climb": "cd / && cat .{t}",
    "dotdot": "cat ../../../../../../../../..{t}",
    "find": "find / -name $(basename {t}) -exec cat {{}} + 2>/dev/null",
    "perl": "perl -e 'open F, shift or die $!; print <F>' {t}",
    "awk": "awk '{{print}}' {t}",
    "sed": "sed -n p {t}",
    "base64": "base64 {t}",
    "sqlite-attach": "sqlite3 :memory: \"attach '{t}' as x; select * from x.secrets;\"",
    "python-open": "python3 -c \"print(open('{t}','rb').read())\"",
    "git-show": "git --no-pager show --no-index {t} 2>&1; git diff --no-index /dev/null {t}",
    "zip": "zip -q - {t} | base64",
}


@pytest.mark.parametrize("target", ["keys", "store", "chroma", "config", "code", "bob", "environ"])
@pytest.mark.parametrize("method", sorted(READS))
def test_nothing_outside_the_workspace_can_be_read_from_a_shell(estate, method, target):
    estate.check(estate.shell(READS[method].format(t=estate.targets()[target])))


@pytest.mark.parametrize("target", ["keys", "store", "chroma", "config", "code", "bob", "environ"])
def test_nothing_outside_the_workspace_can_be_read_from_unguarded_python(estate, target):
    path = estate.targets()[target]
    code = (f"import os\nfor attempt in (lambda: open({path!r}, 'rb').read(),\n"
            f"                lambda: os.read(os.open({path!r}.lstrip('/'), os.O_RDONLY, dir_fd=os.open('/', os.O_RDONLY)), 10**6)):\n"
            f"    try:\n        print(attempt())\n    except OSError as exc:\n        print('refused', exc)\n")
    estate.check(estate.python(code))
    estate.check(estate.python(code, guarded=True))


def test_grep_over_the_whole_file_system_finds_no_secret(estate):
    estate.check(estate.shell(f"grep -r -a -l {TOKEN[:20]} / 2>/dev/null; echo done"))


def test_the_sandbox_sees_only_the_system_and_its_workspace(estate):
    listing = estate.shell("ls -a / /proc | tr '\\n' ' '; echo; ls -a ..; ls /sys 2>&1; ls /root 2>&1")
    for absent in ("keys.yaml", "flora.db", "chroma", "bob", "home", "var", "opt", "srv"):
        assert f" {absent} " not in f" {listing} ", listing
    estate.check(listing)


# -- the person's own world: another person's workspace -----------------------------------------------

@pytest.mark.parametrize("script", [
    "ls -la {ws}/acme/bob",
    "cat {ws}/acme/bob/memories.txt",
    "ls -R {ws}",
    "find / -path '*bob*' 2>/dev/null",
    "rm -rf {ws}/acme/bob",
    "echo pwned > {ws}/acme/bob/memories.txt",
])
def test_another_persons_workspace_is_not_there(estate, script):
    estate.check(estate.shell(script.format(ws=estate.workspaces)))


# -- writing outside ---------------------------------------------------------------------------------

@pytest.mark.parametrize("script", [
    "touch {data}/pwned",
    "echo x >> {keys}",
    "mkdir -p {data}/pwned_dir",
    "cp /bin/sh {data}/sh",
    "ln -s /etc/passwd {data}/lnk",
    "rm -f {keys}",
    "truncate -s 0 {store}",
    "sqlite3 {store} \"delete from secrets\"",
    "sqlite3 :memory: \"vacuum into '{data}/copy.db'\"",
    "touch /usr/pwned; touch /etc/pwned",
    "echo c > /proc/sysrq-trigger",
    "echo '|/bin/sh' > /proc/sys/kernel/core_pattern",
])
def test_nothing_outside_the_workspace_can_be_written(estate, script):
    estate.check(estate.shell(script.format(data=estate.data, keys=estate.keys, store=estate.store)))


@pytest.mark.parametrize("guarded", [False, True])
@pytest.mark.parametrize("code", [
    "open({data!r} + '/pwned', 'w').write('x')",
    "import sqlite3; sqlite3.connect(':memory:').execute(\"vacuum into '\" + {data!r} + \"/copy.db'\")",
    "import sqlite3; c = sqlite3.connect(':memory:'); c.execute(\"attach '\" + {store!r} + \"' as x\"); "
    "print(c.execute('select * from x.secrets').fetchall()); c.execute('delete from x.secrets')",
    "import os; fd = os.open('/', os.O_RDONLY); os.open({data!r}.lstrip('/') + '/pwned', os.O_CREAT | os.O_WRONLY, "
    "dir_fd=fd)",
    "import shutil; shutil.rmtree({bob_dir!r})",
])
def test_python_cannot_write_outside(estate, code, guarded):
    estate.check(estate.python(code.format(data=str(estate.data), store=str(estate.store),
                                           bob_dir=str(estate.bob.parent)), guarded=guarded))


# -- the network: Flora's own services and everything else on this machine ----------------------------

def _network_scripts(estate) -> list[str]:
    port = estate.listener.port
    key = f"flora-escape-{TOKEN}"
    return [
        f"curl -s -m 3 http://127.0.0.1:{port}/ 2>&1",
        f"wget -q -T 3 -O - http://127.0.0.1:{port}/ 2>&1",
        f"curl -s -m 3 http://localhost:{port}/ 2>&1",
        f"curl -s -m 3 'http://[::1]:{port}/' 2>&1",
        f"curl -s -m 3 http://0.0.0.0:{port}/ 2>&1",
        f"perl -MIO::Socket::INET -e 'IO::Socket::INET->new(\"127.0.0.1:{port}\") or die \"no: $!\"'",
        f"printf 'SET {key} x\\r\\n' | perl -MIO::Socket::INET -e '$s=IO::Socket::INET->new(\"127.0.0.1:6379\") "
        f"or die $!; print $s <STDIN>; print <$s>'",
        "curl -s -m 3 http://127.0.0.1:15672/ 2>&1; curl -s -m 3 telnet://127.0.0.1:5672 2>&1",
        "for p in 1900 1901 1902 1903 8000 8080 8765 11434; do curl -s -m 1 http://127.0.0.1:$p/; done; echo",
        f"curl -s -m 3 http://$(hostname -I 2>/dev/null | cut -d' ' -f1):{port}/ 2>&1",
        "ip addr 2>&1; cat /proc/net/tcp 2>&1",
        "curl -s -m 3 http://169.254.169.254/latest/meta-data/ 2>&1",
        f"git ls-remote http://127.0.0.1:{port}/repo 2>&1",
    ]


@pytest.mark.parametrize("index", range(13))
def test_no_loopback_service_can_be_reached_from_a_shell(estate, index):
    estate.check(estate.shell(_network_scripts(estate)[index]), redis_key=f"flora-escape-{TOKEN}")


@pytest.mark.parametrize("guarded", [False, True])
@pytest.mark.parametrize("address", ["('127.0.0.1', {port})", "('127.0.0.1', 6379)", "('127.0.0.1', 5672)",
                                     "('::1', {port})", "('169.254.169.254', 80)"])
def test_python_cannot_reach_any_address(estate, address, guarded):
    target = address.format(port=estate.listener.port)
    family = "socket.AF_INET6" if "::1" in target else "socket.AF_INET"
    code = (f"import socket\ns = socket.socket({family})\ns.settimeout(3)\n"
            f"try:\n    s.connect({target})\n    s.sendall(b'SET flora-escape-{TOKEN} x\\r\\n')\n    print('CONNECTED')\n"
            f"except OSError as exc:\n    print('refused', exc)\n")
    output = estate.python(code, guarded=guarded)
    assert "CONNECTED" not in output
    estate.check(output, redis_key=f"flora-escape-{TOKEN}")


@pytest.mark.parametrize("guarded", [False, True])
def test_no_abstract_or_host_unix_socket_is_reachable(estate, guarded):
    code = ("import socket, os\nfor name in ('\\0flora', '/run/redis/redis-server.sock', '/var/run/docker.sock', "
            "'/tmp/.X11-unix/X0'):\n    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect(name)\n"
            "        print('CONNECTED', name)\n    except OSError as exc:\n        print('refused', exc)\n")
    output = estate.python(code, guarded=guarded)
    assert "CONNECTED" not in output
    estate.check(output)


# -- leaving the sandbox: namespaces, mounts, ptrace, privileges, wrappers -----------------------------

@pytest.mark.parametrize("script", [
    "unshare -r cat {keys}",
    "unshare -rm sh -c 'mount --bind / /mnt; cat /mnt{keys}'",
    "nsenter -t 1 -a cat {keys}",
    "nsenter --target 1 --mount --pid cat {keys}",
    "chroot / cat {keys}",
    "mount -t proc proc /tmp 2>&1; cat /tmp/1/root{keys}",
    "setarch x86_64 -R cat {keys}",
    "taskset 1 cat {keys}",
    "flock /tmp/l -c 'cat {keys}'",
    "script -qc 'cat {keys}' /dev/null",
    "prlimit --nofile=100 cat {keys}",
    "timeout 5 cat {keys}",
    "env -i cat {keys}",
    "nice -n 5 cat {keys}",
    "setsid cat {keys}",
    "su -c 'cat {keys}' 2>&1; sudo cat {keys} 2>&1",
    "busybox cat {keys} 2>&1",
    "tar -c --to-command='cat {keys}' -f /dev/null /etc/hosts 2>&1",
    "tar --use-compress-prog='sh -c \"cat {keys}\"' -cf x.tgz /etc/hosts 2>&1",
    "tar -cf /dev/null /etc/hosts --checkpoint=1 --checkpoint-action=exec='cat {keys}' 2>&1",
    "zip -q -T -TT 'sh -c \"cat {keys}\"' z.zip /etc/hosts 2>&1",
    "git init -q r && cd r && git config core.pager 'cat {keys}' && git -p log 2>&1",
    "git init -q r2 && cd r2 && git config core.fsmonitor 'cat {keys} >&2' && git status 2>&1",
    "printf 'all:\\n\\tcat {keys}\\n' > Makefile && make 2>&1",
    "perl -e 'exec \"cat\", \"{keys}\"'",
    "python3 -c \"import os; os.system('cat {keys}')\"",
    "python3 -c \"import ctypes; l = ctypes.CDLL(None); print(l.syscall(272, 0x10000000), l.syscall(165, 0, 0, 0, 0, 0))\"",
    "cat /proc/self/uid_map; cat /proc/self/status | grep -i -E '^(cap|nonewprivs|seccomp)'",
])
def test_no_way_out_of_the_namespaces_from_a_shell(estate, script):
    estate.check(estate.shell(script.format(keys=estate.keys)))


def test_the_program_is_an_unprivileged_user_without_capabilities(estate):
    output = estate.shell("id -u; cat /proc/self/uid_map; grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' "
                          "/proc/self/status")
    lines = output.split()
    assert lines[0] == "1000"
    mapping = output.splitlines()[1:]
    own = [line.split() for line in mapping if line.split()[0] == "1000"]
    assert own and own[0][1] != "0", f"uid 1000 is root outside: {mapping}"  # never root on the host
    assert "CapEff:\t0000000000000000" in output and "CapBnd:\t0000000000000000" in output
    assert "NoNewPrivs:\t1" in output and "Seccomp:\t2" in output


def test_python_runs_as_the_same_unprivileged_user(estate):
    output = estate.python("import os; print(os.getuid(), os.geteuid(), os.getgid(), os.getgroups()); "
                           "print(open('/proc/self/uid_map').read()); print(open('/proc/self/status').read())")
    assert output.split()[:3] == ["1000", "1000", "1000"], output
    own = [line.split() for line in output.splitlines() if line.split()[:1] == ["1000"] and len(line.split()) == 3]
    assert own and own[0][1] != "0", output
    assert "CapEff:\t0000000000000000" in output and "NoNewPrivs:\t1" in output and "Seccomp:\t2" in output


@pytest.mark.parametrize("call", [
    "libc.syscall(272, 0x10000000)",  # unshare(CLONE_NEWUSER)
    "libc.syscall(308, 0, 0)",  # setns
    "libc.syscall(165, b'none', b'/tmp', b'tmpfs', 0, 0)",  # mount
    "libc.syscall(101, 16, 1, 0, 0)",  # ptrace(PTRACE_ATTACH, 1)
    "libc.syscall(250, 0, 0)",  # keyctl
    "libc.syscall(321, 0, 0, 0)",  # bpf
    "libc.syscall(298, 0, 0, 0, 0, 0)",  # perf_event_open
    "libc.syscall(425, 1, 0)",  # io_uring_setup
    "libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)",  # clone(CLONE_NEWUSER)
    "libc.syscall(0x40000000 | 39)",  # getpid through the x32 ABI
    "libc.syscall(161, b'/')",  # chroot
    "libc.syscall(155, b'/', b'/')",  # pivot_root
])
def test_the_seccomp_filter_refuses_the_tools_of_escape(estate, call):
    if os.uname().machine != "x86_64":
        pytest.skip("system call numbers of x86-64")
    code = ("import ctypes, sys\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            f"result = {call}\nprint(result, ctypes.get_errno())\n")
    output = estate.python(code)
    result, errno = output.split()[-2:]
    assert result == "-1" and errno in ("1", "38"), output  # EPERM, or ENOSYS
    estate.check(output)


@pytest.mark.parametrize("code", [
    # a native module imported afresh is not the one a bootstrap patched
    "import importlib, sys; sys.modules.pop('_posixsubprocess', None); import _posixsubprocess; "
    "import subprocess; print(subprocess.run(['cat', {keys!r}], capture_output=True).stdout)",
    "import _xxsubinterpreters as s; i = s.create(); s.run_string(i, 'print(open(' + repr({keys!r}) + ').read())')",
    "import os; os.execv('/bin/cat', ['cat', {keys!r}])",
    "import os; print(os.listdir('/proc')); print([open('/proc/%s/environ' % p, 'rb').read() for p in "
    "os.listdir('/proc') if p.isdigit()])",
    "import os; os.setuid(0); print(open({keys!r}).read())",
    "import os; os.chroot('/')",
    "import os; os.kill({flora_pid}, 9)",
    "import os; os.kill(-1, 9)",
    "print(open('/proc/{flora_pid}/cmdline', 'rb').read(), open('/proc/{flora_pid}/environ', 'rb').read())",
    "import ctypes; libc = ctypes.CDLL(None); libc.system(b'cat ' + {keys!r}.encode())",
])
def test_unguarded_python_stays_inside(estate, code):
    estate.check(estate.python(code.format(keys=str(estate.keys), flora_pid=os.getpid())))
    assert os.path.exists(estate.keys)  # and Flora's process was not killed: this test still runs


# -- limits from the kernel and nothing left behind --------------------------------------------------

def test_a_fork_bomb_is_held_by_the_process_limit(estate):
    code = ("import os, time\nmade = 0\ntry:\n    for _ in range(5000):\n        if os.fork() == 0:\n"
            "            time.sleep(60)\n            os._exit(0)\n        made += 1\n"
            "except OSError as exc:\n    print('held at', made, exc.errno)\n")
    output = estate.python(code)
    assert output.startswith("held at"), output
    assert int(output.split()[2]) <= estate.tools.config.tools.python.processes
    estate.check(output)
    shell = estate.shell("for i in $(seq 2000); do sleep 60 & done; echo never")
    assert "never" not in shell  # the shell itself could not fork past the limit
    if os.geteuid() == 0:  # every process the bombs made died with their runs
        uid = estate.tools.config.tools.sandbox_uid
        assert wait_until(lambda: not _processes_of(uid)), _processes_of(uid)


def _processes_of(uid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                found.append(int(entry))
        except OSError:
            continue
    return found


def wait_until(condition, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_background_program_dies_with_the_run(estate):
    marker = f"flora-escape-left-{uuid.uuid4().hex[:8]}"
    estate.shell(f"setsid nohup sh -c 'sleep 300 # {marker}' >/dev/null 2>&1 & echo started")
    assert wait_until_gone(marker) == []


def test_memory_and_file_size_are_limited_by_the_kernel(estate):
    output = estate.python("x = bytearray(8 * 1024 ** 3)")
    assert "MemoryError" in output
    big = estate.shell("head -c 200000000 /dev/zero > big; echo $?; stat -c %s big")
    assert int(big.split()[1]) <= estate.tools.config.tools.max_file_bytes
    os.remove(estate.alice / "big")


def test_tmp_is_private_and_small(estate):
    output = estate.shell("head -c 100000000 /dev/zero > /tmp/fill 2>&1; echo $?; ls -la /tmp")
    assert output.split()[0] != "0"
    estate.check(output)
