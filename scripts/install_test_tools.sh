#!/usr/bin/env bash
# The browser test drives Debian's Chromium through its chromedriver (no browser download).
# Installs both with apt when missing; fails loudly when they cannot be had.
set -euo pipefail
if [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]]; then
    exit 0
fi
if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "install: chromium and chromium-driver (apt)"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null
fi
if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver ]]; then
    echo "install: the browser test needs /usr/bin/chromium and /usr/bin/chromedriver" \
         "(Debian: apt-get install chromium chromium-driver)" >&2
    exit 1
fi
