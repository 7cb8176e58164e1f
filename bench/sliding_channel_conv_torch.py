#!/usr/bin/env python3
"""PyTorch's channel-stack form of the sliding-channel convolution (x[:, idx] and, for
comparison, torch.cat of channel slices, then Conv2d with groups = Cout) on the layers of
bench/sliding_channel_conv_bench.cpp: cg 2/4/8, co 33%/50%, 56x56x64 -> 128 and
28x28x128 -> 256, batch 1; forward, and backward (input and weight gradients) after one
forward, at 1 and 2 threads. Median of single calls, in ms.

    OMP_WAIT_POLICY=passive /usr/bin/python3 bench/sliding_channel_conv_torch.py [--reps 30] [--only 56x56x64_128/cg4_co50]
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn as nn

LAYERS = [("56x56x64_128", 56, 64, 128), ("28x28x128_256", 28, 128, 256)]


class ChannelStackScc(nn.Module):
    def __init__(self, cin, cout, cg, co, form):
        super().__init__()
        gw = cin // cg
        stride = gw - int(math.floor(co * gw))
        self.cin, self.gw, self.form = cin, gw, form
        self.starts = [(o * stride) % cin for o in range(cout)]
        self.register_buffer("idx", torch.tensor([(s + j) % cin for s in self.starts for j in range(gw)]))
        self.conv = nn.Conv2d(cout * gw, cout, 1, groups=cout)

    def forward(self, x):
        if self.form == "gather":
            stack = x[:, self.idx]
        else:
            parts = []
            for s in self.starts:
                e = s + self.gw
                parts += [x[:, s:e]] if e <= self.cin else [x[:, s:], x[:, :e - self.cin]]
            stack = torch.cat(parts, 1)
        return self.conv(stack)


def median_ms(fn, reps):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--only", default="", help="run only cases whose name contains this")
    args = ap.parse_args()
    print("%-34s %-7s %7s %10s %10s" % ("case", "form", "threads", "fwd_ms", "bwd_ms"))
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for name, hw, cin, cout in LAYERS:
            for cg in (2, 4, 8):
                for co in (0.33, 0.5):
                    case = "%s/cg%d_co%d" % (name, cg, round(co * 100))
                    if args.only not in case:
                        continue
                    for form in ("gather", "slices"):
                        torch.manual_seed(0)
                        m = ChannelStackScc(cin, cout, cg, co, form)
                        x = torch.randn(1, cin, hw, hw)
                        with torch.no_grad():
                            fwd = median_ms(lambda: m(x), args.reps)
                        xg = x.clone().requires_grad_(True)
                        dy = torch.randn(1, cout, hw, hw)

                        def backward():
                            m.zero_grad(set_to_none=True)
                            xg.grad = None
                            y = m(xg)
                            t = time.perf_counter()
                            y.backward(dy)
                            return (time.perf_counter() - t) * 1e3

                        for _ in range(3):
                            backward()
                        bwd = statistics.median(backward() for _ in range(args.reps))
                        print("%-34s %-7s %7d %10.3f %10.3f" % (case, form, threads, fwd, bwd), flush=True)


if __name__ == "__main__":
    main()
