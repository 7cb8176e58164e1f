#!/usr/bin/env python3
"""Independent sanity check of the golden cases (no onnxruntime on this machine).

Runs every tests/golden/cases/*/ model with a tiny, slow, pure-numpy interpreter that
implements only the ops these models use, following the ONNX spec text directly
(ConvTranspose via explicit scatter with pads / output_shape / auto_pad), and compares
against outputs/*.npy. Also re-runs each case with a different batch size (first
input rows only) to check the dynamic batch dim.

Usage: OMP_WAIT_POLICY=passive /usr/bin/python3 tests/golden/check_goldens.py
"""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def conv(x, w, b, a):
    g = a.get("group", 1)
    if g != 1:  # grouped: each group an ungrouped conv on its channel slices
        ci, co = x.shape[1] // g, w.shape[0] // g
        a1 = dict(a, group=1)
        return np.concatenate([conv(x[:, i * ci:(i + 1) * ci], w[i * co:(i + 1) * co],
                                    None if b is None else b[i * co:(i + 1) * co], a1) for i in range(g)], axis=1)
    k = w.shape[2:]
    s, d = a.get("strides", [1, 1]), a.get("dilations", [1, 1])
    p = a.get("pads", [0, 0, 0, 0])
    assert a.get("group", 1) == 1 and a.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET")
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    n, c, h, wd = x.shape
    oh = (h - ((k[0] - 1) * d[0] + 1)) // s[0] + 1
    ow = (wd - ((k[1] - 1) * d[1] + 1)) // s[1] + 1
    y = np.zeros((n, w.shape[0], oh, ow), np.float64)
    for i in range(k[0]):
        for j in range(k[1]):
            patch = x[:, :, i * d[0]: i * d[0] + s[0] * (oh - 1) + 1: s[0],
                      j * d[1]: j * d[1] + s[1] * (ow - 1) + 1: s[1]]
            y += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return y + (b.reshape(1, -1, 1, 1) if b is not None else 0)


def conv_transpose(x, w, b, a):
    """Spec-literal ConvTranspose: scatter x into the full output, then apply pads."""
    g = a.get("group", 1)
    if g != 1:  # grouped: each group an ungrouped transposed conv on its channel slices
        ci, co = x.shape[1] // g, w.shape[1]
        a1 = dict(a, group=1)
        return np.concatenate([conv_transpose(x[:, i * ci:(i + 1) * ci], w[i * ci:(i + 1) * ci],
                                              None if b is None else b[i * co:(i + 1) * co], a1) for i in range(g)], axis=1)
    n, c, ih, iw = x.shape
    k = w.shape[2:]
    s, d = a.get("strides", [1, 1]), a.get("dilations", [1, 1])
    op = a.get("output_padding", [0, 0])
    assert a.get("group", 1) == 1
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    full = [s[i] * ([ih, iw][i] - 1) + op[i] + (k[i] - 1) * d[i] + 1 for i in range(2)]
    if "output_shape" in a or auto in ("SAME_UPPER", "SAME_LOWER"):
        out = list(a["output_shape"][-2:]) if "output_shape" in a else [ih * s[0], iw * s[1]]
        tot = [full[i] - out[i] for i in range(2)]
        if auto == "SAME_UPPER":
            pb, pe = [t // 2 for t in tot], [t - t // 2 for t in tot]
        else:
            pb, pe = [t - t // 2 for t in tot], [t // 2 for t in tot]
    else:
        p = a.get("pads", [0, 0, 0, 0])
        pb, pe = p[:2], p[2:]
    out = [full[i] - pb[i] - pe[i] for i in range(2)]
    y = np.zeros((n, w.shape[1], out[0], out[1]), np.float64)
    for hi in range(ih):
        for wi in range(iw):
            for i in range(k[0]):
                for j in range(k[1]):
                    oh, ow = hi * s[0] + i * d[0] - pb[0], wi * s[1] + j * d[1] - pb[1]
                    if 0 <= oh < out[0] and 0 <= ow < out[1]:
                        y[:, :, oh, ow] += x[:, :, hi, wi] @ w[:, :, i, j]
    return y + (b.reshape(1, -1, 1, 1) if b is not None else 0)


def run(model, feeds):
    env = {i.name: numpy_helper.to_array(i).astype(np.float64) if i.data_type == 1 else numpy_helper.to_array(i)
           for i in model.graph.initializer}
    env.update({k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in feeds.items()})
    for node in model.graph.node:
        a = attrs(node)
        ins = [env[i] if i else None for i in node.input]
        t = node.op_type
        if t == "Constant":
            r = numpy_helper.to_array(a["value"])
        elif t == "Conv":
            r = conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a)
        elif t == "ConvTranspose":
            r = conv_transpose(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a)
        elif t == "BatchNormalization":
            x, g, bb, m, v = ins
            sh = (1, -1) + (1,) * (x.ndim - 2)
            r = (x - m.reshape(sh)) / np.sqrt(v.reshape(sh) + a.get("epsilon", 1e-5)) * g.reshape(sh) + bb.reshape(sh)
        elif t == "Gemm":
            A = ins[0].T if a.get("transA", 0) else ins[0]
            B = ins[1].T if a.get("transB", 0) else ins[1]
            r = a.get("alpha", 1.0) * A @ B + (a.get("beta", 1.0) * ins[2] if len(ins) > 2 else 0)
        elif t == "MatMul":
            r = ins[0] @ ins[1]
        elif t == "Relu":
            r = np.maximum(ins[0], 0)
        elif t == "LeakyRelu":
            r = np.where(ins[0] > 0, ins[0], a.get("alpha", 0.01) * ins[0])
        elif t == "Tanh":
            r = np.tanh(ins[0])
        elif t == "Sigmoid":
            r = 1 / (1 + np.exp(-ins[0]))
        elif t == "Reshape":
            shp = [int(v) for v in ins[1]]
            shp = [ins[0].shape[i] if v == 0 else v for i, v in enumerate(shp)]
            r = ins[0].reshape(shp)
        elif t == "Flatten":
            ax = a.get("axis", 1)
            r = ins[0].reshape(int(np.prod(ins[0].shape[:ax])), -1)
        elif t == "Shape":
            r = np.array(ins[0].shape, np.int64)
        elif t == "Gather":
            r = np.take(ins[0], ins[1].astype(np.int64), axis=a.get("axis", 0))
        elif t == "Unsqueeze":
            axes = a["axes"] if "axes" in a else [int(v) for v in ins[1]]
            r = ins[0]
            for ax in sorted(axes):
                r = np.expand_dims(r, ax)
        elif t == "Concat":
            r = np.concatenate(ins, axis=a["axis"])
        else:
            raise NotImplementedError(t)
        env[node.output[0]] = r
    return {o.name: env[o.name] for o in model.graph.output}


def main():
    bad = 0
    for d in sorted(glob.glob(os.path.join(REPO, "tests", "golden", "cases", "*"))):
        name = os.path.basename(d)
        mp = os.path.join(d, "model.onnx")
        if not os.path.exists(mp):
            mp = os.path.join(REPO, open(os.path.join(d, "model_path.txt")).read().strip())
        model = onnx.load(mp)
        onnx.checker.check_model(model)
        feeds = {os.path.basename(f)[:-4]: np.load(f) for f in glob.glob(os.path.join(d, "inputs", "*.npy"))}
        want = {os.path.basename(f)[:-4]: np.load(f) for f in glob.glob(os.path.join(d, "outputs", "*.npy"))}
        assert set(feeds) == {i.name for i in model.graph.input} - {i.name for i in model.graph.initializer}, name
        assert set(want) == {o.name for o in model.graph.output}, name
        got = run(model, feeds)
        err = max(float(np.abs(got[k] - want[k]).max()) for k in want)
        # dynamic batch: run on the first row only, must match the first row of the golden output
        got1 = run(model, {k: v[:1] for k, v in feeds.items()})
        err1 = max(float(np.abs(got1[k] - want[k][:1]).max()) for k in want)
        dtypes = ",".join("%s:%s" % (k, v.dtype) for k, v in sorted(feeds.items()))
        ok = err < 1e-4 and err1 < 1e-4 and all(v.dtype == np.float32 for v in want.values())
        bad += not ok
        print("%-28s %-4s max|err| %.2e (batch1 %.2e)  inputs %s" % (name, "OK" if ok else "FAIL", err, err1, dtypes))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
