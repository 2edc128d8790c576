#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Fashion-MNIST classifier with a one-channel (grayscale) input.

    /usr/bin/python3 models/fashion-mnist-gray/make_gray.py      # < 5 s

models/fashion-mnist takes 1x3x28x28: the grey picture repeated into three
channels (that is how it was trained). A network fed the same value on
every input channel computes, in its first convolution,
sum_c w[o,c] * x = (sum_c w[o,c]) * x, so the same network with the first
convolution's weights summed over the input channels takes the grey
picture as 1x1x28x28 and gives the same output, up to float rounding.

This script rewrites models/fashion-mnist/fashion-mnist.{xml,bin} that way
(text edits of the XML: the Parameter's and conv1's shapes; the .bin
rebuilt with conv1.weight summed, every other constant unchanged) and adds
Model API metadata (model_info: model_type Classification, labels, one
mean_values 72.93 and one scale_values 90.015 in pixel units, the
normalisation models/fashion-mnist/README.md gives), so that

    gst-launch-1.0 filesrc location=picture.png ! pngdec ! videoconvert ! \
      m2iinfer model=models/fashion-mnist-gray/fashion-mnist-gray.xml ! fakesink

classifies with no other setting. Before writing, it checks with the numpy
executor (models/irgen/executor.py) that the new model gives the original
model's outputs within 1e-5 on the 64 reference inputs of
tests/data/fashion-mnist (first64.input.f32, channel 0) and torch's
probabilities (first64.prob.f32) within 1e-4. It also writes the first
two test images as PNG (tests/data/fashion-mnist/t10k-0.png, t10k-1.png).
"""

import os
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from irgen.executor import Executor  # noqa: E402
from irgen.reader import Model  # noqa: E402

SRC = os.path.join(TOP, "models", "fashion-mnist", "fashion-mnist.xml")
DST = os.path.join(HERE, "fashion-mnist-gray.xml")
DATA = os.path.join(TOP, "tests", "data", "fashion-mnist")


def rewrite():
    text = open(SRC).read()
    blob = open(SRC[:-4] + ".bin", "rb").read()
    root = ET.fromstring(text)
    # Constants in file order, with their (new) bytes.
    consts = []
    for layer in root.find("layers").findall("layer"):
        if layer.get("type") != "Const":
            continue
        d = layer.find("data")
        off, size = int(d.get("offset")), int(d.get("size"))
        data = blob[off:off + size]
        if layer.get("name") == "conv1.weight":
            w = np.frombuffer(data, "<f4").reshape(32, 3, 3, 3)
            data = w.sum(axis=1, keepdims=True).astype("<f4").tobytes()
        consts.append((layer.get("name"), off, size, data))
    # The new .bin: constants one after the other (identical blobs once).
    out, where, new_off = bytearray(), {}, {}
    for name, off, size, data in consts:
        if data not in where:
            where[data] = len(out)
            out += data
        new_off[name] = (where[data], len(data))
    # Text edits, each checked to apply exactly where meant.
    def sub(pattern, repl, s, count=1):
        s2, n = re.subn(pattern, repl, s, count=count)
        if n != count:
            raise SystemExit(f"make_gray.py: pattern {pattern!r} matched {n} times")
        return s2

    for name, (off, size) in new_off.items():
        text = sub(r'(<layer id="\d+" name="%s" type="Const" version="opset1">\s*<data '
                   r'element_type="[a-z0-9]*" shape="[^"]*") offset="\d+" size="\d+"' % re.escape(name),
                   r'\1 offset="%d" size="%d"' % (off, size), text)
    text = sub(r'shape="32, 3, 3, 3"', 'shape="32, 1, 3, 3"', text)
    text = sub(r'shape="1,3,28,28"', 'shape="1,1,28,28"', text)
    # dims: the Parameter's output, conv1's two inputs, the weight's output
    four = "<dim>%d</dim>\\s*<dim>%d</dim>\\s*<dim>%d</dim>\\s*<dim>%d</dim>"
    text = sub(four % (1, 3, 28, 28), "<dim>1</dim>\n\t\t\t\t\t<dim>1</dim>\n\t\t\t\t\t<dim>28"
               "</dim>\n\t\t\t\t\t<dim>28</dim>", text, count=2)
    text = sub(four % (32, 3, 3, 3), "<dim>32</dim>\n\t\t\t\t\t<dim>1</dim>\n\t\t\t\t\t<dim>3"
               "</dim>\n\t\t\t\t\t<dim>3</dim>", text, count=2)
    text = sub(r'<net name="fashion-mnist"', '<net name="fashion-mnist-gray"', text)
    text = sub(r'<mean_values value="[^"]*"/>', '<mean_values value="72.93"/>', text)
    text = sub(r'<scale_values value="[^"]*"/>', '<scale_values value="90.015"/>', text)
    text = sub(r'\s*<reverse_input_channels value="[^"]*"/>', "", text)
    text = sub(r'<script value="[^"]*"/>',
               '<script value="models/fashion-mnist-gray/make_gray.py"/>', text)
    return text, bytes(out)


def check(xml_path):
    x3 = np.fromfile(os.path.join(DATA, "first64.input.f32"), "<f4").reshape(64, 3, 28, 28)
    prob = np.fromfile(os.path.join(DATA, "first64.prob.f32"), "<f4").reshape(64, 10)
    assert np.array_equal(x3[:, 0], x3[:, 1]) and np.array_equal(x3[:, 0], x3[:, 2])
    old, new = Executor(Model(SRC)), Executor(Model(xml_path))
    worst_old = worst_torch = 0.0
    for i in range(64):
        a = list(old.run({"input": x3[i:i + 1]}).values())[0]
        b = list(new.run({"input": x3[i:i + 1, :1]}).values())[0]
        worst_old = max(worst_old, float(np.abs(a - b).max()))
        worst_torch = max(worst_torch, float(np.abs(b[0] - prob[i]).max()))
    print(f"gray vs 3-channel model: max |diff| {worst_old:.2e}; vs torch {worst_torch:.2e}")
    if worst_old > 1e-5 or worst_torch > 1e-4:
        raise SystemExit("make_gray.py: the gray model does not reproduce the original")


def write_png(path, pixels):
    """A grey 8-bit PNG of @pixels (H x W u8), no filter."""
    h, w = pixels.shape
    raw = b"".join(b"\0" + pixels[y].tobytes() for y in range(h))

    def chunk(kind, data):
        c = kind + data
        return struct.pack(">I", len(data)) + c + struct.pack(">I", zlib.crc32(c) & 0xffffffff)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def pictures():
    """The first two test images as PNG files, for the README's example and
    the element test (t10k-0: Ankle boot, t10k-1: Pullover)."""
    images = np.fromfile(os.path.join(DATA, "first64.images.u8"), np.uint8).reshape(64, 28, 28)
    for i in range(2):
        write_png(os.path.join(DATA, f"t10k-{i}.png"), images[i])


def main():
    text, blob = rewrite()
    tmp = DST + ".tmp.xml"
    with open(tmp, "w") as f:
        f.write(text)
    with open(tmp[:-4] + ".bin", "wb") as f:
        f.write(blob)
    try:
        check(tmp)
    except BaseException:
        os.unlink(tmp)
        os.unlink(tmp[:-4] + ".bin")
        raise
    os.replace(tmp, DST)
    os.replace(tmp[:-4] + ".bin", DST[:-4] + ".bin")
    print(f"wrote {DST} and its .bin ({len(blob)} bytes)")
    pictures()
    print(f"wrote {DATA}/t10k-0.png, t10k-1.png")


if __name__ == "__main__":
    main()
