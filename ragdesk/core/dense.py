"""Dense retrieval and reciprocal rank fusion, explained like BM25 is.

Embeddings are optional (`pip install "ragdesk[dense]"`): the default backend is WordLlama, whose
256-d weights and tokenizer ship inside its wheel; they are loaded from the installed files, so
nothing is downloaded. Chunk embeddings (title/headings + text, L2-normalized, float16) are stored
beside the BM25 index in the same generation.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np

RRF_C = 60
MODES = ("bm25", "dense", "hybrid")
FUSION_DEPTH = 100  # how many results of each engine take part in the fusion


class DenseUnavailable(RuntimeError):
    """No embedding backend is installed; the message says what to install."""


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalized."""
        ...


class WordLlamaEmbedder:
    """WordLlama (l2_supercat, 256-d) loaded from the files in its installed wheel: fully offline."""

    name = "wordllama-l2-256"

    def __init__(self) -> None:
        try:
            from safetensors import safe_open
            from tokenizers import Tokenizer
            from wordllama.inference import WordLlamaInference
        except ImportError as exc:
            raise DenseUnavailable('dense search needs the optional extra: pip install "ragdesk[dense]"') from exc
        package = resources.files("wordllama")
        weights = Path(str(package.joinpath("weights", "l2_supercat_256.safetensors")))
        tokenizer = Path(str(package.joinpath("tokenizers", "l2_supercat_tokenizer_config.json")))
        if not weights.is_file() or not tokenizer.is_file():
            raise DenseUnavailable(f"the installed wordllama lacks its bundled model files ({weights.name})")
        with safe_open(str(weights), framework="np", device="cpu") as f:
            matrix = f.get_tensor("embedding.weight")
        self._model = WordLlamaInference(matrix, Tokenizer.from_file(str(tokenizer)))

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 256), np.float32)
        return np.asarray(self._model.embed(texts, norm=True, batch_size=256), dtype=np.float32)


class Model2VecEmbedder:
    """A model2vec static model from a local folder chosen by the user (never fetched from a hub)."""

    def __init__(self, folder: str) -> None:
        path = Path(folder).expanduser()
        if not path.is_dir():
            raise DenseUnavailable(
                f"model2vec needs a local model folder; {folder} is not one (ragdesk never downloads models)"
            )
        try:
            from model2vec import StaticModel
        except ImportError as exc:
            raise DenseUnavailable("this embedding model needs model2vec: pip install model2vec") from exc
        self._model = StaticModel.from_pretrained(str(path), force_download=False)
        self.name = embedder_name(f"model2vec:{folder}")

    def embed(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self._model.encode(texts), dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


DEFAULT_EMBEDDER = "wordllama"


def embedder_name(spec: str | None) -> str:
    """The storage name of an embedder spec ("wordllama" or "model2vec:/path"), without loading it."""
    if not spec or spec == DEFAULT_EMBEDDER:
        return WordLlamaEmbedder.name
    kind, _, folder = spec.partition(":")
    resolved = str(Path(folder).expanduser().resolve())
    digest = hashlib.sha1(resolved.encode("utf-8")).hexdigest()[:8]
    return f"{kind}-{Path(resolved).name}-{digest}"


def dense_available(spec: str | None = None) -> bool:
    """Whether the embedding backend of `spec` is installed (without importing it)."""
    import importlib.util

    module = "model2vec" if spec and spec.startswith("model2vec:") else "wordllama"
    return importlib.util.find_spec(module) is not None


def load_embedder(spec: str | None = None) -> Embedder:
    """The embedding backend named by `spec` ("wordllama", the default, or "model2vec:/local/folder"),
    or DenseUnavailable with what to install or fix."""
    if not spec or spec == DEFAULT_EMBEDDER:
        return WordLlamaEmbedder()
    kind, _, folder = spec.partition(":")
    if kind == "model2vec" and folder:
        return Model2VecEmbedder(folder)
    raise DenseUnavailable(f"unknown embedding model {spec!r}; use wordllama or model2vec:/path/to/model")


def dense_top_k(matrix: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Chunks by cosine similarity (rows and query are normalized): (ids, cosines), best first."""
    sims = np.asarray(matrix @ query.astype(matrix.dtype), dtype=np.float64)
    k = min(k, len(sims))
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0)
    top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
    order = np.lexsort((top, -sims[top]))
    return top[order], sims[top[order]]


@dataclass(frozen=True)
class Fusion:
    """How a fused rank came about: each engine's rank (None if it did not list the chunk) and share."""

    bm25_rank: int | None
    bm25_score: float | None
    dense_rank: int | None
    cosine: float | None
    c: int = RRF_C

    @property
    def bm25_share(self) -> float:
        return 1.0 / (self.c + self.bm25_rank) if self.bm25_rank else 0.0

    @property
    def dense_share(self) -> float:
        return 1.0 / (self.c + self.dense_rank) if self.dense_rank else 0.0

    @property
    def score(self) -> float:
        return self.bm25_share + self.dense_share

    def to_json(self) -> dict[str, object]:
        return {
            "bm25_rank": self.bm25_rank,
            "bm25_score": self.bm25_score,
            "dense_rank": self.dense_rank,
            "cosine": self.cosine,
            "rrf_bm25": self.bm25_share,
            "rrf_dense": self.dense_share,
            "rrf": self.score,
        }

    def describe(self) -> str:
        parts = []
        if self.bm25_rank:
            parts.append(
                f"BM25 #{self.bm25_rank} (score {self.bm25_score:.3f}) → 1/({self.c}+{self.bm25_rank})"
                f" = {self.bm25_share:.4f}"
            )
        else:
            parts.append("BM25: not in its top list → 0")
        if self.dense_rank:
            parts.append(
                f"dense #{self.dense_rank} (cosine {self.cosine:.3f}) → 1/({self.c}+{self.dense_rank})"
                f" = {self.dense_share:.4f}"
            )
        else:
            parts.append("dense: not in its top list → 0")
        return " + ".join(parts) + f" = {self.score:.4f}"


def rrf_fuse(
    bm25: list[tuple[int, float]], dense: list[tuple[int, float]], k: int, c: int = RRF_C
) -> list[tuple[int, Fusion]]:
    """Reciprocal rank fusion of two ranked lists of (chunk id, score): RRF(d) = Σ 1/(c + rank).

    Ties are broken by chunk id, so the fused ranking is reproducible.
    """
    b_rank = {doc: (i + 1, s) for i, (doc, s) in enumerate(bm25)}
    d_rank = {doc: (i + 1, s) for i, (doc, s) in enumerate(dense)}
    fused = []
    for doc in b_rank.keys() | d_rank.keys():
        br, bs = b_rank.get(doc, (None, None))
        dr, ds = d_rank.get(doc, (None, None))
        fused.append((doc, Fusion(br, bs, dr, ds, c)))
    fused.sort(key=lambda x: (-x[1].score, x[0]))
    return fused[:k]
