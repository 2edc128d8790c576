# SPDX-License-Identifier: LGPL-2.1-or-later
"""A writer of OpenVINO IR v11 (.xml + .bin), written by the m2i project.

OpenVINO itself is not available here, so this module writes the format the
way OpenVINO's own serializer (ov::pass::Serialize) lays it out:

* ``<net name=... version="11">`` with ``<layers>``, ``<edges>`` and the
  model-level ``<rt_info>``;
* layers in the order Parameters, operations (topologically sorted), Results,
  each ``<layer id name type version="opsetN">`` holding ``<data>`` (the op's
  attributes; left out when empty), ``<rt_info>`` (v11), ``<input>`` and
  ``<output>``;
* port ids numbered across the layer: inputs first (0..n-1), outputs continue
  the count (n..); every port has ``precision`` (FP32, I64, U8, ...) and its
  ``<dim>``s; output ports carry their tensor ``names``;
* ``Const`` layers: ``<data element_type shape offset size>``, the bytes
  little-endian in the .bin; identical blobs are stored once, as OpenVINO
  does;
* vectors are written joined by ", " (``strides="1, 1"``), a Parameter's
  shape without spaces (``shape="1,3,28,28"``), booleans as true/false:
  the spellings OpenVINO's serializer produces.

Usage::

    g = Graph("my-net")
    x = g.parameter("input", "f32", [1, 3, 28, 28], layout="[N,C,H,W]")
    w = g.const("conv1.weight", np.zeros((8, 3, 3, 3), np.float32))
    y = g.op("Convolution", "opset1", [x, w], {"strides": [1, 1], ...},
             name="conv1", out_shapes=[[1, 8, 26, 26]])
    g.result(y, "output")
    g.save("my-net.xml")            # writes my-net.xml and my-net.bin

Output shapes and element types are given by the caller (the model scripts
take them from torch); the numpy executor in executor.py re-derives them by
running the model and checks that they agree.
"""

import hashlib
import xml.etree.ElementTree as ET

import numpy as np

IR_VERSION = 11

# element_type -> (numpy dtype, IR port precision). Names as in
# ov::element::Type and serialize.cpp's get_precision_name().
ELEMENT_TYPES = {
    "boolean": (np.bool_, "BOOL"),
    "u8": (np.uint8, "U8"),
    "i8": (np.int8, "I8"),
    "u16": (np.uint16, "U16"),
    "i16": (np.int16, "I16"),
    "u32": (np.uint32, "U32"),
    "i32": (np.int32, "I32"),
    "u64": (np.uint64, "U64"),
    "i64": (np.int64, "I64"),
    "f16": (np.float16, "FP16"),
    "f32": (np.float32, "FP32"),
    "f64": (np.float64, "FP64"),
}


def element_type_of(array):
    """The IR element type name of a numpy array's dtype."""
    for name, (dtype, _) in ELEMENT_TYPES.items():
        if array.dtype == np.dtype(dtype):
            return name
    raise ValueError(f"no IR element type for numpy dtype {array.dtype}")


def precision_of(element_type):
    return ELEMENT_TYPES[element_type][1]


def format_value(value):
    """An attribute value spelled as OpenVINO's XmlSerializer spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value)
    if isinstance(value, (float, np.floating)):
        # pugixml writes doubles with up to 17 significant digits, shortest
        # round-trip form; repr() gives the shortest round-trip form too.
        return repr(float(value))
    return str(value)


class Output:
    """One output port of a layer: the thing edges start from."""

    def __init__(self, layer, index):
        self.layer = layer
        self.index = index

    @property
    def shape(self):
        return self.layer.out_shapes[self.index]

    @property
    def element_type(self):
        return self.layer.out_types[self.index]


class Layer:
    def __init__(self, graph, type_, version, name, inputs, attrs, out_shapes,
                 out_types, out_names, rt_info, port_rt_info):
        self.graph = graph
        self.type = type_
        self.version = version
        self.name = name
        self.inputs = list(inputs)
        self.attrs = dict(attrs)
        self.out_shapes = [list(s) for s in out_shapes]
        self.out_types = list(out_types)
        self.out_names = list(out_names)
        self.rt_info = dict(rt_info)
        self.port_rt_info = dict(port_rt_info)  # output index -> {attr: value}
        self.id = None
        self.const_data = None

    def out(self, index=0):
        return Output(self, index)


class Graph:
    """A model under construction: layers, edges and model-level rt_info."""

    def __init__(self, name):
        self.name = name
        self.layers = []
        self.rt_info = {}  # nested dict of str -> str | dict, model-level
        self._names = set()

    def _unique(self, name):
        # OpenVINO keeps layer names unique by appending a counter.
        if name not in self._names:
            self._names.add(name)
            return name
        i = 0
        while f"{name}{i}" in self._names:
            i += 1
        self._names.add(f"{name}{i}")
        return f"{name}{i}"

    def _add(self, layer):
        layer.name = self._unique(layer.name)
        self.layers.append(layer)
        return layer

    def parameter(self, name, element_type, shape, layout=None):
        """A model input. layout, e.g. "[N,C,H,W]", becomes the port's rt_info."""
        port_rt = {0: {"layout": layout}} if layout else {}
        layer = Layer(self, "Parameter", "opset1", name, [],
                      {"shape": ",".join(str(d) for d in shape),
                       "element_type": element_type},
                      [shape], [element_type], [name],
                      {"fused_names": name}, port_rt)
        return self._add(layer).out()

    def const(self, name, array):
        array = np.ascontiguousarray(array)
        et = element_type_of(array)
        layer = Layer(self, "Const", "opset1", name, [],
                      {"element_type": et, "shape": list(array.shape)},
                      [list(array.shape)], [et], [], {"fused_names": name}, {})
        layer.const_data = array
        return self._add(layer).out()

    def op(self, type_, version, inputs, attrs, name, out_shapes, out_types=None,
           out_names=None):
        """An operation. out_types default to the first input's element type;
        out_names (tensor names) default to the layer name for output 0."""
        if out_types is None:
            out_types = [inputs[0].element_type] * len(out_shapes)
        if out_names is None:
            out_names = [name] + [None] * (len(out_shapes) - 1)
        layer = Layer(self, type_, version, name, inputs, attrs, out_shapes,
                      out_types, out_names, {"fused_names": name}, {})
        layer = self._add(layer)
        return [layer.out(i) for i in range(len(out_shapes))]

    def result(self, output, name):
        layer = Layer(self, "Result", "opset1", name, [output], {}, [], [], [],
                      {"fused_names": name}, {})
        self._add(layer)

    # ---- serialization ---------------------------------------------------

    def _ordered(self):
        """Parameters, then the other ops in a topological order, then Results
        (the order serialize.cpp writes them in)."""
        params = [l for l in self.layers if l.type == "Parameter"]
        results = [l for l in self.layers if l.type == "Result"]
        rest = [l for l in self.layers if l.type not in ("Parameter", "Result")]
        placed = set(id(l) for l in params)
        ordered = []
        pending = list(rest)
        while pending:
            progressed = False
            for l in list(pending):
                if all(id(i.layer) in placed for i in l.inputs):
                    ordered.append(l)
                    placed.add(id(l))
                    pending.remove(l)
                    progressed = True
            if not progressed:
                raise ValueError("graph has a cycle or a dangling input: " +
                                 ", ".join(l.name for l in pending))
        return params + ordered + results

    def to_xml(self):
        """(xml bytes, bin bytes)."""
        layers = self._ordered()
        for i, l in enumerate(layers):
            l.id = i

        blob = bytearray()
        blob_index = {}  # sha256 -> offset: identical constants share bytes
        net = ET.Element("net", {"name": self.name, "version": str(IR_VERSION)})
        xl = ET.SubElement(net, "layers")
        edges = []
        for l in layers:
            xlay = ET.SubElement(xl, "layer", {"id": str(l.id), "name": l.name,
                                               "type": l.type, "version": l.version})
            attrs = dict(l.attrs)
            if l.const_data is not None:
                raw = l.const_data.astype(l.const_data.dtype.newbyteorder("<")).tobytes()
                key = hashlib.sha256(raw).hexdigest()
                if key in blob_index:
                    offset = blob_index[key]
                else:
                    offset = len(blob)
                    blob_index[key] = offset
                    blob += raw
                attrs["offset"] = offset
                attrs["size"] = len(raw)
            if attrs:
                ET.SubElement(xlay, "data", {k: format_value(v) for k, v in attrs.items()})
            self._write_rt_info(xlay, l.rt_info)

            port = 0
            if l.inputs:
                xin = ET.SubElement(xlay, "input")
                for k, src in enumerate(l.inputs):
                    self._write_port(xin, port, src.element_type, src.shape, None, None)
                    edges.append((src.layer.id, len(src.layer.inputs) + src.index, l.id, port))
                    port += 1
            if l.out_shapes:
                xout = ET.SubElement(xlay, "output")
                for k, shape in enumerate(l.out_shapes):
                    self._write_port(xout, port, l.out_types[k], shape,
                                     l.out_names[k] if k < len(l.out_names) else None,
                                     l.port_rt_info.get(k))
                    port += 1
        xe = ET.SubElement(net, "edges")
        for fl, fp, tl, tp in sorted(edges, key=lambda e: (e[0], e[2], e[3])):
            ET.SubElement(xe, "edge", {"from-layer": str(fl), "from-port": str(fp),
                                       "to-layer": str(tl), "to-port": str(tp)})
        rt = ET.SubElement(net, "rt_info")
        self._write_model_rt_info(rt, self.rt_info)
        ET.indent(net, space="\t")
        text = ET.tostring(net, encoding="unicode")
        # pugixml closes empty elements as "<data .../>"; ElementTree puts a
        # space before the slash. ('>' is escaped inside attribute values, so
        # " />" only ever ends a tag.)
        text = '<?xml version="1.0"?>\n' + text.replace(" />", "/>") + "\n"
        return text.encode("utf-8"), bytes(blob)

    @staticmethod
    def _write_port(parent, port_id, element_type, shape, names, rt_info):
        attrs = {"id": str(port_id), "precision": precision_of(element_type)}
        if names:
            # A comma inside a tensor name is escaped, as escape_delim() does.
            attrs["names"] = names.replace(",", "\\,")
        xp = ET.SubElement(parent, "port", attrs)
        for d in shape:
            ET.SubElement(xp, "dim").text = str(d)
        if rt_info:
            xr = ET.SubElement(xp, "rt_info")
            for key, value in rt_info.items():
                # Port rt_info attributes carry their value under their own
                # name, e.g. <attribute name="layout" version="0" layout="[N,C,H,W]"/>.
                ET.SubElement(xr, "attribute", {"name": key, "version": "0", key: value})

    @staticmethod
    def _write_rt_info(parent, rt_info):
        if not rt_info:
            return
        xr = ET.SubElement(parent, "rt_info")
        for key, value in rt_info.items():
            ET.SubElement(xr, "attribute", {"name": key, "version": "0", "value": value})

    @classmethod
    def _write_model_rt_info(cls, parent, info):
        for key, value in info.items():
            if isinstance(value, dict):
                cls._write_model_rt_info(ET.SubElement(parent, key), value)
            else:
                ET.SubElement(parent, key, {"value": str(value)})

    def save(self, xml_path):
        """Write xml_path and the .bin beside it (same stem)."""
        if not xml_path.endswith(".xml"):
            raise ValueError(f"{xml_path}: IR path must end in .xml")
        xml, blob = self.to_xml()
        with open(xml_path, "wb") as f:
            f.write(xml)
        with open(xml_path[:-4] + ".bin", "wb") as f:
            f.write(blob)
