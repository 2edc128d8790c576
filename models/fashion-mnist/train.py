#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Train the project's Fashion-MNIST classifier with torch, deterministically.

    /usr/bin/python3 models/fashion-mnist/train.py --out /tmp/m2i-fmnist/fashion-mnist.pt

Single-threaded, fixed seeds, deterministic algorithms: the same torch build on
the same data gives the same weights bit for bit (checked: two runs, identical
weights). About 8 minutes on one core
of the project's 2-core machine. export.py turns the checkpoint into the IR.
"""

import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from irgen import fashion_mnist as fm  # noqa: E402

SEED = 20240611
EPOCHS = 8
BATCH = 128
LR = 2e-3


class FashionNet(nn.Module):
    """conv3x3(32) relu maxpool2, conv3x3(64) relu maxpool2, fc128 relu, fc10.

    Input 1x3x28x28 (normalised grey replicated on RGB); output logits. The
    exported IR appends SoftMax, so the shipped model outputs probabilities.
    """

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = nn.Linear(64 * 7 * 7, 128)
        self.fc2 = nn.Linear(128, 10)
        self.dropout = nn.Dropout(0.3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = self.dropout(F.relu(self.fc1(x)))
        return self.fc2(x)


def evaluate(model, images, labels, batch=500):
    """Predicted classes and probabilities (float32) over a whole split."""
    model.eval()
    preds, probs = [], []
    with torch.no_grad():
        for i in range(0, len(images), batch):
            x = torch.from_numpy(fm.normalize(images[i:i + batch]))
            p = torch.softmax(model(x), dim=1)
            probs.append(p.numpy())
            preds.append(p.argmax(dim=1).numpy())
    preds = np.concatenate(preds).astype(np.uint8)
    return preds, np.concatenate(probs)


def setup_determinism():
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    torch.use_deterministic_algorithms(True)


def train(out_path):
    setup_determinism()
    train_x = fm.load_images("train")
    train_y = fm.load_labels("train")
    test_x = fm.load_images("t10k")
    test_y = fm.load_labels("t10k")
    # Normalise once; the grey channel is replicated inside the step.
    grey = torch.from_numpy(fm.normalize(train_x)[:, :1].copy())
    target = torch.from_numpy(train_y.astype(np.int64))

    model = FashionNet()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    steps_per_epoch = (len(grey) + BATCH - 1) // BATCH
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=LR, epochs=EPOCHS, steps_per_epoch=steps_per_epoch)
    gen = torch.Generator().manual_seed(SEED)

    for epoch in range(EPOCHS):
        t0 = time.time()
        model.train()
        order = torch.randperm(len(grey), generator=gen)
        flips = torch.rand(len(grey), generator=gen) < 0.5
        total = 0.0
        for s in range(steps_per_epoch):
            idx = order[s * BATCH:(s + 1) * BATCH]
            x = grey[idx]
            # Random horizontal flip: clothes are left-right symmetric.
            f = flips[idx]
            x = torch.where(f[:, None, None, None], x.flip(3), x)
            x = x.expand(-1, 3, -1, -1)
            loss = F.cross_entropy(model(x), target[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item()
        preds, _ = evaluate(model, test_x, test_y)
        acc = float((preds == test_y).mean())
        print(f"epoch {epoch + 1}/{EPOCHS}: loss {total / steps_per_epoch:.4f} "
              f"test accuracy {acc:.4f} ({time.time() - t0:.0f} s)", flush=True)

    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "seed": SEED, "epochs": EPOCHS,
                "batch": BATCH, "lr": LR, "torch": torch.__version__}, out_path)
    print(f"wrote {out_path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/m2i-fmnist/fashion-mnist.pt",
                    help="checkpoint to write (not committed)")
    args = ap.parse_args()
    train(args.out)


if __name__ == "__main__":
    main()
