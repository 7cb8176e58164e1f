#!/usr/bin/env python3
"""Famous GAN generator families on run-time math: golden cases (tests/golden/cases/family_*)
defined here from their papers at small widths with random weights, exported by
torch.onnx at opset 17 (dynamic batch) and run by PyTorch.

    OMP_WAIT_POLICY=passive /usr/bin/python3 tests/golden/make_families.py [name ...]

Families:
* ProGAN (Karras et al. 2018): pixel norm (x / sqrt(mean(x^2 over channels) + eps)) on
  the latent and after every conv, equalised learning rate (weights scaled by
  sqrt(2 / fan_in) in the forward pass), nearest upsampling, LeakyReLU 0.2, a 1x1 toRGB.
* A Real-CUGAN-style 2x U-Net (UpCunet2x's UNet1 and a refinement stage): reflect pad 9,
  unpadded 3x3 convs, a 2x2 stride-2 conv down and 2x2 stride-2 transposed conv up,
  squeeze-and-excitation (mean over H x W, 1x1 convs, sigmoid, channel product),
  negative pads cropping the skip paths, a 4x4 stride-2 transposed conv to 2x.
* A SAGAN/BigGAN-style generator: z split in chunks (BigGAN's hierarchical latent), the
  first through a linear layer to a 4x4 map, the others giving each block's conditional
  BatchNorm a per-sample gain and bias; nearest upsampling and 3x3 convs; BigGAN's
  self-attention block (1x1 theta/phi/g convs, 2x2 max pools, bmm, softmax, bmm, 1x1
  conv, x + gamma * o) at 8x8.
* A small translator with the whole-map statistics tiles must gather over the picture
  (ImageToImage's exact tiles): GroupNorm with 4 and with 2 groups, a stride-2 conv,
  squeeze-and-excitation after the second norm, a 4x4 stride-2 transposed conv back.
Each case also gets backward/: PyTorch autograd's input gradients (GoldenAutograd).
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_goldens import torch_case  # noqa: E402
from make_zoo import write_backward  # noqa: E402

torch.set_num_threads(1)


# ----------------------------------------------------------------------------- ProGAN
def pixel_norm(x, eps=1e-8):
    return x / torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + eps)


class EqualizedConv2d(nn.Module):
    """Weights drawn from N(0, 1) and scaled by He's constant at run time."""

    def __init__(self, cin, cout, k, padding=0):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, k, k))
        self.bias = nn.Parameter(torch.randn(cout) * 0.1)
        self.scale = math.sqrt(2.0 / (cin * k * k))
        self.padding = padding

    def forward(self, x):
        return F.conv2d(x, self.weight * self.scale, self.bias, padding=self.padding)


class EqualizedFirst(nn.Module):
    """The 4x4 block's 'dense' layer: latent [N, z] to a 4x4 map, as a transposed conv."""

    def __init__(self, z, c):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(z, c, 4, 4))
        self.bias = nn.Parameter(torch.randn(c) * 0.1)
        self.scale = math.sqrt(2.0 / z) / 4  # the official code's gain / 4 for this layer

    def forward(self, z):
        return F.conv_transpose2d(z.view(z.shape[0], -1, 1, 1), self.weight * self.scale, self.bias)


class ProGanGenerator(nn.Module):
    def __init__(self, z=16, widths=(16, 16, 8)):
        super().__init__()
        self.first = EqualizedFirst(z, widths[0])
        self.conv4 = EqualizedConv2d(widths[0], widths[0], 3, padding=1)
        self.blocks = nn.ModuleList()
        for cin, cout in zip(widths[:-1], widths[1:]):
            self.blocks.append(nn.ModuleList([EqualizedConv2d(cin, cout, 3, padding=1), EqualizedConv2d(cout, cout, 3, padding=1)]))
        self.to_rgb = EqualizedConv2d(widths[-1], 3, 1)

    def forward(self, z):
        x = pixel_norm(F.leaky_relu(self.first(pixel_norm(z)), 0.2))
        x = pixel_norm(F.leaky_relu(self.conv4(x), 0.2))
        for a, b in self.blocks:
            x = F.interpolate(x, scale_factor=2, mode="nearest")
            x = pixel_norm(F.leaky_relu(a(x), 0.2))
            x = pixel_norm(F.leaky_relu(b(x), 0.2))
        return self.to_rgb(x)


# ----------------------------------------------------------------------------- Real-CUGAN
class SEBlock(nn.Module):
    def __init__(self, c, reduction=4):
        super().__init__()
        mid = max(1, c // reduction)
        self.conv1 = nn.Conv2d(c, mid, 1)
        self.conv2 = nn.Conv2d(mid, c, 1)

    def forward(self, x):
        s = torch.mean(x, dim=(2, 3), keepdim=True)
        return x * torch.sigmoid(self.conv2(F.relu(self.conv1(s))))


class UNetConv(nn.Module):
    """Two unpadded 3x3 convs with LeakyReLU 0.1, then optionally squeeze-and-excitation."""

    def __init__(self, cin, mid, cout, se):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(cin, mid, 3), nn.LeakyReLU(0.1), nn.Conv2d(mid, cout, 3), nn.LeakyReLU(0.1))
        self.se = SEBlock(cout) if se else None

    def forward(self, x):
        x = self.conv(x)
        return self.se(x) if self.se is not None else x


class UNet1(nn.Module):
    def __init__(self, cin=3, cout=3, w=8):
        super().__init__()
        self.conv1 = UNetConv(cin, w, 2 * w, se=False)
        self.conv1_down = nn.Conv2d(2 * w, 2 * w, 2, 2)
        self.conv2 = UNetConv(2 * w, 4 * w, 2 * w, se=True)
        self.conv2_up = nn.ConvTranspose2d(2 * w, 2 * w, 2, 2)
        self.conv3 = nn.Conv2d(2 * w, 2 * w, 3)
        self.conv_bottom = nn.ConvTranspose2d(2 * w, cout, 4, 2, 3)

    def forward(self, x):
        x1 = self.conv1(x)
        x2 = F.leaky_relu(self.conv1_down(x1), 0.1)
        x2 = F.leaky_relu(self.conv2_up(self.conv2(x2)), 0.1)
        x1 = F.pad(x1, (-4, -4, -4, -4))
        x3 = F.leaky_relu(self.conv3(x1 + x2), 0.1)
        return self.conv_bottom(x3)


class UpCunet2x(nn.Module):
    """2x: reflect pad 9, UNet1 (H + 18 -> 2H + 4), a refinement UNetConv with SE (-> 2H)
    added to UNet1's output cropped by the refinement's 2-pixel border: exactly 2H x 2W
    for even H and W, as UpCunet2x pads to get."""

    def __init__(self, w=8):
        super().__init__()
        self.unet1 = UNet1(w=w)
        self.refine = UNetConv(3, w, 3, se=True)

    def forward(self, x):
        x = self.unet1(F.pad(x, (9, 9, 9, 9), "reflect"))
        return self.refine(x) + F.pad(x, (-2, -2, -2, -2))


# ----------------------------------------------------------------------------- SAGAN / BigGAN
class SelfAttention(nn.Module):
    """BigGAN's attention block (SAGAN with pooled keys and values)."""

    def __init__(self, c):
        super().__init__()
        self.theta = nn.Conv2d(c, c // 8, 1, bias=False)
        self.phi = nn.Conv2d(c, c // 8, 1, bias=False)
        self.g = nn.Conv2d(c, c // 2, 1, bias=False)
        self.o = nn.Conv2d(c // 2, c, 1, bias=False)
        self.gamma = nn.Parameter(torch.tensor(0.7))

    def forward(self, x):
        n, c, h, w = x.shape
        theta = self.theta(x).view(n, c // 8, h * w)
        phi = F.max_pool2d(self.phi(x), 2).view(n, c // 8, h * w // 4)
        g = F.max_pool2d(self.g(x), 2).view(n, c // 2, h * w // 4)
        beta = F.softmax(torch.bmm(theta.transpose(1, 2), phi), -1)
        o = self.o(torch.bmm(g, beta.transpose(1, 2)).view(n, c // 2, h, w))
        return x + self.gamma * o


class ConditionalBN(nn.Module):
    """BatchNorm whose gain and bias come per sample from a latent chunk (1 + gain)."""

    def __init__(self, c, z):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)
        self.gain = nn.Linear(z, c)
        self.bias = nn.Linear(z, c)

    def forward(self, x, z):
        n, c = x.shape[0], x.shape[1]
        return self.bn(x) * (1 + self.gain(z).view(n, c, 1, 1)) + self.bias(z).view(n, c, 1, 1)


class SaganGenerator(nn.Module):
    def __init__(self, chunk=8, widths=(32, 16, 8)):
        super().__init__()
        self.chunk = chunk
        self.linear = nn.Linear(chunk, widths[0] * 16)
        self.bn = nn.ModuleList([ConditionalBN(cin, chunk) for cin in widths[:-1]])
        self.conv = nn.ModuleList([nn.Conv2d(cin, cout, 3, padding=1) for cin, cout in zip(widths[:-1], widths[1:])])
        self.attention = SelfAttention(widths[1])
        self.out = nn.Sequential(nn.BatchNorm2d(widths[-1]), nn.ReLU(), nn.Conv2d(widths[-1], 3, 3, padding=1), nn.Tanh())
        self.width = widths[0]

    def forward(self, z):
        zs = torch.split(z, self.chunk, dim=1)
        x = self.linear(zs[0]).view(z.shape[0], self.width, 4, 4)
        for i, (bn, conv) in enumerate(zip(self.bn, self.conv)):
            x = F.relu(bn(x, zs[i + 1]))
            x = conv(F.interpolate(x, scale_factor=2, mode="nearest"))
            if i == 0:
                x = self.attention(x)
        return self.out(x)


# ----------------------------------------------------------------------------- group norms and SE
class NormSeTranslator(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.inp = nn.Conv2d(3, width, 3, padding=1)
        self.gn1 = nn.GroupNorm(4, width)
        self.down = nn.Conv2d(width, width, 3, stride=2, padding=1)
        self.gn2 = nn.GroupNorm(2, width)
        self.se1 = nn.Conv2d(width, 4, 1)
        self.se2 = nn.Conv2d(4, width, 1)
        self.up = nn.ConvTranspose2d(width, width, 4, stride=2, padding=1)
        self.out = nn.Conv2d(width, 3, 3, padding=1)
        for gn in (self.gn1, self.gn2):  # not the identity affine map
            nn.init.normal_(gn.weight, 1.0, 0.3)
            nn.init.normal_(gn.bias, 0.0, 0.3)

    def forward(self, x):
        x = F.relu(self.gn1(self.inp(x)))
        x = F.relu(self.gn2(self.down(x)))
        x = x * torch.sigmoid(self.se2(F.relu(self.se1(x.mean((2, 3), keepdim=True)))))
        x = F.leaky_relu(self.up(x), 0.2)
        return torch.tanh(self.out(x))


# ----------------------------------------------------------------------------- cases
def families():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    return {
        "family_progan": (ProGanGenerator(), {"z": torch.randn(2, 16, generator=g)},
                          "ProGAN generator (latent 16, widths 16/16/8, pixel norm, equalised lr), 16x16 out."),
        "family_realcugan_2x": (UpCunet2x(), {"image": torch.randn(2, 3, 12, 10, generator=g)},
                                "Real-CUGAN-style 2x U-Net (width 8, SE blocks, unpadded convs, negative pads), 12x10 in."),
        "family_sagan": (SaganGenerator(), {"z": torch.randn(2, 24, generator=g)},
                         "SAGAN/BigGAN-style generator (z 3x8 chunks, conditional BN, self-attention at 8x8), 16x16 out."),
        "family_norm_se_translator": (NormSeTranslator(), {"image": torch.randn(2, 3, 12, 10, generator=g)},
                                      "A translator with GroupNorm (4 and 2 groups of 16 channels), a stride-2 conv, "
                                      "squeeze-and-excitation and a 4x4 stride-2 transposed conv, 12x10 in."),
    }


def main():
    wanted = set(sys.argv[1:])
    for seed, (name, (model, inputs, readme)) in enumerate(sorted(families().items())):
        if wanted and name not in wanted:
            continue
        torch_case(name, model, inputs, "output", 17, readme + "\nWritten by tests/golden/make_families.py; backward/ holds "
                   "PyTorch's input gradients of sum(output * backward/output_weights).", seed=500 + seed)
        write_backward(name, model, inputs, 600 + seed)
        print(name)


if __name__ == "__main__":
    main()
