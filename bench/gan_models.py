"""The GAN architectures the training-step benchmarks time (bench/training_step_torch.py,
bench/make_dcgan64_onnx.py), in PyTorch.

  dcgan64       pytorch/examples' DCGAN at 64x64x3: nz=100, ngf=ndf=64 (D gives logits)
  dcgan_digits  the shipped models/dcgan_digits architecture (32x32x1, nz=64)
  cgan_digits   the shipped models/cgan_digits architecture (16x16x1, nz=64, 10 labels)

Weights are random (DCGAN init from a seeded torch.Generator); timing does not depend on their values.
edgegan trains BatchNorm folded into the producer (eval statistics), so fold_batchnorm()
gives the same function as the model edgegan loads: conv/linear layers with a bias.
"""
import copy

import torch
import torch.nn as nn


class Dcgan64G(nn.Module):
    NZ, NGF, NC = 100, 64, 3
    IMAGE = (3, 64, 64)

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


class DcganDigitsG(nn.Module):
    NZ = 64
    IMAGE = (1, 32, 32)

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(64, 256, 4, 1, 0, bias=False), nn.BatchNorm2d(256), nn.ReLU(True),
            nn.ConvTranspose2d(256, 128, 4, 2, 1, bias=False), nn.BatchNorm2d(128), nn.ReLU(True),
            nn.ConvTranspose2d(128, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(True),
            nn.ConvTranspose2d(64, 1, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class DcganDigitsD(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 64, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(64, 128, 4, 2, 1, bias=False), nn.BatchNorm2d(128), nn.LeakyReLU(0.2, True),
            nn.Conv2d(128, 256, 4, 2, 1, bias=False), nn.BatchNorm2d(256), nn.LeakyReLU(0.2, True),
            nn.Conv2d(256, 1, 4, 1, 0))

    def forward(self, image):
        return self.net(image).view(-1, 1)


class CganDigitsG(nn.Module):
    NZ, NCLASS, EMB = 64, 10, 16
    IMAGE = (1, 16, 16)

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(self.NCLASS, self.EMB)
        self.fc = nn.Sequential(nn.Linear(self.NZ + self.EMB, 128 * 4 * 4, bias=False), nn.BatchNorm1d(128 * 4 * 4), nn.ReLU(True))
        self.net = nn.Sequential(
            nn.ConvTranspose2d(128, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(True),
            nn.ConvTranspose2d(64, 1, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z, label):
        x = self.fc(torch.cat([z, self.embed(label)], 1)).view(-1, 128, 4, 4)
        return self.net(x)


class CganDigitsD(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 16 * 16)
        self.net = nn.Sequential(
            nn.Conv2d(2, 64, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(64, 128, 4, 2, 1, bias=False), nn.BatchNorm2d(128), nn.LeakyReLU(0.2, True))
        self.fc = nn.Linear(128 * 4 * 4, 1)

    def forward(self, image, label):
        x = torch.cat([image, self.embed(label).view(-1, 1, 16, 16)], 1)
        return self.fc(self.net(x).view(image.size(0), -1))


# name -> (G class, D class, conditional, G noise shape per sample)
MODELS = {
    "dcgan64": (Dcgan64G, Dcgan64D, False, (100, 1, 1)),
    "dcgan_digits": (DcganDigitsG, DcganDigitsD, False, (64, 1, 1)),
    "cgan_digits": (CganDigitsG, CganDigitsD, True, (64,)),
}


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


def fold_batchnorm(model):
    """A copy of `model` with every (Conv|ConvTranspose|Linear, BatchNorm) pair inside a
    Sequential merged into one layer with a bias (eval statistics): what edgegan trains."""
    model = copy.deepcopy(model)

    def fold_pair(layer, bn):
        scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
        shift = bn.bias - bn.running_mean * scale
        if isinstance(layer, nn.ConvTranspose2d):
            new = nn.ConvTranspose2d(layer.in_channels, layer.out_channels, layer.kernel_size, layer.stride, layer.padding,
                                     layer.output_padding, layer.groups, True, layer.dilation)
            w = layer.weight * scale.view(1, -1, 1, 1)
        elif isinstance(layer, nn.Conv2d):
            new = nn.Conv2d(layer.in_channels, layer.out_channels, layer.kernel_size, layer.stride, layer.padding,
                            layer.dilation, layer.groups, True)
            w = layer.weight * scale.view(-1, 1, 1, 1)
        else:
            new = nn.Linear(layer.in_features, layer.out_features, True)
            w = layer.weight * scale.view(-1, 1)
        b = shift if layer.bias is None else layer.bias * scale + shift
        with torch.no_grad():
            new.weight.copy_(w)
            new.bias.copy_(b)
        return new

    def walk(module):
        for name, child in list(module.named_children()):
            if isinstance(child, nn.Sequential):
                layers, kids = [], list(child.children())
                i = 0
                while i < len(kids):
                    if (i + 1 < len(kids) and isinstance(kids[i], (nn.Conv2d, nn.ConvTranspose2d, nn.Linear))
                            and isinstance(kids[i + 1], (nn.BatchNorm1d, nn.BatchNorm2d))):
                        layers.append(fold_pair(kids[i], kids[i + 1]))
                        i += 2
                    else:
                        layers.append(kids[i])
                        i += 1
                setattr(module, name, nn.Sequential(*layers))
            else:
                walk(child)

    walk(model)
    return model
