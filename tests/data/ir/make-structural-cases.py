#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reference cases for the structural IR ops, computed with numpy.

Writes structural-cases.json next to this script: for each case the op
(type, opset, <data> attributes), its inputs (element type, shape, values;
the first is fed at run time, the others are constants) and the expected
output computed by numpy following the OpenVINO op specification. Run with
Debian's /usr/bin/python3 (python3-numpy); tests/ir/test-ir-structural.c
reads the JSON, never numpy.
"""
import json
import os

import numpy as np

rng = np.random.default_rng(20261121)
cases = []

NP_TYPES = {
    "f32": np.float32, "f64": np.float64, "i8": np.int8, "u8": np.uint8,
    "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32,
    "i64": np.int64, "u64": np.uint64, "boolean": np.bool_,
}


def tensor(arr, et):
    arr = np.asarray(arr)
    vals = arr.reshape(-1).tolist()
    if et == "boolean":
        vals = [int(v) for v in vals]
    return {"type": et, "shape": list(arr.shape), "values": vals}


def data(shape, et="f32"):
    if et in ("f32", "f64"):
        return rng.standard_normal(shape).astype(NP_TYPES[et])
    if et == "boolean":
        return rng.integers(0, 2, shape).astype(np.bool_)
    info = np.iinfo(NP_TYPES[et])
    return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(NP_TYPES[et])


def add(name, op, opset, attrs, inputs, out, out_et):
    cases.append({"name": name, "type": op, "opset": opset, "attrs": attrs,
                  "inputs": inputs, "output": tensor(out, out_et)})


# Reshape-1: special_zero copies the input dim; -1 is inferred
for shape, target, sz in [((2, 3, 4), (4, -1), False), ((2, 3, 4), (0, 12), True),
                          ((2, 3, 4), (0, -1, 2), True), ((1, 6), (6,), False),
                          ((1, 1), (), False)]:
    x = data(shape)
    t = list(target)
    real = [shape[i] if (v == 0 and sz) else v for i, v in enumerate(t)]
    add(f"reshape {shape}->{target} sz={sz}", "Reshape", "opset1",
        {"special_zero": "true" if sz else "false"},
        [tensor(x, "f32"), tensor(np.array(t, np.int64), "i64")],
        x.reshape(real), "f32")

# Squeeze-1 / Unsqueeze-1
x = data((1, 3, 1, 2))
add("squeeze all", "Squeeze", "opset1", {}, [tensor(x, "f32")], np.squeeze(x), "f32")
add("squeeze axis -2", "Squeeze", "opset1", {}, [tensor(x, "f32"), tensor(np.array([-2], np.int64), "i64")],
    np.squeeze(x, axis=2), "f32")
x = data((3, 2), "i32")
add("unsqueeze 0,3", "Unsqueeze", "opset1", {}, [tensor(x, "i32"), tensor(np.array([0, 3], np.int64), "i64")],
    x.reshape(1, 3, 2, 1), "i32")
add("unsqueeze -1 (i32 axes)", "Unsqueeze", "opset1", {}, [tensor(x, "i32"), tensor(np.array([-1], np.int32), "i32")],
    np.expand_dims(x, -1), "i32")

# Concat-1
for axis, shapes, et in [(1, [(2, 1, 3), (2, 4, 3), (2, 2, 3)], "f32"), (-1, [(2, 2), (2, 3)], "u8"),
                         (0, [(1, 2, 2), (3, 2, 2)], "i64")]:
    xs = [data(s, et) for s in shapes]
    add(f"concat axis {axis} {et}", "Concat", "opset1", {"axis": str(axis)},
        [tensor(v, et) for v in xs], np.concatenate(xs, axis=axis), et)

# Transpose-1
for shape, perm, et in [((2, 3, 4), [2, 0, 1], "f32"), ((1, 3, 4, 5), [0, 2, 3, 1], "f32"),
                        ((2, 3), [], "i16"), ((2, 3, 2, 2, 3), [4, 1, 3, 0, 2], "u8")]:
    x = data(shape, et)
    add(f"transpose {shape} {perm}", "Transpose", "opset1", {},
        [tensor(x, et), tensor(np.array(perm, np.int64), "i64")],
        np.transpose(x, perm if perm else None), et)

# Convert-1 (in-range values: the spec defines truncation toward zero)
x = np.array([[-2.75, -1.5, -0.25, 0.0], [0.5, 1.99, 100.7, 3.0]], np.float32)
for dst in ["i32", "i8", "i64", "f64", "boolean"]:
    add(f"convert f32->{dst}", "Convert", "opset1", {"destination_type": dst},
        [tensor(x, "f32")], np.trunc(x).astype(NP_TYPES[dst]) if dst not in ("f64", "boolean") else x.astype(NP_TYPES[dst]), dst)
x = np.array([0, 1, 127, 200, 255], np.uint8)
add("convert u8->f32", "Convert", "opset1", {"destination_type": "f32"}, [tensor(x, "u8")], x.astype(np.float32), "f32")
x = np.array([-3, 7, 100000], np.int64)
add("convert i64->i32", "Convert", "opset1", {"destination_type": "i32"}, [tensor(x, "i64")], x.astype(np.int32), "i32")
x = np.array([1.0009765625, 3.14159265, 65504.0, -0.1], np.float32)
add("convert f32->f16 (computed in f32, rounded to f16)", "Convert", "opset1", {"destination_type": "f16"},
    [tensor(x, "f32")], x.astype(np.float16).astype(np.float32), "f32")

# ShapeOf-1 / ShapeOf-3
x = data((2, 3, 5))
add("shapeof-1", "ShapeOf", "opset1", {}, [tensor(x, "f32")], np.array(x.shape, np.int64), "i64")
add("shapeof-3 i32", "ShapeOf", "opset3", {"output_type": "i32"}, [tensor(x, "f32")], np.array(x.shape, np.int32), "i32")


# StridedSlice-1: numpy indexing with the same masks is the reference
def strided(x, begin, end, stride, bm, em, nm, sm, elm):
    idx = []
    for i in range(len(begin)):
        bit = lambda m: i < len(m) and m[i] == 1
        if bit(elm):
            idx.append(Ellipsis)
        elif bit(nm):
            idx.append(np.newaxis)
        elif bit(sm):
            idx.append(begin[i])
        else:
            idx.append(slice(None if bit(bm) else begin[i], None if bit(em) else end[i], stride[i]))
    return x[tuple(idx)]


x = data((2, 3, 4, 5))
for begin, end, stride, bm, em, nm, sm, elm in [
        ([0, 1], [2, 3], [1, 1], [], [], [], [], []),
        ([0, 0, 1, 0], [0, 0, 3, 0], [1, 1, 1, 2], [1, 1, 0, 1], [1, 1, 0, 1], [], [], []),
        ([1, -1], [0, -4], [1, -1], [0, 0], [1, 0], [], [], []),
        ([0, 2], [1, 3], [1, 1], [], [], [], [0, 1], []),
        ([0, 0, 1], [0, 0, 4], [1, 1, 2], [], [], [0, 1], [], [1]),
        ([0, 0, -1], [0, 0, -6], [1, 1, -2], [], [], [], [], [0, 1]),
        ([1, 0, 0, 2], [2, 3, 4, 5], [1, 1, 1, 1], [0, 1, 1, 0], [0], [], [1], []),
        ([0, 0, 0, 0], [2, 3, 4, 5], [1, 1, 1, -1], [1, 1, 1, 1], [1, 1, 1, 1], [], [], [])]:
    mask = lambda m: ",".join(str(v) for v in m)
    out = strided(x, begin, end, stride, bm, em, nm, sm, elm)
    add(f"stridedslice b={begin} e={end} s={stride} bm={bm} em={em} new={nm} shrink={sm} ell={elm}",
        "StridedSlice", "opset1",
        {"begin_mask": mask(bm), "end_mask": mask(em), "new_axis_mask": mask(nm),
         "shrink_axis_mask": mask(sm), "ellipsis_mask": mask(elm)},
        [tensor(x, "f32"), tensor(np.array(begin, np.int64), "i64"),
         tensor(np.array(end, np.int64), "i64"), tensor(np.array(stride, np.int64), "i64")],
        out, "f32")
x = np.arange(4, dtype=np.int64) + 10
add("stridedslice shape chain [2:]", "StridedSlice", "opset1",
    {"begin_mask": "0", "end_mask": "1", "new_axis_mask": "", "shrink_axis_mask": "", "ellipsis_mask": ""},
    [tensor(x, "i64"), tensor(np.array([2], np.int64), "i64"), tensor(np.array([0], np.int64), "i64"),
     tensor(np.array([1], np.int64), "i64")], x[2:], "i64")


# Gather-1/7/8
def gather(x, idx, axis, batch_dims):
    if batch_dims == 0:
        return np.take(x, idx, axis=axis)
    out = [gather(x[b], idx[b], axis - 1, batch_dims - 1) for b in range(x.shape[0])]
    return np.stack(out)


x = data((3, 4, 5))
for opset, idx, axis, bd in [("opset1", np.array([2, 0, 2], np.int64), 1, 0),
                             ("opset1", np.array([[0, 2], [1, 1]], np.int32), 0, 0),
                             ("opset8", np.array([-1, 0, -5], np.int64), -1, 0),
                             ("opset7", np.array([[1, 0], [3, 3], [2, 1]], np.int64), 1, 1),
                             ("opset8", np.array([[4], [0], [-2]], np.int64), 2, -1)]:
    bdn = bd + idx.ndim if bd < 0 else bd
    ax = axis + x.ndim if axis < 0 else axis
    attrs = {} if opset == "opset1" else {"batch_dims": str(bd)}
    add(f"gather {opset} axis={axis} batch_dims={bd} idx={idx.tolist()}", "Gather", opset, attrs,
        [tensor(x, "f32"), tensor(idx, "i64" if idx.dtype == np.int64 else "i32"),
         tensor(np.array(axis, np.int64), "i64")], gather(x, idx, ax, bdn), "f32")

# StridedSlice with begin, end and stride at the ends of int64 (a file may
# hold any): numpy's slices are the reference. (Issue 14: st * stride
# overflowed.)
I64_MIN, I64_MAX = -2**63, 2**63 - 1
x = np.arange(2 * 5 * 12, dtype=np.float32).reshape(2, 5, 12)
for begin, end, stride in [([0, 4, 0], [2, -10, 12], [I64_MAX, -6917524789095563264, 5]),
                           ([1, 1, 11], [I64_MIN, 3, I64_MIN], [I64_MIN, 1, -I64_MAX]),
                           ([I64_MIN, I64_MAX, I64_MIN], [I64_MAX, I64_MIN, I64_MAX],
                            [1, -1, I64_MAX]),
                           ([I64_MIN, 0, 3], [I64_MAX, 5, 9], [-1, I64_MAX, 2])]:
    out = x[tuple(slice(b, e, st) for b, e, st in zip(begin, end, stride))]
    add(f"stridedslice int64 extremes b={begin} e={end} s={stride}", "StridedSlice", "opset1",
        {"begin_mask": "", "end_mask": "", "new_axis_mask": "", "shrink_axis_mask": "",
         "ellipsis_mask": ""},
        [tensor(x, "f32"), tensor(np.array(begin, np.int64), "i64"),
         tensor(np.array(end, np.int64), "i64"), tensor(np.array(stride, np.int64), "i64")],
        out, "f32")

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "structural-cases.json")
with open(out, "w") as f:
    f.write('{"generator": "make-structural-cases.py (numpy %s)",\n"cases": [\n' % np.__version__)
    f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
    f.write("\n]}\n")
print(f"{len(cases)} cases -> {out}")
