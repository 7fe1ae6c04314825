"""Runs inside the sandbox in front of a program an operator gave network: listens on the network
namespace's own 127.0.0.1:PORT and carries each connection to Flora's egress proxy socket, then
runs the program and exits with its status.

Started as ``python -I -S egress_bridge.py SOCKET PORT -- ARGV...``. Imports nothing of Flora.
"""

import os
import socket
import subprocess
import sys
import threading


def _pump(src, dst):
    try:
        while True:
            chunk = src.recv(65536)
            if not chunk:
                break
            dst.sendall(chunk)
    except OSError:
        pass  # one side closed
    finally:
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed


def _serve(listener, path):
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        threading.Thread(target=_pump, args=(client, upstream), daemon=True).start()
        threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()


def main():
    path, port, separator, *argv = sys.argv[1:]
    if separator != "--" or not argv:
        sys.exit("usage: egress_bridge.py SOCKET PORT -- PROGRAM [ARGS...]")
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(64)
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    try:
        code = subprocess.call(argv)
    except OSError as exc:
        sys.stderr.write(f"{argv[0]}: {exc.strerror}\n")
        code = 127
    sys.stdout.flush()
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
