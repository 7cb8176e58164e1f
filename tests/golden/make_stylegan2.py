#!/usr/bin/env python3
"""StyleGAN2 golden cases (tests/golden/cases/family_stylegan2_*): a small StyleGAN2
generator defined here from the paper (Karras et al. 2020, "Analyzing and Improving the
Image Quality of StyleGAN") and the forward passes its public PyTorch ports write, random
weights, exported by torch.onnx at opset 17 at a fixed batch of 2 (as StyleGAN2's users
export it: the fused form folds the batch into the convolution groups), run by PyTorch.

    OMP_WAIT_POLICY=passive /usr/bin/python3 tests/golden/make_stylegan2.py [name ...]

The generator (z 16, w 16, two mapping layers, 4x4 -> 16x16, widths 16/16/8):
* mapping: pixel norm of z, equalised-lr linear layers (weight / sqrt(fan_in) at run
  time, lr multiplier 0.01) with LeakyReLU 0.2 times sqrt(2), then truncation toward a
  stored w_avg (psi 0.7);
* synthesis: a learned constant 4x4 input, modulated 3x3 convolutions (style from an
  equalised-lr affine of w, bias initialised to 1) with demodulation
  (rsqrt(sum over in, kh, kw of (W * s)^2 + 1e-8)), noise injection (a constant noise
  buffer per layer times a learned strength), bias, LeakyReLU 0.2 times sqrt(2);
  up-sampling blocks (a stride-2 transposed 3x3 conv followed by a 4x4 [1,3,3,1] FIR blur);
* toRGB: modulated 1x1 conv without demodulation, plus bias, in the skip architecture:
  the running RGB image is up-sampled by upfirdn2d (zero insertion by reshape + pad, then
  the [1,3,3,1] FIR as a depthwise 4x4 conv, gain 4) and the next toRGB added.

Exported forms of the modulated convolution, one case each:
* family_stylegan2_fused: weight = W * style per sample, demodulated, the batch folded
  into the conv's groups by reshapes (x [1, N*I, H, W], weight [N*O, I, k, k], groups N;
  for up-sampling the transposed conv's weight [N*I, O, k, k]);
* family_stylegan2_nonfused: x scaled by the style, the fixed-weight conv (or transposed
  conv), the output scaled by the demodulation coefficients computed from the style and W;
* family_stylegan2_fused_views: the fused form written with views, the batch and map sizes
  read from x.shape, as another port writes it;
* family_stylegan2_upfirdn2d: the up-sampling alone in upfirdn2d's portable forms
  (the channels folded into the batch, one single-channel FIR conv; and cropped, the FIR
  repeated per channel at run time).
Each case also gets backward/: PyTorch autograd's input gradients (GoldenAutograd).
"""
import math
import os
import sys
import tempfile

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_util import write_case  # noqa: E402
from make_zoo import write_backward  # noqa: E402

torch.set_num_threads(1)
SQRT2 = math.sqrt(2.0)
BATCH = 2


def fir_kernel(taps):
    k = torch.tensor(taps, dtype=torch.float32)
    k = k[None, :] * k[:, None]
    return k / k.sum()


def depthwise_fir(taps, gain, channels):
    """The FIR as a depthwise conv weight [C, 1, k, k], flipped (upfirdn2d convolves)."""
    return torch.flip(fir_kernel(taps) * gain, [0, 1])[None, None].repeat(channels, 1, 1, 1)


def upfirdn2d(x, weight, up, pad0, pad1):
    """Zero insertion by reshape + pad (up), border pad, then the depthwise FIR conv."""
    n, c, h, w = x.shape
    if up > 1:
        x = x.reshape(n, c, h, 1, w, 1)
        x = F.pad(x, [0, up - 1, 0, 0, 0, up - 1])
        x = x.reshape(n, c, h * up, w * up)
    x = F.pad(x, [pad0, pad1, pad0, pad1])
    return F.conv2d(x, weight, groups=c)


def upfirdn2d_channels_folded(x, f, up, pad0, pad1):
    """upfirdn2d's portable form in one port: the channels folded into the batch
    ([N*C, H, W, 1]), zero insertion by reshape + pad, the border pad, crops that keep
    everything, then one single-channel conv with the flipped FIR, and back to [N, C, ...]."""
    n, c, h, w = (int(v) for v in x.shape)
    y = x.reshape(-1, h, w, 1).view(-1, h, 1, w, 1, 1)
    y = F.pad(y, [0, 0, 0, up - 1, 0, 0, 0, up - 1]).view(-1, h * up, w * up, 1)
    y = F.pad(y, [0, 0, pad0, pad1, pad0, pad1])
    y = y[:, 0:y.shape[1], 0:y.shape[2], :]
    y = y.permute(0, 3, 1, 2).reshape(-1, 1, h * up + pad0 + pad1, w * up + pad0 + pad1)
    kh, kw = f.shape
    y = F.conv2d(y, torch.flip(f, [0, 1]).view(1, 1, kh, kw))
    oh, ow = h * up + pad0 + pad1 - kh + 1, w * up + pad0 + pad1 - kw + 1
    return y.reshape(-1, 1, oh, ow).permute(0, 2, 3, 1).reshape(-1, c, oh, ow)


def upfirdn2d_cropped(x, f, up, pad0, pad1):
    """upfirdn2d's reference form in another port: zero insertion by reshape + pad, the
    border pad, crops that keep everything, the FIR flipped and repeated per channel at run
    time for a depthwise conv."""
    n, c, h, w = (int(v) for v in x.shape)
    y = F.pad(x.reshape(n, c, h, 1, w, 1), [0, up - 1, 0, 0, 0, up - 1]).reshape(n, c, h * up, w * up)
    y = F.pad(y, [pad0, pad1, pad0, pad1])
    y = y[:, :, 0:y.shape[2], 0:y.shape[3]]
    return F.conv2d(y, f.flip([0, 1])[None, None].repeat([c, 1, 1, 1]), groups=c)


class SkipUpsample(nn.Module):
    """upfirdn2d up-sampling as the skip path does it, in the two portable forms of the
    ports: channels folded into the batch, and cropped with the FIR repeated at run time."""

    def __init__(self):
        super().__init__()
        self.register_buffer("fir", fir_kernel([1, 3, 3, 1]) * 4)

    def forward(self, x):
        return upfirdn2d_channels_folded(x, self.fir, 2, 2, 1) - 0.5 * upfirdn2d_cropped(x, self.fir, 2, 2, 1)


class EqualLinear(nn.Module):
    def __init__(self, cin, cout, bias_init=0.0, lr_mul=1.0, act=False):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin) / lr_mul)
        self.bias = nn.Parameter(torch.randn(cout) * 0.1 + bias_init)
        self.scale = lr_mul / math.sqrt(cin)
        self.lr_mul = lr_mul
        self.act = act

    def forward(self, x):
        y = F.linear(x, self.weight * self.scale, self.bias * self.lr_mul)
        return F.leaky_relu(y, 0.2) * SQRT2 if self.act else y


class ModulatedConv(nn.Module):
    """Modulated k x k conv; up=True: the stride-2 transposed conv then the 4x4 blur."""

    def __init__(self, cin, cout, k, w_dim, demodulate, up, fused):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, k, k))
        self.scale = 1.0 / math.sqrt(cin * k * k)
        self.affine = EqualLinear(w_dim, cin, bias_init=1.0)
        self.demodulate, self.up, self.fused, self.k = demodulate, up, fused, k
        self.register_buffer("blur", depthwise_fir([1, 3, 3, 1], 4, cout))

    def forward(self, x, w):
        # Python ints, as at a fixed batch the exported reshapes are constants.
        n, cin, h, wd = (int(v) for v in x.shape)
        style = self.affine(w)
        weight = self.weight * self.scale
        cout = int(weight.shape[0])
        if self.fused == "views":
            return self.fused_with_views(x, style, weight)
        if self.fused:
            wm = weight[None] * style[:, None, :, None, None]
            if self.demodulate:
                wm = wm * torch.rsqrt(wm.pow(2).sum([2, 3, 4]) + 1e-8)[:, :, None, None, None]
            x = x.reshape(1, n * cin, h, wd)
            if self.up:
                wm = wm.transpose(1, 2).reshape(n * cin, cout, self.k, self.k)
                y = F.conv_transpose2d(x, wm, stride=2, groups=n)
                y = y.reshape(n, cout, 2 * h + 1, 2 * wd + 1)
                return upfirdn2d(y, self.blur, 1, 1, 1)
            y = F.conv2d(x, wm.reshape(n * cout, cin, self.k, self.k), padding=self.k // 2, groups=n)
            return y.reshape(n, cout, h, wd)
        x = x * style.reshape(n, -1, 1, 1)
        if self.up:
            y = upfirdn2d(F.conv_transpose2d(x, weight.transpose(0, 1), stride=2), self.blur, 1, 1, 1)
        else:
            y = F.conv2d(x, weight, padding=self.k // 2)
        if self.demodulate:
            d = torch.rsqrt((weight[None] * style.reshape(n, 1, -1, 1, 1)).pow(2).sum([2, 3, 4]) + 1e-8)
            y = y * d.reshape(n, -1, 1, 1)
        return y

    def fused_with_views(self, x, style, weight):
        """The fused form as another port writes it: the batch and the map's size read from
        x.shape (Shape/Gather in the export; only the conv weight's shape must be constants
        for torch to export it), the style and demodulation by view, and the up-sampling
        weight viewed [N*O, I, k, k] -> [N, O, I, k, k] before its transpose."""
        batch, cin, h, wd = x.shape
        n, cout, k = int(batch), int(weight.shape[0]), self.k
        wm = weight.unsqueeze(0) * style.view(batch, 1, cin, 1, 1)
        if self.demodulate:
            wm = wm * torch.rsqrt(wm.pow(2).sum([2, 3, 4]) + 1e-8).view(batch, cout, 1, 1, 1)
        wm = wm.view(n * cout, int(cin), k, k)
        x = x.view(1, batch * cin, h, wd)
        if self.up:
            wm = wm.view(n, cout, int(cin), k, k).transpose(1, 2).reshape(n * int(cin), cout, k, k)
            y = F.conv_transpose2d(x, wm, stride=2, groups=n)
            _, _, h2, w2 = y.shape
            return upfirdn2d(y.view(batch, cout, h2, w2), self.blur, 1, 1, 1)
        y = F.conv2d(x, wm, padding=k // 2, groups=n)
        _, _, h2, w2 = y.shape
        return y.view(batch, cout, h2, w2)


class StyledLayer(nn.Module):
    """Modulated 3x3 conv, constant noise times a learned strength, bias, lrelu * sqrt(2)."""

    def __init__(self, cin, cout, w_dim, res, up, fused):
        super().__init__()
        self.conv = ModulatedConv(cin, cout, 3, w_dim, True, up, fused)
        self.register_buffer("noise", torch.randn(1, 1, res, res))
        self.strength = nn.Parameter(torch.tensor(0.3))
        self.bias = nn.Parameter(torch.randn(cout) * 0.1)

    def forward(self, x, w):
        y = self.conv(x, w) + self.strength * self.noise
        return F.leaky_relu(y + self.bias.reshape(1, -1, 1, 1), 0.2) * SQRT2


class ToRGB(nn.Module):
    def __init__(self, cin, w_dim, fused):
        super().__init__()
        self.conv = ModulatedConv(cin, 3, 1, w_dim, False, False, fused)
        self.bias = nn.Parameter(torch.randn(3) * 0.1)

    def forward(self, x, w):
        return self.conv(x, w) + self.bias.reshape(1, -1, 1, 1)


class StyleGan2Generator(nn.Module):
    def __init__(self, fused, z_dim=16, w_dim=16, n_mapping=2, widths=(16, 16, 8), psi=0.7):
        super().__init__()
        self.mapping = nn.ModuleList(
            [EqualLinear(z_dim if i == 0 else w_dim, w_dim, lr_mul=0.01, act=True) for i in range(n_mapping)])
        self.register_buffer("w_avg", torch.randn(w_dim) * 0.5)
        self.psi = psi
        self.const = nn.Parameter(torch.randn(1, widths[0], 4, 4))
        self.conv4 = StyledLayer(widths[0], widths[0], w_dim, 4, False, fused)
        self.rgb4 = ToRGB(widths[0], w_dim, fused)
        self.blocks = nn.ModuleList()
        res = 4
        for cin, cout in zip(widths[:-1], widths[1:]):
            res *= 2
            self.blocks.append(nn.ModuleList([StyledLayer(cin, cout, w_dim, res, True, fused),
                                              StyledLayer(cout, cout, w_dim, res, False, fused),
                                              ToRGB(cout, w_dim, fused)]))
        self.register_buffer("blur", depthwise_fir([1, 3, 3, 1], 4, 3))

    def forward(self, z):
        w = z * torch.rsqrt(torch.mean(z ** 2, dim=1, keepdim=True) + 1e-8)
        for layer in self.mapping:
            w = layer(w)
        w = self.w_avg + self.psi * (w - self.w_avg)
        x = self.const.repeat(z.shape[0], 1, 1, 1)
        x = self.conv4(x, w)
        img = self.rgb4(x, w)
        for up, conv, rgb in self.blocks:
            x = conv(up(x, w), w)
            img = upfirdn2d(img, self.blur, 2, 2, 1) + rgb(x, w)
        return img


FORMS = {
    "fused": (True, "fused: per-sample weights W * style, demodulated, batch folded into the conv groups"),
    "nonfused": (False, "non-fused: x * style, fixed-weight conv, output * demodulation coefficients"),
    "fused_views": ("views", "fused, written with views and the batch and map sizes read from x.shape (Shape/Gather "
                             "in the export), the up-sampling weight viewed [N*O, I, k, k] -> [N, O, I, k, k] before its transpose"),
}


def cases():
    out = {}
    for form, (fused, text) in FORMS.items():
        torch.manual_seed(0)  # the same weights in every form
        out["family_stylegan2_" + form] = (StyleGan2Generator(fused).eval(), text)
    return out


def upsample_case():
    """family_stylegan2_upfirdn2d: the portable upfirdn2d forms alone, checked
    against the depthwise form, exported at a fixed batch of 2."""
    x = torch.randn(BATCH, 16, 5, 6, generator=torch.Generator().manual_seed(8))
    model = SkipUpsample().eval()
    with torch.no_grad():
        y = model(x)
    want = 0.5 * upfirdn2d(x, depthwise_fir([1, 3, 3, 1], 4, 16), 2, 2, 1)
    assert torch.allclose(y, want, atol=1e-6), float((y - want).abs().max())
    name = "family_stylegan2_upfirdn2d"
    readme = ("StyleGAN2 up-sampling (upfirdn2d, [1,3,3,1] FIR, up 2, pads 2/1, as the skip path does) of 16 channels, written with the channels folded "
              "into the batch minus 0.5 times the cropped form (FIR repeated at run time), 5x6 -> 10x12, opset 17 at a fixed batch of 2.\nWritten by tests/golden/make_stylegan2.py.")
    with tempfile.TemporaryDirectory() as td:
        path = os.path.join(td, "model.onnx")
        torch.onnx.export(model, (x,), path, opset_version=17, input_names=["x"], output_names=["y"], do_constant_folding=True)
        write_case(name, {"x": x}, {"y": y}, onnx_bytes_path=path, readme=readme)
    print(name, tuple(y.shape))


def main():
    wanted = set(sys.argv[1:])
    if not wanted or "family_stylegan2_upfirdn2d" in wanted:
        upsample_case()
    z = torch.randn(BATCH, 16, generator=torch.Generator().manual_seed(7))
    results = {}
    for name, (model, form) in cases().items():
        if wanted and name not in wanted:
            continue
        with torch.no_grad():
            y = model(z)
        results[name] = y
        readme = (f"StyleGAN2 generator, {form}; z 16, w 16, 2 mapping layers, truncation 0.7, widths 16/16/8, "
                  f"4x4 -> 16x16, skip toRGB with upfirdn2d up-sampling; opset 17 at a fixed batch of {BATCH}.\n"
                  "Written by tests/golden/make_stylegan2.py; backward/ holds PyTorch's input gradients of "
                  "sum(output * backward/output_weights).")
        with tempfile.TemporaryDirectory() as td:
            path = os.path.join(td, "model.onnx")
            torch.onnx.export(model, (z,), path, opset_version=17, input_names=["z"], output_names=["output"],
                              do_constant_folding=True)
            onnx.checker.check_model(onnx.load(path))
            write_case(name, {"z": z}, {"output": y}, onnx_bytes_path=path, readme=readme)
        write_backward(name, model, {"z": z}, 700)
        print(name, tuple(y.shape), float(y.abs().max()))
    outs = list(results.values())  # every form computes the same function
    for other in outs[1:]:
        assert torch.allclose(outs[0], other, atol=1e-5), float((outs[0] - other).abs().max())


if __name__ == "__main__":
    main()
