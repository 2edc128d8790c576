#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# IR runtime benchmark: m2i-ir-run's latency next to ONNX Runtime's (CPU, 1
# and 2 threads) on the same networks, printed as one table.
#
#   tests/bench/ir/bench-ir.sh [BUILD_DIR]         (default: build)
#
# ONNX Runtime comes from npm's onnxruntime-node, installed (with
# --ignore-scripts) into a scratch folder outside the repository:
# $M2I_ORT_DIR, default ~/.cache/m2i-bench-ort. The ONNX files are the same
# networks: tests/bench/onnx/fashion-mnist.onnx, and squeezenet1.1 translated
# from ../shared by tests/bench/onnx/ir_to_onnx.py into that folder. Iterations:
# $M2I_BENCH_ITERATIONS (default 300). The external models: $M2I_SHARED_MODELS
# (default ../shared/models/external).
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ort_dir=${M2I_ORT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/m2i-bench-ort}
iterations=${M2I_BENCH_ITERATIONS:-300}
run="$build/m2i-core/tools/m2i-ir-run"
shared=${M2I_SHARED_MODELS:-$root/../shared/models/external}
py=/usr/bin/python3

if [ ! -d "$ort_dir/node_modules/onnxruntime-node" ]; then
  echo "installing onnxruntime-node into $ort_dir" >&2
  mkdir -p "$ort_dir"
  (cd "$ort_dir" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
fi

onnx_dir="$root/tests/bench/onnx"
mkdir -p "$ort_dir/onnx"
# name|IR .xml|ONNX file|how to make the ONNX file when missing
models="fashion-mnist|$root/models/fashion-mnist/fashion-mnist.xml|$onnx_dir/fashion-mnist.onnx|
squeezenet1.1|$shared/squeezenet1.1/squeezenet1.1.xml|$ort_dir/onnx/squeezenet1.1.onnx|$py $onnx_dir/ir_to_onnx.py $shared/squeezenet1.1/squeezenet1.1.xml $ort_dir/onnx/squeezenet1.1.onnx"

printf '%-15s %7s | %10s %9s | %10s %9s | %8s\n' model threads "m2i med" "m2i p90" "ORT med" "ORT p90" "m2i/ORT"
printf '%s\n' "--------------------------------------------------------------------------------"
echo "$models" | while IFS='|' read -r name xml onnx make; do
  if [ ! -f "$xml" ]; then
    printf '%-15s (skipped: %s is missing)\n' "$name" "$xml"
    continue
  fi
  if [ ! -f "$onnx" ] && [ -n "$make" ]; then
    $make >/dev/null 2>&1 || true
  fi
  for t in 1 2; do
    ours=$("$run" "$xml" -q -k 0 -b -n "$t" --iterations "$iterations" | sed -n 's/^latency ms: median \([0-9.]*\)  p90 \([0-9.]*\).*/\1 \2/p')
    if [ -f "$onnx" ]; then
      peer=$(node "$onnx_dir/ort-run.mjs" --model "$onnx" --threads "$t" --runs "$iterations" \
        --ort-dir "$ort_dir" | sed -n 's/.* median=\([0-9.]*\) ms p90=\([0-9.]*\) ms.*/\1 \2/p')
    else
      peer="- -"
    fi
    set -- $ours $peer
    ratio=$(awk -v a="$1" -v b="$3" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "-" }')
    printf '%-15s %7s | %10.3f %9.3f | %10s %9s | %8s\n' "$name" "$t" "$1" "$2" \
      "$(printf '%.3f' "$3" 2>/dev/null || echo -)" "$(printf '%.3f' "$4" 2>/dev/null || echo -)" "$ratio"
  done
done
echo "(latency in ms per inference, batch 1, median and 90th percentile of $iterations runs;" \
  "m2i/ORT < 1 means m2i is faster)"
