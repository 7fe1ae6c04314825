"""The log context (common/log_context.py): fields bound per message, the process's owner,
the filter that puts them on every record, and both line formats."""

from __future__ import annotations

import io
import json
import logging

import pytest
from thespian.actors import ActorSystem

from agents.base import FloraActor
from agents.interaction_actor import InteractionActor
from common import log_context
from common.logging_setup import configure_logging


@pytest.fixture(autouse=True)
def clean_process():
    log_context.release_process()
    yield
    log_context.release_process()


@pytest.fixture
def lines():
    """The ``flora`` logger configured into a buffer (JSON, DEBUG); the parsed lines so far."""
    logger = logging.getLogger("flora")
    saved = (logger.level, logger.propagate, list(logger.handlers))
    buffer = io.StringIO()
    configure_logging("DEBUG", "json", stream=buffer)

    def read() -> list[dict]:
        return [json.loads(line) for line in buffer.getvalue().splitlines()]

    yield read
    logger.setLevel(saved[0])
    logger.propagate = saved[1]
    logger.handlers[:] = saved[2]


def test_bound_fields_are_on_lines_inside_the_block_only(lines):
    log = logging.getLogger("flora.test")
    with log_context.bound(actor="agent", tenant_id="acme", task_id="task_1", msg_id="msg_1"):
        log.info("inside")
        with log_context.bound(task_id="task_2"):
            log.info("nested")
        log.info("inside again")
    log.info("outside")
    inside, nested, again, outside = lines()
    assert (inside["actor"], inside["tenant_id"], inside["task_id"], inside["msg_id"]) == ("agent", "acme",
                                                                                          "task_1", "msg_1")
    assert nested["task_id"] == "task_2" and nested["tenant_id"] == "acme"
    assert again["task_id"] == "task_1"
    assert outside["actor"] == log_context.UNKNOWN_ACTOR and "task_id" not in outside


def test_bound_fields_are_reset_when_the_block_raises(lines):
    with pytest.raises(RuntimeError):
        with log_context.bound(task_id="task_1"):
            raise RuntimeError("boom")
    logging.getLogger("flora.test").info("after")
    assert "task_id" not in lines()[0]


def test_a_field_given_with_extra_wins_over_the_context(lines):
    with log_context.bound(task_id="task_ctx", tenant_id="acme"):
        logging.getLogger("flora.test").info("x", extra={"task_id": "task_extra"})
    line = lines()[0]
    assert line["task_id"] == "task_extra" and line["tenant_id"] == "acme"


def test_the_process_owner_speaks_between_messages_and_the_first_claim_wins(lines):
    assert log_context.claim_process(actor="main", node="n1")
    assert not log_context.claim_process(actor="agent")  # simpleSystemBase: main's process stays main's
    log_context.update_process(node="n2")
    logging.getLogger("flora.test").info("idle")
    with log_context.bound(actor="agent", task_id="task_1"):
        logging.getLogger("flora.test").info("busy")
    idle, busy = lines()
    assert (idle["actor"], idle["node"]) == ("main", "n2")
    assert (busy["actor"], busy["node"], busy["task_id"]) == ("agent", "n2", "task_1")
    assert log_context.claim_process(force=True, actor="main", node="n3") and log_context.current()["node"] == "n3"


def test_a_forked_process_does_not_inherit_the_owner(monkeypatch):
    log_context.claim_process(actor="main")
    monkeypatch.setattr(log_context.os, "getpid", lambda: -1)  # as in a child forked after the claim
    assert log_context.current() == {}
    assert log_context.claim_process(actor="execution") and log_context.current() == {"actor": "execution"}


def test_message_fields_takes_only_non_empty_strings():
    assert log_context.message_fields({"tenant_id": "acme", "task_id": "", "msg_id": 5, "user_id": "u"}) == {
        "tenant_id": "acme"}
    assert log_context.message_fields(["not", "a", "message"]) == {}


def test_a_huge_field_of_a_malformed_message_is_cut_for_the_log():
    fields = log_context.message_fields({"task_id": "x" * 1_000_000, "msg_id": "msg_1"})
    assert len(fields["task_id"]) == log_context.MAX_FIELD_CHARS and fields["task_id"].endswith("…")
    assert fields["msg_id"] == "msg_1"


def test_unknown_fields_are_refused():
    with pytest.raises(ValueError, match="tenant"):
        with log_context.bound(tenant="acme"):
            pass


def test_text_lines_carry_a_compact_context_part():
    logger = logging.getLogger("flora")
    saved = list(logger.handlers)
    buffer = io.StringIO()
    try:
        configure_logging("INFO", "text", stream=buffer)
        with log_context.bound(actor="execution", node="n1", tenant_id="acme", task_id="task_1"):
            logging.getLogger("flora.test").info("ran %s", "dify")
    finally:
        logger.handlers[:] = saved
    assert "flora.test[" in buffer.getvalue()
    assert "] [execution@n1 tenant_id=acme task_id=task_1] ran dify" in buffer.getvalue()


class _Echo(FloraActor):
    """Routes every message itself, as InteractionActor does, and logs while handling it."""

    role = "echo"

    def receiveMessage(self, message, sender):
        if isinstance(message, dict):
            logging.getLogger("flora.test.echo").info("handling %s", message.get("message_type"))
            self.send(sender, {"seen": log_context.current()})


def test_an_actor_that_routes_its_own_messages_still_logs_in_context(lines):
    assert getattr(InteractionActor.receiveMessage, "_in_log_context", False)
    system = ActorSystem("simpleSystemBase", transientUnique=True)
    try:
        echo = system.createActor(_Echo)
        reply = system.ask(echo, {"message_type": "ping", "tenant_id": "acme", "task_id": "task_9",
                                  "msg_id": "msg_9"}, 5)
    finally:
        system.shutdown()
    assert reply["seen"]["actor"] == "echo" and reply["seen"]["task_id"] == "task_9"
    line = next(line for line in lines() if line["logger"] == "flora.test.echo")
    assert (line["actor"], line["tenant_id"], line["task_id"], line["msg_id"]) == ("echo", "acme", "task_9", "msg_9")
    assert line["actor_addr"]
