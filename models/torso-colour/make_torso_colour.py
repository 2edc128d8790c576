#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Build torso-colour, the project's own small person-crop classifier: the
colour of a person's upper body, one of ten named colours.

    /usr/bin/python3 models/torso-colour/make_torso_colour.py

writes models/torso-colour/torso-colour.{xml,bin} and labels.txt. Needs
numpy only (no training: the weights are written down, not learnt).

The network takes a person crop resized to 32x64 (W x H), RGB planes of
pixel values 0..255, [1,3,64,32] f32, and computes

    c      = mean over the crop of x * mask     (ReduceMean of a Multiply)
    logits = (2 c.p_k - |p_k|^2) / T            (MatMul + Add)
    prob   = SoftMax(logits)

where mask is the torso window (rows 45 %..80 % of the height, columns
25 %..75 % of the width, as a detector's person box places the upper body)
scaled so that c is the window's mean colour, p_k the ten colour prototypes
below and T = 2 * 40^2. Since |c|^2 is the same for every class, prob is a
softmax of -|c - p_k|^2 / T: the nearest prototype wins, and the
confidence says how much nearer it is than the others (a Gaussian of 40
levels per channel around each prototype).

It stands in for an attribute classifier such as Open Model Zoo's
person-attributes-recognition-crossroad-0230 (whose outputs include the
top and bottom clothing colour) until such a model loads in m2i; it runs in
m2iinfer inference-region=roi-list like any classifier, with mean 0, std 1,
channel-order=rgb.

Before writing, the numpy executor (models/irgen/executor.py) runs the IR
on random crops and must agree with the formula above evaluated directly
(argmax equal, probabilities within 1e-5).
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from irgen.executor import Executor  # noqa: E402
from irgen.serializer import Graph  # noqa: E402

W, H = 32, 64
T = 2.0 * 40.0 ** 2
COLOURS = [
    ("black", (25, 25, 25)),
    ("white", (235, 235, 235)),
    ("grey", (128, 128, 128)),
    ("red", (200, 30, 30)),
    ("orange", (220, 105, 55)),
    ("yellow", (225, 210, 50)),
    ("green", (50, 150, 60)),
    ("blue", (40, 70, 190)),
    ("purple", (120, 50, 150)),
    ("brown", (110, 70, 40)),
]
OUT_XML = os.path.join(HERE, "torso-colour.xml")


def torso_mask():
    m = np.zeros((H, W), np.float32)
    r0, r1 = int(round(0.45 * H)), int(round(0.80 * H))
    c0, c1 = int(round(0.25 * W)), int(round(0.75 * W))
    m[r0:r1, c0:c1] = 1.0
    return m * (H * W / m.sum())            # mean(x * mask) = the window's mean


def protos():
    return np.array([c for _, c in COLOURS], np.float32)   # [K, 3]


def build():
    g = Graph("torso-colour")
    x = g.parameter("image", "f32", [1, 3, H, W], layout="[N,C,H,W]")
    mask = g.const("torso_mask", torso_mask().reshape(1, 1, H, W))
    (xm,) = g.op("Multiply", "opset1", [x, mask], {"auto_broadcast": "numpy"},
                 name="torso", out_shapes=[[1, 3, H, W]])
    axes = g.const("spatial_axes", np.array([2, 3], np.int64))
    (c,) = g.op("ReduceMean", "opset1", [xm, axes], {"keep_dims": False},
                name="colour", out_shapes=[[1, 3]])
    p = protos()
    w = g.const("prototypes", (2.0 * p.T / T).astype(np.float32))          # [3, K]
    (dots,) = g.op("MatMul", "opset1", [c, w], {"transpose_a": False, "transpose_b": False},
                   name="similarity", out_shapes=[[1, len(COLOURS)]])
    b = g.const("bias", (-(p * p).sum(axis=1) / T).reshape(1, -1).astype(np.float32))
    (logits,) = g.op("Add", "opset1", [dots, b], {"auto_broadcast": "numpy"},
                     name="logits", out_shapes=[[1, len(COLOURS)]])
    (prob,) = g.op("SoftMax", "opset1", [logits], {"axis": 1}, name="prob",
                   out_shapes=[[1, len(COLOURS)]])
    g.result(prob, "prob/sink_port_0")
    g.rt_info = {
        "conversion_parameters": {
            "serializer": "m2i models/irgen/serializer.py",
            "script": "models/torso-colour/make_torso_colour.py",
        },
        "model_info": {
            "model_type": "Classification",
            "labels": " ".join(n for n, _ in COLOURS),
            "mean_values": "0 0 0",
            "scale_values": "1 1 1",
            "reverse_input_channels": "True",   # takes RGB (Model API: BGR reversed)
        },
    }
    return g


def direct(x):
    """The formula, evaluated directly."""
    c = (x * torso_mask()).mean(axis=(2, 3))               # [N, 3]
    d = ((c[:, None, :] - protos()[None]) ** 2).sum(axis=2)
    z = -d / T
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    g = build()
    g.save(OUT_XML)
    with open(os.path.join(HERE, "labels.txt"), "w") as f:
        f.write("".join(n + "\n" for n, _ in COLOURS))
    ex = Executor(OUT_XML)
    rng = np.random.default_rng(7)
    for i in range(64):
        # random crops, and flat ones at every prototype (noisy)
        if i < len(COLOURS):
            x = np.empty((1, 3, H, W), np.float32)
            x[:] = np.array(COLOURS[i][1], np.float32).reshape(1, 3, 1, 1)
            x += rng.normal(0, 10, x.shape).astype(np.float32)
        else:
            x = rng.uniform(0, 255, (1, 3, H, W)).astype(np.float32)
        got = ex.run({"image": x})["prob/sink_port_0"]
        want = direct(x)
        if not np.allclose(got, want, atol=1e-5) or got.argmax() != want.argmax():
            sys.exit(f"crop {i}: executor {got} differs from the formula {want}")
        if i < len(COLOURS) and got.argmax() != i:
            sys.exit(f"a {COLOURS[i][0]} crop is classified {COLOURS[got.argmax()][0]}")
    print(f"wrote {OUT_XML} (+ .bin, labels.txt); executor == formula on 64 crops")


if __name__ == "__main__":
    main()
