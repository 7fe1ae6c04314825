"""HTTPMetrics: request counts and message latency, written as Prometheus text (``GET /metrics``,
which adds the store's counts from :mod:`common.status`)."""

from __future__ import annotations

import bisect
import threading
from collections import Counter

LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class HTTPMetrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: Counter[tuple[str, str, int]] = Counter()  # (method, route, status)
        self._buckets = [0] * (len(LATENCY_BUCKETS_S) + 1)
        self._latency_sum = 0.0
        self._latency_count = 0

    def count(self, method: str, route: str, status: int) -> None:
        with self._lock:
            self.requests[(method, route, status)] += 1

    def observe_reply(self, seconds: float) -> None:
        """How long one user message took to be answered."""
        with self._lock:
            self._buckets[bisect.bisect_left(LATENCY_BUCKETS_S, seconds)] += 1
            self._latency_sum += seconds
            self._latency_count += 1

    def render(self, tasks_by_state: dict[str, int] | None, extra: dict[str, float] | None = None) -> str:
        """The text; ``tasks_by_state`` None leaves ``flora_tasks`` to whoever writes it per tenant."""
        lines = []
        if tasks_by_state is not None:
            lines += ["# HELP flora_tasks Tasks in the store by state.", "# TYPE flora_tasks gauge"]
            lines += [f'flora_tasks{{state="{state}"}} {n}' for state, n in sorted(tasks_by_state.items())]
        for name, value in sorted((extra or {}).items()):
            lines += [f"# TYPE {name} gauge", f"{name} {value:g}"]
        lines += ["# HELP flora_http_requests_total HTTP requests by route and status.",
                  "# TYPE flora_http_requests_total counter"]
        with self._lock:
            for (method, route, status), n in sorted(self.requests.items()):
                lines.append(f'flora_http_requests_total{{method="{method}",route="{_escape(route)}",'
                             f'status="{status}"}} {n}')
            lines += ["# HELP flora_reply_seconds Time from a user message to its reply.",
                      "# TYPE flora_reply_seconds histogram"]
            running = 0
            for bound, n in zip((*LATENCY_BUCKETS_S, float("inf")), self._buckets):
                running += n
                lines.append(f'flora_reply_seconds_bucket{{le="{"+Inf" if bound == float("inf") else bound}"}} {running}')
            lines += [f"flora_reply_seconds_sum {self._latency_sum:.6f}", f"flora_reply_seconds_count {self._latency_count}"]
        return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
