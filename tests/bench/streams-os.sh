#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# streams-os.sh — what the kernel sees of m2i with many streams, for one
# build (run it on two builds, e.g. main's and this one's, to compare):
#
#   pool:   futex calls, context switches and CPU time (perf stat) of
#           videotestsrc ! 1080p NV12 ! m2icolorconvert ! m2iresize ! m2inorm
#           (frames further apart than the chain takes), default n-threads
#           and n-threads=1, per 1000 frames;
#   memory: maximum RSS (/usr/bin/time -f %M) of gst-launch-1.0 with 1 and 8
#           branches of 1080p NV12 ! m2icolorconvert ! m2iresize ! m2iinfer
#           person-detection-retail-0013, a model per branch and a shared
#           instance, device AUTO and CPU; and of videotestsrc alone.
#
#   tests/bench/streams-os.sh BUILD_DIR [pool|memory]
# Needs perf (linux-perf) with the syscalls tracepoints, and ../shared.
set -eu
B=$(cd "$1" && pwd)
WHAT=${2:-all}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
M=$ROOT/../shared/models/external/person-detection-retail-0013/person-detection-retail-0013.xml
export GST_PLUGIN_PATH="$B/gst" GST_REGISTRY="${TMPDIR:-/tmp}/m2i-streams-os-$$.bin"
SRC="video/x-raw,format=NV12,width=1920,height=1080,framerate=30/1"
gst-inspect-1.0 m2iinfer >/dev/null   # the registry first: its scan loads every plugin
echo "build $B; $(lscpu | grep 'Model name' | tr -s ' '); $(nproc) cores; load average $(cut -d' ' -f1 /proc/loadavg)"
if [ "$WHAT" != memory ]; then
  for T in "" "n-threads=1"; do
    # shellcheck disable=SC2086
    perf stat -x, -e syscalls:sys_enter_futex,context-switches,task-clock -o "$GST_REGISTRY.perf" \
      gst-launch-1.0 -q videotestsrc num-buffers=1000 ! $SRC ! m2icolorconvert ! m2iresize ! \
      m2inorm "mean=<0.485,0.456,0.406>" "std=<0.229,0.224,0.225>" \
      input-scale=0.00392156862745098 $T ! \
      other/tensors,format=static,num_tensors=1,types=float16,dimensions=224:224:3:1 ! \
      fakesink >/dev/null
    awk -F, -v t="${T:-n-threads default}" '/futex/{f=$1} /context-switches/{c=$1} /task-clock/{k=$1}
      END {printf "pool %-18s per 1000 frames: %6d futex calls %6d context switches %8.0f CPU ms\n", t, f, c, k}' \
      "$GST_REGISTRY.perf"
  done
fi
if [ "$WHAT" != pool ]; then
  if [ ! -f "$M" ]; then echo "memory: skipped, $M not found"; exit 0; fi
  base=$(/usr/bin/time -f %M gst-launch-1.0 -q videotestsrc num-buffers=3 ! $SRC ! fakesink 2>&1 >/dev/null | tail -1)
  echo "memory: videotestsrc alone $((base / 1024)) MB maximum RSS; below, the pipelines' minus that"
  for D in AUTO CPU; do
    for S in 1 8; do
      for X in "" "model-instance-id=pd"; do
        P=""
        for i in $(seq "$S"); do
          P="$P videotestsrc num-buffers=3 ! $SRC ! m2icolorconvert ! m2iresize ! m2iinfer model=$M channel-order=bgr device=$D $X ! fakesink"
        done
        # shellcheck disable=SC2086
        k=$(/usr/bin/time -f %M gst-launch-1.0 -q $P 2>&1 >/dev/null | tail -1)
        printf "memory device=%-4s %d stream%s %-22s %5d MB\n" "$D" "$S" "$( [ "$S" = 1 ] && echo " " || echo s)" \
          "${X:-a model per stream}" $(((k - base) / 1024))
      done
    done
  done
fi
rm -f "$GST_REGISTRY" "$GST_REGISTRY.perf"
