#!/usr/bin/python3
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
Convert -> Cast, BatchNormInference -> BatchNormalization. Anything else
stops the translation with the op's name, version and layer.
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
    "i8": TensorProto.INT8, "boolean": TensorProto.BOOL,
}


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
        """The value of layer's k-th input if it is a Const, else None."""
        src, _ = layer.sources[k]
        c = self.m.layers[src]
        return c.value if c.type == "Const" else None

    def required_const(self, layer, k, what):
        v = self.const_value(layer, k)
        if v is None:
            raise NotImplementedError(f"{layer.type} {layer.name}: {what} must be a Const")
        return v

    def init(self, name, array):
        if np.issubdtype(array.dtype, np.floating):
            array = array.astype(np.float32)
        name, base, i = name, name, 0
        while name in self.used:
            i += 1
            name = f"{base}_{i}"
        self.used.add(name)
        self.inits[name] = numpy_helper.from_array(np.ascontiguousarray(array), name)
        return name

    def inp(self, layer, k):
        src, sk = layer.sources[k]
        src_layer = self.m.layers[src]
        if src_layer.type == "Const" and (src, sk) not in self.names:
            self.names[(src, sk)] = self.init(src_layer.name, src_layer.value)
        return self.tensor(src, sk)

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

    # ---------------------------------------------------------------------

    def _consumed(self, lid, k):
        return any((lid, k) in layer.sources for layer in self.m.layers.values())

    def translate(self):
        inputs, outputs = [], []
        for lid in self.m.topological():
            L = self.m.layers[lid]
            if L.type == "Parameter":
                name = self.tensor(lid, 0)
                et = L.attrs["element_type"]
                inputs.append(helper.make_tensor_value_info(
                    name, ONNX_TYPES[et], parse_shape(L.attrs["shape"])))
            elif L.type == "Const":
                continue  # becomes an initializer when an op reads it
            elif L.type == "Result":
                src, k = L.sources[0]
                port = self.m.layers[src].outputs[k]
                et = {"FP16": "f32", "FP32": "f32", "I64": "i64", "I32": "i32",
                      "U8": "u8"}.get(port.precision, "f32")
                outputs.append(helper.make_tensor_value_info(
                    self.tensor(src, k), ONNX_TYPES[et], port.dims))
            else:
                fn = getattr(self, L.type, None)
                if fn is None:
                    raise NotImplementedError(
                        f"no ONNX translation for {L.type}-{L.version} (layer {L.id}, {L.name})")
                fn(L)
        graph = helper.make_graph(self.nodes, self.m.name or "ir", inputs, outputs,
                                  initializer=list(self.inits.values()))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="m2i ir_to_onnx.py")
        model.ir_version = 8  # ONNX Runtime reads IR 8 with opset 17
        onnx.checker.check_model(model)
        return model


def convert(xml_path, onnx_path):
    model = Translator(Model(xml_path)).translate()
    onnx.save(model, onnx_path)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("xml", help="IR .xml (its .bin beside it)")
    ap.add_argument("onnx", help="ONNX file to write")
    args = ap.parse_args()
    model = convert(args.xml, args.onnx)
    print(f"wrote {args.onnx}: {len(model.graph.node)} nodes, inputs "
          + ", ".join(f"{i.name}{[d.dim_value for d in i.type.tensor_type.shape.dim]}"
                      for i in model.graph.input)
          + ", outputs " + ", ".join(o.name for o in model.graph.output))


if __name__ == "__main__":
    main()
