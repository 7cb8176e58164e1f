#!/usr/bin/env python3
"""The generator zoo: golden cases (tests/golden/cases/zoo_*) for the families of
generators people deploy, each defined here from its published architecture at
small widths with random weights, exported by torch.onnx and run by PyTorch.

    OMP_WAIT_POLICY=passive /usr/bin/python3 tests/golden/make_zoo.py [name ...]

Families: CycleGAN's ResNet generator, pix2pix's U-Net generator and PatchGAN
discriminator, the fast neural style TransformerNet, SRGAN, ESRGAN's RRDB network,
Real-ESRGAN's compact network (SRVGGNetCompact), an AnimeGANv2-style generator and a
HiFi-GAN-style 1-D vocoder. Norm layers get random affine parameters and running
statistics, PReLUs random slopes, so nothing is an identity by accident.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_goldens import torch_case  # noqa: E402

torch.set_num_threads(1)


def randomize(model, seed):
    """Random affine parameters for every norm and random slopes for every PReLU."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.InstanceNorm2d, nn.GroupNorm)) and m.weight is not None:
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * 0.4 + 1.0)
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.3)
            if isinstance(m, nn.PReLU):
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) * 0.4 + 0.05)
    return model


# ----------------------------------------------------------------------------- CycleGAN
class CycleGanResnetBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block = nn.Sequential(
            nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), nn.InstanceNorm2d(c), nn.ReLU(True),
            nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), nn.InstanceNorm2d(c))

    def forward(self, x):
        return x + self.block(x)


class CycleGanResnetGenerator(nn.Module):
    """Johnson-style ResNet generator as CycleGAN uses it: c7s1-ngf, d2·ngf, d4·ngf,
    n residual blocks, u2·ngf, u1·ngf, c7s1-3, tanh; InstanceNorm without affine."""

    def __init__(self, ngf=8, blocks=2):
        super().__init__()
        layers = [nn.ReflectionPad2d(3), nn.Conv2d(3, ngf, 7), nn.InstanceNorm2d(ngf), nn.ReLU(True)]
        for i in range(2):
            m = 2 ** i
            layers += [nn.Conv2d(ngf * m, ngf * m * 2, 3, stride=2, padding=1), nn.InstanceNorm2d(ngf * m * 2), nn.ReLU(True)]
        layers += [CycleGanResnetBlock(ngf * 4) for _ in range(blocks)]
        for i in range(2):
            m = 2 ** (2 - i)
            layers += [nn.ConvTranspose2d(ngf * m, ngf * m // 2, 3, stride=2, padding=1, output_padding=1),
                       nn.InstanceNorm2d(ngf * m // 2), nn.ReLU(True)]
        layers += [nn.ReflectionPad2d(3), nn.Conv2d(ngf, 3, 7), nn.Tanh()]
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)


# ----------------------------------------------------------------------------- pix2pix
class UnetBlock(nn.Module):
    """pix2pix's U-Net skip block: down (LeakyReLU 0.2, Conv k4 s2, BN), the submodule,
    up (ReLU, ConvTranspose k4 s2, BN, Dropout), output concatenated with the input."""

    def __init__(self, outer, inner, sub=None, outermost=False, innermost=False, dropout=False, in_c=None):
        super().__init__()
        self.outermost = outermost
        in_c = in_c or outer
        down = nn.Conv2d(in_c, inner, 4, stride=2, padding=1, bias=False)
        if outermost:
            model = [down, sub, nn.ReLU(True), nn.ConvTranspose2d(inner * 2, outer, 4, stride=2, padding=1), nn.Tanh()]
        elif innermost:
            model = [nn.LeakyReLU(0.2, True), down, nn.ReLU(True),
                     nn.ConvTranspose2d(inner, outer, 4, stride=2, padding=1, bias=False), nn.BatchNorm2d(outer)]
        else:
            model = [nn.LeakyReLU(0.2, True), down, nn.BatchNorm2d(inner), sub, nn.ReLU(True),
                     nn.ConvTranspose2d(inner * 2, outer, 4, stride=2, padding=1, bias=False), nn.BatchNorm2d(outer)]
            if dropout:
                model.append(nn.Dropout(0.5))
        self.model = nn.Sequential(*model)

    def forward(self, x):
        return self.model(x) if self.outermost else torch.cat([x, self.model(x)], 1)


def pix2pix_unet(ngf=8, downs=5):
    block = UnetBlock(ngf * 8, ngf * 8, innermost=True)
    for _ in range(downs - 5):
        block = UnetBlock(ngf * 8, ngf * 8, block, dropout=True)
    block = UnetBlock(ngf * 4, ngf * 8, block)
    block = UnetBlock(ngf * 2, ngf * 4, block)
    block = UnetBlock(ngf, ngf * 2, block)
    return UnetBlock(3, ngf, block, outermost=True, in_c=3)


class PatchGanDiscriminator(nn.Module):
    """pix2pix's NLayerDiscriminator (70×70 PatchGAN at n_layers 3): Conv k4 s2, then
    n_layers−1 more strided and one stride-1 block with norm and LeakyReLU 0.2, then a
    one-channel Conv k4 s1: a map of real/fake scores."""

    def __init__(self, in_c=6, ndf=8, n_layers=3, norm=nn.InstanceNorm2d):
        super().__init__()
        layers = [nn.Conv2d(in_c, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True)]
        mult = 1
        for n in range(1, n_layers):
            prev, mult = mult, min(2 ** n, 8)
            layers += [nn.Conv2d(ndf * prev, ndf * mult, 4, 2, 1), norm(ndf * mult), nn.LeakyReLU(0.2, True)]
        prev, mult = mult, min(2 ** n_layers, 8)
        layers += [nn.Conv2d(ndf * prev, ndf * mult, 4, 1, 1), norm(ndf * mult), nn.LeakyReLU(0.2, True),
                   nn.Conv2d(ndf * mult, 1, 4, 1, 1)]
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)


# ----------------------------------------------------------------------------- fast neural style
class ConvLayer(nn.Module):
    def __init__(self, cin, cout, k, stride):
        super().__init__()
        self.pad = nn.ReflectionPad2d(k // 2)
        self.conv = nn.Conv2d(cin, cout, k, stride)

    def forward(self, x):
        return self.conv(self.pad(x))


class UpsampleConvLayer(nn.Module):
    def __init__(self, cin, cout, k, upsample):
        super().__init__()
        self.upsample = upsample
        self.pad = nn.ReflectionPad2d(k // 2)
        self.conv = nn.Conv2d(cin, cout, k)

    def forward(self, x):
        x = F.interpolate(x, mode="nearest", scale_factor=self.upsample)
        return self.conv(self.pad(x))


class StyleResidual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1, self.n1 = ConvLayer(c, c, 3, 1), nn.InstanceNorm2d(c, affine=True)
        self.c2, self.n2 = ConvLayer(c, c, 3, 1), nn.InstanceNorm2d(c, affine=True)

    def forward(self, x):
        return x + self.n2(self.c2(F.relu(self.n1(self.c1(x)))))


class TransformerNet(nn.Module):
    """Johnson et al.'s fast style transfer network as the PyTorch examples write it:
    c9s1, c3s2, c3s2 with affine InstanceNorm and ReLU, residual blocks, two nearest ×2
    upsample-then-conv layers, c9s1 out; reflection padding throughout."""

    def __init__(self, w=8, blocks=2):
        super().__init__()
        self.down = nn.Sequential(
            ConvLayer(3, w, 9, 1), nn.InstanceNorm2d(w, affine=True), nn.ReLU(),
            ConvLayer(w, w * 2, 3, 2), nn.InstanceNorm2d(w * 2, affine=True), nn.ReLU(),
            ConvLayer(w * 2, w * 4, 3, 2), nn.InstanceNorm2d(w * 4, affine=True), nn.ReLU())
        self.res = nn.Sequential(*[StyleResidual(w * 4) for _ in range(blocks)])
        self.up = nn.Sequential(
            UpsampleConvLayer(w * 4, w * 2, 3, 2), nn.InstanceNorm2d(w * 2, affine=True), nn.ReLU(),
            UpsampleConvLayer(w * 2, w, 3, 2), nn.InstanceNorm2d(w, affine=True), nn.ReLU(),
            ConvLayer(w, 3, 9, 1))

    def forward(self, x):
        return self.up(self.res(self.down(x)))


# ----------------------------------------------------------------------------- SRGAN
class SrganResidual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.BatchNorm2d(c), nn.PReLU(),
                                  nn.Conv2d(c, c, 3, 1, 1), nn.BatchNorm2d(c))

    def forward(self, x):
        return x + self.body(x)


class SrganGenerator(nn.Module):
    """Ledig et al.'s SRResNet/SRGAN generator: k9 conv + PReLU, B residual blocks
    (conv, BN, PReLU, conv, BN, skip), conv + BN + long skip, ×2 sub-pixel upsampling
    blocks (conv to 4C, PixelShuffle(2), PReLU), k9 conv out, tanh."""

    def __init__(self, c=8, blocks=2, upscale=4):
        super().__init__()
        self.head = nn.Sequential(nn.Conv2d(3, c, 9, 1, 4), nn.PReLU())
        self.body = nn.Sequential(*[SrganResidual(c) for _ in range(blocks)])
        self.body_tail = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.BatchNorm2d(c))
        ups = []
        for _ in range(upscale // 2):
            ups += [nn.Conv2d(c, c * 4, 3, 1, 1), nn.PixelShuffle(2), nn.PReLU()]
        self.up = nn.Sequential(*ups)
        self.tail = nn.Conv2d(c, 3, 9, 1, 4)

    def forward(self, x):
        h = self.head(x)
        return torch.tanh(self.tail(self.up(h + self.body_tail(self.body(h)))))


# ----------------------------------------------------------------------------- ESRGAN
class ResidualDenseBlock(nn.Module):
    def __init__(self, nf, gc):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(nf + i * gc, gc if i < 4 else nf, 3, 1, 1) for i in range(5)])

    def forward(self, x):
        feats = [x]
        for i, conv in enumerate(self.convs):
            out = conv(torch.cat(feats, 1))
            if i < 4:
                feats.append(F.leaky_relu(out, 0.2))
        return out * 0.2 + x


class RRDB(nn.Module):
    def __init__(self, nf, gc):
        super().__init__()
        self.rdbs = nn.Sequential(*[ResidualDenseBlock(nf, gc) for _ in range(3)])

    def forward(self, x):
        return self.rdbs(x) * 0.2 + x


class RRDBNet(nn.Module):
    """Wang et al.'s ESRGAN generator: conv, RRDB trunk (three dense blocks each, residual
    scaling 0.2), trunk conv + skip, two nearest ×2 upsamplings each followed by conv and
    LeakyReLU 0.2, HR conv, output conv."""

    def __init__(self, nf=8, gc=4, blocks=1):
        super().__init__()
        self.first = nn.Conv2d(3, nf, 3, 1, 1)
        self.trunk = nn.Sequential(*[RRDB(nf, gc) for _ in range(blocks)])
        self.trunk_conv = nn.Conv2d(nf, nf, 3, 1, 1)
        self.up1, self.up2 = nn.Conv2d(nf, nf, 3, 1, 1), nn.Conv2d(nf, nf, 3, 1, 1)
        self.hr, self.last = nn.Conv2d(nf, nf, 3, 1, 1), nn.Conv2d(nf, 3, 3, 1, 1)

    def forward(self, x):
        fea = self.first(x)
        fea = fea + self.trunk_conv(self.trunk(fea))
        fea = F.leaky_relu(self.up1(F.interpolate(fea, scale_factor=2, mode="nearest")), 0.2)
        fea = F.leaky_relu(self.up2(F.interpolate(fea, scale_factor=2, mode="nearest")), 0.2)
        return self.last(F.leaky_relu(self.hr(fea), 0.2))


# ----------------------------------------------------------------------------- Real-ESRGAN compact
class SRVGGNetCompact(nn.Module):
    """Real-ESRGAN's compact SR network: conv + per-channel PReLU, num_conv × (conv +
    PReLU), conv to 3·r² channels, PixelShuffle(r), plus the nearest-upsampled input."""

    def __init__(self, nf=8, num_conv=4, upscale=4):
        super().__init__()
        self.upscale = upscale
        body = [nn.Conv2d(3, nf, 3, 1, 1), nn.PReLU(num_parameters=nf)]
        for _ in range(num_conv):
            body += [nn.Conv2d(nf, nf, 3, 1, 1), nn.PReLU(num_parameters=nf)]
        body += [nn.Conv2d(nf, 3 * upscale * upscale, 3, 1, 1)]
        self.body = nn.Sequential(*body)
        self.shuffle = nn.PixelShuffle(upscale)

    def forward(self, x):
        return self.shuffle(self.body(x)) + F.interpolate(x, scale_factor=self.upscale, mode="nearest")


# ----------------------------------------------------------------------------- AnimeGANv2-style
class ConvNormLReLU(nn.Sequential):
    """Reflect pad, conv, GroupNorm(1, C) (a LayerNorm over C·H·W), LeakyReLU 0.2. A
    stride-2 layer pads asymmetrically (right and bottom only), as TensorFlow's SAME does."""

    def __init__(self, cin, cout, k=3, stride=1, groups=1):
        pad = (0, 1, 0, 1) if stride == 2 else ((k - 1) // 2,) * 4
        super().__init__(nn.ReflectionPad2d(pad), nn.Conv2d(cin, cout, k, stride, groups=groups, bias=False),
                         nn.GroupNorm(1, cout, affine=True), nn.LeakyReLU(0.2, True))


class InvertedResBlock(nn.Module):
    def __init__(self, cin, cout, expansion=2):
        super().__init__()
        hidden = round(cin * expansion)
        self.use_res = cin == cout
        self.layers = nn.Sequential(
            ConvNormLReLU(cin, hidden, k=1), ConvNormLReLU(hidden, hidden, groups=hidden),
            nn.Conv2d(hidden, cout, 1, bias=False), nn.GroupNorm(1, cout, affine=True))

    def forward(self, x):
        out = self.layers(x)
        return x + out if self.use_res else out


class AnimeGanV2Generator(nn.Module):
    """The AnimeGANv2 generator's structure at small widths: conv blocks with stride-2
    downsampling, depthwise inverted residual blocks, bilinear (align_corners) ×2
    upsampling, tanh output."""

    def __init__(self, w=8):
        super().__init__()
        self.a = nn.Sequential(ConvNormLReLU(3, w, k=7), ConvNormLReLU(w, w * 2, stride=2), ConvNormLReLU(w * 2, w * 2))
        self.b = nn.Sequential(ConvNormLReLU(w * 2, w * 4, stride=2), ConvNormLReLU(w * 4, w * 4))
        self.c = nn.Sequential(ConvNormLReLU(w * 4, w * 4), InvertedResBlock(w * 4, w * 4), InvertedResBlock(w * 4, w * 4),
                               ConvNormLReLU(w * 4, w * 4))
        self.d = nn.Sequential(ConvNormLReLU(w * 4, w * 2), ConvNormLReLU(w * 2, w * 2))
        self.e = nn.Sequential(ConvNormLReLU(w * 2, w), ConvNormLReLU(w, w, k=7))
        self.out = nn.Sequential(nn.Conv2d(w, 3, 1, bias=False), nn.Tanh())

    def forward(self, x):
        out = self.c(self.b(self.a(x)))
        out = F.interpolate(out, scale_factor=2, mode="bilinear", align_corners=True)
        out = self.d(out)
        out = F.interpolate(out, scale_factor=2, mode="bilinear", align_corners=True)
        return self.out(self.e(out))


# ----------------------------------------------------------------------------- HiFi-GAN
class HifiResBlock(nn.Module):
    """HiFi-GAN's ResBlock1: per dilation d, x += conv_k(lrelu(conv_k,d(lrelu(x))))."""

    def __init__(self, c, k=3, dilations=(1, 3, 5)):
        super().__init__()
        self.convs1 = nn.ModuleList([nn.Conv1d(c, c, k, 1, dilation=d, padding=(k * d - d) // 2) for d in dilations])
        self.convs2 = nn.ModuleList([nn.Conv1d(c, c, k, 1, padding=(k - 1) // 2) for _ in dilations])

    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2):
            x = x + c2(F.leaky_relu(c1(F.leaky_relu(x, 0.1)), 0.1))
        return x


class HifiGanGenerator(nn.Module):
    """Kong et al.'s HiFi-GAN V1 generator at small width: conv_pre (k7), per upsampling
    stage LeakyReLU 0.1 + ConvTranspose1d (k = 2·u) and the mean of multi-receptive-field
    residual blocks, then LeakyReLU, conv_post (k7) and tanh."""

    def __init__(self, mels=16, c=16, rates=(4, 2), kernels=(3, 5)):
        super().__init__()
        self.pre = nn.Conv1d(mels, c, 7, 1, 3)
        self.ups = nn.ModuleList()
        self.blocks = nn.ModuleList()
        for i, u in enumerate(rates):
            cin, cout = c // 2 ** i, c // 2 ** (i + 1)
            self.ups.append(nn.ConvTranspose1d(cin, cout, 2 * u, u, padding=u // 2))
            self.blocks.append(nn.ModuleList([HifiResBlock(cout, k) for k in kernels]))
        self.post = nn.Conv1d(c // 2 ** len(rates), 1, 7, 1, 3)

    def forward(self, x):
        x = self.pre(x)
        for up, blocks in zip(self.ups, self.blocks):
            x = up(F.leaky_relu(x, 0.1))
            xs = sum(b(x) for b in blocks)
            x = xs / len(blocks)
        return torch.tanh(self.post(F.leaky_relu(x)))


# ----------------------------------------------------------------------------- cases
def image(seed, n=2, c=3, h=32, w=32):
    return torch.randn(n, c, h, w, generator=torch.Generator().manual_seed(seed))


def zoo():
    torch.manual_seed(0)  # the models' initial weights
    return {
        "zoo_cyclegan_resnet": (CycleGanResnetGenerator(), {"image": image(1)}, "CycleGAN ResNet generator (ngf 8, 2 blocks), 32x32."),
        "zoo_pix2pix_unet": (pix2pix_unet(), {"image": image(2)}, "pix2pix U-Net generator (ngf 8, 5 downs, BatchNorm in eval, Dropout), 32x32."),
        "zoo_patchgan": (PatchGanDiscriminator(), {"pair": image(3, c=6)}, "pix2pix PatchGAN discriminator (ndf 8, 3 layers, InstanceNorm), 32x32 pair."),
        "zoo_fast_style": (TransformerNet(), {"image": image(4)}, "Fast neural style TransformerNet (width 8, 2 residual blocks), 32x32."),
        "zoo_srgan": (SrganGenerator(), {"image": image(5, h=12, w=10)}, "SRGAN generator x4 (8 channels, 2 residual blocks), 12x10 in."),
        "zoo_esrgan_rrdb": (RRDBNet(), {"image": image(6, h=10, w=12)}, "ESRGAN RRDB network x4 (nf 8, gc 4, 1 RRDB), 10x12 in."),
        "zoo_realesrgan_compact": (SRVGGNetCompact(), {"image": image(7, h=11, w=9)}, "Real-ESRGAN compact x4 (nf 8, 4 convs), 11x9 in."),
        "zoo_animeganv2": (AnimeGanV2Generator(), {"image": image(8)}, "AnimeGANv2-style generator (width 8), 32x32."),
        "zoo_hifigan": (HifiGanGenerator(), {"mel": torch.randn(2, 16, 20, generator=torch.Generator().manual_seed(9))},
                        "HiFi-GAN V1-style 1-D generator (16 mels, width 16, rates 4 and 2), 20 frames."),
    }


def thin_zoo():
    """Thin super-resolution networks on one luma plane, at their published
    widths on small planes: FSRCNN x3 (d 56, s 12, m 4, PReLUs, a 9x9 stride-3 transposed
    convolution to one channel) and ESPCN x3 (5x5 1->64, 3x3 64->32, 3x3 32->9, pixel
    shuffle), as tests/published/architectures.py defines them. Seeded after zoo()'s cases
    so that theirs stay as they were."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "published"))
    from architectures import ESPCN, FSRCNN  # noqa: E402
    torch.manual_seed(1)
    return {
        "zoo_fsrcnn_x3": (FSRCNN(scale=3), {"image": image(10, c=1, h=13, w=19)}, "FSRCNN x3 (d 56, s 12, m 4), 13x19 luma in."),
        "zoo_espcn_x3": (ESPCN(scale=3), {"image": image(11, c=1, h=14, w=17)}, "ESPCN x3 (64/32 features), 14x17 luma in."),
    }


def write_backward(name, model, inputs, seed):
    """backward/: PyTorch autograd's input gradients of loss = sum(output * weights) for
    fixed random weights (the engine's Trainer::backward must give the same)."""
    model.eval()
    leaves = {k: v.clone().requires_grad_(True) for k, v in inputs.items()}
    out = model(*leaves.values())
    weights = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed))
    (out * weights).sum().backward()
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases", name, "backward")
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "output_weights.npy"), weights.numpy().astype(np.float32))
    for k, v in leaves.items():
        np.save(os.path.join(d, k + ".npy"), v.grad.numpy().astype(np.float32))


def main():
    wanted = set(sys.argv[1:])
    for seed, (name, (model, inputs, readme)) in enumerate(sorted(zoo().items()) + sorted(thin_zoo().items())):
        if wanted and name not in wanted:
            continue
        randomize(model, 200 + seed)
        torch_case(name, model, inputs, "output", 13, readme + "\nWritten by tests/golden/make_zoo.py; backward/ holds "
                   "PyTorch's input gradients of sum(output * backward/output_weights).", seed=300 + seed)
        write_backward(name, model, inputs, 400 + seed)
        print(name)


if __name__ == "__main__":
    main()
