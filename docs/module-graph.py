#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""module-graph.py — the picture of docs/architecture.md, drawn from the tree.

Reads every #include of m2i-core/<folder>/ and gst/, groups the files into
modules (one per m2i-core folder, the elements and their helpers in gst/),
and writes a Graphviz DOT graph: grey arrows are "includes" (module A uses
module B, weighted by the number of #include lines), the numbered bold
arrows the path of one frame from m2icolorconvert to the results. Every
step of that path must follow an include between the two modules (either
direction), so the path cannot drift from the code: the script fails when
it does.

    docs/module-graph.py > docs/architecture.dot
    dot -Tsvg docs/architecture.dot -o docs/architecture.svg
    docs/module-graph.py --check      # only validate (a meson test)
"""
import os
import re
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CORE = ["base", "m2i", "mli", "npu", "ir", "split", "infer", "analytics"]
CORE_DOC = {
    "base": "errors, fp16, CPU levels,\nworker pool",
    "m2i": "M2I block: ops, planner,\nfused kernels, device, plan cache",
    "mli": "quantized tensors",
    "npu": "int8 / fp16 engine",
    "ir": "IR reader, graph,\nCPU kernels, runtime",
    "split": "partitioner, plan,\nrunner, PPP head",
    "infer": "model, session,\ndecoders, results",
    "analytics": "object tracker",
}
# gst/ files -> module
GST = {
    "m2icolorconvert": ["gstm2icolorconvert.c"],
    "m2iresize": ["gstm2iresize.c"],
    "m2inorm": ["gstm2inorm.c"],
    "GstM2iBase": ["gstm2ibase.c", "gstm2ibase.h"],
    "deferred frames": ["gstm2ideferred.c", "gstm2ideferred.h"],
    "caps, props": ["gstm2icaps.c", "gstm2icaps.h", "gstm2iprops.c", "gstm2iprops.h",
                    "gstm2ienums.c", "gstm2ienums.h"],
    "m2iinfer": ["gstm2iinfer.c", "gstm2iinfer.h", "gstm2iinfer-private.h", "gstm2iinferpads.c",
                 "gstm2iinferprops.c", "gstm2iinferasync.c", "gstm2iinferroi.c",
                 "gstm2iinfercaps.c", "gstm2iinfercaps.h"],
    "results, tensors": ["gstm2iinferresults.c", "gstm2iinferresults.h", "gstm2itensors.c",
                         "gstm2itensors.h", "gstm2itensormeta.c", "gstm2itensormeta.h"],
    "m2itrack, m2ioverlay,\nm2imetapublish": ["gstm2itrack.c", "gstm2ioverlay.c", "gstm2imetapublish.c",
                                           "gstm2iregions.c", "gstm2iregions.h", "gstm2idraw.c",
                                           "gstm2idraw.h", "gstm2itext.c", "gstm2itext.h",
                                           "gstm2ianalytics.h"],
}

# One frame, in order: (from, to, what travels, how). "call": from uses to
# (an include between them, either direction); "pad": a GStreamer link
# between two elements that both speak deferred frames (each reaches the
# "deferred frames" module through its includes).
FLOW = [
    ("NV12 frame", "m2icolorconvert", "GstBuffer", "outside"),
    ("m2icolorconvert", "m2iresize", "deferred frame:\ncsc queued", "pad"),
    ("m2iresize", "m2inorm", "+ resize", "pad"),
    ("m2inorm", "m2iinfer", "+ norm", "pad"),
    ("m2iinfer", "deferred frames", "source + queued ops", "call"),
    ("m2iinfer", "infer", "m2i_infer_session_run", "call"),
    ("infer", "m2i", "one M2I plan into\nthe model's input", "call"),
    ("infer", "split", "run the model", "call"),
    ("split", "npu", "device pieces", "call"),
    ("split", "ir", "CPU pieces", "call"),
    ("m2iinfer", "results, tensors", "M2iInferResult", "call"),
    ("results, tensors", "metas, bus message", "GstMeta, GstMessage", "outside"),
]
OUTSIDE = {"NV12 frame", "metas, bus message"}

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def module_of_path(rel):
    """The module of a file path relative to the root, or None."""
    parts = rel.split("/")
    if parts[0] == "m2i-core" and len(parts) > 2 and parts[1] in CORE:
        return parts[1]
    if parts[0] == "gst" and len(parts) == 2:
        for mod, files in GST.items():
            if parts[1] in files:
                return mod
    return None


def module_of_include(inc, from_rel):
    """The module an #include names, or None (system headers, tools)."""
    first = inc.split("/")[0]
    if "/" in inc and first in CORE:
        return first
    if "/" in inc and first == "m2i-core":
        return module_of_include(inc[len("m2i-core/"):], from_rel)
    # a plain "file.h": beside the including file
    beside = os.path.join(os.path.dirname(from_rel), inc)
    return module_of_path(os.path.normpath(beside))


def scan():
    edges = Counter()
    lines = Counter()
    for top in ("m2i-core", "gst"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if not name.endswith((".c", ".h")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), ROOT)
                mod = module_of_path(rel)
                if not mod:
                    continue
                with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                    text = f.read()
                lines[mod] += text.count("\n")
                for inc in INCLUDE.findall(text):
                    dep = module_of_include(inc, rel)
                    if dep and dep != mod:
                        edges[(mod, dep)] += 1
    return edges, lines


def reaches(edges, a, b):
    seen, todo = {a}, [a]
    while todo:
        m = todo.pop()
        for (x, y) in edges:
            if x == m and y not in seen:
                seen.add(y)
                todo.append(y)
    return b in seen


def check_flow(edges):
    bad = []
    for a, b, _, how in FLOW:
        if how == "call" and (a, b) not in edges and (b, a) not in edges:
            bad.append(f"{a} -> {b} (no include between them)")
        if how == "pad" and not (reaches(edges, a, "deferred frames")
                                 and reaches(edges, b, "deferred frames")):
            bad.append(f"{a} -> {b} (not both on deferred frames)")
    return bad


def quote(s):
    return '"' + s.replace('"', '\\"').replace("\n", "\\n") + '"'


def dot(edges, lines):
    out = ["digraph m2i {",
           '  graph [rankdir=TB, fontname="Helvetica", fontsize=11, nodesep=0.35, ranksep=0.5,',
           '         label="m2i modules (grey: includes, weight = #include lines) and one frame '
           'from m2icolorconvert to the results (numbered); arrows into base/, which every module '
           'uses, left out\\ngenerated by docs/module-graph.py from the tree", labelloc=b];',
           '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
           '  edge [fontname="Helvetica", fontsize=9];']
    out.append('  subgraph cluster_gst { label="gst/  libgstm2i (GStreamer elements)"; '
               'style=rounded; color="#6a8caf";')
    for mod in GST:
        label = "%s\n%d lines" % (mod, lines[mod])
        out.append(f'    {quote(mod)} [label={quote(label)}, fillcolor="#dbe8f5"];')
    out.append("  }")
    out.append('  subgraph cluster_core { label="m2i-core/  libm2icore (GLib + ORC, no '
               'GStreamer)"; style=rounded; color="#7a9f6a";')
    for mod in CORE:
        label = "%s/\n%s\n%d lines" % (mod, CORE_DOC[mod], lines[mod])
        fill = "#fbe3c8" if mod == "infer" else "#e2f0d9"
        out.append(f'    {quote(mod)} [label={quote(label)}, fillcolor="{fill}"];')
    out.append("  }")
    for name in sorted(OUTSIDE):
        out.append(f'  {quote(name)} [shape=note, fillcolor="#ffffff"];')
    for (a, b), n in sorted(edges.items()):
        if b == "base":
            continue            # everything uses base/: said in the caption
        out.append(f'  {quote(a)} -> {quote(b)} [color="#9a9a9a", style=dashed, '
                   f'penwidth={1 + min(n, 20) / 10:.1f}, arrowsize=0.6];')
    for i, (a, b, what, _) in enumerate(FLOW, 1):
        out.append(f'  {quote(a)} -> {quote(b)} [color="#c0392b", penwidth=2.2, '
                   f'fontcolor="#c0392b", label={quote("%d. %s" % (i, what))}];')
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    edges, lines = scan()
    bad = check_flow(edges)
    if bad:
        sys.stderr.write("frame path steps without an include between the modules: "
                         + ", ".join(bad) + "\n")
        return 1
    if "--check" in sys.argv[1:]:
        print(f"{len(edges)} module dependencies; the frame path follows them")
        return 0
    sys.stdout.write(dot(edges, lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
