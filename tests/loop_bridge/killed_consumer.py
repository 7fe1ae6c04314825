"""A bridge process that records a run and then hangs before answering, so that the test
can SIGKILL it between the record and the ack, the way a crashed Flora process would.

    python -m tests.loop_bridge.killed_consumer URL QUEUE RECORD_FILE
"""

from __future__ import annotations

import sys
import threading

from capabilities.loop.rabbit_bridge import RabbitBridge


def main(url: str, queue: str, record_file: str) -> None:
    def record_then_hang(trigger):
        with open(record_file, "a") as f:  # stands in for Flora's store: the run is recorded
            f.write(trigger.run_key + "\n")
        threading.Event().wait()  # ... and the process dies before handle returns

    RabbitBridge(url, queue, record_then_hang).start()
    threading.Event().wait()


if __name__ == "__main__":
    main(*sys.argv[1:4])
