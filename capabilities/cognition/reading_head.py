"""ReadingHead: a linear reader of a message's reading, trained on the example bank's vectors.

The nearest-neighbour vote (semantic.py) reads a message by the few examples nearest to it, so
a phrasing that lies between two crowds of examples goes to whichever crowd has one example a
little nearer. A multinomial logistic regression over the whole bank weighs every example at
once: it learns which directions of the embedding tell one reading from another rather than
which sentence is nearest. Its classes are the bank's readings, ``<family>/<kind>``, not the
families: a family such as ``chat`` holds greetings, jokes and questions of knowledge, which lie
in different places, and one linear boundary around them all reads worse than one per kind
(the bank read by tenths: the family right 86 % of the time with a head over the families, 91 %
with one over the readings, a family's probability being its kinds' sum). The kind comes with
it, no second head needed: mixed with the vote, family and kind are both right 85 % of the
time, against 70 % for the vote alone, whose kind is the one its nearest examples of the family
agree on.

Training is numpy only and deterministic. The bank's vectors are centred and turned to the
eigenvectors of their covariance, each direction scaled so the loss curves alike along all of
them (a Newton step's scaling without its Hessian); the weights start at zero and take
``STEPS`` steps of Nesterov's accelerated gradient on the L2-regularised cross-entropy, each of
size 1/L for the loss's smoothness bound L, so no step size is tuned and no run differs from
another. The penalty is ``L2`` times the bank's mean variance per dimension, so it means the same
for another embedding model. One to two seconds for ~2,400 examples of 384 dimensions, on one
BLAS thread (threadpoolctl, a requirement already: two threads on a busy two-core machine were
eight times slower).

A head is kept on disk beside the bank's vectors, keyed by the model, every example's text and
reading in order (the shipped bank, the configured files and each installed capability's
examples alike) and the training's settings: a start with an unchanged bank reads it back, any
change trains a new one.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

log = logging.getLogger("flora.semantic")

L2 = 0.002  # the weights' penalty, in the bank's mean variance per dimension (bench/semantic_reading.py --tune)
STEPS = 200  # of accelerated gradient; the loss moves < 1e-3 after ~150
VERSION = 1  # of the training itself: a change to it retrains every kept head
KEPT = 8  # heads kept on disk per model (one per bank recently read with)


@dataclass(frozen=True)
class ReadingHead:
    """``labels``: the readings (``<family>/<kind>``) of the bank, in the order of the weights'
    columns; ``weights`` (dim × labels) and ``bias`` read a unit vector as it is (the centring and
    turning of training folded in)."""

    labels: tuple[str, ...]
    weights: np.ndarray
    bias: np.ndarray

    def probabilities(self, vectors: np.ndarray, temperature: float = 1.0) -> np.ndarray:
        """Each row of ``vectors``' probability of each of ``labels`` (rows sum to 1)."""
        logits = (np.atleast_2d(vectors) @ self.weights + self.bias) / temperature
        logits -= logits.max(axis=1, keepdims=True)
        odds = np.exp(logits)
        return odds / odds.sum(axis=1, keepdims=True)


def train(vectors: np.ndarray, labels: Sequence[str], *, l2: float = L2, steps: int = STEPS) -> ReadingHead:
    """A head over the distinct ``labels`` (in the order they first occur), from ``vectors``
    (one unit vector per label)."""
    classes = tuple(dict.fromkeys(labels))
    if len(classes) < 2:  # nothing to tell apart: every message is the one reading
        return ReadingHead(classes, np.zeros((vectors.shape[1], len(classes))), np.zeros(len(classes)))
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, "blas"):
        return _train(np.asarray(vectors, dtype=np.float64), labels, classes, l2, steps)


def _train(x: np.ndarray, labels: Sequence[str], classes: tuple[str, ...], l2: float, steps: int) -> ReadingHead:
    n = len(x)
    mean = x.mean(axis=0)
    centred = x - mean
    variances, axes = np.linalg.eigh(centred.T @ centred / n)
    variances = np.clip(variances, 0.0, None)
    penalty = max(l2 * float(variances.mean()), 1e-12)  # (a bank of one sentence has no variance)
    # along each axis the cross-entropy curves at most ½·variance (its Hessian is at most ½·XᵀX/n
    # per class) and the penalty adds its own: scaled by that, every axis is bounded by 1, so a
    # step of 1 is safe and none crawls; the constant column carries the bias the same way
    scale = np.sqrt(0.5 * variances + penalty)
    z = np.hstack([centred @ axes / scale, np.full((n, 1), np.sqrt(2.0))]).astype(np.float32)
    shrink = np.append(penalty / scale ** 2, 0.0)[:, None]  # the bias is not shrunk
    index = {label: i for i, label in enumerate(classes)}
    target = np.zeros((n, len(classes)), dtype=np.float32)
    target[np.arange(n), [index[label] for label in labels]] = 1.0
    w = np.zeros((z.shape[1], len(classes)))
    ahead, momentum = w, 1.0
    for _ in range(steps):
        logits = z @ ahead.astype(np.float32)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        gradient = (z.T @ (p - target)).astype(np.float64) / n + shrink * ahead
        stepped = ahead - gradient
        following = (1 + np.sqrt(1 + 4 * momentum * momentum)) / 2
        ahead = stepped + (momentum - 1) / following * (stepped - w)
        w, momentum = stepped, following
    weights = axes @ (w[:-1] / scale[:, None])
    bias = w[-1] * np.sqrt(2.0) - mean @ weights
    return ReadingHead(classes, weights.astype(np.float32), bias.astype(np.float32))


def key(model: str, texts: Sequence[str], labels: Sequence[str], *, l2: float = L2, steps: int = STEPS) -> str:
    """What a kept head is found by: the model, every example with its reading, in order, and
    the training's settings."""
    digest = hashlib.sha256(f"{VERSION}|{model}|{l2!r}|{steps}".encode())
    for text, label in zip(texts, labels, strict=True):
        digest.update(f"\n{label}\t{text}".encode())
    return digest.hexdigest()[:24]


def cached(model: str, texts: Sequence[str], labels: Sequence[str], vectors: np.ndarray, cache_dir: Path, *,
           l2: float = L2, steps: int = STEPS) -> ReadingHead:
    """The head of this bank: read from ``cache_dir`` when one was trained on exactly these
    examples with these settings, else trained now and kept there."""
    file = cache_dir / f"{model}.head-{key(model, texts, labels, l2=l2, steps=steps)}.npz"
    head = _read(file)
    if head is not None and head.labels == tuple(dict.fromkeys(labels)):
        return head
    log.info("training the reading head on %d example utterances (kept in %s)", len(labels), file)
    head = train(vectors, labels, l2=l2, steps=steps)
    _write(file, head)
    return head


def _read(file: Path) -> ReadingHead | None:
    try:
        with np.load(file) as data:
            head = ReadingHead(tuple(str(label) for label in data["labels"]), data["weights"], data["bias"])
    except (OSError, ValueError, KeyError):
        return None
    if head.weights.ndim != 2 or head.weights.shape[1] != len(head.labels) or head.bias.shape != (len(head.labels),):
        return None
    return head


def _write(file: Path, head: ReadingHead) -> None:
    """Best effort, like the vectors' cache: written whole and renamed into place. The model's
    heads beyond the ``KEPT`` newest are removed (each edit of the bank leaves one behind)."""
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=file.parent, suffix=".tmp.npz", delete=False) as out:
            np.savez(out, labels=np.array(head.labels), weights=head.weights, bias=head.bias)
        os.replace(out.name, file)
        model = file.name.partition(".head-")[0]
        kept = sorted(file.parent.glob(f"{model}.head-*.npz"), key=lambda f: f.stat().st_mtime, reverse=True)
        for old in kept[KEPT:]:
            old.unlink(missing_ok=True)
    except OSError as exc:
        log.info("reading head not kept at %s: %s", file, exc)
