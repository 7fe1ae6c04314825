#!/usr/bin/env bash
# Install Flora with its test dependencies, make sure RabbitMQ and Redis are up, and run the
# whole test suite (real-model smoke tests and the headless-Chromium test included). Extra arguments go to pytest.
#
# --fast: only the logic tests (no actor system started across processes, no real model, no
# browser; tests marked slow left out) — a few minutes, for the edit-test loop. The whole suite
# stays the CI command.
#
# --busy (or FLORA_TEST_BUSY=1): keep every core busy with a CPU loop for the whole run, to show
# the suite passes on a loaded machine. The loops stop when the run ends (or after
# FLORA_TEST_BUSY_MAX_S seconds, 3 hours by default, whatever happens to this script).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

BUSY="${FLORA_TEST_BUSY:-0}"
FAST=0
ARGS=()
for arg in "$@"; do
    case "$arg" in
        --busy) BUSY=1 ;;
        --fast) FAST=1 ;;
        *) ARGS+=("$arg") ;;
    esac
done
FAST_TESTS=(tests/unit tests/tools tests/llm tests/loops tests/loop -m "not real_model and not slow")

bash scripts/install.sh --dev
if [[ "$FAST" == "1" ]]; then
    ARGS=("${FAST_TESTS[@]}" ${ARGS[@]+"${ARGS[@]}"})
else
    bash scripts/install_test_tools.sh
fi
.venv/bin/python scripts/check_services.py
export FLORA_REQUIRE_REAL_MODEL=1

BUSY_PIDS=()
stop_busy() {
    if ((${#BUSY_PIDS[@]})); then
        kill "${BUSY_PIDS[@]}" 2>/dev/null || true
        wait "${BUSY_PIDS[@]}" 2>/dev/null || true
        BUSY_PIDS=()
    fi
}
if [[ "$BUSY" == "1" ]]; then
    trap stop_busy EXIT INT TERM
    for _ in $(seq "$(nproc)"); do
        timeout "${FLORA_TEST_BUSY_MAX_S:-10800}" bash -c 'while :; do :; done' &
        BUSY_PIDS+=("$!")
    done
    echo "test.sh: ${#BUSY_PIDS[@]} busy loop(s) running beside the tests" >&2
fi

status=0
.venv/bin/python -m pytest ${ARGS[@]+"${ARGS[@]}"} || status=$?
stop_busy
exit "$status"
