#!/usr/bin/env python3
"""Converts and runs ten generator/discriminator architectures written the way their
published repositories write them (tests/published/architectures.py: CycleGAN's ResNet
generator with dropout and affine-free InstanceNorm, pix2pix's recursive U-Net,
fast-style TransformerNet with F.interpolate upsampling, SRGAN, ESRGAN's RRDBNet,
Real-ESRGAN's SRVGGNetCompact, an AnimeGANv2 generator, PatchGAN, HiFi-GAN and MelGAN
with weight norm still in the graph), and compares `edgegan run` at 1 and 2 threads
with PyTorch: max |y - y_torch| / max(1, max |y_torch|) < 1e-4. Random weights, BatchNorm
statistics perturbed. Needs PyTorch (not a CI dependency: the committed goldens are
what CI checks); exits 1 if any model fails.

  /usr/bin/python3 tests/published/check_published_architectures.py [BUILD_DIR]
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from architectures import MODELS  # noqa: E402


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    torch.manual_seed(0)
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        for name, (cls, shape) in MODELS.items():
            m = cls().eval()
            for mod in m.modules():
                if isinstance(mod, torch.nn.BatchNorm2d):
                    mod.running_mean.uniform_(-0.5, 0.5)
                    mod.running_var.uniform_(0.5, 1.5)
                    mod.weight.data.uniform_(0.5, 1.5)
                    mod.bias.data.uniform_(-0.5, 0.5)
            x = torch.randn(*shape)
            with torch.no_grad():
                y = m(x).numpy()
            onnx_path, egan = os.path.join(work, name + ".onnx"), os.path.join(work, name + ".egan")
            torch.onnx.export(m, x, onnx_path, opset_version=17, input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
            r = subprocess.run([f"{build}/converter/edgegan-convert", "-q", onnx_path, "-o", egan], capture_output=True, text=True)
            if r.returncode:
                print(f"{name}: conversion failed: {r.stderr.strip()}")
                failures += 1
                continue
            x_path = os.path.join(work, name + "_x.npy")
            np.save(x_path, x.numpy())
            results = []
            for threads in (1, 2):
                out = os.path.join(work, f"{name}_y{threads}.npy")
                r = subprocess.run([f"{build}/cli/edgegan", "run", egan, "--input", f"x={x_path}", "-o", out, "--threads", str(threads)],
                                   capture_output=True, text=True)
                if r.returncode:
                    results.append(f"{threads} threads: run failed: {r.stderr.strip()}")
                    failures += 1
                    continue
                err = float(np.abs(np.load(out) - y).max() / max(1.0, float(np.abs(y).max())))
                ok = err < 1e-4
                failures += 0 if ok else 1
                results.append(f"{threads} threads {err:.1e} {'ok' if ok else 'FAIL'}")
            inspect = subprocess.run([f"{build}/cli/edgegan", "inspect", egan], capture_output=True, text=True).stdout
            kinds = {}
            for line in inspect.splitlines():
                p = line.split()
                if len(p) > 2 and p[0] == "op":
                    kinds[p[2]] = kinds.get(p[2], 0) + 1
            print(f"{name:11s} {' | '.join(results)}   ops {kinds}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
