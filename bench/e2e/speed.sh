#!/usr/bin/env bash
# Speed of the pipeline on ResNet-50 batch 1, side by side with onnxruntime fp32 (issue 8):
#   full functional + cycle simulation <= 2x onnxruntime, --timing-only <= 0.2x,
#   `tessel compile --policy optimal` <= 2 s.
#   bench/e2e/speed.sh [BUILD_DIR] [HW] [POLICY] [OBJECTIVE]   (needs .cache/models/resnet50.onnx and
#   .cache/ort: experiments/models/export_torchvision.py, tests/oracles/setup_ort.sh)
# Environment: BEFORE=/path/to/tessel adds rows for a second binary's `tessel sim` on the same
# compiled program (before/after in one run); SKIP_COMPILE=1 reuses an existing compile folder;
# REPEATS=N runs each `tessel sim` N times (default 3; the table shows the median, and the
# fastest); ORT_RUNS=N timed onnxruntime runs (default 10); SIM_THREADS=N runs every `tessel sim`
# with --threads N (default 2, `tessel sim`'s default), BEFORE_THREADS=N the BEFORE binary's
# (default SIM_THREADS); COMPILE_FLAGS="--no-2d-tiles" adds flags to `tessel compile`
# (a program of its own folder). What each figure is: README.md.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/default}
hw=${2:-npc19-deepfusion}
policy=${3:-optimal}
objective=${4:-bytes}
tessel=$build/tools/tessel/tessel
work=$root/.cache/e2e/speed
mkdir -p "$work"
# Wall times on a shared machine depend on its load: say what it was.
# (`nproc` alone would honour OMP_NUM_THREADS.)
echo "$(nproc --all) cores, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg), build $build"
/usr/bin/python3 -c "import numpy as np; np.save('$work/input.npy', np.random.default_rng(0).standard_normal((1, 3, 224, 224), dtype=np.float32))"
exec /usr/bin/python3 "$root/bench/e2e/speed.py" --tessel "$tessel" --hw "$hw" --policy "$policy" \
  --objective "$objective" \
  --work "$work" --model "$root/.cache/models/resnet50.onnx" --ort "$root/bench/e2e/ort_time.js" \
  ${BEFORE:+--before "$BEFORE"} ${SKIP_COMPILE:+--skip-compile} --repeats "${REPEATS:-3}" \
  --ort-runs "${ORT_RUNS:-10}" --sim-threads "${SIM_THREADS:-2}" \
  ${BEFORE_THREADS:+--before-threads "$BEFORE_THREADS"} --compile-flags="${COMPILE_FLAGS:-}"
