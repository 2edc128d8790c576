#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The IR runtime against ONNX Runtime on the public model set: latency at 1
and 2 threads, same graph, same input, runs interleaved; and per op type,
where each spends its time.

    /usr/bin/python3 tests/bench/ir/bench-models.py [--build build] [--only NAME,...]
        [--threads 1,2] [--rounds 3] [--seconds 1.0] [--markdown FILE] [--json FILE]
    /usr/bin/python3 tests/bench/ir/bench-models.py --profile [--only NAME,...] [--seconds 2]

The models are those of tests/models/model-set.tsv in the cache
($M2I_MODEL_CACHE, default ~/.cache/m2i-models; tests/models/fetch-model-set.sh
makes it, tests/models/model-coverage.py the inputs CACHE/NAME/ref/in.K.f32).
ONNX Runtime runs the IR translated by tests/bench/onnx/ir_to_onnx.py
(CACHE/NAME/bench/model.onnx, made here when missing: the model's outputs,
or for a DetectionOutput / CTCGreedyDecoder, which ONNX lacks, its data
inputs — so ONNX Runtime skips that last layer, m2i runs it), through
tests/bench/onnx/ort-run.mjs (onnxruntime-node from $M2I_ORT_DIR, default
~/.cache/m2i-bench-ort). m2i runs the IR with m2i-ir-run -b. Both get the
same input files and the same intra-op thread count.

Latency: for each model and thread count, --rounds rounds, each timing m2i
then ONNX Runtime (the order swapped every round) for about --seconds each;
a round's figure is the median latency of its runs. The table gives the
median over the rounds and their spread (lowest–highest round), and the CPU
time per inference of each side's whole process (on a machine busier than
its cores the wall time includes what other processes held the core for;
the CPU time does not: at one thread it is the figure to compare then).

--profile (one thread): m2i-ir-run --profile's time per op type (the
calling thread's CPU time) beside ONNX Runtime's profiler (enableProfiling;
each node's median over the runs), ONNX nodes mapped to the IR's op types:
Conv by its weights (grouped → GroupConvolution), nodes an IR layer expands
into (FakeQuantize's eleven) by their names, the rest by ONNX op type.
"""

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
CACHE = os.environ.get("M2I_MODEL_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "m2i-models")
ORT_DIR = os.environ.get("M2I_ORT_DIR") or os.path.expanduser("~/.cache/m2i-bench-ort")
ORT_RUN = os.path.join(ROOT, "tests", "bench", "onnx", "ort-run.mjs")

# ONNX op types named as the IR names them (those not listed keep their name).
ONNX_TO_IR = {
    "Mul": "Multiply", "Sub": "Subtract", "Div": "Divide", "Relu": "ReLU", "Clip": "Clamp",
    "PRelu": "PReLU", "Softmax": "SoftMax", "AveragePool": "AvgPool", "GlobalAveragePool": "AvgPool",
    "GlobalMaxPool": "MaxPool", "Gemm": "MatMul", "FusedGemm": "MatMul", "FusedMatMul": "MatMul",
    "Resize": "Interpolate", "ConvTranspose": "ConvolutionBackpropData",
    "ReorderInput": "(ORT layout change)", "ReorderOutput": "(ORT layout change)",
}


def load_coverage_module():
    spec = importlib.util.spec_from_file_location(
        "model_coverage", os.path.join(ROOT, "tests", "models", "model-coverage.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


class Model:
    def __init__(self, name):
        self.name = name
        d = os.path.join(CACHE, name)
        xmls = [f for f in os.listdir(d) if f.endswith(".xml")] if os.path.isdir(d) else []
        self.xml = os.path.join(d, xmls[0]) if xmls else None
        self.ref = os.path.join(d, "ref")
        self.onnx = os.path.join(d, "bench", "model.onnx")
        self.layers = {}                # name -> type
        self.params = []                # Parameter names, in order
        self.depthwise = 0
        if self.xml:
            root = ET.parse(self.xml).getroot()
            for L in root.find("layers"):
                self.layers[L.get("name")] = L.get("type")
                if L.get("type") == "Parameter":
                    self.params.append(L.get("name"))
                if L.get("type") == "GroupConvolution":
                    ports = L.find("input").findall("port")
                    dims = [int(x.text) for x in ports[1].findall("dim")] if len(ports) > 1 else []
                    if len(dims) >= 3 and dims[1] == 1 and dims[2] == 1:
                        self.depthwise += 1

    def inputs(self):
        """(name, file) of each Parameter, or None when the inputs are missing."""
        out = []
        for k, p in enumerate(self.params):
            f = [x for x in os.listdir(self.ref) if x.startswith(f"in.{k}.")] \
                if os.path.isdir(self.ref) else []
            if not f:
                return None
            out.append((p, os.path.join(self.ref, f[0])))
        return out

    def precision(self):
        return "INT8" if self.name.endswith("int8") else "FP16" if self.name.endswith("fp16") else "FP32"


def make_onnx(m, coverage):
    if os.path.exists(m.onnx) and os.path.getmtime(m.onnx) >= os.path.getmtime(
            os.path.join(ROOT, "tests", "bench", "onnx", "ir_to_onnx.py")):
        return None
    sys.path.insert(0, os.path.join(ROOT, "tests", "bench", "onnx"))
    from ir_to_onnx import convert
    os.makedirs(os.path.dirname(m.onnx), exist_ok=True)
    outs = coverage.compared_outputs(coverage.Model(m.xml))
    try:
        convert(m.xml, m.onnx, [f"{layer}.{port}" for layer, port in outs])
    except Exception as e:  # noqa: BLE001 - reported in the table
        return f"no ONNX translation: {e}"
    return None


def m2i_cmd(build, m, threads, iterations, profile=False):
    cmd = [os.path.join(build, "m2i-core", "tools", "m2i-ir-run"), m.xml, "-q", "-k", "0",
           "-n", str(threads), "--iterations", str(iterations)]
    for name, f in m.inputs():
        cmd += ["-i", f"{name}={f}"]
    return cmd + (["--profile"] if profile else ["-b"])


def ort_cmd(m, threads, runs, profile_dir=None):
    import onnx
    names = {i.name for i in onnx.load(m.onnx, load_external_data=False).graph.input}
    cmd = ["node", ORT_RUN, "--model", m.onnx, "--threads", str(threads), "--runs", str(runs),
           "--warmup", "3", "--json", "--ort-dir", ORT_DIR]
    for name, f in m.inputs():
        if name in names:
            cmd += ["--input", f"{name}={f}"]
    if profile_dir:
        cmd += ["--profile", profile_dir]
    return cmd


def m2i_bench(build, m, threads, iterations):
    r = run(m2i_cmd(build, m, threads, iterations))
    med = re.search(r"latency ms: median ([0-9.]+)", r.stdout)
    cpu = re.search(r"cpu ms per inference: ([0-9.]+)", r.stdout)
    if r.returncode or not med:
        raise RuntimeError((r.stderr or r.stdout).strip().splitlines()[-1] if (r.stderr or r.stdout)
                           else "m2i-ir-run failed")
    return float(med.group(1)), float(cpu.group(1)) if cpu else None


def ort_bench(m, threads, runs):
    r = run(ort_cmd(m, threads, runs))
    if r.returncode:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "ort-run failed")
    j = json.loads(r.stdout)
    return j["median_ms"], j.get("cpu_ms"), j.get("version")


def latency(args, m):
    """Per thread count: dict of medians, spreads and CPU times of both sides."""
    rows = []
    for t in args.threads:
        # one short run each sets the run length (and warms the caches)
        once_m2i = m2i_bench(args.build, m, t, 3)[0]
        once_ort = ort_bench(m, t, 3)[0]
        n_m2i = int(min(2000, max(5, args.seconds * 1000 / max(once_m2i, 1e-3))))
        n_ort = int(min(2000, max(5, args.seconds * 1000 / max(once_ort, 1e-3))))
        a, b, ac, bc = [], [], [], []
        version = None
        for k in range(args.rounds):
            sides = ["m2i", "ort"] if k % 2 == 0 else ["ort", "m2i"]
            for side in sides:
                if side == "m2i":
                    med, cpu = m2i_bench(args.build, m, t, n_m2i)
                    a.append(med)
                    ac.append(cpu)
                else:
                    med, cpu, version = ort_bench(m, t, n_ort)
                    b.append(med)
                    bc.append(cpu)
        rows.append({
            "model": m.name, "precision": m.precision(), "depthwise": m.depthwise, "threads": t,
            "m2i_ms": statistics.median(a), "m2i_lo": min(a), "m2i_hi": max(a),
            "ort_ms": statistics.median(b), "ort_lo": min(b), "ort_hi": max(b),
            "m2i_cpu": statistics.median(ac) if None not in ac else None,
            "ort_cpu": statistics.median(bc) if None not in bc else None,
            "ort_version": version, "rounds": args.rounds, "runs": [n_m2i, n_ort],
        })
    return rows


def fmt_row(r):
    ratio = r["m2i_ms"] / r["ort_ms"]
    cpu = (f"{r['m2i_cpu']:9.3f} {r['ort_cpu']:9.3f} {r['m2i_cpu'] / r['ort_cpu']:6.2f}"
           if r["m2i_cpu"] and r["ort_cpu"] else f"{'-':>9} {'-':>9} {'-':>6}")
    return (f"{r['model']:<50} {r['threads']:>2} | {r['m2i_ms']:9.3f} ({r['m2i_lo']:.3f}–"
            f"{r['m2i_hi']:.3f}) | {r['ort_ms']:9.3f} ({r['ort_lo']:.3f}–{r['ort_hi']:.3f}) | "
            f"{ratio:6.2f} | {cpu}")


def cpu_id():
    """'family F model M' of /proc/cpuinfo (the model name alone may be just
    "AMD EPYC")."""
    info = {}
    try:
        for line in open("/proc/cpuinfo"):
            k, _, v = line.partition(":")
            info.setdefault(k.strip(), v.strip())
    except OSError:
        return ""
    return f"family {info.get('cpu family', '?')} model {info.get('model', '?')}"


def markdown(rows, failures, path, args):
    cpu = run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p' | head -1"]).stdout.strip()
    load = open("/proc/loadavg").read().split()[:3]
    lines = [
        "| model | precision | depthwise | threads | m2i ms (rounds' range) | ORT ms (rounds' range) "
        "| m2i/ORT | m2i CPU ms | ORT CPU ms | CPU m2i/ORT |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cpu_cols = (f"{r['m2i_cpu']:.3f} | {r['ort_cpu']:.3f} | {r['m2i_cpu'] / r['ort_cpu']:.2f}"
                    if r["m2i_cpu"] and r["ort_cpu"] else "– | – | –")
        lines.append(
            f"| {r['model']} | {r['precision']} | {r['depthwise'] or ''} | {r['threads']} | "
            f"{r['m2i_ms']:.3f} ({r['m2i_lo']:.3f}–{r['m2i_hi']:.3f}) | "
            f"{r['ort_ms']:.3f} ({r['ort_lo']:.3f}–{r['ort_hi']:.3f}) | "
            f"{r['m2i_ms'] / r['ort_ms']:.2f} | {cpu_cols} |")
    for name, why in failures:
        lines.append(f"| {name} | | | | {why} | | | | | |")
    lines += ["", f"CPU: {cpu}; {args.rounds} rounds; load average at the end "
              f"{' '.join(load)}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


# ---- profiles -------------------------------------------------------------

def ir_type_of_node(m, node):
    """The IR op type an ONNX Runtime node stands for."""
    op, name = node["op"], node["name"]
    base = re.sub(r"_nchwc$", "", name)
    if op in ("Conv", "FusedConv", "NchwcConv"):
        shapes = node.get("shapes") or []
        # ORT turns a per-channel Multiply into a 1×1 depthwise Conv (named
        # after it); a Conv that took in an Add bias is named after the Add
        layer = m.layers.get(re.sub(r"_mul$", "", base))
        if layer == "Multiply" and len(shapes) > 1 and shapes[1][1:] == [1, 1, 1]:
            return layer
        if len(shapes) > 1 and len(shapes[0]) > 1 and len(shapes[1]) > 1 \
                and shapes[1][1] < shapes[0][1]:
            return "GroupConvolution"
        return "Convolution"
    # an IR layer expanded into several ONNX nodes: named LAYER/<what>N
    best = None
    for lname in (base, base.rsplit("/", 1)[0]):
        if lname in m.layers and m.layers[lname] not in ("Const", "Parameter"):
            best = m.layers[lname]
            break
    if best in ("FakeQuantize", "MVN", "Mish", "Gelu", "Swish", "HSwish", "HSigmoid",
                "SoftPlus", "Elu", "NormalizeL2", "LRN", "Interpolate"):
        return best
    return ONNX_TO_IR.get(op, op)


def profile(args, m):
    r = run(m2i_cmd(args.build, m, 1, args.iterations, profile=True))
    m2i = {}
    total_line = re.search(r"profile: \d+ layers per inference, ([0-9.]+) ms per inference, "
                           r"([0-9.]+) ms CPU", r.stdout)
    for line in r.stdout.splitlines():
        mm = re.match(r"\s+(\S+)\s+(\d+)\s+([0-9.]+)\s+[0-9.]+%\s+([0-9.]+)\s+[0-9.]+%", line)
        if mm:
            m2i[mm.group(1)] = float(mm.group(4))
    pdir = os.path.join(CACHE, m.name, "bench", "profile")
    rr = run(ort_cmd(m, 1, args.iterations, pdir))
    if rr.returncode or not total_line:
        raise RuntimeError((rr.stderr or r.stderr or "profile failed").strip().splitlines()[-1])
    ort = {}
    for node in json.loads(rr.stdout)["nodes"]:
        k = ir_type_of_node(m, node)
        ort[k] = ort.get(k, 0) + node["ms"]
    tm, to = sum(m2i.values()), sum(ort.values())
    print(f"\n{m.name}: m2i {tm:.3f} ms per inference (CPU of the calling thread), "
          f"ONNX Runtime {to:.3f} ms (sum of its nodes' medians), 1 thread, "
          f"{args.iterations} runs each")
    print(f"  {'op type':<26} {'m2i ms':>9} {'share':>6} | {'ORT ms':>9} {'share':>6} | {'m2i/ORT':>7}")
    for k in sorted(set(m2i) | set(ort), key=lambda k: -max(m2i.get(k, 0), ort.get(k, 0))):
        a, b = m2i.get(k), ort.get(k)
        print(f"  {k:<26} {a if a is not None else 0:9.3f} {100 * (a or 0) / tm:5.1f}% | "
              f"{b if b is not None else 0:9.3f} {100 * (b or 0) / to:5.1f}% | "
              f"{(a / b) if a and b else float('nan'):7.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0, help="per side and round")
    ap.add_argument("--profile", action="store_true", help="time per op type instead")
    ap.add_argument("--iterations", type=int, default=20, help="runs per profile")
    ap.add_argument("--markdown", help="also write the table as Markdown")
    ap.add_argument("--json", help="also write the rows as JSON")
    args = ap.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    coverage = load_coverage_module()
    names = list(coverage.manifest())
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    rows, failures = [], []
    started, load_start = time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()), \
        open("/proc/loadavg").read().split()[:3]
    if not args.profile:
        print(f"{'model':<50} {'t':>2} | {'m2i ms (rounds)':>27} | {'ORT ms (rounds)':>27} | "
              f"{'m2i/ORT':>6} | {'m2i cpu':>9} {'ORT cpu':>9} {'ratio':>6}")
    for name in names:
        m = Model(name)
        why = None
        if not m.xml:
            why = "not in the cache (tests/models/fetch-model-set.sh)"
        elif m.inputs() is None:
            why = "no inputs (tests/models/model-coverage.py makes them)"
        else:
            why = make_onnx(m, coverage)
        if not why:
            r = run(m2i_cmd(args.build, m, 1, 1))
            if r.returncode:
                lines = (r.stderr or r.stdout).strip().splitlines()
                why = "m2i: " + (lines[-1] if lines else "fails")
                why = why if len(why) < 160 else why[:157] + "..."
        if why:
            failures.append((name, why))
            print(f"{name:<50} skipped: {why}")
            continue
        try:
            if args.profile:
                profile(args, m)
            else:
                for row in latency(args, m):
                    rows.append(row)
                    print(fmt_row(row), flush=True)
        except RuntimeError as e:
            failures.append((name, str(e)))
            print(f"{name:<50} failed: {e}")
    if rows and args.markdown:
        markdown(rows, failures, args.markdown, args)
    if args.json:
        commit = run(["git", "-C", ROOT, "describe", "--always", "--dirty"]).stdout.strip()
        cpu = run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p' | head -1"]).stdout.strip()
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "failures": failures, "cpu": cpu, "cpu_id": cpu_id(),
                       "commit": commit, "started": started, "load_start": load_start,
                       "ended": time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()),
                       "load_end": open("/proc/loadavg").read().split()[:3],
                       "rounds": args.rounds, "seconds": args.seconds}, f, indent=1)


if __name__ == "__main__":
    main()
