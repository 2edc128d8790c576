#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Build the Fashion-MNIST model with an OpenVINO PrePostProcessor head, and
its reference data.

    /usr/bin/python3 models/fashion-mnist-ppp/make_ppp.py

Reads the committed models/fashion-mnist/fashion-mnist.{xml,bin} (no
training needed) and writes:
  models/fashion-mnist-ppp/fashion-mnist-ppp.{xml,bin}
  tests/data/ppp/*           inputs and the numpy executor's outputs

The head is what ov::preprocess::PrePostProcessor builds for
  input().tensor().set_element_type(u8).set_color_format(NV12_TWO_PLANES)
         .set_spatial_static_shape(48, 64).set_layout("NHWC")
  input().preprocess().convert_color(RGB).convert_element_type(f32)
         .resize(RESIZE_LINEAR).mean(72.93).scale(90.015)
  input().model().set_layout("NCHW")
i.e. Parameters input/y u8 [1,48,64,1] and input/uv u8 [1,24,32,2] ->
NV12toRGB-8 -> Convert-1 (f32) -> Interpolate-11 (linear, sizes [28,28] on
axes [1,2], half_pixel, no antialias) -> Subtract-1 (const [1,1,1,3]) ->
Multiply-1 (const [1,1,1,3] = 1/90.015) -> Transpose-1 ([0,3,1,2]) -> the
network. (OpenVINO's PPP expresses scale() as Divide; Model Optimizer's
--scale_values and this model use Multiply by the reciprocal.)

Checks made before writing: the executor's Interpolate equals torch's
bilinear interpolate (align_corners=False, no antialias, the same
half-pixel triangle filter) within 1e-3 on the 0..255 scale (f32 rounding); the executor's network output
on the head's output equals torch's within 1e-5; and NV12toRGB's u8 result
is reported with the count of (Y, U, V) whose u8 G depends on the order of
G's terms (the executor follows OpenVINO's reference code; each case
records how many of its pixels are such).
"""

import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fashion-mnist"))
from irgen import fashion_mnist as fm  # noqa: E402
from irgen.executor import Executor, yuv_to_rgb  # noqa: E402
from irgen.serializer import Graph  # noqa: E402
from export import add_fashion_net, model_rt_info, state_from_ir  # noqa: E402
from train import FashionNet  # noqa: E402

NET_XML = os.path.join(os.path.dirname(HERE), "fashion-mnist", "fashion-mnist.xml")
OUT_XML = os.path.join(HERE, "fashion-mnist-ppp.xml")
DATA_DIR = os.path.join(TOP, "tests", "data", "ppp")
H, W = 48, 64  # NV12 frame fed to the model; the network wants 28x28
MEAN_PIX = round(fm.MEAN * 255, 6)  # 72.93
STD_PIX = round(fm.STD * 255, 6)    # 90.015
RESULT = "prob/sink_port_0"


def build(sd):
    g = Graph("fashion-mnist-ppp")
    g.rt_info = model_rt_info("models/fashion-mnist-ppp/make_ppp.py")
    y = g.parameter("input/y", "u8", [1, H, W, 1], layout="[N,H,W,C]")
    uv = g.parameter("input/uv", "u8", [1, H // 2, W // 2, 2], layout="[N,H,W,C]")
    x, = g.op("NV12toRGB", "opset8", [y, uv], {}, name="input/nv12_to_rgb",
              out_shapes=[[1, H, W, 3]])
    x, = g.op("Convert", "opset1", [x], {"destination_type": "f32"},
              name="input/convert_element_type", out_shapes=[[1, H, W, 3]], out_types=["f32"])
    sizes = g.const("input/resize/sizes", np.array([28, 28], dtype=np.int64))
    axes = g.const("input/resize/axes", np.array([1, 2], dtype=np.int64))
    x, = g.op("Interpolate", "opset11", [x, sizes, axes],
              {"mode": "linear", "shape_calculation_mode": "sizes",
               "coordinate_transformation_mode": "half_pixel",
               "nearest_mode": "round_prefer_floor", "antialias": False,
               "pads_begin": [0, 0, 0, 0], "pads_end": [0, 0, 0, 0], "cube_coeff": -0.75},
              name="input/resize", out_shapes=[[1, 28, 28, 3]])
    mean = g.const("input/mean/values", np.full((1, 1, 1, 3), MEAN_PIX, dtype=np.float32))
    x, = g.op("Subtract", "opset1", [x, mean], {"auto_broadcast": "numpy"},
              name="input/mean", out_shapes=[[1, 28, 28, 3]])
    scale = g.const("input/scale/values",
                    np.full((1, 1, 1, 3), np.float32(1.0) / np.float32(STD_PIX), dtype=np.float32))
    x, = g.op("Multiply", "opset1", [x, scale], {"auto_broadcast": "numpy"},
              name="input/scale", out_shapes=[[1, 28, 28, 3]])
    order = g.const("input/convert_layout/order", np.array([0, 3, 1, 2], dtype=np.int64))
    x, = g.op("Transpose", "opset1", [x, order], {}, name="input/convert_layout",
              out_shapes=[[1, 3, 28, 28]])
    g.result(add_fashion_net(g, x, sd), RESULT)
    return g


def grey_to_nv12(grey):
    """A 28x28 grey image as a 64x48 NV12 frame: nearest-neighbour upscale
    (source index floor(i * 28 / size)), then BT.601 limited range
    Y = round(16 + g * 219 / 255), U = V = 128."""
    rows = (np.arange(H) * grey.shape[0]) // H
    cols = (np.arange(W) * grey.shape[1]) // W
    up = grey[rows][:, cols].astype(np.float64)
    y = np.floor(16 + up * 219 / 255 + 0.5).astype(np.uint8)
    uv = np.full((H // 2, W // 2, 2), 128, dtype=np.uint8)
    return y, uv


def gradient_nv12():
    """Y ramps left to right, U top to bottom, V along the diagonal."""
    yy, xx = np.mgrid[0:H, 0:W]
    y = (16 + xx * 219 // (W - 1)).astype(np.uint8)
    cy, cx = np.mgrid[0:H // 2, 0:W // 2]
    u = (16 + cy * 224 // (H // 2 - 1)).astype(np.uint8)
    v = (16 + (cx + cy) * 224 // (W // 2 + H // 2 - 2)).astype(np.uint8)
    return y, np.stack([u, v], axis=-1)


def noise_nv12(seed):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 256, (H, W), dtype=np.uint8),
            rng.integers(0, 256, (H // 2, W // 2, 2), dtype=np.uint8))


def nv12_order_sensitive():
    """A [256, 256, 256] bool mask over (Y, U, V): True where the u8 G of
    NV12toRGB changes if the V term is subtracted before the U term (the
    spec's written order) instead of after (OpenVINO's reference code, which
    the executor follows). Also prints how many u8 values differ from an
    exact float64 evaluation of the formula."""
    f32 = np.float32
    y, u, v = np.meshgrid(np.arange(256, dtype=np.float32), np.arange(256, dtype=np.float32),
                          np.arange(256, dtype=np.float32), indexing="ij")
    rgb = yuv_to_rgb(y, u, v, np.uint8)
    c, d, e = y - f32(16), u - f32(128), v - f32(128)
    g_v_first = f32(1.164) * c - f32(0.813) * e - f32(0.391) * d
    g_v_first = np.floor(np.clip(g_v_first, f32(0), f32(255)) + f32(0.5)).astype(np.uint8)
    mask = g_v_first != rgb[..., 1]
    c64, d64, e64 = c.astype(np.float64), d.astype(np.float64), e.astype(np.float64)
    exact = np.stack([1.164 * c64 + 1.596 * e64,
                      1.164 * c64 - 0.391 * d64 - 0.813 * e64,
                      1.164 * c64 + 2.018 * d64], axis=-1)
    exact = np.floor(np.clip(exact, 0, 255) + 0.5).astype(np.uint8)
    print(f"NV12toRGB u8: {int(mask.sum())} of 2^24 (Y,U,V) give another G if V's term "
          f"goes first; {int((exact != rgb).sum())} channel values differ from float64 "
          f"evaluation (all by 1)" if int(np.abs(exact.astype(int) - rgb).max()) <= 1 else
          "NV12toRGB u8: float64 evaluation differs by more than 1")
    return mask


def main():
    sd = state_from_ir(NET_XML)
    g = build(sd)
    g.save(OUT_XML)
    print(f"wrote {os.path.relpath(OUT_XML, TOP)} and .bin")
    ex = Executor(OUT_XML)
    net = FashionNet()
    net.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()})
    net.eval()

    sensitive = nv12_order_sensitive()

    test_x = fm.load_images("t10k")
    test_y = fm.load_labels("t10k")
    cases = [(f"t10k-{i}", *grey_to_nv12(test_x[i])) for i in (0, 1, 2, 4)]
    cases.append(("gradient", *gradient_nv12()))
    cases.append(("noise", *noise_nv12(7)))

    os.makedirs(DATA_DIR, exist_ok=True)
    lines = []
    for name, y, uv in cases:
        feeds = {"input/y": y.reshape(1, H, W, 1), "input/uv": uv.reshape(1, H // 2, W // 2, 2)}
        res, inner = ex.run(feeds, keep=True)
        rgb = inner["input/nv12_to_rgb"][0]
        conv = inner["input/convert_element_type"][0]
        resized = inner["input/resize"][0]
        head = inner["input/convert_layout"][0]
        prob = res[RESULT]

        # Independent checks: torch's bilinear resize and torch's network.
        t_resized = F.interpolate(torch.from_numpy(conv).permute(0, 3, 1, 2), size=(28, 28),
                                  mode="bilinear", align_corners=False).permute(0, 2, 3, 1)
        d_resize = float(np.abs(t_resized.numpy() - resized).max())
        with torch.no_grad():
            t_prob = torch.softmax(net(torch.from_numpy(head)), dim=1).numpy()
        d_net = float(np.abs(t_prob - prob).max())
        uv_full = uv.repeat(2, axis=0).repeat(2, axis=1)
        n_sens = int(sensitive[y, uv_full[..., 0], uv_full[..., 1]].sum())
        top = int(prob.argmax())
        print(f"{name}: class {top} ({fm.LABELS[top]}, p={prob[0, top]:.4f}); "
              f"resize vs torch {d_resize:.2g}, network vs torch {d_net:.2g}")
        if d_resize > 1e-3 or d_net > 1e-5:
            sys.exit("the executor disagrees with torch")

        base = os.path.join(DATA_DIR, name)
        np.concatenate([y.reshape(-1), uv.reshape(-1)]).tofile(base + ".nv12")
        rgb.astype(np.uint8).tofile(base + ".rgb.u8")
        head.astype("<f4").tofile(base + ".head.f32")
        prob.astype("<f4").tofile(base + ".prob.f32")
        label = ""
        if name.startswith("t10k-"):
            label = f", true label {fm.LABELS[test_y[int(name[5:])]]}"
        lines.append(f"| {name} | {top} ({fm.LABELS[top]}{label}) | {prob[0, top]:.4f} | {n_sens} |")
    with open(os.path.join(DATA_DIR, "cases.md"), "w") as f:
        f.write("| case | top-1 class | probability | order-sensitive pixels |\n|---|---|---|---|\n")
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(cases)} cases to {os.path.relpath(DATA_DIR, TOP)}")


if __name__ == "__main__":
    main()
