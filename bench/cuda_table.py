#!/usr/bin/env python3
"""The GPU tables of docs/cuda.md from one run's results (bench/results/h100/):

    python3 bench/cuda_table.py DIR

DIR holds edgegan_layers.jsonl (build/bench/cuda_layers_bench), torch_layers.jsonl and
torch_generators.jsonl (bench/cuda_peers.py), edgegan_generators.jsonl (one
`edgegan bench --backend cuda --json` object per line). Times are medians in ms.
"""
import json
import os
import sys


def load(path):
    """The JSON objects in a file, one per line or pretty-printed one after another."""
    with open(path) as f:
        text = f.read()
    decoder, objects, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return objects
        obj, i = decoder.raw_decode(text, i)
        objects.append(obj)


def best_tf32(t, name, b):
    """cuDNN's faster TF32 layout (channels_last timed since the 3x3 table was added)."""
    return min(t[(name, b, "cudnn_tf32")], t.get((name, b, "cudnn_tf32_cl"), float("inf")))


def conv3x3_tables(e, kinds, t):
    """The stride-1 3x3 convolutions (algo conv / conv_tf32), and, where the run had
    --kinds, every GEMM launch kind forced on each."""
    rows = sorted((k for k in e if k[2] == "conv"), key=lambda k: (k[0], k[1]))
    if not rows:
        return
    print()
    print("| 3x3 layer | batch | edgegan fp32 | edgegan `--tf32` | launch (`--tf32`) | best cuDNN fp32 | best cuDNN TF32 "
          "| fp32 / best fp32 cuDNN | `--tf32` / best cuDNN TF32 |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
    for name, b, _ in rows:
        ms, tf = e[(name, b, "conv")], e[(name, b, "conv_tf32")]
        f = min(t[(name, b, "cudnn_fp32")], t[(name, b, "cudnn_fp32_cl")]) if (name, b, "cudnn_fp32") in t else None
        ct = best_tf32(t, name, b) if (name, b, "cudnn_tf32") in t else None
        print(f"| {name} | {b} | {ms['ms']:.4f} | {tf['ms']:.4f} | {tf['launch']} | {f or 0:.4f} | {ct or 0:.4f} "
              f"| {(f or 0) / ms['ms']:.2f}x | {(ct or 0) / tf['ms']:.2f}x |")
    if kinds:
        names = sorted({k[2] for k in kinds})
        print()
        print("| GEMM kind forced, ms (GFLOP/s) | batch | " + " | ".join(names) + " |")
        print("|---|---:|" + "---:|" * len(names))
        for name, b in sorted({(k[0], k[1]) for k in kinds}):
            cells = [f"{kinds[(name, b, n)]['ms']:.4f} ({kinds[(name, b, n)]['gflops']:.0f})" if (name, b, n) in kinds else "-" for n in names]
            print(f"| {name} | {b} | " + " | ".join(cells) + " |")


def main(d):
    layers = load(os.path.join(d, "edgegan_layers.jsonl"))
    e = {(r["layer"], r["batch"], r["algo"]): r for r in layers if r["algo"] != "kind"}
    kinds = {(r["layer"], r["batch"], r["launch"]): r for r in layers if r["algo"] == "kind"}
    t = {(r["name"], r["batch"], r["variant"]): r["ms"] for r in load(os.path.join(d, "torch_layers.jsonl")) if "ms" in r}
    print("| layer | batch | split fp32 | split `--tf32` | zero-insert | col2im | cuDNN fp32 | cuDNN fp32 NHWC | best cuDNN TF32 "
          "| fp32: split / best fp32 cuDNN | `--tf32` / best cuDNN TF32 | split / zero-insert |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (name, b, algo), r in sorted(e.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        if algo != "split" or (name, b, "cudnn_fp32") not in t:
            continue
        ms, tf = r["ms"], e[(name, b, "split_tf32")]["ms"]
        z, c = e[(name, b, "zero-insert")]["ms"], e[(name, b, "col2im")]["ms"]
        f, cl, ct = t[(name, b, "cudnn_fp32")], t[(name, b, "cudnn_fp32_cl")], best_tf32(t, name, b)
        print(f"| {name} | {b} | {ms:.4f} | {tf:.4f} | {z:.4f} | {c:.4f} | {f:.4f} | {cl:.4f} | {ct:.4f} "
              f"| {min(f, cl) / ms:.2f}x | {ct / tf:.2f}x | {z / ms:.2f}x |")
    conv3x3_tables(e, kinds, t)
    print()
    g = {}
    if not os.path.exists(os.path.join(d, "edgegan_generators.jsonl")):
        return
    for r in load(os.path.join(d, "edgegan_generators.jsonl")):
        name = os.path.basename(r["model"]).replace(".egan", "")
        if name == "generator":
            name = os.path.basename(os.path.dirname(r["model"]))
        name = name.replace("_generator", "")
        # "precision" since --precision; results from before it say "tf32": true.
        tf32 = r.get("precision") == "tf32" or r.get("tf32") is True
        variant = "zero-insert" if r["algo"] == "zero-insert" else ("tf32" if tf32 else "fp32")
        g[(name, r["batch"], variant)] = r["total_ms"]
    tg = {(r["name"], r["batch"], r["variant"]): r["ms"] for r in load(os.path.join(d, "torch_generators.jsonl")) if "ms" in r}
    print("| generator | batch | edgegan fp32 | edgegan `--tf32` | edgegan zero-insert | PyTorch eager fp32, host to host "
          "| eager fp32, on device | eager TF32 | torch.compile fp32 | edgegan fp32 / eager host to host |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def fmt(x):
        return f"{x:.4f}" if x else "-"
    for (name, b) in sorted({(k[0], k[1]) for k in g}):
        host = tg.get((name, b, "eager_fp32_host"))
        ratio = f"{host / g[(name, b, 'fp32')]:.2f}x" if host else "-"
        print(f"| {name} | {b} | {fmt(g.get((name, b, 'fp32')))} | {fmt(g.get((name, b, 'tf32')))} | {fmt(g.get((name, b, 'zero-insert')))} "
              f"| {fmt(host)} | {fmt(tg.get((name, b, 'eager_fp32')))} | {fmt(tg.get((name, b, 'eager_tf32')))} "
              f"| {fmt(tg.get((name, b, 'compile_fp32')))} | {ratio} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "h100"))
