#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes the plan loader fuzzer's seed corpus (corpus-plan/*.plan): each a
split-plan folder packed as fuzz-plan-loader.c reads it ("=== NAME" then the
file's bytes). The folders are the models of corpus/*.ir split by m2i-split
(so the seeds are small, valid plans of both IR versions, fp16 weights and
device pieces), plus a few broken ones: a link out of the folder, a deep
graph_infos.json, a piece in a sub-folder.

Run: /usr/bin/python3 make-plan-corpus.py BUILD/m2i-core/tools/m2i-split"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus-plan")


def pack(folder):
    parts = []
    for name in ["graph_infos.json"] + sorted(n for n in os.listdir(folder) if n != "graph_infos.json"):
        with open(os.path.join(folder, name), "rb") as f:
            parts.append(b"=== " + name.encode() + b"\n" + f.read())
    return b"\n".join(parts)


def main():
    split = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    tmp = tempfile.mkdtemp()
    written = {}
    try:
        for ir in sorted(os.listdir(os.path.join(HERE, "corpus"))):
            with open(os.path.join(HERE, "corpus", ir), "rb") as f:
                data = f.read()
            if b"\0" not in data:
                continue
            xml, bin_ = data.split(b"\0", 1)
            stem = os.path.join(tmp, ir[:-3])
            with open(stem + ".xml", "wb") as f:
                f.write(xml)
            with open(stem + ".bin", "wb") as f:
                f.write(bin_)
            out = stem + ".plan"
            r = subprocess.run([split, "split", stem + ".xml", "-o", out, "--keep-all"],
                               capture_output=True)
            if r.returncode == 0:
                written[ir[:-3]] = pack(out)
        base = written.get("conv-net-f16") or next(iter(written.values()))
        # the same plan with a piece reached through a link to /, a piece in
        # a sub-folder, and a graph_infos.json nested 200 deep
        written["link-out"] = base.replace(b'"xml" : "graph_0.xml"', b'"xml" : "root/etc/passwd"', 1) \
            + b"\n=== root -> /"
        written["sub-folder"] = base.replace(b'"xml" : "graph_0.xml"', b'"xml" : "sub/graph_0.xml"', 1) \
            .replace(b"=== graph_0.xml", b"=== sub/graph_0.xml", 1)
        written["deep-json"] = base.replace(b'{\n  "graph_num"', b'{\n  "x" : ' + b"[" * 200 + b"]" * 200
                                            + b',\n  "graph_num"', 1)
    finally:
        shutil.rmtree(tmp)
    for name, blob in sorted(written.items()):
        with open(os.path.join(OUT, name + ".plan"), "wb") as f:
            f.write(blob)
    print(f"{len(written)} seeds -> {OUT}")


if __name__ == "__main__":
    main()
