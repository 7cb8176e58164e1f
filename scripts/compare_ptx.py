#!/usr/bin/env python3
"""Whether moving CUDA code between files changed what it compiles to: compares the
kernels (.entry) and device functions (.func) of PTX files, function by function,
after removing what depends only on the file they were compiled in (the per-file
anonymous-namespace and _INTERNAL_ parts of symbol names, the conv_gemm_detail
namespace, mangling substitution indices, label and local-depot numbers) and
comparing shared-memory declarations as one set (one file declares a device
function's statics at module scope, another inside its only caller).

  nvcc -O3 -DNDEBUG -std=c++17 -arch=compute_90 -ptx -I<checkout> FILE.cu -o FILE.ptx
  compare_ptx.py BEFORE.ptx AFTER.ptx [AFTER2.ptx ...]

BEFORE holds the functions of one build (one or more files compiled into one PTX);
the AFTER files together must hold the same functions. Exits 1 on any difference.
Used for the split of kernels_cuda/gemm/conv_gemm.cu (identical at compute_87 and
compute_90 with nvcc 13).
"""
import re
import sys

SHARED = re.compile(r"^\s*(?:\.extern )?\.shared ")
FUNCTION = re.compile(r"(?:\.visible |\.weak )?\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)\(")


def canonical(text):
    # <length>_GLOBAL__N_... and <length>_INTERNAL_...: per-file names; skip <length> characters.
    out, i = [], 0
    prefix = re.compile(r"(\d+)(?=_GLOBAL__N_|_INTERNAL_)")
    while True:
        m = prefix.search(text, i)
        if not m:
            out.append(text[i:])
            break
        out.append(text[i:m.start()])
        i = m.end() + int(m.group(1))
    text = "".join(out).replace("16conv_gemm_detail", "")
    text = re.sub(r"\$L__BB\d+_", "$L__BB_", text)  # labels carry the function's index in its file
    text = re.sub(r"__local_depot\d+", "__local_depot", text)
    return re.sub(r"S\d*_", "S_", text)  # mangling substitutions follow the namespaces


def read(paths):
    """({function: lines without comments and shared declarations}, {shared declarations})."""
    functions, shared = {}, set()
    for path in paths:
        lines = canonical(open(path).read()).split("\n")
        shared.update(line.strip() for line in lines if SHARED.match(line))
        i = 0
        while i < len(lines):
            m = FUNCTION.match(lines[i])
            if m:
                body = []
                while not lines[i].startswith("}"):
                    body.append(lines[i])
                    i += 1
                body.append(lines[i])
                functions[m.group(1) + " " + m.group(2)] = [l for l in body if not l.strip().startswith("//") and not SHARED.match(l)]
            i += 1
    return functions, shared


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    before, shared_before = read(sys.argv[1:2])
    after, shared_after = read(sys.argv[2:])
    differences = 0
    if shared_before != shared_after:
        differences += 1
        print("shared-memory declarations differ:", *sorted(shared_before ^ shared_after), sep="\n  ")
    for name in sorted(set(before) | set(after)):
        if name not in after or name not in before:
            differences += 1
            print(("only before: " if name in before else "only after: ") + name)
        elif before[name] != after[name]:
            differences += 1
            first = next(k for k, (x, y) in enumerate(zip(before[name], after[name] + [""])) if x != y)
            print(f"differs: {name} (line {first}: {before[name][first].strip()!r} / {after[name][first].strip() if first < len(after[name]) else ''!r})")
    same = len(set(before) & set(after)) - sum(before[n] != after[n] for n in set(before) & set(after))
    print(f"{same} of {len(before)} functions identical, {differences} difference(s)")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
