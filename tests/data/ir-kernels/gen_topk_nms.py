#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reference vectors for TopK-1/3/11 and NonMaxSuppression-5/9
(tests/ir/kernels/test-topk-nms.c).

Run with Debian's /usr/bin/python3 (python3-numpy, python3-torch):
`tests/data/ir-kernels/gen_topk_nms.py`. Case NAME writes NAME_inI.npy (the
layer's inputs) and NAME_y0.npy, NAME_y1.npy, ... (its outputs).

TopK: NumPy's stable argsort (ties keep the lower index first, which is
TopK-11's `stable`), NaN ranking above every number as in torch.topk; the
cases without ties are checked against torch.topk here.
NonMaxSuppression: the spec's eight steps written as they read (take the
best remaining box, keep it if its score passes the threshold, rescale
every other box's score by func(IOU), repeat), per batch and class, then
the output rows padded with -1 to the spec's upper bound.
"""
import math
import os

import numpy as np
import torch

OUT = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20260117)
CASES = []


def case(name, inputs, outputs):
    for i, a in enumerate(inputs):
        np.save(os.path.join(OUT, f"{name}_in{i}.npy"), np.array(a, order="C"))
    for i, a in enumerate(outputs):
        np.save(os.path.join(OUT, f"{name}_y{i}.npy"), np.array(a, order="C"))
    CASES.append(name)


# -------------------------------------------------------------------- TopK

def spec_topk(x, k, axis, mode, sort, itype=np.int32):
    axis %= x.ndim
    k = min(k, x.shape[axis])
    xm = np.moveaxis(x, axis, -1)
    vals = np.zeros(xm.shape[:-1] + (k,), x.dtype)
    idx = np.zeros(xm.shape[:-1] + (k,), itype)
    for p in np.ndindex(*xm.shape[:-1]):
        row = xm[p]
        if np.issubdtype(x.dtype, np.floating):
            nan = np.isnan(row)
            key = np.where(nan, 0, row).astype(np.float64)
        else:
            nan = np.zeros(row.shape, bool)
            key = row.astype(object)       # exact for int64
        # rank: NaN first for max (last for min), then value, then index
        order = sorted(range(len(row)),
                       key=lambda i: ((0 if nan[i] else 1) if mode == "max" else (1 if nan[i] else 0),
                                      -key[i] if mode == "max" else key[i], i))
        top = order[:k]
        if sort == "index":
            top = sorted(top)
        vals[p] = row[top]
        idx[p] = top
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


def gen_topk():
    x = rng.uniform(-1, 1, size=(3, 20, 4)).astype(np.float32)
    for mode in ("max", "min"):
        v, i = spec_topk(x, 5, 1, mode, "value")
        tv, ti = torch.topk(torch.from_numpy(x), 5, dim=1, largest=mode == "max", sorted=True)
        assert np.array_equal(v, tv.numpy()) and np.array_equal(i, ti.numpy())
        case(f"topk_{mode}_value", [x, np.array(5, np.int64)], [v, i])
        case(f"topk_{mode}_index", [x, np.array(5, np.int32)],
             list(spec_topk(x, 5, 1, mode, "index", np.int64)))
    x = rng.integers(0, 6, size=(4, 9)).astype(np.int32)          # many ties
    case("topk_ties_i32", [x, np.array(4, np.int64)], list(spec_topk(x, 4, -1, "max", "value")))
    case("topk_ties_min", [x, np.array(4, np.int64)], list(spec_topk(x, 4, 0, "min", "value")))
    big = np.array([2**60 + 3, 2**60 + 1, 2**60 + 2, -2**62, 2**60 + 1, 7], np.int64)
    case("topk_i64_big", [big, np.array(3, np.int64)], list(spec_topk(big, 3, 0, "max", "value")))
    case("topk_i64_big_min", [big, np.array(4, np.int64)],
         list(spec_topk(big, 4, 0, "min", "value")))
    x = rng.integers(0, 255, size=(2, 3, 7)).astype(np.uint8)
    case("topk_u8_clamp", [x, np.array(10, np.int64)], list(spec_topk(x, 10, 2, "max", "value")))
    x = np.array([[1.0, np.nan, 3.0, -np.inf, np.nan, 0.5]], np.float32)
    case("topk_nan_max", [x, np.array(3, np.int64)], list(spec_topk(x, 3, 1, "max", "value")))
    case("topk_nan_min", [x, np.array(3, np.int64)], list(spec_topk(x, 3, 1, "min", "value")))
    x = np.array([7.5], np.float32)
    case("topk_one", [x, np.array(1, np.int64)], list(spec_topk(x, 1, 0, "max", "value")))
    x = rng.uniform(0, 1, size=(1, 1000)).astype(np.float32)       # a classifier's top-5
    case("topk_classifier", [x, np.array(5, np.int64)], list(spec_topk(x, 5, -1, "max", "value")))


# ----------------------------------------------------- NonMaxSuppression

def iou(a, b):
    """IOU of two [y1, x1, y2, x2] boxes (corners in any order), float32."""
    a = [min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])]
    b = [min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])]
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    if area_a <= 0 or area_b <= 0:
        return np.float32(0)
    h = max(min(a[2], b[2]) - max(a[0], b[0]), np.float32(0))
    w = max(min(a[3], b[3]) - max(a[1], b[1]), np.float32(0))
    inter = h * w
    return np.float32(inter / (area_a + area_b - inter))


def spec_nms(boxes, scores, max_out, iou_thr, score_thr, sigma, center, sort_desc, version,
             itype=np.int64):
    f32 = np.float32
    nb, nc, n = scores.shape
    if center:
        c = boxes
        boxes = np.stack([c[..., 1] - c[..., 3] / f32(2), c[..., 0] - c[..., 2] / f32(2),
                          c[..., 1] + c[..., 3] / f32(2), c[..., 0] + c[..., 2] / f32(2)], -1)

    def func(o):
        if sigma > 0 and version == 9:
            return f32(math.exp(f32(-0.5) / f32(sigma) * o * o))
        w = f32(math.exp(f32(-0.5) / f32(sigma) * o * o)) if sigma > 0 else f32(1)
        return w if o <= iou_thr else f32(0)

    rows = []
    for b in range(nb):
        for c in range(nc):
            s = {i: f32(scores[b, c, i]) for i in range(n) if scores[b, c, i] > score_thr}
            selected = []
            while s and len(selected) < max_out:
                best = max(s, key=lambda i: (s[i], -i))        # step 4
                sc = s.pop(best)                                # step 5
                if not sc > score_thr:                          # step 6
                    break
                selected.append((best, sc))
                for i in list(s):                               # step 7
                    s[i] = s[i] * func(iou(boxes[b, i], boxes[b, best]))
                    if not s[i] > score_thr:
                        del s[i]
            rows += [(b, c, i, sc) for i, sc in selected]
    if sort_desc:
        rows.sort(key=lambda r: (-r[3], r[0], r[1], r[2]))
    bound = min(n, max_out) * nb * nc
    idx = -np.ones((bound, 3), itype)
    sco = -np.ones((bound, 3), np.float32)
    for r, (b, c, i, sc) in enumerate(rows):
        idx[r] = (b, c, i)
        sco[r] = (b, c, sc)
    return idx, sco, np.array([len(rows)], itype)


def nms_case(name, boxes, scores, max_out, iou_thr, score_thr, sigma=0.0, center=False,
             sort_desc=True, version=9, itype=np.int64, n_inputs=6):
    ins = [boxes, scores, np.array(max_out, np.int64), np.array(iou_thr, np.float32),
           np.array(score_thr, np.float32), np.array(sigma, np.float32)][:n_inputs]
    case(name, ins, list(spec_nms(boxes, scores, max_out, iou_thr, score_thr, sigma, center,
                                  sort_desc, version, itype)))


def clustered_boxes(nb, n):
    """Boxes around a few centres so that many overlap."""
    centres = rng.uniform(0.2, 0.8, size=(nb, 4, 2))
    k = rng.integers(0, 4, size=(nb, n))
    cy = np.take_along_axis(centres[..., 0], k, 1) + rng.normal(0, 0.03, size=(nb, n))
    cx = np.take_along_axis(centres[..., 1], k, 1) + rng.normal(0, 0.03, size=(nb, n))
    h = rng.uniform(0.1, 0.3, size=(nb, n))
    w = rng.uniform(0.1, 0.3, size=(nb, n))
    return cy, cx, h, w


def gen_nms():
    cy, cx, h, w = clustered_boxes(2, 40)
    corner = np.stack([cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2], -1).astype(np.float32)
    flip = rng.random((2, 40)) < 0.3                  # some boxes given by the other diagonal
    corner[flip] = corner[flip][:, [2, 3, 0, 1]]
    scores = rng.uniform(0, 1, size=(2, 3, 40)).astype(np.float32)
    nms_case("nms9_corner", corner, scores, 25, 0.3, 0.2)
    nms_case("nms9_unsorted", corner, scores, 25, 0.3, 0.2, sort_desc=False)
    nms_case("nms5_corner", corner, scores, 30, 0.4, 0.1, version=5, itype=np.int32)
    nms_case("nms9_soft", corner, scores, 30, 0.5, 0.3, sigma=0.2)
    nms_case("nms5_soft", corner, scores, 30, 0.6, 0.3, sigma=0.2, version=5)
    nms_case("nms9_all", corner, scores, 100, 0.7, 0.0)
    nms_case("nms9_three_inputs", corner, scores, 4, 0.0, 0.0, n_inputs=3)
    center = np.stack([cx, cy, w, h], -1).astype(np.float32)
    nms_case("nms9_center", center, scores, 20, 0.45, 0.25, center=True)
    nms_case("nms9_none", corner, np.zeros((2, 3, 40), np.float32), 5, 0.5, 0.5)
    one = np.array([[[0.1, 0.1, 0.5, 0.5]]], np.float32)
    nms_case("nms9_one", one, np.array([[[0.9]]], np.float32), 1, 0.5, 0.0)


if __name__ == "__main__":
    gen_topk()
    gen_nms()
    print(len(CASES), "cases")
