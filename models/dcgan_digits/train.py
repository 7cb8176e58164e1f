#!/usr/bin/env python3
"""Train a small DCGAN on scikit-learn's bundled 8x8 digits (upsampled to 32x32),
export generator/discriminator to ONNX (opset 13) and write golden test cases.

Usage (from the repo root):
    OMP_WAIT_POLICY=passive /usr/bin/python3 models/dcgan_digits/train.py [--steps 2000]

Everything is seeded (seed 0), so re-running reproduces the same weights on the
same machine/torch build.
"""
import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "golden"))
from golden_util import write_case, fix_output_shapes  # noqa: E402

NZ, NGF, NDF = 64, 64, 64
OPSET = 13


def load_data(size=32):
    """Digits scaled to [-1, 1], bilinearly upsampled to size x size -> [N,1,size,size]."""
    d = load_digits()
    x = torch.from_numpy(d.images.astype(np.float32) / 8.0 - 1.0).unsqueeze(1)
    x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    return x, torch.from_numpy(d.target.astype(np.int64))


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(NZ, NGF * 4, 4, 1, 0, bias=False),      # -> 4x4
            nn.BatchNorm2d(NGF * 4), nn.ReLU(True),
            nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False),  # -> 8x8
            nn.BatchNorm2d(NGF * 2), nn.ReLU(True),
            nn.ConvTranspose2d(NGF * 2, NGF, 4, 2, 1, bias=False),      # -> 16x16
            nn.BatchNorm2d(NGF), nn.ReLU(True),
            nn.ConvTranspose2d(NGF, 1, 4, 2, 1, bias=False),            # -> 32x32
            nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, NDF, 4, 2, 1), nn.LeakyReLU(0.2, True),            # -> 16x16
            nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False),                   # -> 8x8
            nn.BatchNorm2d(NDF * 2), nn.LeakyReLU(0.2, True),
            nn.Conv2d(NDF * 2, NDF * 4, 4, 2, 1, bias=False),               # -> 4x4
            nn.BatchNorm2d(NDF * 4), nn.LeakyReLU(0.2, True),
            nn.Conv2d(NDF * 4, 1, 4, 1, 0),                                 # -> 1x1
        )

    def forward(self, image):
        return self.net(image).view(-1, 1)  # raw logits [N,1]


def weights_init(m):
    """DCGAN paper init: conv weights N(0, 0.02), BN gamma N(1, 0.02), beta 0."""
    name = m.__class__.__name__
    if "Conv" in name:
        nn.init.normal_(m.weight, 0.0, 0.02)
        if m.bias is not None:
            nn.init.zeros_(m.bias)
    elif "BatchNorm" in name:
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def save_grid(images, path, nrow=8):
    """images: [N,1,H,W] in [-1,1]. Writes a PNG grid with matplotlib/PIL if available."""
    imgs = ((images.clamp(-1, 1) + 1) / 2).squeeze(1).numpy()
    n, h, w = imgs.shape
    ncol = int(np.ceil(n / nrow))
    grid = np.ones((ncol * (h + 2) + 2, nrow * (w + 2) + 2), np.float32)
    for i in range(n):
        r, c = divmod(i, nrow)
        grid[2 + r * (h + 2): 2 + r * (h + 2) + h, 2 + c * (w + 2): 2 + c * (w + 2) + w] = imgs[i]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.imsave(path, grid, cmap="gray", vmin=0, vmax=1)
    except ImportError:
        try:
            from PIL import Image
            big = np.kron(grid, np.ones((4, 4)))  # upscale for visibility
            Image.fromarray((big * 255).astype(np.uint8)).save(path)
        except ImportError:
            print("no matplotlib/PIL: skipping", path)
            return
    print("wrote", path)


def export(model, args, input_names, output_names, path, opset):
    model.eval()
    dyn = {n: {0: "N"} for n in input_names + output_names}
    torch.onnx.export(model, args, path, opset_version=opset, input_names=input_names,
                      output_names=output_names, dynamic_axes=dyn, do_constant_folding=True)
    with torch.no_grad():
        outs = model(*args)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    fix_output_shapes(path, {n: tuple(o.shape) for n, o in zip(output_names, outs)})
    import onnx
    onnx.checker.check_model(onnx.load(path))
    print("wrote %s (%.2f MB)" % (path, os.path.getsize(path) / 1e6))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    np.random.seed(0)

    data, _ = load_data(32)
    G, D = Generator(), Discriminator()
    G.apply(weights_init)
    D.apply(weights_init)
    optG = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optD = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    ones = torch.ones(args.batch, 1)
    zeros = torch.zeros(args.batch, 1)

    t0 = time.time()
    for step in range(1, args.steps + 1):
        real = data[torch.randint(0, data.shape[0], (args.batch,))]
        z = torch.randn(args.batch, NZ, 1, 1)
        fake = G(z)
        # Discriminator step: real -> 1, fake -> 0.
        optD.zero_grad()
        lossD = bce(D(real), ones) + bce(D(fake.detach()), zeros)
        lossD.backward()
        optD.step()
        # Generator step (non-saturating loss).
        optG.zero_grad()
        lossG = bce(D(fake), ones)
        lossG.backward()
        optG.step()
        if step % 100 == 0 or step == 1:
            print("step %5d  lossD %.4f  lossG %.4f  %.0fs" % (step, lossD.item(), lossG.item(),
                                                              time.time() - t0), flush=True)
    train_s = time.time() - t0
    print("training took %.1f s" % train_s)

    G.eval()
    D.eval()

    gen_path = os.path.join(HERE, "generator.onnx")
    disc_path = os.path.join(HERE, "discriminator.onnx")
    export(G, (torch.randn(2, NZ, 1, 1),), ["z"], ["image"], gen_path, OPSET)
    export(D, (torch.randn(2, 1, 32, 32),), ["image"], ["logit"], disc_path, OPSET)

    with torch.no_grad():
        g = torch.Generator().manual_seed(1234)
        save_grid(G(torch.randn(64, NZ, 1, 1, generator=g)), os.path.join(HERE, "pytorch_samples.png"))

        # Golden cases (reference the shipped ONNX via model_path.txt).
        g = torch.Generator().manual_seed(42)
        z = torch.randn(5, NZ, 1, 1, generator=g)
        write_case("dcgan_digits_generator", {"z": z}, {"image": G(z)},
                   model_path="models/dcgan_digits/generator.onnx",
                   readme="Shipped DCGAN generator (digits 32x32): z [5,64,1,1] -> image [5,1,32,32].")
        imgs = data[[0, 1, 2, 3, 4]]
        write_case("dcgan_digits_discriminator", {"image": imgs}, {"logit": D(imgs)},
                   model_path="models/dcgan_digits/discriminator.onnx",
                   readme="Shipped DCGAN discriminator: 5 real digit images [5,1,32,32] -> logit [5,1].")
    with open(os.path.join(HERE, "train_time.txt"), "w") as f:
        f.write("steps %d, training %.1f s, torch %s, %d threads\n" % (args.steps, train_s, torch.__version__, args.threads))


if __name__ == "__main__":
    main()
