#!/usr/bin/python3
"""Compares two builds of edgegan (e.g. before and after a refactoring) bit for bit.

  scripts/compare_builds.py OLD_BUILD NEW_BUILD            # both modes on the repository's models

outputs:    `edgegan run` of every shipped .egan, on the same random inputs, at batch 1
            and 16, 1 and 2 threads, every transposed-convolution algorithm: the output
            bytes must be equal.
converter:  `edgegan-convert` of every .onnx file in the repository, fp32 and fp16: the
            files must be equal, and a failing conversion must fail with the same message.
Exits 1 if anything differs. Needs numpy (python3-numpy)."""
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def compare_outputs(a, b, work):
    rng = np.random.default_rng(11)
    checked = differ = 0
    for model in sorted(glob.glob(os.path.join(ROOT, "models", "*", "*.egan"))):
        text = subprocess.run([f"{a}/cli/edgegan", "inspect", model], capture_output=True, text=True, check=True).stdout
        inputs = re.findall(r"^input\s+'([^']+)' (\S+) ?(\S*) (float32|int64)", text, re.M)
        classes = re.search(r"\((\d+) classes", text)
        for batch in (1, 16):
            args = []
            for k, (name, dims, _layout, dtype) in enumerate(inputs):
                shape = [batch] + [int(d) for d in dims.split("x")[1:]]
                path = f"{work}/in{k}_{batch}.npy"
                if dtype == "int64":
                    np.save(path, rng.integers(0, int(classes.group(1)), shape).astype(np.int64))
                else:
                    np.save(path, rng.standard_normal(shape).astype(np.float32))
                args += ["-i", f"{name}={path}"]
            for threads in (1, 2):
                for algo in ("split", "zero-insert", "col2im"):
                    outs = []
                    for k, build in enumerate((a, b)):
                        out = f"{work}/out{k}.npy"
                        subprocess.run([f"{build}/cli/edgegan", "run", model, *args, "--nhwc", "--threads", str(threads),
                                        "--algo", algo, "-o", out], check=True, capture_output=True)
                        outs.append(np.load(out))
                    checked += 1
                    if not np.array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32)):
                        differ += 1
                        print(f"outputs differ: {model} batch {batch} threads {threads} {algo}: "
                              f"max |diff| {np.abs(outs[0] - outs[1]).max():g}")
    print(f"outputs: {checked} runs compared, {checked - differ} bit-identical, {differ} differ")
    return differ


def compare_converter(a, b, work):
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "*.onnx"], capture_output=True, text=True, check=True).stdout.split()
    checked = differ = 0
    for f in files:
        for weights in ("fp32", "fp16"):
            results = []
            for k, build in enumerate((a, b)):
                out = f"{work}/conv{k}.egan"
                if os.path.exists(out):
                    os.remove(out)
                p = subprocess.run([f"{build}/converter/edgegan-convert", os.path.join(ROOT, f), "--weights", weights, "-o", out],
                                   capture_output=True, text=True)
                data = open(out, "rb").read() if p.returncode == 0 else None
                results.append((p.returncode, data, p.stderr.replace(out, "OUT")))
            checked += 1
            same = results[0][0] == results[1][0] and results[0][1] == results[1][1] and (results[0][0] == 0 or results[0][2] == results[1][2])
            if not same:
                differ += 1
                print(f"conversion differs: {f} ({weights})")
    print(f"converter: {checked} conversions compared, {checked - differ} identical, {differ} differ")
    return differ


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    a, b = (os.path.abspath(p) for p in sys.argv[1:])
    with tempfile.TemporaryDirectory() as work:
        differ = compare_outputs(a, b, work) + compare_converter(a, b, work)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
