"""Trigger a run of a loop task from any program, through RabbitMQ.

    python examples/publish_trigger.py LOOP_TASK_ID [--run-key KEY] [--scheduled-at ISO] [--param name=value ...]

Flora must run with ``loops.queue: rabbitmq`` (its RabbitBridge consumes the queue). The same
run key published twice runs once; without one, each publish is a new run. Only pika is
needed here; the message format is in docs/loop_triggers.md.
"""

from __future__ import annotations

import argparse
import json
import uuid

import pika

def publish(url: str, queue: str, trigger: dict, run_key: str) -> None:
    connection = pika.BlockingConnection(pika.URLParameters(url))
    try:
        channel = connection.channel()
        channel.confirm_delivery()  # basic_publish raises if the broker does not take it
        dead = (queue.removesuffix(".queue") if queue.endswith(".queue") else queue) + ".dead"
        channel.queue_declare(dead, durable=True)  # exactly Flora's arguments, so the order of starts does not matter
        channel.queue_declare(queue, durable=True, arguments={"x-dead-letter-exchange": "",
                                                               "x-dead-letter-routing-key": dead})
        channel.basic_publish("", queue, json.dumps(trigger).encode(), mandatory=True,
                              properties=pika.BasicProperties(delivery_mode=2, content_type="application/json",
                                                              message_id=run_key))
    finally:
        connection.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("loop_task_id")
    parser.add_argument("--run-key", help="what makes this run unique (default: a new one)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="override a parameter of the loop task for this run")
    parser.add_argument("--scheduled-at", help="the time this run is for, ISO-8601 (e.g. 2024-05-01T08:00:00Z)")
    parser.add_argument("--source", default="examples/publish_trigger.py", help="who sent it, for the logs")
    parser.add_argument("--tenant", help="tenant of the loop task (default: Flora's default tenant)")
    parser.add_argument("--url", default="amqp://guest:guest@127.0.0.1:5672/%2F")
    parser.add_argument("--queue", default="loop.trigger.queue")
    args = parser.parse_args(argv)
    run_key = args.run_key or f"{args.loop_task_id}:external:{uuid.uuid4().hex[:12]}"
    trigger = {"loop_task_id": args.loop_task_id, "run_key": run_key, "source": args.source,
               "parameters": dict(p.split("=", 1) for p in args.param)}
    if args.scheduled_at:
        trigger["scheduled_at"] = args.scheduled_at
    if args.tenant:
        trigger["tenant_id"] = args.tenant
    publish(args.url, args.queue, trigger, run_key)
    print(f"published run {run_key} of {args.loop_task_id} to {args.queue}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
