#!/usr/bin/env python3
"""bench/peers_table.py on made-up rounds: each figure is the median of its rounds'
medians (a disturbed round does not move it), the faster wait policy is kept, a failed
round shows, and the machine limits are the best round's."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "peers_table.py")


def machine(sgemm1, sgemm2):
    return {"fma_gflops": {"1": 220.0, "2": 430.0}, "read_gbs": {"bytes": 1, "1": 30.0, "2": 40.0},
            "read_cached_gbs": {"bytes": 16 << 20, "1": 90.0, "2": 160.0},
            "sgemm": {"m": 512, "n": 512, "k": 512, "kind": "test sgemm", "gflops": {"1": sgemm1, "2": sgemm2}}}


def edge(layer, threads, algo, ms, policy="passive"):
    return {"peer": "edgegan", "layer": layer, "algo": algo, "threads": threads, "wait_policy": policy, "status": "ok", "ms": ms}


def peer(name, layer, threads, ms, policy="default", status="ok", why=None):
    r = {"peer": name, "layer": layer, "threads": threads, "wait_policy": policy, "status": status, "version": "1.0",
         "macs": 1000}
    if status == "ok":
        r["ms"] = ms
    else:
        r["why"] = why
    return r


class PeersTableTest(unittest.TestCase):
    def table(self, files):
        with tempfile.TemporaryDirectory() as out:
            for name, content in files.items():
                with open(os.path.join(out, name), "w") as f:
                    if isinstance(content, list):
                        f.write("".join(json.dumps(r) + "\n" for r in content))
                    elif isinstance(content, dict):
                        json.dump(content, f)
                    else:
                        f.write(content)
            res = subprocess.run([sys.executable, TABLE, out], capture_output=True, text=True, env=dict(os.environ, LAYERS="^l"))
            self.assertEqual(res.returncode, 0, res.stderr)
            rows = {}
            for line in res.stdout.splitlines():
                cells = [c.strip() for c in line.strip("|").split("|")]
                if len(cells) > 2 and cells[0].startswith("l"):
                    rows[(cells[0], cells[1])] = cells
            return rows, res.stdout

    def test_rounds_median_policy_failure_and_machine(self):
        files = {
            "layers.txt": "l1 4 8 8 4\n",
            "machine_r1.json": machine(200.0, 300.0),
            "machine_r2.json": machine(150.0, 390.0),  # a disturbed 1-thread sgemm: the best round counts
            "edgegan.jsonl": [
                # 1 thread: rounds 1.0, 1.1 and a disturbed 5.0 -> 1.1
                edge("l1", 1, "split", 1.0), edge("l1", 1, "split", 1.1), edge("l1", 1, "split", 5.0),
                edge("l1", 1, "zero_insert", 4.0), edge("l1", 1, "zero_insert", 4.4), edge("l1", 1, "zero_insert", 4.2),
                # 2 threads: passive 0.8, 0.9, 0.7 -> 0.8; default 0.6, 0.62, 3.0 -> 0.62, the faster
                edge("l1", 2, "split", 0.8), edge("l1", 2, "split", 0.9), edge("l1", 2, "split", 0.7),
                edge("l1", 2, "split", 0.6, "default"), edge("l1", 2, "split", 0.62, "default"), edge("l1", 2, "split", 3.0, "default"),
            ],
            "ncnn.jsonl": [peer("ncnn", "l1", 1, ms) for ms in (2.0, 2.2, 2.1)] +
                          [peer("ncnn", "l1", 2, ms) for ms in (1.5, 1.0, 1.6)],
            "onnxruntime.jsonl": [peer("onnxruntime", "l1", 1, 1.5), peer("onnxruntime", "l1", 1, None, status="mismatch", why="max |diff| 1"),
                                  peer("onnxruntime", "l1", 1, 1.4)],
        }
        rows, text = self.table(files)
        one, two = rows[("l1", "1")], rows[("l1", "2")]
        head = [c.strip() for c in text.splitlines()[0].strip("|").split("|")]
        zero_insert, rounds = head.index("zero-insert / split"), head.index("rounds max/min (edgegan, peer)")
        self.assertEqual(one[2], "1.10")          # edgegan: median of 1.0, 1.1, 5.0
        self.assertEqual(one[5], "2.10")          # ncnn: median of its rounds
        self.assertEqual(one[4], "mismatch")      # ORT: a failed round is shown, not skipped
        self.assertEqual(one[7], "1.91x (ncnn)")  # 2.1 / 1.1
        self.assertEqual(one[zero_insert], "3.82x")        # zero-insert: median 4.2 over split 1.1
        self.assertEqual(one[rounds], "5.00, 1.10")   # rounds max/min: 5.0 / 1.0, 2.2 / 2.0
        self.assertEqual(two[2], "0.620")         # default waiting's median beats passive's
        self.assertEqual(two[7], "2.42x (ncnn)")  # 1.5 / 0.62
        self.assertIn("200.0 GFLOP/s at 1 thread, 390.0 at 2", text)
        self.assertIn("3 round(s)", text)

    def test_roofline_is_the_larger_of_the_fma_and_the_traffic_bound(self):
        files = {
            # 4x4x1024 -> 512 k5: 17 landing taps per axis (of 4 * 5), 2 * 17^2 * 1024 * 512 FLOPs, 52,627,456
            # bytes (weights 1024 * 512 * 25, input 4^2 * 1024, output 8^2 * 512, bias 512; fp32).
            # 128x128x64 -> 64 k4: 510 landing taps per axis (of 128 * 4), 21,233,920 bytes.
            # 1x1x512 -> 256 k4: 2 landing taps per axis, 8,395,776 bytes: within the cached read's 16 MB.
            "layers.txt": "l_stream 4 1024 512 5\nl_compute 128 64 64 4\nl_cached 1 512 256 4\n",
            "machine_r1.json": machine(200.0, 390.0),  # FMA 220 / 430 GFLOP/s, read 30 / 40 GB/s
            "edgegan.jsonl": [edge("l_stream", 1, "split", 2.0), edge("l_stream", 2, "split", 1.5),
                              edge("l_compute", 1, "split", 10.0), edge("l_compute", 2, "split", 5.0),
                              edge("l_cached", 1, "split", 0.1), edge("l_cached", 2, "split", 0.07)],
        }
        rows, text = self.table(files)
        head = [c.strip() for c in text.splitlines()[0].strip("|").split("|")]
        roof, pct = head.index("roofline ms (bound)"), head.index("% of roofline")
        # traffic: 52,627,456 B / 30 GB/s = 1.754 ms > FMA: 303,038,464 FLOP / 220 GFLOP/s = 1.377 ms
        self.assertEqual(rows[("l_stream", "1")][roof], "1.75 (memory)")
        self.assertEqual(rows[("l_stream", "1")][pct], "88%")   # 1.754 / 2.0
        self.assertEqual(rows[("l_stream", "2")][roof], "1.32 (memory)")  # / 40 GB/s
        self.assertEqual(rows[("l_stream", "2")][pct], "88%")   # 1.316 / 1.5
        # FMA: 2,130,739,200 FLOP / 220 GFLOP/s = 9.685 ms > traffic 0.708 ms
        self.assertEqual(rows[("l_compute", "1")][roof], "9.69 (FMA)")
        self.assertEqual(rows[("l_compute", "1")][pct], "97%")
        self.assertEqual(rows[("l_compute", "2")][roof], "4.96 (FMA)")  # / 430 GFLOP/s
        self.assertEqual(rows[("l_compute", "2")][pct], "99%")
        # from the cache: 8,395,776 B / 90 GB/s = 0.0933 ms > FMA 1,048,576 FLOP / 220 GFLOP/s = 0.0048 ms
        self.assertEqual(rows[("l_cached", "1")][roof], "0.0933 (cache)")
        self.assertEqual(rows[("l_cached", "1")][pct], "93%")
        self.assertEqual(rows[("l_cached", "2")][roof], "0.0525 (cache)")  # / 160 GB/s
        self.assertEqual(rows[("l_cached", "2")][pct], "75%")  # 0.0525 / 0.07
        self.assertIn("Roofline: the least time", text)
        self.assertIn("read of 16 MB again and again (from the last-level cache) 90.0 GB/s at 1 thread, 160.0 at 2", text)

    def test_a_folder_without_results_is_refused_by_name(self):
        with tempfile.TemporaryDirectory() as out:
            res = subprocess.run([sys.executable, TABLE, out], capture_output=True, text=True)
            self.assertEqual(res.returncode, 1)
            self.assertIn("has no layers.txt", res.stderr)
            self.assertNotIn("Traceback", res.stderr)
        res = subprocess.run([sys.executable, TABLE], capture_output=True, text=True)
        self.assertEqual(res.returncode, 1)
        self.assertIn("usage:", res.stderr)


if __name__ == "__main__":
    unittest.main()
