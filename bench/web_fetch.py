"""web_fetch beside raw httpx, on the same local page, in one run.

Three measurements, each ``--requests`` sequential fetches of the same HTML page (``--kb``
kilobytes, from a local server on 127.0.0.1) after ``--warmup`` untimed ones, a new client
per fetch (as web_fetch makes one per call):

- raw httpx: ``httpx.Client(verify=context).get(url)`` and ``.text``: the network and HTTP
  alone (with one TLS context shared by all clients, as the guarded transport shares one;
  a default ``httpx.Client()`` loads the CA bundle anew, tens of milliseconds each);
- guarded httpx: the same through ``GuardedTransport`` (resolve, check, connect to the
  checked address): what the SSRF guard costs;
- web_fetch: the whole capability (guard, capped read, HTML to text, links).

Prints p50 and p99 in milliseconds for each, and each one's p50 over raw httpx's.

    .venv/bin/python bench/web_fetch.py [--requests 200] [--kb 50] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from typing import Callable  # noqa: E402

import httpx  # noqa: E402

from bench.pipeline import percentile  # noqa: E402
from capabilities.base import ExecutionContext  # noqa: E402
from capabilities.tools.address_guard import AddressPolicy, guarded_transport  # noqa: E402
from capabilities.tools.web_fetch import web_fetch  # noqa: E402
from tests.tools.local_http import LocalHTTPServer, Reply  # noqa: E402

LOCAL = AddressPolicy.from_setting(["127.0.0.1"], "allow_private")


def page(kb: int) -> str:
    paragraph = "<p>Flora reads <b>pages</b> as text, with <a href='/more'>links</a> kept aside.</p>\n"
    body = paragraph * max(1, kb * 1024 // len(paragraph))
    return (f"<!doctype html><html><head><title>Bench</title><script>var x = 1;</script></head><body>"
            f"<nav><a href='/'>Home</a></nav><main><h1>Bench page</h1>{body}</main><footer>end</footer></body></html>")


def timed(fn: Callable[[], object], warmup: int, requests: int) -> list[float]:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(requests):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--kb", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    html = page(args.kb)
    context = ExecutionContext(task_id="bench", user_id="bench", settings={"allow_private": ["127.0.0.1"]})
    with LocalHTTPServer(lambda _: Reply.text(html, content_type="text/html; charset=utf-8")) as server:
        url = f"{server.url}/page"

        shared_tls = httpx.create_ssl_context(trust_env=False)

        def raw() -> str:
            with httpx.Client(timeout=30, verify=shared_tls) as client:
                return client.get(url).text

        def guarded() -> str:
            with httpx.Client(timeout=30, transport=guarded_transport(LOCAL)) as client:
                return client.get(url).text

        def capability() -> dict:
            return web_fetch(url, context, include_links=True)

        results = {name: timed(fn, args.warmup, args.requests)
                   for name, fn in (("raw httpx", raw), ("guarded httpx", guarded), ("web_fetch", capability))}

    base = percentile(results["raw httpx"], 50)
    rows = [{"what": name, "p50_ms": round(percentile(s, 50), 3), "p99_ms": round(percentile(s, 99), 3),
             "p50_over_raw": round(percentile(s, 50) / base, 2)} for name, s in results.items()]
    if args.json:
        print(json.dumps({"page_bytes": len(html.encode()), "requests": args.requests, "rows": rows}, indent=2))
        return
    print(f"page: {len(html.encode())} bytes, {args.requests} fetches each")
    print(f"{'what':<15} {'p50 ms':>9} {'p99 ms':>9} {'p50 / raw':>10}")
    for row in rows:
        print(f"{row['what']:<15} {row['p50_ms']:>9.3f} {row['p99_ms']:>9.3f} {row['p50_over_raw']:>10.2f}")


if __name__ == "__main__":
    main()
