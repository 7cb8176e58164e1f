#!/usr/bin/env python3
"""Times one peer (PyTorch, ONNX Runtime or ncnn) on single stride-2 ConvTranspose2d
layers of GAN generators and on the whole DCGAN-64 generator, batch 1, fp32; one JSON
object per (layer, threads) line. bench/peers.sh runs it once per peer, each in its own
process so that the peers' thread pools never compete:

    build/bench/peers_venv/bin/python bench/peer_layers.py --peer ncnn --threads 1 2 --out ncnn.jsonl
    bench/peer_layers.py --list        # the layers as "name in cin cout kernel", for xnnpack_conv_transpose2d_bench

With --passive the peer's thread pool blocks instead of spinning while it waits: slower on
an idle machine, far faster on a busy one (bench/peers.sh runs both at 2 threads and keeps
the faster). Every layer has a bias and no activation, random weights (seed 0). Each peer's output is
checked against PyTorch's (max |diff| <= 1e-3) before timing; a failed check is reported
as status "mismatch" and not timed. A peer that cannot be imported gives one record with
status "n/a" and the reason.
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time

# libgomp (the OpenMP of PyTorch and of ncnn) reads OMP_WAIT_POLICY once, when it loads.
if "--passive" in sys.argv:
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# name, input side, Cin, Cout, kernel. All stride 2 with output exactly twice the input:
# k4 -> pad 1, output_padding 0; k5 -> pad 2, output_padding 1.
# Same list as kLayers in bench/conv_transpose2d_algorithms_bench.cpp.
LAYERS = [
    ("huge2_dcgan_4x4x1024_k5", 4, 1024, 512, 5),
    ("huge2_dcgan_8x8x512_k5", 8, 512, 256, 5),
    ("huge2_dcgan_16x16x256_k5", 16, 256, 128, 5),
    ("huge2_dcgan_32x32x128_k5", 32, 128, 3, 5),
    ("huge2_cgan_8x8x256_k4", 8, 256, 128, 4),
    ("huge2_cgan_16x16x128_k4", 16, 128, 3, 4),
    ("dcgan64_4x4x512_k4", 4, 512, 256, 4),
    ("dcgan64_8x8x256_k4", 8, 256, 128, 4),
    ("dcgan64_16x16x128_k4", 16, 128, 64, 4),
    ("dcgan64_32x32x64_k4", 32, 64, 3, 4),
    ("large_64x64x128_k4", 64, 128, 64, 4),
    ("large_128x128x64_k4", 128, 64, 64, 4),
]
GENERATOR = "dcgan64_generator"  # the whole pytorch/examples DCGAN-64 generator
TOLERANCE = 1e-3


def pad_of(kernel):
    return (kernel - 1) // 2, kernel % 2  # (padding, output_padding)


def make_layer(cin, cout, kernel):
    torch.manual_seed(0)
    pad, out_pad = pad_of(kernel)
    return nn.ConvTranspose2d(cin, cout, kernel, 2, pad, out_pad, bias=True).eval()


def make_generator():
    """The DCGAN-64 generator exactly as bench/make_dcgan64_onnx.py draws it (G is drawn first
    from the seed-0 generator), BatchNorm folded into the conv biases: the function edgegan's
    .egan computes, and what ncnnoptimize would deploy."""
    from gan_models import Dcgan64G, dcgan_init, fold_batchnorm
    return fold_batchnorm(dcgan_init(Dcgan64G(), torch.Generator().manual_seed(0))).eval()


def median_ms(fn, repeat, warmup_s):
    """Median wall time of `repeat` calls after at least 3 calls and `warmup_s` seconds of warm-up."""
    start, n = time.perf_counter(), 0
    while n < 3 or time.perf_counter() - start < warmup_s:
        fn()
        n += 1
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


# ---- the peers: each has setup(model, x, threads, workdir) -> (run, output) --------------

class Torch:
    name = "pytorch"

    @staticmethod
    def version():
        return torch.__version__

    @staticmethod
    def setup(model, x, threads, workdir, onnx_path=None, passive=False):
        torch.set_num_threads(threads)

        def run():
            with torch.no_grad():
                return model(x)
        return run, lambda: run().numpy()


class OnnxRuntime:
    name = "onnxruntime"

    def __init__(self):
        import onnxruntime
        self.ort = onnxruntime

    def version(self):
        return self.ort.__version__

    def setup(self, model, x, threads, workdir, onnx_path=None, passive=False):
        path = onnx_path or os.path.join(workdir, "model.onnx")
        if not onnx_path:
            with torch.no_grad():
                torch.onnx.export(model, (x,), path, opset_version=13, input_names=["x"], output_names=["y"])
        so = self.ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = self.ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = self.ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if passive:  # ORT's own thread pool: workers block instead of spinning between runs
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        sess = self.ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        feed = {sess.get_inputs()[0].name: x.numpy()}

        def run():
            return sess.run(None, feed)
        return run, lambda: run()[0]


class Ncnn:
    """ncnn through pyncnn, from a .param/.bin written here (pip ncnn ships no converter).
    Deconvolution weights are [Cout][Cin][kh][kw] (PyTorch's ConvTranspose2d is [Cin][Cout][kh][kw]),
    not flipped, after a 4-byte zero tag meaning raw fp32; the bias follows untagged."""
    name = "ncnn"

    def __init__(self):
        import ncnn
        self.ncnn = ncnn

    def version(self):
        return self.ncnn.__version__

    @staticmethod
    def _deconv_line(i, bottom, top, conv, activation):
        kh, kw = conv.kernel_size
        w = conv.weight.detach()
        return ("Deconvolution deconv%d 1 1 %s %s 0=%d 1=%d 11=%d 3=%d 13=%d 4=%d 14=%d 15=%d 16=%d 18=%d 19=%d 5=%d 6=%d 9=%d"
                % (i, bottom, top, conv.out_channels, kw, kh, conv.stride[1], conv.stride[0], conv.padding[1], conv.padding[0],
                   conv.padding[1], conv.padding[0], conv.output_padding[1], conv.output_padding[0], conv.bias is not None,
                   w.numel(), activation))

    def write_model(self, model, x, workdir):
        """A Sequential of ConvTranspose2d / ReLU / Tanh (or one ConvTranspose2d) as ncnn files;
        a ReLU after a deconvolution is fused into it (activation_type 1), as ncnnoptimize does."""
        mods = list(model.net) if hasattr(model, "net") else [model]
        _, c, h, w = x.shape
        lines, blobs, blob = ["Input in 0 1 b0 0=%d 1=%d 2=%d" % (w, h, c)], ["b0"], "b0"
        weights = []
        i = 0
        while i < len(mods):
            m, top = mods[i], "b%d" % len(blobs)
            if isinstance(m, nn.ConvTranspose2d):
                fuse_relu = i + 1 < len(mods) and isinstance(mods[i + 1], nn.ReLU)
                lines.append(self._deconv_line(i, blob, top, m, 1 if fuse_relu else 0))
                wt = m.weight.detach().permute(1, 0, 2, 3).contiguous().numpy()  # -> [Cout][Cin][kh][kw]
                weights += [np.zeros(1, np.int32).tobytes(), wt.astype("<f4").tobytes()]
                if m.bias is not None:
                    weights.append(m.bias.detach().numpy().astype("<f4").tobytes())
                i += 2 if fuse_relu else 1
            elif isinstance(m, nn.Tanh):
                lines.append("TanH tanh%d 1 1 %s %s" % (i, blob, top))
                i += 1
            else:
                raise ValueError("no ncnn mapping for %s" % type(m).__name__)
            blobs.append(top)
            blob = top
        param, binf = os.path.join(workdir, "model.param"), os.path.join(workdir, "model.bin")
        with open(param, "w") as f:
            f.write("7767517\n%d %d\n%s\n" % (len(lines), len(blobs), "\n".join(lines)))
        with open(binf, "wb") as f:
            f.write(b"".join(weights))
        return param, binf, blob

    def setup(self, model, x, threads, workdir, onnx_path=None, passive=False):
        param, binf, out_blob = self.write_model(model, x, workdir)
        from ncnn_fp32 import extractor_run, fp32_net
        net = fp32_net(threads)
        net.opt.lightmode = True
        if net.load_param(param) != 0 or net.load_model(binf) != 0:
            raise RuntimeError("ncnn could not load %s" % param)
        run = extractor_run(net, x[0].numpy(), "b0", out_blob)  # (C, H, W)
        return run, lambda: np.array(run())[None]


PEERS = {"pytorch": Torch, "onnxruntime": OnnxRuntime, "ncnn": Ncnn}


def cases(pattern, generator_onnx):
    """(name, model, input, macs, ONNX file or None) for the layers and the generator matching
    `pattern`. MACs count the useful multiply-adds: in^2 * k^2 * Cin * Cout per layer."""
    for name, side, cin, cout, k in LAYERS:
        if re.search(pattern, name):
            torch.manual_seed(1)
            yield name, make_layer(cin, cout, k), torch.randn(1, cin, side, side), side * side * k * k * cin * cout, None
    if re.search(pattern, GENERATOR):
        g = make_generator()
        z = torch.randn(1, 100, 1, 1, generator=torch.Generator().manual_seed(1))
        macs = 0
        side = 1
        for m in g.net:
            if isinstance(m, nn.ConvTranspose2d):
                macs += side * side * m.kernel_size[0] * m.kernel_size[1] * m.in_channels * m.out_channels
                side = (side - 1) * m.stride[0] - 2 * m.padding[0] + m.kernel_size[0] + m.output_padding[0]
        yield GENERATOR, g, z, macs, generator_onnx


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peer", choices=sorted(PEERS))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=30, help="timed runs per (layer, threads); the median is reported")
    ap.add_argument("--warmup-s", type=float, default=0.2, help="seconds of untimed runs first")
    ap.add_argument("--layers", default=".", help="regex on the layer names (%s is the whole generator)" % GENERATOR)
    ap.add_argument("--generator-onnx", help="ONNX Runtime runs this file for %s (default: exported from PyTorch)" % GENERATOR)
    ap.add_argument("--passive", action="store_true",
                    help="thread pools block instead of spinning (OMP_WAIT_POLICY=PASSIVE; ORT allow_spinning=0)")
    ap.add_argument("--out", help="append JSON lines here instead of stdout")
    ap.add_argument("--list", action="store_true", help="print the layers as 'name in cin cout kernel' and exit")
    a = ap.parse_args()
    if a.list:
        for layer in LAYERS:
            print(*layer)
        return
    if not a.peer:
        ap.error("--peer is required")

    out = open(a.out, "a") if a.out else sys.stdout

    def emit(**rec):
        out.write(json.dumps(dict(peer=a.peer, **rec)) + "\n")
        out.flush()

    try:
        peer = PEERS[a.peer]()
        version = peer.version()
    except Exception as e:  # not installed, or a broken install: the table shows n/a
        emit(layer="*", threads=0, status="n/a", why="%s: %s" % (type(e).__name__, e))
        return

    torch.set_num_interop_threads(1)
    with tempfile.TemporaryDirectory() as workdir:
        for name, model, x, macs, onnx_path in cases(a.layers, a.generator_onnx):
            torch.set_num_threads(1)
            with torch.no_grad():
                ref = model(x).numpy()
            for t in a.threads:
                rec = dict(layer=name, threads=t, batch=1, version=version, macs=macs, repeat=a.repeat,
                           wait_policy="passive" if a.passive else "default")
                try:
                    run, output = peer.setup(model, x, t, workdir, onnx_path, a.passive)
                    got = output()
                    diff = float(np.max(np.abs(got - ref))) if got.shape == ref.shape else float("inf")
                    rec["max_abs_diff"] = diff if diff != float("inf") else None
                    if diff > TOLERANCE:
                        why = ("output shape %s, PyTorch's %s" % (got.shape, ref.shape) if got.shape != ref.shape
                               else "max |diff| %.3g vs PyTorch > %g" % (diff, TOLERANCE))
                        emit(status="mismatch", why=why, **rec)
                        continue
                    emit(status="ok", ms=median_ms(run, a.repeat, a.warmup_s), **rec)
                except Exception as e:
                    emit(status="n/a", why="%s: %s" % (type(e).__name__, e), **rec)
                finally:
                    run = output = None  # frees this session/net and its thread pool before the next one


if __name__ == "__main__":
    main()
