#!/usr/bin/env python3
"""Writes golden cases at the newest opsets: copies of existing cases whose ONNX model
is upgraded by onnx's version converter to opsets 18, 21 and 25, with the same inputs
and PyTorch outputs (an upgrade does not change what a model computes). They show that
models written by current exporters (PyTorch's dynamo exporter, onnxscript: opset 18
and later) convert and match.

Needs the PyPI onnx wheel (1.23 writes opsets up to 25); Debian's torch 1.13 exports
only up to opset 17, which is why the cases are upgraded rather than exported:

    /tmp/onnx-venv/bin/python tests/golden/make_opset_variants.py
"""
import os
import shutil

import onnx
from onnx import version_converter

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
# One case per family of ops the converter takes; each gets a variant per opset.
SOURCES = [
    "g_k5_k4_leaky_sigmoid",      # ConvTranspose, BatchNorm, LeakyRelu, Sigmoid
    "cgan_embed_concat_small",    # Gather (embedding), Concat, Reshape, Gemm
    "d_examples_squeeze_opset17", # Conv, Squeeze with axes as an input
    "d_conv_dilated_flatten",     # dilated Conv, Flatten
]
OPSETS = [18, 21, 25]


def main():
    for source in SOURCES:
        src = os.path.join(CASES, source)
        model = onnx.load(os.path.join(src, "model.onnx"))
        for opset in OPSETS:
            upgraded = version_converter.convert_version(model, opset)
            onnx.checker.check_model(upgraded)
            dst = os.path.join(CASES, f"{source}_opset{opset}")
            if os.path.isdir(dst):
                shutil.rmtree(dst)
            shutil.copytree(os.path.join(src, "inputs"), os.path.join(dst, "inputs"))
            shutil.copytree(os.path.join(src, "outputs"), os.path.join(dst, "outputs"))
            onnx.save(upgraded, os.path.join(dst, "model.onnx"))
            with open(os.path.join(dst, "README.md"), "w") as f:
                f.write(f"`{source}` upgraded to opset {opset} by onnx {onnx.__version__}'s version converter "
                        "(tests/golden/make_opset_variants.py); same inputs and PyTorch outputs.\n")
            print(f"{source} -> opset {opset}")


if __name__ == "__main__":
    main()
