"""`LLM` backed by llama-cpp-python inside this process.

Right for a single process (a CLI, a benchmark, the smoke test). An actor
system with several processes should share one `ModelHost` instead: every
`LocalLlamaLLM` holds its own copy of the weights.

The model is loaded on the first call, not in the constructor, so building
the object (in config wiring, in an actor's __init__) costs nothing. Calls are
serialized by a lock because a `Llama` object is not thread-safe. No chat
format is forced by default: llama-cpp-python then renders prompts with the
chat template stored in the GGUF, which is the one the model was tuned on.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from capabilities.llm.base import LLMError, LLMReply, LLMUnavailable

logger = logging.getLogger("flora.llm.local")

DEFAULT_N_CTX = 4096
DEFAULT_N_THREADS = 2


class LocalLlamaLLM:
    """A GGUF model run in-process by llama.cpp."""

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int = DEFAULT_N_THREADS,
        chat_format: str | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self.name = f"local:{self.model_path.stem}"
        self._n_ctx = n_ctx
        self._n_threads = n_threads
        self._chat_format = chat_format
        self._lock = threading.Lock()
        self._llama: Any = None
        self.load_seconds: float | None = None

    def complete(
        self,
        messages: list[dict],
        *,
        json_schema: dict | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: list[str] | None = None,
    ) -> LLMReply:
        kwargs = _request(messages, max_tokens, temperature, stop)
        if json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
        with self._lock:
            llama = self._loaded()
            started = time.monotonic()
            try:
                result = llama.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. the prompt does not fit in n_ctx
                raise LLMError(f"{self.name} refused the request: {exc}") from exc
        usage = result.get("usage") or {}
        reply = LLMReply(
            text=result["choices"][0]["message"]["content"] or "",
            model=self.model_path.stem,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )
        logger.debug(
            "%s: %s prompt + %s completion tokens in %.0f ms",
            self.name, reply.prompt_tokens, reply.completion_tokens,
            (time.monotonic() - started) * 1000,
        )
        return reply

    def stream(
        self,
        messages: list[dict],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: list[str] | None = None,
    ) -> Iterator[str]:
        # The lock is held until the stream is exhausted or closed; a caller
        # that abandons a stream should close() it to free the model.
        with self._lock:
            llama = self._loaded()
            try:
                chunks = llama.create_chat_completion(
                    **_request(messages, max_tokens, temperature, stop), stream=True
                )
                for chunk in chunks:
                    delta = chunk["choices"][0]["delta"].get("content")
                    if delta:
                        yield delta
            except ValueError as exc:
                raise LLMError(f"{self.name} refused the request: {exc}") from exc

    def close(self) -> None:
        """Free the weights now rather than at garbage collection."""
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None

    def _loaded(self) -> Any:
        """The Llama object, loading it on first use. Call with the lock held."""
        if self._llama is not None:
            return self._llama
        if not self.model_path.is_file():
            raise LLMUnavailable(f"model file {self.model_path} does not exist")
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LLMUnavailable(
                f"llama-cpp-python is not importable ({exc}); run scripts/install_llm.sh"
            ) from exc
        started = time.monotonic()
        self._llama = Llama(
            model_path=str(self.model_path),
            n_ctx=self._n_ctx,
            n_threads=self._n_threads,
            n_threads_batch=self._n_threads,
            chat_format=self._chat_format,
            verbose=False,
        )
        self.load_seconds = time.monotonic() - started
        logger.info(
            "loaded %s in %.1f s (n_ctx=%s, threads=%s, chat format %s)",
            self.model_path, self.load_seconds, self._n_ctx, self._n_threads,
            self._llama.chat_format,
        )
        return self._llama


def _request(messages: list[dict], max_tokens: int, temperature: float, stop: list[str] | None) -> dict[str, Any]:
    return {"messages": messages, "max_tokens": max_tokens, "temperature": temperature, "stop": stop or None}
