#!/usr/bin/env python3
"""The CUDA backend's precisions against PyTorch's on the same GPU, model by model:
CycleGAN's ResNet generator, the fast style network and Real-ESRGAN's compact network
(tests/published/architectures.py, random weights, seed 0), at batch 1 and 8.

For each: PyTorch FP32 (TF32 off) is the truth; PyTorch fp16 (channels_last, .half())
gives the error fp16 costs there; `edgegan run --backend cuda --precision P` runs the
converted model for P in fp32, tf32, fp16. Errors are max|y - y_fp32| / max(1, max|y_fp32|).
Passes when edgegan's fp16 error is within 2x PyTorch's, its FP32 within 1e-4, and its
TF32 within 1e-2; a precision the build refuses is recorded with its one-line reason
(and fails). One JSON object per line on stdout; exit 1 on any failure.

  python3 scripts/gpu_precision_check.py --edgegan BIN/edgegan --convert BIN/edgegan-convert --work DIR
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "published"))
from architectures import ResnetGenerator, SRVGGNetCompact, TransformerNet  # noqa: E402


def rel_err(y, truth):
    return float(np.max(np.abs(y - truth)) / max(1.0, float(np.max(np.abs(truth)))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--edgegan", required=True)
    p.add_argument("--convert", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    failed = False
    torch.manual_seed(0)
    models = [("cyclegan_resnet9", ResnetGenerator(ngf=64, n_blocks=9), 128), ("fast_style", TransformerNet(w=32), 128),
              ("realesr_compact_x4", SRVGGNetCompact(num_feat=64, num_conv=16, upscale=4), 64)]
    for name, model, size in models:
        model = model.eval()
        onnx = os.path.join(a.work, name + ".onnx")
        egan = os.path.join(a.work, name + ".egan")
        torch.onnx.export(model, torch.randn(1, 3, size, size), onnx, opset_version=17, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
        subprocess.run([a.convert, "-q", onnx, "-o", egan], check=True)
        for batch in (1, 8):
            x = torch.randn(batch, 3, size, size)
            xin = os.path.join(a.work, f"{name}_b{batch}_x.npy")
            np.save(xin, x.numpy())
            with torch.no_grad():
                truth = model.cuda()(x.cuda()).float().cpu().numpy()
                half = model.half().to(memory_format=torch.channels_last)
                y16 = half(x.cuda().half().to(memory_format=torch.channels_last)).float().cpu().numpy()
                model.float()
            torch_fp16 = rel_err(y16, truth)
            record = {"model": name, "batch": batch, "torch_fp16_err": torch_fp16}
            for precision, bound in (("fp32", 1e-4), ("tf32", 1e-2), ("fp16", 2 * torch_fp16)):
                out = os.path.join(a.work, f"{name}_b{batch}_{precision}.npy")
                r = subprocess.run([a.edgegan, "run", egan, "-i", f"x={xin}", "-o", out, "--backend", "cuda", "--precision", precision],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    record[precision] = "refused: " + r.stderr.strip()
                    failed = True
                    continue
                err = rel_err(np.load(out), truth)
                record[precision + "_err"] = err
                record[precision + "_ok"] = err <= bound
                failed |= err > bound
            print(json.dumps(record), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
