"""The seccomp filter every sandboxed program runs under: a classic BPF program, built here.

The kernel checks each system call against it before the call runs. The filter:

- kills the process outright when a call comes through another ABI than the machine's own
  (``int 0x80`` on x86-64 reaches the 32-bit table, where the numbers mean other calls);
- refuses (``EPERM``) what a confined program has no business doing and what has been the way
  out of containers: namespaces (``unshare``, ``setns``, ``clone`` with any ``CLONE_NEW*``
  flag), mounts (the old and the new mount API, ``pivot_root``, ``chroot``), ``ptrace`` and
  reading or writing another process's memory, the kernel keyrings, ``bpf``,
  ``perf_event_open``, ``userfaultfd``, ``io_uring`` (its operations pass no filter), opening
  files by handle, loading kernel modules and kexec, setting clocks or the host name,
  ``syslog``, ``acct``, ``quotactl``, swap and reboot, and the ioctls that push keystrokes into
  a terminal (``TIOCSTI``, ``TIOCLINUX``);
- answers ``clone3`` with ``ENOSYS`` (its flags sit in memory a filter cannot read; C
  libraries then fall back to ``clone``, whose flags the filter does check);
- on x86-64, refuses every call of the x32 ABI (numbers with bit 30 set).

Everything else is allowed: the namespaces, the read-only mounts and the unprivileged user
around the program are what confine it; the filter takes away the tools for undoing them.
It is handed to bubblewrap (``--seccomp FD``), which installs it, with ``no_new_privs``, as the
last step before it starts the program.
"""

from __future__ import annotations

import platform
import struct

# seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH, _ARG0_LOW, _ARG1_LOW = 0, 4, 16, 24

_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ, _JGE, _JSET = 0x15, 0x35, 0x45  # BPF_JMP | BPF_{JEQ,JGE,JSET} | BPF_K
_RET = 0x06  # BPF_RET | BPF_K

RET_KILL_PROCESS = 0x80000000
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
EPERM, ENOSYS = 1, 38

CLONE_NEW_FLAGS = (0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
                   | 0x20000000 | 0x40000000)  # TIME, NS, CGROUP, UTS, IPC, USER, PID, NET
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
X32_SYSCALL_BIT = 0x40000000

# The calls refused, by name: one list, numbered per architecture below.
DENIED = (
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "ptrace", "process_vm_readv", "process_vm_writev",
    "pidfd_getfd", "kcmp", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "open_by_handle_at", "name_to_handle_at",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "fanotify_init",
    "lookup_dcookie", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
    "setdomainname", "syslog", "acct", "quotactl", "swapon", "swapoff", "reboot",
)
DENIED_X86_ONLY = ("iopl", "ioperm", "uselib")

_X86_64 = {
    "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
    "kcmp": 312, "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321, "perf_event_open": 298,
    "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_by_handle_at": 304, "name_to_handle_at": 303, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "kexec_load": 246, "kexec_file_load": 320, "fanotify_init": 300, "lookup_dcookie": 212,
    "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305, "adjtimex": 159, "sethostname": 170,
    "setdomainname": 171, "syslog": 103, "acct": 163, "quotactl": 179, "swapon": 167, "swapoff": 168,
    "reboot": 169, "iopl": 172, "ioperm": 173, "uselib": 134,
    "clone": 56, "clone3": 435, "ioctl": 16,
}
_AARCH64 = {
    "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438,
    "kcmp": 272, "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280, "perf_event_open": 241,
    "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_by_handle_at": 265, "name_to_handle_at": 264, "init_module": 105, "finit_module": 273,
    "delete_module": 106, "kexec_load": 104, "kexec_file_load": 294, "fanotify_init": 262, "lookup_dcookie": 18,
    "settimeofday": 170, "clock_settime": 112, "clock_adjtime": 266, "adjtimex": 171, "sethostname": 161,
    "setdomainname": 162, "syslog": 116, "acct": 89, "quotactl": 60, "swapon": 224, "swapoff": 225,
    "reboot": 142,
    "clone": 220, "clone3": 435, "ioctl": 29,
}
# machine name -> (AUDIT_ARCH_* value, syscall numbers, whether the x32 ABI exists there)
ARCHITECTURES = {
    "x86_64": (0xC000003E, _X86_64, True),
    "aarch64": (0xC00000B7, _AARCH64, False),
}


class UnsupportedArchitecture(RuntimeError):
    pass


def supported(machine: str | None = None) -> bool:
    return (machine or platform.machine()) in ARCHITECTURES


def build_filter(machine: str | None = None) -> bytes:
    """The filter as the bytes of a ``struct sock_filter[]``, ready for ``bwrap --seccomp``."""
    machine = machine or platform.machine()
    if machine not in ARCHITECTURES:
        raise UnsupportedArchitecture(f"no seccomp filter is defined for the {machine} architecture")
    arch, numbers, has_x32 = ARCHITECTURES[machine]
    denied = sorted({numbers[name] for name in DENIED + DENIED_X86_ONLY if name in numbers})

    program = _Program()
    program.load(_ARCH)
    program.jump_unless_equal(arch, "kill")
    program.load(_NR)
    if has_x32:
        program.jump_if(_JGE, X32_SYSCALL_BIT, "eperm")
    for number in denied:
        program.jump_if(_JEQ, number, "eperm")
    program.jump_if(_JEQ, numbers["clone3"], "enosys")
    program.jump_if(_JEQ, numbers["clone"], "clone")
    program.jump_if(_JEQ, numbers["ioctl"], "ioctl")
    program.ret(RET_ALLOW)
    program.label("clone")
    program.load(_ARG0_LOW)
    program.jump_if(_JSET, CLONE_NEW_FLAGS, "eperm")
    program.ret(RET_ALLOW)
    program.label("ioctl")
    program.load(_ARG1_LOW)
    program.jump_if(_JEQ, TIOCSTI, "eperm")
    program.jump_if(_JEQ, TIOCLINUX, "eperm")
    program.ret(RET_ALLOW)
    program.label("eperm")
    program.ret(RET_ERRNO | EPERM)
    program.label("enosys")
    program.ret(RET_ERRNO | ENOSYS)
    program.label("kill")
    program.ret(RET_KILL_PROCESS)
    return program.assemble()


class _Program:
    """A tiny assembler: instructions with forward jumps to named labels."""

    def __init__(self) -> None:
        self._code: list[tuple[int, str | None, int]] = []  # (opcode, label jumped to when true, k)
        self._labels: dict[str, int] = {}
        self._inverted: set[int] = set()  # jumps taken when the test is false

    def load(self, offset: int) -> None:
        self._code.append((_LD_ABS, None, offset))

    def ret(self, value: int) -> None:
        self._code.append((_RET, None, value))

    def jump_if(self, opcode: int, k: int, label: str) -> None:
        self._code.append((opcode, label, k))

    def jump_unless_equal(self, k: int, label: str) -> None:
        self._inverted.add(len(self._code))
        self._code.append((_JEQ, label, k))

    def label(self, name: str) -> None:
        self._labels[name] = len(self._code)

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (opcode, label, k) in enumerate(self._code):
            jt = jf = 0
            if label is not None:
                offset = self._labels[label] - index - 1
                if not 0 <= offset <= 255:
                    raise ValueError(f"jump to {label} out of range ({offset})")
                jt, jf = (0, offset) if index in self._inverted else (offset, 0)
            out += struct.pack("=HBBI", opcode, jt, jf, k)
        return bytes(out)
