#!/usr/bin/env python3
"""Train a small conditional GAN on scikit-learn's bundled 8x8 digits (upsampled to
16x16, conditioned on the digit label), export generator/discriminator to ONNX
(opset 17) and write golden test cases.

Usage (from the repo root):
    OMP_WAIT_POLICY=passive /usr/bin/python3 models/cgan_digits/train.py [--steps 2000]
"""
import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "golden"))
from golden_util import write_case  # noqa: E402


def _load_dcgan_helpers():
    """Reuse data loading / init / preview / export helpers from the DCGAN script."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("dcgan_train", os.path.join(REPO, "models", "dcgan_digits", "train.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_h = _load_dcgan_helpers()
load_data, weights_init, save_grid, export = _h.load_data, _h.weights_init, _h.save_grid, _h.export

NZ, NCLASS, EMB = 64, 10, 16
OPSET = 17


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(NCLASS, EMB)
        self.fc = nn.Sequential(
            nn.Linear(NZ + EMB, 128 * 4 * 4, bias=False),
            nn.BatchNorm1d(128 * 4 * 4), nn.ReLU(True),
        )
        self.net = nn.Sequential(
            nn.ConvTranspose2d(128, 64, 4, 2, 1, bias=False),  # -> 8x8
            nn.BatchNorm2d(64), nn.ReLU(True),
            nn.ConvTranspose2d(64, 1, 4, 2, 1, bias=False),    # -> 16x16
            nn.Tanh(),
        )

    def forward(self, z, label):
        x = torch.cat([z, self.embed(label)], 1)
        x = self.fc(x).view(-1, 128, 4, 4)
        return self.net(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(NCLASS, 16 * 16)  # label -> one extra 16x16 plane
        self.net = nn.Sequential(
            nn.Conv2d(2, 64, 4, 2, 1), nn.LeakyReLU(0.2, True),                 # -> 8x8
            nn.Conv2d(64, 128, 4, 2, 1, bias=False),                            # -> 4x4
            nn.BatchNorm2d(128), nn.LeakyReLU(0.2, True),
        )
        self.fc = nn.Linear(128 * 4 * 4, 1)

    def forward(self, image, label):
        x = torch.cat([image, self.embed(label).view(-1, 1, 16, 16)], 1)
        x = self.net(x)
        return self.fc(x.view(x.size(0), -1))  # raw logits [N,1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    np.random.seed(0)

    data, labels = load_data(16)
    G, D = Generator(), Discriminator()
    # DCGAN init for conv/BN layers (Linear/Embedding keep PyTorch defaults).
    G.apply(weights_init)
    D.apply(weights_init)
    optG = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optD = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    ones = torch.ones(args.batch, 1)
    zeros = torch.zeros(args.batch, 1)

    t0 = time.time()
    for step in range(1, args.steps + 1):
        idx = torch.randint(0, data.shape[0], (args.batch,))
        real, real_lab = data[idx], labels[idx]
        z = torch.randn(args.batch, NZ)
        fake_lab = torch.randint(0, NCLASS, (args.batch,))
        fake = G(z, fake_lab)
        optD.zero_grad()
        lossD = bce(D(real, real_lab), ones) + bce(D(fake.detach(), fake_lab), zeros)
        lossD.backward()
        optD.step()
        optG.zero_grad()
        lossG = bce(D(fake, fake_lab), ones)
        lossG.backward()
        optG.step()
        if step % 100 == 0 or step == 1:
            print("step %5d  lossD %.4f  lossG %.4f  %.0fs" % (step, lossD.item(), lossG.item(),
                                                              time.time() - t0), flush=True)
    train_s = time.time() - t0
    print("training took %.1f s" % train_s)

    G.eval()
    D.eval()
    lab2 = torch.tensor([3, 7], dtype=torch.int64)
    export(G, (torch.randn(2, NZ), lab2), ["z", "label"], ["image"],
           os.path.join(HERE, "generator.onnx"), OPSET)
    export(D, (torch.randn(2, 1, 16, 16), lab2), ["image", "label"], ["logit"],
           os.path.join(HERE, "discriminator.onnx"), OPSET)

    with torch.no_grad():
        # Preview: row r = label r (0..9), 10 samples per row.
        g = torch.Generator().manual_seed(1234)
        z = torch.randn(100, NZ, generator=g)
        lab = torch.arange(NCLASS).repeat_interleave(10)
        save_grid(G(z, lab), os.path.join(HERE, "pytorch_samples.png"), nrow=10)

        g = torch.Generator().manual_seed(42)
        z = torch.randn(10, NZ, generator=g)
        lab = torch.arange(NCLASS, dtype=torch.int64)
        write_case("cgan_digits_generator", {"z": z, "label": lab}, {"image": G(z, lab)},
                   model_path="models/cgan_digits/generator.onnx",
                   readme="Shipped cGAN generator (digits 16x16): z [10,64] + label [10] (0..9) -> image [10,1,16,16].")
        idx = torch.arange(10)  # first 10 dataset images are digits 0..9
        imgs, lab = data[idx], labels[idx]
        # Append 2 mismatched-label pairs so the label path really matters.
        imgs = torch.cat([imgs, data[:2]])
        lab = torch.cat([lab, torch.tensor([5, 8])])
        write_case("cgan_digits_discriminator", {"image": imgs, "label": lab}, {"logit": D(imgs, lab)},
                   model_path="models/cgan_digits/discriminator.onnx",
                   readme="Shipped cGAN discriminator: 12 images [12,1,16,16] + labels [12] -> logit [12,1] "
                          "(first 10 real with correct labels, last 2 with wrong labels).")
    with open(os.path.join(HERE, "train_time.txt"), "w") as f:
        f.write("steps %d, training %.1f s, torch %s, %d threads\n" % (args.steps, train_s, torch.__version__, args.threads))


if __name__ == "__main__":
    main()
