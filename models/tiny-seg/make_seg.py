#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A tiny semantic-segmentation model, trained here with torch on synthetic
pictures, written as IR v11, with reference outputs for the decoder tests.

    /usr/bin/python3 models/tiny-seg/make_seg.py          # ~1 min on 1 core

The task: colour segmentation. Each picture is a dull, noisy background
with a few rectangles and ellipses in strong red, green or blue tints; the
classes are background, red, green, blue. The network (input 1x3x96x128 RGB
0..1, output 1x4x48x64 class scores, logits, no SoftMax):

    Convolution 3->16 3x3 + Add + ReLU -> MaxPool 2x2 ->
    Convolution 16->16 3x3 + Add + ReLU -> Convolution 16->4 1x1 + Add

Writes (relative to the top of the repository):
  models/tiny-seg/tiny-seg.{xml,bin}   the model (model_info: Segmentation,
                                       labels, scale 255, RGB)
  models/tiny-seg/labels.txt
  tests/data/infer/tiny-seg.<case>.input.f32.gz    the input tensor
  tests/data/infer/tiny-seg.<case>.logits.f32.gz   torch's output
  tests/data/infer/tiny-seg.<case>.argmax.u8.gz    numpy argmax over classes
  tests/data/infer/tiny-seg.<case>.prob.f32.gz     softmax probability of it
for the cases synth0, synth1 (held-out synthetic pictures) and, when
../shared holds it, astronaut (the YOLO reference input, centre 640x480
averaged down 5x5).

Before writing, it checks that the IR run by the numpy executor
(models/irgen/executor.py) gives torch's logits within 1e-4.
"""

import gzip
import os
import sys

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from irgen.executor import Executor  # noqa: E402
from irgen.serializer import Graph  # noqa: E402

DATA_DIR = os.path.join(TOP, "tests", "data", "infer")
SHARED = os.path.join(TOP, "..", "shared", "models", "external", "reference")
LABELS = ["background", "red", "green", "blue"]
H, W = 96, 128
SEED = 20240516


class TinySeg(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.head = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = nn.functional.max_pool2d(x, 2)
        x = torch.relu(self.conv2(x))
        return self.head(x)


def picture(rng):
    """One synthetic picture (3xHxW, 0..1) and its labels at half resolution."""
    base = rng.uniform(0.2, 0.7)
    img = np.clip(base + rng.normal(0, 0.05, (3, 1, 1)) + rng.normal(0, 0.04, (3, H, W)), 0, 1)
    lab = np.zeros((H, W), np.int64)
    yy, xx = np.mgrid[0:H, 0:W]
    for _ in range(rng.integers(1, 5)):
        c = int(rng.integers(1, 4))
        colour = rng.uniform(0.0, 0.35, 3)
        colour[c - 1] = rng.uniform(0.65, 1.0)
        cy, cx = rng.uniform(0, H), rng.uniform(0, W)
        ry, rx = rng.uniform(6, 30), rng.uniform(6, 40)
        if rng.random() < 0.5:
            m = (np.abs(yy - cy) < ry) & (np.abs(xx - cx) < rx)
        else:
            m = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 < 1
        img[:, m] = np.clip(colour[:, None] + rng.normal(0, 0.04, (3, int(m.sum()))), 0, 1)
        lab[m] = c
    # the label of each 2x2 block: its top-left pixel's
    return img.astype(np.float32), lab[::2, ::2]


def train(model, rng):
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(400):
        batch = [picture(rng) for _ in range(16)]
        x = torch.from_numpy(np.stack([b[0] for b in batch]))
        y = torch.from_numpy(np.stack([b[1] for b in batch]))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 99:
            print(f"step {step + 1}: loss {loss.item():.4f}")


def build_ir(sd):
    g = Graph("tiny-seg")
    g.rt_info = {
        "conversion_parameters": {
            "framework": "pytorch",
            "framework_version": torch.__version__,
            "serializer": "m2i models/irgen/serializer.py",
            "script": "models/tiny-seg/make_seg.py",
        },
        "model_info": {
            "model_type": "Segmentation",
            "labels": " ".join(LABELS),
            "scale_values": "255",
            "reverse_input_channels": "True",
            "resize_type": "standard",
        },
    }
    x = g.parameter("input", "f32", [1, 3, H, W], layout="[N,C,H,W]")

    def conv(x, name, c_out, k, hw):
        w = g.const(f"{name}.weight", sd[f"{name}.weight"])
        p = k // 2
        y, = g.op("Convolution", "opset1", [x, w],
                  {"strides": [1, 1], "dilations": [1, 1], "pads_begin": [p, p],
                   "pads_end": [p, p], "auto_pad": "explicit"},
                  name=f"{name}/Convolution", out_shapes=[[1, c_out, *hw]])
        b = g.const(f"{name}.bias", sd[f"{name}.bias"].reshape(1, c_out, 1, 1))
        y, = g.op("Add", "opset1", [y, b], {"auto_broadcast": "numpy"}, name=name,
                  out_shapes=[[1, c_out, *hw]])
        return y

    y = conv(x, "conv1", 16, 3, (H, W))
    y, = g.op("ReLU", "opset1", [y], {}, name="conv1/ReLU", out_shapes=[[1, 16, H, W]])
    y, _ = g.op("MaxPool", "opset8", [y],
                {"strides": [2, 2], "dilations": [1, 1], "pads_begin": [0, 0],
                 "pads_end": [0, 0], "kernel": [2, 2], "rounding_type": "floor",
                 "auto_pad": "explicit", "index_element_type": "i64", "axis": 0},
                name="pool", out_shapes=[[1, 16, H // 2, W // 2], [1, 16, H // 2, W // 2]],
                out_types=["f32", "i64"])
    y = conv(y, "conv2", 16, 3, (H // 2, W // 2))
    y, = g.op("ReLU", "opset1", [y], {}, name="conv2/ReLU", out_shapes=[[1, 16, H // 2, W // 2]])
    y = conv(y, "head", 4, 1, (H // 2, W // 2))
    g.result(y, "scores")
    return g


def write_gz(name, array, dtype):
    path = os.path.join(DATA_DIR, name)
    data = np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(data)
    print(f"wrote {os.path.relpath(path, TOP)} ({os.path.getsize(path)} bytes)")


def astronaut():
    path = os.path.join(SHARED, "yolov8n-int8.astronaut.input.f32")
    if not os.path.exists(path):
        return None
    x = np.fromfile(path, np.float32).reshape(3, 640, 640)[:, 80:560, :]
    return x.reshape(3, H, 5, W, 5).mean(axis=(2, 4)).astype(np.float32)


def main():
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    model = TinySeg()
    train(model, rng)
    model.eval()

    test = [picture(np.random.default_rng(SEED + 1 + i)) for i in range(200)]
    with torch.no_grad():
        x = torch.from_numpy(np.stack([t[0] for t in test]))
        pred = model(x).argmax(1).numpy()
    acc = float((pred == np.stack([t[1] for t in test])).mean())
    print(f"pixel accuracy on 200 held-out pictures: {acc:.4f}")
    if acc < 0.95:
        sys.exit("the model did not learn the task")

    sd = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    g = build_ir(sd)
    xml = os.path.join(HERE, "tiny-seg.xml")
    g.save(xml)
    print(f"wrote {os.path.relpath(xml, TOP)} and .bin")
    with open(os.path.join(HERE, "labels.txt"), "w") as f:
        f.write("\n".join(LABELS) + "\n")

    cases = {"synth0": test[0][0], "synth1": test[1][0]}
    a = astronaut()
    if a is not None:
        cases["astronaut"] = a
    ex = Executor(xml)
    os.makedirs(DATA_DIR, exist_ok=True)
    for name, img in cases.items():
        inp = img[None]
        with torch.no_grad():
            logits = model(torch.from_numpy(inp)).numpy()
        ir = ex.run({"input": inp})["scores"]
        diff = float(np.abs(ir - logits).max())
        print(f"{name}: IR (numpy executor) vs torch max |diff| {diff:.3g}")
        if diff > 1e-4:
            sys.exit("the IR does not compute what torch computes")
        top2 = np.sort(logits[0], axis=0)[-2:]
        print(f"{name}: classes {np.bincount(logits[0].argmax(0).ravel(), minlength=4)}, "
              f"{int((top2[1] - top2[0] < 1e-3).sum())} pixels with a top-2 margin < 1e-3")
        prob = torch.softmax(torch.from_numpy(logits), 1).numpy().max(1)
        write_gz(f"tiny-seg.{name}.input.f32.gz", inp, np.float32)
        write_gz(f"tiny-seg.{name}.logits.f32.gz", logits, np.float32)
        write_gz(f"tiny-seg.{name}.argmax.u8.gz", logits[0].argmax(0), np.uint8)
        write_gz(f"tiny-seg.{name}.prob.f32.gz", prob, np.float32)


if __name__ == "__main__":
    main()
