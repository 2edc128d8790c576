#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
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


# --------------------------------------------------------------- interpolate

f32 = np.float32


def spec_coord(mode, x, scale, out_len, in_len):
    """coordinate_transformation_mode, in float32 like the spec's reference."""
    x, scale, out_len, in_len = f32(x), f32(scale), f32(out_len), f32(in_len)
    if scale == f32(1) or out_len == in_len:
        return x
    if mode == "half_pixel":
        return (x + f32(0.5)) / scale - f32(0.5)
    if mode == "pytorch_half_pixel":
        return (x + f32(0.5)) / scale - f32(0.5) if out_len > 1 else f32(0)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + f32(0.5)) / scale
    return f32(0) if out_len == 1 else x * (in_len - f32(1)) / (out_len - f32(1))


def spec_nearest(mode, x, down):
    if mode == "round_prefer_floor":
        return math.floor(x) if x == int(x) + 0.5 else int(np.sign(x) * math.floor(abs(x) + 0.5))
    if mode == "round_prefer_ceil":
        return int(np.sign(x) * math.floor(abs(x) + 0.5))
    if mode == "floor":
        return math.floor(x)
    if mode == "ceil":
        return math.ceil(x)
    return math.ceil(x) if down else int(x)      # simple


def spec_interpolate(x, out_shape, axes, scales, mode, coord="half_pixel",
                     nearest="round_prefer_floor", antialias=False, cube=-0.75):
    """Interpolate-4 on an already padded tensor, straight from the spec's
    formulas: one output element at a time over the full (non-separable)
    neighbourhood."""
    rank = x.ndim
    all_scales = [1.0] * rank
    for a, sc in zip(axes, scales):
        all_scales[a] = sc
    y = np.zeros(out_shape, np.float64)
    down = any(sc < 1 for sc in scales)
    for oc in np.ndindex(*out_shape):
        if mode == "nearest":
            ic = []
            for d in range(rank):
                c = spec_coord(coord, oc[d], all_scales[d], out_shape[d], x.shape[d])
                ic.append(min(max(spec_nearest(nearest, c, all_scales[d] < 1), 0), x.shape[d] - 1))
            y[oc] = x[tuple(ic)]
            continue
        coords = {a: spec_coord(coord, oc[a], sc, out_shape[a], x.shape[a]) for a, sc in zip(axes, scales)}
        if mode == "cubic":
            total = 0.0
            base = {a: math.floor(c) for a, c in coords.items()}
            for offs in np.ndindex(*([4] * len(axes))):
                idx, w = list(oc), 1.0
                for k, a in zip(offs, axes):
                    t_ = abs(float(coords[a]) - base[a])
                    cf = [cube * (t_ + 1) ** 3 - 5 * cube * (t_ + 1) ** 2 + 8 * cube * (t_ + 1) - 4 * cube,
                          (cube + 2) * t_ ** 3 - (cube + 3) * t_ ** 2 + 1,
                          (cube + 2) * (1 - t_) ** 3 - (cube + 3) * (1 - t_) ** 2 + 1,
                          cube * (2 - t_) ** 3 - 5 * cube * (2 - t_) ** 2 + 8 * cube * (2 - t_) - 4 * cube]
                    w *= cf[k]
                    idx[a] = min(max(base[a] + k - 1, 0), x.shape[a] - 1)
                total += w * x[tuple(idx)]
            y[oc] = total
        elif mode == "linear_onnx":
            total = 0.0
            for offs in np.ndindex(*([2] * len(axes))):
                idx, w = list(oc), 1.0
                for k, a in zip(offs, axes):
                    c = min(max(float(coords[a]), 0.0), x.shape[a] - 1.0)
                    i1 = min(int(c), x.shape[a] - 1)
                    i2 = min(i1 + 1, x.shape[a] - 1)
                    d1, d2 = (0.5, 0.5) if i1 == i2 else (abs(c - i1), abs(c - i2))
                    idx[a] = i2 if k else i1
                    w *= d1 if k else d2
                total += w * x[tuple(idx)]
            y[oc] = total
        else:                                     # linear: triangle filter
            aa = [sc if (antialias and down) else 1.0 for sc in scales]
            r = [2 if sc > 1 else math.ceil(2.0 / av) for sc, av in zip(scales, aa)]
            total = wsum = 0.0
            for offs in np.ndindex(*[2 * ri + 1 for ri in r]):
                idx, w = list(oc), float(np.prod(aa))
                ok = True
                for k, a, ri, av in zip(offs, axes, r, aa):
                    src = int(np.sign(coords[a]) * math.floor(abs(coords[a]) + 0.5)) + k - ri
                    if not 0 <= src < x.shape[a]:
                        ok = False
                        break
                    idx[a] = src
                    w *= max(0.0, 1.0 - abs(av * (float(coords[a]) - src)))
                if ok:
                    total += w * x[tuple(idx)]
                    wsum += w
            y[oc] = total / wsum if wsum else 0.0
    return y.astype(np.float32)


def gen_interpolate():
    x = rand(1, 2, 5, 6)
    save("interp_x", x)
    # PyTorch's own resize modes.
    save("interp_torch_nearest", F.interpolate(t(x), size=(10, 12), mode="nearest").numpy())
    save("interp_torch_nearest_exact", F.interpolate(t(x), size=(7, 4), mode="nearest-exact").numpy())
    save("interp_torch_bilinear", F.interpolate(t(x), size=(8, 4), mode="bilinear",
                                                align_corners=False).numpy())
    save("interp_torch_bilinear_ac", F.interpolate(t(x), size=(9, 11), mode="bilinear",
                                                   align_corners=True).numpy())
    save("interp_torch_bicubic", F.interpolate(t(x), size=(9, 4), mode="bicubic",
                                               align_corners=False).numpy())
    x5 = rand(1, 2, 3, 4, 5)
    save("interp_x5", x5)
    save("interp_torch_trilinear", F.interpolate(t(x5), size=(5, 3, 7), mode="trilinear",
                                                 align_corners=False).numpy())
    # The spec's formulas where torch has no equivalent.
    save("interp_spec_linear_aa", spec_interpolate(x, (1, 2, 3, 4), [2, 3], [3 / 5, 4 / 6],
                                                   "linear", antialias=True))
    save("interp_spec_linear_up", spec_interpolate(x, (1, 2, 7, 9), [2, 3], [7 / 5, 9 / 6],
                                                   "linear", coord="asymmetric"))
    save("interp_spec_cubic", spec_interpolate(x, (1, 2, 8, 5), [2, 3], [8 / 5, 5 / 6], "cubic",
                                               coord="align_corners", cube=-0.5))
    save("interp_spec_onnx_asym", spec_interpolate(x, (1, 2, 7, 8), [2, 3], [7 / 5, 8 / 6],
                                                   "linear_onnx", coord="asymmetric"))
    for nm in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"):
        for cm in ("half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn",
                   "align_corners"):
            y = spec_interpolate(x, (1, 2, 3, 9), [2, 3], [3 / 5, 9 / 6], "nearest", cm, nm)
            save(f"interp_nearest_{nm}_{cm}", y)
    # scales mode with pads: pad axis 1 by (1, 0) and axis 3 by (0, 2), then
    # resize axes 2 and 3 by 1.5 and 0.5 (floor(5·1.5) = 7, floor(8·0.5) = 4).
    xp = np.pad(x, ((0, 0), (1, 0), (0, 0), (0, 2)))
    save("interp_spec_pads", spec_interpolate(xp, (1, 3, 7, 4), [2, 3], [1.5, 0.5],
                                              "linear_onnx", coord="half_pixel"))


def gen_pillow():
    """Pillow itself for the *_pillow modes (float 'F' images and u8 'L')."""
    from PIL import Image
    x = rand(7, 9, lo=0, hi=255)
    save("pillow_x", x)
    for name, flt in (("bilinear", Image.BILINEAR), ("bicubic", Image.BICUBIC)):
        for w, h in ((4, 3), (13, 11)):
            y = np.asarray(Image.fromarray(x, mode="F").resize((w, h), flt), dtype=np.float32)
            save(f"pillow_{name}_{h}x{w}", y)
    xu = rng.integers(0, 256, size=(7, 9)).astype(np.uint8)
    save("pillow_xu8", xu)
    for name, flt in (("bilinear", Image.BILINEAR), ("bicubic", Image.BICUBIC)):
        y = np.asarray(Image.fromarray(xu, mode="L").resize((5, 4), flt), dtype=np.uint8)
        save(f"pillow_{name}_u8", y)


# ------------------------------------------------------ colour, FakeQuantize

def spec_yuv_to_rgb(y, u, v):
    """The NV12toRGB-8 formulas in float32, in the spec's order."""
    c = y.astype(f32) - f32(16)
    d = u.astype(f32) - f32(128)
    e = v.astype(f32) - f32(128)
    r = f32(1.164) * c + f32(1.596) * e
    g = f32(1.164) * c - f32(0.391) * d - f32(0.813) * e
    b = f32(1.164) * c + f32(2.018) * d
    return np.stack([r, g, b], axis=-1)


def gen_color():
    n, h, w = 2, 4, 6
    Y = rng.integers(0, 256, size=(n, h, w)).astype(np.uint8)
    U = rng.integers(0, 256, size=(n, h // 2, w // 2)).astype(np.uint8)
    V = rng.integers(0, 256, size=(n, h // 2, w // 2)).astype(np.uint8)
    up = lambda p: p.repeat(2, axis=1).repeat(2, axis=2)        # 4:2:0 → full
    rgb = spec_yuv_to_rgb(Y, up(U), up(V))
    save("yuv_y", Y[..., None])
    save("yuv_u", U[..., None])
    save("yuv_v", V[..., None])
    save("yuv_uv", np.stack([U, V], axis=-1))
    save("yuv_rgb_f32", np.clip(rgb, 0, 255))
    save("yuv_rgb_u8", np.clip(np.floor(rgb + f32(0.5)), 0, 255).astype(np.uint8))


def gen_fake_quantize():
    x = rand(2, 3, 4, 5, lo=-3, hi=3)
    il = np.array([-2.0, -1.0, 0.5], f32).reshape(1, 3, 1, 1)
    ih = np.array([2.0, 1.5, 2.5], f32).reshape(1, 3, 1, 1)
    ol = np.array(-1.0, f32).reshape(1, 1, 1, 1)
    oh = np.array(3.0, f32).reshape(1)
    lv = f32(255 - 1)
    y = np.where(x <= np.minimum(il, ih), ol,
                 np.where(x > np.maximum(il, ih), oh,
                          np.rint((x - il) / (ih - il) * lv) / lv * (oh - ol) + ol)).astype(f32)
    for k, v in (("fq_x", x), ("fq_il", il), ("fq_ih", ih), ("fq_ol", ol), ("fq_oh", oh), ("fq_y", y)):
        save(k, v)


# ----------------------------------------------------------------- detection

def py_prior_box_clustered(layer_hw, img_hw, widths, heights, offset, step=0.0, step_w=0.0,
                           step_h=0.0, clip=True, variance=()):
    """PriorBoxClustered-1 from its spec: boxes per cell, then variances."""
    lh, lw = layer_hw
    ih, iw = img_hw
    sw = f32(step_w if step_w else step)
    sh = f32(step_h if step_h else step)
    if sw == 0 and sh == 0:
        sw, sh = f32(iw) / f32(lw), f32(ih) / f32(lh)
    var = list(variance) or [0.1]
    boxes, variances = [], []
    for h in range(lh):
        for w in range(lw):
            cx, cy = (f32(w) + f32(offset)) * sw, (f32(h) + f32(offset)) * sh
            for bw, bh in zip(widths, heights):
                b = [(cx - f32(bw) / f32(2)) / f32(iw), (cy - f32(bh) / f32(2)) / f32(ih),
                     (cx + f32(bw) / f32(2)) / f32(iw), (cy + f32(bh) / f32(2)) / f32(ih)]
                if clip:
                    b = [min(max(v, f32(0)), f32(1)) for v in b]
                boxes += b
                variances += var * 4 if len(var) == 1 else var
    return np.array([boxes, variances], np.float32)


def py_detection_output(loc, conf, priors, a, arm_conf=None, arm_loc=None):
    """DetectionOutput following the SSD/Caffe algorithm the spec refers to
    (decode, per-class greedy NMS or MXNet's best-class NMS, keep_top_k),
    written independently; boxes are decoded in float32."""
    n = loc.shape[0]
    nc = a["num_classes"]
    psize = 4 if a["normalized"] else 5
    npri = priors.shape[2] // psize
    nlc = 1 if a["share_location"] else nc
    bg = a["background_label_id"]

    def decode(prior, var, l):
        px0, py0, px1, py1 = prior
        if not a["normalized"]:
            px0, px1 = px0 / f32(a["input_width"]), px1 / f32(a["input_width"])
            py0, py1 = py0 / f32(a["input_height"]), py1 / f32(a["input_height"])
        if a["code_type"].endswith("CORNER"):
            d = [px0 + var[0] * l[0], py0 + var[1] * l[1], px1 + var[2] * l[2], py1 + var[3] * l[3]]
        else:
            pw, ph = px1 - px0, py1 - py0
            pcx, pcy = (px0 + px1) / f32(2), (py0 + py1) / f32(2)
            cx, cy = var[0] * l[0] * pw + pcx, var[1] * l[1] * ph + pcy
            w, h = f32(np.exp(var[2] * l[2])) * pw, f32(np.exp(var[3] * l[3])) * ph
            d = [cx - w / f32(2), cy - h / f32(2), cx + w / f32(2), cy + h / f32(2)]
        if a["clip_before_nms"]:
            d = [min(max(v, f32(0)), f32(1)) for v in d]
        return d

    def area(b):
        return f32(0) if b[2] < b[0] or b[3] < b[1] else (b[2] - b[0]) * (b[3] - b[1])

    def iou(b1, b2):
        if b2[0] > b1[2] or b2[2] < b1[0] or b2[1] > b1[3] or b2[3] < b1[1]:
            return f32(0)
        w = min(b1[2], b2[2]) - max(b1[0], b2[0])
        h = min(b1[3], b2[3]) - max(b1[1], b2[1])
        if not (w > 0 and h > 0):
            return f32(0)
        inter = w * h
        return inter / (area(b1) + area(b2) - inter)

    out = []
    for i in range(n):
        pb = 0 if priors.shape[0] == 1 else i
        flat = priors[pb].reshape(-1)
        boxes_p = [flat[p * psize + (0 if a["normalized"] else 1):][:4] for p in range(npri)]
        if a["variance_encoded_in_target"]:
            var_p = [np.ones(4, f32)] * npri
        else:
            var_p = [flat[npri * psize + p * 4:][:4] for p in range(npri)]
        scores = conf[i].reshape(npri, nc).copy()
        if arm_conf is not None:
            low = arm_conf[i].reshape(npri, 2)[:, 1] < f32(a["objectness_score"])
            scores[low] = 0
            scores[low, bg] = 1
        dec = {}
        for c in range(nlc):
            if not a["share_location"] and bg > -1 and c == bg:
                continue
            l = loc[i].reshape(npri, nlc, 4)[:, c]
            if arm_loc is not None:
                al = arm_loc[i].reshape(npri, nlc, 4)[:, c]
                refined = [decode(boxes_p[p], var_p[p], al[p]) for p in range(npri)]
                dec[c] = [decode(refined[p], var_p[p], l[p]) for p in range(npri)]
            else:
                dec[c] = [decode(boxes_p[p], var_p[p], l[p]) for p in range(npri)]
        box_of = lambda c, p: dec[-1 if False else (0 if a["share_location"] else c)][p]
        kept = {}
        if not a["decrease_label_id"]:
            for c in range(nc):
                if c == bg:
                    continue
                cand = [(scores[p, c], p) for p in range(npri) if scores[p, c] > f32(a["confidence_threshold"])]
                cand.sort(key=lambda t_: (-t_[0], t_[1]))
                if a["top_k"] > -1:
                    cand = cand[:a["top_k"]]
                keep = []
                for sc, p in cand:
                    if all(not (iou(box_of(c, p), box_of(c, k)) > f32(a["nms_threshold"])) for k in keep):
                        keep.append(p)
                kept[c] = keep
        else:
            cand = []
            for p in range(npri):
                best, bid = f32(-1), 0
                for c in range(1, nc):
                    if bg > -1 and c == bg:
                        continue
                    if scores[p, c] > best:
                        best, bid = scores[p, c], c
                if bid > 0 and best >= f32(a["confidence_threshold"]):
                    cand.append((best, bid, p))
            cand.sort(key=lambda t_: (-t_[0], t_[2]))
            if a["top_k"] != -1:
                cand = cand[:a["top_k"]]
            for sc, c, p in cand:
                keep = kept.setdefault(c, [])
                if all(not (iou(box_of(c, p), box_of(c, k)) > f32(a["nms_threshold"])) for k in keep):
                    keep.append(p)
        total = sum(len(v) for v in kept.values())
        ktk = a["keep_top_k"]
        if ktk > -1 and total > ktk:
            allc = sorted(((scores[p, c], c, p) for c, v in kept.items() for p in v),
                          key=lambda t_: (-t_[0], t_[2], t_[1]))[:ktk]
            kept = {}
            for sc, c, p in allc:
                kept.setdefault(c, []).append(p)
        for c in sorted(kept):
            for p in kept[c]:
                b = box_of(c, p)
                if a["clip_after_nms"]:
                    b = [min(max(v, f32(0)), f32(1)) for v in b]
                out.append([i, c - 1 if a["decrease_label_id"] else c, scores[p, c], *b])
    if ktk > 0:
        rows = n * ktk
    elif a["top_k"] > 0:
        rows = n * a["top_k"] * nc
    else:
        rows = n * nc * npri
    res = np.zeros((1, 1, rows, 7), np.float32)
    for r, row in enumerate(out[:rows]):
        res[0, 0, r] = row
    if len(out) < rows:
        res[0, 0, len(out), 0] = -1
    return res


def make_priors(npri, normalized, batches=1, var=True, r=rng):
    cx, cy = r.uniform(0.2, 0.8, npri), r.uniform(0.2, 0.8, npri)
    w, h = r.uniform(0.05, 0.3, npri), r.uniform(0.05, 0.3, npri)
    b = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1).astype(f32)
    if not normalized:
        b = np.concatenate([np.zeros((npri, 1), f32), b * f32(300)], 1)
    rows = [b.reshape(-1)]
    if var:   # 4 variances per prior, the row as long as the boxes' row
        v = np.tile(np.array([0.1, 0.1, 0.2, 0.2], f32), npri)
        rows.append(np.concatenate([v, np.zeros(rows[0].size - v.size, f32)]))
    return np.stack([np.stack(rows)] * batches).astype(f32)


def scores(n, npri, nc, r=rng):
    x = r.uniform(0, 1, size=(n, npri, nc)).astype(f32) ** 3
    return (x / x.sum(-1, keepdims=True)).reshape(n, -1).astype(f32)


DO_BASE = dict(num_classes=2, background_label_id=0, top_k=20, keep_top_k=10,
               code_type="caffe.PriorBoxParameter.CENTER_SIZE", share_location=True,
               nms_threshold=0.45, confidence_threshold=0.01, clip_after_nms=False,
               clip_before_nms=False, decrease_label_id=False, normalized=True,
               input_height=1, input_width=1, variance_encoded_in_target=False,
               objectness_score=0.0)


def gen_detection():
    save("pbc_y", py_prior_box_clustered((3, 4), (48, 80), [10.5, 30.0, 70.0], [12.0, 25.5, 60.0],
                                         0.5, step=16.0, clip=False, variance=(0.1, 0.1, 0.2, 0.2)))
    save("pbc_clip_y", py_prior_box_clustered((2, 5), (40, 90), [30.0, 60.0], [40.0, 10.0], 0.25,
                                              clip=True, variance=(0.15,)))

    base = DO_BASE
    cases = {
        "do_ssd": (dict(base, keep_top_k=40, top_k=30), 1, 60, True),
        "do_corner_perclass": (dict(base, num_classes=3, background_label_id=-1, top_k=5,
                                    keep_top_k=-1, code_type="caffe.PriorBoxParameter.CORNER",
                                    share_location=False, variance_encoded_in_target=True,
                                    clip_after_nms=True), 2, 30, False),
        "do_unnormalized": (dict(base, num_classes=4, normalized=False, input_height=300,
                                 input_width=300, clip_before_nms=True, keep_top_k=7,
                                 top_k=-1), 2, 40, True),
        "do_mxnet": (dict(base, num_classes=4, decrease_label_id=True, keep_top_k=6,
                          top_k=15), 1, 50, True),
    }
    for name, (a, n, npri, var) in cases.items():
        nlc = 1 if a["share_location"] else a["num_classes"]
        pri = make_priors(npri, a["normalized"], 1, var)
        loc = rng.normal(0, 0.3, size=(n, npri * nlc * 4)).astype(f32)
        cf = scores(n, npri, a["num_classes"])
        save(name + "_loc", loc)
        save(name + "_conf", cf)
        save(name + "_priors", pri)
        save(name + "_y", py_detection_output(loc, cf, pri, a))
    # Five inputs: refinement boxes (ARM) and objectness.
    a = dict(base, num_classes=3, objectness_score=0.4, keep_top_k=8)
    n, npri = 2, 25
    pri = make_priors(npri, True, n)
    loc = rng.normal(0, 0.2, size=(n, npri * 4)).astype(f32)
    arm_loc = rng.normal(0, 0.2, size=(n, npri * 4)).astype(f32)
    cf = scores(n, npri, 3)
    arm = scores(n, npri, 2)
    for k, v in (("loc", loc), ("conf", cf), ("priors", pri), ("arm_conf", arm), ("arm_loc", arm_loc)):
        save("do_arm_" + k, v)
    save("do_arm_y", py_detection_output(loc, cf, pri, a, arm, arm_loc))


def gen_detection_odd():
    """An odd number of priors with per-class locations: the scratch's parts
    must stay aligned (issue 14: UBSan found the 8-byte counts misaligned
    after 12-byte candidates whenever the prior count was odd). Its own
    generator, so that the cases above keep their data."""
    r = np.random.default_rng(14)
    a = dict(DO_BASE, num_classes=2, share_location=False, keep_top_k=12, top_k=10)
    n, npri = 2, 33     # 33 priors × (12 + 4 · 2 classes) bytes: counts at 4 mod 8
    pri = make_priors(npri, True, 1, True, r)
    loc = r.normal(0, 0.3, size=(n, npri * 2 * 4)).astype(f32)
    cf = scores(n, npri, 2, r)
    for k, v in (("loc", loc), ("conf", cf), ("priors", pri)):
        save("do_odd_" + k, v)
    save("do_odd_y", py_detection_output(loc, cf, pri, a))


def gen_detection_ties():
    """Hundreds of candidates for a top_k of a few dozen, scores in steps of
    1/16 so that many tie at the cut: the kernel keeps the top_k best while
    scanning (a bounded heap) rather than sorting them all, and must cut
    where the full sort by (-score, prior) would. Per-class NMS (Caffe) and
    the best class per prior (MXNet). Its own generator, so that the cases
    above keep their data."""
    r = np.random.default_rng(19)
    n, npri, nc = 2, 300, 3
    pri = make_priors(npri, True, 1, True, r)
    loc = r.normal(0, 0.3, size=(n, npri * 4)).astype(f32)
    cf = (np.floor(r.uniform(0, 1, size=(n, npri * nc)) * 16) / 16).astype(f32)
    # NMS at 0.9 and no keep_top_k: the candidates at the cut reach the output
    ties = dict(DO_BASE, num_classes=nc, keep_top_k=-1, nms_threshold=0.9)
    for name, a in (("do_ties", dict(ties, top_k=25)),
                    ("do_ties_mxnet", dict(ties, top_k=40, decrease_label_id=True))):
        for k, v in (("loc", loc), ("conf", cf), ("priors", pri)):
            save(name + "_" + k, v)
        save(name + "_y", py_detection_output(loc, cf, pri, a))


if __name__ == "__main__":
    gen_conv()
    gen_matmul()
    gen_eltwise()
    gen_activation()
    gen_pool()
    gen_norm()
    gen_interpolate()
    gen_pillow()
    gen_color()
    gen_fake_quantize()
    gen_detection()
    gen_detection_odd()
    gen_detection_ties()
