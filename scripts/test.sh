#!/usr/bin/env bash
# Install Flora with its test dependencies, make sure RabbitMQ and Redis are up, and run the
# whole test suite (real-model smoke tests and the headless-Chromium test included). Extra arguments go to pytest.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
bash scripts/install.sh --dev
bash scripts/install_test_tools.sh
.venv/bin/python scripts/check_services.py
export FLORA_REQUIRE_REAL_MODEL=1
exec .venv/bin/python -m pytest "$@"
