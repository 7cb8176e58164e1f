#!/usr/bin/env python3
"""Per-layer A/B of two edgegan builds on the same .egan files, interleaved in rounds
(old, new, old, new ...): each round one `edgegan bench --json` of each build per model;
the whole model's and each layer's time are the medians over the rounds, each layer with
its kernel in both builds and, for the new one, GMAC/s and the share of --peak-gmacs
(bench/machine_limits.cpp's fma_gflops / 2 for one core).

  python3 bench/ab_layers.py OLD_BUILD NEW_BUILD MODEL.egan [MODEL.egan ...]
        [--rounds 3] [--threads 1] [--repeat 7] [--peak-gmacs 136]
"""
import argparse
import json
import os
import statistics
import subprocess


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--peak-gmacs", type=float, default=0.0)
    a = ap.parse_args()
    builds = {"old": os.path.join(a.old, "cli", "edgegan"), "new": os.path.join(a.new, "cli", "edgegan")}
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    family = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("cpu family")), "?")
    print("machine: %s (CPU family %s), %d cores, load %s" % (cpu, family, os.cpu_count(), open("/proc/loadavg").read().split()[0]))
    for model in a.models:
        total = {k: [] for k in builds}
        layer_ms = {k: {} for k in builds}
        layer_info = {k: {} for k in builds}
        for _ in range(a.rounds):
            for k, exe in builds.items():
                out = subprocess.run([exe, "bench", model, "--threads", str(a.threads), "--repeat", str(a.repeat), "--warmup", "1", "--json"],
                                     capture_output=True, text=True, check=True, env=env).stdout
                j = json.loads(out)
                total[k].append(j["total_ms"])
                for i, layer in enumerate(j["layers"]):
                    layer_ms[k].setdefault(i, []).append(layer["ms"])
                    layer_info[k][i] = (layer["name"], layer["kernel"], layer.get("macs", 0))
        o, n = statistics.median(total["old"]), statistics.median(total["new"])
        print("%s, %d thread(s), %d rounds: old %.1f ms (rounds %.1f-%.1f), new %.1f ms (rounds %.1f-%.1f), %.2fx" %
              (os.path.basename(model), a.threads, a.rounds, o, min(total["old"]), max(total["old"]), n, min(total["new"]), max(total["new"]), o / n))
        for i in sorted(layer_ms["new"]):
            name, kernel, macs = layer_info["new"][i]
            old_kernel = layer_info["old"].get(i, ("", "?", 0))[1]
            lo = statistics.median(layer_ms["old"].get(i, [float("nan")]))
            ln = statistics.median(layer_ms["new"][i])
            rate = macs / ln * 1e-6 if macs and ln > 0 else 0.0
            share = " %5.1f%% of peak" % (100 * rate / a.peak_gmacs) if a.peak_gmacs and rate else ""
            print("  %-30s %-26s %8.2f ms -> %-36s %8.2f ms %7.1f GMAC/s%s" % (name[-30:], old_kernel, lo, kernel, ln, rate, share))


if __name__ == "__main__":
    main()
