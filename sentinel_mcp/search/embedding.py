"""Text as vectors: llama-cpp embeddings when a model is configured, else the hashing trick.

The hashing trick needs no model: words (lower case, a light suffix strip) and word pairs are hashed into a
fixed number of signed buckets, weighted by log term frequency, and normalised. It finds passages that share
words and phrases with the question; a real embedding model also finds paraphrases.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from pathlib import Path
from typing import Protocol

import numpy as np

_WORD = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset(
    "a an and are as at be by can do does for from has have how i if in is it its my of on or our so that "
    "the "
    "their them then there they this to was we what when where which who why will with you your me am".split()
)


def words(text: str) -> list[str]:
    """Content words of a text, lower case, with a light suffix strip (bags -> bag, changed -> chang)."""
    out = []
    for w in _WORD.findall(text.lower()):
        if w in STOP_WORDS:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if len(w) > len(suffix) + 3 and w.endswith(suffix):
                w = w[: -len(suffix)]
                break
        out.append(w)
    return out


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised float32 row per text."""
        ...


class HashingEmbedder:
    cheap = True  # a text's vector costs microseconds: a query is embedded inline, not in a thread

    def __init__(self, dim: int = 1024) -> None:
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _features(self, text: str) -> dict[str, float]:
        ws = words(text)
        feats: dict[str, float] = {}
        for w in ws:
            feats[w] = feats.get(w, 0.0) + 1.0
        for a, b in zip(ws, ws[1:]):
            key = f"{a} {b}"
            feats[key] = feats.get(key, 0.0) + 0.5
        return feats

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for feat, tf in self._features(text).items():
                h = int.from_bytes(hashlib.blake2b(feat.encode(), digest_size=8).digest(), "little")
                out[i, h % self.dim] += (1.0 if (h >> 63) & 1 else -1.0) * (1.0 + math.log(tf))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


class LlamaEmbedder:
    """Embeddings from a GGUF model through llama-cpp (mean of the token vectors when the model does not
    pool)."""

    def __init__(self, model_path: str | Path, threads: int | None = None, n_ctx: int = 512) -> None:
        from llama_cpp import Llama  # optional dependency ("llm" extra)

        from sentinel_mcp.core.closed_at_exit import remember
        from sentinel_mcp.llm import inert_templates

        inert_templates.install()  # Llama() compiled (and constant-folded) the file's chat templates here
        self._llm = Llama(
            model_path=str(model_path), embedding=True, n_ctx=n_ctx, n_threads=threads, verbose=False
        )
        self._lock = threading.Lock()  # a Llama object is not safe from two threads
        self._n_ctx = n_ctx
        self.name = f"llama:{Path(model_path).name}"
        self.dim = len(self._one("dimension probe"))
        remember(self)

    def close(self) -> None:
        with self._lock:
            self._llm.close()

    def _one(self, text: str) -> np.ndarray:
        tokens = self._llm.tokenize(text.encode("utf-8", "replace"))[: self._n_ctx - 8]
        with self._lock:
            raw = self._llm.embed(self._llm.detokenize(tokens).decode("utf-8", "replace") or " ")
        v = np.asarray(raw, dtype=np.float32)
        if v.ndim == 2:  # one vector per token: pool
            v = v.mean(axis=0)
        n = float(np.linalg.norm(v))
        return v / n if n else v

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.vstack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def embedder_for(model: str | None, *, dim: int = 1024, threads: int | None = None) -> Embedder:
    """The configured embedder; a model that cannot be loaded is an error the caller reports."""
    if not model:
        return HashingEmbedder(dim)
    from sentinel_mcp.llm.model_source import check_gguf_header, resolve_model_path

    path = resolve_model_path(model)
    check_gguf_header(path)
    return LlamaEmbedder(path, threads)
