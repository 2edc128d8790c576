#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reference vectors for the element-wise, reduction, normalisation and
data-movement kernels of issue 15 (tests/ir/kernels/test-unary.c,
test-binary.c, test-reduce.c, test-normalize.c, test-movement.c).

Run with Debian's /usr/bin/python3 (python3-torch, python3-numpy):
`tests/data/ir-kernels/gen-ops.py`. Writes small .npy files next to this
script (prefixes un_, bin_, cmp_, red_, nrm_, mv_); the tests never need
Python.

Values come from PyTorch where it has the op (computed in float64, then
rounded to float32 once) and otherwise from NumPy written from the
OpenVINO specification, in float64 or in the exact integer arithmetic the
spec defines. Each function below names the spec formula it evaluates.
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261126)
f32, f64 = np.float32, np.float64


def save(name, arr):
    arr = np.array(arr, order="C")
    np.save(os.path.join(OUT, name + ".npy"), arr)


def rand(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(f32)


def t64(a):
    return torch.from_numpy(np.asarray(a, dtype=f64))


# ------------------------------------------------------------------- unary

# un_y holds one row per op, in this order (test-unary.c lists the same).
UNARY_OPS = ["swish", "swish_b", "hswish", "hsigmoid", "hard_sigmoid", "mish", "gelu_erf",
             "gelu_tanh", "elu", "selu", "softplus", "softsign", "tanh", "erf", "abs",
             "negative", "sign", "floor", "ceiling", "round_even", "round_away", "sqrt", "log",
             "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
             "atanh", "exp"]

def gen_unary():
    special = [0.0, -0.0, 1e-30, -1e-30, 1e-7, -1e-7, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -3.0,
               20.0, -20.0, 44.0, 87.0, -87.0, 88.5, -90.0, -100.0, -103.0, -104.5, 100.0]
    x = np.concatenate([np.linspace(-12, 12, 481), rng.uniform(-40, 40, 200),
                        np.array(special)]).astype(f32)
    save("un_x", x)
    xd = x.astype(f64)
    tx = t64(x)
    with np.errstate(all="ignore"):
        ref = {
            # Swish-4: x / (1 + e^(-beta x)), beta 1 and beta 0.75 (input 2)
            "swish": F.silu(tx).numpy(),
            "swish_b": xd / (1.0 + np.exp(-0.75 * xd)),
            # HSwish-4: x * min(max(x + 3, 0), 6) / 6; HSigmoid-5 without the x
            "hswish": F.hardswish(tx).numpy(),
            "hsigmoid": F.hardsigmoid(tx).numpy(),
            # HardSigmoid-1: max(0, min(1, alpha x + beta)), alpha 0.2, beta 0.5
            "hard_sigmoid": np.clip(f64(f32(0.2)) * xd + 0.5, 0.0, 1.0),
            "mish": F.mish(tx).numpy(),
            "gelu_erf": F.gelu(tx).numpy(),
            "gelu_tanh": F.gelu(tx, approximate="tanh").numpy(),
            # Elu-1: x > 0 ? x : alpha (e^x - 1), alpha 0.7
            "elu": F.elu(tx, alpha=f64(f32(0.7))).numpy(),
            # Selu-1 with torch's alpha, lambda rounded to f32 (the inputs are f32)
            "selu": f64(f32(1.0507009873554805)) * np.where(
                xd > 0, xd, f64(f32(1.6732632423543772)) * np.expm1(xd)),
            # SoftPlus-4: log(e^x + 1), x from threshold 20 on
            "softplus": F.softplus(tx, beta=1, threshold=20).numpy(),
            "softsign": F.softsign(tx).numpy(),
            "tanh": np.tanh(xd), "erf": torch.erf(tx).numpy(),
            "abs": np.abs(xd), "negative": -xd, "sign": np.sign(xd),
            "floor": np.floor(xd), "ceiling": np.ceil(xd),
            "round_even": np.round(xd),                                  # half to even
            "round_away": np.sign(xd) * np.floor(np.abs(xd) + 0.5),      # half away from 0
            "sqrt": np.sqrt(xd), "log": np.log(xd),
            "sin": np.sin(xd), "cos": np.cos(xd), "tan": np.tan(xd),
            "asin": np.arcsin(xd), "acos": np.arccos(xd), "atan": np.arctan(xd),
            "sinh": np.sinh(xd), "cosh": np.cosh(xd), "asinh": np.arcsinh(xd),
            "acosh": np.arccosh(xd), "atanh": np.arctanh(xd),
            # e^x for the kernels' shared exponential (vmath.h)
            "exp": np.exp(xd),
        }
    assert list(ref) == UNARY_OPS
    with np.errstate(over="ignore"):           # sinh, cosh, exp overflow to inf
        save("un_y", np.stack([np.asarray(v, dtype=f64).astype(f32) for v in ref.values()]))


# ------------------------------------------------------------------ binary

BCAST = [  # name, shape a, shape b
    ("same", (2, 9), (2, 9)),
    ("bcast", (2, 3, 4, 5), (3, 1, 5)),
    ("chan", (1, 8, 5, 5), (1, 8, 1, 1)),
    ("scalar_b", (3, 7), ()),
    ("scalar_a", (), (4, 1, 3)),
    ("both", (5, 1), (1, 6)),
    ("rank", (2, 1, 4), (3, 1)),
    ("one", (1,), (1, 1, 1)),
    ("empty", (0, 3), (1, 3)),
]


def np_floor_mod(a, b):
    return np.mod(a, b)          # remainder of floor division, exact (fmod, sign fix-up)


def gen_binary():
    for name, sa, sb in BCAST:
        a = rand(*sa, lo=-5, hi=5)
        b = rand(*sb, lo=-5, hi=5)
        # every kind of pair: some equal values for the comparisons
        b = np.where(np.abs(b) < 0.3, f32(1.25), b).astype(f32)
        if a.size and b.size:
            a.flat[0] = b.flat[0]
        save(f"bin_{name}_a", a)
        save(f"bin_{name}_b", b)
        ad, bd = a.astype(f64), b.astype(f64)
        # bin_<case>_y: max, min, sqdiff, mod, floormod, pow stacked;
        # cmp_<case>_y: eq, ne, lt, le, gt, ge stacked
        res = {
            "max": np.maximum(ad, bd), "min": np.minimum(ad, bd),
            "sqdiff": (a - b) * (a - b),          # in float32, as the op's type computes
            "mod": np.fmod(a, b), "floormod": np_floor_mod(a, b),
        }
        # Power: a positive base and exponents in [-2.5, 2.5]
        pa = (np.abs(a) + f32(0.5)).astype(f32)
        pb = (b / f32(2)).astype(f32)
        save(f"bin_{name}_pa", pa)
        save(f"bin_{name}_pb", pb)
        res["pow"] = np.power(pa.astype(f64), pb.astype(f64))
        # (Mod and FloorMod in float32: fmod is exact, the sign fix-up one rounding)
        save(f"bin_{name}_y", np.stack([np.asarray(v, dtype=f64).astype(f32) for v in res.values()]))
        cmp = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal]
        save(f"cmp_{name}_y", np.stack([fn(a, b) for fn in cmp]))
    # Integers: C's % (Mod, sign of the dividend), Python's % (FloorMod),
    # wrap-around square of differences, exponentiation by squaring.
    a = rng.integers(-60, 60, size=(4, 6)).astype(np.int32)
    b = (rng.integers(1, 9, size=(6,)) * rng.choice([-1, 1], size=(6,))).astype(np.int32)
    save("bin_i32_a", a)
    save("bin_i32_b", b)
    save("bin_i32_mod", np.array([[int(math.fmod(x, y)) for x, y in zip(r, b)] for r in a], np.int32))
    save("bin_i32_floormod", np.array([[int(x) % int(y) for x, y in zip(r, b)] for r in a], np.int32))
    save("bin_i32_max", np.maximum(a, b))
    save("bin_i32_min", np.minimum(a, b))
    save("bin_i32_sqdiff", ((a.astype(np.int64) - b) ** 2).astype(np.int32))
    e = np.abs(b) % 4
    save("bin_i32_pow", np.array([[int(x) ** int(y) for x, y in zip(r, e)] for r in a], np.int64).astype(np.int32))
    save("bin_i32_e", e.astype(np.int32))
    a64 = rng.integers(-2**40, 2**40, size=(3, 5)).astype(np.int64)
    b64 = rng.integers(1, 2**20, size=(5,)).astype(np.int64) * rng.choice([-1, 1], size=(5,))
    save("bin_i64_a", a64)
    save("bin_i64_b", b64)
    save("bin_i64_mod", np.array([[int(math.fmod(int(x), int(y))) if abs(int(x)) < 2**52 else 0
                                   for x, y in zip(r, b64)] for r in a64], np.int64))
    save("bin_i64_floormod", np.array([[int(x) % int(y) for x, y in zip(r, b64)] for r in a64], np.int64))
    save("bin_i64_bs", b64 * 2**20)
    save("cmp_i64_gt", a64 > b64 * 2**20)
    save("cmp_i64_le", a64 <= b64 * 2**20)
    # pdpd broadcasting: B onto A from `axis` (trailing 1-dims of B ignored)
    a = rand(2, 3, 4, 5)
    for name, sb, axis in (("mid", (3, 4), 1), ("mid1", (3, 1), 1), ("tail", (4, 5), -1),
                           ("lead", (1, 3), 0), ("scalar", (), -1)):
        b = rand(*sb)
        bt = b.reshape(sb[:len(sb) - next((i for i, d in enumerate(reversed(sb)) if d != 1), len(sb))]) \
            if sb else b
        ax = 4 - bt.ndim if axis == -1 else axis
        shape = [1] * 4
        for i, d in enumerate(bt.shape):
            shape[ax + i] = d
        save(f"bin_pdpd_{name}_b", b)
        save(f"bin_pdpd_{name}_y", (a - bt.reshape(shape)).astype(f32))
    save("bin_pdpd_a", a)
    # Logical ops and Select
    p = rng.random((3, 1, 4)) < 0.5
    q = rng.random((2, 4)) < 0.5
    save("cmp_p", p)
    save("cmp_q", q)
    save("cmp_and", np.logical_and(p, q))
    save("cmp_or", np.logical_or(p, q))
    save("cmp_xor", np.logical_xor(p, q))
    cond = rng.random((1, 5)) < 0.5
    th = rand(3, 1, 5)
    el = rand(4, 1)
    save("sel_cond", cond)
    save("sel_then", th)
    save("sel_else", el)
    save("sel_y", np.where(cond, th, el))


# -------------------------------------------------------------- reductions

RED_AXES = [("a1", [1]), ("neg", [-1]), ("a02", [0, 2]), ("trail", [1, 2, 3]),
            ("lead", [0]), ("none", []), ("unsorted", [3, 1]), ("rep", [1, -3]),
            ("all", [0, 1, 2, 3])]


def gen_reduce():
    x = rand(2, 3, 4, 5, lo=-2, hi=2)
    # Prod: values near 1 so 60-element products stay in range
    xp = (1 + rand(2, 3, 4, 5, lo=-0.3, hi=0.3)).astype(f32)
    save("red_x", x)
    save("red_xp", xp)
    xd, xpd = x.astype(f64), xp.astype(f64)
    ops = {
        "sum": lambda v, ax: v.sum(axis=ax), "mean": lambda v, ax: v.mean(axis=ax),
        "max": lambda v, ax: v.max(axis=ax), "min": lambda v, ax: v.min(axis=ax),
        "l1": lambda v, ax: np.abs(v).sum(axis=ax),
        "l2": lambda v, ax: np.sqrt((v * v).sum(axis=ax)),
        "prod": lambda v, ax: v.prod(axis=ax),
    }
    # red_y: one row per op (sum, mean, max, min, l1, l2, prod), each the
    # results of every RED_AXES case one after the other
    rows = []
    for op, fn in ops.items():
        src = xpd if op == "prod" else xd
        outs = []
        for _, axes in RED_AXES:
            ax = tuple(sorted(set(a % 4 for a in axes)))
            outs.append((fn(src, ax) if ax else src).astype(f32).ravel())
        rows.append(np.concatenate(outs))
    save("red_y", np.stack(rows))
    xi = rng.integers(-1000, 1000, size=(2, 3, 4, 5)).astype(np.int64)
    save("red_xi", xi)
    rows = []                       # red_i_y: sum, max, min, l1, prod, mean
    for op in ("sum", "max", "min", "l1", "prod", "mean"):
        outs = []
        for _, axes in RED_AXES:
            ax = tuple(sorted(set(a % 4 for a in axes)))
            if not ax:
                outs.append(xi.ravel())
                continue
            if op == "mean":   # sum in 64 bits, truncating division
                s = xi.sum(axis=ax)
                n = int(np.prod([xi.shape[a] for a in ax]))
                outs.append(np.array([int(v / n) if abs(v) < 2**52 else 0 for v in s.ravel()], np.int64))
            elif op == "prod":   # wraps in 64 bits
                p = xi.prod(axis=ax, dtype=np.int64)
                outs.append(p.ravel())
            else:
                v = {"sum": xi.sum(axis=ax), "max": xi.max(axis=ax), "min": xi.min(axis=ax),
                     "l1": np.abs(xi).sum(axis=ax)}[op]
                outs.append(v.ravel())
        rows.append(np.concatenate(outs).astype(np.int64))
    save("red_i_y", np.stack(rows))
    xb = rng.random((2, 3, 4)) < 0.7
    save("red_xb", xb)
    save("red_and", np.concatenate([xb.all(axis=(1,)).ravel(), xb.all(axis=(0, 2)).ravel()]))
    save("red_or", np.concatenate([xb.any(axis=(1,)).ravel(), xb.any(axis=(0, 2)).ravel()]))


# ---------------------------------------------------------- normalisations

def np_mvn(x, axes, variance, eps, inside):
    """MVN-6: (x - mean) / (sqrt(var + eps) or sqrt(var) + eps), var = mean((x - mean)^2)."""
    xd = x.astype(f64)
    m = xd.mean(axis=axes, keepdims=True)
    d = xd - m
    if not variance:
        return d
    v = (d * d).mean(axis=axes, keepdims=True)
    return d / (np.sqrt(v + eps) if inside else np.sqrt(v) + eps)


def np_l2(x, axes, eps, mode):
    """NormalizeL2-1: x / sqrt(eps_mode(sum x^2, eps))."""
    xd = x.astype(f64)
    s = (xd * xd).sum(axis=axes, keepdims=True) if axes else xd * xd
    return xd / np.sqrt(s + eps if mode == "add" else np.maximum(s, eps))


def np_lrn(x, axes, alpha, beta, bias, size):
    """LRN-1 as its spec writes it: window [i - size/2, i + size/2] per axis."""
    xd = x.astype(f64)
    y = np.empty_like(xd)
    half = size // 2
    for idx in np.ndindex(*x.shape):
        sl = tuple(slice(max(0, i - half), min(n, i + half + 1)) if a in axes else slice(i, i + 1)
                   for a, (i, n) in enumerate(zip(idx, x.shape)))
        s = (xd[sl] ** 2).sum()
        y[idx] = xd[idx] / (bias + alpha / size ** len(axes) * s) ** beta
    return y


def gen_normalize():
    x = rand(2, 3, 4, 5, lo=-3, hi=3)
    x[1, 2] = 0.25                     # a constant plane: variance 0
    save("nrm_x", x)
    mvn = {
        "hw_in": ((2, 3), True, 1e-3, True), "hw_out": ((2, 3), True, 1e-3, False),
        "chw": ((1, 2, 3), True, 1e-9, True), "c": ((1,), True, 1e-5, True),
        "n_h": ((0, 2), True, 1e-2, False), "novar": ((2, 3), False, 1e-9, True),
    }
    for k, (axes, var, eps, inside) in mvn.items():
        save("nrm_mvn_" + k, np_mvn(x, axes, var, eps, inside).astype(f32))
    l2 = {"c_add": ((1,), 1e-6, "add"), "c_max": ((1,), 0.5, "max"),
          "chw": ((1, 2, 3), 1e-10, "add"), "none": ((), 1e-4, "max"), "last": ((3,), 0.1, "add")}
    for k, (axes, eps, mode) in l2.items():
        save("nrm_l2_" + k, np_l2(x, axes, eps, mode).astype(f32))
    xl = rand(2, 7, 4, 5, lo=-2, hi=2)
    save("nrm_lrn_x", xl)
    save("nrm_lrn_torch", F.local_response_norm(t64(xl), 5, alpha=1e-2, beta=0.75, k=2.0).numpy().astype(f32))
    save("nrm_lrn_hw", np_lrn(xl, (2, 3), 0.1, 0.6, 1.5, 3).astype(f32))
    save("nrm_lrn_even", np_lrn(xl, (1,), 0.05, 0.75, 1.0, 4).astype(f32))
    save("nrm_logsm_1", torch.log_softmax(t64(x), 1).numpy().astype(f32))
    save("nrm_logsm_neg", torch.log_softmax(t64(x), -1).numpy().astype(f32))


# ----------------------------------------------------------- data movement

def np_slice(x, start, stop, step, axes):
    sl = [slice(None)] * x.ndim
    for b, e, s, a in zip(start, stop, step, axes):
        sl[a] = slice(b, e, s)
    return x[tuple(sl)]


def np_pad(x, pb, pe, mode, value=0.0):
    """Pad-12 from its spec: output index o on an axis reads data index
    o - pads_begin, mirrored or clamped into the original data (the spec's
    mixed-pads example: negative pads crop, reflections stay relative to
    the whole data); constant mode reads the pad value outside."""
    maps = []
    for n, b, e in zip(x.shape, pb, pe):
        idx = []
        for o in range(max(b + n + e, 0)):
            i = o - b
            if not 0 <= i < n:
                i = {"constant": -1, "edge": min(max(i, 0), n - 1),
                     "reflect": -i if i < 0 else 2 * (n - 1) - i,
                     "symmetric": -i - 1 if i < 0 else 2 * n - 1 - i}[mode]
            idx.append(i)
        maps.append(np.array(idx, dtype=np.int64))
    y = x[np.ix_(*[np.clip(m, 0, None) for m in maps])].copy()
    if mode == "constant":
        outside = np.zeros(y.shape, bool)
        for d, m in enumerate(maps):
            sh = [1] * x.ndim
            sh[d] = len(m)
            outside |= (m < 0).reshape(sh)
        y[outside] = value
    if all(b >= 0 and e >= 0 for b, e in zip(pb, pe)):   # numpy agrees where it can
        kw = {"constant_values": value} if mode == "constant" else {}
        assert np.array_equal(y, np.pad(x, list(zip(pb, pe)), mode=mode, **kw))
    return y


def gen_movement():
    x = np.arange(2 * 6 * 3 * 4, dtype=f32).reshape(2, 6, 3, 4) * f32(0.5) - 20
    save("mv_x", x)
    # Split / VariadicSplit along axis 1 and -1
    for i, p in enumerate(np.split(x, 3, axis=1)):
        save(f"mv_split3_{i}", p)
    for i, p in enumerate(np.split(x, [1, 1, 4], axis=-1)):   # lengths 1, 0, 3, 0 (-1 → 0)
        save(f"mv_vsplit_{i}", p)
    # Tile, Broadcast
    small = rand(3, 1, 2)
    save("mv_small", small)
    save("mv_tile_2231", np.tile(small, (2, 2, 3, 1)))
    save("mv_tile_short", np.tile(small, (1, 3)))            # repeats shorter than the rank
    save("mv_bcast_numpy", np.broadcast_to(small, (2, 3, 4, 2)))
    c = rand(3)
    save("mv_c", c)
    save("mv_bcast_explicit", np.broadcast_to(c.reshape(1, 3, 1, 1), (2, 3, 2, 2)))
    save("mv_bcast_bidir", small * np.ones((4, 1, 5, 1), dtype=f32))
    # Pad
    y = x[0, 0]                       # 3x4
    save("mv_p", y)
    for mode in ("constant", "edge", "reflect", "symmetric"):
        save(f"mv_pad_{mode}", np_pad(y, (2, 1), (1, 3), mode, 7.5))
        save(f"mv_pad_{mode}_neg", np_pad(y, (-1, 2), (1, -2), mode, 7.5))
    save("mv_pad4", np_pad(x, (0, 1, 0, 2), (1, 0, 2, 1), "reflect"))
    # Slice
    cases = {
        "basic": ([1, 0], [5, 3], [2, 1], [1, 3]),
        "neg": ([-1, 10], [-100, -5], [-2, -3], [-3, 2]),
        "big": ([0], [2**62], [1], [-1]),
        "empty": ([3], [1], [1], [1]),
        "rev": ([2**62], [-2**62], [-1], [0]),
    }
    for k, (b, e, s, a) in cases.items():
        save(f"mv_slice_{k}", np_slice(x, b, e, s, a))
    # Range
    save("mv_range_f", np.array([1.5 + i * -0.3 for i in range(math.ceil((-2.0 - 1.5) / -0.3))],
                                dtype=f64).astype(f32))


# ----------------------------------------------- vmath.h's e^x polynomial

def fit_exp():
    """The coefficients of m2i_vm_exp (m2i-core/ir/kernels/vmath.h):
    e^r = 1 + r + r^2 q(r), q of degree 4, fitted on [-ln2/2, ln2/2] by
    least squares reweighted toward the largest relative errors (a
    poor man's minimax). Prints them and the error of the f32 evaluation;
    writes nothing (`gen-ops.py --fit-exp`)."""
    half = math.log(2) / 2
    r = np.cos(np.linspace(0, np.pi, 4001)) * half * 1.0005
    target = np.where(r == 0, 0.5, (np.expm1(r) - r) / np.where(r == 0, 1, r * r))
    V = np.vander(r, 5, increasing=True)
    w = np.ones_like(r)
    for _ in range(60):
        W = w / np.exp(r)
        c, *_ = np.linalg.lstsq(V * (r * r * W)[:, None], target * r * r * W, rcond=None)
        err = r * r * (V @ c - target) / np.exp(r)
        w = w * (1 + 5 * np.abs(err) / np.abs(err).max())
    cf = c.astype(f32)
    rr = np.linspace(-half, half, 200001).astype(f32)
    q = cf[4]
    for k in (3, 2, 1, 0):
        q = (q * rr + cf[k]).astype(f32)
    y = (q * (rr * rr) + rr).astype(f32) + f32(1)
    true = np.exp(rr.astype(f64))
    print("q coefficients, r^0 first:", ", ".join("%.9ef" % v for v in cf))
    print("relative error of the fit: %.3g; f32 evaluation: %.2f ulp"
          % (np.abs(err).max(), np.max(np.abs(y - true) / np.spacing(true.astype(f32)))))


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["--fit-exp"]:
        fit_exp()
        sys.exit(0)
    gen_unary()
    gen_binary()
    gen_reduce()
    gen_normalize()
    gen_movement()
