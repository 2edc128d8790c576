#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes the fuzzer's seed corpus (corpus/*.ir): small IR models, each the
.xml text, a NUL byte, then the .bin bytes. They cover both IR versions, the
structural ops, a shape-folding chain, f16 weights, the compute ops of the
real models, and a few broken models. Run: /usr/bin/python3 make-corpus.py"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
PREC10 = {"f32": "FP32", "f16": "FP16", "i64": "I64", "i32": "I32", "u8": "U8", "boolean": "BOOL"}
PACK = {"f32": "f", "f16": "e", "i64": "q", "i32": "i", "u8": "B"}


class Model:
    def __init__(self, version):
        self.version = version
        self.layers, self.edges, self.bin = [], [], bytearray()
        self.outs = {}

    def prec(self, et):
        return PREC10.get(et, et.upper()) if self.version == 10 else et

    def layer(self, type_, opset, data, inputs, out_et, out_shape):
        lid = len(self.outs)
        xml = [f'<layer id="{lid}" name="l{lid}" type="{type_}" version="{opset}">']
        if data is not None:
            xml.append("<data " + " ".join(f'{k}="{v}"' for k, v in data.items()) + "/>")
        if inputs:
            xml.append("<input>")
            for i, src in enumerate(inputs):
                shape = self.outs[src][1]
                xml.append(f'<port id="{i}">' + "".join(f"<dim>{d}</dim>" for d in shape) + "</port>")
                self.edges.append(f'<edge from-layer="{src}" from-port="{self.outs[src][0]}" '
                                  f'to-layer="{lid}" to-port="{i}"/>')
            xml.append("</input>")
        if out_shape is not None:
            names = f' names="t{lid}"' if self.version == 11 else ""
            xml.append(f'<output><port id="{len(inputs)}" precision="{self.prec(out_et)}"{names}>' +
                       "".join(f"<dim>{d}</dim>" for d in out_shape) + "</port></output>")
        xml.append("</layer>")
        self.layers.append("\n".join(xml))
        self.outs[lid] = (len(inputs), out_shape)
        return lid

    def param(self, et, shape):
        return self.layer("Parameter", "opset1", {"shape": ",".join(map(str, shape)), "element_type": et},
                          [], et, shape)

    def const(self, et, shape, values):
        while len(self.bin) % 8:
            self.bin.append(0)
        off = len(self.bin)
        self.bin += struct.pack("<%d%s" % (len(values), PACK[et]), *values)
        return self.layer("Const", "opset1", {"element_type": et, "shape": ", ".join(map(str, shape)),
                                              "offset": off, "size": len(self.bin) - off}, [], et, shape)

    def op(self, type_, inputs, out_et, out_shape, opset="opset1", **data):
        return self.layer(type_, opset, data if data else None, inputs, out_et, out_shape)

    def result(self, src):
        return self.layer("Result", "opset1", None, [src], None, None)

    def bytes(self):
        xml = (f'<?xml version="1.0"?>\n<net name="seed" version="{self.version}">\n<layers>\n' +
               "\n".join(self.layers) + "\n</layers>\n<edges>\n" + "\n".join(self.edges) +
               "\n</edges>\n<rt_info><framework value=\"fuzz\"/></rt_info>\n</net>\n")
        return xml.encode() + b"\0" + bytes(self.bin)


def seeds():
    m = Model(10)
    x = m.param("f32", [1, 2, 3])
    w = m.const("f32", [1, 1, 3], [0.5, -1.5, 2.25])
    m.result(m.op("Concat", [w, x], "f32", [1, 3, 3], axis=1))
    yield "concat-v10", m

    m = Model(11)
    x = m.param("i32", [2, 2])
    a = m.const("i64", [], [-2])
    m.result(m.op("Unsqueeze", [x, a], "i32", [2, 1, 2]))
    yield "unsqueeze-v11", m

    m = Model(10)
    x = m.param("f32", [1, 3, 4, 6])
    s = m.op("ShapeOf", [x], "i64", [4], opset="opset3", output_type="i64")
    b, e, st = m.const("i64", [1], [0]), m.const("i64", [1], [2]), m.const("i64", [1], [1])
    ss = m.op("StridedSlice", [s, b, e, st], "i64", [2], begin_mask="0", end_mask="0",
              new_axis_mask="", shrink_axis_mask="", ellipsis_mask="")
    c = m.op("Concat", [ss, m.const("i64", [1], [-1])], "i64", [3], axis=0)
    m.result(m.op("Reshape", [x, c], "f32", [1, 3, 24], special_zero="true"))
    yield "shape-chain", m

    m = Model(11)
    x = m.param("f32", [3, 4, 5])
    g = m.op("Gather", [x, m.const("i64", [2], [2, -1]), m.const("i64", [], [1])], "f32", [3, 2, 5],
             opset="opset8", batch_dims="0")
    t = m.op("Transpose", [g, m.const("i64", [3], [2, 0, 1])], "f32", [5, 3, 2])
    cv = m.op("Convert", [t], "i32", [5, 3, 2], destination_type="i32")
    u = m.op("Unsqueeze", [cv, m.const("i64", [1], [0])], "i32", [1, 5, 3, 2])
    m.result(m.op("Squeeze", [u], "i32", [5, 3, 2]))
    yield "gather-transpose", m

    m = Model(11)
    x = m.param("f32", [2, 3, 4, 5])
    consts = [m.const("i64", [4], v) for v in ([0, 0, 1, 0], [0, 0, 3, 0], [1, 1, 1, 2])]
    m.result(m.op("StridedSlice", [x] + consts, "f32", [2, 3, 2, 3], begin_mask="1,1,0,1",
                  end_mask="1,1,0,1", new_axis_mask="", shrink_axis_mask="", ellipsis_mask=""))
    yield "strided-slice", m

    m = Model(10)
    x = m.param("f16", [1, 1, 4, 4])
    w = m.const("f16", [2, 1, 3, 3], [0.5 * (i % 5 - 2) for i in range(18)])
    conv = m.op("Convolution", [x, w], "f16", [1, 2, 4, 4], strides="1,1", dilations="1,1",
                pads_begin="1,1", pads_end="1,1", auto_pad="explicit")
    add = m.op("Add", [conv, m.const("f16", [1, 2, 1, 1], [0.25, -0.5])], "f16", [1, 2, 4, 4])
    relu = m.op("ReLU", [add], "f16", [1, 2, 4, 4])
    pool = m.op("MaxPool", [relu], "f16", [1, 2, 2, 2], strides="2,2", kernel="2,2", pads_begin="0,0",
                pads_end="0,0", rounding_type="floor", auto_pad="explicit")
    flat = m.op("Reshape", [pool, m.const("i64", [2], [1, -1])], "f16", [1, 8], special_zero="false")
    mm = m.op("MatMul", [flat, m.const("f16", [8, 3], [0.1 * i for i in range(24)])], "f16", [1, 3],
              transpose_a="false", transpose_b="false")
    m.result(m.op("SoftMax", [mm], "f16", [1, 3], axis=1))
    yield "conv-net-f16", m

    m = Model(11)
    x = m.param("f32", [1, 2, 3, 3])
    w = m.const("f32", [2, 1, 1, 2, 2], [1.0, 0.0, 0.0, 1.0, 0.5, 0.5, 0.5, 0.5])
    gc = m.op("GroupConvolution", [x, w], "f32", [1, 2, 2, 2], strides="1,1", dilations="1,1",
              pads_begin="0,0", pads_end="0,0", auto_pad="explicit")
    pr = m.op("PReLU", [gc, m.const("f32", [2], [0.1, 0.2])], "f32", [1, 2, 2, 2])
    mul = m.op("Multiply", [pr, m.const("f32", [], [2.0])], "f32", [1, 2, 2, 2])
    mean = m.op("ReduceMean", [mul, m.const("i64", [2], [2, 3])], "f32", [1, 2, 1, 1], keep_dims="true")
    m.result(m.op("Sigmoid", [mean], "f32", [1, 2, 1, 1]))
    yield "groupconv-v11", m

    m = Model(11)
    x = m.param("f32", [3])
    a = m.op("Convert", [x], "f32", [3], destination_type="f32")
    m.result(m.op("FancyOp", [a], "f32", [3], opset="opset7"))
    yield "unknown-op", m

    # run-time shapes: NonZero, the layers after it, a run-time Reshape target
    m = Model(11)
    x = m.param("f32", [2, 3])
    nz = m.op("NonZero", [x], "i64", [2, -1], opset="opset3", output_type="i64")
    t = m.op("Transpose", [nz, m.const("i64", [2], [1, 0])], "i64", [-1, 2])
    s = m.op("ShapeOf", [t], "i64", [2], opset="opset3", output_type="i64")
    r = m.op("Reshape", [t, m.const("i64", [1], [-1])], "i64", [-1], special_zero="false")
    m.result(m.op("Concat", [r, s], "i64", [-1], axis="0"))
    yield "run-time-shapes", m


def main():
    os.makedirs(os.path.join(HERE, "corpus"), exist_ok=True)
    for name, m in seeds():
        with open(os.path.join(HERE, "corpus", name + ".ir"), "wb") as f:
            f.write(m.bytes())
        print("corpus/%s.ir" % name)


main()
