"""Make sure RabbitMQ and Redis answer on loopback, starting them if installed but stopped.

Used by scripts/test.sh: the service tests talk to the real servers, so a missing server
is a loud failure here rather than a skipped test later.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import pika
import redis

REDIS_URL = "redis://127.0.0.1:6379/0"
AMQP_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"
START = {
    "redis": ["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", "6379",
              "--save", "", "--appendonly", "no"],
    "rabbitmq": ["rabbitmq-server", "-detached"],
}
WAIT_S = {"redis": 20, "rabbitmq": 90}


def redis_up() -> str | None:
    try:
        redis.Redis.from_url(REDIS_URL, socket_timeout=2).ping()
    except redis.RedisError as exc:
        return str(exc)
    return None


def rabbitmq_up() -> str | None:
    try:
        params = pika.URLParameters(AMQP_URL)
        params.socket_timeout = params.blocked_connection_timeout = 3
        pika.BlockingConnection(params).close()
    except pika.exceptions.AMQPError as exc:
        return repr(exc)
    return None


CHECKS = {"redis": redis_up, "rabbitmq": rabbitmq_up}


def ensure(name: str) -> bool:
    problem = CHECKS[name]()
    if problem is None:
        print(f"services: {name} is up")
        return True
    command = START[name]
    if shutil.which(command[0]) is None:
        print(f"services: {name} is not reachable ({problem}) and {command[0]} is not installed", file=sys.stderr)
        return False
    print(f"services: {name} is down ({problem}); starting it: {' '.join(command)}")
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + WAIT_S[name]
    while time.monotonic() < deadline:
        if CHECKS[name]() is None:
            print(f"services: {name} is up")
            return True
        time.sleep(1)
    print(f"services: {name} did not come up within {WAIT_S[name]} s: {CHECKS[name]()}", file=sys.stderr)
    return False


def main() -> int:
    results = [ensure(name) for name in CHECKS]
    if not all(results):
        print("services: FAILED — the tests need RabbitMQ on 127.0.0.1:5672 (guest/guest) and Redis on "
              "127.0.0.1:6379", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
