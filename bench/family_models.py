"""The famous GAN generator families at the sizes people run them, for
bench/image_models_peers.py: the goldens' PyTorch definitions (tests/golden/make_families.py,
make_stylegan2.py, make_swinir.py) at their published widths, plus the pieces the small
goldens leave out (BigGAN's residual generator block, Real-CUGAN's second U-Net), written
here from the papers. Random weights: speed does not depend on them.

* stylegan2_256_{fused,nonfused}: StyleGAN2 (Karras et al. 2020) at 256x256, z and w 512,
  8 mapping layers, channels 512 at 4..32, then 256, 128, 64 (rosinality's port at channel
  multiplier 1), skip toRGB; batch 1 at a fixed shape, as its users export it.
* biggan_128: BigGAN (Brock et al. 2019) at 128x128, ch 96: z 120 in six chunks of 20, a
  class vector of 1000 (one-hot in use; the benchmark feeds random values, which cost the
  same) through the shared 128-wide embedding as a product, five residual
  up-sampling blocks (16, 16, 8, 4, 2, 1 x ch) with conditional BatchNorm from
  [chunk, embedding], self-attention at 64x64, BN + ReLU + 3x3 conv + tanh.
* realcugan_up2x_256: Real-CUGAN's UpCunet2x (UNet1 with the deconv tail, then UNet2, the
  sum cropped to 2H x 2W) on a 256x256 picture reflect-padded by 18.
* swinir_light_x4_64: SwinIR lightweight x4 (embed 60, four residual groups of six Swin
  blocks, six heads, window 8, MLP ratio 2, pixelshuffledirect) on 64x64.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))
from make_families import ConditionalBN, SelfAttention, UNet1, UNetConv  # noqa: E402
from make_goldens import randomize_bn  # noqa: E402
from make_stylegan2 import StyleGan2Generator  # noqa: E402
from make_swinir import SwinIR  # noqa: E402


class BigGanBlock(nn.Module):
    """BigGAN's generator block: CBN, ReLU, nearest 2x, 3x3 conv, CBN, ReLU, 3x3 conv, plus
    the up-sampled input through a 1x1 conv."""

    def __init__(self, cin, cout, cond):
        super().__init__()
        self.bn1, self.bn2 = ConditionalBN(cin, cond), ConditionalBN(cout, cond)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.shortcut = nn.Conv2d(cin, cout, 1)

    def forward(self, x, cond):
        h = F.interpolate(F.relu(self.bn1(x, cond)), scale_factor=2, mode="nearest")
        h = self.conv2(F.relu(self.bn2(self.conv1(h), cond)))
        return h + self.shortcut(F.interpolate(x, scale_factor=2, mode="nearest"))


class BigGan(nn.Module):
    def __init__(self, ch=96, z_dim=120, classes=1000, embed=128, mult=(16, 16, 8, 4, 2, 1), attention_at=64):
        super().__init__()
        self.chunk = z_dim // len(mult)
        self.width = mult[0] * ch
        self.shared = nn.Linear(classes, embed, bias=False)  # the class embedding, as a product with a one-hot y
        self.linear = nn.Linear(self.chunk, 16 * self.width)
        self.blocks = nn.ModuleList([BigGanBlock(a * ch, b * ch, self.chunk + embed) for a, b in zip(mult[:-1], mult[1:])])
        self.attention_after = [4 * 2 ** (i + 1) for i in range(len(self.blocks))].index(attention_at)
        self.attention = SelfAttention(mult[self.attention_after + 1] * ch)
        self.out = nn.Sequential(nn.BatchNorm2d(ch), nn.ReLU(), nn.Conv2d(ch, 3, 3, padding=1), nn.Tanh())

    def forward(self, z, y):
        zs = torch.split(z, self.chunk, dim=1)
        e = self.shared(y)
        x = self.linear(zs[0]).view(z.shape[0], self.width, 4, 4)
        for i, block in enumerate(self.blocks):
            x = block(x, torch.cat([zs[i + 1], e], 1))
            if i == self.attention_after:
                x = self.attention(x)
        return self.out(x)


class UNet2(nn.Module):
    """Real-CUGAN's second U-Net: two stride-2 levels, SE blocks, crops on the skips
    (input S, output S - 40)."""

    def __init__(self):
        super().__init__()
        self.conv1 = UNetConv(3, 32, 64, se=False)
        self.conv1_down = nn.Conv2d(64, 64, 2, 2)
        self.conv2 = UNetConv(64, 64, 128, se=True)
        self.conv2_down = nn.Conv2d(128, 128, 2, 2)
        self.conv3 = UNetConv(128, 256, 128, se=True)
        self.conv3_up = nn.ConvTranspose2d(128, 128, 2, 2)
        self.conv4 = UNetConv(128, 64, 64, se=True)
        self.conv4_up = nn.ConvTranspose2d(64, 64, 2, 2)
        self.conv5 = nn.Conv2d(64, 64, 3)
        self.conv_bottom = nn.Conv2d(64, 3, 3)

    def forward(self, x):
        x1 = self.conv1(x)
        x2 = self.conv2(F.leaky_relu(self.conv1_down(x1), 0.1))
        x3 = self.conv3(F.leaky_relu(self.conv2_down(x2), 0.1))
        x3 = F.leaky_relu(self.conv3_up(x3), 0.1)
        x4 = self.conv4(F.pad(x2, (-4, -4, -4, -4)) + x3)
        x4 = F.leaky_relu(self.conv4_up(x4), 0.1)
        x5 = F.leaky_relu(self.conv5(F.pad(x1, (-16, -16, -16, -16)) + x4), 0.1)
        return self.conv_bottom(x5)


class RealCuganUp2x(nn.Module):
    """UpCunet2x on an even-sized picture: reflect pad 18, UNet1 (H + 36 -> 2H + 40), UNet2
    (-> 2H) plus UNet1's output cropped by 20."""

    def __init__(self):
        super().__init__()
        self.unet1 = UNet1(w=32)
        self.unet2 = UNet2()

    def forward(self, x):
        x = self.unet1(F.pad(x, (18, 18, 18, 18), "reflect"))
        return self.unet2(x) + F.pad(x, (-20, -20, -20, -20))


# name: (constructor, {input name: shape} at batch 1, exported with a dynamic batch). The
# goldens' convention: a dynamic batch, but StyleGAN2 at a fixed one (the fused form folds
# the batch into the conv groups).
MODELS = {
    "stylegan2_256_fused": (lambda: StyleGan2Generator(True, z_dim=512, w_dim=512, n_mapping=8, widths=(512, 512, 512, 512, 256, 128, 64)),
                            {"z": (1, 512)}, False),
    "stylegan2_256_nonfused": (lambda: StyleGan2Generator(False, z_dim=512, w_dim=512, n_mapping=8, widths=(512, 512, 512, 512, 256, 128, 64)),
                               {"z": (1, 512)}, False),
    "biggan_128": (lambda: BigGan(), {"z": (1, 120), "c": (1, 1000)}, True),
    "realcugan_up2x_256": (lambda: RealCuganUp2x(), {"x": (1, 3, 256, 256)}, True),
    "swinir_light_x4_64": (lambda: SwinIR(hw=(64, 64), dim=60, ws=8, heads=6, scale=4, groups=4, depth=6, upsampler="direct"),
                           {"x": (1, 3, 64, 64)}, True),
}


def build(name):
    """The model with seeded weights (BatchNorm statistics randomised as the goldens do), in eval mode."""
    torch.manual_seed(0)
    model = MODELS[name][0]()
    randomize_bn(model, 1)
    return model.eval()
