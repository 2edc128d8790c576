#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The public model set's table from several whole runs of bench-models.py:
each model's m2i/ONNX Runtime ratio at 1 and 2 threads in every run, their
spread, and what the issue asks of them (m2i <= 1.0x ONNX Runtime on every
model at both thread counts; INT8 models at least 1.5x faster).

    /usr/bin/python3 tests/bench/ir/bench-models.py --rounds 2 --seconds 0.5 --json run1.json
    /usr/bin/python3 tests/bench/ir/bench-models.py --rounds 2 --seconds 0.5 --json run2.json
    /usr/bin/python3 tests/bench/ir/models-table.py run1.json run2.json [--markdown OUT.md]

Ratios are of wall latency (each run's figure: the median over its rounds
of a round's median); "CPU" ratios are of the CPU time per inference of
each side's whole process. A model passes at a thread count when its wall
ratio is at most 1.0 in every run (INT8: at most 1/1.5).
"""

import argparse
import json
import sys

INT8_TARGET = 1 / 1.5


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="JSON files of bench-models.py --json")
    ap.add_argument("--markdown", help="write the table here (default: standard output)")
    args = ap.parse_args()
    runs = [load(p) for p in args.runs]
    n = len(runs)
    models, by = [], {}
    for k, r in enumerate(runs):
        for row in r["rows"]:
            key = (row["model"], row["threads"])
            if row["model"] not in models:
                models.append(row["model"])
            by.setdefault(key, [None] * n)[k] = row
    threads = sorted({t for (_, t) in by})

    def cell(rows, what):
        vals = [r[what] for r in rows if r]
        return vals

    head = ["model", "prec.", "dw"]
    for t in threads:
        head += [f"{t}t m2i ms", f"{t}t ORT ms", f"{t}t m2i/ORT per run", f"{t}t CPU m2i/ORT"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    fails, int8 = {t: [] for t in threads}, []
    for m in models:
        first = next(r for t in threads for r in by.get((m, t), []) if r)
        cols = [m, first["precision"], str(first["depthwise"] or "")]
        for t in threads:
            rows = by.get((m, t), [None] * n)
            if not any(rows):
                cols += ["–"] * 4
                continue
            ratios = [r["m2i_ms"] / r["ort_ms"] for r in rows if r]
            cpu = [r["m2i_cpu"] / r["ort_cpu"] for r in rows if r and r["m2i_cpu"] and r["ort_cpu"]]
            target = INT8_TARGET if first["precision"] == "INT8" else 1.0
            bad = max(ratios) > target
            if bad:
                fails[t].append(f"{m} ({max(ratios):.2f})")
            if first["precision"] == "INT8":
                int8.append(max(ratios))
            rng = lambda v: (f"{min(v):.3g}–{max(v):.3g}" if len(v) > 1 else f"{v[0]:.3g}")  # noqa: E731
            ratio_txt = " / ".join(f"{x:.2f}" for x in ratios)
            cols += [rng(cell(rows, "m2i_ms")), rng(cell(rows, "ort_ms")),
                     f"**{ratio_txt}**" if bad else ratio_txt,
                     " / ".join(f"{x:.2f}" for x in cpu) or "–"]
        lines.append("| " + " | ".join(cols) + " |")
    out = lines + [""]
    for k, r in enumerate(runs):
        out.append(f"Run {k + 1}: {r.get('started', '?')} – {r.get('ended', '?')}, commit "
                   f"{r.get('commit', '?')}, load average {' '.join(r.get('load_start', []))} at "
                   f"the start, {' '.join(r.get('load_end', []))} at the end; CPU "
                   f"{r.get('cpu', '?')} ({r.get('cpu_id', '?')}); {r.get('rounds', '?')} rounds "
                   f"of ~{r.get('seconds', '?')} s per side.")
        for name, why in r.get("failures", []):
            out.append(f"  not measured in run {k + 1}: {name}: {why}")
    out.append("")
    for t in threads:
        out.append(f"At {t} thread{'s' if t > 1 else ''}: " + (
            f"{len(fails[t])} model(s) above the target in some run: {', '.join(fails[t])}."
            if fails[t] else f"every model at or below the target in all {n} runs."))
    if int8:
        out.append(f"INT8: at most {max(int8):.2f}x ONNX Runtime's latency (at least "
                   f"{1 / max(int8):.2f}x faster) over every run and thread count.")
    text = "\n".join(out) + "\n"
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
