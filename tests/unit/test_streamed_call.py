"""StreamedCall: the pieces a call writes in its own thread are collected for the actor's thread."""

from __future__ import annotations

import threading

from capability_actors.streamed_call import StreamedCall


def test_pieces_are_taken_as_they_come_then_the_result():
    step = threading.Semaphore(0)
    written = threading.Semaphore(0)

    def write(on_text):
        for word in ("Octopuses ", "have ", "three hearts."):
            step.acquire()
            on_text(word)
            written.release()
        return "done"

    call = StreamedCall(write)
    taken = []
    for _ in range(3):
        step.release()
        assert written.acquire(timeout=5)
        taken.append(call.pieces())
    assert call.wait(5) and call.done
    assert taken == ["Octopuses ", "have ", "three hearts."] and call.pieces() == ""
    assert call.result == "done" and call.error is None


def test_an_exception_in_the_call_is_kept_for_the_actor_to_report():
    def fail(on_text):
        on_text("partial")
        raise RuntimeError("boom")

    call = StreamedCall(fail)
    assert call.wait(5)
    assert call.pieces() == "partial" and isinstance(call.error, RuntimeError) and call.result is None
