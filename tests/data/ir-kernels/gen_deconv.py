#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reference vectors for ConvolutionBackpropData-1 and
GroupConvolutionBackpropData-1 (tests/ir/kernels/test-deconv.c), from
PyTorch's conv_transpose1d/2d/3d.

Run with Debian's /usr/bin/python3 (python3-torch, python3-numpy):
`tests/data/ir-kernels/gen_deconv.py`. Case NAME writes NAME_x.npy (data),
NAME_w.npy (OpenVINO's filter layout) and NAME_y.npy.

PyTorch pads symmetrically and appends output_padding at the end; the
OpenVINO op also has asymmetric pads and an explicit output_shape. Both are
the same scatter: output pixel y = x·stride + k·dilation - pads_begin, kept
for 0 <= y < out. So the expectation is torch's full transposed convolution
(no padding) cropped to [pads_begin, pads_begin + out) per axis, with zeros
where the window passes the end (output_padding) — the formulas of the
spec's "Detailed description" choose pads_begin and out.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20260116)
CASES = []


def rand(*shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


def spec_geometry(xs, ks, strides, dil, pads_begin, pads_end, auto_pad, out_pad, out_shape):
    """pads_begin and output size per axis, from the spec (and OpenVINO's
    shape inference for same_* with output_shape)."""
    pb, out = [], []
    for i in range(len(xs)):
        full = strides[i] * (xs[i] - 1) + dil[i] * (ks[i] - 1) + 1
        b = pads_begin[i] if auto_pad == "explicit" else 0
        e = pads_end[i] if auto_pad == "explicit" else 0
        if out_shape is not None:
            o = out_shape[i]
            if auto_pad in ("same_upper", "same_lower"):
                total = max(full - o + out_pad[i], 0)
                b = total - total // 2 if auto_pad == "same_upper" else total // 2
        else:
            o = full - b - e + out_pad[i]
        pb.append(b)
        out.append(o)
    return pb, out


def case(name, x, w, groups, strides, dil, pads_begin, pads_end, auto_pad="explicit",
         out_pad=None, out_shape=None):
    n = x.ndim - 2
    out_pad = out_pad or [0] * n
    ks = w.shape[-n:]
    pb, out = spec_geometry(x.shape[2:], ks, strides, dil, pads_begin, pads_end, auto_pad,
                            out_pad, out_shape)
    # torch's weight: [C_in, C_out/G, k...]; ours (grouped): [G, C_in/G, C_out/G, k...]
    tw = torch.from_numpy(w.reshape(-1, *w.shape[-n - 1:]))
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[n]
    full = fn(torch.from_numpy(x), tw, stride=strides, dilation=dil, groups=groups).numpy()
    y = np.zeros(full.shape[:2] + tuple(out), np.float32)
    src = [slice(None), slice(None)]
    dst = [slice(None), slice(None)]
    for i in range(n):
        lo, hi = pb[i], min(pb[i] + out[i], full.shape[2 + i])
        src.append(slice(lo, hi))
        dst.append(slice(0, hi - lo))
    y[tuple(dst)] = full[tuple(src)]
    for k, v in (("x", x), ("w", w), ("y", y)):
        np.save(os.path.join(OUT, f"{name}_{k}.npy"), v)
    CASES.append(name)


if __name__ == "__main__":
    # symmetric pads and output_padding: torch's own parameters
    x, w = rand(1, 4, 5, 6), rand(4, 3, 3, 3)
    case("dc_basic", x, w, 1, [2, 2], [1, 1], [1, 1], [1, 1], out_pad=[1, 1])
    ref = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=2, padding=1,
                             output_padding=1).numpy()
    assert np.allclose(np.load(os.path.join(OUT, "dc_basic_y.npy")), ref, atol=1e-6)
    case("dc_asym", rand(2, 3, 4, 5), rand(3, 2, 2, 3), 1, [2, 3], [1, 2], [0, 2], [1, 0])
    x, w = rand(1, 3, 4, 5), rand(3, 2, 3, 3)
    case("dc_oshape_upper", x, w, 1, [2, 2], [1, 1], [0, 0], [0, 0], "same_upper",
         out_shape=[8, 10])
    case("dc_oshape_lower", x, w, 1, [2, 2], [1, 1], [0, 0], [0, 0], "same_lower",
         out_shape=[7, 9])
    case("dc_oshape_valid", x, w, 1, [2, 2], [1, 1], [0, 0], [0, 0], "valid",
         out_shape=[11, 12])
    case("dc_oshape_explicit", x, w, 1, [2, 2], [1, 1], [1, 0], [0, 0], "explicit",
         out_shape=[8, 9])
    case("dc_same_noshape", x, w, 1, [2, 1], [1, 1], [3, 3], [3, 3], "same_upper")
    case("dc_1d", rand(2, 3, 7), rand(3, 4, 4), 1, [3], [2], [1], [2], out_pad=[1])
    case("dc_3d", rand(1, 2, 3, 4, 3), rand(2, 3, 2, 3, 2), 1, [2, 1, 2], [1, 1, 1],
         [0, 1, 1], [1, 0, 0])
    case("gdc_groups", rand(1, 6, 5, 5), rand(3, 2, 4, 3, 3), 3, [2, 2], [1, 1], [1, 1], [1, 1])
    case("gdc_depthwise", rand(2, 8, 6, 7), rand(8, 1, 1, 4, 4), 8, [2, 2], [1, 1], [1, 1],
         [1, 1])
    print(len(CASES), "cases")
