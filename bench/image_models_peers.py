#!/usr/bin/env python3
"""Whole image-to-image and super-resolution generators, batch 1, fp32, at the sizes
people run them: edgegan against PyTorch (eager), ONNX Runtime and ncnn (converted with
its own pnnx), at 1 and 2 threads. Median time and the process's peak RSS, each engine
in its own process (measured with wait4), run one after another. Every engine's output
is checked against PyTorch's first (max |diff| <= 1e-3 * max(1, max|y|), --tolerance).

Each (model, threads) row is measured in --rounds rounds, every engine once per round,
one after another: a row's figure is the median of its rounds' medians, and the table's
last column says how far the rounds of edgegan and of the fastest peer were apart. On a
shared machine a few seconds of interference can slow one engine's whole measurement
(edgegan's pix2pix at 2 threads once took 94 ms in a run where it otherwise takes 52);
rounds spread it over all of them.

  /usr/bin/python3 bench/image_models_peers.py BUILD_DIR [--models a,b] [--threads 1 2]
        [--repeat 10] [--rounds 3] [--venv VENV] [--out DIR]

--models families: the famous GAN generator families at realistic sizes (StyleGAN2 256
fused and non-fused, BigGAN 128, Real-CUGAN 2x on 256, SwinIR-light x4 on 64), defined in
bench/family_models.py from the goldens' PyTorch definitions; their inputs are latents or
pictures by name, ncnn is left out (--peers pytorch,onnxruntime) and --tolerance 1e-4.

VENV (default BUILD_DIR/bench/peers_venv, as bench/peers.sh makes it) must hold
onnxruntime, ncnn and pnnx from PyPI (pip install onnxruntime ncnn pnnx) and see the
system torch (--system-site-packages). The architectures are tests/published/'s. Peak RSS
is GNU time's (/usr/bin/time, Debian package `time`).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# name: (constructor source, input side or (channels, height, width))
MODELS = {
    "cyclegan_resnet9_256": ("ResnetGenerator(ngf=64, n_blocks=9)", 256),
    "pix2pix_unet_256": ("UnetGenerator(num_downs=8, ngf=64)", 256),
    "fast_style_512": ("TransformerNet(w=32)", 512),
    "realesr_compact_x4_128": ("SRVGGNetCompact(num_feat=64, num_conv=16, upscale=4)", 128),
    "esrgan_rrdb6_x4_64": ("RRDBNet(nf=64, nb=6, gc=32)", 64),
    "animeganv2_256": ("AnimeGenerator(w=16)", 256),
    # Thin networks (few channels, large kernels). The SR nets take a luma plane.
    "fsrcnn_x3_360x640": ("FSRCNN(scale=3)", (1, 360, 640)),
    "espcn_x3_360x640": ("ESPCN(scale=3)", (1, 360, 640)),
    "fast_style_thin_256": ("TransformerNet(w=8)", 256),
}


def family_models():
    """bench/family_models.py (imports torch and the golden makers)."""
    sys.path.insert(0, HERE)
    import family_models as f
    return f


def is_family(name):
    return name not in MODELS


def build_torch_model(name):
    import torch
    if is_family(name):
        return family_models().build(name)
    sys.path.insert(0, os.path.join(ROOT, "tests", "published"))
    import architectures as a  # noqa: F401
    torch.manual_seed(0)
    model = eval("a." + MODELS[name][0]).eval()
    return model


def input_shape(name):
    """(channels, height, width) of an image model's input."""
    spec = MODELS[name][1]
    return spec if isinstance(spec, tuple) else (3, spec, spec)


def input_shapes(name):
    """{input name: shape} at batch 1."""
    if is_family(name):
        return family_models().MODELS[name][1]
    return {"x": (1,) + input_shape(name)}


def load_inputs(base):
    """The inputs prepare() wrote, {name: array}."""
    import numpy as np
    with np.load(base + ".inputs.npz") as z:
        return {k: z[k] for k in z.files}


def export_onnx(model, xs, path, dynamic_batch=False):
    """One .onnx file with its weights inside (edgegan-convert reads no external data), by
    the TorchScript exporter where torch has both (from 2.9 the dynamo one is the default
    and writes the weights beside the file)."""
    import torch
    kwargs = dict(opset_version=17, input_names=list(xs), output_names=["y"])
    if dynamic_batch:
        kwargs["dynamic_axes"] = {k: {0: "n"} for k in list(xs) + ["y"]}
    args = tuple(xs.values())
    try:
        torch.onnx.export(model, args, path, dynamo=False, **kwargs)
    except TypeError:  # a torch without the dynamo exporter
        torch.onnx.export(model, args, path, **kwargs)


def prepare(name, out, build, venv, with_ncnn):
    """Writes NAME.onnx, NAME.egan, NAME.pth (weights), NAME.inputs.npz, NAME.in.INPUT.npy
    and NAME.torch.npy, and NAME.ncnn.param/.bin; returns why ncnn failed, or None."""
    import numpy as np
    import torch
    model = build_torch_model(name)
    g = torch.Generator().manual_seed(1)
    xs = {k: torch.randn(*shape, generator=g) for k, shape in input_shapes(name).items()}
    base = os.path.join(out, name)
    with torch.no_grad():
        y = model(*xs.values())
    np.savez(base + ".inputs.npz", **{k: v.numpy() for k, v in xs.items()})
    for k, v in xs.items():
        np.save(base + ".in." + k + ".npy", v.numpy())
    np.save(base + ".torch.npy", y.numpy())
    torch.save(model.state_dict(), base + ".pth")
    if not os.path.exists(base + ".onnx"):
        export_onnx(model, xs, base + ".onnx", is_family(name) and family_models().MODELS[name][2])
    subprocess.run([os.path.join(build, "converter", "edgegan-convert"), "-q", base + ".onnx", "-o", base + ".egan"], check=True)
    if not with_ncnn or os.path.exists(base + ".ncnn.param"):
        return None
    x = xs["x"]
    c, h, w = x.shape[1:]
    traced = torch.jit.trace(model, x)
    traced.save(base + ".pt")
    r = subprocess.run([os.path.join(venv, "bin", "pnnx"), base + ".pt", "inputshape=[1,%d,%d,%d]" % (c, h, w)],
                       cwd=out, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(base + ".ncnn.param"):
        return "pnnx failed: " + (r.stderr or r.stdout)[-300:]
    return None


# ---- children: one engine, one model, one thread count; prints one JSON line ----------

def child(args):
    import numpy as np
    base = os.path.join(args.out, args.model)
    xs = load_inputs(base)
    t = args.threads
    if args.peer == "onnxruntime":
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = t
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(base + ".onnx", so, providers=["CPUExecutionProvider"])
        run = lambda: sess.run(None, xs)[0]  # noqa: E731
    elif args.peer == "ncnn":
        from ncnn_fp32 import extractor_run, fp32_net
        net = fp32_net(t)
        if net.load_param(base + ".ncnn.param") != 0 or net.load_model(base + ".ncnn.bin") != 0:
            raise RuntimeError("ncnn could not load the model")
        extract = extractor_run(net, xs["x"][0], "in0", "out0")
        run = lambda: np.array(extract())[None]  # noqa: E731
    elif args.peer == "pytorch":
        import torch
        model = build_torch_model(args.model)
        model.load_state_dict(torch.load(base + ".pth"))
        torch.set_num_threads(t)  # after the build: the golden makers' imports set 1
        xt = [torch.from_numpy(v) for v in xs.values()]

        def run():
            with torch.inference_mode():
                return model(*xt).numpy()
    else:
        raise ValueError(args.peer)
    y = run()
    want = np.load(base + ".torch.npy")
    err = float(np.max(np.abs(y.reshape(want.shape) - want))) if y.size == want.size else float("inf")
    if not err <= args.tolerance * max(1.0, float(np.max(np.abs(want)))):
        print(json.dumps({"status": "mismatch", "max_abs_diff": err}))
        return
    times = []
    deadline = time.perf_counter() + args.budget_s
    for i in range(args.repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
        if i >= 2 and time.perf_counter() > deadline:
            break
    print(json.dumps({"status": "ok", "median_ms": statistics.median(times), "runs": len(times), "max_abs_diff": err}))


def run_child(cmd):
    """Exit code, stdout, stderr and peak RSS (MiB) of one child, through GNU time: Linux
    charges a process the peak of the memory it had before exec (a fork of this Python,
    with torch loaded), so the child is started by the small `time` process, whose own
    fork is what execs the engine."""
    import tempfile
    with tempfile.NamedTemporaryFile("r") as peak:
        r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", peak.name] + cmd, capture_output=True, text=True)
        kib = peak.read().strip().splitlines()
        return r.returncode, r.stdout, r.stderr, (float(kib[-1]) / 1024.0 if kib else float("nan"))


def edgegan_record(build, out, name, threads, repeat, tolerance):
    base = os.path.join(out, name)
    edgegan = os.path.join(build, "cli", "edgegan")
    # The check: `edgegan run` on the same input against PyTorch.
    import numpy as np
    inputs = [a for k in input_shapes(name) for a in ("-i", k + "=" + base + ".in." + k + ".npy")]
    rc = subprocess.run([edgegan, "run", base + ".egan"] + inputs + ["-o", base + ".edgegan.npy", "--threads", str(threads)],
                        capture_output=True, text=True)
    if rc.returncode != 0:
        return {"status": "error", "why": rc.stderr.strip()[-300:]}
    y, want = np.load(base + ".edgegan.npy"), np.load(base + ".torch.npy")
    err = float(np.max(np.abs(y - want)))
    if not err <= tolerance * max(1.0, float(np.max(np.abs(want)))):
        return {"status": "mismatch", "max_abs_diff": err}
    code, stdout, stderr, rss = run_child([edgegan, "bench", base + ".egan", "--threads", str(threads), "--repeat", str(repeat), "--warmup", "1", "--json"])
    if code != 0:
        return {"status": "error", "why": stderr.strip()[-300:]}
    j = json.loads(stdout)
    return {"status": "ok", "median_ms": j["total_ms"], "rss_mib": rss, "max_abs_diff": err, "layers": j.get("layers", [])}


def combine_rounds(rounds):
    """One engine's rounds as one result: the median of the rounds' medians, the largest
    peak RSS, every round's median, and the slowest round over the fastest. A round
    that failed (mismatch, error) makes the whole a failure."""
    bad = [r for r in rounds if r.get("status") != "ok"]
    if bad:
        return bad[0]
    times = [r["median_ms"] for r in rounds]
    out = dict(rounds[0])
    out.update(median_ms=statistics.median(times), rss_mib=max(r["rss_mib"] for r in rounds), rounds_ms=times, spread=max(times) / min(times))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3, help="measure every engine this many times, interleaved; report the median")
    ap.add_argument("--budget-s", type=float, default=20.0, help="stop timing a measurement after this long (at least 3 runs)")
    ap.add_argument("--tolerance", type=float, default=1e-3, help="largest |diff| from PyTorch's output, relative to max(1, max|y|)")
    ap.add_argument("--peers", default="pytorch,onnxruntime,ncnn", help="which peers to measure")
    ap.add_argument("--venv", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--model", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    args.out = os.path.abspath(args.out or os.path.join(args.build, "bench", "image_models"))
    if args.child:
        args.peer = args.child
        args.threads = args.threads[0]
        child(args)
        return
    venv = os.path.abspath(args.venv or os.path.join(args.build, "bench", "peers_venv"))
    os.makedirs(args.out, exist_ok=True)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    family = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("cpu family")), "?")
    print("machine: %s (CPU family %s), %d cores, load %s" % (cpu, family, os.cpu_count(), open("/proc/loadavg").read().split()[0]))
    names = [n for m in args.models.split(",") for n in (family_models().MODELS if m == "families" else [m])]
    for name in names:
        if is_family(name) and name not in family_models().MODELS:
            sys.exit("image_models_peers.py: no model %r; the names are %s and families (%s)" % (name, ", ".join(MODELS), ", ".join(family_models().MODELS)))
    wanted_peers = args.peers.split(",")
    results = []
    for name in names:
        ncnn_problem = prepare(name, args.out, args.build, venv, "ncnn" in wanted_peers)
        for t in args.threads:
            rounds = {engine: [] for engine in ["edgegan", "pytorch", "onnxruntime", "ncnn"]}
            for _ in range(max(1, args.rounds)):
                rounds["edgegan"].append(edgegan_record(args.build, args.out, name, t, args.repeat, args.tolerance))
                for peer in ["pytorch", "onnxruntime", "ncnn"]:
                    if peer not in wanted_peers:
                        rounds[peer].append({"status": "n/a", "why": "not asked for"})
                        continue
                    if peer == "ncnn" and ncnn_problem:
                        rounds[peer].append({"status": "n/a", "why": ncnn_problem})
                        continue
                    python = sys.executable if peer == "pytorch" else os.path.join(venv, "bin", "python")
                    code, stdout, stderr, rss = run_child([python, os.path.abspath(__file__), args.build, "--child", peer, "--model", name,
                                                           "--threads", str(t), "--repeat", str(args.repeat), "--budget-s", str(args.budget_s),
                                                           "--tolerance", str(args.tolerance),
                                                           "--out", args.out])
                    if code != 0 or not stdout.strip():
                        rounds[peer].append({"status": "error", "why": stderr.strip()[-300:]})
                    else:
                        rounds[peer].append(dict(json.loads(stdout.strip().splitlines()[-1]), rss_mib=rss))
            row = {"model": name, "threads": t}
            row.update({engine: combine_rounds(r) for engine, r in rounds.items()})
            results.append(row)
            print(json.dumps({k: (v if not isinstance(v, dict) else {kk: vv for kk, vv in v.items() if kk != "layers"}) for k, v in row.items()}),
                  flush=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    # The table: median ms (peak RSS MiB); ratio = fastest peer / edgegan.
    print("\n| model | threads | edgegan ms (RSS MiB) | PyTorch | ONNX Runtime | ncnn | fastest peer / edgegan | ORT RSS / edgegan RSS | rounds max/min (edgegan, peer) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in results:
        def cell(r):
            if r.get("status") != "ok":
                return r.get("status", "?")
            return "%.1f (%.0f)" % (r["median_ms"], r["rss_mib"])
        peers = [row[p] for p in ["pytorch", "onnxruntime", "ncnn"] if row[p].get("status") == "ok"]
        fastest = min(peers, key=lambda r: r["median_ms"]) if peers else None
        e = row["edgegan"]
        ratio = "%.2f" % (fastest["median_ms"] / e["median_ms"]) if fastest and e.get("status") == "ok" else "n/a"
        spread = "%.2f, %.2f" % (e["spread"], fastest["spread"]) if fastest and e.get("status") == "ok" else "-"
        ort = row["onnxruntime"]
        rss_ratio = "%.2f" % (ort["rss_mib"] / e["rss_mib"]) if ort.get("status") == "ok" and e.get("status") == "ok" else "n/a"
        print("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (row["model"], row["threads"], cell(e), cell(row["pytorch"]), cell(row["onnxruntime"]),
                                                              cell(row["ncnn"]), ratio, rss_ratio, spread))


if __name__ == "__main__":
    main()
