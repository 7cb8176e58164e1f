#!/usr/bin/env python3
"""Golden data for whole GAN training steps: PyTorch autograd + torch.optim.Adam
running the DCGAN recipe on a small DCGAN and a small conditional GAN.

For each case, tests/golden/training/<case>/ holds
    generator.onnx, discriminator.onnx    the models as exported (BatchNorm in eval mode)
    real.npy [P,C,H,W] (+ real_labels.npy [P])   a pool of real images; step s uses
                                          rows (s*B + i) % P, i < B
    noise.npy [S,B,NZ] (+ fake_labels.npy [S,B])  per step
    step1_generator_grads.onnx, step1_discriminator_grads.onnx
                                          the architecture with every parameter replaced
                                          by its gradient after step 1 (D: before its
                                          update; G: from D after its update, as below)
    final_generator.onnx, final_discriminator.onnx   the weights after S steps
    losses.npy [S,3]                      lossD_real, lossD_fake, lossG per step

The recipe (pytorch/examples dcgan, non-saturating G loss, BCE on logits):
    fake = G(z, fake_labels)
    D.zero_grad(); bce(D(real), 1).backward(); bce(D(fake.detach()), 0).backward(); optD.step()
    G.zero_grad(); bce(D(fake), 1).backward(); optG.step()

edgegan keeps BatchNorm folded into the preceding layer, so the reference trains the
*folded* model (every BN merged into its conv/linear weight and bias, eval
statistics), which is the same function as the exported one. Gradients are stored
as ONNX models so the engine's own converter puts them in the engine's layout
(transposed convolutions split into phases) exactly as it does the weights.

Usage: OMP_WAIT_POLICY=passive /usr/bin/python3 tests/golden/make_training_goldens.py
"""
import copy
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(HERE, "training")
sys.path.insert(0, HERE)
from golden_util import export_onnx, fold_batchnorm  # noqa: E402

STEPS, BATCH, POOL = 20, 8, 32
LR, BETAS = 2e-4, (0.5, 0.999)


def digits(size):
    from sklearn.datasets import load_digits
    d = load_digits()
    x = torch.from_numpy(d.images.astype(np.float32) / 8.0 - 1.0).unsqueeze(1)
    x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    return x[:POOL].contiguous(), torch.from_numpy(d.target[:POOL].astype(np.int64))


# ---- small versions of the shipped architectures (same layer kinds, fewer channels)
class DcganG(nn.Module):
    NZ = 32

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(self.NZ, 64, 4, 1, 0, bias=False), nn.BatchNorm2d(64), nn.ReLU(True),  # 4x4
            nn.ConvTranspose2d(64, 32, 4, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(True),       # 8x8
            nn.ConvTranspose2d(32, 16, 4, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(True),       # 16x16
            nn.ConvTranspose2d(16, 1, 4, 2, 1, bias=False), nn.Tanh())                                # 32x32

    def forward(self, z):
        return self.net(z.view(-1, self.NZ, 1, 1))


class DcganD(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 16, 4, 2, 1), nn.LeakyReLU(0.2, True),                                   # 16x16
            nn.Conv2d(16, 32, 4, 2, 1, bias=False), nn.BatchNorm2d(32), nn.LeakyReLU(0.2, True),  # 8x8
            nn.Conv2d(32, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64), nn.LeakyReLU(0.2, True),  # 4x4
            nn.Conv2d(64, 1, 4, 1, 0))                                                            # 1x1

    def forward(self, image):
        return self.net(image).view(-1, 1)


class CganG(nn.Module):
    NZ, NCLASS = 16, 10

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(self.NCLASS, 8)
        self.fc = nn.Sequential(nn.Linear(self.NZ + 8, 64 * 4 * 4, bias=False), nn.BatchNorm1d(64 * 4 * 4), nn.ReLU(True))
        self.net = nn.Sequential(
            nn.ConvTranspose2d(64, 32, 4, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(True),  # 8x8
            nn.ConvTranspose2d(32, 1, 4, 2, 1, bias=False), nn.Tanh())                           # 16x16

    def forward(self, z, label):
        x = self.fc(torch.cat([z, self.embed(label)], 1)).view(-1, 64, 4, 4)
        return self.net(x)


class CganD(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 16 * 16)
        self.net = nn.Sequential(
            nn.Conv2d(2, 32, 4, 2, 1), nn.LeakyReLU(0.2, True),                                   # 8x8
            nn.Conv2d(32, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64), nn.LeakyReLU(0.2, True))  # 4x4
        self.fc = nn.Linear(64 * 4 * 4, 1)

    def forward(self, image, label):
        x = torch.cat([image, self.embed(label).view(-1, 1, 16, 16)], 1)
        return self.fc(self.net(x).view(image.size(0), -1))


def randomize(model, seed):
    """DCGAN init plus random BatchNorm statistics, so folding changes the weights."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * 0.05)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.05)
            elif isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                n = m.num_features
                m.weight.copy_(1.0 + 0.2 * torch.randn(n, generator=g))
                m.bias.copy_(0.1 * torch.randn(n, generator=g))
                m.running_mean.copy_(0.1 * torch.randn(n, generator=g))
                m.running_var.copy_(0.5 + torch.rand(n, generator=g))
            elif isinstance(m, nn.Embedding):
                m.weight.copy_(torch.randn(m.weight.shape, generator=g))
    return model.eval()


def with_values(model, tensors):
    """The architecture of `model` with its parameters replaced by `tensors` (same order)."""
    m = copy.deepcopy(model)
    with torch.no_grad():
        for p, t in zip(m.parameters(), tensors):
            p.copy_(t)
    return m


def make_case(name, G, D, image_size, conditional, readme):
    d = os.path.join(OUT, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    torch.manual_seed(7)
    real_pool, real_labels = digits(image_size)
    noise = torch.randn(STEPS, BATCH, G.NZ)
    fake_labels = torch.randint(0, 10, (STEPS, BATCH))

    g_args = (noise[0], fake_labels[0]) if conditional else (noise[0],)
    d_args = (real_pool[:BATCH], real_labels[:BATCH]) if conditional else (real_pool[:BATCH],)
    export_onnx(G, g_args, ["z", "label"] if conditional else ["z"], ["image"], os.path.join(d, "generator.onnx"))
    export_onnx(D, d_args, ["image", "label"] if conditional else ["image"], ["logit"], os.path.join(d, "discriminator.onnx"))

    Gf, Df = fold_batchnorm(G).train(), fold_batchnorm(D).train()  # no BN left, so train() changes nothing
    with torch.no_grad():  # folding is exact up to rounding
        assert torch.allclose(Gf(*g_args), G(*g_args), atol=1e-5)
        assert torch.allclose(Df(*d_args), D(*d_args), atol=1e-5)
    optG = torch.optim.Adam(Gf.parameters(), lr=LR, betas=BETAS)
    optD = torch.optim.Adam(Df.parameters(), lr=LR, betas=BETAS)
    bce = nn.BCEWithLogitsLoss()
    ones, zeros = torch.ones(BATCH, 1), torch.zeros(BATCH, 1)
    losses = []
    for s in range(STEPS):
        rows = [(s * BATCH + i) % POOL for i in range(BATCH)]
        real = real_pool[rows]
        d_extra_real = (real_labels[rows],) if conditional else ()
        g_extra = (fake_labels[s],) if conditional else ()
        fake = Gf(noise[s], *g_extra)
        optD.zero_grad()
        loss_real = bce(Df(real, *d_extra_real), ones)
        loss_real.backward()
        loss_fake = bce(Df(fake.detach(), *g_extra), zeros)
        loss_fake.backward()
        if s == 0:
            export_onnx(with_values(Df, [p.grad for p in Df.parameters()]), d_args, ["image", "label"] if conditional else ["image"],
                   ["logit"], os.path.join(d, "step1_discriminator_grads.onnx"))
        optD.step()
        optG.zero_grad()
        loss_g = bce(Df(fake, *g_extra), ones)
        loss_g.backward()
        if s == 0:
            export_onnx(with_values(Gf, [p.grad for p in Gf.parameters()]), g_args, ["z", "label"] if conditional else ["z"],
                   ["image"], os.path.join(d, "step1_generator_grads.onnx"))
        optG.step()
        losses.append([loss_real.item(), loss_fake.item(), loss_g.item()])
    export_onnx(Gf, g_args, ["z", "label"] if conditional else ["z"], ["image"], os.path.join(d, "final_generator.onnx"))
    export_onnx(Df, d_args, ["image", "label"] if conditional else ["image"], ["logit"], os.path.join(d, "final_discriminator.onnx"))

    np.save(os.path.join(d, "real.npy"), real_pool.numpy().astype(np.float32))
    np.save(os.path.join(d, "noise.npy"), noise.numpy().astype(np.float32))
    np.save(os.path.join(d, "losses.npy"), np.asarray(losses, dtype=np.float32))
    if conditional:
        np.save(os.path.join(d, "real_labels.npy"), real_labels.numpy().astype(np.int64))
        np.save(os.path.join(d, "fake_labels.npy"), fake_labels.numpy().astype(np.int64))
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write(readme.strip() + "\n\nWritten by `tests/golden/make_training_goldens.py`: %d steps, batch %d, "
                "Adam lr %g betas %s.\n" % (STEPS, BATCH, LR, BETAS))
    print("wrote", d, "losses first/last", losses[0], losses[-1])


def main():
    torch.set_num_threads(1)
    make_case("dcgan_step", randomize(DcganG(), 1), randomize(DcganD(), 2), 32, False,
              "A small DCGAN (4 transposed convs with BatchNorm, 4 convs with LeakyReLU) trained with the "
              "DCGAN recipe; BatchNorm in eval mode, folded.")
    make_case("cgan_step", randomize(CganG(), 3), randomize(CganD(), 4), 16, True,
              "A small conditional GAN (embedding + concat, Linear with BatchNorm1d, transposed convs; "
              "D with a label plane, convs and a Linear head) trained with the DCGAN recipe.")


if __name__ == "__main__":
    main()
