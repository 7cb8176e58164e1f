#!/usr/bin/env python3
"""Exports image-to-image generators at the sizes people run them, for `edgegan bench`
and `edgegan report` (random weights: speed and memory do not depend on them):
  cyclegan_resnet9_256.onnx   CycleGAN's ResNet generator, ngf 64, 9 blocks, 256x256
  fast_style_256.onnx         the fast neural style TransformerNet (32/64/128 channels), 256x256
  realesr_compact_x4.onnx     Real-ESRGAN's compact SR network (64 features, 16 convs, x4), exported
                              at 64x64 (`edgegan upscale` runs it at any size)
The definitions are tests/published/architectures.py's. Needs PyTorch.

  /usr/bin/python3 bench/make_image_models.py OUT_DIR
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "published"))
from architectures import ResnetGenerator, SRVGGNetCompact, TransformerNet  # noqa: E402


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    for name, model, size in [("cyclegan_resnet9_256", ResnetGenerator(ngf=64, n_blocks=9), 256), ("fast_style_256", TransformerNet(w=32), 256),
                              ("realesr_compact_x4", SRVGGNetCompact(num_feat=64, num_conv=16, upscale=4), 64)]:
        args = (model.eval(), torch.randn(1, 3, size, size), os.path.join(out, name + ".onnx"))
        kwargs = dict(opset_version=17, input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
        # The TorchScript exporter keeps the weights inside the file (from torch 2.9 the
        # default dynamo exporter writes them beside it, which edgegan-convert refuses).
        try:
            torch.onnx.export(*args, dynamo=False, **kwargs)
        except TypeError:  # a torch without the dynamo exporter
            torch.onnx.export(*args, **kwargs)
        print(os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
