"""An outside program that publishes one loop trigger to Flora's queue with plain pika.

    python -m tests.loop_e2e.publish_trigger URL QUEUE TRIGGER_JSON [MESSAGE_ID]
"""

from __future__ import annotations

import json
import sys

import pika

from capabilities.loop.rabbit_bridge import declare_trigger_queue


def main(url: str, queue: str, body: str, message_id: str | None = None) -> None:
    json.loads(body)  # refuse to send what is not JSON: that is another test's business
    connection = pika.BlockingConnection(pika.URLParameters(url))
    try:
        channel = connection.channel()
        channel.confirm_delivery()  # basic_publish raises unless the broker took it
        declare_trigger_queue(channel, queue)
        channel.basic_publish("", queue, body.encode(), pika.BasicProperties(
            delivery_mode=2, content_type="application/json", message_id=message_id), mandatory=True)
    finally:
        connection.close()


if __name__ == "__main__":
    main(*sys.argv[1:5])
