"""The agent's prompt fits the model's context by construction.

A model has ``n_ctx`` tokens for the prompt and the reply together (``llm.n_ctx``, 4,096 on the
packaged default). Every step of the loop is built to that size: the reply's tokens
(``agent.reply_tokens``) and a margin are held back, the fixed instructions and the person's
request are counted first, then the tools offered (their compact schemas, the most relevant
first, see :mod:`capabilities.agent.selection`), then what is remembered of the person, then the
history from the newest step back: older results are cut shorter, the oldest steps are left out
with a note, and the newest result is cut to what is left. What cannot fit even then (a request
longer than the context) raises :class:`TooLong`, which the loop turns into a reply that says
so, never a raw refusal from the model host.

Tokens are counted by a :class:`TokenCounter`: the model's own vocabulary where the GGUF is on
this machine (:class:`VocabCounter`, llama.cpp loaded with ``vocab_only``: the exact tokens, no
weights), else :class:`EstimatingCounter`, which errs on the side of more tokens.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger("flora.agent.budget")

MESSAGE_OVERHEAD = 6  # tokens a chat template puts around one message (<|im_start|>role\n … <|im_end|>\n)
MIN_MARGIN = 32  # tokens held back for the template's own start and the counter's error
MARGIN_SHARE = 0.03
TOOLS_SHARE = 0.45  # of the prompt's tokens, at most, for the tools offered
MEMORIES_SHARE = 0.12  # ...for what is remembered of the person
OLD_RESULT_CHARS = 240  # a result older than the newest one, cut to this when the history is over budget


class TooLong(Exception):
    """Even the request and the instructions alone do not fit the model's context."""

    def __init__(self, needed: int, available: int):
        super().__init__(f"the request needs about {needed} tokens; the model's context leaves {available}")
        self.needed, self.available = needed, available


class TokenCounter(Protocol):
    def count(self, text: str) -> int: ...


class EstimatingCounter:
    """More tokens than a BPE vocabulary of the Qwen/Llama kind makes of the text: a token for
    every three bytes of ASCII and one for each other character (a CJK character is one or less)."""

    name = "estimate"

    def count(self, text: str) -> int:
        ascii_chars = sum(1 for c in text if c < "\x80")
        return math.ceil(ascii_chars / 3) + (len(text) - ascii_chars)


class VocabCounter:
    """The exact token count of the model's own vocabulary (llama.cpp with ``vocab_only``: the
    tokenizer without the weights, a few MB and a fraction of a second to load)."""

    def __init__(self, model_path: str):
        from llama_cpp import Llama

        self.name = f"vocab:{model_path}"
        with _quiet():  # llama.cpp writes a context warning to stderr that means nothing without weights
            self._llama = Llama(model_path=model_path, vocab_only=True, verbose=False)
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        if not text:
            return 0
        with self._lock:
            return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def _quiet():
    try:
        from llama_cpp._utils import suppress_stdout_stderr

        return suppress_stdout_stderr(disable=False)
    except (ImportError, TypeError):
        import contextlib

        return contextlib.nullcontext()


_counters: dict[str, TokenCounter] = {}
_counters_lock = threading.Lock()


def counter_for(config) -> TokenCounter:
    """The counter for the configured model: its vocabulary when the back end is the packaged
    local model (or a GGUF path), kept per process; the estimate otherwise, or when llama.cpp
    cannot read the file."""
    llm = getattr(config, "llm", None)
    if llm is None or llm.backend != "local":
        return EstimatingCounter()
    key = llm.model_path or f"{config.data_dir}:{llm.model}"
    with _counters_lock:
        if key not in _counters:
            try:
                if llm.model_path:
                    path = llm.model_path
                else:
                    from capabilities.llm.models import model_path

                    path = str(model_path(llm.model, config.data_dir))
                _counters[key] = VocabCounter(path)
            except Exception as exc:  # no llama.cpp, no file yet: the estimate is never short
                log.info("counting the agent's tokens by estimate (%s)", exc)
                _counters[key] = EstimatingCounter()
        return _counters[key]


@dataclass(frozen=True)
class ContextBudget:
    """How many tokens a prompt may take: ``n_ctx`` less the reply's and a margin."""

    n_ctx: int = 4096
    reply_tokens: int = 512

    @property
    def margin(self) -> int:
        return max(MIN_MARGIN, int(self.n_ctx * MARGIN_SHARE))

    @property
    def prompt_tokens(self) -> int:
        return max(0, self.n_ctx - self.reply_tokens - self.margin)

    def shrunk(self, by: int) -> "ContextBudget":
        """The same budget with ``by`` tokens fewer for the prompt (a server counted more)."""
        return ContextBudget(max(self.reply_tokens + 1, self.n_ctx - by), self.reply_tokens)


def message_tokens(counter: TokenCounter, messages: list[dict]) -> int:
    """The tokens of a list of chat messages, with what the template adds around each."""
    return sum(counter.count(str(m.get("content", ""))) + MESSAGE_OVERHEAD for m in messages)


def cut(text: str, counter: TokenCounter, tokens: int) -> str:
    """``text`` cut (with a note) so that it takes at most ``tokens`` tokens."""
    if counter.count(text) <= tokens:
        return text
    if tokens <= 0:
        return ""
    keep = min(len(text), tokens * 3)
    while keep > 0:
        shown = text[:keep] + f"… [cut: {len(text) - keep} more characters]"
        if counter.count(shown) <= tokens:
            return shown
        keep = int(keep * 0.8) - 1
    return ""


def fits_badly(exc: Exception) -> bool:
    """Whether the server refused the prompt for its length (llama.cpp and OpenAI say "context")."""
    return "context" in str(exc).lower()


_REQUESTED = re.compile(r"requested\s+(\d+)\s+tokens")
_MAXIMUM = re.compile(r"context length is\s+(\d+)")


def overflow(exc: Exception, budget: ContextBudget) -> int:
    """By how many tokens to shrink the prompt after the server's refusal: what it says was over,
    with a margin; a quarter of the context when it does not say."""
    said = str(exc)
    requested, maximum = _REQUESTED.search(said), _MAXIMUM.search(said)
    if requested and maximum:
        return max(64, int(requested.group(1)) - int(maximum.group(1)) + 64)
    return budget.n_ctx // 4
