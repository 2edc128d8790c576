#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Resize conformance vectors from three other implementations.

Writes vectors.json next to this script: small 3-channel images (integers
0..255, stored HWC) and, for each case, the output of PyTorch's
F.interpolate, ONNX Runtime's Resize or Pillow's Image.resize, together with
the Interpolate-4/11 attributes (mode, coordinate_transformation_mode,
nearest_mode, antialias, cube_coeff) that the other implementation's setting
corresponds to. tests/m2i/test-resize-vectors.c replays every case through
the engine's tables and kernels.

Run with Debian's interpreter, which has torch, numpy, onnx and PIL:

    /usr/bin/python3 tests/data/resize/make-vectors.py --ort /tmp/ortnode

where /tmp/ortnode is a scratch directory (outside the repository) in which
`npm install --ignore-scripts onnxruntime-node` was run; run-ort.js (next to
this script) runs the ONNX models there with Node. Without --ort the ONNX
Runtime cases are skipped.

Correspondences (why each case is labelled as it is):

PyTorch F.interpolate, float32 NCHW, size=(H, W):
  mode='nearest'          src = floor(dst * in/out)
                          = Interpolate nearest, asymmetric, floor
  mode='nearest-exact'    src = floor((dst + 0.5) * in/out)
                          = nearest, half_pixel, round_prefer_ceil
                          = nearest, tf_half_pixel_for_nn, floor
  mode='bilinear', align_corners=False
                          two taps at the half_pixel coordinate clamped to
                          [0, in-1] = linear_onnx, half_pixel; also "linear"
                          (its triangle with out-of-image taps dropped and the
                          rest renormalised gives the same two-tap blend)
  mode='bilinear', align_corners=True  = linear_onnx / linear, align_corners
  mode='bicubic', align_corners=False  = cubic, half_pixel, cube_coeff -0.75
                          (taps clamped to the image, coordinate not clamped)
  mode='bicubic', align_corners=True   = cubic, align_corners, -0.75
  mode='bilinear', antialias=True      Pillow's algorithm (triangle widened
                          by in/out when shrinking, renormalised)
                          = bilinear_pillow; also linear + antialias,
                          half_pixel, when no axis grows while another shrinks
  mode='bicubic', antialias=True       = bicubic_pillow, cube_coeff -0.5

ONNX Runtime Resize (opset 13; 18 for antialias), float32 NCHW, "sizes":
  mode, coordinate_transformation_mode, nearest_mode and cubic_coeff_a have
  the same names and formulas as Interpolate's; ONNX "linear" is
  Interpolate's linear_onnx (also "linear" as above); exclude_outside=0
  matches Interpolate's clamped cubic taps. ONNX has no "simple"
  nearest_mode; Interpolate's "simple" is ceil on a shrinking axis and
  truncation (= floor for the non-negative asymmetric coordinate) on a
  growing one, so asymmetric cases that shrink both axes are labelled
  simple as well as ceil, and those that grow both as simple and floor.
  antialias=1, exclude_outside=1 with "linear", half_pixel, shrinking
  = linear + antialias (Interpolate drops the taps outside the image and
  renormalises; with exclude_outside=0 ONNX Runtime clamps them instead).

Pillow Image.resize (9.4, Debian's python3-pil), one 'F' (float32) image
per channel, box = whole image:
  Image.BILINEAR = bilinear_pillow;  Image.BICUBIC = bicubic_pillow with
  cube_coeff -0.5 (Pillow's fixed a). Pillow ignores coordinate modes.
  The same with 8-bit 'RGB' images gives "u8" expectations: Pillow rounds
  its fixed-point sums after each pass, as OpenVINO's reference does on u8.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))

# Images (H, W), 3 channels, integers 0..255, fixed seed.
IMAGE_SIZES = {"a": (7, 9), "b": (16, 16), "c": (4, 5), "d": (1, 1), "e": (5, 1)}

# (image, out_h, out_w): up and down, non-integer ratios, 1x1 outputs, an
# axis that keeps its size, exact 2x.
SIZES = [
    ("a", 13, 16), ("a", 5, 4), ("a", 1, 1), ("a", 7, 14), ("a", 3, 9),
    ("a", 16, 11), ("b", 5, 7), ("b", 9, 12), ("b", 16, 3), ("b", 1, 16),
    ("b", 2, 2), ("c", 8, 10), ("c", 11, 13), ("c", 1, 1), ("c", 3, 2),
    ("d", 3, 4), ("e", 2, 3),
]
# A smaller set for the many nearest-mode combinations.
NEAREST_SIZES = [("a", 13, 16), ("a", 5, 4), ("a", 7, 14), ("b", 5, 7),
                 ("b", 9, 12), ("c", 8, 10), ("c", 3, 2), ("c", 1, 1),
                 ("e", 2, 3)]

COORDS = ["half_pixel", "pytorch_half_pixel", "asymmetric",
          "tf_half_pixel_for_nn", "align_corners"]
ONNX_NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def make_images():
    rng = np.random.RandomState(20240611)
    return {k: rng.randint(0, 256, size=(h, w, 3)).astype(np.float32)
            for k, (h, w) in IMAGE_SIZES.items()}


def grows(img, oh, ow):
    h, w, _ = img.shape
    return oh > h, ow > w, oh < h, ow < w


def attrs(mode, coord="half_pixel", nearest="round_prefer_floor",
          antialias=False, cube=-0.75):
    return {"mode": mode, "coord": coord, "nearest": nearest,
            "antialias": antialias, "cube_coeff": cube}


def case(source, name, oh, ow, out_hwc, labels):
    return {"source": source, "image": name, "out_h": oh, "out_w": ow,
            "as": labels,
            "expected": [round(float(v), 4) for v in out_hwc.reshape(-1)]}


# ---- PyTorch ---------------------------------------------------------------

def torch_cases(images):
    cases = []
    for name, oh, ow in SIZES:
        img = images[name]
        x = torch.from_numpy(img.transpose(2, 0, 1)[None].copy())
        gh, gw, sh, sw = grows(img, oh, ow)
        mixed = (gh or gw) and (sh or sw)

        def run(**kw):
            y = F.interpolate(x, size=(oh, ow), **kw)
            return y[0].numpy().transpose(1, 2, 0)

        def add(kw, labels):
            src = "torch %s F.interpolate(%s)" % (torch.__version__, ", ".join(
                "%s=%r" % kv for kv in kw.items()))
            cases.append(case(src, name, oh, ow, run(**kw), labels))

        add({"mode": "nearest"}, [attrs("nearest", "asymmetric", "floor")])
        add({"mode": "nearest-exact"},
            [attrs("nearest", "half_pixel", "round_prefer_ceil"),
             attrs("nearest", "tf_half_pixel_for_nn", "floor")])
        for ac in (False, True):
            coord = "align_corners" if ac else "half_pixel"
            add({"mode": "bilinear", "align_corners": ac},
                [attrs("linear_onnx", coord), attrs("linear", coord)])
            add({"mode": "bicubic", "align_corners": ac},
                [attrs("cubic", coord, cube=-0.75)])
        labels = [attrs("bilinear_pillow")]
        if not mixed:
            labels.append(attrs("linear", "half_pixel", antialias=True))
        add({"mode": "bilinear", "antialias": True, "align_corners": False}, labels)
        add({"mode": "bicubic", "antialias": True, "align_corners": False},
            [attrs("bicubic_pillow", cube=-0.5)])
    return cases


# ---- ONNX Runtime ----------------------------------------------------------

def onnx_model(path, in_shape, out_shape, mode, coord, nearest, cube, antialias):
    import onnx
    from onnx import helper, TensorProto
    opset = 18 if antialias else 13
    kw = {"mode": mode, "coordinate_transformation_mode": coord}
    if mode == "nearest":
        kw["nearest_mode"] = nearest
    if mode == "cubic":
        kw["cubic_coeff_a"] = cube
        kw["exclude_outside"] = 0
    if antialias:
        kw["antialias"] = 1
        kw["exclude_outside"] = 1
    node = helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], **kw)
    sizes = helper.make_tensor("sizes", TensorProto.INT64, [4], list(out_shape))
    graph = helper.make_graph(
        [node], "resize",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(in_shape))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, list(out_shape))],
        initializer=[sizes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def ort_cases(images, ortdir):
    jobs = []     # (model, input, output, metadata)
    tmp = tempfile.mkdtemp(prefix="m2i-resize-ort-")

    def add(name, oh, ow, mode, coord, nearest, cube, antialias, labels):
        img = images[name]
        k = len(jobs)
        h, w, _ = img.shape
        model = os.path.join(tmp, "m%d.onnx" % k)
        onnx_model(model, (1, 3, h, w), (1, 3, oh, ow), mode, coord, nearest,
                   cube, antialias)
        inp = os.path.join(tmp, "x%d.bin" % k)
        img.transpose(2, 0, 1).astype("<f4").tofile(inp)
        desc = "mode=%s coordinate_transformation_mode=%s" % (mode, coord)
        if mode == "nearest":
            desc += " nearest_mode=%s" % nearest
        if mode == "cubic":
            desc += " cubic_coeff_a=%g exclude_outside=0" % cube
        if antialias:
            desc += " antialias=1 exclude_outside=1"
        jobs.append({"model": model, "input": inp, "output": inp + ".out",
                     "shape": [1, 3, h, w], "meta": (name, oh, ow, desc, labels)})

    for name, oh, ow in NEAREST_SIZES:
        gh, gw, sh, sw = grows(images[name], oh, ow)
        for coord in COORDS:
            for nm in ONNX_NEAREST:
                labels = [attrs("nearest", coord, nm)]
                if coord == "asymmetric" and nm == "ceil" and sh and sw:
                    labels.append(attrs("nearest", coord, "simple"))
                if coord == "asymmetric" and nm == "floor" and not (sh or sw):
                    labels.append(attrs("nearest", coord, "simple"))
                add(name, oh, ow, "nearest", coord, nm, -0.75, False, labels)
    for name, oh, ow in SIZES:
        gh, gw, sh, sw = grows(images[name], oh, ow)
        for coord in COORDS:
            add(name, oh, ow, "linear", coord, None, -0.75, False,
                [attrs("linear_onnx", coord), attrs("linear", coord)])
            for a in (-0.75, -0.5):
                add(name, oh, ow, "cubic", coord, None, a, False,
                    [attrs("cubic", coord, cube=a)])
        if (sh or sw) and not (gh or gw):
            add(name, oh, ow, "linear", "half_pixel", None, -0.75, True,
                [attrs("linear", "half_pixel", antialias=True)])

    with open(os.path.join(tmp, "jobs.json"), "w") as f:
        json.dump([{k: v for k, v in j.items() if k != "meta"} for j in jobs], f)
    env = dict(os.environ, NODE_PATH=os.path.join(ortdir, "node_modules"))
    subprocess.run(["node", os.path.join(HERE, "run-ort.js"),
                    os.path.join(tmp, "jobs.json")], check=True, env=env)
    version = subprocess.run(
        ["node", "-e", "console.log(require('onnxruntime-node/package.json').version)"],
        check=True, env=env, capture_output=True, text=True).stdout.strip()

    cases = []
    for j in jobs:
        name, oh, ow, desc, labels = j["meta"]
        y = np.fromfile(j["output"], dtype="<f4").reshape(3, oh, ow).transpose(1, 2, 0)
        cases.append(case("onnxruntime-node %s Resize %s" % (version, desc),
                          name, oh, ow, y, labels))
    return cases


# ---- Pillow ----------------------------------------------------------------

def pillow_cases(images):
    import PIL
    cases = []
    for name, oh, ow in SIZES:
        img = images[name]
        for filt, mode, cube in ((Image.BILINEAR, "bilinear_pillow", -0.75),
                                 (Image.BICUBIC, "bicubic_pillow", -0.5)):
            planes = [np.asarray(Image.fromarray(img[:, :, c], mode="F")
                                 .resize((ow, oh), filt), dtype=np.float32)
                      for c in range(3)]
            y = np.stack(planes, axis=2)
            fname = "BILINEAR" if filt == Image.BILINEAR else "BICUBIC"
            cases.append(case("Pillow %s Image.resize(%s) on 'F' images" % (
                PIL.__version__, fname), name, oh, ow, y, [attrs(mode, cube=cube)]))
            rgb = Image.fromarray(img.astype(np.uint8), mode="RGB").resize((ow, oh), filt)
            c8 = case("Pillow %s Image.resize(%s) on 'RGB' (8-bit) images" % (
                PIL.__version__, fname), name, oh, ow,
                np.asarray(rgb, dtype=np.float32), [attrs(mode, cube=cube)])
            c8["u8"] = True
            cases.append(c8)
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ort", help="scratch dir with onnxruntime-node installed")
    ap.add_argument("--out", default=os.path.join(HERE, "vectors.json"))
    args = ap.parse_args()

    torch.set_num_threads(1)
    images = make_images()
    cases = torch_cases(images) + pillow_cases(images)
    if args.ort:
        cases += ort_cases(images, args.ort)
    else:
        print("no --ort: ONNX Runtime cases skipped", file=sys.stderr)
    doc = {
        "generator": "tests/data/resize/make-vectors.py (see its docstring)",
        "images": {k: {"h": v.shape[0], "w": v.shape[1], "c": 3,
                       "data": [int(t) for t in v.reshape(-1)]}
                   for k, v in images.items()},
        "cases": cases,
    }
    with open(args.out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print("%d cases written to %s" % (len(cases), args.out))


if __name__ == "__main__":
    main()
