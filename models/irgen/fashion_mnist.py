# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fashion-MNIST as Debian's dataset-fashion-mnist ships it, and the one
normalisation every consumer of the project's Fashion-MNIST model must apply.

The idx files are read with numpy only (no torch), so the reference scripts
and the ONNX checks can share this module.
"""

import gzip
import os

import numpy as np

DATASET_DIR = os.environ.get("M2I_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")

# Fashion-MNIST class order (label value 0..9), as published with the dataset.
LABELS = [
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
]

# Mean and standard deviation of the 60,000 training images scaled to [0, 1]
# (measured: 0.28604, 0.35302), rounded to 4 digits. The same value is used on
# all three channels because the network's RGB input is grey replicated.
MEAN = 0.2860
STD = 0.3530
SIZE = 28


def _read_idx(path, magic):
    with gzip.open(path, "rb") as f:
        data = f.read()
    got = int.from_bytes(data[0:4], "big")
    if got != magic:
        raise ValueError(f"{path}: idx magic {got:#x}, expected {magic:#x}")
    return data


def load_images(split):
    """u8 array [N, 28, 28] of split 'train' or 't10k'."""
    path = os.path.join(DATASET_DIR, f"{split}-images-idx3-ubyte.gz")
    data = _read_idx(path, 0x803)
    n, rows, cols = (int.from_bytes(data[i:i + 4], "big") for i in (4, 8, 12))
    return np.frombuffer(data, dtype=np.uint8, offset=16).reshape(n, rows, cols)


def load_labels(split):
    """u8 array [N] of split 'train' or 't10k'."""
    path = os.path.join(DATASET_DIR, f"{split}-labels-idx1-ubyte.gz")
    data = _read_idx(path, 0x801)
    n = int.from_bytes(data[4:8], "big")
    return np.frombuffer(data, dtype=np.uint8, offset=8)[:n].copy()


def normalize(images_u8, mean=MEAN, std=STD):
    """The model's input: f32 [N, 3, 28, 28], grey replicated on 3 channels.

    Computed in float32 exactly as written: x = u8 / 255, then (x - mean) / std,
    each step rounded to f32. m2inorm computes the same expression; a runtime
    that wants torch's exact predictions must feed these very values.
    """
    x = images_u8.astype(np.float32) / np.float32(255.0)
    x = (x - np.float32(mean)) / np.float32(std)
    x = x[:, None, :, :]
    return np.ascontiguousarray(np.repeat(x, 3, axis=1), dtype=np.float32)
