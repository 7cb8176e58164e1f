#!/usr/bin/env python3
"""Every 3x3 stride-1 convolution of the image-to-image and super-resolution generators
that bench/image_models_peers.py times, one layer at a time: edgegan against ncnn (fp32,
its own Convolution layer with the same weights), batch 1, 1 and 2 threads, median ms and
the share of the machine's FMA peak each reaches (direct-form FLOPs, 2 * H * W * 9 * Cin *
Cout, so a Winograd layer can pass 100%).

  build/bench/peers_venv/bin/python bench/conv3x3_layers_peers.py BUILD_DIR [--repeat 20]
        [--models DIR] [--threads 1 2]

The layers are read from the ONNX files in DIR (default BUILD_DIR/bench/image_models, which
image_models_peers.py writes), de-duplicated by shape, with zero pads of 1 (reflect pads
are the model's business, not the layer's). The FMA peak is bench/machine_limits.cpp's,
compiled here. The venv needs numpy, onnx, onnxruntime and ncnn (pip install onnxruntime ncnn); each layer's ncnn
output is checked against edgegan's first.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def layers_of(path):
    """(model, H, W, Cin, Cout) of each 3x3 stride-1 dilation-1 ungrouped Conv in the file;
    the output sizes from one ONNX Runtime run on the model's own input (NAME.in.npy beside
    it), since shape inference stops at the pads torch computes at run time."""
    import onnxruntime as ort
    m = onnx.load(path)
    inits = {i.name: i for i in m.graph.initializer}
    convs = []
    for n in m.graph.node:
        if n.op_type != "Conv":
            continue
        a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        w = inits.get(n.input[1])
        if w is None or list(w.dims[2:]) != [3, 3] or a.get("group", 1) != 1:
            continue
        if any(s != 1 for s in a.get("strides", [1, 1])) or any(d != 1 for d in a.get("dilations", [1, 1])):
            continue
        convs.append((n.output[0], int(w.dims[1]), int(w.dims[0])))
    if not convs:
        return []
    for name, _, _ in convs:
        m.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    x = np.load(path[:-5] + ".in.npy")
    outs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run([c[0] for c in convs], {m.graph.input[0].name: x})
    return [(os.path.basename(path)[:-5], y.shape[2], y.shape[3], cin, cout) for (_, cin, cout), y in zip(convs, outs)]


def single_conv_onnx(h, w, cin, cout, path, rng):
    weight = (rng.standard_normal((cout, cin, 3, 3)) / np.sqrt(9 * cin)).astype(np.float32)
    bias = (0.1 * rng.standard_normal(cout)).astype(np.float32)
    node = helper.make_node("Conv", ["x", "W", "B"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    graph = helper.make_graph([node], "conv3x3", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, cin, h, w])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, cout, h, w])],
                              [numpy_helper.from_array(weight, "W"), numpy_helper.from_array(bias, "B")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return weight, bias


def ncnn_layer(weight, bias, h, w, threads, workdir):
    from ncnn_fp32 import fp32_net
    cout, cin = weight.shape[:2]
    param, binf = os.path.join(workdir, "l.param"), os.path.join(workdir, "l.bin")
    with open(param, "w") as f:
        f.write("7767517\n2 2\nInput in 0 1 in 0=%d 1=%d 2=%d\n"
                "Convolution conv 1 1 in out 0=%d 1=3 11=3 2=1 12=1 3=1 13=1 4=1 14=1 15=1 16=1 5=1 6=%d\n" % (w, h, cin, cout, weight.size))
    with open(binf, "wb") as f:
        f.write(np.zeros(1, np.int32).tobytes() + weight.astype("<f4").tobytes() + bias.astype("<f4").tobytes())
    net = fp32_net(threads)
    if net.load_param(param) != 0 or net.load_model(binf) != 0:
        raise RuntimeError("ncnn could not load the layer")
    return net


def time_ncnn(net, x, repeat):
    from ncnn_fp32 import extractor_run
    run = extractor_run(net, x[0], "in", "out")
    y = np.array(run())[None]
    run()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--models", default=None)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    models = args.models or os.path.join(build, "bench", "image_models")
    onnx_files = sorted(os.path.join(models, f) for f in os.listdir(models) if f.endswith(".onnx") and ".pnnx." not in f)
    if not onnx_files:
        sys.exit("no ONNX models in %s: run bench/image_models_peers.py first" % models)
    seen, layers = set(), []
    for f in onnx_files:
        for (model, h, w, cin, cout) in layers_of(f):
            if (h, w, cin, cout) not in seen:
                seen.add((h, w, cin, cout))
                layers.append((model, h, w, cin, cout))
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    family = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("cpu family")), "?")
    print("machine: %s (CPU family %s), %d cores, load %s" % (cpu, family, os.cpu_count(), open("/proc/loadavg").read().split()[0]))
    work = tempfile.mkdtemp(prefix="conv3x3_")
    limits_bin = os.path.join(work, "machine_limits")
    subprocess.run(["g++", "-O3", "-march=native", "-fopenmp", os.path.join(HERE, "machine_limits.cpp"), "-o", limits_bin], check=True)
    limits = json.loads(subprocess.run([limits_bin], capture_output=True, text=True, check=True).stdout)
    edgegan = os.path.join(build, "cli", "edgegan")
    convert = os.path.join(build, "converter", "edgegan-convert")
    rng = np.random.default_rng(1)
    rows = []
    for (model, h, w, cin, cout) in layers:
        base = os.path.join(work, "l_%dx%dx%d_%d" % (h, w, cin, cout))
        weight, bias = single_conv_onnx(h, w, cin, cout, base + ".onnx", rng)
        subprocess.run([convert, "-q", base + ".onnx", "-o", base + ".egan"], check=True)
        x = rng.standard_normal((1, cin, h, w)).astype(np.float32)
        np.save(base + ".x.npy", x)
        subprocess.run([edgegan, "run", base + ".egan", "-i", "x=" + base + ".x.npy", "-o", base + ".y.npy"], check=True, capture_output=True)
        want = np.load(base + ".y.npy")
        flops = 2.0 * h * w * 9 * cin * cout
        for t in args.threads:
            r = subprocess.run([edgegan, "bench", base + ".egan", "--threads", str(t), "--repeat", str(args.repeat), "--warmup", "2", "--json"],
                               capture_output=True, text=True, check=True)
            j = json.loads(r.stdout)
            e_ms, kernel = j["layers"][0]["ms"], j["layers"][0]["kernel"]
            n_ms, y = time_ncnn(ncnn_layer(weight, bias, h, w, t, work), x, args.repeat)
            err = float(np.max(np.abs(y.reshape(want.shape) - want)))
            ok = err <= 1e-3 * max(1.0, float(np.max(np.abs(want))))
            peak = limits["fma_gflops"][str(t)] if isinstance(limits.get("fma_gflops"), dict) else None
            rows.append(dict(model=model, layer="%dx%dx%d->%d" % (h, w, cin, cout), threads=t, kernel=kernel, edgegan_ms=e_ms,
                             ncnn_ms=n_ms if ok else None, ncnn_max_abs_diff=err, peak_gflops=peak,
                             edgegan_pct=100.0 * flops / (e_ms * 1e6) / peak if peak else None,
                             ncnn_pct=100.0 * flops / (n_ms * 1e6) / peak if peak and ok else None))
            print(json.dumps(rows[-1]), flush=True)
    print("\n| layer (H×W×Cin→Cout) | first in | threads | edgegan kernel | edgegan ms | ncnn ms | ncnn / edgegan | edgegan % FMA peak | ncnn % FMA peak |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = "%.2f" % (r["ncnn_ms"] / r["edgegan_ms"]) if r["ncnn_ms"] else "mismatch %.1e" % r["ncnn_max_abs_diff"]
        pct = lambda v: "%.0f%%" % v if v is not None else "-"  # noqa: E731
        print("| %s | %s | %d | %s | %.3f | %s | %s | %s | %s |" % (r["layer"], r["model"], r["threads"], r["kernel"], r["edgegan_ms"],
              "%.3f" % r["ncnn_ms"] if r["ncnn_ms"] else "-", ratio, pct(r["edgegan_pct"]), pct(r["ncnn_pct"])))


if __name__ == "__main__":
    main()
