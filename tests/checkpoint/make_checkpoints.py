#!/usr/bin/env python3
"""Checkpoints laid out as the public releases lay them out, for the checkpoint
reader's tests: our own PyTorch definitions of Real-ESRGAN's compact network
(SRVGGNetCompact), ESRGAN's RRDB network (both key layouts), SPAN, the CycleGAN/pix2pix
ResNet and U-Net generators, Real-CUGAN, RealPLKSR and PLKSR, at small widths with
random weights, saved by torch.save (zip and the legacy format), as .safetensors
(written here by hand from the state dict), in fp32, fp16 and bf16, in each wrapper
the releases use; with PyTorch's output on a small input. Also hostile files: pickles
that would run a command, storages and offsets past the end, overlapping safetensors.

    OMP_WAIT_POLICY=passive /usr/bin/python3 tests/checkpoint/make_checkpoints.py

Writes tests/checkpoint/cases/<case>/ (model file, input.npy, output.npy,
architecture.txt: the line `edgegan-convert` prints for it), tests/checkpoint/blend/,
tests/checkpoint/alpha/ (Real-ESRGAN's alpha handling), tests/checkpoint/pictures/ (pictures
through `upscale`), tests/checkpoint/deflated/ (a checkpoint re-packed with deflated entries)
and tests/checkpoint/hostile/.
"""
import io
import json
import os
import pickle
import shutil
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
HOSTILE = os.path.join(HERE, "hostile")


# ------------------------------------------------------------------ SRVGGNetCompact
class Compact(nn.Module):
    """Real-ESRGAN's compact network: conv + PReLU, num_conv x (conv + PReLU), a conv to
    out*upscale^2 channels, pixel shuffle, plus the nearest-upsampled input."""

    def __init__(self, in_ch=3, out_ch=3, feat=8, num_conv=3, upscale=4):
        super().__init__()
        self.upscale = upscale
        body = [nn.Conv2d(in_ch, feat, 3, 1, 1), nn.PReLU(num_parameters=feat)]
        for _ in range(num_conv):
            body += [nn.Conv2d(feat, feat, 3, 1, 1), nn.PReLU(num_parameters=feat)]
        body += [nn.Conv2d(feat, out_ch * upscale * upscale, 3, 1, 1)]
        self.body = nn.ModuleList(body)
        self.upsampler = nn.PixelShuffle(upscale)

    def forward(self, x):
        out = x
        for layer in self.body:
            out = layer(out)
        out = self.upsampler(out)
        return out + F.interpolate(x, scale_factor=self.upscale, mode="nearest")


# ------------------------------------------------------------------ RRDBNet, Real-ESRGAN's layout
class RDB(nn.Module):
    def __init__(self, nf, gc):
        super().__init__()
        self.conv1 = nn.Conv2d(nf, gc, 3, 1, 1)
        self.conv2 = nn.Conv2d(nf + gc, gc, 3, 1, 1)
        self.conv3 = nn.Conv2d(nf + 2 * gc, gc, 3, 1, 1)
        self.conv4 = nn.Conv2d(nf + 3 * gc, gc, 3, 1, 1)
        self.conv5 = nn.Conv2d(nf + 4 * gc, nf, 3, 1, 1)

    def forward(self, x):
        a = lambda t: F.leaky_relu(t, 0.2)
        x1 = a(self.conv1(x))
        x2 = a(self.conv2(torch.cat((x, x1), 1)))
        x3 = a(self.conv3(torch.cat((x, x1, x2), 1)))
        x4 = a(self.conv4(torch.cat((x, x1, x2, x3), 1)))
        x5 = self.conv5(torch.cat((x, x1, x2, x3, x4), 1))
        return x5 * 0.2 + x


class RRDB(nn.Module):
    def __init__(self, nf, gc):
        super().__init__()
        self.rdb1, self.rdb2, self.rdb3 = RDB(nf, gc), RDB(nf, gc), RDB(nf, gc)

    def forward(self, x):
        return self.rdb3(self.rdb2(self.rdb1(x))) * 0.2 + x


class RRDBNet(nn.Module):
    """scale 1 and 2: pixel-unshuffle by 4 and 2 in front; then two (three for x8)
    nearest x2 upsamplings."""

    def __init__(self, in_ch=3, out_ch=3, scale=4, nf=8, nb=2, gc=4):
        super().__init__()
        self.scale = scale
        first_in = in_ch * {1: 16, 2: 4}.get(scale, 1)
        self.conv_first = nn.Conv2d(first_in, nf, 3, 1, 1)
        self.body = nn.Sequential(*[RRDB(nf, gc) for _ in range(nb)])
        self.conv_body = nn.Conv2d(nf, nf, 3, 1, 1)
        self.conv_up1 = nn.Conv2d(nf, nf, 3, 1, 1)
        self.conv_up2 = nn.Conv2d(nf, nf, 3, 1, 1)
        if scale == 8:
            self.conv_up3 = nn.Conv2d(nf, nf, 3, 1, 1)
        self.conv_hr = nn.Conv2d(nf, nf, 3, 1, 1)
        self.conv_last = nn.Conv2d(nf, out_ch, 3, 1, 1)

    def forward(self, x):
        a = lambda t: F.leaky_relu(t, 0.2)
        up = lambda t: F.interpolate(t, scale_factor=2, mode="nearest")
        if self.scale in (1, 2):
            x = F.pixel_unshuffle(x, 4 if self.scale == 1 else 2)
        feat = self.conv_first(x)
        feat = feat + self.conv_body(self.body(feat))
        feat = a(self.conv_up1(up(feat)))
        feat = a(self.conv_up2(up(feat)))
        if self.scale == 8:
            feat = a(self.conv_up3(up(feat)))
        return self.conv_last(a(self.conv_hr(feat)))


# ------------------------------------------------------------------ ESRGAN, the original repository's layout
class ShortcutBlock(nn.Module):
    def __init__(self, sub):
        super().__init__()
        self.sub = sub

    def forward(self, x):
        return x + self.sub(x)


class OldRDB(nn.Module):
    def __init__(self, nf, gc):
        super().__init__()
        act = lambda: nn.LeakyReLU(0.2, True)
        self.conv1 = nn.Sequential(nn.Conv2d(nf, gc, 3, 1, 1), act())
        self.conv2 = nn.Sequential(nn.Conv2d(nf + gc, gc, 3, 1, 1), act())
        self.conv3 = nn.Sequential(nn.Conv2d(nf + 2 * gc, gc, 3, 1, 1), act())
        self.conv4 = nn.Sequential(nn.Conv2d(nf + 3 * gc, gc, 3, 1, 1), act())
        self.conv5 = nn.Sequential(nn.Conv2d(nf + 4 * gc, nf, 3, 1, 1))

    def forward(self, x):
        x1 = self.conv1(x)
        x2 = self.conv2(torch.cat((x, x1), 1))
        x3 = self.conv3(torch.cat((x, x1, x2), 1))
        x4 = self.conv4(torch.cat((x, x1, x2, x3), 1))
        return self.conv5(torch.cat((x, x1, x2, x3, x4), 1)) * 0.2 + x


class OldRRDB(nn.Module):
    def __init__(self, nf, gc):
        super().__init__()
        self.RDB1, self.RDB2, self.RDB3 = OldRDB(nf, gc), OldRDB(nf, gc), OldRDB(nf, gc)

    def forward(self, x):
        return self.RDB3(self.RDB2(self.RDB1(x))) * 0.2 + x


def old_esrgan(nf=8, nb=2, gc=4, ups=2):
    """model.0 conv, model.1 = shortcut(RRDBs + conv), then (upsample, conv, lrelu) per x2, HR conv, lrelu, last conv."""
    layers = [nn.Conv2d(3, nf, 3, 1, 1), ShortcutBlock(nn.Sequential(*[OldRRDB(nf, gc) for _ in range(nb)], nn.Conv2d(nf, nf, 3, 1, 1)))]
    for _ in range(ups):
        layers += [nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(nf, nf, 3, 1, 1), nn.LeakyReLU(0.2, True)]
    layers += [nn.Conv2d(nf, nf, 3, 1, 1), nn.LeakyReLU(0.2, True), nn.Conv2d(nf, 3, 3, 1, 1)]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = nn.Sequential(*layers)

        def forward(self, x):
            return self.model(x)

    return Net()


# ------------------------------------------------------------------ CycleGAN/pix2pix ResNet generator
class ResnetBlock(nn.Module):
    def __init__(self, dim, norm, dropout):
        super().__init__()
        bias = norm is nn.InstanceNorm2d
        layers = [nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3, bias=bias), norm(dim), nn.ReLU(True)]
        if dropout:
            layers += [nn.Dropout(0.5)]
        layers += [nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3, bias=bias), norm(dim)]
        self.conv_block = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv_block(x)


class ResnetGenerator(nn.Module):
    """The reference implementation's generator: c7s1-ngf, two stride-2 downs, n blocks, two
    stride-2 transposed ups (output padding 1), c7s1-out, tanh; the norm after each conv."""

    def __init__(self, ngf=4, blocks=2, norm=nn.InstanceNorm2d, dropout=False):
        super().__init__()
        bias = norm is nn.InstanceNorm2d
        m = [nn.ReflectionPad2d(3), nn.Conv2d(3, ngf, 7, bias=bias), norm(ngf), nn.ReLU(True)]
        for i in range(2):
            c = ngf * 2 ** i
            m += [nn.Conv2d(c, 2 * c, 3, stride=2, padding=1, bias=bias), norm(2 * c), nn.ReLU(True)]
        m += [ResnetBlock(ngf * 4, norm, dropout) for _ in range(blocks)]
        for i in range(2):
            c = ngf * 2 ** (2 - i)
            m += [nn.ConvTranspose2d(c, c // 2, 3, stride=2, padding=1, output_padding=1, bias=bias), norm(c // 2), nn.ReLU(True)]
        m += [nn.ReflectionPad2d(3), nn.Conv2d(ngf, 3, 7), nn.Tanh()]
        self.model = nn.Sequential(*m)

    def forward(self, x):
        return self.model(x)


# ------------------------------------------------------------------ writing
# ------------------------------------------------------------------ SPAN
class Reparam3x3(nn.Module):
    """SPAN's re-parameterisable conv: a 1x1 shortcut `sk` and 1x1 -> 3x3 -> 1x1 `conv`,
    which at inference run as one 3x3 conv merged from them (`eval_conv` is its saved
    copy, possibly stale: recomputed here on every forward, as SPAN does)."""

    def __init__(self, c_in, c_out, gain=2):
        super().__init__()
        self.sk = nn.Conv2d(c_in, c_out, 1)
        self.conv = nn.Sequential(nn.Conv2d(c_in, c_in * gain, 1), nn.Conv2d(c_in * gain, c_out * gain, 3), nn.Conv2d(c_out * gain, c_out, 1))
        self.eval_conv = nn.Conv2d(c_in, c_out, 3, padding=1)

    def forward(self, x):
        a, b, c = self.conv
        w = torch.einsum("on,nmyx,mi->oiyx", c.weight[:, :, 0, 0], b.weight, a.weight[:, :, 0, 0]) + F.pad(self.sk.weight, (1, 1, 1, 1))
        bias = c.weight[:, :, 0, 0] @ (b.weight.sum((2, 3)) @ a.bias + b.bias) + c.bias + self.sk.bias
        return F.conv2d(x, w, bias, padding=1)


class SpanBlock(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.c1_r, self.c2_r, self.c3_r = Reparam3x3(f, f), Reparam3x3(f, f), Reparam3x3(f, f)

    def forward(self, x):
        first = self.c1_r(x)
        y = self.c3_r(F.silu(self.c2_r(F.silu(first))))
        return (y + x) * (torch.sigmoid(y) - 0.5), first


class Span(nn.Module):
    """The public SPAN layout: conv_1, block_1..6, conv_2, conv_cat (1x1 over four maps),
    upsampler.0 + pixel shuffle; pixels normalised by an RGB mean and x 255."""

    def __init__(self, feat=8, upscale=4):
        super().__init__()
        self.conv_1 = Reparam3x3(3, feat)
        for k in range(1, 7):
            setattr(self, "block_%d" % k, SpanBlock(feat))
        self.conv_cat = nn.Conv2d(feat * 4, feat, 1)
        self.conv_2 = Reparam3x3(feat, feat)
        self.upsampler = nn.Sequential(nn.Conv2d(feat, 3 * upscale * upscale, 3, padding=1), nn.PixelShuffle(upscale))

    def forward(self, x):
        x = (x - torch.tensor([0.4488, 0.4371, 0.4040]).view(1, 3, 1, 1)) * 255.0
        feature = self.conv_1(x)
        h, _ = self.block_1(feature)
        first_block = h
        for k in range(2, 7):
            h, first = getattr(self, "block_%d" % k)(h)
        out = self.conv_cat(torch.cat([feature, self.conv_2(h), first_block, first], 1))
        return self.upsampler(out)


# ------------------------------------------------------------------ pix2pix/CycleGAN U-Net generator
class UnetSkipBlock(nn.Module):
    """One level of the reference implementation's U-Net, its layers in one Sequential
    named `model` as the released checkpoints lay them out: outermost [downconv,
    submodule, ReLU, upconv, Tanh]; middle [LeakyReLU, downconv, norm, submodule, ReLU,
    upconv, norm (, Dropout)]; innermost [LeakyReLU, downconv, ReLU, upconv, norm]. All
    but the outermost return cat(x, model(x)). The activations are in place as there (the
    LeakyReLU rewrites x before the concatenation; the parent's ReLU makes that moot)."""

    def __init__(self, outer, inner, in_ch=None, sub=None, outermost=False, innermost=False, norm=nn.BatchNorm2d, dropout=False):
        super().__init__()
        self.outermost = outermost
        bias = norm is nn.InstanceNorm2d
        in_ch = outer if in_ch is None else in_ch
        down = nn.Conv2d(in_ch, inner, 4, stride=2, padding=1, bias=bias)
        if outermost:
            layers = [down, sub, nn.ReLU(True), nn.ConvTranspose2d(inner * 2, outer, 4, stride=2, padding=1), nn.Tanh()]
        elif innermost:
            layers = [nn.LeakyReLU(0.2, True), down, nn.ReLU(True), nn.ConvTranspose2d(inner, outer, 4, stride=2, padding=1, bias=bias),
                      norm(outer)]
        else:
            layers = [nn.LeakyReLU(0.2, True), down, norm(inner), sub, nn.ReLU(True),
                      nn.ConvTranspose2d(inner * 2, outer, 4, stride=2, padding=1, bias=bias), norm(outer)]
            if dropout:
                layers.append(nn.Dropout(0.5))
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x) if self.outermost else torch.cat([x, self.model(x)], 1)


class UnetGenerator(nn.Module):
    """`--netG unet_128` (7 downs) and `unet_256` (8): ngf, 2ngf, 4ngf, then 8ngf down to
    the 1x1 innermost level; dropout in the 8ngf middle levels (pix2pix's default)."""

    def __init__(self, downs=7, ngf=2, in_ch=3, out_ch=3, norm=nn.BatchNorm2d, dropout=True):
        super().__init__()
        block = UnetSkipBlock(ngf * 8, ngf * 8, norm=norm, innermost=True)
        for _ in range(downs - 5):
            block = UnetSkipBlock(ngf * 8, ngf * 8, sub=block, norm=norm, dropout=dropout)
        for mult in (4, 2, 1):
            block = UnetSkipBlock(ngf * mult, ngf * mult * 2, sub=block, norm=norm)
        self.model = UnetSkipBlock(out_ch, ngf, in_ch=in_ch, sub=block, outermost=True, norm=norm)

    def forward(self, x):
        return self.model(x)


# ------------------------------------------------------------------ Real-CUGAN
class SEBlock(nn.Module):
    """Squeeze-and-excitation: x * sigmoid(conv2(relu(conv1(mean over the map))))."""

    def __init__(self, c, reduction=8):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c // reduction, 1)
        self.conv2 = nn.Conv2d(c // reduction, c, 1)

    def forward(self, x):
        s = x.mean(dim=(2, 3), keepdim=True)
        return x * torch.sigmoid(self.conv2(F.relu(self.conv1(s))))


class UNetConv(nn.Module):
    """Two unpadded 3x3 convs with LeakyReLU 0.1 (`conv.0`, `conv.2`), then an SE block."""

    def __init__(self, c_in, c_mid, c_out, se):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(c_in, c_mid, 3), nn.LeakyReLU(0.1), nn.Conv2d(c_mid, c_out, 3), nn.LeakyReLU(0.1))
        self.seblock = SEBlock(c_out) if se else None

    def forward(self, x):
        x = self.conv(x)
        return self.seblock(x) if self.seblock is not None else x


def crop(x, c):
    return x[:, :, c:-c, c:-c]


class CuganUNet1(nn.Module):
    """Real-CUGAN's first U-Net at base width b (the release: 32); its last layer a
    transposed conv (k4 s2 p3 for x2 and x4, k5 s3 p2 for x3)."""

    def __init__(self, c_in, c_out, b, scale):
        super().__init__()
        self.conv1 = UNetConv(c_in, b, 2 * b, se=False)
        self.conv1_down = nn.Conv2d(2 * b, 2 * b, 2, 2)
        self.conv2 = UNetConv(2 * b, 4 * b, 2 * b, se=True)
        self.conv2_up = nn.ConvTranspose2d(2 * b, 2 * b, 2, 2)
        self.conv3 = nn.Conv2d(2 * b, 2 * b, 3)
        self.conv_bottom = nn.ConvTranspose2d(2 * b, c_out, 5, 3, 2) if scale == 3 else nn.ConvTranspose2d(2 * b, c_out, 4, 2, 3)

    def forward(self, x):
        lr = lambda t: F.leaky_relu(t, 0.1)
        x1 = self.conv1(x)
        x2 = lr(self.conv2_up(self.conv2(lr(self.conv1_down(x1)))))
        return self.conv_bottom(lr(self.conv3(crop(x1, 4) + x2)))


class CuganUNet2(nn.Module):
    """The second U-Net: two levels down, SE blocks in conv2..conv4, a 3x3 conv last."""

    def __init__(self, c_in, c_out, b):
        super().__init__()
        self.conv1 = UNetConv(c_in, b, 2 * b, se=False)
        self.conv1_down = nn.Conv2d(2 * b, 2 * b, 2, 2)
        self.conv2 = UNetConv(2 * b, 2 * b, 4 * b, se=True)
        self.conv2_down = nn.Conv2d(4 * b, 4 * b, 2, 2)
        self.conv3 = UNetConv(4 * b, 8 * b, 4 * b, se=True)
        self.conv3_up = nn.ConvTranspose2d(4 * b, 4 * b, 2, 2)
        self.conv4 = UNetConv(4 * b, 2 * b, 2 * b, se=True)
        self.conv4_up = nn.ConvTranspose2d(2 * b, 2 * b, 2, 2)
        self.conv5 = nn.Conv2d(2 * b, 2 * b, 3)
        self.conv_bottom = nn.Conv2d(2 * b, c_out, 3)

    def forward(self, x):
        lr = lambda t: F.leaky_relu(t, 0.1)
        x1 = self.conv1(x)
        x2 = self.conv2(lr(self.conv1_down(x1)))
        x3 = lr(self.conv3_up(self.conv3(lr(self.conv2_down(x2)))))
        x4 = lr(self.conv4_up(self.conv4(crop(x2, 4) + x3)))
        return self.conv_bottom(lr(self.conv5(crop(x1, 16) + x4)))


class UpCunet(nn.Module):
    """Real-CUGAN's UpCunet2x/3x/4x (not tiled: the release's tile_mode 0): a reflection
    pad (18, 14, 19; fast: 38) whose far sides also take the picture up to a multiple of 2 (x3: 4),
    ph = ((h0 - 1) // m + 1) * m, all in one reflection of the picture; unet1, unet2 on
    its output plus unet1's output cropped by 20; x4 adds conv_final (3x3 to 4 x out), a
    crop of 1, a pixel shuffle by 2; the result cropped to scale x (h0, w0) (x4: before
    the nearest x4 of the input is added). The pro weights map the input to
    x * 0.7 + 0.15 first and the output back by (y - 0.15) / 0.7."""

    def __init__(self, scale=2, b=4, c_in=3, c_out=3, pro=False, fast=False):
        super().__init__()
        self.scale = scale
        self.is_pro, self.fast = pro, fast
        if pro:  # the "pro" releases: a `pro` entry; pixels mapped to [0.15, 0.85] in, back out
            self.register_buffer("pro", torch.ones(1))
        final = scale == 4 or fast
        mid = 2 * b if final else c_out
        self.unet1 = CuganUNet1(4 * c_in if fast else c_in, mid, b, scale)
        self.unet2 = CuganUNet2(mid, mid, b)
        if final:
            self.ps = nn.PixelShuffle(2)
            self.conv_final = nn.Conv2d(2 * b, 4 * c_out, 3)

    def forward(self, x):
        multiple = 4 if self.scale == 3 else 2  # fast too: its sides must then also be multiples of 4 after the unshuffle, else unet1 fails
        h0, w0 = x.shape[2], x.shape[3]
        ph, pw = ((h0 - 1) // multiple + 1) * multiple, ((w0 - 1) // multiple + 1) * multiple
        if self.is_pro:
            x = x * 0.7 + 0.15
        p = 38 if self.fast else {2: 18, 3: 14, 4: 19}[self.scale]
        padded = F.pad(x, (p, p + pw - w0, p, p + ph - h0), "reflect")
        if self.fast:  # UpCunet2x_fast: reflect 38, pixel-unshuffle 2, the x4 model's tail at x2
            padded = F.pixel_unshuffle(padded, 2)
        h = self.unet1(padded)
        h = self.unet2(h) + crop(h, 20)
        if self.scale == 4 or self.fast:
            h = self.ps(crop(self.conv_final(h), 1))
        h = h[:, :, : h0 * self.scale, : w0 * self.scale]
        if self.scale == 4 or self.fast:
            h = h + F.interpolate(x, scale_factor=self.scale, mode="nearest")
        return (h - 0.15) / 0.7 if self.is_pro else h


# ------------------------------------------------------------------ RealPLKSR
class PLKBlock(nn.Module):
    """RealPLKSR's block: channel_mixer (3x3 to 2 dim, Mish, 3x3 back), a large-kernel
    conv `lk.conv` on the first pdim channels only (the rest pass), element-wise attention
    `attn.f.0` (x * sigmoid(3x3 conv x); optional), a 1x1 `refine`, GroupNorm(4) `norm`,
    plus the block's input."""

    def __init__(self, dim, kernel, pdim, use_ea):
        super().__init__()
        self.channel_mixer = nn.Sequential(nn.Conv2d(dim, dim * 2, 3, 1, 1), nn.Mish(), nn.Conv2d(dim * 2, dim, 3, 1, 1))
        self.lk = nn.Module()
        self.lk.conv = nn.Conv2d(pdim, pdim, kernel, 1, kernel // 2)
        self.pdim = pdim
        if use_ea:
            self.attn = nn.Module()
            self.attn.f = nn.Sequential(nn.Conv2d(dim, dim, 3, 1, 1), nn.Sigmoid())
        self.use_ea = use_ea
        self.refine = nn.Conv2d(dim, dim, 1)
        self.norm = nn.GroupNorm(4, dim)

    def forward(self, x):
        h = self.channel_mixer(x)
        h = torch.cat([self.lk.conv(h[:, : self.pdim]), h[:, self.pdim:]], 1)
        if self.use_ea:
            h = h * self.attn.f(h)
        return self.norm(self.refine(h)) + x


class RealPLKSR(nn.Module):
    """feats: a 3x3 conv, n PLK blocks, Dropout2d (no parameters), a 3x3 conv to 3 x s^2;
    plus the input repeated s^2 times per channel; pixel shuffle by s."""

    def __init__(self, dim=8, blocks=2, scale=4, kernel=7, split=0.25, use_ea=True):
        super().__init__()
        self.scale = scale
        self.feats = nn.Sequential(nn.Conv2d(3, dim, 3, 1, 1), *[PLKBlock(dim, kernel, int(dim * split), use_ea) for _ in range(blocks)],
                                   nn.Dropout2d(0.0), nn.Conv2d(dim, 3 * scale * scale, 3, 1, 1))

    def forward(self, x):
        return F.pixel_shuffle(self.feats(x) + torch.repeat_interleave(x, self.scale ** 2, dim=1), self.scale)


class DySample(nn.Module):
    """DySample up-sampling ("Learning to Upsample by Learning to Sample") as RealPLKSR's
    releases use it: offsets from a 1x1 conv (times sigmoid of a bias-free 1x1 `scope`
    conv x 0.5, or x 0.25 without one) plus each sub-pixel's initial position, pixel-
    shuffled into a sampling grid per channel group around each source pixel's centre,
    F.grid_sample (bilinear, border, align_corners False), then a 1x1 `end_conv`."""

    def __init__(self, channels, out_ch, scale, groups, scope=True, end_kernel=1):
        super().__init__()
        self.scale, self.groups = scale, groups
        self.offset = nn.Conv2d(channels, 2 * groups * scale * scale, 1)
        self.scope = nn.Conv2d(channels, 2 * groups * scale * scale, 1, bias=False) if scope else None
        self.end_conv = nn.Conv2d(channels, out_ch, end_kernel, 1, end_kernel // 2)
        pos = (torch.arange(scale, dtype=torch.float32) - (scale - 1) / 2) / scale
        py, px = torch.meshgrid(pos, pos, indexing="ij")  # [i][j]: row i, column j of the s x s sub-pixels
        init = torch.stack([px.reshape(1, -1).repeat(groups, 1), py.reshape(1, -1).repeat(groups, 1)])  # [2, groups, s*s]
        self.register_buffer("init_pos", init.reshape(1, -1, 1, 1))

    def forward(self, x):
        if self.scope is not None:
            offset = self.offset(x) * self.scope(x).sigmoid() * 0.5 + self.init_pos
        else:
            offset = self.offset(x) * 0.25 + self.init_pos
        b, _, h, w = offset.shape
        offset = offset.view(b, 2, -1, h, w)
        ys, xs = torch.meshgrid(torch.arange(h, dtype=x.dtype) + 0.5, torch.arange(w, dtype=x.dtype) + 0.5, indexing="ij")
        centres = torch.stack([xs, ys]).view(1, 2, 1, h, w)
        size = torch.tensor([w, h], dtype=x.dtype).view(1, 2, 1, 1, 1)
        coords = 2 * (centres + offset) / size - 1
        coords = F.pixel_shuffle(coords.reshape(b, -1, h, w), self.scale)
        coords = coords.view(b, 2, -1, self.scale * h, self.scale * w).permute(0, 2, 3, 4, 1).flatten(0, 1)
        out = F.grid_sample(x.reshape(b * self.groups, -1, h, w), coords, mode="bilinear", padding_mode="border", align_corners=False)
        return self.end_conv(out.view(b, -1, self.scale * h, self.scale * w))


class RealPLKSRDySample(RealPLKSR):
    """RealPLKSR whose features plus the repeated input go to DySample (`to_img`) instead
    of the pixel shuffle; DySample's groups are 4 at even scales, the output channels at
    odd ones, as the releases build it."""

    def __init__(self, scale=2, scope=True, end_kernel=1, **kw):
        super().__init__(scale=scale, **kw)
        self.to_img = DySample(3 * scale * scale, 3, scale, 4 if scale % 2 == 0 else 3, scope, end_kernel)

    def forward(self, x):
        return self.to_img(self.feats(x) + torch.repeat_interleave(x, self.scale ** 2, dim=1))


class PLKSRBlock(nn.Module):
    """PLKSR's block (the paper's code; `channe_mixer` as it spells it): a channel mixer
    with exact GELU (CCM: 3x3 then 1x1; ICCM: 1x1 then 3x3; DCCM: 3x3 and 3x3), the
    large-kernel conv on the first pdim channels, optional attention, `refine`, plus the
    input; no norm."""

    def __init__(self, dim, kernel, pdim, use_ea, mixer):
        super().__init__()
        k1, k2 = {"CCM": (3, 1), "ICCM": (1, 3), "DCCM": (3, 3)}[mixer]
        self.channe_mixer = nn.Sequential(nn.Conv2d(dim, dim * 2, k1, 1, k1 // 2), nn.GELU(), nn.Conv2d(dim * 2, dim, k2, 1, k2 // 2))
        self.lk = nn.Module()
        self.lk.conv = nn.Conv2d(pdim, pdim, kernel, 1, kernel // 2)
        self.pdim = pdim
        if use_ea:
            self.attn = nn.Module()
            self.attn.f = nn.Sequential(nn.Conv2d(dim, dim, 3, 1, 1), nn.Sigmoid())
        self.use_ea = use_ea
        self.refine = nn.Conv2d(dim, dim, 1)

    def forward(self, x):
        h = self.channe_mixer(x)
        h = torch.cat([self.lk.conv(h[:, : self.pdim]), h[:, self.pdim:]], 1)
        if self.use_ea:
            h = h * self.attn.f(h)
        return self.refine(h) + x


class PLKSR(nn.Module):
    """feats: a 3x3 conv, n blocks, a 3x3 conv to 3 x s^2 (no dropout); plus the repeated input; pixel shuffle."""

    def __init__(self, dim=8, blocks=2, scale=4, kernel=7, split=0.25, use_ea=True, mixer="CCM"):
        super().__init__()
        self.scale = scale
        self.feats = nn.Sequential(nn.Conv2d(3, dim, 3, 1, 1), *[PLKSRBlock(dim, kernel, int(dim * split), use_ea, mixer) for _ in range(blocks)],
                                   nn.Conv2d(dim, 3 * scale * scale, 3, 1, 1))

    def forward(self, x):
        return F.pixel_shuffle(self.feats(x) + torch.repeat_interleave(x, self.scale ** 2, dim=1), self.scale)


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1 and "weight" in name and isinstance(model, (ResnetGenerator, UnetGenerator, RealPLKSR)):  # BatchNorm scales
                p.copy_(torch.rand(p.shape, generator=g) * 0.5 + 0.75)
            elif p.dim() == 1 and "weight" in name:  # PReLU slopes
                p.copy_(torch.rand(p.shape, generator=g) * 0.4 + 0.05)
            elif p.dim() == 4:
                fan_in = p.shape[1] * p.shape[2] * p.shape[3]
                p.copy_(torch.randn(p.shape, generator=g) / fan_in ** 0.5)
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.05)
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) * 0.5 + 0.5)
    return model.eval()


def as_dtype(model, dtype):
    """The model with its weights rounded to `dtype` and back: what the file holds."""
    with torch.no_grad():
        for p in list(model.parameters()) + [b for b in model.buffers() if b.is_floating_point()]:  # BatchNorm's statistics too
            p.copy_(p.to(dtype).float())
    return model


def write_safetensors(path, sd):
    names = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}
    header, blobs, at = {}, [], 0
    for k, t in sd.items():
        raw = t.contiguous().view(torch.uint8).numpy().tobytes() if t.dtype == torch.bfloat16 else t.contiguous().numpy().tobytes()
        header[k] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def esrgan_repo_names(sd):
    """The ESRGAN repository's current names for Real-ESRGAN's RRDBNet keys."""
    out = OrderedDict()
    for k, v in sd.items():
        for a, b in (("body.", "RRDB_trunk."), ("conv_body", "trunk_conv"), ("conv_up", "upconv"), ("conv_hr", "HRconv")):
            if k.startswith(a):
                k = b + k[len(a):]
        out[k.replace(".rdb", ".RDB")] = v
    return out


def stale_instance_stats(model):
    """A rename for `save`: the state dict as PyTorch before 0.4 saved it for a model with
    InstanceNorm, which then kept running statistics (unused by the layer; the reference
    implementation deletes them on load): running_mean/running_var at each norm, in module order."""
    g = torch.Generator().manual_seed(5)

    def rename(sd):
        out = OrderedDict()
        for name, m in model.named_modules():
            prefix = name + "." if name else ""
            for k in list(m._parameters) + list(m._buffers):
                if prefix + k in sd:
                    out[prefix + k] = sd[prefix + k]
            if isinstance(m, nn.InstanceNorm2d):
                out[prefix + "running_mean"] = torch.randn(m.num_features, generator=g)
                out[prefix + "running_var"] = torch.rand(m.num_features, generator=g) + 0.5
        assert all(k in out for k in sd)
        return out

    return rename


def save(model, case, arch_line, fmt="zip", wrapper=None, dtype=torch.float32, size=8, seed=0, strided=False, pixel_range=(0, 1),
         rename=None, odd=None):
    """... and with odd = (h, w), PyTorch's output at that size too (input_odd.npy, output_odd.npy)."""
    d = os.path.join(CASES, case)
    os.makedirs(d, exist_ok=True)
    as_dtype(model, dtype)
    sd = OrderedDict((k, v.detach().clone().to(dtype) if v.is_floating_point() else v) for k, v in model.state_dict().items())
    if strided:  # every 4-D weight stored transposed in its storage (a non-contiguous view)
        for k, v in sd.items():
            if v.dim() == 4:
                sd[k] = v.permute(1, 0, 2, 3).contiguous().permute(1, 0, 2, 3)
                assert not sd[k].is_contiguous()
    if rename:
        sd = rename(sd)
    obj = {wrapper: sd} if wrapper else sd
    if fmt == "safetensors":
        write_safetensors(os.path.join(d, "model.safetensors"), sd)
    else:
        torch.save(obj, os.path.join(d, "model.pth"), _use_new_zipfile_serialization=(fmt == "zip"))
    g = torch.Generator().manual_seed(100 + seed)
    x = torch.rand((1, 3, size, size), generator=g) * (pixel_range[1] - pixel_range[0]) + pixel_range[0]
    with torch.no_grad():
        y = model(x)
    np.save(os.path.join(d, "input.npy"), x.numpy())
    np.save(os.path.join(d, "output.npy"), y.numpy())
    if odd:
        x = torch.rand((1, 3) + odd, generator=g) * (pixel_range[1] - pixel_range[0]) + pixel_range[0]
        with torch.no_grad():
            y = model(x)
        np.save(os.path.join(d, "input_odd.npy"), x.numpy())
        np.save(os.path.join(d, "output_odd.npy"), y.numpy())
    with open(os.path.join(d, "architecture.txt"), "w") as f:
        f.write(arch_line + "\n")
    with open(os.path.join(d, "pixel_range.txt"), "w") as f:
        f.write("%g,%g\n" % pixel_range)


def make_cases():
    shutil.rmtree(CASES, ignore_errors=True)
    compact = "SRVGGNetCompact: in 3, out 3, features 8, convs 3, scale {}, activation prelu"
    save(randomize(Compact(upscale=4), 1), "compact_x4_params_zip", compact.format(4), wrapper="params")
    save(randomize(Compact(upscale=2), 2), "compact_x2_legacy", compact.format(2), fmt="legacy")
    save(randomize(Compact(upscale=4), 3), "compact_x4_fp16_zip", compact.format(4), dtype=torch.float16, wrapper="params")
    save(randomize(Compact(upscale=4), 4), "compact_x4_bf16_safetensors", compact.format(4), fmt="safetensors", dtype=torch.bfloat16)
    save(randomize(Compact(upscale=3, num_conv=2), 5), "compact_x3_strided_state_dict",
         "SRVGGNetCompact: in 3, out 3, features 8, convs 2, scale 3, activation prelu", wrapper="state_dict", strided=True)
    rrdb = "RRDBNet: in 3, out 3, features 8, blocks 2, growth 4, scale {}"
    save(randomize(RRDBNet(scale=4), 11), "rrdb_x4_params_ema_zip", rrdb.format(4), wrapper="params_ema")
    rrdb1 = "RRDBNet: in 3, out 3, features 8, blocks 1, growth 4, scale {}"
    save(randomize(RRDBNet(scale=2, nb=1), 12), "rrdb_x2_fp16_safetensors", rrdb1.format(2), fmt="safetensors", dtype=torch.float16)
    save(randomize(RRDBNet(scale=1, nb=1), 13), "rrdb_x1_legacy", rrdb1.format(1), fmt="legacy", size=16)
    save(randomize(RRDBNet(scale=8, nb=1), 14), "rrdb_x8_state_dict_zip", "RRDBNet: in 3, out 3, features 8, blocks 1, growth 4, scale 8",
         wrapper="state_dict", size=4)
    save(randomize(RRDBNet(scale=4, nb=1), 15), "rrdb_x4_bf16_params_zip", rrdb1.format(4), wrapper="params", dtype=torch.bfloat16)
    save(randomize(RRDBNet(scale=4, nb=1), 16), "esrgan_repo_x4_legacy", rrdb1.format(4), fmt="legacy", rename=esrgan_repo_names)
    save(randomize(old_esrgan(ups=2), 21), "esrgan_old_x4_legacy", rrdb.format(4), fmt="legacy")
    save(randomize(old_esrgan(ups=1, nb=1), 22), "esrgan_old_x2_zip", rrdb1.format(2))
    span = "SPAN: in 3, out 3, features 4, blocks 6, scale {}"
    save(randomize(Span(feat=4, upscale=4), 61), "span_x4_params_zip", span.format(4), wrapper="params")
    save(randomize(Span(feat=4, upscale=2), 62), "span_x2_fp16_safetensors", span.format(2), fmt="safetensors", dtype=torch.float16)
    save(randomize(ResnetGenerator(), 41), "cyclegan_resnet_instance_zip", "ResnetGenerator: in 3, out 3, ngf 4, blocks 2, norm instance",
         size=16, pixel_range=(-1, 1))
    save(randomize(ResnetGenerator(blocks=3, norm=nn.BatchNorm2d, dropout=True), 42), "pix2pix_resnet_batch_dropout_legacy",
         "ResnetGenerator: in 3, out 3, ngf 4, blocks 3, norm batch", fmt="legacy", size=16, pixel_range=(-1, 1))
    # A CycleGAN file from PyTorch before 0.4: running statistics saved for InstanceNorm.
    resnet_old = randomize(ResnetGenerator(blocks=1), 43)
    save(resnet_old, "cyclegan_resnet_instance_stale_stats_legacy", "ResnetGenerator: in 3, out 3, ngf 4, blocks 1, norm instance",
         fmt="legacy", size=16, pixel_range=(-1, 1), rename=stale_instance_stats(resnet_old))
    # pix2pix's default (unet_128 here: 7 levels, batch norm, dropout) and a CycleGAN-style one with instance norm.
    save(randomize(UnetGenerator(downs=7), 71), "pix2pix_unet128_batch_dropout_fp16_zip", "UnetGenerator: in 3, out 3, ngf 2, downs 7, norm batch",
         dtype=torch.float16, size=128, pixel_range=(-1, 1))
    unet_in = randomize(UnetGenerator(downs=5, norm=nn.InstanceNorm2d, dropout=False), 72)
    save(unet_in, "cyclegan_unet_instance_fp16_legacy", "UnetGenerator: in 3, out 3, ngf 2, downs 5, norm instance", fmt="legacy",
         dtype=torch.float16, size=32, pixel_range=(-1, 1), rename=stale_instance_stats(unet_in))
    # Real-CUGAN's releases are plain state dicts; base width 4 here (the release's 32).
    # Each also at odd sides, which the release pads further and crops (25x31; fast:
    # 43x47, sides over its reflection of 38 + 1 that round up to multiples of 4, as its
    # unet1 needs).
    cugan = "RealCUGAN: in 3, out 3, features 4, scale {}"
    save(randomize(UpCunet(scale=2), 81), "realcugan_x2_zip", cugan.format(2), size=20, odd=(25, 31))
    save(randomize(UpCunet(scale=3), 82), "realcugan_x3_fp16_zip", cugan.format(3), dtype=torch.float16, size=16, odd=(25, 31))
    save(randomize(UpCunet(scale=4), 83), "realcugan_x4_safetensors", cugan.format(4), fmt="safetensors", size=20, odd=(25, 31))
    save(randomize(UpCunet(scale=4, pro=True), 85), "realcugan_pro_x4_fp16_zip", "RealCUGAN: in 3, out 3, features 4, scale 4, pro yes",
         dtype=torch.float16, size=20, odd=(25, 31))
    save(randomize(UpCunet(scale=2, fast=True), 86), "realcugan_fast_x2_bf16_zip", "RealCUGAN: in 3, out 3, features 4, scale 2, fast yes",
         dtype=torch.bfloat16, size=40, odd=(43, 47))
    save(randomize(RealPLKSR(), 91), "realplksr_x4_params_ema_zip",
         "RealPLKSR: in 3, out 3, features 8, blocks 2, kernel 7, large-kernel channels 2, scale 4, attention yes", wrapper="params_ema")
    save(randomize(RealPLKSR(scale=2, kernel=5, split=0.5, use_ea=False), 92), "realplksr_x2_no_attention_safetensors",
         "RealPLKSR: in 3, out 3, features 8, blocks 2, kernel 5, large-kernel channels 4, scale 2, attention no", fmt="safetensors")
    # RealPLKSR with DySample: the offsets scaled up (randomize's 1/sqrt(fan_in) keeps them
    # far below a pixel) so the samples move visibly, some past the border.
    dy2 = randomize(RealPLKSRDySample(scale=2), 95)
    dy3 = randomize(RealPLKSRDySample(scale=3, scope=False, end_kernel=3, use_ea=False), 96)
    with torch.no_grad():
        for m in (dy2, dy3):
            m.to_img.offset.weight.mul_(8.0)
    save(dy2, "realplksr_dysample_x2_params_ema_zip",
         "RealPLKSR: in 3, out 3, features 8, blocks 2, kernel 7, large-kernel channels 2, scale 2, dysample groups 4, "
         "dysample end kernel 1, attention yes, dysample with scope", wrapper="params_ema")
    save(dy3, "realplksr_dysample_x3_no_scope_safetensors",
         "RealPLKSR: in 3, out 3, features 8, blocks 2, kernel 7, large-kernel channels 2, scale 3, dysample groups 3, "
         "dysample end kernel 3, attention no, dysample without scope", fmt="safetensors")
    save(randomize(PLKSR(), 93), "plksr_x4_ccm_params_zip",
         "PLKSR: in 3, out 3, features 8, blocks 2, kernel 7, large-kernel channels 2, scale 4, attention yes", wrapper="params")
    save(randomize(PLKSR(scale=2, kernel=9, use_ea=False, mixer="ICCM"), 94), "plksr_x2_iccm_safetensors",
         "PLKSR: in 3, out 3, features 8, blocks 2, kernel 9, large-kernel channels 2, scale 2, attention no", fmt="safetensors")


def make_blend():
    """Two compact x2 checkpoints of one architecture and PyTorch's output of their 0.3 blend; a third of another width."""
    d = os.path.join(CASES, "..", "blend")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    a, b = randomize(Compact(upscale=2), 31), randomize(Compact(upscale=2), 32)
    torch.save({"params": a.state_dict()}, os.path.join(d, "a.pth"))
    torch.save({"params": b.state_dict()}, os.path.join(d, "b.pth"))
    torch.save({"params": randomize(Compact(upscale=2, feat=4), 33).state_dict()}, os.path.join(d, "other.pth"))
    m = Compact(upscale=2)
    m.load_state_dict(OrderedDict((k, 0.7 * a.state_dict()[k] + 0.3 * b.state_dict()[k]) for k in a.state_dict()))
    x = torch.rand((1, 3, 8, 8), generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        y = m.eval()(x)
    np.save(os.path.join(d, "input.npy"), x.numpy())
    np.save(os.path.join(d, "output_0.3.npy"), y.numpy())


def make_pictures():
    """Pictures through the image tools: an RGB picture of 8-bit levels, (H, W, 3) float32
    .npy, for the Real-CUGAN x2 case's checkpoint and the release's inference result on it
    (pixels / 255 through the model, x 255, rounded, clamped to [0, 255]): `upscale`
    must give it with no flags."""
    d = os.path.join(HERE, "pictures")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    m = randomize(UpCunet(scale=2), 81)  # the realcugan_x2_zip case's weights
    g = torch.Generator().manual_seed(87)
    img = torch.randint(0, 256, (22, 26, 3), generator=g).to(torch.float32)
    with torch.no_grad():
        y = m(img.permute(2, 0, 1)[None] / 255.0)[0].permute(1, 2, 0)
    np.save(os.path.join(d, "realcugan_x2_input.npy"), img.numpy())
    np.save(os.path.join(d, "realcugan_x2_reference.npy"), (y * 255.0).round().clamp(0, 255).numpy().astype(np.float32))
    # 31 wide, 25 high: sides the release pads up to even within its reflection and crops back.
    img = torch.randint(0, 256, (25, 31, 3), generator=g).to(torch.float32)
    with torch.no_grad():
        y = m(img.permute(2, 0, 1)[None] / 255.0)[0].permute(1, 2, 0)
    np.save(os.path.join(d, "realcugan_x2_odd_input.npy"), img.numpy())
    np.save(os.path.join(d, "realcugan_x2_odd_reference.npy"), (y * 255.0).round().clamp(0, 255).numpy().astype(np.float32))


def make_alpha():
    """An RGBA picture, a compact x4 checkpoint and Real-ESRGAN's inference script's result
    with its default alpha handling, re-implemented here: the colour planes and the alpha
    plane replicated to RGB each through the model, clamped to [0, 1]; the alpha output's
    luma (OpenCV's BGR2GRAY weights, 0.299 R + 0.587 G + 0.114 B) the new alpha; x 255
    rounded. Pictures are float32 .npy of 8-bit levels, (H, W, 4)."""
    d = os.path.join(HERE, "alpha")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    m = randomize(Compact(upscale=4), 51)
    torch.save({"params_ema": m.state_dict()}, os.path.join(d, "model.pth"))
    g = torch.Generator().manual_seed(52)
    h, w = 10, 12
    rgb = torch.randint(0, 256, (h, w, 3), generator=g)
    yy, xx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    alpha = ((xx * 23 + yy * 9) % 256 + torch.randint(-20, 21, (h, w), generator=g)).clamp(0, 255)  # a ramp with noise
    img = torch.cat([rgb, alpha[..., None]], dim=2).to(torch.float32)

    def through(planes):  # (H, W, 3) levels -> (4H, 4W, 3) in [0, 1]
        with torch.no_grad():
            y = m(planes.permute(2, 0, 1)[None] / 255.0)
        return y[0].clamp(0, 1).permute(1, 2, 0)

    out_rgb = through(img[..., :3])
    out_a = through(img[..., 3:].expand(h, w, 3))
    luma = 0.299 * out_a[..., 0] + 0.587 * out_a[..., 1] + 0.114 * out_a[..., 2]
    out = torch.cat([out_rgb, luma[..., None]], dim=2)
    np.save(os.path.join(d, "input.npy"), img.numpy())
    np.save(os.path.join(d, "reference.npy"), np.round(out.numpy() * 255.0).astype(np.float32))


# ------------------------------------------------------------------ hostile files
MARKER = "/tmp/edgegan_checkpoint_pwned"


class Runs:
    """An object whose unpickling calls `fn(*args)`: what a malicious checkpoint holds."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def zip_with_pickle(path, pkl, storages=None):
    """A torch-style zip archive (stored entries) around a pickle we wrote."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/version", "3\n")
        for key, raw in (storages or {}).items():
            z.writestr("archive/data/" + key, raw)


class TensorPickler(pickle.Pickler):
    """Pickles Tensor stand-ins as torch does: _rebuild_tensor_v2 of a persistent-id storage."""

    def persistent_id(self, obj):
        return obj if isinstance(obj, tuple) and obj and obj[0] == "storage" else None


class FakeTensor:
    def __init__(self, key, numel, offset, size, stride):
        self.key, self.numel, self.offset, self.size, self.stride = key, numel, offset, size, stride

    def __reduce__(self):
        storage = ("storage", torch.FloatStorage, self.key, "cpu", self.numel)
        return torch._utils._rebuild_tensor_v2, (storage, self.offset, self.size, self.stride, False, OrderedDict())


def tensor_pickle(tensors):
    f = io.BytesIO()
    TensorPickler(f, protocol=2).dump(OrderedDict(tensors))
    return f.getvalue()


def make_deflated():
    """compact_x4_params_zip re-packed with deflated entries (tests/checkpoint/deflated/model.pth,
    which converts to the same model), and three deflated archives whose central directory
    lies about an entry's size: a bomb (far more than deflate can expand to), one size
    short and one the stream cannot fill (tests/checkpoint/hostile/deflate_*.pth)."""
    good = os.path.join(CASES, "compact_x4_params_zip", "model.pth")
    os.makedirs(os.path.join(HERE, "deflated"), exist_ok=True)
    packed = os.path.join(HERE, "deflated", "model.pth")
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            zout.writestr(item.filename, zin.read(item.filename))
    data = open(packed, "rb").read()

    def with_size(path, size_of):
        # Rewrites the stated (uncompressed) size of the largest entry in the central directory.
        out = bytearray(data)
        at, best = data.find(b"PK\x01\x02"), None
        while at >= 0:
            packed_size, size = struct.unpack_from("<II", out, at + 20)
            if best is None or packed_size > struct.unpack_from("<I", out, best + 20)[0]:
                best = at
            at = data.find(b"PK\x01\x02", at + 4)
        size = struct.unpack_from("<I", out, best + 24)[0]
        struct.pack_into("<I", out, best + 24, size_of(size))
        open(os.path.join(HOSTILE, path), "wb").write(bytes(out))
    with_size("deflate_bomb.pth", lambda size: 0xFFFFFFF0)
    with_size("deflate_short_size.pth", lambda size: size - 1)
    with_size("deflate_long_size.pth", lambda size: size + 1)


def make_hostile():
    shutil.rmtree(HOSTILE, ignore_errors=True)
    os.makedirs(HOSTILE)
    import builtins
    import subprocess
    runs = {
        "os_system": Runs(os.system, ("touch " + MARKER,)),
        "eval": Runs(builtins.eval, ("__import__('os').system('touch " + MARKER + "')",)),
        "builtins_import": Runs(builtins.__import__, ("os",)),
        "subprocess_popen": Runs(subprocess.Popen, (["touch", MARKER],)),
    }
    for name, obj in runs.items():
        # Inside a state dict, as a tensor's value, so a loader gets to it.
        sd = OrderedDict([("conv.weight", obj)])
        zip_with_pickle(os.path.join(HOSTILE, name + ".pth"), pickle.dumps(sd, protocol=2))
        with open(os.path.join(HOSTILE, name + "_legacy.pth"), "wb") as f:  # the legacy format's header, then the payload
            for header in (0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001, "little_endian": True}):
                pickle.dump(header, f, protocol=2)
            pickle.dump(sd, f, protocol=2)
    raw = np.arange(16, dtype=np.float32).tobytes()
    # A storage claiming 1e9 floats over a 64-byte entry.
    zip_with_pickle(os.path.join(HOSTILE, "storage_larger_than_archive.pth"),
                    tensor_pickle([("w", FakeTensor("0", 10 ** 9, 0, (4, 4), (4, 1)))]), {"0": raw})
    # A view whose last element lies past its storage (offset 10 + 15 > 16 elements).
    zip_with_pickle(os.path.join(HOSTILE, "offset_past_end.pth"),
                    tensor_pickle([("w", FakeTensor("0", 16, 10, (4, 4), (4, 1)))]), {"0": raw})
    # A storage key with no entry.
    zip_with_pickle(os.path.join(HOSTILE, "missing_storage.pth"),
                    tensor_pickle([("w", FakeTensor("7", 16, 0, (4, 4), (4, 1)))]), {"0": raw})
    # A zip cut short.
    good = os.path.join(CASES, "compact_x4_params_zip", "model.pth")
    data = open(good, "rb").read()
    open(os.path.join(HOSTILE, "truncated.pth"), "wb").write(data[: len(data) // 2])
    make_deflated()
    # safetensors: two tensors sharing bytes; offsets past the data; a header length past the end.
    def st(path, header, data, length=None):
        text = json.dumps(header).encode()
        with open(os.path.join(HOSTILE, path), "wb") as f:
            f.write(struct.pack("<Q", len(text) if length is None else length) + text + data)
    st("overlap.safetensors", {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                               "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}, raw)
    st("offsets_past_end.safetensors", {"a": {"dtype": "F32", "shape": [32], "data_offsets": [0, 128]}}, raw)
    st("header_past_end.safetensors", {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, raw, length=10 ** 6)
    # A whole pickled nn.Module (needs its class's code): refused naming the class.
    torch.save(Compact(feat=2, num_conv=1), os.path.join(HOSTILE, "whole_module.pth"))


if __name__ == "__main__":
    make_cases()
    make_blend()
    make_alpha()
    make_pictures()
    make_hostile()
    assert not os.path.exists(MARKER)
