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
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), build $build"
/usr/bin/python3 -c "import numpy as np; np.save('$work/input.npy', np.random.default_rng(0).standard_normal((1, 3, 224, 224), dtype=np.float32))"

t0=$(now)
"$tessel" compile --model resnet50 --hw "$hw" --policy "$policy" --out "$work/compiled" >"$work/compile.log"
t1=$(now)
"$tessel" sim "$work/compiled" --input "$work/input.npy" --out "$work/full" >"$work/full.log"
t2=$(now)
"$tessel" sim "$work/compiled" --timing-only --out "$work/timing" >"$work/timing.log"
t3=$(now)
ort_ms=$(node "$root/tests/oracles/ort_run.js" "$root/.cache/models/resnet50.onnx" "$work/input.npy" \
  "$work/ort.npy" --runs 5 | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['ms_per_run'])")

/usr/bin/python3 - "$t0" "$t1" "$t2" "$t3" "$ort_ms" <<'PY'
import sys
t0, t1, t2, t3, ort_ms = map(float, sys.argv[1:])
compile_s, full_s, timing_s, ort_s = t1 - t0, t2 - t1, t3 - t2, ort_ms / 1000
print(f"onnxruntime fp32        {ort_s:8.3f} s")
print(f"tessel compile          {compile_s:8.3f} s   (goal <= 2 s)")
print(f"tessel sim (full)       {full_s:8.3f} s   {full_s / ort_s:7.2f}x ort (goal <= 2x)")
print(f"tessel sim timing-only  {timing_s:8.3f} s   {timing_s / ort_s:7.2f}x ort (goal <= 0.2x)")
PY
