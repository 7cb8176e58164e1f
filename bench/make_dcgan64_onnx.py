#!/usr/bin/env python3
"""Writes the DCGAN-64 of pytorch/examples (nz=100, ngf=ndf=64, 64x64x3; D ending in a
logit) with random DCGAN-init weights (one torch.Generator seeded 0, G then D) as ONNX,
BatchNorm in eval mode, for bench/training_step_bench (converted by edgegan-convert):

    OMP_WAIT_POLICY=passive /usr/bin/python3 bench/make_dcgan64_onnx.py --out build/bench/dcgan64
    build/converter/edgegan-convert build/bench/dcgan64/generator.onnx -o build/bench/dcgan64/generator.egan

About 25 MB of ONNX: generated at benchmark time, never committed.
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "golden"))
from gan_models import Dcgan64D, Dcgan64G, dcgan_init  # noqa: E402
from golden_util import export_onnx  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="directory for generator.onnx and discriminator.onnx")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    G = dcgan_init(Dcgan64G(), gen)
    D = dcgan_init(Dcgan64D(), gen)
    export_onnx(G, (torch.randn(2, 100, 1, 1, generator=gen),), ["z"], ["image"], os.path.join(a.out, "generator.onnx"))
    export_onnx(D, (torch.rand(2, 3, 64, 64, generator=gen) * 2 - 1,), ["image"], ["logit"], os.path.join(a.out, "discriminator.onnx"))
    for f in ("generator.onnx", "discriminator.onnx"):
        p = os.path.join(a.out, f)
        print("wrote %s (%.1f MB)" % (p, os.path.getsize(p) / 1e6))


if __name__ == "__main__":
    main()
