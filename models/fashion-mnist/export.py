#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Export the trained Fashion-MNIST classifier to IR v11 and write its
reference data.

    /usr/bin/python3 models/fashion-mnist/export.py --checkpoint /tmp/m2i-fmnist/fashion-mnist.pt

Writes (paths relative to the top of the repository):
  models/fashion-mnist/fashion-mnist.{xml,bin}   the model, fp32, IR v11
  models/fashion-mnist/fashion-mnist.json        preprocessing, I/O, accuracy
  models/fashion-mnist/labels.txt                class names, Fashion-MNIST order
  tests/data/fashion-mnist/*                     torch's reference outputs

and checks, before writing the references, that the IR run by the numpy
executor (models/irgen/executor.py) gives torch's outputs on the first 64
test images (max abs difference <= 1e-5) and torch's predicted class on all
10,000 test images.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from irgen import fashion_mnist as fm  # noqa: E402
from irgen.executor import Executor, yuv_to_rgb  # noqa: E402
from irgen.reader import Model  # noqa: E402
from irgen.serializer import Graph  # noqa: E402
from train import FashionNet, evaluate, setup_determinism  # noqa: E402

MODEL_DIR = HERE
DATA_DIR = os.path.join(TOP, "tests", "data", "fashion-mnist")
N_REF = 64


def add_fashion_net(g, x, sd, prefix=""):
    """Append the network to graph g after output x (1x3x28x28 f32, normalised);
    returns the SoftMax output. sd: the torch state_dict as numpy arrays.
    The op sequence is the one OpenVINO's PyTorch frontend produces for this
    module: Convolution + Add(bias) per conv, MaxPool-8, Reshape(special_zero)
    for flatten, MatMul(transpose_b) + Add per Linear, SoftMax-8."""
    def conv_block(x, name, c_out, in_hw):
        w = g.const(f"{prefix}{name}.weight", sd[f"{name}.weight"])
        y, = g.op("Convolution", "opset1", [x, w],
                  {"strides": [1, 1], "dilations": [1, 1], "pads_begin": [1, 1],
                   "pads_end": [1, 1], "auto_pad": "explicit"},
                  name=f"{prefix}{name}/Convolution", out_shapes=[[1, c_out, in_hw, in_hw]])
        b = g.const(f"{prefix}{name}.bias", sd[f"{name}.bias"].reshape(1, c_out, 1, 1))
        y, = g.op("Add", "opset1", [y, b], {"auto_broadcast": "numpy"},
                  name=f"{prefix}{name}", out_shapes=[[1, c_out, in_hw, in_hw]])
        y, = g.op("ReLU", "opset1", [y], {}, name=f"{prefix}{name}/ReLU",
                  out_shapes=[[1, c_out, in_hw, in_hw]])
        half = in_hw // 2
        y, _ = g.op("MaxPool", "opset8", [y],
                    {"strides": [2, 2], "dilations": [1, 1], "pads_begin": [0, 0],
                     "pads_end": [0, 0], "kernel": [2, 2], "rounding_type": "floor",
                     "auto_pad": "explicit", "index_element_type": "i64", "axis": 0},
                    name=f"{prefix}{name}/MaxPool",
                    out_shapes=[[1, c_out, half, half], [1, c_out, half, half]],
                    out_types=["f32", "i64"])
        return y

    def linear(x, name, n_out, relu):
        w = g.const(f"{prefix}{name}.weight", sd[f"{name}.weight"])
        y, = g.op("MatMul", "opset1", [x, w], {"transpose_a": False, "transpose_b": True},
                  name=f"{prefix}{name}/MatMul", out_shapes=[[1, n_out]])
        b = g.const(f"{prefix}{name}.bias", sd[f"{name}.bias"].reshape(1, n_out))
        y, = g.op("Add", "opset1", [y, b], {"auto_broadcast": "numpy"},
                  name=f"{prefix}{name}", out_shapes=[[1, n_out]])
        if relu:
            y, = g.op("ReLU", "opset1", [y], {}, name=f"{prefix}{name}/ReLU",
                      out_shapes=[[1, n_out]])
        return y

    y = conv_block(x, "conv1", 32, 28)
    y = conv_block(y, "conv2", 64, 14)
    shape = g.const(f"{prefix}flatten/shape", np.array([0, -1], dtype=np.int64))
    y, = g.op("Reshape", "opset1", [y, shape], {"special_zero": True},
              name=f"{prefix}flatten", out_shapes=[[1, 64 * 7 * 7]])
    y = linear(y, "fc1", 128, relu=True)
    y = linear(y, "fc2", 10, relu=False)
    y, = g.op("SoftMax", "opset8", [y], {"axis": 1}, name="prob", out_shapes=[[1, 10]])
    return y


def model_rt_info(script):
    """Model-level <rt_info>: how the model was made, and OpenVINO Model
    API's model_info (model_type, labels, mean/scale in pixel units)."""
    return {
        "conversion_parameters": {
            "framework": "pytorch",
            "framework_version": torch.__version__,
            "serializer": "m2i models/irgen/serializer.py",
            "script": script,
        },
        "model_info": {
            "model_type": "Classification",
            # Model API splits labels on spaces, so spaces inside a name become _.
            "labels": " ".join(l.replace(" ", "_") for l in fm.LABELS),
            "mean_values": " ".join([f"{fm.MEAN * 255:g}"] * 3),
            "scale_values": " ".join([f"{fm.STD * 255:g}"] * 3),
            "reverse_input_channels": "True",   # takes RGB (Model API: BGR reversed)
        },
    }


def load_state(checkpoint):
    ck = torch.load(checkpoint, map_location="cpu")
    model = FashionNet()
    model.load_state_dict(ck["state_dict"])
    model.eval()
    sd = {k: v.detach().numpy().astype(np.float32) for k, v in ck["state_dict"].items()}
    return model, sd, ck


def state_from_ir(xml):
    """The network's weights, back in torch's shapes, from the committed IR."""
    m = Model(xml)
    consts = {l.name: l.value for l in m.layers.values() if l.type == "Const"}
    sd = {}
    for name in ("conv1", "conv2", "fc1", "fc2"):
        sd[f"{name}.weight"] = consts[f"{name}.weight"].astype(np.float32)
        sd[f"{name}.bias"] = consts[f"{name}.bias"].reshape(-1).astype(np.float32)
    return sd


def build_ir(sd):
    g = Graph("fashion-mnist")
    g.rt_info = model_rt_info("models/fashion-mnist/export.py")
    x = g.parameter("input", "f32", [1, 3, 28, 28], layout="[N,C,H,W]")
    y = add_fashion_net(g, x, sd)
    g.result(y, "prob/sink_port_0")
    return g


def ir_predictions(ex, images):
    """Run the IR one image at a time (its batch is 1) over images."""
    probs = np.empty((len(images), 10), dtype=np.float32)
    x_all = fm.normalize(images)
    for i in range(len(images)):
        probs[i] = ex.run({"input": x_all[i:i + 1]})["prob/sink_port_0"][0]
    return probs


def write_raw(path, array, dtype):
    np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<")).tofile(path)
    print(f"wrote {os.path.relpath(path, TOP)} ({os.path.getsize(path)} bytes)")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", default="/tmp/m2i-fmnist/fashion-mnist.pt")
    ap.add_argument("--skip-full-check", action="store_true",
                    help="check the IR on the first 64 images only (faster)")
    args = ap.parse_args()
    setup_determinism()
    model, sd, ck = load_state(args.checkpoint)

    test_x = fm.load_images("t10k")
    test_y = fm.load_labels("t10k")
    preds, probs = evaluate(model, test_x, test_y)
    correct = int((preds == test_y).sum())
    acc = correct / len(test_y)
    per_class = {}
    for c, name in enumerate(fm.LABELS):
        sel = test_y == c
        per_class[name] = round(float((preds[sel] == c).mean()), 4)
    top2 = np.sort(probs, axis=1)[:, -2:]
    margin = top2[:, 1] - top2[:, 0]
    print(f"torch test accuracy {acc:.4f} ({correct}/10000); "
          f"{int((margin < 1e-4).sum())} images with top-1/top-2 margin < 1e-4, "
          f"{int((margin < 1e-3).sum())} < 1e-3")

    # What the demo pipeline feeds the model: each grey image as a 28x28 NV12
    # frame (BT.601 limited range, Y = round(16 + g*219/255), U = V = 128)
    # turned back into RGB by NV12toRGB-8 (u8), then normalised.
    y = np.floor(16 + test_x.astype(np.float64) * 219 / 255 + 0.5)
    rgb = yuv_to_rgb(y, np.full_like(y, 128), np.full_like(y, 128), np.uint8)
    nv12_preds, _ = evaluate(model, rgb[..., 0], test_y)
    nv12_acc = float((nv12_preds == test_y).mean())
    print(f"torch accuracy after the NV12 round trip: {nv12_acc:.4f}")

    # The IR, and the numpy executor's check of it against torch.
    g = build_ir(sd)
    xml_path = os.path.join(MODEL_DIR, "fashion-mnist.xml")
    g.save(xml_path)
    print(f"wrote {os.path.relpath(xml_path, TOP)} and .bin")
    ex = Executor(xml_path)

    ref_x = fm.normalize(test_x[:N_REF])
    with torch.no_grad():
        ref_logits = model(torch.from_numpy(ref_x)).numpy()
        ref_probs = torch.softmax(torch.from_numpy(ref_logits), dim=1).numpy()
    ir_probs = ir_predictions(ex, test_x[:N_REF])
    diff = float(np.abs(ir_probs - ref_probs).max())
    print(f"IR (numpy executor) vs torch on the first {N_REF}: max |diff| {diff:.3g}")
    if diff > 1e-5:
        sys.exit("the IR does not compute what torch computes")
    if not args.skip_full_check:
        ir_all = ir_predictions(ex, test_x)
        ir_pred = ir_all.argmax(axis=1).astype(np.uint8)
        n_diff = int((ir_pred != preds).sum())
        print(f"IR vs torch predicted class over 10,000: {n_diff} differ; "
              f"max |diff| {float(np.abs(ir_all - probs).max()):.3g}")
        if n_diff:
            sys.exit("the IR's predictions differ from torch's")

    with open(os.path.join(MODEL_DIR, "labels.txt"), "w") as f:
        f.write("\n".join(fm.LABELS) + "\n")
    meta = {
        "model": "fashion-mnist.xml",
        "ir_version": 11,
        "input": {"name": "input", "element_type": "f32", "shape": [1, 3, 28, 28],
                  "layout": "NCHW", "color_order": "RGB", "size": {"width": 28, "height": 28},
                  "note": "grey image replicated on R, G and B"},
        "preprocess": {
            "formula": "(x * scale - mean) / std, per channel, x the 0..255 pixel",
            "scale": 1.0 / 255.0,
            "mean": [fm.MEAN] * 3,
            "std": [fm.STD] * 3,
            "mean_pixels": [round(fm.MEAN * 255, 6)] * 3,
            "std_pixels": [round(fm.STD * 255, 6)] * 3,
        },
        "output": {"name": "prob", "element_type": "f32", "shape": [1, 10],
                   "kind": "probabilities (SoftMax-8 over axis 1); argmax is the class"},
        "labels": "labels.txt",
        "accuracy": {"source": "torch %s, fp32, on the 10,000 t10k images" % torch.__version__,
                     "top1": round(acc, 4), "correct": correct, "total": int(len(test_y)),
                     "per_class": per_class,
                     "top2_margin_below_1e-4": int((margin < 1e-4).sum()),
                     "top2_margin_below_1e-3": int((margin < 1e-3).sum()),
                     "top1_after_nv12_round_trip": round(nv12_acc, 4)},
        "training": {"seed": ck["seed"], "epochs": ck["epochs"], "batch": ck["batch"],
                     "max_lr": ck["lr"], "optimizer": "Adam, one-cycle schedule",
                     "augmentation": "random horizontal flip", "torch": ck["torch"]},
    }
    with open(os.path.join(MODEL_DIR, "fashion-mnist.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")

    os.makedirs(DATA_DIR, exist_ok=True)
    write_raw(os.path.join(DATA_DIR, "first64.images.u8"), test_x[:N_REF], np.uint8)
    write_raw(os.path.join(DATA_DIR, "first64.input.f32"), ref_x, np.float32)
    write_raw(os.path.join(DATA_DIR, "first64.prob.f32"), ref_probs, np.float32)
    write_raw(os.path.join(DATA_DIR, "first64.logits.f32"), ref_logits, np.float32)
    write_raw(os.path.join(DATA_DIR, "t10k.torch-pred.u8"), preds, np.uint8)
    write_raw(os.path.join(DATA_DIR, "t10k.labels.u8"), test_y, np.uint8)


if __name__ == "__main__":
    main()
