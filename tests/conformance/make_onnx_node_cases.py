#!/usr/bin/env python3
"""Writes ONNX's own operator conformance cases for the ops edgegan converts into
tests/conformance/cases/<case>/ (model.onnx, inputs/*.npy, outputs/*.npy), the
layout tests/conformance/conformance_test.cpp reads.

Needs the PyPI onnx wheel (1.23 writes opsets up to 25), which carries the case
generators but no longer the generated data:

    python3 -m venv /tmp/onnx-venv && /tmp/onnx-venv/bin/pip install onnx==1.23.* numpy
    /tmp/onnx-venv/bin/python tests/conformance/make_onnx_node_cases.py

CI needs nothing of this: the cases are committed.

Each case is a one-node model with fixed shapes. edgegan treats dimension 0 of every
activation as the batch, so:
  * inputs the op reads as parameters (convolution weights, norm scales, pads, scales,
    clip bounds, shapes) become initializers, as a converted generator has them;
  * another input whose dimension 0 is not the batch (a broadcast operand of rank
    below the data's, say) becomes an initializer too: a constant operand;
  * a case whose output's dimension 0 is not its first input's (the op moves or
    changes the batch), whose data is not float32, or whose output is not float32 is
    out of scope; out_of_scope.txt lists each with the reason.
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case.node import collect_testcases

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")

# The ONNX ops edgegan's converter takes (at run time), and per op the inputs that are parameters.
OPS = {
    "Conv": {1, 2}, "ConvTranspose": {1, 2}, "Gemm": {1, 2}, "MatMul": {1}, "Flatten": set(),
    "BatchNormalization": {1, 2, 3, 4}, "InstanceNormalization": {1, 2}, "GroupNormalization": {1, 2},
    "Relu": set(), "LeakyRelu": set(), "Tanh": set(), "Sigmoid": set(), "PRelu": {1},
    "Elu": set(), "Selu": set(), "Clip": {1, 2}, "HardSigmoid": set(), "HardSwish": set(), "Softplus": set(), "Mish": set(),
    "Add": set(), "Sub": set(), "Mul": set(), "Div": set(),
    "Concat": set(), "Reshape": {1}, "Squeeze": {1}, "Unsqueeze": {1}, "Transpose": set(), "Split": {1},
    "Pad": {1, 2, 3}, "Resize": {1, 2, 3}, "DepthToSpace": set(), "SpaceToDepth": set(),
    "AveragePool": set(), "MaxPool": set(), "GlobalAveragePool": set(), "GlobalMaxPool": set(),
    "Identity": set(), "Dropout": {1, 2},
    "Pow": {1}, "Sqrt": set(), "Exp": set(), "Log": set(), "Erf": set(), "Abs": set(), "Neg": set(),
    "ReduceSum": {1}, "ReduceMean": {1}, "ReduceMax": {1}, "ReduceL2": {1}, "Softmax": set(),
    "GridSample": set(),
}


# Ops that only move data: integer cases run as float32, exactly.
MOVES_DATA = {"Pad", "Concat", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Split", "Identity",
              "DepthToSpace", "SpaceToDepth", "MaxPool", "GlobalMaxPool"}


def as_float_if_moved(op, arrays):
    """Integer data of a data-movement op as float32 (values small enough to be exact)."""
    if op not in MOVES_DATA:
        return arrays
    out = []
    for a in arrays:
        if a.dtype.kind in "iu" and a.ndim > 0 and np.abs(a.astype(np.int64)).max(initial=0) < 2**24:
            a = a.astype(np.float32)
        out.append(a)
    return out


def out_of_scope_reason(model, inputs, outputs):
    if len(model.graph.node) != 1:
        return "not a one-node model"
    x = inputs[0]
    if x.dtype != np.float32:
        return f"first input is {x.dtype}, not float32"
    if x.ndim == 0:
        return "first input is a scalar (no batch dimension)"
    for y in outputs:
        if y.dtype != np.float32:
            return f"an output is {y.dtype}, not float32"
        if y.ndim == 0 or y.shape[0] != x.shape[0]:
            return f"output shape {list(y.shape)} does not keep the input's batch {x.shape[0]} as dimension 0"
    return None


def make_case(case):
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    inputs, outputs = case.data_sets[0]
    inputs = [np.asarray(a) for a in inputs]
    outputs = [np.asarray(a) for a in outputs]
    op = model.graph.node[0].op_type
    if op in MOVES_DATA and inputs and inputs[0].dtype.kind in "iu":
        inputs = [inputs[0].astype(np.float32)] + inputs[1:]
        outputs = as_float_if_moved(op, outputs)
        model.graph.input[0].type.tensor_type.elem_type = onnx.TensorProto.FLOAT
        for o in model.graph.output:
            o.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
        if op == "Pad" and len(inputs) > 2:  # the constant value has the data's type
            inputs[2] = inputs[2].astype(np.float32)
    why = out_of_scope_reason(model, inputs, outputs)
    if why:
        return None, why
    node = model.graph.node[0]
    params = OPS[node.op_type]
    graph_inputs = list(model.graph.input)
    keep, feed = [], {}
    for k, (vi, value) in enumerate(zip(graph_inputs, inputs)):
        # Which node input slot this graph input feeds (optional inputs may be skipped).
        slot = list(node.input).index(vi.name) if vi.name in node.input else k
        constant = k > 0 and (slot in params or value.ndim == 0 or value.shape[0] != inputs[0].shape[0])
        if constant:
            model.graph.initializer.append(numpy_helper.from_array(value, vi.name))
        else:
            keep.append(vi)
            feed[vi.name] = value
    del model.graph.input[:]
    model.graph.input.extend(keep)
    for vi in keep:
        if feed[vi.name].dtype not in (np.float32, np.int64):
            return None, f"input {vi.name} is {feed[vi.name].dtype}"
    size = sum(a.nbytes for a in feed.values()) + sum(a.nbytes for a in outputs)
    if size > 256 * 1024:
        return None, f"{size // 1024} KB of data (kept out of the repository; the op's smaller cases cover it)"
    names = [o.name for o in model.graph.output]
    return (model, feed, dict(zip(names, outputs))), None


def main():
    if os.path.isdir(CASES):
        shutil.rmtree(CASES)
    os.makedirs(CASES)
    written, skipped = [], []
    for case in sorted(collect_testcases(None), key=lambda c: c.name):
        if case.kind != "node" or case.model is None or not case.model.graph.node:
            continue
        if case.name.endswith("_expanded") or "_expanded_" in case.name:
            continue  # the op's function body, not the op
        op = case.model.graph.node[0].op_type
        if op not in OPS:
            continue
        made, why = make_case(case)
        if made is None:
            skipped.append((case.name, why))
            continue
        model, feed, expected = made
        d = os.path.join(CASES, case.name)
        os.makedirs(os.path.join(d, "inputs"))
        os.makedirs(os.path.join(d, "outputs"))
        onnx.save(model, os.path.join(d, "model.onnx"))
        for name, value in feed.items():
            np.save(os.path.join(d, "inputs", name + ".npy"), np.ascontiguousarray(value))
        for name, value in expected.items():
            np.save(os.path.join(d, "outputs", name + ".npy"), np.ascontiguousarray(value.astype(np.float32)))
        written.append(case.name)
    with open(os.path.join(HERE, "out_of_scope.txt"), "w") as f:
        f.write("# ONNX node conformance cases of supported ops that edgegan's batch model excludes\n")
        f.write("# (written by make_onnx_node_cases.py; see its docstring)\n")
        for name, why in skipped:
            f.write(f"{name}: {why}\n")
    print(f"onnx {onnx.__version__}: wrote {len(written)} cases, {len(skipped)} out of scope", file=sys.stderr)


if __name__ == "__main__":
    main()
