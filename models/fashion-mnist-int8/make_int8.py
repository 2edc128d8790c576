#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Build the quantized (FakeQuantize-marked) Fashion-MNIST model and its
reference data.

    /usr/bin/python3 models/fashion-mnist-int8/make_int8.py [--calib N]

Reads the committed models/fashion-mnist/fashion-mnist.{xml,bin} (no training)
and writes:
  models/fashion-mnist-int8/fashion-mnist-int8.{xml,bin}   IR v11, f32 with FakeQuantize
  models/fashion-mnist-int8/quantization.json              the ranges and accuracies
  tests/data/split/int8.t10k-pred.u8                       the numpy executor's class for
                                                           every test image (int8 simulation)

Quantization, as OpenVINO's post-training tools mark a model (FakeQuantize
before the inputs of every Convolution and MatMul, and on their weights):

* activations: 256 levels, one range per tensor, input range = output range,
  calibrated on the first N training images (default 2000) as [min, max] of
  the tensor, then widened so that real 0 falls on the grid (an integer zero
  point: the range is (-128 - z) * s .. (127 - z) * s with s = range / 255);
* weights: 255 levels, one symmetric range per output channel
  [-max|w|, max|w|], so the codes are the integers -127..127 (zero point 0).

The last layer (fc2) keeps an unquantized output, as post-training tools
leave it. The network is the one of ../fashion-mnist (same weights).

The model is checked with the project's numpy executor (models/irgen), with
a FakeQuantize-1 written here from the specification, and its accuracy on
the 10,000 test images is printed and recorded next to the fp32 model's.
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fashion-mnist"))
from irgen import executor  # noqa: E402
from irgen import fashion_mnist as fm  # noqa: E402
from irgen.executor import Executor  # noqa: E402
from irgen.serializer import Graph  # noqa: E402
from export import model_rt_info, state_from_ir  # noqa: E402

NET_XML = os.path.join(os.path.dirname(HERE), "fashion-mnist", "fashion-mnist.xml")
OUT_XML = os.path.join(HERE, "fashion-mnist-int8.xml")
DATA_DIR = os.path.join(TOP, "tests", "data", "split")
F32 = np.float32


def op_fake_quantize(layer, x, il, ih, ol, oh):
    """FakeQuantize-1, in the spec's order of operations in f32, rounding
    half to even (std::nearbyint), numpy broadcasting of the ranges."""
    levels = F32(int(layer.attrs["levels"]) - 1)
    x, il, ih, ol, oh = (np.asarray(a, dtype=F32) for a in (x, il, ih, ol, oh))
    q = np.rint((x - il) / (ih - il) * levels) / levels * (oh - ol) + ol
    y = np.where(x <= np.minimum(il, ih), ol, np.where(x > np.maximum(il, ih), oh, q))
    return [y.astype(F32)]


executor.OPS["FakeQuantize"] = op_fake_quantize


def grid_range(lo, hi):
    """[lo, hi] widened to a 256-level grid holding real 0 exactly:
    returns (low, high, scale, zero_point) with low = (-128 - z) * s."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    s = (hi - lo) / 255.0
    z = int(np.clip(np.round(-128 - lo / s), -128, 127))
    low = (-128 - z) * s
    return F32(low), F32(low + 255 * s), s, z


def fq(g, x, name, lo, hi, shape, levels=256, range_shape=(1, 1, 1, 1)):
    """A FakeQuantize of x with one range (input range = output range)."""
    lo_c = g.const(f"{name}/input_low", np.full(range_shape, lo, dtype=F32))
    hi_c = g.const(f"{name}/input_high", np.full(range_shape, hi, dtype=F32))
    lo_o = g.const(f"{name}/output_low", np.full(range_shape, lo, dtype=F32))
    hi_o = g.const(f"{name}/output_high", np.full(range_shape, hi, dtype=F32))
    y, = g.op("FakeQuantize", "opset1", [x, lo_c, hi_c, lo_o, hi_o],
              {"levels": levels, "auto_broadcast": "numpy"}, name=name, out_shapes=[shape])
    return y


def fq_weights(g, name, w):
    """Weights through a per-output-channel symmetric FakeQuantize (255 levels)."""
    m = np.abs(w.reshape(w.shape[0], -1)).max(axis=1).astype(F32)
    rshape = (w.shape[0],) + (1,) * (w.ndim - 1)
    wc = g.const(f"{name}", w.astype(F32))
    lo = g.const(f"{name}/fq/low", (-m).reshape(rshape))
    hi = g.const(f"{name}/fq/high", m.reshape(rshape))
    lo2 = g.const(f"{name}/fq/output_low", (-m).reshape(rshape))
    hi2 = g.const(f"{name}/fq/output_high", m.reshape(rshape))
    y, = g.op("FakeQuantize", "opset1", [wc, lo, hi, lo2, hi2],
              {"levels": 255, "auto_broadcast": "numpy"}, name=f"{name}/fq",
              out_shapes=[list(w.shape)])
    return y


def build(sd, ranges):
    g = Graph("fashion-mnist-int8")
    info = model_rt_info("models/fashion-mnist-int8/make_int8.py")
    info["optimization"] = {"quantization": "FakeQuantize, 8 bit, per-channel weights"}
    g.rt_info = info
    x = g.parameter("input", "f32", [1, 3, 28, 28], layout="[N,C,H,W]")

    def conv_block(x, name, c_out, hw):
        w = fq_weights(g, f"{name}.weight", sd[f"{name}.weight"])
        y, = g.op("Convolution", "opset1", [x, w],
                  {"strides": [1, 1], "dilations": [1, 1], "pads_begin": [1, 1],
                   "pads_end": [1, 1], "auto_pad": "explicit"},
                  name=f"{name}/Convolution", out_shapes=[[1, c_out, hw, hw]])
        b = g.const(f"{name}.bias", sd[f"{name}.bias"].reshape(1, c_out, 1, 1))
        y, = g.op("Add", "opset1", [y, b], {"auto_broadcast": "numpy"}, name=name,
                  out_shapes=[[1, c_out, hw, hw]])
        y, = g.op("ReLU", "opset1", [y], {}, name=f"{name}/ReLU", out_shapes=[[1, c_out, hw, hw]])
        y, _ = g.op("MaxPool", "opset8", [y],
                    {"strides": [2, 2], "dilations": [1, 1], "pads_begin": [0, 0],
                     "pads_end": [0, 0], "kernel": [2, 2], "rounding_type": "floor",
                     "auto_pad": "explicit", "index_element_type": "i64", "axis": 0},
                    name=f"{name}/MaxPool", out_shapes=[[1, c_out, hw // 2, hw // 2]] * 2,
                    out_types=["f32", "i64"])
        return y

    def linear(x, name, n_out):
        w = fq_weights(g, f"{name}.weight", sd[f"{name}.weight"])
        y, = g.op("MatMul", "opset1", [x, w], {"transpose_a": False, "transpose_b": True},
                  name=f"{name}/MatMul", out_shapes=[[1, n_out]])
        b = g.const(f"{name}.bias", sd[f"{name}.bias"].reshape(1, n_out))
        y, = g.op("Add", "opset1", [y, b], {"auto_broadcast": "numpy"}, name=name,
                  out_shapes=[[1, n_out]])
        return y

    r = ranges
    y = fq(g, x, "input/fq", *r["input"][:2], [1, 3, 28, 28])
    y = conv_block(y, "conv1", 32, 28)
    y = fq(g, y, "conv1/fq", *r["conv1"][:2], [1, 32, 14, 14])
    y = conv_block(y, "conv2", 64, 14)
    shape = g.const("flatten/shape", np.array([0, -1], dtype=np.int64))
    y, = g.op("Reshape", "opset1", [y, shape], {"special_zero": True}, name="flatten",
              out_shapes=[[1, 64 * 7 * 7]])
    y = fq(g, y, "flatten/fq", *r["conv2"][:2], [1, 64 * 7 * 7], range_shape=(1, 1))
    y = linear(y, "fc1", 128)
    y, = g.op("ReLU", "opset1", [y], {}, name="fc1/ReLU", out_shapes=[[1, 128]])
    y = fq(g, y, "fc1/fq", *r["fc1"][:2], [1, 128], range_shape=(1, 1))
    y = linear(y, "fc2", 10)
    y, = g.op("SoftMax", "opset8", [y], {"axis": 1}, name="prob", out_shapes=[[1, 10]])
    g.result(y, "prob/sink_port_0")
    return g


def calibrate(n):
    """[min, max] of the quantized tensors over the first n training images,
    from the fp32 model run by the numpy executor."""
    ex = Executor(NET_XML)
    x_all = fm.normalize(fm.load_images("train")[:n])
    taps = {"input": None, "conv1": "conv1/MaxPool", "conv2": "conv2/MaxPool", "fc1": "fc1/ReLU"}
    lo = {k: np.inf for k in taps}
    hi = {k: -np.inf for k in taps}
    for i in range(n):
        _, values = ex.run({"input": x_all[i:i + 1]}, keep=True)
        for k, layer in taps.items():
            v = x_all[i] if layer is None else values[layer][0]
            lo[k] = min(lo[k], float(v.min()))
            hi[k] = max(hi[k], float(v.max()))
    return {k: grid_range(lo[k], hi[k]) for k in taps}


def predict(xml, images):
    ex = Executor(xml)
    x_all = fm.normalize(images)
    return np.array([int(np.argmax(ex.run({"input": x_all[i:i + 1]})["prob/sink_port_0"]))
                     for i in range(len(images))], dtype=np.uint8)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calib", type=int, default=2000, help="training images to calibrate on")
    args = ap.parse_args()
    sd = state_from_ir(NET_XML)
    ranges = calibrate(args.calib)
    for k, (low, high, s, z) in ranges.items():
        print(f"{k:6s}: [{low:.6f}, {high:.6f}]  scale {s:.6g}  zero point {z}")
    g = build(sd, ranges)
    g.save(OUT_XML)
    print(f"wrote {os.path.relpath(OUT_XML, TOP)} and .bin")

    test_x = fm.load_images("t10k")
    test_y = fm.load_labels("t10k")
    pred8 = predict(OUT_XML, test_x)
    torch_pred = np.fromfile(os.path.join(TOP, "tests", "data", "fashion-mnist",
                                          "t10k.torch-pred.u8"), dtype=np.uint8)
    acc8 = float((pred8 == test_y).mean())
    acc32 = float((torch_pred == test_y).mean())
    agree = float((pred8 == torch_pred).mean())
    print(f"test accuracy: fp32 {acc32:.4f}, int8 (FakeQuantize, numpy executor) {acc8:.4f}; "
          f"same class as fp32 on {agree:.4f}")
    os.makedirs(DATA_DIR, exist_ok=True)
    pred8.tofile(os.path.join(DATA_DIR, "int8.t10k-pred.u8"))
    with open(os.path.join(HERE, "quantization.json"), "w") as f:
        json.dump({"calibration_images": args.calib,
                   "activations": {k: {"low": float(v[0]), "high": float(v[1]), "scale": v[2],
                                       "zero_point": v[3]} for k, v in ranges.items()},
                   "weights": "per output channel, symmetric, 255 levels",
                   "test_accuracy": {"fp32": acc32, "int8_fakequantize": acc8,
                                     "same_class_as_fp32": agree}}, f, indent=2)
        f.write("\n")
    print("wrote quantization.json and tests/data/split/int8.t10k-pred.u8")


if __name__ == "__main__":
    main()
