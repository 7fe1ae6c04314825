#!/usr/bin/env bash
# What the test suite needs beyond Python packages, from Debian's own packages (no downloads
# from elsewhere): Chromium and its chromedriver for the browser test, Compose to check
# docker-compose.yml, and dovecot (an IMAP server each e-mail channel test runs as its own
# subprocess). Installs what is missing with apt; fails loudly when it cannot be had.
set -euo pipefail
have_compose() {
    command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1
}
if [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver && -x /usr/sbin/dovecot ]] && have_compose; then
    exit 0
fi
if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "install: chromium, chromium-driver, docker-compose and dovecot-imapd (apt)"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        chromium chromium-driver docker-compose dovecot-imapd >/dev/null
fi
if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver ]]; then
    echo "install: the browser test needs /usr/bin/chromium and /usr/bin/chromedriver" \
         "(Debian: apt-get install chromium chromium-driver)" >&2
    exit 1
fi
if ! have_compose; then
    echo "install: the compose file test needs docker-compose or 'docker compose'" \
         "(Debian: apt-get install docker-compose)" >&2
    exit 1
fi
if [[ ! -x /usr/sbin/dovecot ]]; then
    echo "install: the e-mail channel tests need /usr/sbin/dovecot (Debian: apt-get install dovecot-imapd)" >&2
    exit 1
fi
