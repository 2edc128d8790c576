#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reference vectors for PriorBox-1/8, RegionYolo-1, ReorgYolo-1,
Proposal-1/4, ROIPooling-1, ROIAlign-3/9, CTCGreedyDecoder-1 and
CTCGreedyDecoderSeqLen-6 (tests/ir/kernels/test-detect.c).

Run with Debian's /usr/bin/python3 (python3-numpy, python3-torch):
`tests/data/ir-kernels/gen_detect.py`. Case NAME writes NAME_inI.npy and
NAME_y0.npy, NAME_y1.npy, ...

Each op is written here from its specification, and where the spec is
vague (PriorBox's box list, Proposal's anchors and NMS, ReorgYolo's index
map, ROIAlign's sampling) from the algorithm of the framework the spec
cites (Caffe, Darknet, Mask R-CNN) as OpenVINO's reference runs it — plain
Python loops over one output element at a time, float32 arithmetic.
RegionYolo's activations are checked against torch.sigmoid and
torch.softmax.
"""
import math
import os

import numpy as np
import torch

OUT = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20260118)
f32 = np.float32
CASES = []


def c_round(v):
    """C's roundf: halves away from zero."""
    return f32(math.copysign(math.floor(abs(float(v)) + 0.5), float(v)))


def case(name, inputs, outputs):
    for i, a in enumerate(inputs):
        np.save(os.path.join(OUT, f"{name}_in{i}.npy"), np.array(a, order="C"))
    for i, a in enumerate(outputs):
        np.save(os.path.join(OUT, f"{name}_y{i}.npy"), np.array(a, order="C"))
    CASES.append(name)


# --------------------------------------------------------------- PriorBox

def spec_prior_box(layer_hw, img_hw, min_size=(), max_size=(), aspect_ratio=(), flip=False,
                   clip=False, step=0.0, offset=0.5, variance=(), scale_all_sizes=True,
                   fixed_ratio=(), fixed_size=(), density=(), min_max_order=True):
    H, W = layer_hw
    IH, IW = img_hw
    ars = [f32(1)]
    for a in aspect_ratio:
        if any(abs(f32(a) - e) < 1e-6 for e in ars):
            continue
        ars.append(f32(a))
        if flip:
            ars.append(f32(1) / f32(a))
    min_size = [f32(m) for m in min_size]
    step = f32(step)
    if not scale_all_sizes:                     # MXNet: relative to the image height
        step = f32(IH) / f32(H) if step == -1 else step * f32(IH)
        min_size = [m * f32(IH) for m in min_size]
    iwi, ihi = f32(1) / f32(IW), f32(1) / f32(IH)
    boxes = []

    def box(cx, cy, bw, bh, clip_box):
        b = [(cx - bw) * iwi, (cy - bh) * ihi, (cx + bw) * iwi, (cy + bh) * ihi]
        if clip_box:
            b = [max(b[0], f32(0)), max(b[1], f32(0)), min(b[2], f32(1)), min(b[3], f32(1))]
        boxes.extend(b)

    for h in range(H):
        for w in range(W):
            if step == 0:
                cx = (f32(w) + f32(0.5)) * (f32(IW) / f32(W))
                cy = (f32(h) + f32(0.5)) * (f32(IH) / f32(H))
            else:
                cx = (f32(offset) + f32(w)) * step
                cy = (f32(offset) + f32(h)) * step
            for s, fs in enumerate(fixed_size):
                ifs = int(fs)
                d = int(density[s])
                shift = int(f32(fs) / f32(d))

                def grid(bw, bh):
                    for r in range(d):
                        for c in range(d):
                            box(cx - f32(ifs // 2) + f32(shift) / f32(2) + f32(c * shift),
                                cy - f32(ifs // 2) + f32(shift) / f32(2) + f32(r * shift),
                                bw, bh, True)
                if fixed_ratio:
                    for ar in fixed_ratio:
                        ar = f32(math.sqrt(f32(ar)))
                        grid(f32(fs) * f32(0.5) * ar, f32(fs) * f32(0.5) / ar)
                else:
                    if density:
                        grid(f32(ifs) * f32(0.5), f32(ifs) * f32(0.5))
                    for ar in ars:
                        if abs(ar - 1) < 1e-6:
                            continue
                        ar = f32(math.sqrt(ar))
                        grid(f32(fs) * f32(0.5) * ar, f32(fs) * f32(0.5) / ar)
            for m, ms in enumerate(min_size):
                box(cx, cy, ms * f32(0.5), ms * f32(0.5), False)
                maxb = len(max_size) > m
                mh = f32(math.sqrt(ms * f32(max_size[m]))) * f32(0.5) if maxb else None
                if min_max_order and maxb:
                    box(cx, cy, mh, mh, False)
                if scale_all_sizes or m == len(min_size) - 1:
                    si = m if scale_all_sizes else 0
                    for ar in ars:
                        if abs(ar - 1) < 1e-6:
                            continue
                        ar = f32(math.sqrt(ar))
                        box(cx, cy, min_size[si] * f32(0.5) * ar, min_size[si] * f32(0.5) / ar,
                            False)
                if not min_max_order and maxb:
                    box(cx, cy, mh, mh, False)
    boxes = np.array(boxes, f32)
    if clip:
        boxes = np.clip(boxes, 0, 1)
    var = list(variance) or [0.1]
    vrow = np.tile(np.array(var if len(var) == 4 else var * 4, f32), boxes.size // 4)
    return np.stack([boxes, vrow])


def gen_prior_box():
    # SSD300's conv4_3 head: min 30, max 60, ratio 2, flip, step 8
    case("pb_ssd", [np.array([4, 5], np.int64), np.array([300, 300], np.int64)],
         [spec_prior_box((4, 5), (300, 300), [30.0], [60.0], [2.0], flip=True, clip=False,
                         step=8.0, offset=0.5, variance=[0.1, 0.1, 0.2, 0.2])])
    case("pb_order_clip", [np.array([3, 2], np.int32), np.array([64, 96], np.int32)],
         [spec_prior_box((3, 2), (64, 96), [20.0, 40.0], [30.0, 70.0], [2.0, 3.0, 2.0],
                         flip=True, clip=True, step=0.0, offset=0.5, variance=[0.2],
                         min_max_order=False)])
    case("pb_density", [np.array([2, 2], np.int64), np.array([128, 128], np.int64)],
         [spec_prior_box((2, 2), (128, 128), [], [], [2.0], flip=False, step=32.0, offset=0.5,
                         fixed_size=[32.0, 64.0], density=[2.0, 3.0])])
    case("pb_fixed_ratio", [np.array([2, 3], np.int64), np.array([100, 150], np.int64)],
         [spec_prior_box((2, 3), (100, 150), [], [], [], step=16.0, offset=0.25,
                         fixed_size=[24.0], fixed_ratio=[4.0], density=[2.0])])
    case("pb_mxnet", [np.array([3, 3], np.int64), np.array([90, 120], np.int64)],
         [spec_prior_box((3, 3), (90, 120), [0.2, 0.35], [], [2.0, 0.5], flip=False,
                         step=0.0, offset=0.5, scale_all_sizes=False)])


# ------------------------------------------------------------- RegionYolo

def spec_region_yolo(x, coords, classes, regions, softmax, axis=1, end_axis=3):
    """YOLO9000's region layer: sigmoid on x, y and objectness (and every
    class for v3), softmax over classes for v2."""
    n, c, h, w = x.shape
    y = x.copy().reshape(n, regions, coords + classes + 1, h, w)
    t = torch.from_numpy(y.copy())
    y[:, :, 0:2] = torch.sigmoid(t[:, :, 0:2]).numpy()
    if softmax:
        y[:, :, coords] = torch.sigmoid(t[:, :, coords]).numpy()
        y[:, :, coords + 1:] = torch.softmax(t[:, :, coords + 1:], dim=2).numpy()
    else:
        y[:, :, coords:] = torch.sigmoid(t[:, :, coords:]).numpy()
    y = y.reshape(x.shape)
    if softmax:
        shape = list(x.shape[:axis]) + [int(np.prod(x.shape[axis:end_axis + 1]))] + \
            list(x.shape[end_axis + 1:])
        y = y.reshape(shape)
    return y


def spec_reorg(x, s):
    """Darknet's reorg (forward = 0) as OpenVINO's reference indexes it."""
    n, c, h, w = x.shape
    oc = c // (s * s)
    flat_in = x.reshape(-1)
    out = np.zeros(x.size, x.dtype)
    for b in range(n):
        for k in range(c):
            for j in range(h):
                for i in range(w):
                    off = k // oc
                    src = ((b * oc + k % oc) * h * s + j * s + off // s) * w * s + i * s + off % s
                    out[((b * c + k) * h + j) * w + i] = flat_in[src]
    return out.reshape(n, c * s * s, h // s, w // s)


def gen_yolo():
    x = rng.normal(0, 2, size=(1, 5 * (4 + 3 + 1), 3, 4)).astype(f32)
    case("region_v2", [x], [spec_region_yolo(x, 4, 3, 5, True)])
    case("region_v2_axis", [x], [spec_region_yolo(x, 4, 3, 5, True, axis=2, end_axis=3)])
    x = rng.normal(0, 2, size=(2, 3 * (4 + 6 + 1), 5, 2)).astype(f32)
    case("region_v3", [x], [spec_region_yolo(x, 4, 6, 3, False)])
    x = rng.normal(0, 1, size=(2, 8, 4, 6)).astype(f32)
    case("reorg_s2", [x], [spec_reorg(x, 2)])
    x = rng.integers(0, 100, size=(1, 18, 6, 3)).astype(np.int32)
    case("reorg_s3_i32", [x], [spec_reorg(x, 3)])


# --------------------------------------------------------------- Proposal

def spec_proposal(cls, deltas, im_info, a):
    """Faster R-CNN's proposal layer: anchors, deltas, min-size filter,
    score sort (ties: h, w, anchor order), NMS, top post_nms_topn."""
    tf = a.get("framework") == "tensorflow"
    off = f32(0) if tf else f32(1)
    base = a["base_size"]
    anchors = []
    for r in a["ratio"]:
        rw = f32(math.sqrt(f32(base * base) / f32(r)))
        rh = rw * f32(r)
        if not tf:
            rw = c_round(rw)
            rh = c_round(rw * f32(r))
        for s in a["scale"]:
            sw = f32(0.5) * (rw * f32(s) - off)
            sh = f32(0.5) * (rh * f32(s) - off)
            ctr = f32(0.5) * (f32(base) - off)
            shift = f32(base) * f32(0.5) if tf else f32(0)
            anchors.append((ctr - sw - shift, ctr - sh - shift, ctr + sw - shift, ctr + sh - shift))
    n, _, H, W = cls.shape
    A = len(anchors)
    post = a["post_nms_topn"]
    rois = np.zeros((n * post, 5), f32)
    probs = np.zeros((n * post,), f32)
    info = im_info.reshape(-1)
    for b in range(n):
        img_h, img_w = info[0], info[1]
        sc_h = info[2]
        sc_w = info[3] if info.size > 3 else info[2]
        min_h, min_w = f32(a["min_size"]) * sc_h, f32(a["min_size"]) * sc_w
        props = []
        for h in range(H):
            for w in range(W):
                for k in range(A):
                    x = f32((h if tf else w) * a["feat_stride"])
                    y = f32((w if tf else h) * a["feat_stride"])
                    dx, dy, dw, dh = (deltas[b, k * 4 + j, h, w] / f32(a.get(
                        "box_coordinate_scale" if j < 2 else "box_size_scale", 1.0)) for j in range(4))
                    x0, y0, x1, y1 = x + anchors[k][0], y + anchors[k][1], x + anchors[k][2], \
                        y + anchors[k][3]
                    if tf:
                        x0, x1 = (min(max(v, f32(0)), img_w) for v in (x0, x1))
                        y0, y1 = (min(max(v, f32(0)), img_h) for v in (y0, y1))
                    ww, hh = x1 - x0 + off, y1 - y0 + off
                    cx, cy = x0 + f32(0.5) * ww, y0 + f32(0.5) * hh
                    pcx, pcy = dx * ww + cx, dy * hh + cy
                    pw, ph = f32(math.exp(dw)) * ww, f32(math.exp(dh)) * hh
                    x0, y0 = pcx - f32(0.5) * pw, pcy - f32(0.5) * ph
                    x1, y1 = pcx + f32(0.5) * pw, pcy + f32(0.5) * ph
                    if a.get("clip_before_nms", True):
                        x0, x1 = (min(max(v, f32(0)), img_w - off) for v in (x0, x1))
                        y0, y1 = (min(max(v, f32(0)), img_h - off) for v in (y0, y1))
                    bw, bh = x1 - x0 + off, y1 - y0 + off
                    s = cls[b, A + k, h, w] if (min_w <= bw and min_h <= bh) else f32(0)
                    props.append((s, len(props), x0, y0, x1, y1))
        props.sort(key=lambda p: (-p[0], p[1]))
        props = props[:min(a["pre_nms_topn"], len(props))]
        dead = [False] * len(props)
        kept = []
        for i, p in enumerate(props):
            if dead[i]:
                continue
            kept.append(p)
            if len(kept) == post:
                break
            for j in range(i + 1, len(props)):
                q = props[j]
                res = f32(0)
                if p[2] <= q[4] and p[3] <= q[5] and q[2] <= p[4] and q[3] <= p[5]:
                    iw = max(f32(0), min(p[4], q[4]) - max(p[2], q[2]) + off)
                    ih = max(f32(0), min(p[5], q[5]) - max(p[3], q[3]) + off)
                    inter = iw * ih
                    ai = (p[4] - p[2] + off) * (p[5] - p[3] + off)
                    aj = (q[4] - q[2] + off) * (q[5] - q[3] + off)
                    res = inter / (ai + aj - inter)
                if f32(a["nms_thresh"]) < res:
                    dead[j] = True
        for r, p in enumerate(kept):
            x0, y0, x1, y1 = p[2:]
            if a.get("clip_after_nms", False):
                x0, x1 = (min(max(v, f32(0)), img_w) for v in (x0, x1))
                y0, y1 = (min(max(v, f32(0)), img_h) for v in (y0, y1))
            if a.get("normalize", False):
                x0, x1, y0, y1 = x0 / img_w, x1 / img_w, y0 / img_h, y1 / img_h
            rois[b * post + r] = (b, x0, y0, x1, y1)
            probs[b * post + r] = p[0]
        if len(kept) < post:
            rois[b * post + len(kept), 0] = -1
    return rois, probs


def gen_proposal():
    A = 2 * 3
    cls = rng.uniform(0, 1, size=(2, 2 * A, 5, 6)).astype(f32)
    deltas = rng.normal(0, 0.3, size=(2, 4 * A, 5, 6)).astype(f32)
    im = np.array([80, 96, 1.0], f32)
    a = dict(base_size=16, pre_nms_topn=60, post_nms_topn=25, nms_thresh=0.6, feat_stride=16,
             min_size=8, ratio=[0.5, 1.0], scale=[1.0, 2.0, 4.0])
    rois, probs = spec_proposal(cls, deltas, im, a)
    case("prop4_caffe", [cls, deltas, im], [rois, probs])
    case("prop1_caffe", [cls, deltas, im], [rois])
    a2 = dict(a, framework="tensorflow", clip_before_nms=False, clip_after_nms=True,
              normalize=True, box_coordinate_scale=10.0, box_size_scale=5.0, post_nms_topn=80)
    im4 = np.array([80, 96, 1.5, 0.5], f32)
    case("prop4_tf", [cls, deltas, im4], list(spec_proposal(cls, deltas, im4, a2)))


# ------------------------------------------------------ ROIPooling, ROIAlign

def spec_roi_pooling(x, rois, ph, pw, scale, method):
    n, c, H, W = x.shape
    out = np.zeros((rois.shape[0], c, ph, pw), f32)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        if method == "max":
            ws, hs, we, he = (int(c_round(f32(v) * f32(scale))) for v in roi[1:])
            rh, rw = max(he - hs + 1, 1), max(we - ws + 1, 1)
            bh, bw = f32(rh) / f32(ph), f32(rw) / f32(pw)
            for i in range(ph):
                for j in range(pw):
                    h0 = min(max(int(np.floor(f32(i) * bh)) + hs, 0), H)
                    h1 = min(max(int(np.ceil(f32(i + 1) * bh)) + hs, 0), H)
                    w0 = min(max(int(np.floor(f32(j) * bw)) + ws, 0), W)
                    w1 = min(max(int(np.ceil(f32(j + 1) * bw)) + ws, 0), W)
                    if h1 <= h0 or w1 <= w0:
                        continue
                    out[r, :, i, j] = x[b, :, h0:h1, w0:w1].max(axis=(1, 2))
        else:
            x1, y1, x2, y2 = (f32(v) for v in roi[1:])
            hm1, wm1 = f32(H - 1), f32(W - 1)
            sh = (y2 - y1) * hm1 / f32(ph - 1) if ph > 1 else f32(0)
            sw = (x2 - x1) * wm1 / f32(pw - 1) if pw > 1 else f32(0)
            for i in range(ph):
                for j in range(pw):
                    iy = (hm1 * y2 if i == ph - 1 else f32(i) * sh + y1 * hm1) if ph > 1 else \
                        f32(0.5 * (y1 + y2) * hm1)
                    ix = (wm1 * x2 if j == pw - 1 else f32(j) * sw + x1 * wm1) if pw > 1 else \
                        f32(0.5 * (x2 + x1) * wm1)
                    if not (0 <= iy <= hm1 and 0 <= ix <= wm1):
                        continue
                    t, l = int(np.floor(iy)), int(np.floor(ix))
                    bo, ri = min(int(np.ceil(iy)), H - 1), min(int(np.ceil(ix)), W - 1)
                    top = x[b, :, t, l] + (x[b, :, t, ri] - x[b, :, t, l]) * (ix - f32(l))
                    bot = x[b, :, bo, l] + (x[b, :, bo, ri] - x[b, :, bo, l]) * (ix - f32(l))
                    out[r, :, i, j] = top + (bot - top) * (iy - f32(t))
    return out


def spec_roi_align(x, rois, bidx, ph, pw, ratio, scale, mode, aligned="asymmetric"):
    """Mask R-CNN's ROIAlign: regular sampling points per bin, bilinear,
    average or maximum."""
    n, c, H, W = x.shape
    out = np.zeros((rois.shape[0], c, ph, pw), f32)
    so = f32(0.5) if aligned == "half_pixel" else f32(0)
    do = f32(-0.5) if aligned != "asymmetric" else f32(0)
    for r, roi in enumerate(rois):
        b = int(bidx[r])
        x1, y1, x2, y2 = ((f32(v) + so) * f32(scale) + do for v in roi)
        rw, rh = x2 - x1, y2 - y1
        if aligned == "asymmetric":
            rw, rh = max(rw, f32(1)), max(rh, f32(1))
        bw, bh = rw / f32(pw), rh / f32(ph)
        sx = ratio if ratio else int(np.ceil(bw))
        sy = ratio if ratio else int(np.ceil(bh))
        dx, dy = bw / f32(sx), bh / f32(sy)
        for i in range(ph):
            for j in range(pw):
                vals = []
                for yi in range(sy):
                    y = y1 + f32(i) * bh + dy * (f32(yi) + f32(0.5))
                    for xi in range(sx):
                        xx = x1 + f32(j) * bw + dx * (f32(xi) + f32(0.5))
                        if xx < -1 or xx > W or y < -1 or y > H:
                            vals.append(np.zeros(c, f32))
                            continue
                        yy, xv = max(y, f32(0)), max(xx, f32(0))
                        yl, xl = int(yy), int(xv)
                        if yl >= H - 1:
                            yl = yh = H - 1
                            yy = f32(yl)
                        else:
                            yh = yl + 1
                        if xl >= W - 1:
                            xl = xh = W - 1
                            xv = f32(xl)
                        else:
                            xh = xl + 1
                        ly, lx = yy - f32(yl), xv - f32(xl)
                        hy, hx = f32(1) - ly, f32(1) - lx
                        vals.append(hy * hx * x[b, :, yl, xl] + hy * lx * x[b, :, yl, xh] +
                                    ly * hx * x[b, :, yh, xl] + ly * lx * x[b, :, yh, xh])
                if not vals:
                    continue
                vals = np.stack(vals)
                out[r, :, i, j] = vals.max(0) if mode == "max" else vals.sum(0) / f32(len(vals))
    return out


def gen_roi():
    x = rng.normal(0, 1, size=(2, 3, 12, 10)).astype(f32)
    rois = np.array([[0, 8, 4, 60, 40], [1, 0, 0, 150, 180], [1, 30, 22, 31, 23],
                     [0, -20, 40, 30, 300]], f32)
    case("roipool_max", [x, rois], [spec_roi_pooling(x, rois, 3, 4, 1 / 8, "max")])
    nrois = np.array([[0, 0.1, 0.2, 0.7, 0.9], [1, 0.0, 0.0, 1.0, 1.0], [1, 0.4, 0.4, 0.45, 0.5],
                      [0, -0.2, 0.1, 1.3, 0.5]], f32)
    case("roipool_bilinear", [x, nrois], [spec_roi_pooling(x, nrois, 3, 2, 1.0, "bilinear")])
    case("roipool_bilinear_1x1", [x, nrois], [spec_roi_pooling(x, nrois, 1, 1, 1.0, "bilinear")])
    boxes = np.array([[4, 2, 50, 40], [0, 0, 79, 95], [30, 30, 31, 31], [-30, 70, 60, 120],
                      [10, 5, 10, 5]], f32)
    bidx = np.array([0, 1, 1, 0, 1], np.int32)
    case("roialign_avg", [x, boxes, bidx],
         [spec_roi_align(x, boxes, bidx, 3, 4, 2, 1 / 8, "avg")])
    case("roialign_adaptive", [x, boxes, bidx.astype(np.int64)],
         [spec_roi_align(x, boxes, bidx, 2, 3, 0, 1 / 8, "avg")])
    case("roialign_max", [x, boxes, bidx], [spec_roi_align(x, boxes, bidx, 3, 3, 2, 1 / 8, "max")])
    case("roialign9_half", [x, boxes, bidx],
         [spec_roi_align(x, boxes, bidx, 2, 2, 2, 1 / 8, "avg", "half_pixel")])
    case("roialign9_nn", [x, boxes, bidx],
         [spec_roi_align(x, boxes, bidx, 2, 2, 0, 1 / 8, "avg", "half_pixel_for_nn")])


# ---------------------------------------------------------------------- CTC

def spec_ctc(data_ntc, lengths, blank, merge):
    n, t, c = data_ntc.shape
    out = -np.ones((n, t), np.int64)
    lens = np.zeros(n, np.int64)
    for b in range(n):
        prev, k = -1, 0
        for s in range(lengths[b]):
            best = int(np.argmax(data_ntc[b, s]))      # the first of equal maxima
            if best != blank and not (merge and best == prev):
                out[b, k] = best
                k += 1
            prev = best
        lens[b] = k
    return out, lens


def gen_ctc():
    t, n, c = 12, 3, 5
    logits = rng.integers(0, 4, size=(t, n, c)).astype(f32)   # ties: the first wins
    mask = np.zeros((t, n), f32)
    lengths = [12, 7, 0]
    for b, l in enumerate(lengths):
        mask[:l, b] = 1
    ntc = logits.transpose(1, 0, 2)
    for merge in (True, False):
        y, _ = spec_ctc(ntc, lengths, c - 1, merge)
        case(f"ctc1_merge{int(merge)}", [logits, mask], [y.reshape(n, t, 1, 1).astype(f32)])
    ntc = np.ascontiguousarray(ntc)
    y, lens = spec_ctc(ntc, lengths, c - 1, True)
    case("ctcsl_default", [ntc, np.array(lengths, np.int32)], [y.astype(np.int32), lens.astype(np.int32)])
    y, lens = spec_ctc(ntc, lengths, 1, False)
    case("ctcsl_blank1", [ntc, np.array(lengths, np.int64), np.array(1, np.int64)],
         [y, lens])


if __name__ == "__main__":
    gen_prior_box()
    gen_yolo()
    gen_proposal()
    gen_roi()
    gen_ctc()
    print(len(CASES), "cases")
