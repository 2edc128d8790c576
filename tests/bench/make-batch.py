#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""make-batch.py — writes a copy of an OpenVINO IR whose one image input takes
N frames instead of 1 (the static batch dimension rewritten), for
bench-streams' batch-size runs: m2iinfer uses a model's batch as it is and
does not reshape a static one.

    tests/bench/make-batch.py MODEL.xml N OUT_DIR   ->  OUT_DIR/model.xml, model.bin

The batch flows from the Parameter through every layer whose data comes
from it: leading dims of 1 become N on those layers' ports (rank >= 2).
What does not carry the batch is left alone: Const layers, ShapeOf and what
only computes on shapes, prior boxes (PriorBox*, and what only reads them);
DetectionOutput's rows [1,1,R,7] become [1,1,N*R,7]. Reshape targets must
keep the batch themselves (0 or -1 in the first place), as converters
write them. The runtime checks every declared shape against what the ops
compute, so a model this rewrites wrongly fails to load instead of running
wrong. Standard library only; the .bin is copied unchanged.
"""
import shutil
import sys
import xml.etree.ElementTree as ET

NO_BATCH = {"ShapeOf", "PriorBox", "PriorBoxClustered", "Const"}


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    tree = ET.parse(src)
    net = tree.getroot()
    layers = {l.get("id"): l for l in net.iter("layer")}
    edges = [(e.get("from-layer"), e.get("from-port"), e.get("to-layer"), e.get("to-port"))
             for e in net.iter("edge")]
    params = [l for l in layers.values() if l.get("type") == "Parameter"]
    if len(params) != 1:
        sys.exit("the model has %d inputs; one image input is needed" % len(params))
    batched = {params[0].get("id")}
    changed = True
    while changed:
        changed = False
        for f, _, t, _ in edges:
            if f in batched and t not in batched and layers[f].get("type") not in NO_BATCH \
                    and layers[t].get("type") not in NO_BATCH:
                batched.add(t)
                changed = True

    def port_dims(layer, section, pid):
        for p in layer.find(section).findall("port"):
            if p.get("id") == pid:
                return p.findall("dim")
        return []

    for lid in batched:
        l = layers[lid]
        outs = l.find("output")
        for p in (outs.findall("port") if outs is not None else []):
            dims = p.findall("dim")
            if l.get("type") == "DetectionOutput":
                dims[2].text = str(int(dims[2].text) * n)
            elif len(dims) >= 2 and dims[0].text == "1":
                dims[0].text = str(n)
        if l.get("type") == "Parameter":
            d = l.find("data")
            shape = d.get("shape").split(",")
            shape[0] = str(n)
            d.set("shape", ",".join(shape))
    # input ports take their source's dims
    for f, fp, t, tp in edges:
        sd, td = port_dims(layers[f], "output", fp), port_dims(layers[t], "input", tp)
        for a, b in zip(sd, td):
            b.text = a.text
    net.set("name", net.get("name", "model") + "-b%d" % n)
    tree.write(out + "/model.xml")
    shutil.copyfile(src[:-4] + ".bin", out + "/model.bin")


if __name__ == "__main__":
    main()
