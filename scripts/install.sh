#!/usr/bin/env bash
# Install Flora into ./.venv: the pinned dependencies, llama-cpp-python (portable build,
# kept in a wheelhouse outside the clone so later installs reuse it) and the default model.
# Idempotent: a second run only checks. Usage: scripts/install.sh [--dev]
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

find_python() {
    for candidate in "${PYTHON:-}" python3.11 python3; do
        [[ -n "$candidate" ]] || continue
        if command -v "$candidate" >/dev/null 2>&1 &&
           "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
            echo "$candidate"; return 0
        fi
    done
    echo "install: Flora needs Python 3.11 (set PYTHON=/path/to/python3.11)" >&2
    return 1
}

if [[ ! -x .venv/bin/python ]]; then
    PY="$(find_python)"
    echo "install: creating .venv with $PY"
    "$PY" -m venv .venv
fi
# the kernel sandbox the shell and python_exec tools run programs in (docs/tools.md): bubblewrap,
# from the system's packages; without it those two tools refuse to run anything
if ! command -v bwrap >/dev/null 2>&1; then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
        echo "install: bubblewrap (apt), the sandbox for the shell and python_exec tools"
        apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >/dev/null
    else
        echo "install: bubblewrap (bwrap) is not installed; shell and python_exec will refuse to run programs" \
             "until it is (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap)" >&2
    fi
fi
requirements=requirements.txt
[[ "${1:-}" == "--dev" ]] && requirements=requirements-dev.txt
echo "install: Python packages from $requirements"
.venv/bin/python -m pip install -q --disable-pip-version-check -r "$requirements"
bash scripts/install_llm.sh "$REPO/.venv/bin/python"
# the example utterances messages are read by, embedded once (seconds; later installs find them kept)
.venv/bin/python -m capabilities.cognition.semantic warm
echo "install: done"
