#!/usr/bin/env python3
"""A DW+SCC generator whole, at a realistic size: edgegan (the converter turns each channel
stack into one SlidingChannelConv) against PyTorch running the channel-stack form it was
written in, forward, batch 1, at 1 and 2 threads. The model (own definition): stem conv
3x3 3 -> 64 at 64x64, four DW+SCC blocks (depthwise 3x3 + BN + LeakyReLU(0.2), SCC cg4
co50% 64 -> 64 + BN + LeakyReLU(0.2), residual), nearest x2, one DW+SCC block 64 -> 32 at
128x128, conv 3x3 32 -> 3 + Tanh. Median of --reps runs, ms. Needs PyTorch and a build.

    OMP_WAIT_POLICY=passive /usr/bin/python3 bench/sliding_channel_conv_generator.py [BUILD_DIR] [--reps 20]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))
from make_goldens import SlidingChannelConv  # noqa: E402


class DwScc(nn.Module):
    def __init__(self, cin, cout, form):
        super().__init__()
        self.dw = nn.Conv2d(cin, cin, 3, padding=1, groups=cin, bias=False)
        self.bn1 = nn.BatchNorm2d(cin)
        self.scc = SlidingChannelConv(cin, cout, 4, 0.5, form, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.residual = cin == cout

    def forward(self, x):
        y = F.leaky_relu(self.bn1(self.dw(x)), 0.2)
        y = F.leaky_relu(self.bn2(self.scc(y)), 0.2)
        return x + y if self.residual else y


class DwSccImageGenerator(nn.Module):
    def __init__(self, form="gather"):
        super().__init__()
        self.stem = nn.Conv2d(3, 64, 3, padding=1)
        self.blocks = nn.Sequential(*[DwScc(64, 64, form) for _ in range(4)])
        self.up = DwScc(64, 32, form)
        self.head = nn.Conv2d(32, 3, 3, padding=1)

    def forward(self, x):
        x = self.blocks(F.leaky_relu(self.stem(x), 0.2))
        x = self.up(F.interpolate(x, scale_factor=2, mode="nearest"))
        return torch.tanh(self.head(x))


def torch_ms(model, x, threads, reps):
    torch.set_num_threads(threads)
    times = []
    with torch.no_grad():
        model(x)
        for _ in range(reps):
            t = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    torch.manual_seed(0)
    x = torch.randn(1, 3, 64, 64)
    print(f"{'form':8s} {'threads':>7s} {'edgegan ms':>11s} {'PyTorch ms':>11s} {'ratio':>6s}")
    with tempfile.TemporaryDirectory() as work:
        for form in ("gather", "slices"):
            m = DwSccImageGenerator(form).eval()
            onnx_path, egan = os.path.join(work, form + ".onnx"), os.path.join(work, form + ".egan")
            torch.onnx.export(m, x, onnx_path, opset_version=17, input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
            subprocess.run([f"{a.build}/converter/edgegan-convert", "-q", onnx_path, "-o", egan], check=True)
            inspect = subprocess.run([f"{a.build}/cli/edgegan", "inspect", egan], capture_output=True, text=True, check=True).stdout
            assert inspect.count("SlidingChannelConv") >= 5, "the channel stacks did not become SlidingChannelConv ops"
            for threads in (1, 2):
                out = subprocess.run([f"{a.build}/cli/edgegan", "bench", egan, "--threads", str(threads), "--repeat", str(a.reps), "--warmup", "2"],
                                     capture_output=True, text=True, check=True).stdout
                ours = float(re.search(r"whole model: ([0-9.]+) ms", out).group(1))
                theirs = torch_ms(m, x, threads, a.reps)
                print(f"{form:8s} {threads:7d} {ours:11.3f} {theirs:11.3f} {theirs / ours:5.1f}x")


if __name__ == "__main__":
    main()
