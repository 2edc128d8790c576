#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Self-test of the IR tools (numpy only, no torch):

    /usr/bin/python3 models/irgen/selftest.py

1. A small graph written by serializer.py reads back with the port numbering,
   edges, Const offsets and spellings OpenVINO uses, and the executor
   computes it as numpy does by hand.
2. The committed project models read back and run (shapes checked by the
   executor against every <dim>).
3. squeezenet1.1 (IR v10, f16, from ../shared/models/external or
   $M2I_SHARED_MODELS) run by the executor matches the reference outputs
   there (top-5 and 1e-5) — a file the project did not write.
Exits 1 on the first failure.
"""

import os
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from irgen.executor import Executor  # noqa: E402
from irgen.reader import Model  # noqa: E402
from irgen.serializer import Graph  # noqa: E402

SHARED = os.environ.get("M2I_SHARED_MODELS",
                        os.path.join(TOP, "..", "shared", "models", "external"))


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        sys.exit(1)


def test_roundtrip(tmp):
    rng = np.random.default_rng(1)
    g = Graph("selftest")
    x = g.parameter("x", "f32", [1, 2, 5, 5], layout="[N,C,H,W]")
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    c, = g.op("Convolution", "opset1", [x, g.const("w", w)],
              {"strides": [1, 1], "dilations": [1, 1], "pads_begin": [0, 0],
               "pads_end": [0, 0], "auto_pad": "explicit"}, name="conv", out_shapes=[[1, 3, 3, 3]])
    b = np.arange(3, dtype=np.float32).reshape(1, 3, 1, 1)
    a, = g.op("Add", "opset1", [c, g.const("b", b)], {"auto_broadcast": "numpy"},
              name="add", out_shapes=[[1, 3, 3, 3]])
    p, _ = g.op("MaxPool", "opset8", [a], {"strides": [2, 2], "dilations": [1, 1],
                                            "pads_begin": [0, 0], "pads_end": [0, 0],
                                            "kernel": [2, 2], "rounding_type": "ceil",
                                            "auto_pad": "explicit", "index_element_type": "i64",
                                            "axis": 0},
                name="pool", out_shapes=[[1, 3, 2, 2], [1, 3, 2, 2]], out_types=["f32", "i64"])
    # The same bias once more: stored once in the .bin.
    a2, = g.op("Add", "opset1", [p, g.const("b_again", b)], {"auto_broadcast": "numpy"},
               name="add2", out_shapes=[[1, 3, 2, 2]])
    g.result(a2, "out")
    path = os.path.join(tmp, "selftest.xml")
    g.save(path)

    text = open(path).read()
    root = ET.fromstring(text)
    check(root.get("version") == "11" and text.startswith('<?xml version="1.0"?>\n<net'),
          "net version 11 and the XML declaration")
    types = [l.get("type") for l in root.find("layers")]
    check(types[0] == "Parameter" and types[-1] == "Result", "Parameters first, Results last")
    edges = {(e.get("from-layer"), e.get("from-port"), e.get("to-layer"), e.get("to-port"))
             for e in root.find("edges")}
    ids = {l.get("name"): l.get("id") for l in root.find("layers")}
    check((ids["conv"], "2", ids["add"], "0") in edges, "Convolution output is port 2 (2 inputs)")
    check((ids["pool"], "1", ids["add2"], "0") in edges, "MaxPool-8 values output is port 1")
    check((ids["w"], "0", ids["conv"], "1") in edges, "a Const's output is port 0")
    consts = {l.get("name"): l.find("data").attrib for l in root.find("layers")
              if l.get("type") == "Const"}
    check(consts["w"]["shape"] == "3, 2, 3, 3" and consts["w"]["offset"] == "0"
          and consts["w"]["size"] == str(w.nbytes), "Const shape spelling, offset and size")
    check(consts["b"]["offset"] == consts["b_again"]["offset"], "identical Const bytes stored once")
    check(os.path.getsize(path[:-4] + ".bin") == w.nbytes + b.nbytes, ".bin holds each blob once")
    pool = [l for l in root.find("layers") if l.get("name") == "pool"][0]
    check(pool.find("data").get("rounding_type") == "ceil"
          and pool.find("output")[1].get("precision") == "I64", "MaxPool-8 attributes and I64 indices")
    check('<data shape="1,2,5,5" element_type="f32"/>' in text, "Parameter shape without spaces")
    check('layout="[N,C,H,W]"' in text, "Parameter layout in port rt_info")

    xin = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    got = Executor(path).run({"x": xin})["out"]
    conv = np.zeros((1, 3, 3, 3), np.float32)
    for o in range(3):
        for i in range(3):
            for j in range(3):
                conv[0, o, i, j] = (xin[0, :, i:i + 3, j:j + 3] * w[o]).sum()
    conv += b
    # ceil mode on 3x3 with 2x2/2: windows rows/cols {0,1} and {2}.
    pool_ref = np.empty((1, 3, 2, 2), np.float32)
    for i, rs in enumerate((slice(0, 2), slice(2, 3))):
        for j, cs in enumerate((slice(0, 2), slice(2, 3))):
            pool_ref[0, :, i, j] = conv[0, :, rs, cs].max(axis=(1, 2))
    check(np.abs(got - (pool_ref + b)).max() < 1e-5, "executor = hand-computed conv/add/pool")


def test_project_models():
    for xml in ("fashion-mnist/fashion-mnist.xml", "fashion-mnist-ppp/fashion-mnist-ppp.xml"):
        m = Model(os.path.join(TOP, "models", xml))
        feeds = {}
        for p in m.parameters():
            shape = [int(d) for d in p.attrs["shape"].split(",")]
            dtype = np.uint8 if p.attrs["element_type"] == "u8" else np.float32
            feeds[p.name] = np.full(shape, 100, dtype=dtype)
        out = list(Executor(m).run(feeds).values())[0]
        check(out.shape == (1, 10) and abs(float(out.sum()) - 1) < 1e-5,
              f"{xml} reads and runs (probabilities sum to 1)")


def test_squeezenet():
    xml = os.path.join(SHARED, "squeezenet1.1", "squeezenet1.1.xml")
    if not os.path.exists(xml):
        print(f"skip squeezenet1.1: {xml} absent")
        return
    ex = Executor(xml)
    for img in ("chelsea", "coffee"):
        ref = os.path.join(SHARED, "reference", f"squeezenet1.1.{img}")
        x = np.fromfile(ref + ".input.f32", dtype="<f4").reshape(1, 3, 227, 227)
        want = np.fromfile(ref + ".output.f32", dtype="<f4")
        got = list(ex.run({"data": x}).values())[0].reshape(-1)
        check(list(np.argsort(-got)[:5]) == list(np.argsort(-want)[:5])
              and np.abs(got - want).max() < 1e-5,
              f"squeezenet1.1 {img}: executor top-5 and probabilities = reference")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_roundtrip(tmp)
    test_project_models()
    test_squeezenet()


if __name__ == "__main__":
    main()
