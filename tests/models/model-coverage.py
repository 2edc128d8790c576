#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The public model set against ONNX Runtime: references, then the table.

    /usr/bin/python3 tests/models/model-coverage.py [--build build] [--only NAME,...]
        [--no-refs] [--no-time] [--table docs/model-coverage.md]

For every model of tests/models/model-set.tsv in the cache ($M2I_MODEL_CACHE,
default ~/.cache/m2i-models; tests/models/fetch-model-set.sh makes it):

1. a fixed input (numpy, seeded by the model's name: uniform [0, 255) for
   3-channel images of the Open Model Zoo, [0, 1) for YOLO exports and other
   inputs; a detector whose NMS decides the number of outputs gets
   python3-skimage's astronaut photo instead), written as
   CACHE/NAME/ref/in.K.f32;
2. the IR translated to ONNX by tests/bench/onnx/ir_to_onnx.py, returning
   the model's outputs (those of a DetectionOutput or CTCGreedyDecoder,
   which ONNX lacks, are replaced by that layer's data inputs), and run by
   ONNX Runtime (tests/bench/onnx/ort-run.mjs, one thread): its outputs are
   the references CACHE/NAME/ref/out.K.f32, listed in CACHE/NAME/ref/meta.tsv;
3. the test build/tests/ir/test-ir-model-set compares m2i with them (one
   line per model), and m2i-ir-run -b and ort-run time both at one thread;
4. the table docs/model-coverage.md is written from all that.

References stay in the cache, never in the repository. ONNX Runtime comes
from npm's onnxruntime-node in $M2I_ORT_DIR (default ~/.cache/m2i-bench-ort,
as tests/bench/ir/bench-ir.sh installs it).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "models"))
sys.path.insert(0, os.path.join(ROOT, "tests", "bench", "onnx"))
sys.setrecursionlimit(100000)
from irgen.reader import Model  # noqa: E402

CACHE = os.environ.get("M2I_MODEL_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "m2i-models")
ORT_DIR = os.environ.get("M2I_ORT_DIR") or os.path.expanduser("~/.cache/m2i-bench-ort")
NOT_IN_ONNX = ("DetectionOutput", "CTCGreedyDecoder", "CTCGreedyDecoderSeqLen")


def manifest():
    rows = {}
    with open(os.path.join(HERE, "model-set.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, repo, commit, path, blob, sha, size = line.rstrip("\n").split("\t")
            rows.setdefault(name, {"repo": repo, "commit": commit, "files": []})
            rows[name]["files"].append(path)
    return rows


def compared_outputs(m):
    """(layer name, port) pairs whose values are compared."""
    out = []
    for r in m.results():
        src, k = r.sources[0]
        L = m.layers[src]
        if L.type in NOT_IN_ONNX:
            n_data = 2 if L.type == "DetectionOutput" else 1
            for j in range(n_data):
                s2, k2 = L.sources[j]
                out.append((m.layers[s2].name, k2))
        else:
            out.append((L.name, k))
    seen, unique = set(), []
    for o in out:
        if o not in seen:
            seen.add(o)
            unique.append(o)
    return unique


def photo(dims):
    """skimage's astronaut (a public-domain photo of a person) as an N x 3 x
    H x W BGR tensor of [0, 255], resized by bilinear interpolation."""
    from skimage import data
    from skimage.transform import resize
    rgb = resize(data.astronaut(), (dims[2], dims[3]), order=1, preserve_range=True)
    bgr = rgb[:, :, ::-1].transpose(2, 0, 1)
    return np.broadcast_to(bgr, dims).astype(np.float32)


def runtime_count(m):
    """True when a Result has a dynamic dim: NMS inside the graph decides
    how many detections come out."""
    return any(d < 0 for r in m.results() for d in r.inputs[0].dims)


def make_inputs(name, m, refdir):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    files = []
    for k, p in enumerate(m.parameters()):
        dims = p.outputs[0].dims
        image = len(dims) == 4 and dims[1] == 3 and not name.startswith("yolo")
        x = rng.uniform(0, 255 if image else 1, size=dims).astype(np.float32)
        if image and runtime_count(m):
            # on noise every detection sits at the score threshold, where
            # rounding decides the set; a photo gives real ones
            x = photo(dims)
        et = p.attrs.get("element_type", "f32")
        if et in ("i32", "i64"):
            x = np.zeros(dims, np.int32 if et == "i32" else np.int64)
        f = f"in.{k}.{ 'f32' if et in ('f32', 'f16') else et}"
        x.tofile(os.path.join(refdir, f))
        files.append((p.name, f))
    return files


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def make_reference(name, xml, build, timing):
    import onnx
    from ir_to_onnx import convert
    refdir = os.path.join(os.path.dirname(xml), "ref")
    os.makedirs(refdir, exist_ok=True)
    m = Model(xml)
    outs = compared_outputs(m)
    onnx_path = os.path.join(refdir, "model.onnx")
    try:
        convert(xml, onnx_path, [f"{layer}.{port}" for layer, port in outs])
    except Exception as e:  # noqa: BLE001 - the reason goes into the table
        return {"ref": f"no ONNX translation: {e}"}
    inputs = make_inputs(name, m, refdir)
    g = onnx.load(onnx_path).graph
    onnx_in = [i.name for i in g.input]
    onnx_out = [o.name for o in g.output]
    dump = os.path.join(refdir, "ort")
    cmd = ["node", os.path.join(ROOT, "tests/bench/onnx/ort-run.mjs"), "--model", onnx_path,
           "--threads", "1", "--runs", "20" if timing else "1", "--warmup", "3" if timing else "0",
           "--dump", dump, "--json", "--ort-dir", ORT_DIR]
    for pname, f in inputs:  # ONNX inputs are named after the Parameters (unused ones pruned)
        if pname in onnx_in:
            cmd += ["--input", f"{pname}={os.path.join(refdir, f)}"]
    r = run(cmd)
    if r.returncode:
        return {"ref": "ONNX Runtime failed: " + r.stderr.strip().splitlines()[-1]}
    ort = json.loads(r.stdout)
    meta = [f"input\t{f}" for _, f in inputs]
    for k, ((layer, port), oname) in enumerate(zip(outs, onnx_out)):
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", oname)
        os.replace(os.path.join(dump, f"{safe}.f32"), os.path.join(refdir, f"out.{k}.f32"))
        meta.append(f"output\t{layer}\t{port}\tout.{k}.f32")
    with open(os.path.join(refdir, "meta.tsv"), "w") as f:
        f.write("\n".join(meta) + "\n")
    return {"ort_ms": ort["median_ms"], "ort_version": ort["version"]}


def m2i_time(xml, build, name):
    args = [os.path.join(build, "m2i-core/tools/m2i-ir-run"), xml, "-q", "-k", "0", "-b", "-n", "1",
            "--iterations", "20"]
    r = run(args)
    mm = re.search(r"latency ms: median ([0-9.]+)", r.stdout)
    return float(mm.group(1)) if mm else None


def verdicts(build, only):
    env = dict(os.environ, M2I_SOURCE_ROOT=ROOT, M2I_MODEL_CACHE=CACHE, LC_ALL="C.UTF-8")
    r = run([os.path.join(build, "tests/ir/test-ir-model-set"), "--verbose"], env=env)
    out = {}
    for line in (r.stdout + r.stderr).splitlines():
        mm = re.match(r"# model-set:\t([^\t]+)\t([^\t]+)\t(.*)", line)
        if mm:
            out[mm.group(1)] = (mm.group(2), mm.group(3))
    return out


def ir_facts(xml):
    text = open(xml, encoding="utf-8", errors="replace").read(400000)
    ver = re.search(r'<net [^>]*version="(\d+)"', text)
    mo = (re.search(r'<MO_version value="([^"]*)"', text) or
          re.search(r'<Runtime_version value="([^"]*)"', text))
    fw = re.search(r'<framework value="([^"]*)"', text)
    return (int(ver.group(1)) if ver else None, mo.group(1) if mo else "?",
            fw.group(1) if fw else None)


KIND = {
    "face-detection": "face detector (SSD)", "pedestrian-detection": "pedestrian detector (SSD)",
    "person-detection": "person detector (SSD)", "person-vehicle-bike-detection-2003": "detector (NMS inside, dynamic)",
    "person-vehicle-bike": "detector (SSD)", "gaze-estimation": "gaze regression (3 inputs)",
    "head-pose": "head pose regression", "landmarks": "facial landmarks", "open-closed-eye": "classifier",
    "age-gender": "attributes (age, gender)", "person-attributes": "person attributes",
    "vehicle-attributes": "vehicle attributes", "single-image-super-resolution": "super-resolution",
    "text-image-super-resolution": "super-resolution", "license-plate": "OCR (CTC)",
    "person-reidentification": "re-identification", "yolov8n-pose": "YOLO pose",
    "yolo": "YOLO detector", "human-pose": "pose (heatmaps, PAFs)",
}


def kind(name, xml):
    k = next((v for p, v in KIND.items() if name.startswith(p)), "?")
    text = open(xml, encoding="utf-8", errors="replace").read()
    # depthwise: GroupConvolution weights [G, 1, 1, kh, kw]
    dw = len(re.findall(r'type="GroupConvolution".*?<input>.*?</port>\s*<port id="\d+"[^>]*>\s*'
                        r'<dim>\d+</dim>\s*<dim>1</dim>\s*<dim>1</dim>', text, re.S))
    return k + (f"; {dw} depthwise" if dw else "")


def precision(name):
    return "INT8" if name.endswith("int8") else "FP16" if name.endswith("fp16") else "FP32"


def table(rows, results, path):
    n = len(results)
    ok = sum(1 for r in results.values() if r.get("verdict") == "matches")
    loads = sum(1 for r in results.values() if r.get("verdict") in ("matches", "differs", "loads"))
    lines = [
        "# The public model set",
        "",
        "Real OpenVINO IR files, converted by OpenVINO's own tools and taken from public",
        "repositories, that m2i loads and checks against ONNX Runtime. The files stay",
        "outside the repository: `tests/models/fetch-model-set.sh` extracts them from git",
        "mirrors of their repositories (`tests/models/model-set.tsv`: repository, commit,",
        "path, git blob, sha256 of every file) into `~/.cache/m2i-models` (`$M2I_MODEL_CACHE`),",
        "with `git show COMMIT:PATH` and a sha256 check. The mirrors are bare git",
        "repositories under `$M2I_MIRROR_DIR` (default `/work/.mirror/OWNER+NAME/repo`, as",
        "the workplace's `fetch` tool lays them out; `git clone --mirror` makes the same);",
        "nothing is downloaded by the script. Then",
        "`tests/models/model-coverage.py` makes the ONNX Runtime references there and",
        "writes this page. `meson test -C build --suite slow ir-model-set` compares.",
        "",
        f"**{loads} of {n} load; {ok} of {n} match ONNX Runtime** (this run).",
        "",
        "How: each model gets a fixed random input (uniform [0, 255) for 3-channel",
        "Open Model Zoo images, [0, 1) otherwise; a detector whose NMS decides how many",
        "boxes come out gets python3-skimage's astronaut photo, since on noise every box",
        "sits at the score threshold); ONNX Runtime runs the IR translated",
        "by `tests/bench/onnx/ir_to_onnx.py` (f16 weights widened to f32, FakeQuantize as",
        "its formula); m2i runs the IR. \"max |diff|\" is the largest difference over all",
        "compared outputs, as a fraction of the largest |output| (at least 1); outputs of",
        "DetectionOutput and CTCGreedyDecoder (no ONNX equivalent) are compared at their",
        "inputs. Times: median of 20 inferences at one thread, m2i-ir-run -b -n 1 and",
        "ort-run.mjs (onnxruntime-node), same machine, same run of this script.",
        "",
        "| model | kind | source | IR | precision | loads | matches ONNX Runtime (max diff / tolerance) | m2i ms | ORT ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        row = rows[name]
        src = f"{row['repo']} @ {row['commit'][:8]}"
        if r.get("verdict") in ("matches", "differs"):
            mm = re.search(r"([0-9.e+-]+|inf) of the largest \|output\| \(tolerance ([0-9.e+-]+)\)",
                           r["detail"])
            match = (f"{'yes' if r['verdict'] == 'matches' else '**no**'} ({mm.group(1)} / {mm.group(2)})"
                     if mm else r["detail"])
            if mm and r["detail"].startswith("detections:"):  # a set of boxes of another count
                match += ", as a set: " + r["detail"].split(",")[0][len("detections: "):] + \
                    ", paired by IoU; the rest at the score threshold"
            loads_cell = "yes"
        elif r.get("verdict") == "loads":
            loads_cell, match = "yes", r.get("ref", r["detail"])
        else:
            why = re.sub(r"^\S+\.xml(:\d+)?: ", "", r.get("detail", "?"))
            why = why.split(". A custom-op plugin")[0]
            loads_cell, match = "**no**: " + why.replace("|", "\\|"), "—"
        t = lambda v: f"{v:.2f}" if isinstance(v, float) else "—"  # noqa: E731
        lines.append(f"| {name} | {r['kind']} | {src} | v{r['ir']} ({r['producer']}) | {precision(name)} | "
                     f"{loads_cell} | {match} | {t(r.get('m2i_ms'))} | {t(r.get('ort_ms'))} |")
    lines += ["", f"CPU: {cpu()}; generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def cpu():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip() + f", {os.cpu_count()} cores (shared)"
    except OSError:
        pass
    return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--no-refs", action="store_true", help="keep the references in the cache")
    ap.add_argument("--no-time", action="store_true", help="do not time")
    ap.add_argument("--table", default=os.path.join(ROOT, "docs", "model-coverage.md"))
    args = ap.parse_args()
    rows = manifest()
    names = [n for n in rows if not args.only or n in args.only.split(",")]
    results = {}
    for name in names:
        xml_rel = next(p for p in rows[name]["files"] if p.endswith(".xml"))
        xml = os.path.join(CACHE, name, os.path.basename(xml_rel))
        if not os.path.exists(xml):
            print(f"{name}: not in the cache", file=sys.stderr)
            continue
        ir, producer, _ = ir_facts(xml)
        r = {"ir": ir, "producer": producer, "kind": kind(name, xml)}
        if not args.no_refs:
            r.update(make_reference(name, xml, args.build, not args.no_time))
        if not args.no_time:
            r["m2i_ms"] = m2i_time(xml, args.build, name)
        results[name] = r
        print(f"{name}: {r}", file=sys.stderr)
    # times and references of an earlier run, for what this one skipped
    saved_path = os.path.join(CACHE, "coverage.json")
    saved = json.load(open(saved_path)) if os.path.exists(saved_path) else {}
    for name, r in results.items():
        for k, val in saved.get(name, {}).items():
            r.setdefault(k, val)
    v = verdicts(args.build, names)
    for name, r in results.items():
        if name in v:
            r["verdict"], r["detail"] = v[name]
    saved.update({n: {k: r[k] for k in ("ort_ms", "ort_version", "m2i_ms") if r.get(k) is not None}
                  for n, r in results.items()})
    with open(saved_path, "w") as f:
        json.dump(saved, f, indent=1)
    if args.table and not args.only:
        table(rows, results, args.table)
    for name, r in results.items():
        print(f"{name}\t{r.get('verdict')}\t{r.get('detail', r.get('ref', ''))}")


if __name__ == "__main__":
    main()
