#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Check the ONNX side of the peer benchmark with ONNX Runtime itself.

    /usr/bin/python3 tests/bench/onnx/verify.py --ort-dir DIR [--work /tmp/m2i-onnx]

DIR holds node_modules/onnxruntime-node (npm install --ignore-scripts
onnxruntime-node). Checks, printing each figure:
 1. squeezenet1.1 IR (../shared/models/external) -> ir_to_onnx.py -> ORT gives
    the top-5 of ../shared/models/external/reference on chelsea and coffee;
 2. tests/bench/onnx/fashion-mnist.onnx (torch.onnx.export) -> ORT gives
    torch's probabilities (tests/data/fashion-mnist/first64.prob.f32);
 3. models/fashion-mnist/fashion-mnist.xml -> ir_to_onnx.py -> ORT gives them
    too (an independent runtime confirms the project's own IR).
Exit status 1 if any check fails; the squeezenet check is skipped (said so)
when ../shared is absent.
"""

import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
from ir_to_onnx import convert  # noqa: E402

SHARED = os.environ.get("M2I_SHARED_MODELS",
                        os.path.join(TOP, "..", "shared", "models", "external"))
FM_DATA = os.path.join(TOP, "tests", "data", "fashion-mnist")


def ort_run(ort_dir, model, inputs, dump):
    cmd = ["node", os.path.join(HERE, "ort-run.mjs"), "--ort-dir", ort_dir, "--model", model,
           "--runs", "1", "--warmup", "0", "--dump", dump]
    for name, path in inputs.items():
        cmd += ["--input", f"{name}={path}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def ort_batch(ort_dir, model, input_name, output_file, inputs, work):
    """Run a batch-1 model over each row of inputs; returns the outputs."""
    outs = []
    for i, x in enumerate(inputs):
        path = os.path.join(work, "in.f32")
        x.astype("<f4").tofile(path)
        ort_run(ort_dir, model, {input_name: path}, os.path.join(work, "out"))
        outs.append(np.fromfile(os.path.join(work, "out", output_file), dtype="<f4"))
    return np.stack(outs)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ort-dir", default=os.environ.get("M2I_ORT_DIR"), required=False)
    ap.add_argument("--work", default="/tmp/m2i-onnx")
    ap.add_argument("--images", type=int, default=64, help="how many of the first 64 to run")
    args = ap.parse_args()
    if not args.ort_dir:
        sys.exit("give --ort-dir (or M2I_ORT_DIR): a folder with node_modules/onnxruntime-node")
    os.makedirs(args.work, exist_ok=True)
    failed = False

    sq_xml = os.path.join(SHARED, "squeezenet1.1", "squeezenet1.1.xml")
    ref = os.path.join(SHARED, "reference")
    if os.path.exists(sq_xml):
        sq_onnx = os.path.join(args.work, "squeezenet1.1.onnx")
        convert(sq_xml, sq_onnx)
        for img in ("chelsea", "coffee"):
            dump = os.path.join(args.work, f"sq-{img}")
            ort_run(args.ort_dir, sq_onnx,
                    {"data": os.path.join(ref, f"squeezenet1.1.{img}.input.f32")}, dump)
            got = np.fromfile(os.path.join(dump, "prob.f32"), dtype="<f4")
            want = np.fromfile(os.path.join(ref, f"squeezenet1.1.{img}.output.f32"), dtype="<f4")
            top_got, top_want = np.argsort(-got)[:5], np.argsort(-want)[:5]
            ok = list(top_got) == list(top_want)
            failed |= not ok
            print(f"squeezenet1.1 {img}: ORT top-5 {list(top_got)}, reference {list(top_want)}, "
                  f"max |diff| {np.abs(got - want).max():.3g} -> {'ok' if ok else 'FAIL'}")
    else:
        print(f"squeezenet1.1: skipped, {sq_xml} absent")

    n = args.images
    x = np.fromfile(os.path.join(FM_DATA, "first64.input.f32"), dtype="<f4").reshape(64, 1, 3, 28, 28)[:n]
    want = np.fromfile(os.path.join(FM_DATA, "first64.prob.f32"), dtype="<f4").reshape(64, 10)[:n]
    fm_ir_onnx = os.path.join(args.work, "fashion-mnist-from-ir.onnx")
    convert(os.path.join(TOP, "models", "fashion-mnist", "fashion-mnist.xml"), fm_ir_onnx)
    for label, model, out_name in (
            ("torch.onnx.export", os.path.join(HERE, "fashion-mnist.onnx"), "prob.f32"),
            ("IR via ir_to_onnx", fm_ir_onnx, "prob.f32")):
        got = ort_batch(args.ort_dir, model, "input", out_name, x, args.work)
        diff = float(np.abs(got - want).max())
        same = int((got.argmax(1) == want.argmax(1)).sum())
        ok = diff <= 1e-5 and same == n
        failed |= not ok
        print(f"fashion-mnist ({label}): ORT vs torch on {n} images: max |diff| {diff:.3g}, "
              f"{same}/{n} same class -> {'ok' if ok else 'FAIL'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
