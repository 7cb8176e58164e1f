#!/usr/bin/env python3
"""PyTorch on the GPU beside edgegan's CUDA backend: the peer layer set
(bench/peer_layers.py LAYERS, the layers bench/cuda_layers_bench times) and whole
generators, batch 1 and 64, fp32. One JSON object per measurement on stdout.

Variants, each timed with CUDA events around single calls (median), inputs already
on the GPU, under torch.no_grad():
  cudnn_fp32         ConvTranspose2d on cuDNN, cudnn.benchmark = True, TF32 off (fp32, as edgegan)
  cudnn_tf32         the same with PyTorch's default TF32 convolutions (10-bit mantissa products)
  cudnn_fp32_cl      channels_last (NHWC, edgegan's layout), TF32 off
  cudnn_tf32_cl      channels_last with TF32
  compile_fp32       torch.compile (default mode) of the fp32 module
  eager              whole generators: the module as written (TF32 off)
  eager_fp32_host    whole generators from host noise to a host image (z.cuda(), G, .cpu()),
                     which is what `edgegan bench --backend cuda` times

    python3 bench/cuda_peers.py --repeat 50 [--no-compile] > torch.jsonl
"""
import argparse
import json
import os
import statistics
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peer_layers import LAYERS, make_layer  # noqa: E402

# The stride-1 3x3 convolutions bench/cuda_layers_bench.cpp times (its kConvLayers):
# name, side, Cin, Cout; pads 1.
CONV3X3 = [
    ("cyclegan_res_64x64x256_3x3", 64, 256, 256),
    ("fast_style_res_128x128x128_3x3", 128, 128, 128),
    ("realesr_compact_128x128x64_3x3", 128, 64, 64),
    ("esrgan_rrdb_64x64x64_3x3", 64, 64, 64),
    ("esrgan_dense_64x64x160_to32_3x3", 64, 160, 32),
]


def median_ms(fn, x, repeat):
    for _ in range(5):
        fn(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn(x)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def set_tf32(on):
    torch.backends.cudnn.allow_tf32 = on
    torch.backends.cuda.matmul.allow_tf32 = on


def emit(**record):
    record["device"] = torch.cuda.get_device_name(0)
    record["torch"] = torch.__version__
    record["cudnn"] = torch.backends.cudnn.version()
    print(json.dumps(record), flush=True)


def time_variants(kind, name, module, x, repeat, compile_too, batch):
    module = module.cuda().eval()
    with torch.no_grad():
        for variant, tf32, channels_last in (("cudnn_fp32", False, False), ("cudnn_tf32", True, False), ("cudnn_fp32_cl", False, True),
                                             ("cudnn_tf32_cl", True, True)):
            set_tf32(tf32)
            m = module.to(memory_format=torch.channels_last) if channels_last else module.to(memory_format=torch.contiguous_format)
            xi = x.to(memory_format=torch.channels_last) if channels_last and x.dim() == 4 else x
            emit(kind=kind, name=name, batch=batch, variant=variant if kind == "layer" else variant.replace("cudnn", "eager"),
                 ms=median_ms(m, xi, repeat))
        set_tf32(False)
        module = module.to(memory_format=torch.contiguous_format)
        if kind == "generator":
            set_tf32(False)
            host = x.cpu()
            emit(kind=kind, name=name, batch=batch, variant="eager_fp32_host", ms=median_ms(lambda h: module(h.cuda()).cpu(), host, repeat))
        if compile_too:
            try:
                compiled = torch.compile(module)
                emit(kind=kind, name=name, batch=batch, variant="compile_fp32", ms=median_ms(compiled, x, repeat))
            except Exception as e:  # noqa: BLE001  (reported, not fatal)
                emit(kind=kind, name=name, batch=batch, variant="compile_fp32", status="failed: " + str(e).splitlines()[0][:200])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--batches", type=int, nargs="+", default=[1, 64])
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--only", choices=["layers", "conv3x3", "generators"], default=None)
    a = p.parse_args()
    torch.backends.cudnn.benchmark = True
    if a.only in (None, "layers"):
        for name, side, cin, cout, kernel in LAYERS:
            for batch in a.batches:
                layer = make_layer(cin, cout, kernel)
                x = torch.randn(batch, cin, side, side, device="cuda")
                time_variants("layer", name, layer, x, a.repeat, not a.no_compile, batch)
    if a.only in (None, "conv3x3"):
        for name, side, cin, cout in CONV3X3:
            for batch in a.batches:
                conv = nn.Conv2d(cin, cout, 3, padding=1)
                x = torch.randn(batch, cin, side, side, device="cuda")
                time_variants("layer", name, conv, x, a.repeat, not a.no_compile, batch)
    if a.only in (None, "generators"):
        import gan_models
        for name, (g_class, _, conditional, noise, _) in gan_models.MODELS.items():
            g = gan_models.fold_batchnorm(gan_models.dcgan_init(g_class(), torch.Generator().manual_seed(0))) \
                if hasattr(gan_models, "fold_batchnorm") else g_class().eval()
            for batch in a.batches:
                z = torch.randn(batch, *noise, device="cuda")
                if conditional:
                    labels = torch.arange(batch, device="cuda") % 10
                    module = g.cuda().eval()
                    fn = lambda zz, m=module, l=labels: m(zz, l)  # noqa: E731
                    with torch.no_grad():
                        set_tf32(False)
                        emit(kind="generator", name=name, batch=batch, variant="eager_fp32", ms=median_ms(fn, z, a.repeat))
                else:
                    time_variants("generator", name, g, z, a.repeat, not a.no_compile, batch)
        if hasattr(gan_models, "SHIPPED_UNAVAILABLE"):
            emit(kind="generator", name="shipped", status="n/a: " + gan_models.SHIPPED_UNAVAILABLE)


if __name__ == "__main__":
    main()
