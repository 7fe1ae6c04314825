"""Logging: one ``flora.*`` logger tree, text or JSON lines, the task id on every task line.

Call sites pass ``extra={"task_id": ...}`` where they know it; the JSON formatter writes
every such extra field. Each actor process configures its own handlers from the config it
receives, so a multiprocess system logs the same way everywhere. The handler's
:class:`~common.log_context.ContextFilter` adds ``actor``, ``node``, ``tenant_id``, ``task_id``
and ``msg_id`` from the message being handled (a JSON field each; a ``[actor@node ...]``
part of a text line).
"""

from __future__ import annotations

import json
import logging
import sys
import time

from common.cluster import current_node
from common.log_context import ContextFilter, text_suffix, update_process

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "pid": record.process,
            "message": record.getMessage(),
        }
        data.update({k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")})
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False, default=str)


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s[%(process)d] %(message)s"


class TextFormatter(logging.Formatter):
    """TEXT_FORMAT with the log context after the logger's name."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT.replace("] %(message)s", "] %(_flora_context)s %(message)s"))

    def format(self, record: logging.LogRecord) -> str:
        record._flora_context = text_suffix(record)
        return super().format(record)


def configure_logging(level: str = "WARNING", fmt: str = "text", stream=None) -> None:
    """Set up the ``flora`` logger tree in this process (idempotent)."""
    logger = logging.getLogger("flora")
    logger.setLevel(level)
    logger.propagate = False
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(ContextFilter())
    logger.addHandler(handler)


def configure_process_logging(config: dict) -> None:
    """Configure logging in an actor process from the JSON config it was sent."""
    configure_logging(config.get("log_level", "WARNING"), config.get("log_format", "text"))
    # the node this process runs on, which for an actor placed elsewhere is not the sender's
    update_process(node=current_node((config.get("actors") or {}).get("node") or "local"))
