#!/usr/bin/env python3
"""Prints bench/peers.sh's one markdown table from the raw results it leaves in OUT_DIR:

    layers.txt              the layers, "name in cin cout kernel" (bench/peer_layers.py --list)
    machine_rR.json         bench/machine_limits (FMA peak, sgemm rate, read bandwidth from memory
                            and from the last-level cache), round R
    edgegan.jsonl           bench/edgegan_layers_bench: per (layer, algo, threads, wait policy) and
                            round, the median of single calls, as for every peer
    edgegan_generator_T[_default_wait]_rR.json  `edgegan bench ... --json` for the whole DCGAN-64
                            generator, round R
    {pytorch,onnxruntime,ncnn,xnnpack}.jsonl   one record per (layer, threads, wait policy) and
                            round, bench/peer_layers.py's shape

peers.sh measures every engine once per round, the engines one after another within a
round, so a disturbance of a few seconds lands on one engine's round, not on all its
figures. Each (engine, layer, threads, wait policy) gets the median of its rounds'
medians; the machine limits the best round (the largest sgemm rate: the strictest % of
sgemm).

    bench/peers_table.py OUT_DIR
"""
import glob
import json
import os
import re
import sys

PEERS = [("pytorch", "PyTorch"), ("onnxruntime", "ONNX Runtime"), ("ncnn", "ncnn"), ("xnnpack", "XNNPACK")]
GENERATOR = "dcgan64_generator"


def load_jsonl(path):
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path) if line.strip()]


def load_json(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def spread(v):
    """Slowest round over fastest round (1.00: the rounds agreed)."""
    return max(v) / min(v) if v and min(v) > 0 else None


def best_machine(out):
    """The machine limits, each figure the best over the rounds."""
    best = {}
    for f in sorted(glob.glob(os.path.join(out, "machine*.json"))):
        m = load_json(f)
        if not m:
            continue
        if not best:
            best = m
            continue
        for group in ("fma_gflops", "read_gbs", "read_cached_gbs"):
            for k, v in m.get(group, {}).items():
                if k in ("1", "2", "1_per_core", "2_per_core") and v > best.get(group, {}).get(k, 0):
                    best.setdefault(group, {})[k] = v
        for k, v in m.get("sgemm", {}).get("gflops", {}).items():
            if v > best.get("sgemm", {}).get("gflops", {}).get(k, 0):
                best.setdefault("sgemm", {}).setdefault("gflops", {})[k] = v
    return best


def landing_taps(n_in, kernel):
    """Pairs (input position, kernel tap) along one axis whose output lands inside the
    output (stride 2, output exactly twice the input, pad (kernel - 1) // 2): the taps
    that must be multiplied; the others fall in the cropped border."""
    pad = (kernel - 1) // 2
    return sum(1 for i in range(n_in) for k in range(kernel) if 0 <= 2 * i - pad + k < 2 * n_in)


def roofline_ms(n_in, cin, cout, kernel, threads, machine):
    """The layer's roofline time at `threads`: the larger of its landing taps' FLOPs at the
    FMA peak and its least traffic (fp32 weights, input, output and bias, each moved once)
    at the read bandwidth of where that traffic lives between calls (the last-level cache
    where it fits in the cached read's buffer, else memory); and which bound binds. None
    without the machine limits."""
    fma = machine.get("fma_gflops", {}).get(str(threads))
    cached = machine.get("read_cached_gbs", {})
    flops = 2 * landing_taps(n_in, kernel) ** 2 * cin * cout
    traffic = 4 * (cin * cout * kernel ** 2 + n_in ** 2 * cin + (2 * n_in) ** 2 * cout + cout)
    in_cache = cached.get(str(threads)) and traffic <= cached.get("bytes", 0)
    rd, where = (cached.get(str(threads)), "cache") if in_cache else (machine.get("read_gbs", {}).get(str(threads)), "memory")
    if not fma or not rd:
        return None
    compute_ms, traffic_ms = flops / (fma * 1e9) * 1e3, traffic / (rd * 1e9) * 1e3
    return (compute_ms, "FMA") if compute_ms >= traffic_ms else (traffic_ms, where)


def fmt_ms(v):
    if v is None:
        return "-"
    if v < 0.1:  # three significant digits, so a tiny layer's roofline does not print as 0.000
        return "%.3g" % v
    return "%.3f" % v if v < 1 else ("%.2f" % v if v < 10 else "%.1f" % v)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench/peers_table.py OUT_DIR (the raw results bench/peers.sh leaves in BUILD_DIR/bench/peers)")
    out = sys.argv[1]
    if not os.path.isfile(os.path.join(out, "layers.txt")):
        sys.exit("peers_table.py: %s has no layers.txt: not a bench/peers.sh results folder" % out)
    machine = best_machine(out)
    layers = [l.split() for l in open(os.path.join(out, "layers.txt")) if l.strip()]
    macs = {n: int(i) ** 2 * int(k) ** 2 * int(ci) * int(co) for n, i, ci, co, k in layers}
    geometry = {n: (int(i), int(ci), int(co), int(k)) for n, i, ci, co, k in layers}

    # edgegan per layer: (layer, threads, algo) -> median ms over the rounds.
    # Measured with passive waiting, and at 2 threads with libgomp's default too: the faster
    # is kept, and edge_passive notes the keys where passive won. edge_rounds keeps the
    # kept policy's round medians (the spread column).
    edge, edge_passive, edge_rounds = {}, set(), {}

    def keep(key, rounds, passive):
        ms = median(rounds)
        if key not in edge or ms < edge[key]:
            edge[key], edge_rounds[key] = ms, rounds
            (edge_passive.add if passive else edge_passive.discard)(key)

    by_policy = {}  # (layer, threads, algo, passive) -> [ms per round]
    for r in load_jsonl(os.path.join(out, "edgegan.jsonl")):
        if r.get("status") == "ok":
            t = int(r["threads"])
            by_policy.setdefault((r["layer"], t, r["algo"], r.get("wait_policy") == "passive" and t > 1), []).append(r["ms"])
    edge_cli = None  # isa and micro-kernel as `edgegan bench` reports them
    generator_files = glob.glob(os.path.join(out, "edgegan_generator_*.json"))
    for f in generator_files:
        r = load_json(f)
        if r and "total_ms" in r:
            t = int(r["threads"])
            by_policy.setdefault((GENERATOR, t, "split", "default_wait" not in f and t > 1), []).append(r["total_ms"])
            edge_cli = "isa %s, micro-kernel %s" % (r.get("isa", "?"), r.get("microkernel", "?"))
    for (layer, t, algo, passive), rounds in by_policy.items():
        keep((layer, t, algo), rounds, passive)
    edge_pending = not generator_files

    # peers: (peer, layer, threads) -> record, its "ms" the median over the rounds and
    # "rounds" the round medians; a peer-wide n/a has layer "*". A (layer, threads, wait
    # policy) with a failed round shows that round's status.
    peer, versions, notes = {}, {}, []
    for key, label in PEERS:
        grouped = {}  # (layer, threads, wait policy) -> records, one per round
        for r in load_jsonl(os.path.join(out, key + ".jsonl")):
            if r["layer"] == "*":
                note = "%s n/a: %s" % (label, r.get("why", "?"))
                if note not in notes:
                    notes.append(note)
                continue
            grouped.setdefault((r["layer"], r["threads"], r.get("wait_policy")), []).append(r)
            versions.setdefault(key, r.get("version"))
            if r["layer"] == GENERATOR:
                macs[GENERATOR] = r["macs"]
            note = "%s %s T=%d %s: %s" % (label, r["layer"], r["threads"], r["status"], r.get("why"))
            if r["status"] != "ok" and r.get("why") and r.get("wait_policy") != "passive" and note not in notes:
                notes.append(note)
        for (layer, threads, _), recs in grouped.items():
            failed = [r for r in recs if r["status"] != "ok"]
            r = dict(failed[0]) if failed else dict(recs[0], ms=median([x["ms"] for x in recs]), rounds=[x["ms"] for x in recs])
            # a peer measured both ways (spinning default, passive) keeps its faster one
            k, old = (key, layer, threads), peer.get((key, layer, threads))
            if old is None or (r["status"] == "ok" and (old["status"] != "ok" or r["ms"] < old["ms"])):
                peer[k] = r

    sgemm = machine.get("sgemm", {}).get("gflops", {})
    head = ["layer", "T", "edgegan split ms"] + ["%s ms" % label for _, label in PEERS] + \
           ["fastest peer / edgegan", "edgegan GFLOP/s", "% of sgemm", "roofline ms (bound)", "% of roofline",
            "zero-insert / split", "rounds max/min (edgegan, peer)"]
    rows = []
    # LAYERS (peers.sh) may leave the whole generator out: then it gets no row.
    generator_selected = re.search(os.environ.get("LAYERS", "."), GENERATOR) is not None
    edge_pending = edge_pending and generator_selected
    names = [l[0] for l in layers] + ([GENERATOR] if generator_selected else [])
    for name in names:
        for t in (1, 2):
            e = edge.get((name, t, "split"))
            cells, best = [], None
            for key, _ in PEERS:
                r = peer.get((key, name, t))
                if r is None:
                    cells.append("-" if key != "xnnpack" or name != GENERATOR else "n/a")
                elif r["status"] != "ok":
                    cells.append(r["status"])
                else:
                    cells.append(fmt_ms(r["ms"]) + ("*" if r.get("wait_policy") == "passive" else ""))
                    if best is None or r["ms"] < best[0]:
                        best = (r["ms"], key)
            short = {"pytorch": "PyTorch", "onnxruntime": "ORT", "ncnn": "ncnn", "xnnpack": "XNNPACK"}
            ratio = "%.2fx (%s)" % (best[0] / e, short[best[1]]) if e and best else "-"
            gflops = 2 * macs[name] / (e * 1e-3) * 1e-9 if e and name in macs else None
            pct = "%.0f%%" % (100 * gflops / sgemm[str(t)]) if gflops and sgemm.get(str(t)) else "-"
            roof = roofline_ms(*geometry[name], t, machine) if name in geometry else None
            roof_cell = "%s (%s)" % (fmt_ms(roof[0]), roof[1]) if roof else "-"
            roof_pct = "%.0f%%" % (100 * roof[0] / e) if roof and e else "-"
            z = edge.get((name, t, "zero_insert"))
            zr = "%.2fx" % (z / e) if z and e else "-"
            label = "**DCGAN-64 generator (whole, batch 1)**" if name == GENERATOR else name
            e_cell = fmt_ms(e) + ("*" if (name, t, "split") in edge_passive else "") if e else \
                ("pending" if name == GENERATOR and edge_pending else "-")
            spreads = [spread(edge_rounds.get((name, t, "split"))), spread(peer[(best[1], name, t)]["rounds"]) if best else None]
            sp = ", ".join("%.2f" % v if v else "-" for v in spreads)
            rows.append([label, str(t), e_cell] + cells + [ratio, "%.1f" % gflops if gflops else "-", pct, roof_cell, roof_pct, zr, sp])

    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")

    print()
    rounds = max((len(v) for v in edge_rounds.values()), default=0)
    print("Medians, batch 1, fp32, ms: each engine measured in %d round(s), one engine after another within a round; "
          "each figure is the median of its rounds' medians, and the last column the slowest round over the fastest "
          "for edgegan and the fastest peer (how far this machine's noise moved them)." % rounds)
    print("fastest peer / edgegan > 1: edgegan is faster. GFLOP/s = 2 * MACs / time, "
          "MACs = in^2 * k^2 * Cin * Cout per transposed conv (every tap, those landing in the cropped border included; "
          "`edgegan bench` counts only the taps that land in the output, so its macs are lower). zero-insert / split: "
          "edgegan's own zero-insertion algorithm on the same GEMM.")
    print("Roofline: the least time the layer can take on this machine at that thread count, the larger of (a) the "
          "FLOPs of its landing taps (the cropped border's left out) at the AVX-512 FMA peak and (b) its least "
          "traffic (fp32 weights, input, output and bias, each moved once) at the read bandwidth of where it lives "
          "between the timed calls: the last-level cache where it fits in the cached read's buffer, memory "
          "otherwise; all measured in this run. The bound that binds is in brackets; % of roofline = roofline / "
          "edgegan ms. The large k4 layers run in the Winograd form, 9 multiplies where the direct form has 16, so "
          "they can pass 100% of an FMA bound that counts the direct form's.")
    print("Every engine, edgegan included, is timed the same way: the median of single timed runs after warm-up "
          "(at least 3 runs and 0.2 s), each layer with a bias and no activation. edgegan: the kernel call "
          "(bench/edgegan_layers_bench, weights as a session holds them), PyTorch the module call under no_grad, ONNX Runtime `run`, ncnn extractor creation + extract, "
          "XNNPACK xnn_run_operator. At 2 threads every engine, edgegan included, ran both with its default thread "
          "pool waiting (libgomp's bounded spin for edgegan, ncnn and PyTorch; spinning pools for ORT and XNNPACK) and "
          "with passive waiting (OMP_WAIT_POLICY=passive, ORT allow_spinning=0, XNN_FLAG_YIELD_WORKERS); the "
          "faster is shown, * where passive won. Every peer's output was checked against PyTorch (XNNPACK: against a direct sum) "
          "to 1e-3 before timing.")
    print("Whole generator: PyTorch and ncnn run it with BatchNorm folded into the conv biases (ncnn: a .param written "
          "by bench/peer_layers.py, ReLU fused, as ncnnoptimize would), ONNX Runtime runs generator.onnx as exported; "
          "XNNPACK is timed on single operators only.")
    if sgemm:
        fma, rd, cached = machine.get("fma_gflops", {}), machine.get("read_gbs", {}), machine.get("read_cached_gbs", {})
        print("Machine limits, this run (best of several runs, and the best round): AVX-512 FMA %s GFLOP/s at 1 thread, %s at 2; %s on %dx%dx%d: "
              "%s GFLOP/s at 1 thread, %s at 2 (the %% of sgemm column, same thread count); streaming read of 256 MB "
              "%s GB/s at 1 thread, %s at 2%s."
              % (fma.get("1"), fma.get("2"), machine["sgemm"].get("kind", "?"), machine["sgemm"]["m"], machine["sgemm"]["n"],
                 machine["sgemm"]["k"], sgemm.get("1"), sgemm.get("2"), rd.get("1"), rd.get("2"),
                 "; read of %d MB again and again (from the last-level cache) %s GB/s at 1 thread, %s at 2"
                 % (cached["bytes"] >> 20, cached.get("1"), cached.get("2")) if cached.get("bytes") else ""))
        if sgemm.get("2", 0) < 1.5 * sgemm.get("1", 0):
            print("WARNING: 2-thread sgemm is not 1.5x the 1-thread one: the second core was busy, 2-thread figures are off.")
    print("Peers: " + ", ".join("%s %s" % (label, versions[key]) for key, label in PEERS if key in versions) + ".")
    if edge_cli:
        print("edgegan whole generator: `edgegan bench --json` (median of REPEAT runs per round), %s." % edge_cli)
    if edge_pending:
        print("edgegan whole generator: pending (`edgegan bench` is not in this build's CLI yet).")
    for n in notes:
        print("- " + n)


if __name__ == "__main__":
    main()
