"""The GAN architectures the training-step benchmarks time (bench/training_step_torch.py,
bench/make_dcgan64_onnx.py), in PyTorch.

  dcgan64       pytorch/examples' DCGAN at 64x64x3: nz=100, ngf=ndf=64 (D gives logits)
  dcgan_digits  the shipped models/dcgan_digits architecture (32x32x1, nz=64)
  cgan_digits   the shipped models/cgan_digits architecture (16x16x1, nz=64, 10 labels)

Weights are random (DCGAN init from a seeded torch.Generator); timing does not depend on their values.
The digits architectures are the shipped models' own classes (models/*/train.py).
edgegan trains BatchNorm folded into the producer (eval statistics), so fold_batchnorm()
(tests/golden/golden_util.py) gives the same function as the model edgegan loads.
"""
import importlib.util
import os
import sys

import torch
import torch.nn as nn

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "golden"))
from golden_util import fold_batchnorm  # noqa: E402,F401  (re-exported for the bench scripts)


class Dcgan64G(nn.Module):
    NZ, NGF, NC = 100, 64, 3

    def __init__(self):
        super().__init__()
        ngf = self.NGF
        self.net = nn.Sequential(
            nn.ConvTranspose2d(self.NZ, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),  # 4x4
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),  # 8x8
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),  # 16x16
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),          # 32x32
            nn.ConvTranspose2d(ngf, self.NC, 4, 2, 1, bias=False), nn.Tanh())                                  # 64x64

    def forward(self, z):
        return self.net(z)


class Dcgan64D(nn.Module):
    NDF = 64

    def __init__(self):
        super().__init__()
        ndf = self.NDF
        self.net = nn.Sequential(
            nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),                                  # 32x32
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, True),      # 16x16
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2, True),  # 8x8
            nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 8), nn.LeakyReLU(0.2, True),  # 4x4
            nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False))                                                        # 1x1 logit

    def forward(self, image):
        return self.net(image).view(-1, 1)


def _shipped(model_dir):
    """The Generator/Discriminator classes of a shipped model's training script."""
    spec = importlib.util.spec_from_file_location(model_dir + "_train", os.path.join(REPO, "models", model_dir, "train.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Generator, module.Discriminator


# name -> (G class, D class, conditional, G noise shape per sample, image shape)
MODELS = {"dcgan64": (Dcgan64G, Dcgan64D, False, (100, 1, 1), (3, 64, 64))}
# The shipped architectures need their training scripts' imports (scikit-learn for the
# digits); where those are missing (a bare GPU machine) only DCGAN-64 is offered.
try:
    DcganDigitsG, DcganDigitsD = _shipped("dcgan_digits")
    CganDigitsG, CganDigitsD = _shipped("cgan_digits")
    MODELS["dcgan_digits"] = (DcganDigitsG, DcganDigitsD, False, (64, 1, 1), (1, 32, 32))
    MODELS["cgan_digits"] = (CganDigitsG, CganDigitsD, True, (64,), (1, 16, 16))
except ImportError as e:
    SHIPPED_UNAVAILABLE = str(e)


def dcgan_init(model, g):
    """DCGAN paper init (conv weights N(0, 0.02), BN gamma N(1, 0.02), beta 0) drawn from the
    torch.Generator `g`, plus BN running statistics that are not the identity, so folding
    changes the weights."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * 0.02)
                if m.bias is not None:
                    m.bias.zero_()
            elif isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                n = m.num_features
                m.weight.copy_(1.0 + 0.02 * torch.randn(n, generator=g))
                m.bias.zero_()
                m.running_mean.copy_(0.1 * torch.randn(n, generator=g))
                m.running_var.copy_(0.5 + torch.rand(n, generator=g))
            elif isinstance(m, nn.Embedding):
                m.weight.copy_(torch.randn(m.weight.shape, generator=g))
    return model.eval()
