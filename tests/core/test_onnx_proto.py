"""The ONNX messages written without the onnx package: onnxruntime runs them as numpy computes, and
they are the bytes onnx's own helpers write."""

from __future__ import annotations

import numpy as np
import pytest

from ragdesk.core import onnx_proto as proto

ort = pytest.importorskip("onnxruntime")


def tiny_model() -> bytes:
    """Every kind of field e5_onnx writes: int, float and ints attributes, tensors of four types,
    symbolic and fixed dimensions, an omitted input."""
    nodes = [
        proto.node("Transpose", ["x"], ["xt"], perm=[1, 0]),  # ints
        proto.node("LayerNormalization", ["xt", "w", "b"], ["n"], axis=-1, epsilon=1e-5),  # negative int, float
        proto.node("ReduceMax", ["n", "axes"], ["m"], keepdims=0),
        proto.node("Cast", ["u"], ["uf"], to=proto.FLOAT),
        proto.node("Clip", ["m", "", "uf"], ["y"]),  # no min: an omitted input
    ]
    inits = [
        proto.tensor("w", np.array([1.0, 2.0, 0.5], np.float32)),
        proto.tensor("b", np.array([0.0, -1.0, 3.0], np.float32)),
        proto.tensor("axes", np.array([1], np.int64)),
        proto.tensor("u", np.array(200, np.uint8)),
    ]
    inputs = [proto.value_info("x", proto.FLOAT, [3, "N"])]
    outputs = [proto.value_info("y", proto.FLOAT, ["N"])]
    return proto.model("tiny", nodes, inits, inputs, outputs, opset=20, ir_version=9)


def test_onnxruntime_runs_the_written_model_as_numpy_computes() -> None:
    x = np.array([[1.0, -2.0], [3.0, 500.0], [0.5, 7.0]], np.float32)  # (3, N=2)
    session = ort.InferenceSession(tiny_model(), providers=["CPUExecutionProvider"])
    (got,) = session.run(["y"], {"x": x})
    xt = x.T
    normed = (xt - xt.mean(axis=1, keepdims=True)) / np.sqrt(xt.var(axis=1, keepdims=True) + 1e-5)
    want = np.minimum((normed * [1.0, 2.0, 0.5] + [0.0, -1.0, 3.0]).max(axis=1), 200.0)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_the_bytes_are_the_ones_onnx_writes() -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    nodes = [
        helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0]),
        helper.make_node("LayerNormalization", ["xt", "w", "b"], ["n"], axis=-1, epsilon=1e-5),
        helper.make_node("ReduceMax", ["n", "axes"], ["m"], keepdims=0),
        helper.make_node("Cast", ["u"], ["uf"], to=TensorProto.FLOAT),
        helper.make_node("Clip", ["m", "", "uf"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array([1.0, 2.0, 0.5], np.float32), "w"),
        numpy_helper.from_array(np.array([0.0, -1.0, 3.0], np.float32), "b"),
        numpy_helper.from_array(np.array([1], np.int64), "axes"),
        numpy_helper.from_array(np.array(200, np.uint8), "u"),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, "N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    assert tiny_model() == model.SerializeToString()
    onnx.checker.check_model(onnx.load_from_string(tiny_model()))
