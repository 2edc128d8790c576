#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Translate an OpenVINO IR model (v10 or v11) into an fp32 ONNX model, so
the peer benchmark can run the very same network in ONNX Runtime.

    /usr/bin/python3 tests/bench/onnx/ir_to_onnx.py MODEL.xml OUT.onnx

Run at benchmark time on ../shared/models/external/squeezenet1.1 (whose
files are never copied into the repository). f16 weights and inputs are
widened to f32 — the ONNX model computes in fp32. Needs the python3 onnx
package (Debian's python3-onnx); nothing at build or test time uses it.

Op mapping (IR -> ONNX, opset 17): Convolution -> Conv, GroupConvolution ->
Conv(group), Add/Subtract/Multiply/Divide -> Add/Sub/Mul/Div, ReLU -> Relu,
Sigmoid, Exp, Clamp -> Clip, PReLU -> PRelu (slope reshaped to the channel
axis), MaxPool-1/8 -> MaxPool, AvgPool -> AveragePool, ReduceMean,
SoftMax-1/8 -> Softmax, Concat, Reshape (special_zero -> allowzero),
MatMul (transpose_a/b -> Transpose), Transpose, Squeeze, Unsqueeze,
Convert -> Cast, BatchNormInference -> BatchNormalization; for the public
model set (docs/model-coverage.md) also FakeQuantize (as its formula:
Clip, Sub, Div, Round, Mul, Add), Elu, Swish, HSwish, HSigmoid, Mish,
SoftPlus, Gelu, Negative, Power, Sqrt, Maximum, Minimum, the comparisons,
Select -> Where, ReduceSum/Max/Min/Prod/L2, MVN (its formula), Gather,
StridedSlice and Slice -> Slice, Split/VariadicSplit -> Split, Tile,
Broadcast -> Expand, Interpolate-4/11 -> Resize, ConvolutionBackpropData
-> ConvTranspose, DepthToSpace, SpaceToDepth, NormalizeL2 (its formula).

Layers whose inputs are all constant (the weight dequantization Convert
-> Multiply chains, ShapeOf of a static shape and the arithmetic after it,
PriorBox inputs) are evaluated here with numpy from the op specifications
and become initializers. --outputs NAME,... makes the named tensors (a
tensor name or a layer name, LAYER.N for output N) the model's outputs
and translates only what they need (e.g. the inputs of a DetectionOutput,
which ONNX lacks). Anything else stops the translation with the op's name,
version and layer.
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(TOP, "models"))
from irgen.reader import Model, parse_shape  # noqa: E402

OPSET = 17

ONNX_TYPES = {
    "f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT, "f64": TensorProto.DOUBLE,
    "i64": TensorProto.INT64, "i32": TensorProto.INT32, "u8": TensorProto.UINT8,
    "i8": TensorProto.INT8, "boolean": TensorProto.BOOL, "u64": TensorProto.UINT64,
    "u32": TensorProto.UINT32, "u16": TensorProto.UINT16, "i16": TensorProto.INT16,
}
NP_TYPES = {
    "f32": np.float32, "f16": np.float16, "f64": np.float64, "i64": np.int64, "i32": np.int32,
    "u8": np.uint8, "i8": np.int8, "boolean": np.bool_, "u32": np.uint32, "u16": np.uint16,
    "i16": np.int16, "u64": np.uint64,
}
PREC_ET = {"FP32": "f32", "FP16": "f32", "I64": "i64", "I32": "i32", "U8": "u8", "I8": "i8",
           "BOOL": "boolean", "BOOLEAN": "boolean", "F32": "f32", "F16": "f32"}


def _ints(text):
    return parse_shape(text)


def _bool(text):
    return text is not None and text.strip().lower() in ("true", "1")


class Translator:
    def __init__(self, model):
        self.m = model
        self.nodes = []
        self.inits = {}
        self.names = {}  # (layer id, output ordinal) -> ONNX tensor name
        self.used = set()
        self.folded = {}  # (layer id, output ordinal) -> numpy value of a constant layer

    def tensor(self, lid, k=0):
        key = (lid, k)
        if key not in self.names:
            layer = self.m.layers[lid]
            base = layer.name if k == 0 else f"{layer.name}:{k}"
            name, i = base, 0
            while name in self.used:
                i += 1
                name = f"{base}_{i}"
            self.used.add(name)
            self.names[key] = name
        return self.names[key]

    def const_value(self, layer, k):
        """The value of layer's k-th input if it is constant (a Const or
        evaluated here), else None."""
        src, sk = layer.sources[k]
        c = self.m.layers[src]
        if c.type == "Const":
            return c.value
        return self.folded.get((src, sk))

    def required_const(self, layer, k, what):
        v = self.const_value(layer, k)
        if v is None:
            raise NotImplementedError(f"{layer.type} {layer.name}: {what} must be a Const")
        return v

    def init(self, name, array):
        if np.issubdtype(array.dtype, np.floating):
            array = array.astype(np.float32)
        elif array.dtype in (np.uint64, np.uint32):
            array = array.astype(np.int64)  # shapes and axes: ONNX wants int64
        name, base, i = name, name, 0
        while name in self.used:
            i += 1
            name = f"{base}_{i}"
        self.used.add(name)
        # np.array, not np.ascontiguousarray: that makes a scalar 1-D (a
        # Gather's scalar index would then keep the axis it removes)
        self.inits[name] = numpy_helper.from_array(np.array(array, order="C"), name)
        return name

    def inp(self, layer, k):
        src, sk = layer.sources[k]
        src_layer = self.m.layers[src]
        value = self.const_value(layer, k)
        if value is not None and (src, sk) not in self.names:
            self.names[(src, sk)] = self.init(src_layer.name if sk == 0 else
                                              f"{src_layer.name}:{sk}", np.asarray(value))
        return self.tensor(src, sk)

    def cinit(self, L, what, array):
        """A new initializer named after layer L."""
        return self.init(f"{L.name}/{what}", np.asarray(array))

    def node(self, op, inputs, layer, k_out=1, **attrs):
        outs = [self.tensor(layer.id, k) for k in range(k_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=layer.name, **attrs))

    def pads(self, layer):
        auto = layer.attrs.get("auto_pad", "explicit")
        if auto in ("explicit", "notset", ""):
            return {"pads": _ints(layer.attrs["pads_begin"]) + _ints(layer.attrs["pads_end"])}
        return {"auto_pad": {"valid": "VALID", "same_upper": "SAME_UPPER",
                             "same_lower": "SAME_LOWER"}[auto]}

    # ---- one method per IR op type -----------------------------------

    def Convolution(self, L, group=1, weight=None):
        w = weight if weight is not None else self.required_const(L, 1, "weights")
        wname = self.init(self.m.layers[L.sources[1][0]].name, w)
        self.node("Conv", [self.inp(L, 0), wname], L, kernel_shape=list(w.shape[2:]),
                  strides=_ints(L.attrs["strides"]), dilations=_ints(L.attrs["dilations"]),
                  group=group, **self.pads(L))

    def GroupConvolution(self, L):
        w = self.required_const(L, 1, "weights")  # [G, O/G, I/G, kh, kw]
        self.Convolution(L, group=w.shape[0], weight=w.reshape((-1,) + w.shape[2:]))

    def _binary(self, L, op):
        mode = L.attrs.get("auto_broadcast", "numpy")
        if mode not in ("numpy", "none"):
            raise NotImplementedError(f"{L.type} {L.name}: auto_broadcast={mode}")
        self.node(op, [self.inp(L, 0), self.inp(L, 1)], L)

    def Add(self, L):
        self._binary(L, "Add")

    def Subtract(self, L):
        self._binary(L, "Sub")

    def Multiply(self, L):
        self._binary(L, "Mul")

    def Divide(self, L):
        self._binary(L, "Div")

    def ReLU(self, L):
        self.node("Relu", [self.inp(L, 0)], L)

    def Sigmoid(self, L):
        self.node("Sigmoid", [self.inp(L, 0)], L)

    def Exp(self, L):
        self.node("Exp", [self.inp(L, 0)], L)

    def Clamp(self, L):
        lo = self.init(L.name + "/min", np.array(float(L.attrs["min"]), np.float32))
        hi = self.init(L.name + "/max", np.array(float(L.attrs["max"]), np.float32))
        self.node("Clip", [self.inp(L, 0), lo, hi], L)

    def PReLU(self, L):
        slope = self.required_const(L, 1, "slope")
        rank = len(L.inputs[0].dims)
        if slope.ndim == 1 and slope.size > 1 and rank >= 2:
            # PReLU-1 applies a 1-D slope along axis 1; ONNX broadcasts from the right.
            slope = slope.reshape((-1,) + (1,) * (rank - 2))
        self.node("PRelu", [self.inp(L, 0), self.init(L.name + "/slope", slope)], L)

    def MaxPool(self, L):
        attrs = dict(kernel_shape=_ints(L.attrs["kernel"]), strides=_ints(L.attrs["strides"]),
                     ceil_mode=1 if L.attrs.get("rounding_type", "floor") == "ceil" else 0,
                     **self.pads(L))
        if "dilations" in L.attrs:
            attrs["dilations"] = _ints(L.attrs["dilations"])
        # MaxPool-8's indices output has no ONNX equivalent with the same
        # numbering; it is translated only when nothing reads it.
        if len(L.outputs) > 1 and self._consumed(L.id, 1):
            raise NotImplementedError(f"MaxPool {L.name}: indices output is used")
        self.node("MaxPool", [self.inp(L, 0)], L, **attrs)

    def AvgPool(self, L):
        self.node("AveragePool", [self.inp(L, 0)], L, kernel_shape=_ints(L.attrs["kernel"]),
                  strides=_ints(L.attrs["strides"]),
                  ceil_mode=1 if L.attrs.get("rounding_type", "floor") == "ceil" else 0,
                  count_include_pad=0 if _bool(L.attrs.get("exclude-pad")) else 1,
                  **self.pads(L))

    def ReduceMean(self, L):
        axes = [int(a) for a in self.required_const(L, 1, "axes").reshape(-1)]
        self.node("ReduceMean", [self.inp(L, 0)], L, axes=axes,
                  keepdims=1 if _bool(L.attrs.get("keep_dims")) else 0)

    def SoftMax(self, L):
        self.node("Softmax", [self.inp(L, 0)], L, axis=int(L.attrs.get("axis", "1")))

    def Concat(self, L):
        self.node("Concat", [self.inp(L, k) for k in range(len(L.inputs))], L,
                  axis=int(L.attrs["axis"]))

    def Reshape(self, L):
        shape = self.required_const(L, 1, "target shape").astype(np.int64).reshape(-1)
        sname = self.init(L.name + "/shape", shape)
        # special_zero=true: 0 copies the input dim (ONNX allowzero=0);
        # false: 0 is a real zero-sized dim (allowzero=1).
        self.node("Reshape", [self.inp(L, 0), sname], L,
                  allowzero=0 if _bool(L.attrs.get("special_zero")) else 1)

    def MatMul(self, L):
        ins = []
        for k, flag in ((0, "transpose_a"), (1, "transpose_b")):
            v = self.const_value(L, k)
            rank = len(L.inputs[k].dims)
            if _bool(L.attrs.get(flag)) and rank >= 2 and v is not None:
                # A constant operand is stored transposed: no Transpose node.
                src = self.m.layers[L.sources[k][0]]
                ins.append(self.init(src.name, np.swapaxes(v, -1, -2)))
                continue
            name = self.inp(L, k)
            if _bool(L.attrs.get(flag)) and rank >= 2:
                perm = list(range(rank - 2)) + [rank - 1, rank - 2]
                tname = f"{name}/T"
                self.used.add(tname)
                self.nodes.append(helper.make_node("Transpose", [name], [tname],
                                                   name=f"{L.name}/{flag}", perm=perm))
                name = tname
            ins.append(name)
        self.node("MatMul", ins, L)

    def Transpose(self, L):
        perm = [int(v) for v in self.required_const(L, 1, "order").reshape(-1)]
        self.node("Transpose", [self.inp(L, 0)], L, **({"perm": perm} if perm else {}))

    def Squeeze(self, L):
        ins = [self.inp(L, 0)] + ([self.inp(L, 1)] if len(L.inputs) > 1 else [])
        self.node("Squeeze", ins, L)

    def Unsqueeze(self, L):
        self.node("Unsqueeze", [self.inp(L, 0), self.inp(L, 1)], L)

    def Convert(self, L):
        self.node("Cast", [self.inp(L, 0)], L, to=ONNX_TYPES[L.attrs["destination_type"]])

    def BatchNormInference(self, L):
        # BatchNormInference-5 inputs: data, gamma, beta, mean, variance (as ONNX).
        self.node("BatchNormalization", [self.inp(L, k) for k in range(5)], L,
                  epsilon=float(L.attrs["epsilon"]))


    # ---- ops of the public model set ------------------------------------

    def _unary(self, L, op, **attrs):
        self.node(op, [self.inp(L, 0)], L, **attrs)

    def Elu(self, L):
        self._unary(L, "Elu", alpha=float(L.attrs.get("alpha", "1")))

    def Negative(self, L):
        self._unary(L, "Neg")

    def Sqrt(self, L):
        self._unary(L, "Sqrt")

    def Tanh(self, L):
        self._unary(L, "Tanh")

    def Erf(self, L):
        self._unary(L, "Erf")

    def Floor(self, L):
        self._unary(L, "Floor")

    def Abs(self, L):
        self._unary(L, "Abs")

    def Log(self, L):
        self._unary(L, "Log")

    def SoftPlus(self, L):
        self._unary(L, "Softplus")

    def HSigmoid(self, L):
        self._unary(L, "HardSigmoid", alpha=1.0 / 6, beta=0.5)

    def HSwish(self, L):
        self._unary(L, "HardSwish")

    def Mish(self, L):
        sp = f"{L.name}/softplus"
        th = f"{L.name}/tanh"
        self.used.update((sp, th))
        self.nodes.append(helper.make_node("Softplus", [self.inp(L, 0)], [sp], name=sp))
        self.nodes.append(helper.make_node("Tanh", [sp], [th], name=th))
        self.node("Mul", [self.inp(L, 0), th], L)

    def Gelu(self, L):
        # Gelu-7 erf mode: 0.5 x (1 + erf(x / sqrt 2))
        x = self.inp(L, 0)
        names = [f"{L.name}/{k}" for k in ("d", "erf", "one", "half")]
        self.used.update(names)
        self.nodes.append(helper.make_node("Div", [x, self.cinit(L, "sqrt2", np.float32(np.sqrt(2)))],
                                           [names[0]]))
        self.nodes.append(helper.make_node("Erf", [names[0]], [names[1]]))
        self.nodes.append(helper.make_node("Add", [names[1], self.cinit(L, "1", np.float32(1))],
                                           [names[2]]))
        self.nodes.append(helper.make_node("Mul", [x, names[2]], [names[3]]))
        self.node("Mul", [names[3], self.cinit(L, "0.5", np.float32(0.5))], L)

    def Swish(self, L):
        x = self.inp(L, 0)
        s = f"{L.name}/sigmoid"
        self.used.add(s)
        if len(L.inputs) > 1:
            bx = f"{L.name}/beta_x"
            self.used.add(bx)
            self.nodes.append(helper.make_node("Mul", [x, self.inp(L, 1)], [bx]))
            self.nodes.append(helper.make_node("Sigmoid", [bx], [s]))
        else:
            self.nodes.append(helper.make_node("Sigmoid", [x], [s]))
        self.node("Mul", [x, s], L)

    def Power(self, L):
        self._binary(L, "Pow")

    def Maximum(self, L):
        self._binary(L, "Max")

    def Minimum(self, L):
        self._binary(L, "Min")

    def Equal(self, L):
        self._binary(L, "Equal")

    def Greater(self, L):
        self._binary(L, "Greater")

    def Less(self, L):
        self._binary(L, "Less")

    def GreaterEqual(self, L):
        self._binary(L, "GreaterOrEqual")

    def LessEqual(self, L):
        self._binary(L, "LessOrEqual")

    def Select(self, L):
        self.node("Where", [self.inp(L, k) for k in range(3)], L)

    def _reduce(self, L, op):
        axes = [int(a) for a in self.required_const(L, 1, "axes").reshape(-1)]
        keep = 1 if _bool(L.attrs.get("keep_dims")) else 0
        if op in ("ReduceSum",):
            self.node(op, [self.inp(L, 0), self.cinit(L, "axes", np.array(axes, np.int64))], L,
                      keepdims=keep)
        else:
            self.node(op, [self.inp(L, 0)], L, axes=axes, keepdims=keep)

    def ReduceSum(self, L):
        self._reduce(L, "ReduceSum")

    def ReduceMax(self, L):
        self._reduce(L, "ReduceMax")

    def ReduceMin(self, L):
        self._reduce(L, "ReduceMin")

    def ReduceProd(self, L):
        self._reduce(L, "ReduceProd")

    def ReduceL2(self, L):
        self._reduce(L, "ReduceL2")

    def FakeQuantize(self, L):
        # the spec, in its order of operations (a level flips on a rounding
        # difference, so the order matters): x <= min(lo, hi) -> out_lo;
        # x > max(lo, hi) -> out_hi; else
        # round((x - lo) / (hi - lo) * (levels - 1)) / (levels - 1) * (out_hi - out_lo) + out_lo
        levels = int(L.attrs["levels"])
        lo, hi, olo, ohi = (self.const_value(L, k) for k in range(1, 5))
        if any(v is None for v in (lo, hi, olo, ohi)):
            raise NotImplementedError(f"FakeQuantize {L.name}: ranges must be constant")
        lo, hi, olo, ohi = (np.asarray(v, np.float32) for v in (lo, hi, olo, ohi))
        x = self.inp(L, 0)
        n = [f"{L.name}/fq{k}" for k in range(11)]
        self.used.update(n)
        add = self.nodes.append
        c = lambda what, v: self.cinit(L, what, np.asarray(v, np.float32))  # noqa: E731
        add(helper.make_node("Sub", [x, c("lo", lo)], [n[0]]))
        add(helper.make_node("Div", [n[0], c("range", hi - lo)], [n[1]]))
        add(helper.make_node("Mul", [n[1], c("levels", levels - 1)], [n[2]]))
        add(helper.make_node("Round", [n[2]], [n[3]]))
        add(helper.make_node("Div", [n[3], c("levels2", levels - 1)], [n[4]]))
        add(helper.make_node("Mul", [n[4], c("orange", ohi - olo)], [n[5]]))
        add(helper.make_node("Add", [n[5], c("olo", olo)], [n[6]]))
        add(helper.make_node("LessOrEqual", [x, c("min", np.minimum(lo, hi))], [n[7]]))
        add(helper.make_node("Greater", [x, c("max", np.maximum(lo, hi))], [n[8]]))
        add(helper.make_node("Where", [n[7], c("olo2", olo), n[6]], [n[9]]))
        self.node("Where", [n[8], c("ohi", ohi), n[9]], L)

    def MVN(self, L):
        axes = [int(a) for a in self.required_const(L, 1, "axes").reshape(-1)] \
            if len(L.inputs) > 1 else list(range(1 if _bool(L.attrs.get("across_channels")) else 2,
                                                 len(L.inputs[0].dims)))
        eps = float(L.attrs.get("eps", "1e-9"))
        outside = L.attrs.get("eps_mode", "inside_sqrt") == "outside_sqrt"
        x = self.inp(L, 0)
        n = [f"{L.name}/mvn{k}" for k in range(6)]
        self.used.update(n)
        add = self.nodes.append
        add(helper.make_node("ReduceMean", [x], [n[0]], axes=axes, keepdims=1))
        add(helper.make_node("Sub", [x, n[0]], [n[1]]))
        if not _bool(L.attrs.get("normalize_variance", "true")):
            self.node("Identity", [n[1]], L)
            return
        add(helper.make_node("Mul", [n[1], n[1]], [n[2]]))
        add(helper.make_node("ReduceMean", [n[2]], [n[3]], axes=axes, keepdims=1))
        e = self.cinit(L, "eps", np.float32(eps))
        if outside:
            add(helper.make_node("Sqrt", [n[3]], [n[4]]))
            add(helper.make_node("Add", [n[4], e], [n[5]]))
        else:
            add(helper.make_node("Add", [n[3], e], [n[4]]))
            add(helper.make_node("Sqrt", [n[4]], [n[5]]))
        self.node("Div", [n[1], n[5]], L)

    def NormalizeL2(self, L):
        axes = [int(a) for a in self.required_const(L, 1, "axes").reshape(-1)]
        eps = float(L.attrs["eps"])
        x = self.inp(L, 0)
        n = [f"{L.name}/l2{k}" for k in range(4)]
        self.used.update(n)
        self.nodes.append(helper.make_node("Mul", [x, x], [n[0]]))
        self.nodes.append(helper.make_node("ReduceSum", [n[0], self.cinit(L, "axes", np.array(axes, np.int64))],
                                           [n[1]], keepdims=1))
        op = "Max" if L.attrs.get("eps_mode", "add") == "max" else "Add"
        self.nodes.append(helper.make_node(op, [n[1], self.cinit(L, "eps", np.float32(eps))], [n[2]]))
        self.nodes.append(helper.make_node("Sqrt", [n[2]], [n[3]]))
        self.node("Div", [x, n[3]], L)

    def Gather(self, L):
        axis = int(np.asarray(self.required_const(L, 2, "axis")).reshape(-1)[0])
        if int(L.attrs.get("batch_dims", "0")) != 0:
            raise NotImplementedError(f"Gather {L.name}: batch_dims")
        self.node("Gather", [self.inp(L, 0), self.inp(L, 1)], L, axis=axis)

    def _slice(self, L, starts, ends, axes, steps):
        self.node("Slice", [self.inp(L, 0), self.cinit(L, "starts", np.array(starts, np.int64)),
                            self.cinit(L, "ends", np.array(ends, np.int64)),
                            self.cinit(L, "axes", np.array(axes, np.int64)),
                            self.cinit(L, "steps", np.array(steps, np.int64))], L)

    def Slice(self, L):
        vals = [np.asarray(self.required_const(L, k, "start/stop/step")).reshape(-1) for k in (1, 2, 3)]
        axes = (np.asarray(self.required_const(L, 4, "axes")).reshape(-1) if len(L.inputs) > 4
                else np.arange(len(vals[0])))
        self._slice(L, vals[0], vals[1], axes, vals[2])

    def StridedSlice(self, L):
        # only the plain form at run time: begin/end/stride with begin/end
        # masks (new/shrink/ellipsis through numpy only for constants)
        for m in ("new_axis_mask", "shrink_axis_mask", "ellipsis_mask"):
            if any(_ints(L.attrs.get(m, "")) or [0]):
                raise NotImplementedError(f"StridedSlice {L.name}: {m} at run time")
        b, e = (np.asarray(self.required_const(L, k, "begin/end")).reshape(-1) for k in (1, 2))
        st = (np.asarray(self.required_const(L, 3, "stride")).reshape(-1) if len(L.inputs) > 3
              else np.ones_like(b))
        bm, em = _ints(L.attrs.get("begin_mask", "")), _ints(L.attrs.get("end_mask", ""))
        big = np.iinfo(np.int64).max
        starts, ends = [], []
        for i in range(len(b)):
            masked_b = i < len(bm) and bm[i]
            masked_e = i < len(em) and em[i]
            starts.append((0 if st[i] > 0 else -1) if masked_b else int(b[i]))
            ends.append((big if st[i] > 0 else -big) if masked_e else int(e[i]))
        self._slice(L, starts, ends, list(range(len(b))), [int(v) for v in st])

    def VariadicSplit(self, L):
        axis = int(np.asarray(self.required_const(L, 1, "axis")).reshape(-1)[0])
        lengths = np.asarray(self.required_const(L, 2, "split_lengths")).reshape(-1).astype(np.int64)
        dim = L.inputs[0].dims[axis]
        if (lengths == -1).any():
            lengths[lengths == -1] = dim - lengths[lengths != -1].sum()
        self.node("Split", [self.inp(L, 0), self.cinit(L, "split", lengths)], L,
                  k_out=len(L.outputs), axis=axis)

    def Split(self, L):
        axis = int(np.asarray(self.required_const(L, 1, "axis")).reshape(-1)[0])
        n = int(L.attrs["num_splits"])
        dim = L.inputs[0].dims[axis]
        self.node("Split", [self.inp(L, 0), self.cinit(L, "split", np.full(n, dim // n, np.int64))],
                  L, k_out=n, axis=axis)

    def Tile(self, L):
        self.node("Tile", [self.inp(L, 0), self.cinit(L, "repeats", np.asarray(
            self.required_const(L, 1, "repeats")).astype(np.int64))], L)

    def TopK(self, L):
        # ONNX TopK-11 gives values best first (sort=value); k is a 1-D int64
        # tensor and the indices are int64, so k is reshaped and cast, and
        # i32 indices are cast back.
        if L.attrs.get("sort", "value") not in ("value", "none"):
            raise NotImplementedError(f"TopK {L.name}: sort={L.attrs['sort']}")
        n = [f"{L.name}/k{i}" for i in range(3)]
        self.used.update(n)
        add = self.nodes.append
        add(helper.make_node("Cast", [self.inp(L, 1)], [n[0]], to=TensorProto.INT64))
        add(helper.make_node("Reshape", [n[0], self.cinit(L, "k_shape", np.array([1], np.int64))],
                             [n[1]]))
        values, indices = self.tensor(L.id, 0), self.tensor(L.id, 1)
        i32 = L.attrs.get("index_element_type", "i32") == "i32"
        add(helper.make_node("TopK", [self.inp(L, 0), n[1]], [values, n[2] if i32 else indices],
                             name=L.name, axis=int(L.attrs["axis"]),
                             largest=1 if L.attrs.get("mode", "max") == "max" else 0, sorted=1))
        if i32:
            add(helper.make_node("Cast", [n[2]], [indices], to=TensorProto.INT32))

    def ShapeOf(self, L):
        # only reached for run-time shapes (static ones are folded)
        if L.attrs.get("output_type", "i64") == "i32":
            t = f"{L.name}/i64"
            self.used.add(t)
            self.nodes.append(helper.make_node("Shape", [self.inp(L, 0)], [t]))
            self.node("Cast", [t], L, to=TensorProto.INT32)
        else:
            self.node("Shape", [self.inp(L, 0)], L)

    def NonZero(self, L):
        # ONNX gives int64 [rank, n] as the IR does; i32 output is cast
        if L.attrs.get("output_type", "i64") == "i32":
            t = f"{L.name}/i64"
            self.used.add(t)
            self.nodes.append(helper.make_node("NonZero", [self.inp(L, 0)], [t]))
            self.node("Cast", [t], L, to=TensorProto.INT32)
        else:
            self.node("NonZero", [self.inp(L, 0)], L)

    def NonMaxSuppression(self, L):
        # NMS-5/9 with sort_result_descending=false orders its rows as ONNX
        # does (batch, class, then score); selected_scores and valid_outputs
        # are rebuilt from the indices. ONNX's thresholds are 1-D tensors.
        if _bool(L.attrs.get("sort_result_descending", "true")):
            raise NotImplementedError(f"NonMaxSuppression {L.name}: sort_result_descending")
        if L.attrs.get("output_type", "i64") != "i64" or (len(L.inputs) > 5 and
                                                          self.const_value(L, 5) is not None and
                                                          float(self.const_value(L, 5)) != 0):
            raise NotImplementedError(f"NonMaxSuppression {L.name}: i32 output or soft NMS")
        n = [f"{L.name}/nms{i}" for i in range(9)]
        self.used.update(n)
        add = self.nodes.append
        one = self.cinit(L, "one", np.array([1], np.int64))
        ins = [self.inp(L, 0), self.inp(L, 1)]
        for k, (name, to) in enumerate([("max", TensorProto.INT64), ("iou", TensorProto.FLOAT),
                                        ("score", TensorProto.FLOAT)], start=2):
            if k < len(L.inputs):
                add(helper.make_node("Cast", [self.inp(L, k)], [n[k]], to=to))
                add(helper.make_node("Reshape", [n[k], one], [f"{n[k]}/1"]))
                self.used.add(f"{n[k]}/1")
                ins.append(f"{n[k]}/1")
        center = 1 if L.attrs.get("box_encoding", "corner") == "center" else 0
        idx = self.tensor(L.id, 0)
        add(helper.make_node("NonMaxSuppression", ins, [idx], name=L.name,
                             center_point_box=center))
        if len(L.outputs) > 1:
            # selected_scores: [batch, class, score] as f32
            add(helper.make_node("GatherND", [ins[1], idx], [n[0]]))
            add(helper.make_node("Unsqueeze", [n[0], one], [n[1]]))
            add(helper.make_node("Slice", [idx, self.cinit(L, "s0", np.array([0], np.int64)),
                                           self.cinit(L, "s2", np.array([2], np.int64)), one],
                                 [n[5]]))
            add(helper.make_node("Cast", [n[5]], [n[6]], to=TensorProto.FLOAT))
            add(helper.make_node("Concat", [n[6], n[1]], [self.tensor(L.id, 1)], axis=1))
        if len(L.outputs) > 2:
            add(helper.make_node("Shape", [idx], [n[7]]))
            add(helper.make_node("Slice", [n[7], self.cinit(L, "v0", np.array([0], np.int64)),
                                           one], [self.tensor(L.id, 2)]))

    def Broadcast(self, L):
        if L.attrs.get("mode", "numpy") not in ("numpy", "bidirectional"):
            raise NotImplementedError(f"Broadcast {L.name}: mode {L.attrs.get('mode')}")
        self.node("Expand", [self.inp(L, 0), self.cinit(L, "shape", np.asarray(
            self.required_const(L, 1, "target shape")).astype(np.int64))], L)

    def DepthToSpace(self, L):
        mode = {"blocks_first": "DCR", "depth_first": "CRD"}[L.attrs["mode"]]
        self._unary(L, "DepthToSpace", blocksize=int(L.attrs["block_size"]), mode=mode)

    def SpaceToDepth(self, L):
        if L.attrs.get("mode", "blocks_first") != "blocks_first":
            raise NotImplementedError(f"SpaceToDepth {L.name}: depth_first")
        self._unary(L, "SpaceToDepth", blocksize=int(L.attrs["block_size"]))

    def ConvolutionBackpropData(self, L):
        w = self.required_const(L, 1, "weights")  # [C_in, C_out, kh, kw]
        if len(L.inputs) > 2:
            raise NotImplementedError(f"ConvolutionBackpropData {L.name}: output_shape input")
        attrs = dict(kernel_shape=list(w.shape[2:]), strides=_ints(L.attrs["strides"]),
                     dilations=_ints(L.attrs["dilations"]),
                     output_padding=_ints(L.attrs.get("output_padding", "")) or [0] * (w.ndim - 2))
        auto = L.attrs.get("auto_pad", "explicit")
        if auto in ("explicit", "notset", ""):
            attrs["pads"] = _ints(L.attrs["pads_begin"]) + _ints(L.attrs["pads_end"])
        else:
            attrs["auto_pad"] = {"valid": "VALID", "same_upper": "SAME_UPPER",
                                 "same_lower": "SAME_LOWER"}[auto]
        self.node("ConvTranspose", [self.inp(L, 0), self.init(self.m.layers[L.sources[1][0]].name, w)],
                  L, **attrs)

    def Interpolate(self, L):
        v = int(L.version.replace("opset", ""))
        if v < 4:
            raise NotImplementedError(f"Interpolate {L.name}: opset {v}")
        mode = L.attrs["mode"]
        ctm = L.attrs.get("coordinate_transformation_mode", "half_pixel")
        if any(_ints(L.attrs.get("pads_begin", "0")) + _ints(L.attrs.get("pads_end", "0"))):
            raise NotImplementedError(f"Interpolate {L.name}: pads")
        rank = len(L.inputs[0].dims)
        out_dims = L.outputs[0].dims
        onnx_mode = {"nearest": "nearest", "linear": "linear", "linear_onnx": "linear",
                     "cubic": "cubic"}.get(mode)
        if onnx_mode is None or (mode == "linear" and rank - sum(
                1 for a, b in zip(L.inputs[0].dims, out_dims) if a == b) > 2):
            raise NotImplementedError(f"Interpolate {L.name}: mode {mode}")
        attrs = dict(mode=onnx_mode, coordinate_transformation_mode=ctm)
        if mode == "nearest":
            attrs["nearest_mode"] = L.attrs.get("nearest_mode", "round_prefer_floor")
        if mode == "cubic":
            attrs["cubic_coeff_a"] = float(L.attrs.get("cube_coeff", "-0.75"))
        self.node("Resize", [self.inp(L, 0), "", "", self.cinit(L, "sizes", np.array(out_dims, np.int64))],
                  L, **attrs)

    # ---- constant layers, evaluated with numpy -----------------------------

    def fold(self, L):
        """The outputs of layer L when it can be computed now (all inputs
        constant, or a ShapeOf of a static shape), else None."""
        vals = [self.const_value(L, k) for k in range(len(L.inputs))]
        if L.type == "ShapeOf":
            dims = L.inputs[0].dims
            if any(d < 0 for d in dims):
                return None
            dt = np.int32 if L.attrs.get("output_type") == "i32" else np.int64
            return [np.array(dims, dt)]
        if any(v is None for v in vals) or L.type in ("Parameter", "Const", "Result"):
            return None
        fn = getattr(self, "np_" + L.type, None)
        if fn is None:
            return None
        out = fn(L, *[np.asarray(v) for v in vals])
        return out if isinstance(out, list) else [out]

    @staticmethod
    def _et(L, k=0):
        return NP_TYPES.get(PREC_ET.get((L.outputs[k].precision or "FP32").upper(), "f32"), np.float32)

    def np_Convert(self, L, x):
        dt = L.attrs["destination_type"]
        if dt == "f16":
            return x.astype(np.float16).astype(np.float32)
        if np.issubdtype(x.dtype, np.floating) and np.dtype(NP_TYPES[dt]).kind in "iu":
            x = np.trunc(x)
        return x.astype(NP_TYPES[dt] if dt != "f16" else np.float32)

    def np_Add(self, L, a, b):
        return (a + b).astype(np.result_type(a, b))

    def np_Subtract(self, L, a, b):
        return (a - b).astype(np.result_type(a, b))

    def np_Multiply(self, L, a, b):
        return (a * b).astype(np.result_type(a, b))

    def np_Divide(self, L, a, b):
        if np.issubdtype(a.dtype, np.integer):
            if _bool(L.attrs.get("m_pythondivision", "true")):
                return np.floor_divide(a, b)
            return (np.trunc(a / b)).astype(a.dtype)
        return (a / b).astype(np.result_type(a, b))

    def np_Power(self, L, a, b):
        return np.power(a, b).astype(np.result_type(a, b))

    def np_Maximum(self, L, a, b):
        return np.maximum(a, b)

    def np_Minimum(self, L, a, b):
        return np.minimum(a, b)

    def np_Mod(self, L, a, b):
        return np.fmod(a, b)

    def np_FloorMod(self, L, a, b):
        return np.mod(a, b)

    def np_Greater(self, L, a, b):
        return a > b

    def np_Less(self, L, a, b):
        return a < b

    def np_Equal(self, L, a, b):
        return a == b

    def np_GreaterEqual(self, L, a, b):
        return a >= b

    def np_LessEqual(self, L, a, b):
        return a <= b

    def np_NotEqual(self, L, a, b):
        return a != b

    def np_LogicalAnd(self, L, a, b):
        return np.logical_and(a, b)

    def np_LogicalNot(self, L, a):
        return np.logical_not(a)

    def np_Select(self, L, c, a, b):
        return np.where(c, a, b)

    def np_Negative(self, L, a):
        return -a

    def np_Sqrt(self, L, a):
        return np.sqrt(a)

    def np_Floor(self, L, a):
        return np.floor(a)

    def np_Ceiling(self, L, a):
        return np.ceil(a)

    def np_Exp(self, L, a):
        return np.exp(a)

    def np_Sigmoid(self, L, a):
        return 1 / (1 + np.exp(-a))

    def np_ReLU(self, L, a):
        return np.maximum(a, 0)

    def np_Clamp(self, L, a):
        return np.clip(a, float(L.attrs["min"]), float(L.attrs["max"])).astype(a.dtype)

    def np_Concat(self, L, *xs):
        return np.concatenate(xs, axis=int(L.attrs["axis"]))

    def np_Reshape(self, L, x, shape):
        shape = [int(v) for v in shape.reshape(-1)]
        if _bool(L.attrs.get("special_zero")):
            shape = [x.shape[i] if v == 0 else v for i, v in enumerate(shape)]
        return x.reshape(shape)

    def np_Squeeze(self, L, x, axes=None):
        if axes is None:
            return np.squeeze(x)
        return np.squeeze(x, axis=tuple(int(a) for a in axes.reshape(-1)))

    def np_Unsqueeze(self, L, x, axes):
        out = x
        rank = x.ndim + axes.size
        for a in sorted(int(v) % rank for v in axes.reshape(-1)):
            out = np.expand_dims(out, a)
        return out

    def np_Transpose(self, L, x, perm):
        perm = [int(v) for v in perm.reshape(-1)]
        return np.transpose(x, perm if perm else None)

    def np_Gather(self, L, x, idx, axis):
        axis = int(axis.reshape(-1)[0]) % max(x.ndim, 1)
        if int(L.attrs.get("batch_dims", "0")):
            raise NotImplementedError(f"Gather {L.name}: batch_dims on constants")
        idx = np.where(idx < 0, idx + x.shape[axis], idx)
        return np.take(x, idx, axis=axis)

    def np_StridedSlice(self, L, x, b, e, st=None):
        b, e = b.reshape(-1), e.reshape(-1)
        st = np.ones_like(b) if st is None else st.reshape(-1)
        masks = {k: _ints(L.attrs.get(k, "")) for k in
                 ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask")}
        get = lambda k, i: i < len(masks[k]) and masks[k][i]  # noqa: E731
        index, shrink = [], []
        for i in range(len(b)):
            if get("ellipsis_mask", i):
                index.append(Ellipsis)
            elif get("new_axis_mask", i):
                index.append(None)
            elif get("shrink_axis_mask", i):
                index.append(int(b[i]))
            else:
                index.append(slice(None if get("begin_mask", i) else int(b[i]),
                                   None if get("end_mask", i) else int(e[i]), int(st[i])))
        return np.asarray(x[tuple(index)])

    def np_Slice(self, L, x, start, stop, step, axes=None):
        index = [slice(None)] * x.ndim
        axes = range(start.size) if axes is None else axes.reshape(-1)
        for a, s0, s1, s2 in zip(axes, start.reshape(-1), stop.reshape(-1), step.reshape(-1)):
            index[int(a)] = slice(int(s0), int(s1), int(s2))
        return np.asarray(x[tuple(index)])

    def _np_reduce(self, L, x, axes, fn):
        axes = tuple(int(a) % max(x.ndim, 1) for a in axes.reshape(-1))
        return fn(x, axis=axes, keepdims=_bool(L.attrs.get("keep_dims"))).astype(x.dtype)

    def np_ReduceProd(self, L, x, axes):
        return self._np_reduce(L, x, axes, np.prod)

    def np_ReduceSum(self, L, x, axes):
        return self._np_reduce(L, x, axes, np.sum)

    def np_ReduceMax(self, L, x, axes):
        return self._np_reduce(L, x, axes, np.max)

    def np_ReduceMin(self, L, x, axes):
        return self._np_reduce(L, x, axes, np.min)

    def np_ReduceMean(self, L, x, axes):
        return self._np_reduce(L, x, axes, np.mean)

    def np_Range(self, L, start, stop, step):
        dt = NP_TYPES.get(L.attrs.get("output_type", ""), self._et(L))
        return np.arange(start.reshape(-1)[0], stop.reshape(-1)[0], step.reshape(-1)[0]).astype(dt)

    def np_Tile(self, L, x, reps):
        return np.tile(x, [int(r) for r in reps.reshape(-1)])

    def np_Broadcast(self, L, x, shape, axes=None):
        return np.broadcast_to(x, [int(v) for v in shape.reshape(-1)]).copy()

    def np_ScatterUpdate(self, L, data, idx, upd, axis):
        out = data.copy()
        axis = int(axis.reshape(-1)[0]) % data.ndim
        moved = np.moveaxis(out, axis, 0)
        updm = upd.reshape(idx.shape + tuple(np.delete(data.shape, axis)))
        for pos, i in np.ndenumerate(idx):
            moved[int(i)] = updm[pos]
        return out

    def np_FakeQuantize(self, L, x, lo, hi, olo, ohi):
        levels = np.float32(int(L.attrs["levels"]) - 1)
        x, lo, hi, olo, ohi = (np.asarray(v, np.float32) for v in (x, lo, hi, olo, ohi))
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.round((x - lo) / (hi - lo) * levels)
            out = q / levels * (ohi - olo) + olo
        out = np.where(x <= np.minimum(lo, hi), olo, np.where(x > np.maximum(lo, hi), ohi, out))
        return out.astype(np.float32)

    def np_ShapeOf(self, L, x):  # never reached: fold() handles ShapeOf
        return np.array(x.shape, np.int64)

    # ---------------------------------------------------------------------

    def _consumed(self, lid, k):
        return any((lid, k) in layer.sources for layer in self.m.layers.values())

    def find(self, name):
        """(layer id, output ordinal) of a tensor name, a layer name or LAYER.N."""
        for lid in self.m.order:
            L = self.m.layers[lid]
            for k, p in enumerate(L.outputs):
                names = [n.strip() for n in (p.names or "").split(",")]
                if name in names or name == f"{L.name}.{k}" or (k == 0 and name == L.name):
                    return lid, k
        raise KeyError(f"no tensor or layer called {name}")

    def translate(self, wanted=None):
        """wanted: (layer id, ordinal) pairs to return instead of the Results."""
        if wanted:
            needed, stack = set(), [lid for lid, _ in wanted]
            while stack:
                lid = stack.pop()
                if lid not in needed:
                    needed.add(lid)
                    stack.extend(src for src, _ in self.m.layers[lid].sources)
        else:
            needed = set(self.m.layers)
        inputs, outputs = [], []
        for lid in self.m.topological():
            L = self.m.layers[lid]
            if lid not in needed:
                continue
            if L.type == "Parameter":
                name = self.tensor(lid, 0)
                et = L.attrs["element_type"]
                inputs.append(helper.make_tensor_value_info(
                    name, ONNX_TYPES[et], L.outputs[0].dims))
            elif L.type == "Const":
                continue  # becomes an initializer when an op reads it
            elif L.type == "Result":
                continue  # outputs are listed below, in the file's order
            else:
                values = self.fold(L)
                if values is not None:
                    for k, v in enumerate(values):
                        self.folded[(lid, k)] = v
                    continue
                fn = getattr(self, L.type, None)
                if fn is None:
                    raise NotImplementedError(
                        f"no ONNX translation for {L.type}-{L.version} (layer {L.id}, {L.name})")
                fn(L)
        if not wanted:
            wanted = [L.sources[0] for L in self.m.results()]
        for lid, k in wanted:
            if (lid, k) in self.folded:
                raise NotImplementedError(f"output {self.m.layers[lid].name}.{k} is a constant")
            outputs.append(self._output(lid, k))
        # Nodes an IR layer expands into (FakeQuantize's eleven, ...) are named
        # after their outputs, which start with the layer's name: profiles
        # of ONNX Runtime then tell which layer a node belongs to.
        for n in self.nodes:
            if not n.name:
                n.name = n.output[0]
        graph = helper.make_graph(self.nodes, self.m.name or "ir", inputs, outputs,
                                  initializer=list(self.inits.values()))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="m2i ir_to_onnx.py")
        model.ir_version = 8  # ONNX Runtime reads IR 8 with opset 17
        onnx.checker.check_model(model)
        return model

    def _output(self, src, k):
        port = self.m.layers[src].outputs[k]
        et = PREC_ET.get((port.precision or "FP32").upper(), "f32")
        return helper.make_tensor_value_info(self.tensor(src, k), ONNX_TYPES[et],
                                             [d if d >= 0 else None for d in port.dims])


def convert(xml_path, onnx_path, outputs=None):
    """Writes the ONNX model; returns it. outputs: tensor names to return
    instead of the model's Results (see --outputs)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 100000))
    t = Translator(Model(xml_path))
    wanted = [t.find(n) for n in outputs] if outputs else None
    model = t.translate(wanted)
    onnx.save(model, onnx_path)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("xml", help="IR .xml (its .bin beside it)")
    ap.add_argument("onnx", help="ONNX file to write")
    ap.add_argument("--outputs", help="comma-separated tensor names to return instead of the "
                    "model's outputs")
    args = ap.parse_args()
    model = convert(args.xml, args.onnx, args.outputs.split(",") if args.outputs else None)
    print(f"wrote {args.onnx}: {len(model.graph.node)} nodes, inputs "
          + ", ".join(f"{i.name}{[d.dim_value for d in i.type.tensor_type.shape.dim]}"
                      for i in model.graph.input)
          + ", outputs " + ", ".join(o.name for o in model.graph.output))


if __name__ == "__main__":
    main()
