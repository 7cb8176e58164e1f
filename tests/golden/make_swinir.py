#!/usr/bin/env python3
"""A small SwinIR-style super-resolution network (Liang et al. 2021, "SwinIR: Image
Restoration Using Swin Transformer"), written here from the paper with random weights,
exported by torch.onnx at opset 17 (dynamic batch) and run by PyTorch: the golden case
tests/golden/cases/family_swinir_2x.

    OMP_WAIT_POLICY=passive /usr/bin/python3 tests/golden/make_swinir.py

The network: a 3x3 shallow conv; tokens (flatten + transpose) through a LayerNorm patch
embedding; one residual Swin transformer group (two Swin blocks, window 4, two heads, the
second block's windows shifted by 2 with torch.roll and masked; LayerNorm, windowed
multi-head attention with a relative-position bias table gathered by a constant index,
an MLP with GELU (erf form)), a 3x3 conv on the group's output added to its input; a
final LayerNorm; a 3x3 conv after the body added to the shallow features; the
pixel-shuffle 2x upsampler (conv + LeakyReLU, conv to 4C, PixelShuffle, conv to RGB).
The input is reflect-padded to the window multiple and the output cropped back, as the
reference implementation's check_image_size does (the golden's 14x10 input exercises it).

edgegan-convert takes the export through the converter's window-attention passes
(docs/ops.md, "Window attention"): the qkv permute read by qkv[0..2] rewritten, the
windows folded into the batch unfolded after the analysis, Linear layers on tokens as
Dense over rows, the rank-5 attention products. backward/ holds PyTorch's input gradients
(GoldenAutograd).
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_goldens import torch_case  # noqa: E402
from make_zoo import write_backward  # noqa: E402

torch.set_num_threads(1)


def window_partition(x, ws):
    """[B, H, W, C] -> [B * nW, ws, ws, C]"""
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws, ws, c)


def window_reverse(windows, ws, h, w):
    """[B * nW, ws, ws, C] -> [B, H, W, C]"""
    c = windows.shape[-1]
    x = windows.view(-1, h // ws, w // ws, ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, h, w, c)


class WindowAttention(nn.Module):
    def __init__(self, dim, ws, heads):
        super().__init__()
        self.ws, self.heads = ws, heads
        self.scale = (dim // heads) ** -0.5
        self.table = nn.Parameter(torch.randn((2 * ws - 1) ** 2, heads) * 0.5)
        coords = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += ws - 1
        rel[:, :, 1] += ws - 1
        rel[:, :, 0] *= 2 * ws - 1
        self.register_buffer("index", rel.sum(-1))
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, mask=None):
        b_, n, c = x.shape
        qkv = self.qkv(x).reshape(b_, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q * self.scale) @ k.transpose(-2, -1)
        bias = self.table[self.index.view(-1)].view(n, n, -1).permute(2, 0, 1).contiguous()
        attn = attn + bias.unsqueeze(0)
        if mask is not None:
            nw = mask.shape[0]
            attn = attn.view(b_ // nw, nw, self.heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.heads, n, n)
        attn = F.softmax(attn, dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b_, n, c))


class SwinBlock(nn.Module):
    def __init__(self, dim, hw, ws, heads, shift, mlp_ratio=2):
        super().__init__()
        self.hw, self.ws, self.shift = hw, ws, shift
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, ws, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * mlp_ratio), nn.GELU(), nn.Linear(dim * mlp_ratio, dim))
        if shift:
            h, w = hw
            img = torch.zeros(1, h, w, 1)
            cnt = 0
            for hs in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                for wsl in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                    img[:, hs, wsl, :] = cnt
                    cnt += 1
            mw = window_partition(img, ws).view(-1, ws * ws)
            mask = mw.unsqueeze(1) - mw.unsqueeze(2)
            self.register_buffer("mask", mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0))
        else:
            self.mask = None

    def forward(self, x):
        h, w = self.hw
        b, _, c = x.shape
        shortcut = x
        x = self.norm1(x).view(b, h, w, c)
        if self.shift:
            x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        win = window_partition(x, self.ws).view(-1, self.ws * self.ws, c)
        win = self.attn(win, self.mask).view(-1, self.ws, self.ws, c)
        x = window_reverse(win, self.ws, h, w)
        if self.shift:
            x = torch.roll(x, shifts=(self.shift, self.shift), dims=(1, 2))
        x = shortcut + x.view(b, h * w, c)
        return x + self.mlp(self.norm2(x))


class ResidualSwinGroup(nn.Module):
    """RSTB: Swin blocks on tokens, then a 3x3 conv on the map, plus the group's input."""

    def __init__(self, dim, hw, ws, heads, depth=2):
        super().__init__()
        self.hw = hw
        self.blocks = nn.ModuleList([SwinBlock(dim, hw, ws, heads, shift=0 if i % 2 == 0 else ws // 2) for i in range(depth)])
        self.conv = nn.Conv2d(dim, dim, 3, padding=1)

    def forward(self, x):
        y = x
        for blk in self.blocks:
            y = blk(y)
        b, _, c = x.shape
        y = self.conv(y.transpose(1, 2).view(b, c, *self.hw)).flatten(2).transpose(1, 2)
        return x + y


class SwinIR(nn.Module):
    """groups residual Swin groups of depth blocks each. upsampler "pixelshuffle": SwinIR's
    classical 2x tail (conv + LeakyReLU, conv to 4C, PixelShuffle, conv to RGB); "direct":
    the lightweight models' pixelshuffledirect (one conv to 3 * scale^2, PixelShuffle)."""

    def __init__(self, hw, dim=16, ws=4, heads=2, scale=2, groups=1, depth=2, upsampler="pixelshuffle"):
        super().__init__()
        self.ws, self.hw = ws, hw
        self.conv_first = nn.Conv2d(3, dim, 3, padding=1)
        self.patch_norm = nn.LayerNorm(dim)
        self.group = ResidualSwinGroup(dim, hw, ws, heads, depth)
        self.more_groups = nn.ModuleList([ResidualSwinGroup(dim, hw, ws, heads, depth) for _ in range(groups - 1)])
        self.norm = nn.LayerNorm(dim)
        self.conv_after_body = nn.Conv2d(dim, dim, 3, padding=1)
        if upsampler == "direct":
            self.tail = nn.Sequential(nn.Conv2d(dim, 3 * scale * scale, 3, padding=1), nn.PixelShuffle(scale))
        else:
            assert scale == 2, "the classical tail here is the 2x one"
            self.tail = nn.Sequential(nn.Conv2d(dim, dim, 3, padding=1), nn.LeakyReLU(inplace=True),
                                      nn.Conv2d(dim, 4 * dim, 3, padding=1), nn.PixelShuffle(scale),
                                      nn.Conv2d(dim, 3, 3, padding=1))
        self.scale = scale
        with torch.no_grad():  # LayerNorms with non-trivial affine parameters
            for m in self.modules():
                if isinstance(m, nn.LayerNorm):
                    m.weight.copy_(1 + 0.3 * torch.randn(dim))
                    m.bias.copy_(0.2 * torch.randn(dim))

    def forward(self, x):
        h, w = x.shape[2], x.shape[3]
        ph, pw = (self.ws - h % self.ws) % self.ws, (self.ws - w % self.ws) % self.ws
        x = F.pad(x, (0, pw, 0, ph), "reflect")
        feat = self.conv_first(x)
        b, c = feat.shape[0], feat.shape[1]
        t = self.patch_norm(feat.flatten(2).transpose(1, 2))
        t = self.group(t)
        for group in self.more_groups:
            t = group(t)
        t = self.norm(t)
        body = t.transpose(1, 2).view(b, c, *self.hw)
        feat = self.conv_after_body(body) + feat
        y = self.tail(feat)
        return y[:, :, : h * self.scale, : w * self.scale]


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    image = torch.randn(2, 3, 14, 10, generator=g)
    model = SwinIR(hw=(16, 12))
    torch_case("family_swinir_2x", model, {"image": image}, "output", 17,
               "SwinIR-style 2x super-resolution (embed 16, one residual Swin group of 2 blocks, window 4, "
               "2 heads, shifted windows with mask, relative-position bias, LayerNorm, GELU, pixel-shuffle "
               "upsampler), 14x10 in reflect-padded to 16x12.\nWritten by tests/golden/make_swinir.py; backward/ holds "
               "PyTorch's input gradients of sum(output * backward/output_weights).",
               seed=520)
    write_backward("family_swinir_2x", model, {"image": image}, 620)
    print("family_swinir_2x")


if __name__ == "__main__":
    main()
