#!/usr/bin/env python3
"""Writes the few-shot fine-tuning sets: the first 32 sevens of scikit-learn's digits,
prepared exactly as the shipped models' training data (models/*/train.py):
    sevens_32.npy  [32,1,32,32] float32 in [-1, 1]   for models/dcgan_digits
    sevens_16.npy  [32,1,16,16] float32 in [-1, 1]   for models/cgan_digits
    sevens_labels.npy [32] int64 (all 7)

Usage: OMP_WAIT_POLICY=passive /usr/bin/python3 models/few_shot/make_few_shot_data.py
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

HERE = os.path.dirname(os.path.abspath(__file__))
DIGIT, COUNT = 7, 32


def main():
    d = load_digits()
    rows = np.flatnonzero(d.target == DIGIT)[:COUNT]
    x = torch.from_numpy(d.images[rows].astype(np.float32) / 8.0 - 1.0).unsqueeze(1)
    for size in (32, 16):
        y = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
        np.save(os.path.join(HERE, "sevens_%d.npy" % size), y.numpy().astype(np.float32))
    np.save(os.path.join(HERE, "sevens_labels.npy"), np.full(COUNT, DIGIT, dtype=np.int64))
    print("wrote", COUNT, "sevens to", HERE)


if __name__ == "__main__":
    main()
