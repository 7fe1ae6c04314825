"""What every channel adapter speaks: a message in (:class:`Inbound`), a message out
(:class:`Outbound` with its :class:`Button` rows), and the errors of
:mod:`capabilities.channels`. Plain data, JSON inside, so an inbound message is kept in the
store as it is."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


class ChannelError(Exception):
    """Something a chat channel refused or failed at."""


class MalformedUpdate(ChannelError):
    """What came in is not a message this channel understands."""


class Unauthorized(ChannelError):
    """A webhook call whose secret or signature does not check out."""


class DeliveryError(ChannelError):
    """A send failed. ``retryable``: trying again may work; ``retry_after``: the seconds the
    service asked to wait (a 429)."""

    def __init__(self, message: str, *, retryable: bool = True, retry_after: float | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


class CredentialsRefused(DeliveryError):
    """The service refused the channel's credentials (an HTTP 401, an IMAP or SMTP login
    refused): every call will get the same answer until an operator fixes them, so the channel
    stops instead of trying again."""

    def __init__(self, message: str):
        super().__init__(message, retryable=False)


@dataclass
class Inbound:
    """A message from a person on a channel. ``key`` is the channel's own id for it (what a
    redelivery repeats); ``chat_id`` where to answer; ``sender_id`` who wrote. A button press
    has ``action`` (``{"approve": bool, "task_id": ...}`` or ``{"option": id}``) instead of
    text; ``ack`` is what the channel wants acknowledged (Telegram's callback query id).
    ``task_id``: the paused task the message answers, where the channel can tell (an e-mail
    replying to a question mail); ``thread``: what a reply needs to join the conversation
    (an e-mail's Message-ID, References and Subject); ``unverified``: why the sender could
    not be shown to be who the message says (an e-mail's forged From), "" when they were;
    such a message is refused whoever it names. ``group``: whether the chat is one of
    several people, where the service says; None when it does not (see :meth:`in_group`)."""

    key: str
    chat_id: str
    sender_id: str
    text: str = ""
    action: dict | None = None
    ack: str = ""
    task_id: str = ""
    thread: dict = field(default_factory=dict)
    unverified: str = ""
    group: bool | None = None

    def in_group(self) -> bool:
        """Whether others read this chat. Where the service does not say, a chat that is not
        the sender's own (its id differs from theirs) counts as a group: a person's memories
        are never recalled into a room that might hold others."""
        return self.group if self.group is not None else self.chat_id != self.sender_id

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Inbound":
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass
class Button:
    """One button: what it says and what pressing it sends back (``data``, short: Telegram
    allows 64 bytes)."""

    label: str
    data: str


@dataclass
class Outbound:
    """A message to send: Markdown ``text``, rows of ``buttons`` under it, where (``chat_id``),
    and what it is (``kind``: reply, question, notification) answering ``ref``. ``task_id``:
    the paused task a question (or a paused run's notification) asks about; ``thread``: the
    inbound message's, to answer within its conversation. ``key``: the outbox entry's id, the
    same on every try, for a service that takes an idempotency key (Matrix's transaction id)."""

    chat_id: str
    text: str
    kind: str = "reply"
    ref: str = ""
    buttons: list[list[Button]] = field(default_factory=list)
    task_id: str = ""
    thread: dict = field(default_factory=dict)
    key: str = ""


def post_only(method: str) -> None:
    """A webhook that takes events by POST only refuses any other method as malformed."""
    if method.upper() != "POST":
        raise MalformedUpdate(f"this channel's webhook takes POST, not {method}")


def approve_data(task_id: str, yes: bool) -> str:
    return f"a:{'y' if yes else 'n'}:{task_id}"


def option_data(option_id: str) -> str:
    return f"o:{option_id}"


def parse_button(data: str) -> dict | None:
    """The action a button's ``data`` stands for, None when it is none of Flora's."""
    if data.startswith(("a:y:", "a:n:")) and len(data) > 4:
        return {"approve": data[2] == "y", "task_id": data[4:]}
    if data.startswith("o:") and len(data) > 2:
        return {"option": data[2:]}
    return None
