#!/usr/bin/env python3
"""PyTorch CPU autograd doing the step bench/training_step_bench times in edgegan
(engine/gan_step.cpp, the pytorch/examples DCGAN recipe, non-saturating G loss, BCE on
logits, Adam lr 2e-4 betas (0.5, 0.999)):

    fake = G(z, fake_labels)
    D.zero_grad(); bce(D(real), 1).backward(); bce(D(fake.detach()), 0).backward(); optD.step()
    G.zero_grad(); bce(D(fake), 1).backward(); optG.step()

Variants:
  folded   every BatchNorm folded into its conv/linear (a bias instead), eval statistics:
           the function edgegan trains (the comparison that counts)
  bn_eval  BatchNorm kept as a layer, in eval mode (for reference)

torch.set_num_threads(T); warm-up steps, then the median of --steps timed steps.
Prints one JSON object per (model, variant, threads):
    OMP_WAIT_POLICY=passive /usr/bin/python3 bench/training_step_torch.py --threads 1 2
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gan_models import MODELS, dcgan_init, fold_batchnorm  # noqa: E402

LR, BETAS = 2e-4, (0.5, 0.999)


def make_step(name, variant, batch, seed=0):
    g_cls, d_cls, conditional, noise_shape, image_shape = MODELS[name]
    gen = torch.Generator().manual_seed(seed)
    G, D = dcgan_init(g_cls(), gen), dcgan_init(d_cls(), gen)
    if variant == "folded":
        G, D = fold_batchnorm(G), fold_batchnorm(D)
    G.eval()  # folded: nothing left that train() would change; bn_eval: running statistics used
    D.eval()
    optG = torch.optim.Adam(G.parameters(), lr=LR, betas=BETAS)
    optD = torch.optim.Adam(D.parameters(), lr=LR, betas=BETAS)
    bce = nn.BCEWithLogitsLoss()
    ones, zeros = torch.ones(batch, 1), torch.zeros(batch, 1)
    real = torch.rand((batch,) + image_shape, generator=gen) * 2 - 1
    noise = torch.randn((batch,) + noise_shape, generator=gen)
    real_labels = torch.randint(0, 10, (batch,), generator=gen)
    fake_labels = torch.randint(0, 10, (batch,), generator=gen)
    g_extra = (fake_labels,) if conditional else ()
    d_real_extra = (real_labels,) if conditional else ()

    def step():
        fake = G(noise, *g_extra)
        D.zero_grad()
        loss_real = bce(D(real, *d_real_extra), ones)
        loss_real.backward()
        loss_fake = bce(D(fake.detach(), *g_extra), zeros)
        loss_fake.backward()
        optD.step()
        G.zero_grad()
        loss_g = bce(D(fake, *g_extra), ones)
        loss_g.backward()
        optG.step()
        return loss_real.item(), loss_fake.item(), loss_g.item()

    params = sum(p.numel() for p in G.parameters()) + sum(p.numel() for p in D.parameters())
    return step, params


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--variants", nargs="+", default=["folded", "bn_eval"], choices=["folded", "bn_eval"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=15, help="timed steps (>= 10); the median is reported")
    a = ap.parse_args()
    for threads in a.threads:
        torch.set_num_threads(threads)
        for name in a.models:
            for variant in a.variants:
                step, params = make_step(name, variant, a.batch)
                for _ in range(a.warmup):
                    step()
                times = []
                for _ in range(a.steps):
                    t = time.perf_counter()
                    step()
                    times.append((time.perf_counter() - t) * 1e3)
                print(json.dumps({"model": name, "variant": variant, "threads": threads, "batch": a.batch,
                                  "median_ms": statistics.median(times), "min_ms": min(times), "steps": a.steps,
                                  "params": params, "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
