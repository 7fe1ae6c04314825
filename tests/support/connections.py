"""Which local process talks to a test's server: a channel's poller holds a connection to its
service, a sender keeps one alive after a call, so a test can find a ChannelActor's process
(to kill it) or a node's poller by the server's port (Linux ``/proc``)."""

from __future__ import annotations

import os
from pathlib import Path


def _socket_inodes_to(port: int) -> set[str]:
    """The inodes of this machine's TCP sockets connected to local ``port``."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[2].rsplit(":", 1)[1], 16) == port and fields[3] == "01":  # ESTABLISHED
                inodes.add(fields[9])
    return inodes


def pids_talking_to(port: int) -> list[int]:
    """This user's processes with a connection open to local ``port``: the channel's poller
    holds one to the Bot API server, and nothing else of Flora talks to it."""
    inodes, found = _socket_inodes_to(port), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            links = [os.readlink(fd) for fd in (entry / "fd").iterdir()]
        except (PermissionError, FileNotFoundError, ProcessLookupError):
            continue
        if any(link.startswith("socket:[") and link[8:-1] in inodes for link in links):
            found.append(int(entry.name))
    return found
