"""The model hosts' warm-up at start: a call that a stop cuts off is not reported as a failure
("python main.py --test" stops before the warm-up ends); one that fails while Flora runs is."""

from __future__ import annotations

import logging
import threading

from agents import node


def log_from_a_thread(closing: threading.Event | None) -> None:
    def call() -> None:
        logging.getLogger("flora.llm.openai").warning("POST … failed: Server disconnected")

    thread = threading.Thread(target=call, name=node.WARM_UP_THREAD)
    if closing is not None:
        thread.flora_closing = closing
    thread.start()
    thread.join(5)


def test_a_warm_up_call_cut_off_by_the_stop_is_not_reported(caplog):
    closing = threading.Event()
    with caplog.at_level(logging.WARNING, logger="flora.llm.openai"):
        log_from_a_thread(closing)
        closing.set()
        log_from_a_thread(closing)
        log_from_a_thread(None)  # any other thread's failures stay reported
    assert len([r for r in caplog.records if "Server disconnected" in r.getMessage()]) == 2
