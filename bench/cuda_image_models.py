#!/usr/bin/env python3
"""Whole image-to-image and super-resolution generators on the GPU: edgegan's CUDA
backend against PyTorch on the same GPU, batch 1 (and any --batches), at the sizes
people run them (bench/image_models_peers.py's set). The architectures are
tests/published/'s, seeded, so both engines run the same weights; edgegan's output is
checked against PyTorch's fp32 output first (max |diff| <= 1e-3 * max(1, max|y|)).

Per model and batch, median ms of single calls:
  edgegan_fp32 / edgegan_tf32   `edgegan bench --backend cuda [--precision tf32]`: host input to
                                host output (one CUDA graph launch per run)
  eager_fp32_host               PyTorch eager from a host tensor to a host tensor (x.cuda(),
                                G, .cpu()): what edgegan bench times
  eager_fp32 / eager_tf32       PyTorch eager on the device alone (TF32 off / PyTorch's
                                default TF32 convolutions), cudnn.benchmark = True
  eager_fp32_cl                 the same, channels_last (NHWC, edgegan's layout)
  compile_fp32                  torch.compile of the fp32 module, on the device (--compile)

    python3 bench/cuda_image_models.py --edgegan build/cli/edgegan \\
        --convert build/converter/edgegan-convert --work /tmp/cim [--compile] > cuda_image_models.jsonl

Writes a markdown table of the medians to --table (default: stderr).
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cuda_peers import median_ms, set_tf32  # noqa: E402
from image_models_peers import MODELS, build_torch_model  # noqa: E402


def emit(records, **record):
    record["device"] = torch.cuda.get_device_name(0)
    record["torch"] = torch.__version__
    print(json.dumps(record), flush=True)
    records.append(record)


def export(model, x, path):
    kwargs = dict(opset_version=17, input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    try:
        torch.onnx.export(model, x, path, dynamo=False, **kwargs)
    except TypeError:  # an older torch without the dynamo switch
        torch.onnx.export(model, x, path, **kwargs)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(" ".join(cmd) + " failed:\n" + r.stderr + r.stdout)
    return r.stdout


def edgegan_ms(edgegan, egan, batch, repeat, tf32):
    cmd = [edgegan, "bench", egan, "--backend", "cuda", "--batch", str(batch), "--repeat", str(repeat), "--warmup", "5", "--json"]
    if tf32:
        cmd += ["--precision", "tf32"]
    out = run(cmd)
    return json.loads(out)["total_ms"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--edgegan", required=True)
    p.add_argument("--convert", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--batches", type=int, nargs="+", default=[1])
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--table", default=None)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    torch.backends.cudnn.benchmark = True
    records = []
    for name in a.models.split(","):
        side = MODELS[name][1]
        model = build_torch_model(name)
        x = torch.randn(1, 3, side, side, generator=torch.Generator().manual_seed(1))
        base = os.path.join(a.work, name)
        export(model, x, base + ".onnx")
        run([a.convert, base + ".onnx", "-o", base + ".egan"])
        model = model.cuda()
        with torch.no_grad():
            set_tf32(False)
            want = model(x.cuda()).cpu().numpy()
        np.save(base + ".in.npy", x.numpy())
        run([a.edgegan, "run", base + ".egan", "-i", "x=" + base + ".in.npy", "-o", base + ".out.npy", "--backend", "cuda"])
        got = np.load(base + ".out.npy")
        err = float(np.max(np.abs(got - want)))
        ok = err <= 1e-3 * max(1.0, float(np.max(np.abs(want))))
        emit(records, name=name, kind="check", max_abs_diff=err, ok=ok)
        for batch in a.batches:
            xb = torch.randn(batch, 3, side, side, device="cuda")
            host = xb.cpu()
            for variant, tf32 in (("edgegan_fp32", False), ("edgegan_tf32", True)):
                emit(records, name=name, batch=batch, variant=variant, ms=edgegan_ms(a.edgegan, base + ".egan", batch, a.repeat, tf32))
            with torch.no_grad():
                set_tf32(False)
                emit(records, name=name, batch=batch, variant="eager_fp32_host", ms=median_ms(lambda h: model(h.cuda()).cpu(), host, a.repeat))
                emit(records, name=name, batch=batch, variant="eager_fp32", ms=median_ms(model, xb, a.repeat))
                set_tf32(True)
                emit(records, name=name, batch=batch, variant="eager_tf32", ms=median_ms(model, xb, a.repeat))
                set_tf32(False)
                cl = model.to(memory_format=torch.channels_last)
                emit(records, name=name, batch=batch, variant="eager_fp32_cl", ms=median_ms(cl, xb.to(memory_format=torch.channels_last), a.repeat))
                model = model.to(memory_format=torch.contiguous_format)
                if a.compile:
                    try:
                        compiled = torch.compile(model)
                        emit(records, name=name, batch=batch, variant="compile_fp32", ms=median_ms(compiled, xb, a.repeat))
                    except Exception as e:  # noqa: BLE001  (reported, not fatal)
                        emit(records, name=name, batch=batch, variant="compile_fp32", status="failed: " + str(e).splitlines()[0][:200])
        del model
        torch.cuda.empty_cache()
    write_table(records, a.table)


def write_table(records, path):
    cols = ["edgegan_fp32", "edgegan_tf32", "eager_fp32_host", "eager_fp32", "eager_tf32", "eager_fp32_cl", "compile_fp32"]
    cells = {}
    checks = {}
    for r in records:
        if r.get("kind") == "check":
            checks[r["name"]] = r["max_abs_diff"]
        elif "ms" in r:
            cells[(r["name"], r["batch"], r["variant"])] = r["ms"]
    keys = sorted({(n, b) for (n, b, _) in cells})
    lines = ["| model | batch | " + " | ".join(cols) + " | fp32 host to host: eager / edgegan | max abs diff vs PyTorch |",
             "|---|---:|" + "---:|" * len(cols) + "---:|---:|"]
    for n, b in keys:
        row = [f"{cells[(n, b, c)]:.3f}" if (n, b, c) in cells else "-" for c in cols]
        e, h = cells.get((n, b, "edgegan_fp32")), cells.get((n, b, "eager_fp32_host"))
        ratio = f"{h / e:.2f}x" if e and h else "-"
        lines.append(f"| {n} | {b} | " + " | ".join(row) + f" | {ratio} | {checks.get(n, float('nan')):.2e} |")
    text = "\n".join(lines) + "\n"
    if path:
        with open(path, "w") as f:
            f.write(text)
    else:
        sys.stderr.write(text)


if __name__ == "__main__":
    main()
