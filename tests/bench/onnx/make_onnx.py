#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Export the project's Fashion-MNIST network to ONNX with torch.onnx.export.

    /usr/bin/python3 tests/bench/onnx/make_onnx.py

The weights come from the committed IR (models/fashion-mnist/fashion-mnist.bin),
so the ONNX model is the same network the IR runtime runs: input "input"
f32 [1,3,28,28] (normalised), output "prob" f32 [1,10] (SoftMax appended,
as in the IR). Writes tests/bench/onnx/fashion-mnist.onnx (committed).
"""

import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(TOP, "models"))
sys.path.insert(0, os.path.join(TOP, "models", "fashion-mnist"))
from export import state_from_ir  # noqa: E402
from train import FashionNet  # noqa: E402

OUT = os.path.join(HERE, "fashion-mnist.onnx")


class WithSoftmax(torch.nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return torch.softmax(self.net(x), dim=1)


def main():
    torch.manual_seed(0)
    sd = state_from_ir(os.path.join(TOP, "models", "fashion-mnist", "fashion-mnist.xml"))
    net = FashionNet()
    net.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()})
    model = WithSoftmax(net).eval()
    torch.onnx.export(model, torch.zeros(1, 3, 28, 28), OUT, input_names=["input"],
                      output_names=["prob"], opset_version=13, do_constant_folding=True)
    print(f"wrote {os.path.relpath(OUT, TOP)} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
