#!/usr/bin/env python3
"""Regenerate the small "awkward geometry" golden cases under tests/golden/cases/.

Usage (from the repo root):
    OMP_WAIT_POLICY=passive /usr/bin/python3 tests/golden/make_goldens.py [make_torch_cases|make_onnx_cases|make_group_cases ...]

Every case is tiny (KBs), randomly initialised with a fixed seed. BatchNorm layers are
put in eval mode with non-trivial random running stats / affine params so that BN
folding in the engine is really exercised. The shipped-model cases
(dcgan_digits_*, cgan_digits_*) are written by models/*/train.py, not here.
"""
import os
import sys
import tempfile

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_util import write_case, fix_output_shapes  # noqa: E402

torch.set_num_threads(1)
SUMMARY = []


# ----------------------------------------------------------------------------- helpers
def randomize_bn(model, seed):
    """Give every BN layer random (but sane) running stats and affine params."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                c = m.num_features
                m.running_mean.copy_(torch.randn(c, generator=g) * 0.5)
                m.running_var.copy_(torch.rand(c, generator=g) * 1.5 + 0.3)
                m.weight.copy_(torch.randn(c, generator=g) * 0.5 + 1.0)
                m.bias.copy_(torch.randn(c, generator=g) * 0.3)


def record(name, inputs, outputs):
    SUMMARY.append((name, {k: tuple(v.shape) for k, v in inputs.items()},
                    {k: tuple(v.shape) for k, v in outputs.items()}))


def torch_case(name, model, inputs, output_name, opset, readme, seed, keep_bn=False):
    """Export a torch module (eval mode, dynamic batch), run it, write the case.
    keep_bn: export with TrainingMode.PRESERVE so the exporter does not fold Conv+BN
    itself (the model is in eval mode, so BN is still exported in inference form)."""
    randomize_bn(model, seed + 1000)
    model.eval()
    in_names = list(inputs)
    args = tuple(inputs.values())
    with torch.no_grad():
        out = model(*args)
    dyn = {n: {0: "N"} for n in in_names + [output_name]}
    with tempfile.TemporaryDirectory() as td:
        path = os.path.join(td, "model.onnx")
        torch.onnx.export(model, args, path, opset_version=opset, input_names=in_names,
                          output_names=[output_name], dynamic_axes=dyn, do_constant_folding=True,
                          training=torch.onnx.TrainingMode.PRESERVE if keep_bn else torch.onnx.TrainingMode.EVAL)
        fix_output_shapes(path, {output_name: tuple(out.shape)})
        assert not keep_bn or any(n.op_type == "BatchNormalization" for n in onnx.load(path).graph.node)
        write_case(name, inputs, {output_name: out}, onnx_bytes_path=path, readme=readme)
    record(name, inputs, {output_name: out})


def onnx_case(name, node, x, inits, out_shape, expected, readme):
    """Hand-built single-ConvTranspose graph: input 'x', output 'y', dynamic batch 'N'."""
    xin = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"] + list(x.shape[1:]))
    yout = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"] + list(out_shape[1:]))
    init = [numpy_helper.from_array(v.numpy().astype(np.float32), k) for k, v in inits.items()]
    graph = helper.make_graph([node], name, [xin], [yout], initializer=init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="edgegan-make_goldens")
    onnx.checker.check_model(model)
    assert tuple(expected.shape) == tuple(out_shape), (name, expected.shape, out_shape)
    with tempfile.TemporaryDirectory() as td:
        path = os.path.join(td, "model.onnx")
        onnx.save(model, path)
        write_case(name, {"x": x}, {"y": expected}, onnx_bytes_path=path, readme=readme)
    record(name, {"x": x}, {"y": expected})


def conv_transpose_reference(x, w, b, strides, pads_begin, pads_end):
    """ConvTranspose with arbitrary (possibly negative, asymmetric) pads: compute the
    full transposed conv with padding 0 and no bias, then crop (pad > 0) or append
    zero rows/cols (pad < 0) on each side, then add the bias everywhere."""
    y = F.conv_transpose2d(x, w, None, stride=strides, padding=0)
    (t, l), (bo, r) = pads_begin, pads_end
    # F.pad with negative values crops, positive values zero-pad: pad = -pads.
    y = F.pad(y, (-l, -r, -t, -bo))
    if b is not None:
        y = y + b.view(1, -1, 1, 1)
    return y


def onnx_auto_pads(in_sz, k, s, out_sz, mode, dil=(1, 1), out_pad=(0, 0)):
    """ONNX ConvTranspose spec: total_padding = s*(in-1) + out_pad + ((k-1)*dil+1) - out.
    SAME_UPPER: begin = total//2, end = total - total//2.
    else (NOTSET with output_shape): begin = total - total//2, end = total//2.
    Python floor division (matters only for negative totals)."""
    begin, end = [], []
    for i in range(2):
        total = s[i] * (in_sz[i] - 1) + out_pad[i] + ((k[i] - 1) * dil[i] + 1) - out_sz[i]
        if mode == "SAME_UPPER":
            begin.append(total // 2)
            end.append(total - total // 2)
        else:
            begin.append(total - total // 2)
            end.append(total // 2)
    return begin, end


# ----------------------------------------------------------------------------- torch cases
class SplitSliceCrop(nn.Module):
    """Split and Slice where torch writes them: chunk, crops, strided slices, split."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.out = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        a, b = torch.chunk(self.conv(x), 2, dim=1)              # Split on channels
        a = F.relu(a)[:, :, 1:-1, 1:-1]                          # crop: one Slice over H and W
        b = torch.tanh(b)[:, :, 1:-1, 1:-1]
        top, bottom = torch.split(torch.cat([a, b], 1), [3, 4], dim=2)  # Split on H, unequal
        y = torch.cat([bottom, top], 2)
        return self.out(y[:, :, :, ::2])                         # step-2 Slice on W



class GK3S2OutpadNonsquare(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 8 * 3 * 5)
        self.ct1 = nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1)   # 3x5 -> 6x10
        self.bn1 = nn.BatchNorm2d(6)
        self.ct2 = nn.ConvTranspose2d(6, 3, 5, stride=3, padding=2, output_padding=2)   # 6x10 -> 18x30

    def forward(self, z):
        x = F.relu(self.fc(z)).view(-1, 8, 3, 5)
        x = F.relu(self.bn1(self.ct1(x)))
        return torch.tanh(self.ct2(x))


class GK5K4LeakySigmoid(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(7, 9, 5, 1, 0), nn.BatchNorm2d(9), nn.LeakyReLU(0.1),     # 1 -> 5
            nn.ConvTranspose2d(9, 5, 4, 2, 1), nn.BatchNorm2d(5), nn.LeakyReLU(0.2),     # 5 -> 10
            nn.ConvTranspose2d(5, 2, 5, stride=2, padding=2, output_padding=1, bias=True),  # 10 -> 20
            nn.Sigmoid(),
        )

    def forward(self, z):
        return self.net(z)


class GStride4K7Rect(nn.Module):
    def __init__(self):
        super().__init__()
        # [N,5,2,3] -> H: (2-1)*4 - 6 + 7 + 1 = 6, W: (3-1)*2 - 2 + 3 + 0 = 5
        self.ct1 = nn.ConvTranspose2d(5, 8, (7, 3), stride=(4, 2), padding=(3, 1), output_padding=(1, 0))
        self.ct2 = nn.ConvTranspose2d(8, 3, 2, stride=1, padding=0)  # -> 7x6

    def forward(self, z):
        return self.ct2(F.relu(self.ct1(z)))


class CganEmbedConcatSmall(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(5, 4)
        self.fc = nn.Linear(10, 6 * 2 * 2)
        self.bn = nn.BatchNorm1d(6 * 2 * 2)
        self.ct1 = nn.ConvTranspose2d(6, 4, 4, 2, 1)                 # 2 -> 4
        self.ct2 = nn.ConvTranspose2d(4, 1, 3, stride=3, padding=0)  # 4 -> 12

    def forward(self, z, label):
        x = torch.cat([self.embed(label), z], 1)  # embedding first, then z
        x = F.relu(self.bn(self.fc(x)))
        x = x.view(x.size(0), 6, 2, 2)  # size(0) -> Shape/Gather/Concat in the graph
        x = F.relu(self.ct1(x))
        return torch.tanh(self.ct2(x))


class DConvDilatedFlatten(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 4, 2, 1)                                         # 13x11 -> 6x5
        self.c2 = nn.Conv2d(8, 8, 3, stride=1, padding=2, dilation=2, bias=False)  # 6x5 -> 6x5
        self.bn2 = nn.BatchNorm2d(8)
        self.c3 = nn.Conv2d(8, 4, 3, stride=2, padding=0)                          # 6x5 -> 2x2
        self.fc = nn.Linear(4 * 2 * 2, 1)

    def forward(self, image):
        x = F.leaky_relu(self.c1(image), 0.2)
        x = F.leaky_relu(self.bn2(self.c2(x)), 0.2)
        x = F.relu(self.c3(x))
        return torch.sigmoid(self.fc(torch.flatten(x, 1)))


class DExamplesSqueeze(nn.Module):
    """pytorch/examples dcgan discriminator (ndf 4, 32x32 RGB): Conv+BN+LeakyReLU stack, Sigmoid,
    then .view(-1, 1).squeeze(1) -- at opset 17 torch exports the squeeze as Shape/Gather/Equal/If."""
    def __init__(self, ndf=4, nc=3):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 4, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


class CganMlpLabelFirst(nn.Module):
    """PyTorch-GAN style MLP conditional generator: label embedding concatenated BEFORE the
    noise on the last axis (-1), Linear + BatchNorm1d(eps=0.8) + LeakyReLU blocks, Tanh,
    img.view(img.size(0), *img_shape)."""
    def __init__(self, n_classes=10, latent=8, img_shape=(1, 6, 6)):
        super().__init__()
        self.img_shape = img_shape
        self.label_emb = nn.Embedding(n_classes, n_classes)

        def block(i, o, normalize=True):
            layers = [nn.Linear(i, o)]
            if normalize:
                layers.append(nn.BatchNorm1d(o, 0.8))
            layers.append(nn.LeakyReLU(0.2, inplace=True))
            return layers
        self.model = nn.Sequential(*block(latent + n_classes, 16, normalize=False), *block(16, 24),
                                   nn.Linear(24, int(np.prod(img_shape))), nn.Tanh())

    def forward(self, noise, labels):
        img = self.model(torch.cat((self.label_emb(labels), noise), -1))
        return img.view(img.size(0), *self.img_shape)


def randomize_norms(model, seed):
    """Give every GroupNorm / affine InstanceNorm random scale and shift (torch starts at 1 and 0)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.GroupNorm, nn.InstanceNorm2d)) and m.weight is not None:
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * 0.5 + 1.0)
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.3)


class NormTransformerBlocks(nn.Module):
    """fast-neural-style TransformerNet's ConvLayer + InstanceNorm2d(affine) + ReLU, twice
    (zero padding in the convolution: reflection padding is not supported), small widths,
    then a 3-channel output conv."""
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 5, stride=1, padding=2)
        self.in1 = nn.InstanceNorm2d(8, affine=True)
        self.conv2 = nn.Conv2d(8, 12, 3, stride=2, padding=1)
        self.in2 = nn.InstanceNorm2d(12, affine=True)
        self.conv3 = nn.Conv2d(12, 3, 3, stride=1, padding=1)

    def forward(self, x):
        x = F.relu(self.in1(self.conv1(x)))
        x = F.relu(self.in2(self.conv2(x)))
        return self.conv3(x)


class NormGroupNormTorch(nn.Module):
    """nn.GroupNorm(1, C) and nn.GroupNorm(2, 8) blocks as torch 1.13 exports them (Reshape to
    [N, G, -1], InstanceNormalization, Reshape back, Mul, Add), each with LeakyReLU after."""
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 3, padding=1)
        self.gn1 = nn.GroupNorm(1, 6)
        self.conv2 = nn.Conv2d(6, 8, 3, stride=2, padding=1)
        self.gn2 = nn.GroupNorm(2, 8)
        self.conv3 = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        x = F.leaky_relu(self.gn1(self.conv1(x)), 0.2)
        x = F.leaky_relu(self.gn2(self.conv2(x)), 0.1)
        return torch.tanh(self.conv3(x))


def make_norm_cases():
    torch.manual_seed(20)
    m = NormTransformerBlocks()
    randomize_norms(m, 20)
    torch_case("norm_instance_transformer", m, {"image": torch.randn(2, 3, 12, 10) * 2 + 0.5}, "styled", 13,
               "fast-neural-style TransformerNet-like: Conv k5 p2 (3->8) + InstanceNorm2d(affine) + ReLU, "
               "Conv k3 s2 p1 (8->12, 12x10 -> 6x5) + InstanceNorm2d(affine) + ReLU, Conv k3 p1 (12->3). "
               "Zero padding (reflection padding is not supported). opset 13: InstanceNormalization nodes.", seed=20)

    torch.manual_seed(21)
    m = NormGroupNormTorch()
    randomize_norms(m, 21)
    torch_case("norm_group_norm_torch", m, {"image": torch.randn(3, 3, 9, 7) * 3 - 1}, "image_out", 13,
               "Conv (3->6) + GroupNorm(1, 6) + LeakyReLU(0.2), Conv s2 (6->8, 9x7 -> 5x4) + GroupNorm(2, 8) + "
               "LeakyReLU(0.1), Conv 1x1 (8->2) + Tanh. torch 1.13 exports each GroupNorm as Reshape(x -> [N,G,-1]) "
               "-> InstanceNormalization(ones, zeros) -> Reshape(-> x's shape) -> Mul(gamma) -> Add(beta); the "
               "converter fuses each into one GroupNorm op with its activation. opset 13.", seed=21)

    for opset in (18, 21):
        name = "norm_opset%d_group_normalization" % opset
        g = torch.Generator().manual_seed(22 + opset)
        n, c, h, w, groups, eps = 2, 6, 4, 5, 3, 1e-4
        x = (torch.randn(n, c, h, w, generator=g) * 2 + 5).numpy().astype(np.float32)
        count = groups if opset == 18 else c  # opset 18: one scale per group; 21: one per channel
        scale = (torch.randn(count, generator=g) * 0.5 + 1).numpy().astype(np.float32)
        bias = (torch.randn(count, generator=g) * 0.3).numpy().astype(np.float32)
        # The definition, in float64: statistics per (sample, group) over H x W x C/groups.
        xg = x.astype(np.float64).reshape(n, groups, -1)
        mean = xg.mean(axis=2, keepdims=True)
        var = xg.var(axis=2, keepdims=True)
        xn = ((xg - mean) / np.sqrt(var + eps)).reshape(n, c, h, w)
        per_channel = (lambda v: np.repeat(v, c // groups)) if opset == 18 else (lambda v: v)
        y = xn * per_channel(scale.astype(np.float64)).reshape(1, c, 1, 1) + per_channel(bias.astype(np.float64)).reshape(1, c, 1, 1)
        y = np.where(y > 0, y, 0.05 * y).astype(np.float32)
        attrs = {"epsilon": eps, "num_groups": groups}
        if opset == 21:
            attrs["stash_type"] = 1
        nodes = [helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["n"], name="gn", **attrs),
                 helper.make_node("LeakyRelu", ["n"], ["y"], name="act", alpha=0.05)]
        graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", c, h, w])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", c, h, w])],
                                  initializer=[numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(bias, "bias")])
        # onnx 1.12 (beside torch 1.13) knows opsets up to 17, so no checker here.
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="edgegan-make_goldens")
        model.ir_version = 8 if opset == 18 else 10
        with tempfile.TemporaryDirectory() as td:
            path = os.path.join(td, "model.onnx")
            onnx.save(model, path)
            write_case(name, {"x": x}, {"y": y}, onnx_bytes_path=path,
                       readme="Hand-built opset-%d GroupNormalization (num_groups 3, 6 channels, epsilon 1e-4%s) + "
                              "LeakyRelu(0.05), X [N,6,4,5] with mean ~5. scale and bias hold one value per %s. "
                              "Expected = numpy in float64: per (sample, group) mean and biased variance over the "
                              "group's 2 channels x 4 x 5, normalised, times scale, plus bias (%s), LeakyReLU."
                              % (opset, ", stash_type 1" if opset == 21 else "", "group" if opset == 18 else "channel",
                                 "each group's value repeated over its channels" if opset == 18 else "per channel"))
        record(name, {"x": x}, {"y": y})


def make_torch_cases():
    torch.manual_seed(1)
    m = GK3S2OutpadNonsquare()
    torch_case("g_k3s2_outpad_nonsquare", m, {"z": torch.randn(3, 12)}, "image", 11,
               "Linear+view to 8x3x5, ConvT k3 s2 p1 op1 (->6x10) + BN + ReLU, "
               "ConvT k5 s3 p2 op2 (->18x30) + Tanh. Non-square maps, opset 11.", seed=1)

    torch.manual_seed(2)
    m = GK5K4LeakySigmoid()
    torch_case("g_k5_k4_leaky_sigmoid", m, {"z": torch.randn(2, 7, 1, 1)}, "image", 13,
               "ConvT k5 s1 p0 (1->5)+BN+LeakyReLU(0.1), ConvT k4 s2 p1 (->10)+BN+LeakyReLU(0.2), "
               "ConvT k5 s2 p2 op1 (->20) with bias + Sigmoid. opset 13.", seed=2)

    torch.manual_seed(3)
    m = GStride4K7Rect()
    torch_case("g_stride4_k7_rect", m, {"z": torch.randn(2, 5, 2, 3)}, "image", 17,
               "ConvT kernel (7,3) stride (4,2) pad (3,1) output_padding (1,0) on [N,5,2,3] (->6x5) + ReLU, "
               "ConvT k2 s1 p0 to 3 channels (->7x6). opset 17.", seed=3)

    torch.manual_seed(4)
    m = CganEmbedConcatSmall()
    torch_case("cgan_embed_concat_small", m,
               {"z": torch.randn(4, 6), "label": torch.tensor([0, 3, 4, 3], dtype=torch.int64)},
               "image", 13,
               "Embedding(5,4)(label) concat z -> Linear(10,24) -> BatchNorm1d -> ReLU -> "
               "view(x.size(0),6,2,2) (Shape/Gather/Concat shape arithmetic) -> ConvT k4 s2 p1 + ReLU "
               "-> ConvT k3 s3 + Tanh (->12x12). opset 13.", seed=4)

    torch.manual_seed(5)
    m = DConvDilatedFlatten()
    torch_case("d_conv_dilated_flatten", m, {"image": torch.randn(3, 3, 13, 11)}, "logit", 13,
               "Discriminator-like: Conv k4 s2 p1 (13x11->6x5)+LeakyReLU, Conv k3 p2 dilation 2 no-bias+BN+LeakyReLU, "
               "Conv k3 s2 (->2x2)+ReLU, flatten, Linear(16,1), Sigmoid. opset 13. Exported with "
               "TrainingMode.PRESERVE (model in eval mode) so Conv+BatchNormalization stay separate nodes.",
               seed=5, keep_bn=True)

    # conv_transpose2d_dilation2: PyTorch can export this ConvTranspose directly.
    torch.manual_seed(6)
    m = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1, dilation=2)
    torch_case("conv_transpose2d_dilation2", m, {"x": torch.randn(2, 3, 4, 4)}, "y", 13,
               "Single ConvTranspose: W [3,2,3,3], strides 2, dilations 2, pads [1,1,1,1], "
               "output_padding [1,1] (4x4 -> 10x10). Exported from torch.nn.ConvTranspose2d.", seed=6)

    torch.manual_seed(7)
    m = DExamplesSqueeze()
    torch_case("d_examples_squeeze_opset17", m, {"image": torch.randn(3, 3, 32, 32)}, "prob", 17,
               "pytorch/examples DCGAN discriminator (ndf 4, RGB 32x32) ending in .view(-1,1).squeeze(1): at "
               "opset 17 the exporter emits Shape/Gather/Equal/If for the squeeze, which the converter folds "
               "(If with a constant condition is inlined). Output is 1-D [N].", seed=7, keep_bn=True)

    torch.manual_seed(8)
    m = CganMlpLabelFirst()
    torch_case("cgan_mlp_label_first", m,
               {"noise": torch.randn(4, 8), "labels": torch.tensor([3, 1, 9, 0], dtype=torch.int64)}, "img", 12,
               "PyTorch-GAN style MLP cGAN: cat(Embedding(10,10)(labels), noise) on axis -1, Linear+LeakyReLU, "
               "Linear+BatchNorm1d(eps 0.8)+LeakyReLU, Linear+Tanh, view(size(0),1,6,6). opset 12.", seed=8)


    torch.manual_seed(9)
    m = SplitSliceCrop()
    torch_case("split_slice_crop", m, {"x": torch.randn(2, 3, 9, 10)}, "y", 13,
               "torch.chunk on channels (Split), crops x[:, :, 1:-1, 1:-1] and a step-2 slice (Slice on run-time "
               "tensors over two axes), torch.split along H with unequal parts, re-joined by Concat. opset 13.", seed=9)

# ----------------------------------------------------------------------------- grouped / depthwise
class InvertedResidualNoSkip(nn.Module):
    """AnimeGANv2-style inverted residual block (its norms here BatchNorm, which the converter
    folds into the grouped weights): 1x1 expand conv -> depthwise 3x3 -> 1x1 project, LeakyReLU(0.2).
    No residual add (the engine has no Add yet)."""
    def __init__(self, c=8, expand=2):
        super().__init__()
        h = c * expand
        self.expand = nn.Conv2d(c, h, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(h)
        self.dw = nn.Conv2d(h, h, 3, padding=1, groups=h, bias=False)
        self.bn2 = nn.BatchNorm2d(h)
        self.project = nn.Conv2d(h, c, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(c)

    def forward(self, x):
        x = F.leaky_relu(self.bn1(self.expand(x)), 0.2)
        x = F.leaky_relu(self.bn2(self.dw(x)), 0.2)
        return self.bn3(self.project(x))


class GroupedConvStack(nn.Module):
    """Grouped convolutions: groups 4 (2 inputs, 8 outputs per group) + LeakyReLU, groups 2 (16 inputs per
    group) + ReLU, depthwise multiplier 2 with stride 2, dilation 2 and bias + Tanh."""
    def __init__(self):
        super().__init__()
        self.g4 = nn.Conv2d(8, 32, 3, padding=1, groups=4)
        self.g2 = nn.Conv2d(32, 16, 1, groups=2, bias=False)
        self.dw = nn.Conv2d(16, 32, 3, stride=2, padding=2, dilation=2, groups=16)

    def forward(self, x):
        x = F.leaky_relu(self.g4(x), 0.2)
        x = F.relu(self.g2(x))
        return torch.tanh(self.dw(x))


class GroupedConvTransposeStack(nn.Module):
    """Grouped transposed convolutions: ConvTranspose2d groups 2 k4 s2 p1 (8->12) + BN + ReLU,
    then groups 4 k3 s1 p1 with bias (12->8, 2 outputs per group: the narrow path) + Tanh."""
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(8, 12, 4, stride=2, padding=1, groups=2, bias=False)
        self.bn = nn.BatchNorm2d(12)
        self.head = nn.ConvTranspose2d(12, 8, 3, stride=1, padding=1, groups=4)

    def forward(self, x):
        return torch.tanh(self.head(F.relu(self.bn(self.up(x)))))


def make_group_cases():
    torch.manual_seed(21)
    m = InvertedResidualNoSkip()
    torch_case("inverted_residual_depthwise", m, {"x": torch.randn(2, 8, 9, 7)}, "y", 13,
               "AnimeGANv2-style inverted residual block without the skip: Conv 1x1 8->16 + BN + LeakyReLU(0.2), "
               "depthwise Conv 3x3 p1 groups 16 + BN + LeakyReLU(0.2), Conv 1x1 16->8 + BN. Exported with "
               "TrainingMode.PRESERVE (eval mode) so the BatchNorms fold in the converter (grouped weights). opset 13.",
               seed=21, keep_bn=True)

    torch.manual_seed(22)
    m = GroupedConvStack()
    torch_case("conv_grouped_depthwise_mult2", m, {"x": torch.randn(2, 8, 11, 10)}, "y", 13,
               "Conv 3x3 p1 groups 4 (8->32) + LeakyReLU(0.2), Conv 1x1 groups 2 (32->16, no bias) + ReLU, "
               "depthwise Conv 3x3 stride 2 pad 2 dilation 2 groups 16 multiplier 2 (16->32) + bias + Tanh. opset 13.",
               seed=22)

    torch.manual_seed(23)
    m = GroupedConvTransposeStack()
    torch_case("conv_transpose2d_grouped", m, {"x": torch.randn(2, 8, 5, 4)}, "y", 13,
               "ConvTranspose 4x4 stride 2 pad 1 groups 2 (8->12, 5x4 -> 10x8) + BN + ReLU, "
               "ConvTranspose 3x3 pad 1 groups 4 (12->8) + bias + Tanh. Exported with TrainingMode.PRESERVE "
               "(eval mode) so the BatchNorm folds in the converter. opset 13.", seed=23, keep_bn=True)


# ----------------------------------------------------------------------------- element-wise math (Binary, PRelu)
class BinaryResidualBlock(nn.Module):
    """conv -> ReLU -> conv + skip (equal shapes), times a per-channel run-time style,
    minus a per-sample run-time scalar, plus a run-time [N,C,1,W] row (general broadcast),
    divided by a run-time tensor, times a constant [H,W] mask, then c / x and c - x."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(4, 4, 3, padding=1)
        self.c2 = nn.Conv2d(4, 4, 3, padding=1)
        self.rows = nn.Conv2d(4, 4, (6, 1))          # [N,4,6,5] -> [N,4,1,5]
        self.style = nn.Linear(3, 4)
        self.gate = nn.Linear(3, 1)
        self.register_buffer("mask", torch.rand(6, 5) + 0.5)

    def forward(self, x, z):
        r = self.c2(F.relu(self.c1(x)))
        h = x + r                                     # the residual add
        h = h * self.style(z).view(-1, 4, 1, 1)       # per-channel run-time operand
        h = h - self.gate(z).view(-1, 1, 1, 1)        # per-sample scalar
        h = h + self.rows(x)                          # [N,C,1,W]: the strided path
        h = h / (1.5 + torch.sigmoid(r))              # two run-time tensors
        h = h * self.mask                             # constant [H,W] operand
        return 2.0 / (3.0 + h * h) - h                # c / x (not affine), x * x, c - x


class BinaryEsrganHead(nn.Module):
    """ESRGAN-style residual scaling x + 0.2 * f(x) (the Mul folds into the conv), then
    an image head conv -> tanh -> (t + 1) / 2 (the Add and Div fold into one ChannelAffine)."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 5, 3, padding=1)
        self.c2 = nn.Conv2d(5, 5, 3, padding=1)
        self.c3 = nn.Conv2d(5, 5, 3, padding=1)
        self.head = nn.Conv2d(5, 3, 3, padding=1)

    def forward(self, x):
        f = self.c1(x)
        r = self.c3(F.leaky_relu(self.c2(f), 0.2))
        h = f + r * 0.2
        return (torch.tanh(self.head(h)) + 1) / 2


class PReluBlock(nn.Module):
    """Linear -> PReLU per feature -> view -> conv -> PReLU per channel -> conv ->
    PReLU with one shared slope, plus a skip."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5 * 3 * 4)
        self.p0 = nn.PReLU(5 * 3 * 4, init=0.1)
        self.c1 = nn.Conv2d(5, 7, 3, padding=1)
        self.p1 = nn.PReLU(7)
        self.c2 = nn.Conv2d(7, 5, 3, padding=1)
        self.p2 = nn.PReLU()
        with torch.no_grad():
            self.p0.weight.uniform_(-0.5, 0.5)
            self.p1.weight.uniform_(-0.5, 0.5)
            self.p2.weight.fill_(0.3)

    def forward(self, z):
        x = self.p0(self.fc(z)).view(-1, 5, 3, 4)
        return self.p2(self.c2(self.p1(self.c1(x)))) + x


class ActivationsAfterConv(nn.Module):
    """One conv branch per new activation, concatenated: Elu, Selu, Hardtanh and ReLU6
    (Clip), Hardsigmoid, Softplus fuse into their conv; Hardswish and Mish (exported as
    x * tanh(softplus(x))) are Elementwise ops; a Softplus whose conv output has another
    reader is an Elementwise op too."""
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 2, 3, padding=1) for _ in range(9)])

    def forward(self, x):
        c = [conv(x) for conv in self.convs]
        return torch.cat([F.elu(c[0], 0.7), F.selu(c[1]), F.hardtanh(c[2], -0.5, 1.2), F.relu6(c[3] * 4),
                          F.hardsigmoid(c[4] * 3), F.hardswish(c[5] * 3), F.softplus(c[6]), F.mish(c[7]),
                          F.softplus(c[8]), c[8]], 1)


def make_math_cases():
    torch.manual_seed(31)
    torch_case("binary_residual_block", BinaryResidualBlock(), {"x": torch.randn(2, 4, 6, 5), "z": torch.randn(2, 3)}, "y", 13,
               "Add/Sub/Mul/Div of run-time tensors: residual add (equal shapes), per-channel and per-sample "
               "run-time operands, a [N,C,1,W] operand, division by a run-time tensor, a constant [H,W] mask, "
               "c / x, x * x and c - x. opset 13.", seed=31)
    torch.manual_seed(32)
    torch_case("binary_esrgan_head", BinaryEsrganHead(), {"x": torch.randn(2, 3, 7, 6)}, "image", 13,
               "ESRGAN residual scaling f + 0.2 * r (the constant Mul folds into the conv) and a "
               "(tanh(x) + 1) / 2 head (Add and Div fold into one ChannelAffine). opset 13.", seed=32)
    torch.manual_seed(33)
    torch_case("prelu_block", PReluBlock(), {"z": torch.randn(3, 6)}, "y", 13,
               "Linear -> PReLU(60) on rows, conv -> PReLU(7) per channel, conv -> PReLU() shared, "
               "plus a skip. opset 13.", seed=33)
    torch.manual_seed(34)
    torch_case("activations_after_conv", ActivationsAfterConv(), {"x": torch.randn(2, 3, 5, 4)}, "y", 17,
               "Conv branches with Elu(0.7), Selu, Hardtanh(-0.5,1.2), ReLU6, Hardsigmoid, Hardswish, Softplus, "
               "Mish (x*tanh(softplus(x)) at opset 17) and a Softplus beside its unactivated input, "
               "concatenated on channels. opset 17.", seed=34)


# ----------------------------------------------------------------------------- spatial ops
class PadBlocks(nn.Module):
    """CycleGAN-style front (ReflectionPad2d(3) + Conv k7), a ZeroPad2d that the converter
    folds into the stride-2 Conv after it, a ReplicationPad2d (edge) + Conv, and a constant
    F.pad with value 0.3 that also crops (negative pads)."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 6, 7)
        self.c2 = nn.Conv2d(6, 6, 3, stride=2)
        self.c3 = nn.Conv2d(6, 4, 3)

    def forward(self, x):
        # Smooth activations: the trainer's finite differences over this case cross no kinks.
        x = torch.tanh(self.c1(nn.ReflectionPad2d(3)(x)))
        x = torch.sigmoid(self.c2(nn.ZeroPad2d((1, 2, 0, 1))(x)))
        x = self.c3(nn.ReplicationPad2d((2, 1, 1, 0))(x))
        return torch.tanh(F.pad(x, (1, -1, 2, 0), value=0.3))


class SrganUpsample(nn.Module):
    """SRGAN-style upsampling block: Conv(C -> 4C, k3 p1) -> PixelShuffle(2) -> LeakyReLU(0.2)
    (PReLU in the paper), twice. torch exports PixelShuffle as DepthToSpace (mode CRD)."""
    def __init__(self, c=4):
        super().__init__()
        self.c1 = nn.Conv2d(c, 4 * c, 3, padding=1)
        self.c2 = nn.Conv2d(c, 4 * c, 3, padding=1)
        self.out = nn.Conv2d(c, 3, 3, padding=1)

    def forward(self, x):
        x = F.leaky_relu(F.pixel_shuffle(self.c1(x), 2), 0.2)
        x = F.leaky_relu(F.pixel_shuffle(self.c2(x), 2), 0.2)
        return torch.tanh(self.out(x))


class UnshuffleDcr(nn.Module):
    """PixelUnshuffle(2) (exported as Reshape/Transpose/Reshape, CRD order), a 1x1 Conv, and a
    DCR depth-to-space written out as view/permute/reshape (ONNX DepthToSpace's own order)."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(12, 8, 1)
        self.c2 = nn.Conv2d(2, 3, 3, padding=1)

    def forward(self, x):
        x = torch.tanh(self.c1(F.pixel_unshuffle(x, 2)))           # [N,3,6,4] -> [N,12,3,2] -> [N,8,3,2]
        h, w = x.shape[2], x.shape[3]
        x = x.view(-1, 2, 2, 2, h, w).permute(0, 3, 4, 1, 5, 2).reshape(-1, 2, h * 2, w * 2)
        return torch.sigmoid(self.c2(x))


class FastStyleUpsample(nn.Module):
    """fast-neural-style's UpsampleConvLayer, twice: nearest x2 (nn.Upsample: Resize nearest,
    asymmetric, floor), ReflectionPad2d(1), Conv k3."""
    def __init__(self):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.c1 = nn.Conv2d(4, 6, 3)
        self.c2 = nn.Conv2d(6, 3, 3)

    def forward(self, x):
        x = torch.tanh(self.c1(nn.ReflectionPad2d(1)(self.up(x))))
        return torch.sigmoid(self.c2(nn.ReflectionPad2d(1)(self.up(x))))


class BilinearBoth(nn.Module):
    """Bilinear x2 with align_corners=False (half_pixel), then to a fixed odd size with
    align_corners=True (sizes from Shape/Slice/Concat), then bilinear downscale x0.5."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 5, 3, padding=1)
        self.c2 = nn.Conv2d(5, 2, 3, padding=1)

    def forward(self, x):
        x = F.interpolate(torch.tanh(self.c1(x)), scale_factor=2, mode="bilinear", align_corners=False)
        x = F.interpolate(x, size=(13, 11), mode="bilinear", align_corners=True)
        x = F.interpolate(x, scale_factor=0.5, mode="bilinear", align_corners=False)
        return torch.tanh(self.c2(x))


class Bicubic(nn.Module):
    """Bicubic x1.5 (align_corners=False: half_pixel, A = -0.75) and x2 with align_corners=True."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        x = F.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=False)
        x = torch.tanh(self.c1(x))
        return F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=True)


class MelganPad1d(nn.Module):
    """MelGAN-style 1-D front: ReflectionPad1d(3) + Conv1d k7, then a zero ConstantPad1d that
    folds into the next Conv1d's pads, and a ReplicationPad1d (edge) at the end."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 6, 7)
        self.c2 = nn.Conv1d(6, 3, 3, stride=2)

    def forward(self, mel):
        x = torch.tanh(self.c1(nn.ReflectionPad1d(3)(mel)))
        x = torch.tanh(self.c2(nn.ConstantPad1d((2, 1), 0.0)(x)))
        return nn.ReplicationPad1d((1, 2))(x)


def make_spatial_cases():
    torch.manual_seed(25)
    torch_case("pad_reflect_zero_edge", PadBlocks(), {"x": torch.randn(2, 3, 9, 8)}, "y", 13,
               "ReflectionPad2d(3)+Conv k7+Tanh, ZeroPad2d((1,2,0,1)) (folds into the next Conv's pads)+Conv k3 s2+"
               "Sigmoid, ReplicationPad2d((2,1,1,0))+Conv k3, F.pad((1,-1,2,0), value=0.3) (crops the right "
               "column)+Tanh. opset 13.", seed=25)

    # (A small map and this seed keep the LeakyReLU kinks away from GoldenTraining's finite differences.)
    torch.manual_seed(31)
    torch_case("srgan_pixel_shuffle", SrganUpsample(), {"x": torch.randn(2, 4, 2, 3)}, "y", 11,
               "SRGAN-style upsampling, twice: Conv(4->16, k3 p1) -> PixelShuffle(2) (DepthToSpace CRD) -> "
               "LeakyReLU(0.2); then Conv(4->3, k3 p1) + Tanh. 2x3 -> 8x12. opset 11.", seed=31)

    torch.manual_seed(27)
    torch_case("pixel_unshuffle_dcr", UnshuffleDcr(), {"x": torch.randn(2, 3, 6, 4)}, "y", 13,
               "PixelUnshuffle(2) (Reshape/Transpose/Reshape: SpaceToDepth in CRD order) -> Conv 1x1 (12->8) + Tanh -> "
               "view(-1,2,2,2,h,w).permute(0,3,4,1,5,2).reshape (DepthToSpace DCR, block 2) -> Conv k3 p1 + Sigmoid. "
               "opset 13.", seed=27)

    torch.manual_seed(32)
    torch_case("pad1d_reflect_conv1d", MelganPad1d(), {"mel": torch.randn(2, 4, 10)}, "y", 13,
               "MelGAN-style 1-D front on [N,4,10]: ReflectionPad1d(3)+Conv1d k7+Tanh, ConstantPad1d((2,1), 0) folded "
               "into the stride-2 Conv1d k3 after it (+Tanh), ReplicationPad1d((1,2)). NCL maps run as height-1 NHWC "
               "maps. opset 13.", seed=32)

    torch.manual_seed(28)
    torch_case("resize_nearest_upsample_conv", FastStyleUpsample(), {"x": torch.randn(2, 4, 3, 5)}, "y", 11,
               "fast-neural-style UpsampleConvLayer twice: nn.Upsample(scale 2, nearest) (Resize nearest asymmetric floor) "
               "-> ReflectionPad2d(1) -> Conv k3 (+Tanh, +Sigmoid). 3x5 -> 12x20. opset 11.", seed=28)

    torch.manual_seed(29)
    torch_case("resize_bilinear", BilinearBoth(), {"x": torch.randn(2, 3, 5, 4)}, "y", 13,
               "Conv+Tanh, F.interpolate bilinear x2 align_corners=False (half_pixel), bilinear to size (13,11) "
               "align_corners=True (sizes from Shape/Slice/Concat), bilinear x0.5, Conv+Tanh. opset 13.", seed=29)

    torch.manual_seed(30)
    torch_case("resize_bicubic", Bicubic(), {"x": torch.randn(2, 3, 5, 6)}, "y", 17,
               "F.interpolate bicubic x1.5 align_corners=False (Resize cubic half_pixel, A=-0.75; 5x6 -> 7x9), Conv+Tanh, "
               "bicubic x2 align_corners=True (-> 14x18). opset 17.", seed=30)


# ----------------------------------------------------------------------------- GridSample
class GridSampleAll(nn.Module):
    """x sampled by F.grid_sample at a grid computed from x, in one mode with each padding x
    align_corners, the six results concatenated along the channels. The grid is the tanh of
    a stride-(1,2) conv, x1.6 (some points outside the map); for nearest, whose pick jumps
    at half pixels, it is instead random pixel centres (some outside the map) plus at most
    0.1 pixel of that tanh, so rounding anywhere (fp16 storage too) picks the same pixels."""

    def __init__(self, mode, h, w, ho, wo):
        super().__init__()
        self.mode = mode
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.offset = nn.Conv2d(3, 2, 3, stride=(1, 2), padding=1)  # [N, 2, ho, wo]
        g = torch.Generator().manual_seed(44)
        cx = torch.randint(-2, w + 2, (ho, wo), generator=g).float()
        cy = torch.randint(-2, h + 2, (ho, wo), generator=g).float()
        for align in (0, 1):
            nx = 2 * cx / (w - 1) - 1 if align else (2 * cx + 1) / w - 1
            ny = 2 * cy / (h - 1) - 1 if align else (2 * cy + 1) / h - 1
            self.register_buffer("centres%d" % align, torch.stack([nx, ny])[None])
        self.reach = 0.1 * 2 / w if mode == "nearest" else 1.6

    def forward(self, x):
        h = self.conv(x)
        t = torch.tanh(self.offset(x)) * self.reach
        ys = []
        for p in ("zeros", "border", "reflection"):
            for a in (False, True):
                g = t + getattr(self, "centres%d" % a) if self.mode == "nearest" else t
                ys.append(F.grid_sample(h, g.permute(0, 2, 3, 1), mode=self.mode, padding_mode=p, align_corners=a))
        return torch.cat(ys, 1)


def make_grid_sample_cases():
    for k, mode in enumerate(("bilinear", "nearest", "bicubic")):
        torch.manual_seed(40 + k)
        torch_case("grid_sample_" + mode, GridSampleAll(mode, 6, 7, 6, 4), {"x": torch.randn(2, 3, 6, 7)}, "y", 16,
                   "F.grid_sample %s of a 3x3 conv's map at a run-time grid (tanh of a stride-(1,2) conv, x1.6; nearest: "
                   "random pixel centres, some outside, plus at most 0.1 pixel of it), permuted to [N, 6, 4, 2], with "
                   "padding zeros/border/reflection x align_corners False/True, the six concatenated (channels 0-2, "
                   "3-5, ... in that order). opset 16." % mode, seed=40 + k)


# ----------------------------------------------------------------------------- hand-built ONNX
def make_onnx_cases():
    # conv_transpose2d_asym_pads: pads [top,left,bottom,right] = [0,1,2,0].
    g = torch.Generator().manual_seed(10)
    x = torch.randn(2, 3, 5, 4, generator=g)
    w = torch.randn(3, 4, 4, 3, generator=g) * 0.3
    b = torch.randn(4, generator=g)
    pads = [0, 1, 2, 0]
    y = conv_transpose_reference(x, w, b, (2, 2), pads[:2], pads[2:])
    # full = (5-1)*2+4 = 12 x (4-1)*2+3 = 9 -> rows [0:10], cols [1:9] -> 10x8
    node = helper.make_node("ConvTranspose", ["x", "W", "B"], ["y"], kernel_shape=[4, 3],
                            strides=[2, 2], pads=pads)
    onnx_case("conv_transpose2d_asym_pads", node, x, {"W": w, "B": b}, (2, 4, 10, 8), y,
              "Hand-built ConvTranspose, X [N,3,5,4], W [3,4,4,3], B [4], strides [2,2], "
              "asymmetric pads [0,1,2,0] (ONNX order [top,left,bottom,right]).\n"
              "Expected = conv_transpose2d(X,W,B,stride=2,padding=0) (12x9) cropped to rows [0:10], cols [1:9] -> 10x8.")

    # conv_transpose2d_output_shape (+ _odd variant): explicit output_shape, no pads, no kernel_shape.
    for name, out_hw, seed in [("conv_transpose2d_output_shape", [7, 8], 11), ("conv_transpose2d_output_shape_odd", [6, 6], 12)]:
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(1, 2, 3, 3, generator=g)
        w = torch.randn(2, 3, 3, 3, generator=g) * 0.3
        pb, pe = onnx_auto_pads((3, 3), (3, 3), (2, 2), out_hw, "NOTSET")
        y = conv_transpose_reference(x, w, None, (2, 2), pb, pe)
        node = helper.make_node("ConvTranspose", ["x", "W"], ["y"], strides=[2, 2], output_shape=out_hw)
        onnx_case(name, node, x, {"W": w}, (1, 3) + tuple(out_hw), y,
                  "Hand-built ConvTranspose, X [N,2,3,3], W [2,3,3,3], no bias, strides [2,2], "
                  "output_shape %s, no pads and no kernel_shape attribute (infer from W).\n\n"
                  "ONNX spec (auto_pad NOTSET, output_shape given), per spatial axis, Python floor division:\n"
                  "    total = stride*(in-1) + output_padding + ((k-1)*dilation+1) - output_shape\n"
                  "    pads_begin = total - total//2 ; pads_end = total//2\n"
                  "Here full size = 2*(3-1)+3 = 7, so total = %s -> pads_begin %s, pads_end %s.\n"
                  "A negative pad means extra output rows/cols with no kernel contribution (zeros; bias if there were one), "
                  "e.g. total -1 -> begin 0, end -1: one zero column appended at the right. This matches the ONNX "
                  "backend test test_convtranspose_output_shape (output_shape [10,8] with total -1 on both axes).\n"
                  "Note: some runtimes are believed to split odd totals differently for NOTSET (not verified here); "
                  "this case follows the ONNX spec text exactly.\n"
                  "Expected = conv_transpose2d(X,W,stride=2,padding=0), then crop/zero-extend by those pads."
                  % (out_hw, [7 - v for v in out_hw], pb, pe))

    # conv_transpose2d_auto_pad_same_upper: output = in*stride.
    g = torch.Generator().manual_seed(13)
    x = torch.randn(1, 2, 4, 5, generator=g)
    w = torch.randn(2, 3, 3, 3, generator=g) * 0.3
    b = torch.randn(3, generator=g)
    out_hw = [4 * 2, 5 * 2]
    pb, pe = onnx_auto_pads((4, 5), (3, 3), (2, 2), out_hw, "SAME_UPPER")
    y = conv_transpose_reference(x, w, b, (2, 2), pb, pe)
    node = helper.make_node("ConvTranspose", ["x", "W", "B"], ["y"], kernel_shape=[3, 3],
                            strides=[2, 2], auto_pad="SAME_UPPER")
    onnx_case("conv_transpose2d_auto_pad_same_upper", node, x, {"W": w, "B": b}, (1, 3) + tuple(out_hw), y,
              "Hand-built ConvTranspose, X [N,2,4,5], W [2,3,3,3], B [3], strides [2,2], auto_pad SAME_UPPER.\n\n"
              "ONNX spec: output = in*stride per axis (8x10);\n"
              "    total = stride*(in-1) + output_padding + ((k-1)*dilation+1) - output\n"
              "    SAME_UPPER: pads_begin = total//2 ; pads_end = total - total//2 (odd extra at the end)\n"
              "Here full = 9x11, total = 1 on both axes -> pads_begin %s, pads_end %s, i.e. keep rows [0:8], cols [0:10].\n"
              "Expected = conv_transpose2d(X,W,B,stride=2,padding=0) cropped accordingly." % (pb, pe))


# ----------------------------------------------------------------------------- audio (1-D) and pools
class HifiganChain(nn.Module):
    """HiFi-GAN-style 1-D generator (own small definition): mel [N,80,T] -> Conv1d k7 ->
    [LeakyReLU(0.1) -> ConvTranspose1d(k=2s, s, p=s/2) -> dilated Conv1d k3 blocks] x2 ->
    Conv1d k7 -> Tanh -> waveform [N,1,T*16]. residual=False chains the dilated convs;
    residual=True adds each block's input back (x = x + conv(lrelu(x))), as HiFi-GAN's ResBlock."""

    def __init__(self, residual):
        super().__init__()
        self.residual = residual
        self.pre = nn.Conv1d(80, 32, 7, padding=3)
        self.ups = nn.ModuleList([nn.ConvTranspose1d(32, 16, 16, stride=8, padding=4),
                                  nn.ConvTranspose1d(16, 8, 4, stride=2, padding=1)])
        self.blocks = nn.ModuleList([
            nn.ModuleList([nn.Conv1d(16, 16, 3, dilation=d, padding=d) for d in (1, 3, 5)]),
            nn.ModuleList([nn.Conv1d(8, 8, 3, dilation=d, padding=d) for d in (1, 3)])])
        self.post = nn.Conv1d(8, 1, 7, padding=3)

    def forward(self, mel):
        x = self.pre(mel)
        for up, convs in zip(self.ups, self.blocks):
            x = up(F.leaky_relu(x, 0.1))
            for conv in convs:
                y = conv(F.leaky_relu(x, 0.1))
                x = x + y if self.residual else y
        return torch.tanh(self.post(F.leaky_relu(x, 0.1)))


class MelganBlock(nn.Module):
    """MelGAN-style generator stage: Conv1d k7 -> LeakyReLU(0.2) -> ConvTranspose1d k8 s4 p2 ->
    LeakyReLU -> BatchNorm1d (cannot fold into the activation's output: a ChannelAffine on a
    rank-3 map) -> dilated Conv1d k3 d3 -> LeakyReLU -> Conv1d k7 -> Tanh."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(20, 16, 7, padding=3), nn.LeakyReLU(0.2),
            nn.ConvTranspose1d(16, 8, 8, stride=4, padding=2), nn.LeakyReLU(0.2), nn.BatchNorm1d(8),
            nn.Conv1d(8, 8, 3, dilation=3, padding=3), nn.LeakyReLU(0.2),
            nn.Conv1d(8, 1, 7, padding=3), nn.Tanh())

    def forward(self, mel):
        return self.net(mel)


class MelganPoolDiscriminator(nn.Module):
    """MelGAN-style waveform discriminator with 1-D pools: AvgPool1d(4, 2, 1,
    count_include_pad=False) downsampling, Conv1d k15 + LeakyReLU, strided Conv1d,
    MaxPool1d(3, 2, 1, ceil_mode), Conv1d k3 -> scores [N,1,L']."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.AvgPool1d(4, stride=2, padding=1, count_include_pad=False),
            nn.Conv1d(1, 8, 15, padding=7), nn.LeakyReLU(0.2),
            nn.Conv1d(8, 16, 11, stride=4, padding=5), nn.LeakyReLU(0.2),
            nn.MaxPool1d(3, stride=2, padding=1, ceil_mode=True),
            nn.Conv1d(16, 1, 3, padding=1))

    def forward(self, audio):
        return self.net(audio)


class PatchganPool(nn.Module):
    """PatchGAN discriminator (own small definition): Conv k4 s2 + LeakyReLU(0.2), Conv k4 s2 +
    BatchNorm (eval) + LeakyReLU, MaxPool 2x2 s2 (ceil_mode), BatchNorm after the pool (a
    ChannelAffine: nothing to fold into), AvgPool 3x3 s1 p1 (count_include_pad=False),
    Conv k3 p1 -> patch scores. gap_head: 4 channels, then LeakyReLU -> GlobalMaxPool -> 1x1 Conv ->
    GlobalAveragePool -> Flatten -> [N,4]."""

    def __init__(self, gap_head):
        super().__init__()
        self.gap_head = gap_head
        self.net = nn.Sequential(
            nn.Conv2d(3, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
            nn.Conv2d(8, 16, 4, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.LeakyReLU(0.2),
            nn.MaxPool2d(2, stride=2, ceil_mode=True), nn.BatchNorm2d(16),
            nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False),
            nn.Conv2d(16, 1 if not gap_head else 4, 3, padding=1))
        if gap_head:
            self.head = nn.Sequential(nn.LeakyReLU(0.2), nn.AdaptiveMaxPool2d(1), nn.Conv2d(4, 4, 1),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, image):
        x = self.net(image)
        return self.head(x) if self.gap_head else x


AUDIO_POOL_CASES = ["hifigan_1d_chain", "melgan_block_conv_transpose1d_s4", "melgan_d_pool1d", "patchgan_pool",
                    "patchgan_gap_head", "avgpool_ceil_count_include_pad"]


def make_audio_pool_cases(pending_dir=None):
    torch.manual_seed(21)
    m = HifiganChain(residual=False)
    torch_case("hifigan_1d_chain", m, {"mel": torch.randn(2, 80, 6)}, "audio", 13,
               "HiFi-GAN-style 1-D generator, residual adds replaced by a chain: mel [N,80,6] -> Conv1d(80,32,k7,p3) -> "
               "LeakyReLU(0.1) -> ConvTranspose1d(32,16,k16,s8,p4) (->48) -> Conv1d k3 dilations 1,3,5 with LeakyReLU -> "
               "ConvTranspose1d(16,8,k4,s2,p1) (->96) -> Conv1d k3 dilations 1,3 -> Conv1d(8,1,k7,p3) -> Tanh. opset 13.",
               seed=21)

    torch.manual_seed(22)
    m = MelganBlock()
    torch_case("melgan_block_conv_transpose1d_s4", m, {"mel": torch.randn(3, 20, 5)}, "audio", 13,
               "MelGAN-style stage: Conv1d(20,16,k7,p3)+LeakyReLU(0.2), ConvTranspose1d(16,8,k8,s4,p2) (5->20)+LeakyReLU, "
               "BatchNorm1d on the rank-3 map (ChannelAffine), Conv1d k3 d3 p3 + LeakyReLU, Conv1d(8,1,k7,p3)+Tanh. opset 13.",
               seed=22)

    torch.manual_seed(23)
    m = MelganPoolDiscriminator()
    torch_case("melgan_d_pool1d", m, {"audio": torch.randn(2, 1, 67)}, "score", 13,
               "MelGAN-style waveform discriminator: AvgPool1d(4,2,1,count_include_pad=False) (67->33), Conv1d k15 + "
               "LeakyReLU, Conv1d k11 s4 p5 (->9) + LeakyReLU, MaxPool1d(3,2,1,ceil_mode) (->5), Conv1d(16,1,k3,p1). opset 13.",
               seed=23)

    torch.manual_seed(24)
    m = PatchganPool(gap_head=False)
    torch_case("patchgan_pool", m, {"image": torch.randn(2, 3, 22, 26)}, "patches", 13,
               "PatchGAN-style discriminator: Conv k4 s2 p1 + LeakyReLU, Conv k4 s2 p1 + BatchNorm (folded) + LeakyReLU, "
               "MaxPool 2x2 s2 ceil_mode (5x6 -> 3x3), BatchNorm after the pool (ChannelAffine), AvgPool 3x3 s1 p1 "
               "count_include_pad=False, Conv k3 p1 -> [N,1,3,3]. opset 13.", seed=24)

    torch.manual_seed(25)
    m = PatchganPool(gap_head=True)
    torch_case("patchgan_gap_head", m, {"image": torch.randn(3, 3, 16, 16)}, "logit", 13,
               "The PatchGAN above with a global head: LeakyReLU, GlobalMaxPool, 1x1 Conv, GlobalAveragePool, "
               "Flatten -> [N,4]. opset 13.", seed=25)

    # Hand-built AveragePool with count_include_pad=1 and ceil_mode=1 (torch's exporter writes an explicit Pad
    # for count_include_pad with padding, so this one is built by hand).
    g = torch.Generator().manual_seed(26)
    x = torch.randn(2, 3, 7, 6, generator=g)
    y = F.avg_pool2d(x, (3, 2), stride=(2, 2), padding=(1, 1), ceil_mode=True, count_include_pad=True)
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 2], pads=[1, 1, 1, 1],
                            ceil_mode=1, count_include_pad=1)
    onnx_case("avgpool_ceil_count_include_pad", node, x, {}, tuple(y.shape), y,
              "Hand-built AveragePool, X [N,3,7,6], kernel [3,2], strides [2,2], pads [1,1,1,1], ceil_mode 1, "
              "count_include_pad 1 (divisor: the window's part inside the padded input, as PyTorch).\n"
              "Expected = torch.nn.functional.avg_pool2d(X, (3,2), 2, 1, ceil_mode=True, count_include_pad=True).")

    if pending_dir:
        # The residual variant needs the Add of two run-time tensors (another helper's op):
        # written for the integrator, not committed.
        import shutil
        from golden_util import CASES_DIR
        torch.manual_seed(21)
        m = HifiganChain(residual=True)
        torch_case("hifigan_1d_residual_needs_binary", m, {"mel": torch.randn(2, 80, 6)}, "audio", 13,
                   "HiFi-GAN-style 1-D generator with the residual adds (x = x + conv(lrelu(x))): as hifigan_1d_chain "
                   "otherwise. Needs the Add of two run-time tensors. opset 13.", seed=21)
        dst = os.path.join(pending_dir, "hifigan_1d_residual_needs_binary")
        if os.path.isdir(dst):
            shutil.rmtree(dst)
        os.makedirs(pending_dir, exist_ok=True)
        shutil.move(os.path.join(CASES_DIR, "hifigan_1d_residual_needs_binary"), dst)


# ----------------------------------------------------------------------------- sliding-channel convolution (SCC)
class SlidingChannelConv(nn.Module):
    """DSXplore's sliding-channel convolution SCC-cg-co as PyTorch code writes it (torch has no
    such op): output channel o convolves gw = cin / cg input channels starting at
    o * (gw - floor(co * gw)) mod cin, cyclically. The channel stack is gathered either with an
    index (form "gather": x[:, idx], ONNX Gather) or with channel slices joined by torch.cat
    (form "slices": a wrapping window is two slices), then a Conv with groups = cout."""
    def __init__(self, cin, cout, cg, co, form, k=1, padding=0, bias=True):
        super().__init__()
        gw = cin // cg
        stride = gw - int(np.floor(co * gw))
        self.cin, self.gw, self.form = cin, gw, form
        self.starts = [(o * stride) % cin for o in range(cout)]
        idx = [(s + j) % cin for s in self.starts for j in range(gw)]
        self.register_buffer("idx", torch.tensor(idx, dtype=torch.int64))
        self.conv = nn.Conv2d(cout * gw, cout, k, padding=padding, groups=cout, bias=bias)

    def forward(self, x):
        if self.form == "gather":
            stack = x[:, self.idx]
        else:
            parts = []
            for s in self.starts:
                e = s + self.gw
                parts += [x[:, s:e]] if e <= self.cin else [x[:, s:], x[:, :e - self.cin]]
            stack = torch.cat(parts, 1)
        return self.conv(stack)


class SlidingChannelStack(nn.Module):
    """SCC layers of one export form: cg 4 co 50% (16 -> 24, wrapping windows) + LeakyReLU(0.2),
    cg 8 co 0 k3 p1 (24 -> 12: a grouped conv) + BN + LeakyReLU(0.2), cg 1 (full-width windows,
    12 -> 8, co 50%) + Tanh."""
    def __init__(self, form):
        super().__init__()
        self.a = SlidingChannelConv(16, 24, 4, 0.5, form)
        self.b = SlidingChannelConv(24, 12, 8, 0.0, form, k=3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(12)
        self.c = SlidingChannelConv(12, 8, 1, 0.5, form)

    def forward(self, x):
        x = F.leaky_relu(self.a(x), 0.2)
        x = F.leaky_relu(self.bn(self.b(x)), 0.2)
        return torch.tanh(self.c(x))


class ChannelGatherNotSliding(nn.Module):
    """A channel gather that is not cyclic windows (a fixed permutation with repeats) feeding a
    grouped 1x1 conv, then an SCC whose windows do not start at channel 0 (a rotated table)."""
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(5)
        self.register_buffer("perm", torch.randint(0, 10, (18,), generator=g))
        self.conv = nn.Conv2d(18, 6, 1, groups=6)
        self.register_buffer("rot", torch.tensor([(1 + 2 * o + j) % 6 for o in range(6) for j in range(3)]))
        self.conv2 = nn.Conv2d(18, 6, 1, groups=6)

    def forward(self, x):
        x = F.leaky_relu(self.conv(x[:, self.perm]), 0.2)
        return self.conv2(x[:, self.rot])


class DwSccGenerator(nn.Module):
    """A compact DW+SCC generator (own definition): z [N, 16] -> Linear -> [32, 4, 4] + BN + ReLU,
    two stages of nearest x2 upsampling, depthwise 3x3 + BN + LeakyReLU(0.2), SCC + BN +
    LeakyReLU(0.2) (stage 1: cg 4 co 50%, 32 -> 32, gather form; stage 2: cg 2 co 33%, 32 -> 16,
    slice form), then Conv 3x3 16 -> 3 + Tanh: 16x16 RGB."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32 * 16)
        self.bn0 = nn.BatchNorm2d(32)
        self.dw1 = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.scc1 = SlidingChannelConv(32, 32, 4, 0.5, "gather", bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.dw2 = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.bn3 = nn.BatchNorm2d(32)
        self.scc2 = SlidingChannelConv(32, 16, 2, 0.33, "slices", bias=False)
        self.bn4 = nn.BatchNorm2d(16)
        self.head = nn.Conv2d(16, 3, 3, padding=1)

    def forward(self, z):
        x = F.relu(self.bn0(self.fc(z).view(-1, 32, 4, 4)))
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        x = F.leaky_relu(self.bn1(self.dw1(x)), 0.2)
        x = F.leaky_relu(self.bn2(self.scc1(x)), 0.2)
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        x = F.leaky_relu(self.bn3(self.dw2(x)), 0.2)
        x = F.leaky_relu(self.bn4(self.scc2(x)), 0.2)
        return torch.tanh(self.head(x))


def write_input_gradients(name, model, inputs, seed):
    """backward/: PyTorch autograd's input gradients of sum(output * output_weights), as
    make_zoo.py writes them (GoldenAutograd checks the engine's against them)."""
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


def make_scc_cases():
    for seed, form in ((41, "gather"), (42, "slices")):
        torch.manual_seed(seed)
        torch_case("scc_" + form, SlidingChannelStack(form), {"x": torch.randn(2, 16, 7, 6)}, "y", 13,
                   "Sliding-channel convolutions in the channel-stack export form '%s' (%s) feeding Conv "
                   "groups = Cout: SCC cg4 co50%% 16->24 (wrapping windows) + LeakyReLU(0.2), SCC cg8 co0 k3 p1 "
                   "24->12 + BN + LeakyReLU(0.2), SCC cg1 co50%% 12->8 (full-width windows) + Tanh. The converter "
                   "lowers each to one SlidingChannelConv. Exported with TrainingMode.PRESERVE (eval mode). opset 13."
                   % (form, "x[:, idx]: Gather" if form == "gather" else "channel Slices + Concat"), seed=seed, keep_bn=True)
    torch.manual_seed(43)
    torch_case("scc_gather_not_sliding", ChannelGatherNotSliding(), {"x": torch.randn(2, 10, 5, 4)}, "y", 13,
               "Channel gathers that are not sliding-channel windows (a permutation with repeats; windows not "
               "starting at channel 0) feeding grouped 1x1 convs: converted as Slices + Concat and Conv2D. opset 13.",
               seed=43)
    torch.manual_seed(44)
    m = DwSccGenerator()
    inputs = {"z": torch.randn(3, 16)}
    torch_case("scc_dw_generator", m, inputs, "image", 13,
               "Compact DW+SCC generator (own definition): Linear 16 -> 32x4x4 + BN + ReLU, twice nearest x2 + "
               "depthwise 3x3 + BN + LeakyReLU(0.2) + SCC + BN + LeakyReLU(0.2) (cg4 co50% 32->32 as Gather; "
               "cg2 co33% 32->16 as Slices + Concat), Conv 3x3 16->3 + Tanh: 16x16. Exported with "
               "TrainingMode.PRESERVE (eval mode). opset 13. backward/ holds PyTorch's input gradients of "
               "sum(image * backward/output_weights).", seed=44, keep_bn=True)
    write_input_gradients("scc_dw_generator", m, inputs, 45)


def main():
    # Arguments: groups to regenerate (torch, onnx, groups, audio_pool, norm, math, spatial, scc); none = all.
    # --pending DIR also writes the cases that need ops not yet on this branch into DIR.
    args = sys.argv[1:]
    pending = None
    if "--pending" in args:
        i = args.index("--pending")
        pending = args[i + 1]
        del args[i:i + 2]
    groups = set(args) or {"torch", "onnx", "groups", "audio_pool", "norm", "math", "spatial", "scc", "grid_sample"}
    if "torch" in groups:
        make_torch_cases()
    if "onnx" in groups:
        make_onnx_cases()
    if "groups" in groups or "make_group_cases" in groups:
        make_group_cases()
    if "audio_pool" in groups:
        make_audio_pool_cases(pending)
    if "norm" in groups or "make_norm_cases" in groups:
        make_norm_cases()
    if "math" in groups or "make_math_cases" in groups:
        make_math_cases()
    if "spatial" in groups or "make_spatial_cases" in groups:
        make_spatial_cases()
    if "scc" in groups or "make_scc_cases" in groups:
        make_scc_cases()
    if "grid_sample" in groups:
        make_grid_sample_cases()
    print("\n%-28s %-42s %s" % ("case", "inputs", "outputs"))
    print("-" * 96)
    for name, ins, outs in SUMMARY:
        fmt = lambda d: ", ".join("%s%s" % (k, list(v)) for k, v in d.items())  # noqa: E731
        print("%-28s %-42s %s" % (name, fmt(ins), fmt(outs)))


if __name__ == "__main__":
    main()
