"""A trigger consumer that records a run and dies before handing it on or acknowledging it,
the way a Flora process that crashes at the worst moment would.

    python -m tests.loop_e2e.dying_consumer CONFIG_JSON_FILE

It consumes ``rabbitmq.loop_trigger_queue`` with the real RabbitBridge and TriggerIntake
over the LoopService of that configuration; the first run it records ends the process with
``os._exit(1)``: no hand-on, no ack, no clean close.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

from capabilities.loop.intake import TriggerIntake
from capabilities.loop.rabbit_bridge import RabbitBridge
from common.runtime import Runtime


def main(config_file: str) -> None:
    runtime = Runtime.from_config(json.loads(Path(config_file).read_text()))
    config = runtime.config

    def die(start) -> None:  # the run is recorded (key claimed, task created): crash now
        os._exit(1)

    intake = TriggerIntake(runtime.loops, default_tenant=config.default_tenant, hand_on=die)
    RabbitBridge(config.rabbitmq.url, config.rabbitmq.loop_trigger_queue, intake.handle).start()
    threading.Event().wait(60)  # nothing came: the test fails on the exit code
    os._exit(3)


if __name__ == "__main__":
    main(sys.argv[1])
