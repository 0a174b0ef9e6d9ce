"""The few ONNX protobuf messages e5_onnx writes (model, graph, node, tensor, value info), encoded here.

The `onnx` package would do it, but importing it holds Python's lock for 0.6 s (its C++ extension
loading), which froze the window the first time a search loaded the model; these messages need
only protobuf's wire format: varints and length-delimited fields, numbered as in onnx.proto.
"""

from __future__ import annotations

import struct

import numpy as np

FLOAT, UINT8, INT8, INT64 = 1, 2, 3, 7  # TensorProto.DataType
_DTYPES = {np.dtype(np.float32): FLOAT, np.dtype(np.uint8): UINT8, np.dtype(np.int8): INT8, np.dtype(np.int64): INT64}
_ATTR_FLOAT, _ATTR_INT, _ATTR_INTS = 1, 2, 7  # AttributeProto.AttributeType


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # a negative int64 as its two's complement
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _int(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _bytes(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _str(number: int, text: str) -> bytes:
    return _bytes(number, text.encode("utf-8"))


def tensor(name: str, array: np.ndarray) -> bytes:
    """TensorProto: dims (1), data_type (2), name (8), raw_data (9, little-endian)."""
    raw = np.asarray(array, array.dtype.newbyteorder("<")).tobytes()  # C order, even for a scalar
    dims = b"".join(_int(1, d) for d in array.shape)
    return dims + _int(2, _DTYPES[array.dtype]) + _str(8, name) + _bytes(9, raw)


def _attribute(name: str, value: int | float | list[int]) -> bytes:
    """AttributeProto: name (1), f (2), i (3), ints (8), type (20)."""
    if isinstance(value, list):
        return _str(1, name) + b"".join(_int(8, v) for v in value) + _int(20, _ATTR_INTS)
    if isinstance(value, float):
        return _str(1, name) + _varint(2 << 3 | 5) + struct.pack("<f", value) + _int(20, _ATTR_FLOAT)
    return _str(1, name) + _int(3, value) + _int(20, _ATTR_INT)


def node(op: str, inputs: list[str], outputs: list[str], **attributes: int | float | list[int]) -> bytes:
    """NodeProto: input (1), output (2), op_type (4), attribute (5); "" is an omitted input."""
    body = b"".join(_str(1, i) for i in inputs) + b"".join(_str(2, o) for o in outputs) + _str(4, op)
    return body + b"".join(_bytes(5, _attribute(k, v)) for k, v in attributes.items())


def value_info(name: str, elem_type: int, shape: list[int | str]) -> bytes:
    """ValueInfoProto of a tensor: a dimension is a size or a symbolic name."""
    dims = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _str(2, d)) for d in shape)
    tensor_type = _int(1, elem_type) + _bytes(2, dims)
    return _str(1, name) + _bytes(2, _bytes(1, tensor_type))


def model(
    name: str,
    nodes: list[bytes],
    initializers: list[bytes],
    inputs: list[bytes],
    outputs: list[bytes],
    opset: int,
    ir_version: int,
) -> bytes:
    """ModelProto: ir_version (1), graph (7: node 1, name 2, initializer 5, input 11, output 12),
    opset_import (8: the default domain at `opset`). Written into one buffer, `initializers` emptied
    as they are copied: the weights are held twice at most, not five times (83 MB at peak for e5)."""
    fields = [_bytes(1, n) for n in nodes] + [_str(2, name)]
    tail = [_bytes(11, i) for i in inputs] + [_bytes(12, o) for o in outputs]
    heads = [_varint(5 << 3 | 2) + _varint(len(t)) for t in initializers]
    graph_len = sum(map(len, fields + tail + heads + initializers))
    out = bytearray(_int(1, ir_version) + _varint(7 << 3 | 2) + _varint(graph_len))
    for field in fields:
        out += field
    initializers.reverse()  # popped from the end, in order
    for head in heads:
        out += head
        out += initializers.pop()
    for field in tail:
        out += field
    out += _bytes(8, _str(1, "") + _int(2, opset))
    return bytes(out)
