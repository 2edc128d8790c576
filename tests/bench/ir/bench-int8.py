#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""INT8 models: m2i's float emulation, m2i's integer kernels and ONNX Runtime,
1 and 2 threads, in one run (docs/int8.md, docs/benchmarks.md).

    /usr/bin/python3 tests/bench/ir/bench-int8.py [--build build] [--rounds 3]
        [--seconds 1.5] [--only NAME,...] [--threads 1,2]

For every INT8 model of the public set (tests/models/model-set.tsv) in the
model cache ($M2I_MODEL_CACHE, default ~/.cache/m2i-models) that has its ONNX
translation (CACHE/NAME/ref/model.onnx, made by tests/models/model-coverage.py:
FakeQuantize written as its formula, the same graph m2i's emulation runs):

  emulation  m2i-ir-run with M2I_INT8=0 (FakeQuantize as its formula)
  int8       m2i-ir-run (the low-precision pass: integer kernels)
  ORT        tests/bench/onnx/ort-run.mjs (onnxruntime-node)

all on the model's fixed reference input (CACHE/NAME/ref/in.K.f32). The
machine is shared, so each round runs the three one after the other and each
measurement is a median over about --seconds of inferences; the table gives,
per cell, the median over the rounds and their spread (min-max). ONNX Runtime
comes from npm's onnxruntime-node in $M2I_ORT_DIR (default
~/.cache/m2i-bench-ort; tests/bench/ir/bench-ir.sh installs it).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
CACHE = os.environ.get("M2I_MODEL_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "m2i-models")
ORT_DIR = os.environ.get("M2I_ORT_DIR") or os.path.expanduser("~/.cache/m2i-bench-ort")


def int8_models(only):
    names = []
    with open(os.path.join(ROOT, "tests", "models", "model-set.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name = line.split("\t")[0]
            if name.endswith("-int8") and name not in names and (not only or name in only):
                names.append(name)
    return names


def onnx_inputs(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    init = {i.name for i in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in init]


def median_ms(text, pattern):
    mm = re.search(pattern, text)
    return float(mm.group(1)) if mm else None


def run_m2i(build, xml, inputs, threads, iterations, int8):
    env = dict(os.environ)
    if not int8:
        env["M2I_INT8"] = "0"
    args = [os.path.join(build, "m2i-core/tools/m2i-ir-run"), xml, "-q", "-k", "0", "-b",
            "-n", str(threads), "--iterations", str(iterations)]
    for f in inputs:
        args += ["-i", f]
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    return median_ms(r.stdout, r"latency ms: median ([0-9.]+)")


def run_ort(onnx, names, inputs, threads, iterations):
    args = ["node", os.path.join(ROOT, "tests/bench/onnx/ort-run.mjs"), "--model", onnx,
            "--threads", str(threads), "--runs", str(iterations), "--warmup", "2",
            "--ort-dir", ORT_DIR]
    for n, f in zip(names, inputs):
        args += ["--input", "%s=%s" % (n, f)]
    r = subprocess.run(args, capture_output=True, text=True)
    return median_ms(r.stdout, r"median=([0-9.]+) ms")


def cell(values):
    v = [x for x in values if x is not None]
    if not v:
        return "-", None
    med = statistics.median(v)
    return "%.2f (%.2f-%.2f)" % (med, min(v), max(v)), med


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--only")
    ap.add_argument("--threads", default="1,2")
    a = ap.parse_args()
    only = a.only.split(",") if a.only else None
    threads = [int(t) for t in a.threads.split(",")]
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model_name = re.search(r"Model name:\s*(.*)", cpu)
    flags = re.search(r"Flags:\s*(.*)", cpu)
    print("CPU: %s, %d cores online; %s" % (model_name.group(1) if model_name else "?",
                                            os.cpu_count(),
                                            "avx512_vnni" if flags and "avx512_vnni" in
                                            flags.group(1) else "no avx512_vnni"))
    print("rounds %d, about %.1f s of inferences per measurement; ms per inference, median "
          "of the rounds' medians (min-max)" % (a.rounds, a.seconds))
    print("| model | threads | emulation ms | int8 ms | ORT ms | int8 vs emulation | "
          "ORT / int8 |")
    print("|---|---|---|---|---|---|---|")
    for name in int8_models(only):
        d = os.path.join(CACHE, name)
        onnx = os.path.join(d, "ref", "model.onnx")
        xmls = [f for f in os.listdir(d) if f.endswith(".xml")] if os.path.isdir(d) else []
        if not xmls or not os.path.exists(onnx) or not os.path.exists(os.path.join(d, "ref", "meta.tsv")):
            continue
        xml = os.path.join(d, xmls[0])
        inputs = []
        for line in open(os.path.join(d, "ref", "meta.tsv")):
            f = line.rstrip("\n").split("\t")
            if f[0] == "input":
                inputs.append(os.path.join(d, "ref", f[1]))
        names = onnx_inputs(onnx)
        for t in threads:
            # iterations for about --seconds each, from one short run of each
            est = [run_m2i(a.build, xml, inputs, t, 3, False), run_m2i(a.build, xml, inputs, t, 3, True),
                   run_ort(onnx, names, inputs, t, 3)]
            its = [max(3, min(500, int(a.seconds * 1000 / max(e or 1000, 0.01)))) for e in est]
            res = [[], [], []]
            for _ in range(a.rounds):
                res[0].append(run_m2i(a.build, xml, inputs, t, its[0], False))
                res[1].append(run_m2i(a.build, xml, inputs, t, its[1], True))
                res[2].append(run_ort(onnx, names, inputs, t, its[2]))
            (ce, me), (ci, mi), (co, mo) = cell(res[0]), cell(res[1]), cell(res[2])
            speed = "%.2fx" % (me / mi) if me and mi else "-"
            vs_ort = "%.2fx" % (mo / mi) if mo and mi else "-"
            print("| %s | %d | %s | %s | %s | %s | %s |" % (name, t, ce, ci, co, speed, vs_ort))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
