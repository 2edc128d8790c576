# SPDX-License-Identifier: LGPL-2.1-or-later
"""A tiny numpy executor for IR models, one function per op, each written
from the OpenVINO op specification.

It exists to check the project's own IR files (what serializer.py wrote must
compute what torch computes) and to produce reference data for ops torch has
no exact counterpart for (NV12toRGB-8, Interpolate-11 'linear'). It is slow
and simple on purpose; the C runtime is the fast one. Floating-point models
are evaluated in float32 (f16 constants are widened on load, as the C runtime
does); every declared output <dim> and precision is checked against what the
op computed, so a wrong shape in the XML is caught here.
"""

import math

import numpy as np

from .reader import PRECISIONS, Model, parse_shape
from .serializer import ELEMENT_TYPES

F32 = np.float32


def _ints(text):
    return parse_shape(text)


def _bool(text, default=False):
    if text is None:
        return default
    return text.strip().lower() in ("true", "1")


def _broadcast_binary(fn):
    def op(layer, a, b):
        mode = layer.attrs.get("auto_broadcast", "numpy")
        if mode == "none" and a.shape != b.shape:
            raise ValueError(f"{layer.name}: auto_broadcast=none with shapes {a.shape}, {b.shape}")
        if mode not in ("numpy", "none"):
            raise NotImplementedError(f"{layer.name}: auto_broadcast={mode}")
        return [fn(a, b).astype(a.dtype)]
    return op


def _window_out(in_size, k, s, pb, pe, d, ceil):
    eff = (k - 1) * d + 1
    num = in_size + pb + pe - eff
    out = (-(-num // s) if ceil else num // s) + 1
    # A window that starts in the end padding is dropped (ceil mode).
    if ceil and (out - 1) * s >= in_size + pb:
        out -= 1
    return out


def _pads(layer, in_spatial, kernel, strides, dilations):
    auto_pad = layer.attrs.get("auto_pad", "explicit")
    if auto_pad in ("explicit", "notset", ""):
        return _ints(layer.attrs["pads_begin"]), _ints(layer.attrs["pads_end"])
    if auto_pad == "valid":
        return [0] * len(in_spatial), [0] * len(in_spatial)
    pb, pe = [], []
    for n, k, s, d in zip(in_spatial, kernel, strides, dilations):
        out = -(-n // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - n)
        small, big = total // 2, total - total // 2
        if auto_pad == "same_upper":
            pb.append(small)
            pe.append(big)
        elif auto_pad == "same_lower":
            pb.append(big)
            pe.append(small)
        else:
            raise NotImplementedError(f"{layer.name}: auto_pad={auto_pad}")
    return pb, pe


def op_convolution(layer, x, w):
    """Convolution-1, 2-D: NCHW input, OIHW weights, float32 accumulation."""
    strides = _ints(layer.attrs["strides"])
    dil = _ints(layer.attrs["dilations"])
    kh, kw = w.shape[2], w.shape[3]
    (pt, pl), (pbm, pr) = _pads(layer, x.shape[2:], [kh, kw], strides, dil)
    n, c, h, wd = x.shape
    xp = np.zeros((n, c, h + pt + pbm, wd + pl + pr), dtype=F32)
    xp[:, :, pt:pt + h, pl:pl + wd] = x
    oh = (h + pt + pbm - ((kh - 1) * dil[0] + 1)) // strides[0] + 1
    ow = (wd + pl + pr - ((kw - 1) * dil[1] + 1)) // strides[1] + 1
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=F32)
    for i in range(kh):
        for j in range(kw):
            ys, xs = i * dil[0], j * dil[1]
            cols[:, :, i, j] = xp[:, :, ys:ys + strides[0] * oh:strides[0],
                                  xs:xs + strides[1] * ow:strides[1]]
    cols = cols.reshape(n, c * kh * kw, oh * ow)
    out = np.einsum("ok,nkp->nop", w.reshape(w.shape[0], -1).astype(F32), cols,
                    optimize=True)
    return [out.reshape(n, w.shape[0], oh, ow).astype(F32)]


def op_maxpool(layer, x):
    """MaxPool-1 and MaxPool-8 (2-D): padding never wins the max. The indices
    output of MaxPool-8 is not computed (None): nothing here consumes it."""
    k = _ints(layer.attrs["kernel"])
    s = _ints(layer.attrs["strides"])
    d = _ints(layer.attrs.get("dilations", "1, 1"))
    pb, pe = _pads(layer, x.shape[2:], k, s, d)
    ceil = layer.attrs.get("rounding_type", "floor") == "ceil"
    n, c, h, w = x.shape
    oh = _window_out(h, k[0], s[0], pb[0], pe[0], d[0], ceil)
    ow = _window_out(w, k[1], s[1], pb[1], pe[1], d[1], ceil)
    # Pad enough on the end for ceil-mode windows that run past the input.
    need_h = (oh - 1) * s[0] + (k[0] - 1) * d[0] + 1
    need_w = (ow - 1) * s[1] + (k[1] - 1) * d[1] + 1
    xp = np.full((n, c, max(need_h, h + pb[0]), max(need_w, w + pb[1])), -np.inf, dtype=F32)
    xp[:, :, pb[0]:pb[0] + h, pb[1]:pb[1] + w] = x
    out = np.full((n, c, oh, ow), -np.inf, dtype=F32)
    for i in range(k[0]):
        for j in range(k[1]):
            ys, xs = i * d[0], j * d[1]
            out = np.maximum(out, xp[:, :, ys:ys + s[0] * oh:s[0], xs:xs + s[1] * ow:s[1]])
    outs = [out.astype(x.dtype)]
    if layer.type == "MaxPool" and layer.version == "opset8":
        outs.append(None)
    return outs


def op_reshape(layer, x, shape):
    special_zero = _bool(layer.attrs.get("special_zero"))
    target = [int(v) for v in shape.reshape(-1)]
    if special_zero:
        target = [x.shape[i] if v == 0 else v for i, v in enumerate(target)]
    return [x.reshape(target)]


def op_matmul(layer, a, b):
    if _bool(layer.attrs.get("transpose_a")) and a.ndim >= 2:
        a = np.swapaxes(a, -1, -2)
    if _bool(layer.attrs.get("transpose_b")) and b.ndim >= 2:
        b = np.swapaxes(b, -1, -2)
    return [np.matmul(a.astype(F32), b.astype(F32)).astype(F32)]


def op_softmax(layer, x):
    axis = int(layer.attrs.get("axis", "1"))
    if axis < 0:
        if layer.version == "opset1":
            raise ValueError(f"{layer.name}: SoftMax-1 takes no negative axis")
        axis += x.ndim
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return [(e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)]


def op_concat(layer, *xs):
    axis = int(layer.attrs["axis"])
    return [np.concatenate(xs, axis=axis)]


def op_reduce_mean(layer, x, axes):
    axes = tuple(int(a) % x.ndim for a in axes.reshape(-1))
    keep = _bool(layer.attrs.get("keep_dims"))
    return [x.mean(axis=axes, keepdims=keep, dtype=F32).astype(x.dtype)]


def op_transpose(layer, x, order):
    order = [int(v) for v in order.reshape(-1)]
    if not order:
        order = list(range(x.ndim))[::-1]
    return [np.ascontiguousarray(np.transpose(x, order))]


def op_convert(layer, x):
    et = layer.attrs["destination_type"]
    dtype = ELEMENT_TYPES[et][0]
    if np.issubdtype(x.dtype, np.floating) and np.issubdtype(np.dtype(dtype), np.integer):
        info = np.iinfo(dtype)
        # Convert-1: towards zero, saturating to the destination's range.
        x = np.clip(np.trunc(x), info.min, info.max)
    return [x.astype(dtype)]


def yuv_to_rgb(y, u, v, out_dtype):
    """The NV12toRGB-8 / I420toRGB-8 pixel formula (R = 1.164(Y-16) +
    1.596(V-128), G = 1.164(Y-16) - 0.813(V-128) - 0.391(U-128),
    B = 1.164(Y-16) + 2.018(U-128), clipped to [0, 255]) evaluated exactly as
    OpenVINO's reference implementation does: in float32, c = Y-16,
    d = U-128, e = V-128, G = (1.164c - 0.391d) - 0.813e, and an integer
    output rounded half away from zero. The order matters for u8: 696 of the
    2^24 (Y, U, V) triples give a G one level apart if the V term is taken
    first (see models/fashion-mnist-ppp/make_ppp.py)."""
    c = y.astype(F32) - F32(16)
    d = u.astype(F32) - F32(128)
    e = v.astype(F32) - F32(128)
    r = F32(1.164) * c + F32(1.596) * e
    g = F32(1.164) * c - F32(0.391) * d - F32(0.813) * e
    b = F32(1.164) * c + F32(2.018) * d
    rgb = np.stack([r, g, b], axis=-1)
    rgb = np.clip(rgb, F32(0), F32(255))
    if np.issubdtype(np.dtype(out_dtype), np.integer):
        rgb = np.floor(rgb + F32(0.5))  # non-negative here: half away from zero
    return rgb.astype(out_dtype)


def op_nv12_to_rgb(layer, y, uv=None):
    """NV12toRGB-8: NHWC planes. Two inputs: Y [N,H,W,1], UV [N,H/2,W/2,2];
    one input: [N, 3H/2, W, 1] with UV interleaved below Y."""
    if uv is None:
        h = y.shape[1] * 2 // 3
        w = y.shape[2]
        uv = y[:, h:, :, 0].reshape(y.shape[0], h // 2, w // 2, 2)
        y = y[:, :h]
    u = uv[..., 0].repeat(2, axis=1).repeat(2, axis=2)
    v = uv[..., 1].repeat(2, axis=1).repeat(2, axis=2)
    return [yuv_to_rgb(y[..., 0], u, v, y.dtype)]


def _interp_linear_axis(x, axis, out_len, scale):
    """Interpolate-4/11 mode 'linear' along one axis, antialias off,
    coordinate_transformation_mode half_pixel: the triangle filter of the
    spec's linear_interpolation() with a = 1, neighbours round(c)-2 ..
    round(c)+2, weights max(0, 1 - |c - i|) renormalised over the ones
    inside the input."""
    in_len = x.shape[axis]
    wmat = np.zeros((out_len, in_len), dtype=np.float64)
    for o in range(out_len):
        c = (o + 0.5) / scale - 0.5
        cr = int(round(c))
        for i in range(cr - 2, cr + 3):
            if 0 <= i < in_len:
                wmat[o, i] = max(0.0, 1.0 - abs(c - i))
        s = wmat[o].sum()
        if s > 0:
            wmat[o] /= s
    moved = np.moveaxis(x.astype(np.float64), axis, -1)
    out = moved @ wmat.T
    return np.moveaxis(out, -1, axis)


def op_interpolate(layer, x, sizes_or_scales, *rest):
    """Interpolate-11 (inputs image, scales_or_sizes, axes) and Interpolate-4
    (image, sizes, scales, axes); mode 'linear' with half_pixel coordinates,
    no padding and no antialias (what OpenVINO's PrePostProcessor resize
    emits) is the one implemented here."""
    a = layer.attrs
    if a.get("mode") != "linear" or a.get("coordinate_transformation_mode", "half_pixel") != "half_pixel" \
            or _bool(a.get("antialias")) or any(_ints(a.get("pads_begin", "0"))) \
            or any(_ints(a.get("pads_end", "0"))):
        raise NotImplementedError(f"{layer.name}: Interpolate attributes {a}")
    if layer.version == "opset4":
        sizes, scales, axes = sizes_or_scales, rest[0], rest[1] if len(rest) > 1 else None
    else:
        sizes, scales, axes = sizes_or_scales, sizes_or_scales, rest[0] if rest else None
    axes = list(range(x.ndim)) if axes is None else [int(v) for v in axes.reshape(-1)]
    out = x.astype(np.float64)
    for k, axis in enumerate(axes):
        if a["shape_calculation_mode"] == "sizes":
            out_len = int(sizes.reshape(-1)[k])
            scale = out_len / x.shape[axis]
        else:
            scale = float(scales.reshape(-1)[k])
            out_len = int(math.floor(scale * x.shape[axis]))
        # 'linear' is separable: the product of per-axis triangle weights,
        # renormalised per axis, equals the spec's joint normalisation.
        out = _interp_linear_axis(out, axis, out_len, scale)
    return [out.astype(x.dtype)]


OPS = {
    "Convolution": op_convolution,
    "MaxPool": op_maxpool,
    "Add": _broadcast_binary(np.add),
    "Subtract": _broadcast_binary(np.subtract),
    "Multiply": _broadcast_binary(np.multiply),
    "Divide": _broadcast_binary(np.divide),
    "ReLU": lambda layer, x: [np.maximum(x, 0).astype(x.dtype)],
    "Reshape": op_reshape,
    "MatMul": op_matmul,
    "SoftMax": op_softmax,
    "Concat": op_concat,
    "ReduceMean": op_reduce_mean,
    "Transpose": op_transpose,
    "Convert": op_convert,
    "NV12toRGB": op_nv12_to_rgb,
    "Interpolate": op_interpolate,
}


class Executor:
    """Runs a reader.Model. f16 constants and inputs are widened to f32."""

    def __init__(self, model):
        self.model = model if isinstance(model, Model) else Model(model)
        self.order = self.model.topological()

    def run(self, inputs, keep=False):
        """inputs: {parameter name: array}. Returns {result name: array}, or
        with keep=True also every layer's outputs ({layer name: [arrays]})."""
        values = {}
        for lid in self.order:
            layer = self.model.layers[lid]
            args = [values[src][k] for src, k in layer.sources]
            if layer.type == "Parameter":
                x = np.asarray(inputs[layer.name])
                want = parse_shape(layer.attrs["shape"])
                if list(x.shape) != want:
                    raise ValueError(f"input {layer.name}: shape {list(x.shape)}, model wants {want}")
                outs = [x.astype(F32) if x.dtype == np.float16 else x]
            elif layer.type == "Const":
                v = layer.value
                outs = [v.astype(F32) if v.dtype == np.float16 else v]
            elif layer.type == "Result":
                outs = []
            else:
                fn = OPS.get(layer.type)
                if fn is None:
                    raise NotImplementedError(f"op {layer.type}-{layer.version} ({layer.name})")
                outs = fn(layer, *args)
            self._check(layer, outs)
            values[lid] = outs
        res = {}
        for layer in self.model.results():
            src, k = layer.sources[0]
            res[layer.name] = values[src][k]
        if keep:
            return res, {self.model.layers[lid].name: v for lid, v in values.items()}
        return res

    @staticmethod
    def _check(layer, outs):
        for port, arr in zip(layer.outputs, outs):
            if arr is None:
                continue
            if list(arr.shape) != port.dims:
                raise ValueError(f"layer {layer.id} ({layer.name}, {layer.type}): computed shape "
                                 f"{list(arr.shape)}, XML declares {port.dims}")
            et = PRECISIONS.get(port.precision)
            dtype = np.dtype(ELEMENT_TYPES[et][0]) if et else None
            if dtype is not None and arr.dtype != dtype and not (
                    dtype == np.float16 and arr.dtype == F32):
                raise ValueError(f"layer {layer.id} ({layer.name}): computed {arr.dtype}, "
                                 f"XML declares {port.precision}")
