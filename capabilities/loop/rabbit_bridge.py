"""Loop-task triggers over RabbitMQ: the message format, a publisher and a consuming bridge.

Any program (and Flora's scheduler) starts a loop task run by publishing a JSON trigger to
``loop.trigger.queue``. A run must happen exactly once even though RabbitMQ delivers at
least once, so the work is split: every trigger carries a *run key*; Flora's store records
a run under its key (``handle`` says RECORDED, or DUPLICATE when the key was already
there); this module acknowledges a delivery only after that answer, and never drops one.
A consumer that dies between recording and acknowledging gets the message redelivered, and
the store turns the second delivery into a DUPLICATE.

Threading: pika's ``BlockingConnection`` services heartbeats only inside
``process_data_events``, so a ``handle`` that runs for a minute on the consuming thread
would get the connection dropped by the broker (and the message redelivered mid-run). The
bridge's own thread therefore does nothing but I/O: it hands each trigger to worker
threads, and a worker's result comes back through ``add_callback_threadsafe``, the one
thread-safe call pika has, so acks and nacks are always sent by the connection's thread.
``SelectConnection`` would avoid the hop, but connect, declare, consume and reconnect then
become a chain of callbacks; with the blocking connection reconnecting is a plain loop.

Errors::

    RabbitBridgeError
    ├── TriggerError    a message is not a valid trigger; ``field`` names what is wrong
    └── PublishError    the broker did not take a trigger (nacked, unroutable, unreachable)

Malformed messages are rejected without requeue to the dead-letter queue declared beside
the trigger queue (``loop.trigger.dead`` for ``loop.trigger.queue``), kept for inspection.
"""

from __future__ import annotations

import enum
import json
import logging
import queue as queuelib
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Callable

import pika
import pika.exceptions

log = logging.getLogger("flora.loop.rabbit_bridge")

DEFAULT_PREFETCH = 16
DEFAULT_WORKERS = 1
DEFAULT_RECONNECT_DELAY_S = 1.0
MAX_RECONNECT_DELAY_S = 30.0
DEFAULT_RETRY_DELAY_S = 1.0
DEFAULT_DRAIN_S = 2.0
DEFAULT_BLOCKED_TIMEOUT_S = 30.0
_POLL_S = 0.1  # how long the consumer waits for I/O before looking at the stop flag
_CONNECTION_ERRORS = (pika.exceptions.AMQPError, OSError)


class RabbitBridgeError(Exception):
    """Base of this module's errors."""


class TriggerError(RabbitBridgeError):
    """A message that is not a valid trigger; ``field`` is the offending key."""

    def __init__(self, field_name: str, reason: str):
        super().__init__(f"trigger field {field_name!r}: {reason}")
        self.field = field_name
        self.reason = reason


class PublishError(RabbitBridgeError):
    """The broker did not confirm a trigger; publishing it again is safe (same run key)."""


class Outcome(enum.Enum):
    """What ``handle`` did with a trigger, which decides how the delivery is settled."""

    RECORDED = "recorded"    # the run is recorded now: ack
    DUPLICATE = "duplicate"  # the run key was recorded before: ack, nothing runs again
    RETRY = "retry"          # cannot record now (store busy...): requeue after a delay
    REJECTED = "rejected"    # can never run (no such loop task): to the dead-letter queue


@dataclass(frozen=True, kw_only=True)
class Trigger:
    """One request to run a loop task, as read from (or written to) the queue."""

    loop_task_id: str
    run_key: str
    scheduled_at: str | None = None
    tenant_id: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    source: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-only view, without the optional fields that are unset."""
        return {k: v for k, v in asdict(self).items() if v is not None and v != {}}

    def to_body(self) -> bytes:
        return json.dumps(self.as_dict(), separators=(",", ":")).encode()


def dead_letter_queue_name(queue: str) -> str:
    """``loop.trigger.queue`` → ``loop.trigger.dead``; any other name gets ``.dead`` added."""
    return (queue.removesuffix(".queue") if queue.endswith(".queue") else queue) + ".dead"


def declare_trigger_queue(channel, queue: str) -> str:
    """Declare the durable trigger queue and its dead-letter queue; return the latter's name.

    Publisher and bridge both call this so that whichever comes first creates the queue
    with the same arguments (RabbitMQ refuses a second declare with different ones).
    """
    dead = dead_letter_queue_name(queue)
    channel.queue_declare(queue=dead, durable=True)
    channel.queue_declare(queue=queue, durable=True, arguments={
        "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dead})
    return dead


def _optional_str(obj: dict, name: str) -> str | None:
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        raise TriggerError(name, f"must be a string, not {type(value).__name__}")
    return value


def trigger_from_dict(obj: Any, message_id: str | None = None) -> Trigger:
    """Validate a decoded trigger; the run key falls back to ``message_id``, then to
    ``loop_task_id:scheduled_at``. A trigger with none of these cannot be deduplicated,
    so it is refused rather than run with a key that a redelivery would not repeat.
    Unknown keys are ignored; ``null`` counts as absent."""
    if not isinstance(obj, dict):
        raise TriggerError("(message)", f"must be a JSON object, not {type(obj).__name__}")
    loop_task_id = _optional_str(obj, "loop_task_id")
    if not loop_task_id or not loop_task_id.strip():
        raise TriggerError("loop_task_id", "is required and must not be empty")
    scheduled_at = _optional_str(obj, "scheduled_at")
    if scheduled_at is not None:
        try:
            datetime.fromisoformat(scheduled_at)
        except ValueError:
            raise TriggerError("scheduled_at", f"is not an ISO-8601 time: {scheduled_at!r}") from None
    parameters = obj.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise TriggerError("parameters", f"must be an object, not {type(parameters).__name__}")
    run_key = _optional_str(obj, "run_key")
    if run_key is not None and not run_key:
        raise TriggerError("run_key", "must not be empty")
    run_key = run_key or message_id or (scheduled_at and f"{loop_task_id}:{scheduled_at}")
    if not run_key:
        raise TriggerError("run_key", "missing: give run_key, an AMQP message_id or scheduled_at")
    return Trigger(loop_task_id=loop_task_id, run_key=run_key, scheduled_at=scheduled_at,
                   tenant_id=_optional_str(obj, "tenant_id"), parameters=parameters or {},
                   source=_optional_str(obj, "source"))


def parse_trigger(body: bytes, properties=None) -> Trigger:
    """Decode and validate one message body; ``properties`` supplies the AMQP message_id."""
    try:
        obj = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TriggerError("(message)", f"is not JSON: {exc}") from None
    return trigger_from_dict(obj, getattr(properties, "message_id", None) or None)


def _parameters(url: str, connection_name: str) -> pika.URLParameters:
    params = pika.URLParameters(url)
    params.client_properties = {"connection_name": connection_name}
    return params


def _where(params: pika.ConnectionParameters) -> str:
    """Host, port and vhost for log lines: never the URL, which carries the password."""
    return f"{params.host}:{params.port}{params.virtual_host}"


class TriggerPublisher:
    """Publishes triggers as persistent messages with publisher confirms.

    A publish that fails on a dead connection (broker restarted, idle connection dropped
    for missed heartbeats) reconnects and publishes once more: the broker may have taken
    the first copy, and that is fine, because the run key makes the second a DUPLICATE.
    One pika connection is not safe across threads, so calls are serialised by a lock.
    """

    def __init__(self, url: str, queue: str):
        self._params = _parameters(url, f"flora.loop.publisher {queue}")
        if self._params.blocked_connection_timeout is None:  # a broker alarm must not hang us
            self._params.blocked_connection_timeout = DEFAULT_BLOCKED_TIMEOUT_S
        self.queue = queue
        self._connection = None
        self._channel = None
        self._lock = threading.Lock()

    def publish(self, loop_task_id: str, *, run_key: str | None = None,
                scheduled_at: str | None = None, tenant_id: str | None = None,
                parameters: dict | None = None, source: str | None = None) -> Trigger:
        """Send one trigger and return it (with its run key: given, derived from
        ``scheduled_at``, or a fresh uuid). Raises TriggerError before touching the broker
        for a bad field, PublishError when the broker does not confirm."""
        trigger = trigger_from_dict(
            {"loop_task_id": loop_task_id, "run_key": run_key, "scheduled_at": scheduled_at,
             "tenant_id": tenant_id, "parameters": parameters, "source": source},
            message_id=None if run_key or scheduled_at else uuid.uuid4().hex)
        properties = pika.BasicProperties(delivery_mode=2, content_type="application/json",
                                          message_id=trigger.run_key)
        with self._lock:
            for attempt in (1, 2):
                try:
                    self._open()
                    self._channel.basic_publish("", self.queue, trigger.to_body(), properties,
                                                mandatory=True)
                    break
                except pika.exceptions.UnroutableError:
                    raise PublishError(f"queue {self.queue!r} returned trigger {trigger.run_key!r}") from None
                except pika.exceptions.NackError:
                    raise PublishError(f"broker nacked trigger {trigger.run_key!r}") from None
                except _CONNECTION_ERRORS as exc:
                    self._drop()
                    if attempt == 2:
                        raise PublishError(f"cannot publish to {_where(self._params)}: {exc!r}") from exc
                    log.warning("publish to %s failed (%r); reconnecting", _where(self._params), exc)
        log.debug("published trigger %s for loop task %s", trigger.run_key, loop_task_id)
        return trigger

    def _open(self) -> None:
        if self._connection is not None and self._connection.is_open:
            return
        self._drop()
        self._connection = pika.BlockingConnection(self._params)
        self._channel = self._connection.channel()
        self._channel.confirm_delivery()
        declare_trigger_queue(self._channel, self.queue)
        log.info("trigger publisher connected to %s, queue %s", _where(self._params), self.queue)

    def _drop(self) -> None:
        connection, self._connection, self._channel = self._connection, None, None
        if connection is not None and connection.is_open:
            try:
                connection.close()
            except _CONNECTION_ERRORS as exc:  # it is going away either way
                log.debug("closing publisher connection: %r", exc)

    def close(self) -> None:
        with self._lock:
            self._drop()

    def __enter__(self) -> TriggerPublisher:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


@dataclass
class _Job:
    """A trigger on its way to a worker, with what is needed to settle its delivery."""

    connection: Any
    channel: Any
    delivery_tag: int
    trigger: Trigger


class RabbitBridge:
    """Consumes triggers and settles each delivery by what ``handle`` returns.

    RECORDED and DUPLICATE ack; REJECTED goes to the dead-letter queue; RETRY, an exception
    or any other return nacks with requeue
    after ``retry_delay_s`` (so a failing store is not hammered); a malformed message is
    rejected to the dead-letter queue. ``handle`` runs on ``workers`` threads (one by
    default, so it is never called concurrently). ``stop()`` stops taking messages, gives
    runs in progress ``drain_s`` to be settled, then closes: anything unsettled goes back
    to the queue. Counters (consumer thread only): delivered, acked, rejected, requeued,
    reconnects.
    """

    def __init__(self, url: str, queue: str, handle: Callable[[Trigger], Outcome], *,
                 prefetch: int = DEFAULT_PREFETCH, workers: int = DEFAULT_WORKERS,
                 reconnect_delay_s: float = DEFAULT_RECONNECT_DELAY_S,
                 retry_delay_s: float = DEFAULT_RETRY_DELAY_S):
        self._params = _parameters(url, f"flora.loop.bridge {queue}")
        self.queue = queue
        self._handle = handle
        self._prefetch = prefetch
        self._reconnect_delay_s = reconnect_delay_s
        self._retry_delay_s = retry_delay_s
        self._drain_s = DEFAULT_DRAIN_S
        self._jobs: queuelib.Queue[_Job | None] = queuelib.Queue()
        self._workers = [threading.Thread(target=self._work, name=f"flora-loop-bridge-worker-{i}",
                                          daemon=True) for i in range(workers)]
        self._thread = threading.Thread(target=self._run, name="flora-loop-bridge", daemon=True)
        self._stopping = threading.Event()
        self._consuming = threading.Event()
        self._connection = self._channel = self._consumer_tag = None
        self._unsettled: set[int] = set()
        self.delivered = self.acked = self.rejected = self.requeued = self.reconnects = 0

    # -- lifecycle (caller's thread) ------------------------------------------------------

    def start(self) -> RabbitBridge:
        if self._thread.ident is not None:
            raise RuntimeError("a RabbitBridge starts once; make a new one")
        for worker in self._workers:
            worker.start()
        self._thread.start()
        return self

    def wait_consuming(self, timeout: float) -> bool:
        """True once the bridge is connected and consuming (again, after a reconnect)."""
        return self._consuming.wait(timeout)

    def stop(self, drain_s: float = DEFAULT_DRAIN_S) -> None:
        """Stop consuming, let runs in progress settle for up to ``drain_s``, close, join.
        It does not wait for a slow run: its delivery goes back to the queue unacked, and the
        run key turns the redelivery into a DUPLICATE."""
        self._drain_s = drain_s
        self._stopping.set()
        if self._thread.ident is not None:
            self._thread.join(drain_s + 2 * _POLL_S + self._params.socket_timeout)
        for _ in self._workers:
            self._jobs.put(None)  # a worker stuck in handle is a daemon and is left behind

    def __enter__(self) -> RabbitBridge:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # -- consumer thread ------------------------------------------------------------------

    def _run(self) -> None:
        delay, attempt, connected_before = self._reconnect_delay_s, 0, False
        while not self._stopping.is_set():
            try:
                self._connect()
                if connected_before:
                    self.reconnects += 1
                connected_before, delay, attempt = True, self._reconnect_delay_s, 0
                self._consume()
            except _CONNECTION_ERRORS as exc:
                self._consuming.clear()
                attempt += 1
                log.warning("trigger bridge on %s: not connected (%r); reconnect attempt %d in %.1fs",
                            _where(self._params), exc, attempt, delay)
                self._stopping.wait(delay)
                delay = min(delay * 2, MAX_RECONNECT_DELAY_S)
            finally:
                self._close()
        log.info("trigger bridge on queue %s stopped", self.queue)

    def _connect(self) -> None:
        self._connection = pika.BlockingConnection(self._params)
        self._unsettled = set()
        channel = self._connection.channel()
        declare_trigger_queue(channel, self.queue)
        channel.basic_qos(prefetch_count=self._prefetch)
        self._channel = channel
        self._consumer_tag = channel.basic_consume(self.queue, self._on_message)
        log.info("trigger bridge consuming %s on %s", self.queue, _where(self._params))
        self._consuming.set()

    def _consume(self) -> None:
        connection, channel = self._connection, self._channel
        while not self._stopping.is_set():
            if not connection.is_open:  # lost inside a callback: pika has nothing left to raise
                raise pika.exceptions.StreamLostError("connection closed while dispatching")
            connection.process_data_events(time_limit=_POLL_S)
            if self._consumer_tag not in channel.consumer_tags:  # queue deleted, say
                raise pika.exceptions.ConsumerCancelled(f"broker cancelled the consumer of {self.queue}")
        self._consuming.clear()
        channel.basic_cancel(self._consumer_tag)  # no new deliveries; prefetched ones go back
        deadline = time.monotonic() + self._drain_s
        while self._unsettled and connection.is_open and time.monotonic() < deadline:
            connection.process_data_events(time_limit=_POLL_S)
        if self._unsettled:
            log.warning("trigger bridge stopping with %d runs unsettled; the broker will redeliver them",
                        len(self._unsettled))

    def _close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and connection.is_open:
            try:
                connection.close()
            except _CONNECTION_ERRORS as exc:  # closing a broken connection: nothing to save
                log.debug("closing bridge connection: %r", exc)

    def _on_message(self, channel, method, properties, body: bytes) -> None:
        self.delivered += 1
        try:
            trigger = parse_trigger(body, properties)
        except TriggerError as exc:
            log.warning("rejecting malformed trigger (message_id %s) to %s: %s",
                        properties.message_id, dead_letter_queue_name(self.queue), exc)
            channel.basic_reject(method.delivery_tag, requeue=False)
            self.rejected += 1
            return
        self._unsettled.add(method.delivery_tag)
        self._jobs.put(_Job(self._connection, channel, method.delivery_tag, trigger))

    def _settle(self, job: _Job, outcome: Outcome | None) -> None:
        """Runs on the consumer thread, called back by a worker. ``None``: skipped."""
        if job.connection is not self._connection or not job.channel.is_open:
            log.info("trigger %s: its connection closed before it was settled; the broker redelivers it",
                     job.trigger.run_key)
            return
        if outcome in (Outcome.RECORDED, Outcome.DUPLICATE):
            self._unsettled.discard(job.delivery_tag)
            job.channel.basic_ack(job.delivery_tag)
            self.acked += 1
        elif outcome is Outcome.REJECTED:
            self._unsettled.discard(job.delivery_tag)
            job.channel.basic_reject(job.delivery_tag, requeue=False)
            self.rejected += 1
        elif outcome is None:
            self._unsettled.discard(job.delivery_tag)  # skipped while stopping; requeued on close
        else:
            job.connection.call_later(self._retry_delay_s, lambda: self._requeue(job))

    def _requeue(self, job: _Job) -> None:
        self._unsettled.discard(job.delivery_tag)
        if job.connection is self._connection and job.channel.is_open:
            job.channel.basic_nack(job.delivery_tag, requeue=True)
            self.requeued += 1

    # -- worker threads -------------------------------------------------------------------

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            outcome = None
            if not self._stopping.is_set() and job.connection.is_open:
                outcome = self._run_handle(job.trigger)
            try:
                job.connection.add_callback_threadsafe(lambda j=job, o=outcome: self._settle(j, o))
            except pika.exceptions.ConnectionWrongStateError:
                log.info("trigger %s: its connection closed before it was settled; the broker redelivers it",
                         job.trigger.run_key)

    def _run_handle(self, trigger: Trigger) -> Outcome:
        try:
            outcome = self._handle(trigger)
        except Exception:  # the contract: a failing run is requeued, never lost
            log.exception("handling trigger %s for loop task %s failed; requeueing",
                          trigger.run_key, trigger.loop_task_id)
            return Outcome.RETRY
        if not isinstance(outcome, Outcome):
            log.error("handle returned %r for trigger %s, not an Outcome; requeueing",
                      outcome, trigger.run_key)
            return Outcome.RETRY
        return outcome
