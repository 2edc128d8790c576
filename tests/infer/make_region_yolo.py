#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reference data for the RegionYolo decoder test (test-decode-region-yolo.c).

    /usr/bin/python3 tests/infer/make_region_yolo.py

Random YOLO head outputs, decoded in numpy the way OpenVINO Model API's
Python YOLO wrapper (model_api/models/yolo.py) decodes them: outputs
permuted from (N, A*K, H, W) to (N, H*W*A, K); probability = objectness x
class probability for every class, kept when > the confidence threshold;
box centre (col + x) / W, size exp(w) * anchor / (input size when the layer
has a mask, grid size when not); then, best first, a box is dropped when a
kept box of its class overlaps it by IoU > the IoU threshold. Raw heads
(YoloV4 without RegionYolo) take the sigmoid of x, y, objectness and classes
first. Boxes are written in model-input pixels.

Writes tests/data/infer/region-yolo.<case>.out<i>.f32 (raw little-endian
float32, the output tensors) and region-yolo.<case>.txt (one detection a
line: class score x1 y1 x2 y2), for the cases:
  v3      two RegionYolo outputs (mask 3,4,5 on a 4x4 grid, 0,1,2 on 8x8),
          values after the layer's sigmoids, input 64x64, 5 classes
  v2      one RegionYolo output without mask (do_softmax, anchors in grid
          cells), flattened to [1, 5*(5+3)*4*4], input 64x64, 3 classes
  v4raw   two raw convolution outputs [1, 3*(5+4), H, W] (8x8, 4x4),
          YOLOv4-tiny's default anchors and masks, input 64x64, 4 classes
"""

import os

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(TOP, "tests", "data", "infer")
CONF, IOU = 0.5, 0.5
V3_ANCHORS = [10, 13, 16, 30, 33, 23, 30, 61, 62, 45, 59, 119]
V2_ANCHORS = [0.57273, 0.677385, 1.87446, 2.06253, 3.33843, 5.47434, 7.88282, 3.52778,
              9.77052, 9.16828]
V4_TINY_ANCHORS = [10, 14, 23, 27, 37, 58, 81, 82, 135, 169, 344, 319]


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def head(rng, num, classes, h, w, activated):
    """A random head output (1, num*(5+classes), h, w): few confident boxes."""
    k = 5 + classes
    t = rng.normal(0, 1, (num, k, h, w)).astype(np.float32)
    t[:, 2:4] *= 0.5                                   # log sizes
    t[:, 4] = rng.normal(-3, 1.5, (num, h, w))         # objectness logits: mostly low
    hot = rng.random((num, h, w)) < 0.2
    t[:, 4][hot] = rng.normal(3, 1, int(hot.sum()))
    t[:, 5:] = rng.normal(-1, 2, (num, classes, h, w))
    if activated:
        for e in (0, 1, 4):
            t[:, e] = sigmoid(t[:, e])
        t[:, 5:] = sigmoid(t[:, 5:])
    return t.reshape(1, num * k, h, w)


def decode(out, num, classes, anchors, input_size, normalise_by_input, raw, side):
    """Model API's _parse_yolo_region, on one output; boxes in model pixels."""
    h, w = side
    k = 5 + classes
    pred = out.reshape(1, num, k, h, w).transpose(0, 3, 4, 1, 2).reshape(-1, k).astype(np.float64)
    if raw:
        pred[:, :2] = sigmoid(pred[:, :2])
        pred[:, 4:] = sigmoid(pred[:, 4:])
    probs = (pred[:, 5:] * pred[:, 4:5]).flatten()
    keep = np.nonzero(probs > CONF)[0]
    dets = []
    for i in keep:
        obj, c = divmod(int(i), classes)
        row = obj // (w * num)
        col = (obj - row * w * num) // num
        n = (obj - row * w * num) % num
        x, y, bw, bh = pred[obj, :4]
        norm = input_size if normalise_by_input else (w, h)
        cx = (col + x) / w
        cy = (row + y) / h
        ww = np.exp(bw) * anchors[2 * n] / norm[0]
        hh = np.exp(bh) * anchors[2 * n + 1] / norm[1]
        dets.append((c, probs[i], (cx - ww / 2) * input_size[0], (cy - hh / 2) * input_size[1],
                     (cx + ww / 2) * input_size[0], (cy + hh / 2) * input_size[1]))
    return dets


def iou(a, b):
    ow = min(a[4], b[4]) - max(a[2], b[2])
    oh = min(a[5], b[5]) - max(a[3], b[3])
    inter = 0 if ow < 0 or oh < 0 else ow * oh
    union = (a[4] - a[2]) * (a[5] - a[3]) + (b[4] - b[2]) * (b[5] - b[3]) - inter
    return 0 if union == 0 else inter / union


def nms(dets):
    """Model API's _filter: sort by score, drop same-class boxes with IoU > IOU."""
    dets = sorted(dets, key=lambda d: -d[1])
    score = [d[1] for d in dets]
    for i in range(len(dets)):
        if score[i] == 0:
            continue
        for j in range(i + 1, len(dets)):
            if dets[i][0] == dets[j][0] and iou(dets[i], dets[j]) > IOU:
                score[j] = 0
    return [d for d, s in zip(dets, score) if s > 0]


def write(case, outs, dets):
    for i, o in enumerate(outs):
        o.astype("<f4").tofile(os.path.join(OUT, f"region-yolo.{case}.out{i}.f32"))
    with open(os.path.join(OUT, f"region-yolo.{case}.txt"), "w") as f:
        f.write(f"# {case}: class score x1 y1 x2 y2 (model pixels), Model API's YOLO decode, "
                f"confidence > {CONF}, class-wise NMS IoU > {IOU}\n")
        for d in dets:
            f.write(f"{d[0]} {d[1]:.6f} {d[2]:.4f} {d[3]:.4f} {d[4]:.4f} {d[5]:.4f}\n")
    print(f"{case}: {len(dets)} detections")


def main():
    rng = np.random.default_rng(7)
    os.makedirs(OUT, exist_ok=True)
    size = (64, 64)

    # v3: masks 3,4,5 (4x4 grid) and 0,1,2 (8x8)
    o0 = head(rng, 3, 5, 4, 4, True)
    o1 = head(rng, 3, 5, 8, 8, True)
    dets = decode(o0, 3, 5, V3_ANCHORS[6:12], size, True, False, (4, 4)) + \
        decode(o1, 3, 5, V3_ANCHORS[0:6], size, True, False, (8, 8))
    write("v3", [o0, o1], nms(dets))

    # v2: 5 anchors in cells, do_softmax: classes sum to 1
    o = head(rng, 5, 3, 4, 4, True).reshape(5, 8, 4, 4)
    e = np.exp(rng.normal(0, 2, (5, 3, 4, 4)))
    o[:, 5:] = e / e.sum(axis=1, keepdims=True)
    o = o.reshape(1, -1)
    write("v2", [o], nms(decode(o, 5, 3, V2_ANCHORS, size, False, False, (4, 4))))

    # raw v4-tiny heads: the 8x8 grid takes mask 1,2,3, the 4x4 grid 3,4,5
    r0 = head(rng, 3, 4, 4, 4, False)
    r1 = head(rng, 3, 4, 8, 8, False)
    a = V4_TINY_ANCHORS
    dets = decode(r1, 3, 4, a[2:8], size, True, True, (8, 8)) + \
        decode(r0, 3, 4, a[6:12], size, True, True, (4, 4))
    write("v4raw", [r0, r1], nms(dets))


if __name__ == "__main__":
    main()
