#!/usr/bin/python3
"""Reference vectors for the IR runtime's compute kernels (tests/ir/kernels).

Run with Debian's /usr/bin/python3 (python3-torch, python3-numpy,
python3-pil): `tests/data/ir-kernels/gen.py`. Writes small .npy files next
to this script; the tests read them and never need torch at run time.

Values come from PyTorch, NumPy and Pillow — implementations independent of
ours. Where those libraries have no such op (OpenVINO-specific attribute
combinations), the expected values are computed here with NumPy directly
from the operation's OpenVINO specification, written as a plain loop so the
formula can be read off and compared with the spec text.
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20240611)


def save(name, arr):
    arr = np.array(arr, order="C")     # (ascontiguousarray would make 0-d arrays 1-d)
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    np.save(os.path.join(OUT, name + ".npy"), arr)


def rand(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


# ---------------------------------------------------------------- convolution

def same_pads(size, k, s, d, upper):
    """auto_pad same_upper / same_lower per the Convolution-1 spec."""
    out = -(-size // s)
    total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
    small, big = total // 2, total - total // 2
    return (small, big) if upper else (big, small)


def conv_case(name, x, w, strides, dilations, pads_begin, pads_end, groups=1):
    """PyTorch conv with explicit (possibly asymmetric) zero pads."""
    one_d = x.ndim == 3
    tx = t(x)
    if one_d:
        tx = F.pad(tx, (pads_begin[0], pads_end[0]))
        y = F.conv1d(tx, t(w.reshape(-1, *w.shape[-2:])), stride=strides, dilation=dilations,
                     groups=groups)
    else:
        tx = F.pad(tx, (pads_begin[1], pads_end[1], pads_begin[0], pads_end[0]))
        y = F.conv2d(tx, t(w.reshape(-1, *w.shape[-3:])), stride=strides, dilation=dilations,
                     groups=groups)
    save(name + "_x", x)
    save(name + "_w", w)
    save(name + "_y", y.numpy())


def gen_conv():
    x = rand(1, 3, 7, 9)
    conv_case("conv_basic", x, rand(4, 3, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1))
    conv_case("conv_stride_dil", rand(2, 3, 9, 8), rand(5, 3, 2, 3), (2, 1), (1, 2), (1, 2), (0, 1))
    x = rand(1, 2, 7, 8)
    w = rand(3, 2, 3, 3)
    ph = same_pads(7, 3, 2, 1, True)
    pw = same_pads(8, 3, 2, 1, True)
    conv_case("conv_same_upper", x, w, (2, 2), (1, 1), (ph[0], pw[0]), (ph[1], pw[1]))
    ph = same_pads(7, 3, 2, 1, False)
    pw = same_pads(8, 3, 2, 1, False)
    conv_case("conv_same_lower", x, w, (2, 2), (1, 1), (ph[0], pw[0]), (ph[1], pw[1]))
    conv_case("conv_valid", rand(1, 2, 6, 5), rand(3, 2, 3, 2), (1, 1), (1, 1), (0, 0), (0, 0))
    # GroupConvolution weights: [G, C_out/G, C_in/G, kh, kw]
    conv_case("gconv_groups", rand(1, 6, 5, 6), rand(3, 2, 2, 3, 3), (1, 1), (1, 1), (1, 1),
              (1, 1), groups=3)
    conv_case("gconv_depthwise", rand(1, 8, 9, 7), rand(8, 1, 1, 3, 3), (2, 2), (1, 1), (1, 1),
              (1, 1), groups=8)
    conv_case("conv1d", rand(1, 3, 11), rand(2, 3, 3), (2,), (1,), (1,), (2,))


# --------------------------------------------------------------------- matmul

def matmul_case(name, a, b, ta=False, tb=False):
    """torch.matmul has MatMul-1's 1-D and broadcasting rules; transposes
    swap the last two axes of a >= 2-D operand first."""
    A, B = t(a), t(b)
    if ta and a.ndim >= 2:
        A = A.transpose(-1, -2)
    if tb and b.ndim >= 2:
        B = B.transpose(-1, -2)
    save(name + "_a", a)
    save(name + "_b", b)
    save(name + "_y", torch.matmul(A, B).numpy())


def gen_matmul():
    matmul_case("mm_basic", rand(3, 5), rand(5, 4))
    matmul_case("mm_trans_bcast", rand(2, 1, 5, 3), rand(3, 4, 5), ta=True, tb=True)
    matmul_case("mm_vec_left", rand(5), rand(2, 5, 4))
    matmul_case("mm_vec_right", rand(3, 5), rand(5), ta=False, tb=True)
    matmul_case("mm_vec_vec", rand(6), rand(6))
    matmul_case("mm_fc", rand(1, 50), rand(10, 50), tb=True)


# ------------------------------------------------------------------- eltwise

def gen_eltwise():
    """NumPy float32 arithmetic rounds each result once, as the kernels do,
    so these expectations are exact."""
    cases = {
        "add_bcast": (np.add, rand(2, 3, 4, 5), rand(3, 1, 5)),
        "sub_chan": (np.subtract, rand(1, 8, 5, 5), rand(1, 8, 1, 1)),
        "mul_scalar": (np.multiply, rand(3, 7), np.array(rand(1)[0], dtype=np.float32)),
        "div_left": (np.divide, rand(1) + 2, rand(4, 1, 3, lo=0.5, hi=2.0)),
        "div_same": (np.divide, rand(2, 9), rand(2, 9, lo=0.5, hi=2.0)),
    }
    for name, (fn, a, b) in cases.items():
        save(name + "_a", a)
        save(name + "_b", b)
        save(name + "_y", fn(a, b).astype(np.float32))
    # Integer division: Python's own // (floor) and truncation toward zero.
    a = rng.integers(-50, 50, size=(4, 6)).astype(np.int32)
    b = rng.integers(1, 9, size=(6,)).astype(np.int32) * rng.choice([-1, 1], size=(6,)).astype(np.int32)
    floor = np.array([[int(x) // int(y) for x, y in zip(row, b)] for row in a], dtype=np.int32)
    trunc = np.array([[int(int(x) / int(y)) if abs(int(x)) < 2**24 else 0 for x, y in zip(row, b)]
                      for row in a], dtype=np.int32)
    save("idiv_a", a)
    save("idiv_b", b)
    save("idiv_floor", floor)
    save("idiv_trunc", trunc)
    a64 = rng.integers(-2**40, 2**40, size=(3, 5)).astype(np.int64)
    b64 = rng.integers(-2**20, 2**20, size=(5,)).astype(np.int64)
    save("imul64_a", a64)
    save("imul64_b", b64)
    save("imul64_y", a64 * b64)


# --------------------------------------------------------------- activations

def gen_activation():
    x = rand(2, 3, 17, lo=-6, hi=6)
    save("act_x", x)
    save("act_sigmoid", torch.sigmoid(t(x)).numpy())
    save("act_exp", torch.exp(t(x)).numpy())
    save("act_relu", torch.relu(t(x)).numpy())
    save("act_clamp", torch.clamp(t(x), -1.5, 2.25).numpy())
    # PReLU: per-channel slope (torch's prelu takes one weight per channel).
    x = rand(2, 4, 3, 5, lo=-2, hi=2)
    w = rand(4, lo=0, hi=0.5)
    save("prelu_x", x)
    save("prelu_slope", w)
    save("prelu_y", F.prelu(t(x), t(w)).numpy())
    # numpy-broadcast slope [3, 5] over [2, 4, 3, 5]: x < 0 ? slope*x : x
    w2 = rand(3, 5, lo=0, hi=0.5)
    save("prelu_full_slope", w2)
    save("prelu_full_y", np.where(x < 0, x * w2, x).astype(np.float32))


# ------------------------------------------------------------------- pooling

def pool_out(size, k, s, d, pb, pe, ceil):
    span = size + pb + pe - ((k - 1) * d + 1)
    return (-(-span // s) if ceil else span // s) + 1


def np_pool(x, kernel, strides, pads_begin, pads_end, dilations=None, ceil=False,
            mode="max", exclude_pad=False, axis=0):
    """MaxPool-8 / AvgPool-1 from their spec text, one window at a time (2-D)."""
    n, c, h, w = x.shape
    d = dilations or (1, 1)
    oh = pool_out(h, kernel[0], strides[0], d[0], pads_begin[0], pads_end[0], ceil)
    ow = pool_out(w, kernel[1], strides[1], d[1], pads_begin[1], pads_end[1], ceil)
    y = np.zeros((n, c, oh, ow), np.float32)
    idx = np.zeros((n, c, oh, ow), np.int64)
    any_pad = any(pads_begin) or any(pads_end)
    for b in range(n):
        for ch in range(c):
            for i in range(oh):
                for j in range(ow):
                    vals = []
                    for ki in range(kernel[0]):
                        for kj in range(kernel[1]):
                            yy = i * strides[0] - pads_begin[0] + ki * d[0]
                            xx = j * strides[1] - pads_begin[1] + kj * d[1]
                            if 0 <= yy < h and 0 <= xx < w:
                                vals.append((x[b, ch, yy, xx], yy * w + xx))
                    if mode == "max":
                        best = max(vals, key=lambda v: v[0])   # first maximum wins
                        y[b, ch, i, j] = best[0]
                        off = {0: (b * c + ch) * h * w, 1: ch * h * w}.get(axis, 0)
                        idx[b, ch, i, j] = best[1] + off
                    else:
                        count = kernel[0] * kernel[1] if (any_pad and not exclude_pad) else len(vals)
                        y[b, ch, i, j] = np.float32(sum(float(v[0]) for v in vals) / count)
    return y, idx


def gen_pool():
    # MaxPool: symmetric cases cross-checked against torch, then saved.
    x = rand(2, 3, 9, 11)
    for name, k, s, pb, pe, dil, ceil in [
            ("maxpool_sq", (3, 3), (2, 2), (0, 0), (0, 0), (1, 1), True),     # squeezenet
            ("maxpool_pad_dil", (2, 3), (1, 2), (1, 1), (1, 1), (2, 1), False),
            ("maxpool_asym", (3, 3), (2, 2), (0, 1), (1, 1), (1, 1), True)]:
        y, idx = np_pool(x, k, s, pb, pe, dil, ceil, axis=2)   # torch counts per plane
        if pb == pe:
            ty, ti = F.max_pool2d(t(x), k, s, pb, dil, ceil_mode=ceil, return_indices=True)
            assert np.array_equal(ty.numpy(), y) and np.array_equal(ti.numpy(), idx), name
        save(name + "_y", y)
        save(name + "_idx", idx)
    save("pool_x", x)
    # Indices counted from axis 0 (the default).
    y, idx = np_pool(x, (2, 2), (2, 2), (0, 0), (0, 0), axis=0)
    save("maxpool_axis0_idx", idx)
    # AvgPool: exclude-pad true/false, floor/ceil.
    for name, k, s, pb, pe, ceil, excl in [
            ("avgpool_incl", (3, 3), (2, 2), (1, 1), (1, 1), False, False),
            ("avgpool_excl", (3, 3), (2, 2), (1, 1), (1, 1), False, True),
            ("avgpool_ceil", (2, 2), (2, 2), (0, 0), (0, 0), True, False),
            ("avgpool_ceil_pad", (3, 3), (2, 2), (1, 0), (1, 0), True, False)]:
        y, _ = np_pool(x, k, s, pb, pe, None, ceil, "avg", excl)
        if pb == pe and not (ceil and any(pb)):
            ty = F.avg_pool2d(t(x), k, s, pb, ceil_mode=ceil, count_include_pad=not excl)
            assert np.allclose(ty.numpy(), y, atol=1e-6), name
        save(name + "_y", y)


# ---------------------------------------------- reduce, softmax, batch norm

def gen_norm():
    x = rand(2, 5, 4, 3, lo=-3, hi=3)
    save("norm_x", x)
    save("rmean_23_keep", torch.mean(t(x), dim=(2, 3), keepdim=True).numpy())
    save("rmean_neg", torch.mean(t(x), dim=(-1, 0)).numpy())
    save("rmean_all", np.array(torch.mean(t(x)).numpy()))
    save("softmax_1", torch.softmax(t(x), dim=1).numpy())
    save("softmax_neg1", torch.softmax(t(x), dim=-1).numpy())
    save("softmax_0", torch.softmax(t(x), dim=0).numpy())
    gamma, beta = rand(5, lo=0.5, hi=2), rand(5)
    mean, var = rand(5), rand(5, lo=0.1, hi=3)
    for n, v in (("bn_gamma", gamma), ("bn_beta", beta), ("bn_mean", mean), ("bn_var", var)):
        save(n, v)
    save("bn_y", F.batch_norm(t(x), t(mean), t(var), t(gamma), t(beta), training=False,
                              eps=1e-3).numpy())


if __name__ == "__main__":
    gen_conv()
    gen_matmul()
    gen_eltwise()
    gen_activation()
    gen_pool()
    gen_norm()
