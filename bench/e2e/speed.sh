#!/usr/bin/env bash
# Speed of the pipeline on ResNet-50 batch 1, side by side with onnxruntime fp32 (issue 8):
#   full functional + cycle simulation <= 2x onnxruntime, --timing-only <= 0.2x,
#   `tessel compile --policy optimal` <= 2 s.
#   bench/e2e/speed.sh [BUILD_DIR] [HW] [POLICY]   (needs .cache/models/resnet50.onnx and
#   .cache/ort: experiments/models/export_torchvision.py, tests/oracles/setup_ort.sh)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/default}
hw=${2:-npc19-deepfusion}
policy=${3:-optimal}
tessel=$build/tools/tessel/tessel
work=$root/.cache/e2e/speed
mkdir -p "$work"
now() { date +%s.%N; }
# Wall times on a shared machine depend on its load: say what it was.
# (`nproc` alone would honour OMP_NUM_THREADS.)
echo "$(nproc --all) cores, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg), build $build"
/usr/bin/python3 -c "import numpy as np; np.save('$work/input.npy', np.random.default_rng(0).standard_normal((1, 3, 224, 224), dtype=np.float32))"

# CPU seconds (user + sys, all threads) of each tessel process beside its wall time: on a
# loaded machine the wall time is mostly waiting for a core.
cpu() { /usr/bin/time -f "%U %S" -o "$work/$1.cpu" "${@:2}"; }
t0=$(now)
cpu compile "$tessel" compile --model resnet50 --hw "$hw" --policy "$policy" --out "$work/compiled" \
  >"$work/compile.log"
t1=$(now)
cpu full "$tessel" sim "$work/compiled" --input "$work/input.npy" --out "$work/full" >"$work/full.log"
t2=$(now)
cpu timing "$tessel" sim "$work/compiled" --timing-only --out "$work/timing" >"$work/timing.log"
t3=$(now)
ort_ms=$(node "$root/tests/oracles/ort_run.js" "$root/.cache/models/resnet50.onnx" "$work/input.npy" \
  "$work/ort.npy" --runs 5 | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['ms_per_run'])")

/usr/bin/python3 - "$t0" "$t1" "$t2" "$t3" "$ort_ms" "$work" <<'PY'
import sys
t0, t1, t2, t3, ort_ms = map(float, sys.argv[1:6])
work = sys.argv[6]
cpu = {k: sum(map(float, open(f"{work}/{k}.cpu").read().split()[-2:]))
       for k in ("compile", "full", "timing")}
compile_s, full_s, timing_s, ort_s = t1 - t0, t2 - t1, t3 - t2, ort_ms / 1000
print("                         wall        CPU (user+sys)")
print(f"onnxruntime fp32        {ort_s:8.3f} s")
print(f"tessel compile          {compile_s:8.3f} s   {cpu['compile']:7.2f} s   (goal <= 2 s)")
print(f"tessel sim (full)       {full_s:8.3f} s   {cpu['full']:7.2f} s   "
      f"{full_s / ort_s:7.2f}x ort (goal <= 2x)")
print(f"tessel sim timing-only  {timing_s:8.3f} s   {cpu['timing']:7.2f} s   "
      f"{timing_s / ort_s:7.2f}x ort (goal <= 0.2x)")
PY
