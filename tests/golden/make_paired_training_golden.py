#!/usr/bin/env python3
"""Golden data for paired fine-tuning of a zoo generator: PyTorch autograd +
torch.optim.Adam on Real-ESRGAN's compact network (conv, per-channel PReLU,
PixelShuffle, nearest-upsampled input added), MSE against fixed targets, the whole
set as one batch every step.

tests/golden/training/zoo_realesrgan_paired/ holds
    model.onnx                  the network as exported
    inputs.npy [B,3,H,W], targets.npy [B,3,4H,4W]
    step1_grads.onnx            the architecture with every parameter replaced by its
                                gradient after step 1 (the converter lays it out as the weights)
    final.onnx                  the weights after STEPS Adam steps
    losses.npy [STEPS]          MSE per step

Usage: OMP_WAIT_POLICY=passive /usr/bin/python3 tests/golden/make_paired_training_golden.py
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from golden_util import export_onnx  # noqa: E402
from make_training_goldens import BETAS, with_values  # noqa: E402
from make_zoo import SRVGGNetCompact, randomize  # noqa: E402

STEPS, BATCH, LR = 10, 2, 1e-3  # an lr that moves every weight well past the test's tolerance


def main():
    torch.set_num_threads(1)
    torch.manual_seed(5)
    model = randomize(SRVGGNetCompact(nf=6, num_conv=2, upscale=4), 41)
    g = torch.Generator().manual_seed(42)
    x = torch.randn(BATCH, 3, 5, 6, generator=g)
    target = torch.tanh(torch.randn(BATCH, 3, 20, 24, generator=g))
    d = os.path.join(HERE, "training", "zoo_realesrgan_paired")
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    export_onnx(model, (x,), ["image"], ["output"], os.path.join(d, "model.onnx"))
    np.save(os.path.join(d, "inputs.npy"), x.numpy())
    np.save(os.path.join(d, "targets.npy"), target.numpy())
    opt = torch.optim.Adam(model.parameters(), lr=LR, betas=BETAS)
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = F.mse_loss(model(x), target)
        loss.backward()
        if step == 0:
            grads = [p.grad.detach().clone() for p in model.parameters()]
            export_onnx(with_values(model, grads), (x,), ["image"], ["output"], os.path.join(d, "step1_grads.onnx"))
        opt.step()
        losses.append(loss.item())
    export_onnx(model, (x,), ["image"], ["output"], os.path.join(d, "final.onnx"))
    np.save(os.path.join(d, "losses.npy"), np.array(losses, dtype=np.float32))
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write("Paired fine-tuning golden of Real-ESRGAN's compact network (nf 6, 2 convs, x4): "
                f"{STEPS} Adam steps (lr {LR}, betas {BETAS}) on MSE against fixed targets, the whole set "
                "as one batch. Written by tests/golden/make_paired_training_golden.py.\n")
    print("losses", ["%.5f" % l for l in losses])


if __name__ == "__main__":
    main()
