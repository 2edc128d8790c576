# SPDX-License-Identifier: LGPL-2.1-or-later
"""A small reader of OpenVINO IR (v10 and v11) into plain python objects.

Used only by the project's scripts: to check that what serializer.py wrote
computes what torch computes (through executor.py), and to translate IR
models to ONNX for the peer benchmark (tests/bench/onnx/ir_to_onnx.py). The
C runtime in m2i-core/ir/ is the real reader; this one trusts its input more.
"""

import xml.etree.ElementTree as ET

import numpy as np

from .serializer import ELEMENT_TYPES

PRECISIONS = {prec: et for et, (_, prec) in ELEMENT_TYPES.items()}
# v10 files spell some precisions differently.
PRECISIONS.update({"FP16": "f16", "FP32": "f32", "BOOL": "boolean"})


def parse_shape(text):
    """ "1,3,8,8" or "1, 3, 8, 8" -> [1, 3, 8, 8]; "" -> [] (a scalar)."""
    text = text.strip()
    if not text:
        return []
    return [int(t) for t in text.split(",")]


class Port:
    def __init__(self, xml_port):
        self.id = int(xml_port.get("id"))
        self.precision = xml_port.get("precision")
        self.names = xml_port.get("names")
        self.dims = [int(d.text) for d in xml_port.findall("dim")]


class Layer:
    def __init__(self, xml_layer):
        self.id = int(xml_layer.get("id"))
        self.name = xml_layer.get("name")
        self.type = xml_layer.get("type")
        self.version = xml_layer.get("version")
        data = xml_layer.find("data")
        self.attrs = dict(data.attrib) if data is not None else {}
        xin = xml_layer.find("input")
        xout = xml_layer.find("output")
        self.inputs = [Port(p) for p in xin.findall("port")] if xin is not None else []
        self.outputs = [Port(p) for p in xout.findall("port")] if xout is not None else []
        rt = xml_layer.find("rt_info")
        self.rt_info = ({a.get("name"): dict(a.attrib) for a in rt.findall("attribute")}
                        if rt is not None else {})
        # (producer layer id, output ordinal) per input ordinal, set by Model.
        self.sources = [None] * len(self.inputs)
        self.value = None  # numpy array for Const layers

    def input_ordinal(self, port_id):
        for i, p in enumerate(self.inputs):
            if p.id == port_id:
                return i
        raise KeyError(f"layer {self.id} ({self.name}) has no input port {port_id}")

    def output_ordinal(self, port_id):
        for i, p in enumerate(self.outputs):
            if p.id == port_id:
                return i
        raise KeyError(f"layer {self.id} ({self.name}) has no output port {port_id}")


class Model:
    """An IR model: layers by id, inputs wired to producers, consts loaded."""

    def __init__(self, xml_path, bin_path=None):
        if bin_path is None:
            bin_path = xml_path[:-4] + ".bin"
        root = ET.parse(xml_path).getroot()
        self.name = root.get("name")
        self.version = int(root.get("version"))
        self.layers = {}
        self.order = []  # layer ids in file order
        for xl in root.find("layers").findall("layer"):
            layer = Layer(xl)
            self.layers[layer.id] = layer
            self.order.append(layer.id)
        for xe in root.find("edges").findall("edge"):
            src = self.layers[int(xe.get("from-layer"))]
            dst = self.layers[int(xe.get("to-layer"))]
            k = dst.input_ordinal(int(xe.get("to-port")))
            dst.sources[k] = (src.id, src.output_ordinal(int(xe.get("from-port"))))
        for layer in self.layers.values():
            if None in layer.sources:
                raise ValueError(f"layer {layer.id} ({layer.name}) has an unconnected input")
        with open(bin_path, "rb") as f:
            blob = f.read()
        for layer in self.layers.values():
            if layer.type == "Const":
                et = layer.attrs["element_type"]
                shape = parse_shape(layer.attrs["shape"])
                offset = int(layer.attrs["offset"])
                size = int(layer.attrs["size"])
                if offset + size > len(blob):
                    raise ValueError(f"Const {layer.name}: bytes {offset}+{size} beyond "
                                     f"{bin_path} ({len(blob)} bytes)")
                dtype = np.dtype(ELEMENT_TYPES[et][0]).newbyteorder("<")
                arr = np.frombuffer(blob, dtype=dtype, count=size // dtype.itemsize,
                                    offset=offset)
                layer.value = arr.reshape(shape).astype(dtype.newbyteorder("="))
        rt = root.find("rt_info")
        self.rt_info = _rt_to_dict(rt) if rt is not None else {}

    def parameters(self):
        return [self.layers[i] for i in self.order if self.layers[i].type == "Parameter"]

    def results(self):
        return [self.layers[i] for i in self.order if self.layers[i].type == "Result"]

    def topological(self):
        """Layer ids with every producer before its consumers."""
        done, out = set(), []

        def visit(lid, stack):
            if lid in done:
                return
            if lid in stack:
                raise ValueError(f"cycle through layer {lid}")
            stack.add(lid)
            for src, _ in self.layers[lid].sources:
                visit(src, stack)
            stack.discard(lid)
            done.add(lid)
            out.append(lid)

        for lid in self.order:
            visit(lid, set())
        return out


def _rt_to_dict(node):
    out = {}
    for child in node:
        if len(child):
            out[child.tag] = _rt_to_dict(child)
        else:
            out[child.tag] = child.get("value")
    return out
