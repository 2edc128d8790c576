#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reference vectors for the data-movement kernels (tests/ir/kernels/test-movement.c):
Gather-1/7/8, GatherND-5/8, GatherElements-6, ScatterUpdate-3,
ScatterNDUpdate-3/15, ScatterElementsUpdate-3/12, DepthToSpace-1,
SpaceToDepth-1, ShuffleChannels-1.

Run with Debian's /usr/bin/python3 (python3-numpy, python3-torch):
`tests/data/ir-kernels/gen_movement.py`. Each case NAME writes NAME_in0.npy,
NAME_in1.npy, ... (the layer's inputs) and NAME_y.npy (the expected
output) next to this script; the C test lists the cases with their
attributes (the same values as here).

The expected values are NumPy loops written from each operation's OpenVINO
specification (the formula of its "Detailed description", one output or
update element at a time), not from our kernels' structure; where NumPy or
PyTorch have the same op (take_along_axis, pixel_shuffle, ChannelShuffle)
the loop is checked against it here.
"""
import itertools
import os

import numpy as np
import torch

OUT = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20260115)
CASES = []


def case(name, inputs, y):
    """inputs: a list of arrays (saved as NAME_inI), or the name of a case
    whose inputs this one shares (cases that differ in attributes only)."""
    if not isinstance(inputs, str):
        for i, a in enumerate(inputs):
            np.save(os.path.join(OUT, f"{name}_in{i}.npy"), np.array(a, order="C"))
    np.save(os.path.join(OUT, f"{name}_y.npy"), np.array(y, order="C"))
    CASES.append(name)


def inputs(name, arrays):
    for i, a in enumerate(arrays):
        np.save(os.path.join(OUT, f"{name}_in{i}.npy"), np.array(a, order="C"))
    return name


def rand(*shape, dtype=np.float32):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-100, 100, size=shape).astype(dtype)
    return rng.uniform(-1, 1, size=shape).astype(dtype)


def idx(shape, lo, hi, dtype=np.int64):
    return rng.integers(lo, hi, size=shape).astype(dtype)


# ------------------------------------------------------------------ Gather

def spec_gather(data, ind, axis, b, zero_oob):
    """output[p_0..p_{axis-1}, i_b..i_{M-1}, p_{axis+1}..] =
       data[p_0..p_{axis-1}, indices[p_0..p_{b-1}, i_b..i_{M-1}], p_{axis+1}..]"""
    axis %= data.ndim
    if b < 0:
        b += ind.ndim
    shape = data.shape[:axis] + ind.shape[b:] + data.shape[axis + 1:]
    out = np.zeros(shape, data.dtype)
    m = ind.ndim - b
    for p in np.ndindex(*shape):
        pre, ii, post = p[:axis], p[axis:axis + m], p[axis + m:]
        k = int(ind[pre[:b] + ii])
        n = data.shape[axis]
        if k < 0:
            k += n
        if not 0 <= k < n:
            assert zero_oob
            continue
        out[p] = data[pre + (k,) + post]
    return out


def gen_gather():
    d = rand(2, 2, 5)
    i = idx((2, 2, 3), -5, 5)
    case("gather8_batch2", [d, i, np.array(2, np.int64)], spec_gather(d, i, 2, 2, True))
    d = rand(2, 1, 5, 4)
    i = idx((2, 3), -5, 5, np.int32)
    case("gather8_axis2_batch1", [d, i, np.array([2], np.int32)], spec_gather(d, i, 2, 1, True))
    d = rand(2, 5)
    i = idx((2, 3), 0, 5)
    case("gather8_negbatch", [d, i, np.array(1, np.int64)], spec_gather(d, i, 1, -1, True))
    d = np.arange(1, 6, dtype=np.float32)             # the spec's example 7
    i = np.array([3, 10, -20], np.int64)
    case("gather8_oob", [d, i, np.array(0, np.int64)], spec_gather(d, i, 0, 0, True))
    d = rand(3, 4, dtype=np.int32)
    i = np.array(-1, np.int64)
    case("gather7_scalar", [d, i, np.array(-1, np.int64)], spec_gather(d, i, -1, 0, False))
    d = rng.integers(0, 255, size=(6, 4, 3)).astype(np.uint8)
    i = idx((2, 2), 0, 4)
    case("gather1_u8", [d, i, np.array(1, np.int32)], spec_gather(d, i, 1, 0, False))
    d = rand(2, 3, 4, 5)
    i = idx((3, 2), -4, 4, np.int32)
    case("gather8_negaxis", [d, i, np.array(-2, np.int64)], spec_gather(d, i, -2, 0, True))
    d = rand(4, 3)
    i = np.zeros((0,), np.int64)
    case("gather8_empty", [d, i, np.array(0, np.int64)], spec_gather(d, i, 0, 0, True))
    d = rand(1)
    i = np.array([0], np.int64)
    case("gather8_one", [d, i, np.array(0, np.int64)], spec_gather(d, i, 0, 0, True))


# ---------------------------------------------------------------- GatherND

def spec_gather_nd(data, ind, b, version):
    """output[i_0..i_{K-2}, :...] = data[indices[i_0..i_{K-2}], :...] per
    batch; batch dims broadcast (1 on one side), kept (-8) or multiplied
    into one (-5)."""
    k = ind.shape[-1]
    bdims = tuple(max(x, y) for x, y in zip(data.shape[:b], ind.shape[:b]))
    mid = ind.shape[b:-1]
    tail = data.shape[b + k:]
    out = np.zeros(bdims + mid + tail, data.dtype)
    for bb in np.ndindex(*bdims):
        db = tuple(0 if data.shape[a] == 1 else bb[a] for a in range(b))
        ib = tuple(0 if ind.shape[a] == 1 else bb[a] for a in range(b))
        for m in np.ndindex(*mid):
            t = tuple(int(v) + (data.shape[b + j] if v < 0 else 0)
                      for j, v in enumerate(ind[ib + m]))
            out[bb + m] = data[db + t]
    if version == 5 and b > 0:
        out = out.reshape((int(np.prod(bdims)),) + mid + tail)
    return out


def gen_gather_nd():
    d = np.array([[1, 2], [3, 4]], np.float32)        # the spec's examples 1, 4
    case("gnd_elements", [d, np.array([[0, 0], [1, 0]], np.int64)],
         spec_gather_nd(d, np.array([[0, 0], [1, 0]]), 0, 8))
    d = rand(3, 4, 5)
    i = idx((2, 3, 1), -3, 3, np.int32)
    case("gnd_slices_neg", [d, i], spec_gather_nd(d, i, 0, 8))
    d = rand(2, 3, 4)
    i = idx((2, 3, 1, 1), 0, 4)
    case("gnd8_batch2", [d, i], spec_gather_nd(d, i, 2, 8))
    case("gnd5_batch2", "gnd8_batch2", spec_gather_nd(d, i, 2, 5))
    d = rand(1, 3, 4, 2)
    i = idx((4, 3, 2), -2, 3)                          # data batch dim 1 broadcast
    case("gnd8_bcast", [d, i], spec_gather_nd(d, i, 1, 8))
    d = rand(2, 5, 3, dtype=np.int64)
    i = np.stack([idx((4,), 0, 2), idx((4,), -5, 5), idx((4,), 0, 3)], 1)
    case("gnd_full_i64", [d, i], spec_gather_nd(d, i, 0, 8))
    d = rand(3, 4)
    i = np.zeros((0, 1), np.int64)
    case("gnd_empty", [d, i], spec_gather_nd(d, i, 0, 8))


# ---------------------------------------------------------- GatherElements

def spec_gather_elements(data, ind, axis):
    """out[i][j][k] = data[indices[i][j][k]][j][k] (axis 0), etc."""
    out = np.zeros(ind.shape, data.dtype)
    for p in np.ndindex(*ind.shape):
        q = list(p)
        v = int(ind[p])
        q[axis] = v + data.shape[axis] if v < 0 else v
        out[p] = data[tuple(q)]
    return out


def gen_gather_elements():
    d = np.array([[1, 7], [4, 3]], np.float32)        # the spec's example 2
    i = np.array([[1, 1, 0], [1, 0, 1]], np.int32)
    case("gel_spec2", [d, i], spec_gather_elements(d, i, 1))
    d = rand(3, 5, 4)
    i = idx((3, 7, 4), -5, 5)
    y = spec_gather_elements(d, i, 1)
    assert np.array_equal(y, np.take_along_axis(d, i, 1))
    case("gel_neg", [d, i], y)
    d = rand(4, 3, dtype=np.int32)
    i = idx((2, 3), 0, 4, np.int32)
    case("gel_axis0_i32", [d, i], spec_gather_elements(d, i, 0))


# ----------------------------------------------------------------- Scatter

def spec_scatter_update(data, ind, upd, axis):
    """data[..., indices[m..p], ...] = updates[..., m..p, ...]"""
    out = data.copy()
    axis %= data.ndim
    for p in np.ndindex(*upd.shape):
        pre, ii, post = p[:axis], p[axis:axis + ind.ndim], p[axis + ind.ndim:]
        k = int(ind[ii])
        out[pre + (k % data.shape[axis],) + post] = upd[p]
    return out


RED = {
    "none": lambda x, y: y, "sum": lambda x, y: x + y, "sub": lambda x, y: x - y,
    "prod": lambda x, y: x * y, "max": max, "min": min,
}
BOOL_RED = {"sum": lambda x, y: x or y, "sub": lambda x, y: x != y, "prod": lambda x, y: x and y}


def spec_scatter_nd(data, ind, upd, reduction="none"):
    """The NumPy snippet of the ScatterNDUpdate-15 spec (negative indices
    normalised as it says)."""
    func = RED[reduction]
    if data.dtype == np.bool_ and reduction in BOOL_RED:
        func = BOOL_RED[reduction]
    out = np.copy(data)
    for nd in np.ndindex(ind.shape[:-1]):
        t = tuple(int(v) % data.shape[j] for j, v in enumerate(ind[nd]))
        if len(t) == data.ndim:
            out[t] = func(out[t], upd[nd])
        else:
            for q in np.ndindex(*data.shape[len(t):]):
                out[t + q] = func(out[t + q], upd[nd + q])
    return out


def spec_scatter_elements(data, ind, upd, axis, reduction="none", use_init=True):
    """output[..indices[p]..] = reduction(updates[p], output[..indices[p]..])
    (axis replaced); use_init_val false: a reached element starts from its
    first update; mean = sum / count, integers rounded toward -inf."""
    out = data.copy()
    seen = {}
    for p in np.ndindex(*ind.shape):
        q = list(p)
        q[axis] = int(ind[p]) % data.shape[axis]
        q = tuple(q)
        u = upd[p]
        if q not in seen:
            seen[q] = [data[q], 1] if use_init else [None, 0]
        acc = seen[q]
        if reduction in ("none",):
            acc[0] = u
        elif acc[0] is None:
            acc[0] = u
        elif data.dtype == np.bool_:
            acc[0] = {"sum": acc[0] or u, "prod": acc[0] and u, "min": acc[0] and u,
                      "max": acc[0] or u}[reduction]
        elif reduction in ("sum", "mean"):
            acc[0] = acc[0] + u
        else:
            acc[0] = RED[reduction](acc[0], u)
        acc[1] += 1
    for q, (v, n) in seen.items():
        if reduction == "mean":
            v = (v // n) if np.issubdtype(data.dtype, np.integer) else v / data.dtype.type(n)
        out[q] = v
    return out


def gen_scatter():
    d = np.array([[-1, 1, -1, 3, 4], [-1, 6, -1, 8, 9], [-1, 11, 1, 13, 14]], np.float32)
    i = np.array([0, 2], np.int64)                     # the spec's example 2
    u = np.array([[1, 1], [1, 1], [1, 2]], np.float32)
    case("su_spec2", [d, i, u, np.array([1], np.int64)], spec_scatter_update(d, i, u, 1))
    d = rand(3, 4, 5)
    i = np.array([[3, -4], [1, 2]], np.int32)
    u = rand(3, 2, 2, 5)
    case("su_neg_2d", [d, i, u, np.array(-2, np.int32)], spec_scatter_update(d, i, u, -2))
    d = rand(4, 3, dtype=np.int64)
    i = np.array(2, np.int64)
    u = rand(3, dtype=np.int64)
    case("su_scalar_i64", [d, i, u, np.array(0, np.int64)], spec_scatter_update(d, i, u, 0))

    d = np.arange(1, 9, dtype=np.float32)             # ScatterNDUpdate-15's example 1
    i = np.array([[4], [3], [1], [7], [-2], [-4]], np.int64)
    u = np.array([9, 10, 11, 12, 13, 14], np.float32)
    case("snd_spec1", [d, i, u], spec_scatter_nd(d, i, u))
    d = rand(4, 4, 4)
    i = np.array([[0], [2]], np.int32)
    u = rand(2, 4, 4)
    case("snd_slices", [d, i, u], spec_scatter_nd(d, i, u))
    d = rand(3, 4, 2)
    i = np.array([[[0, 1], [2, -1]], [[1, 3], [-3, 0]]], np.int64)
    u = rand(2, 2, 2)
    case("snd_pairs", [d, i, u], spec_scatter_nd(d, i, u))
    d = np.array([1, 2, 3, 4], np.float32)
    i = np.array([[0], [2], [-3], [-3], [0]], np.int32)
    u = np.array([10, 20, 30, 40, 50], np.float32)
    base = inputs("snd15_f32", [d, i, u])
    for red in ("sum", "sub", "prod", "min", "max"):
        case(f"snd15_{red}_f32", base, spec_scatter_nd(d, i, u, red))
    di = rand(5, 3, dtype=np.int32)
    ii = idx((6, 1), -5, 5, np.int32)
    ui = rand(6, 3, dtype=np.int32)
    base = inputs("snd15_i32", [di, ii, ui])
    for red in ("sum", "sub", "prod", "min", "max"):
        case(f"snd15_{red}_i32", base, spec_scatter_nd(di, ii, ui, red))
    db = rng.integers(0, 2, size=(6,)).astype(np.bool_)
    ib = idx((8, 1), 0, 6)
    ub = rng.integers(0, 2, size=(8,)).astype(np.bool_)
    base = inputs("snd15_bool", [db, ib, ub])
    for red in ("sum", "sub", "prod"):
        case(f"snd15_{red}_bool", base, spec_scatter_nd(db, ib, ub, red))

    d = rand(3, 4)
    i = idx((2, 4), -3, 3)
    u = rand(2, 4)
    case("sel3_axis0", [d, i, u, np.array(0, np.int64)], spec_scatter_elements(d, i, u, 0))
    d = rand(3, 5, 4)
    i = idx((2, 7, 3), -5, 5, np.int32)
    u = rand(2, 7, 3)
    case("sel3_smaller", [d, i, u, np.array(-2, np.int64)], spec_scatter_elements(d, i, u, 1))
    d = np.array([2, 3, 4, 6], np.float32)            # ScatterElementsUpdate-12's examples 1, 2
    i = np.array([1, 0, 0, -2, -1, 2], np.int64)
    u = np.array([10, 20, 30, 40, 70, 60], np.float32)
    base = inputs("sel12_f32", [d, i, u, np.array([0], np.int64)])
    for red in ("sum", "prod", "min", "max", "mean", "none"):
        for init in (True, False):
            case(f"sel12_{red}_{int(init)}_f32", base,
                 spec_scatter_elements(d, i, u, 0, red, init))
    di = rand(3, 4, dtype=np.int32)
    ii = idx((3, 6), -4, 4, np.int32)
    ui = rand(3, 6, dtype=np.int32)
    base = inputs("sel12_i32", [di, ii, ui, np.array(1, np.int32)])
    for red in ("sum", "prod", "min", "max", "mean"):
        for init in (True, False):
            case(f"sel12_{red}_{int(init)}_i32", base,
                 spec_scatter_elements(di, ii, ui, 1, red, init))
    db = rng.integers(0, 2, size=(5,)).astype(np.bool_)
    ib = idx((7,), 0, 5)
    ub = rng.integers(0, 2, size=(7,)).astype(np.bool_)
    base = inputs("sel12_bool", [db, ib, ub, np.array(0, np.int64)])
    for red in ("sum", "prod", "min", "max"):
        case(f"sel12_{red}_1_bool", base,
             spec_scatter_elements(db, ib, ub, 0, red, True))


# ------------------------------------------------ DepthToSpace, SpaceToDepth

def spec_depth_to_space(x, bs, mode):
    n, c, *sp = x.shape
    k = len(sp)
    c2 = c // bs ** k
    if mode == "blocks_first":
        y = x.reshape([n] + [bs] * k + [c2] + sp)
        perm = [0, k + 1] + [a for i in range(k) for a in (k + 2 + i, 1 + i)]
    else:
        y = x.reshape([n, c2] + [bs] * k + sp)
        perm = [0, 1] + [a for i in range(k) for a in (k + 2 + i, 2 + i)]
    return y.transpose(perm).reshape([n, c2] + [d * bs for d in sp])


def spec_space_to_depth(x, bs, mode):
    n, c, *sp = x.shape
    k = len(sp)
    y = x.reshape([n, c] + [v for d in sp for v in (d // bs, bs)])
    blocks = [3 + 2 * i for i in range(k)]
    spatial = [2 + 2 * i for i in range(k)]
    perm = [0] + blocks + [1] + spatial if mode == "blocks_first" else [0, 1] + blocks + spatial
    return y.transpose(perm).reshape([n, c * bs ** k] + [d // bs for d in sp])


def spec_shuffle_channels(x, axis, group):
    axis %= x.ndim
    outer = int(np.prod(x.shape[:axis]))
    inner = int(np.prod(x.shape[axis + 1:]))
    c = x.shape[axis]
    return x.reshape(outer, group, c // group, inner).transpose(0, 2, 1, 3).reshape(x.shape)


def gen_space_depth():
    x = rand(2, 12, 3, 4)
    y = spec_depth_to_space(x, 2, "depth_first")
    assert np.array_equal(y, torch.pixel_shuffle(torch.from_numpy(x), 2).numpy())
    case("d2s_df", [x], y)
    case("d2s_bf", "d2s_df", spec_depth_to_space(x, 2, "blocks_first"))
    x = rand(1, 16, 2, 3, 2, dtype=np.int32)
    case("d2s_bf_3d", [x], spec_depth_to_space(x, 2, "blocks_first"))
    case("d2s_df_3d", "d2s_bf_3d", spec_depth_to_space(x, 2, "depth_first"))
    x = rand(1, 9, 5)
    case("d2s_bf_1d", [x], spec_depth_to_space(x, 3, "blocks_first"))
    x = rand(2, 3, 6, 4)
    y = spec_space_to_depth(x, 2, "depth_first")
    assert np.array_equal(y, torch.pixel_unshuffle(torch.from_numpy(x), 2).numpy())
    case("s2d_df", [x], y)
    case("s2d_bf", "s2d_df", spec_space_to_depth(x, 2, "blocks_first"))
    x = rng.integers(0, 255, size=(1, 2, 6, 3, 9)).astype(np.uint8)
    case("s2d_bf_3d", [x], spec_space_to_depth(x, 3, "blocks_first"))
    x = rand(2, 12, 5, 3)
    y = spec_shuffle_channels(x, 1, 3)
    assert np.array_equal(y, torch.nn.ChannelShuffle(3)(torch.from_numpy(x)).numpy())
    case("shuffle_c3", [x], y)
    x = rand(3, 4, 10, dtype=np.int64)
    case("shuffle_neg", [x], spec_shuffle_channels(x, -1, 5))
    x = rng.integers(0, 255, size=(8,)).astype(np.uint8)
    case("shuffle_1d", [x], spec_shuffle_channels(x, 0, 4))


if __name__ == "__main__":
    gen_gather()
    gen_gather_nd()
    gen_gather_elements()
    gen_scatter()
    gen_space_depth()
    print(len(CASES), "cases")
