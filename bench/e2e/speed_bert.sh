#!/usr/bin/env bash
# Speed of `tessel sim` on one BERT-base encoder layer (sequence 128, batch 1), side by side with
# onnxruntime fp32 on the same layer (issue 36 item 6): full simulation <= 2x onnxruntime,
# --timing-only <= 0.1x. speed.py measures and prints the table (as speed.sh does for ResNet-50).
#   bench/e2e/speed_bert.sh [BUILD_DIR] [HW] [POLICY] [OBJECTIVE]   (default cloud-large optimal bytes)
# Needs python3-torch + python3-onnx once (experiments/models/export_transformers.py --layers 1
# writes the one-layer ONNX into the work folder) and .cache/ort (tests/oracles/setup_ort.sh;
# TESSEL_CACHE overrides .cache for ort_time.js). Environment as speed.sh: REPEATS, ORT_RUNS,
# SIM_THREADS, SKIP_COMPILE, BEFORE, BEFORE_THREADS, COMPILE_FLAGS; LAYERS and SEQ (1, 128).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/default}
hw=${2:-cloud-large}
policy=${3:-optimal}
objective=${4:-bytes}
layers=${LAYERS:-1}
seq=${SEQ:-128}
work=$root/.cache/e2e/speed-bert_base-l$layers-s$seq
mkdir -p "$work/models"
echo "$(nproc --all) cores, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg), build $build"
if [ ! -f "$work/models/bert_base.onnx" ]; then
  /usr/bin/python3 "$root/experiments/models/export_transformers.py" --out "$work/models" \
    --layers "$layers" --seq "$seq" bert_base
fi
# Tessel's side: the zoo's bert_base with --layers/--seq as a .json IR (`tessel compile` takes
# no zoo options); the same seeded weights as `tessel import bert_base --layers N --seq N`.
ir="$work/bert_base-l$layers-s$seq.json"
[ -f "$ir" ] || "$build/tools/tessel/tessel" import bert_base --layers "$layers" --seq "$seq" \
  --json --out "$ir"
/usr/bin/python3 -c "import numpy as np; np.save('$work/input.npy', np.random.default_rng(0).standard_normal((1, $seq, 768), dtype=np.float32))"
exec /usr/bin/python3 "$root/bench/e2e/speed.py" --tessel "$build/tools/tessel/tessel" --hw "$hw" \
  --policy "$policy" --objective "$objective" --work "$work" --model "$work/models/bert_base.onnx" \
  --ort "$root/bench/e2e/ort_time.js" --tessel-model "$ir" \
  --label "bert_base --layers $layers --seq $seq" --timing-goal 0.1 \
  ${BEFORE:+--before "$BEFORE"} ${SKIP_COMPILE:+--skip-compile} --repeats "${REPEATS:-3}" \
  --ort-runs "${ORT_RUNS:-10}" --sim-threads "${SIM_THREADS:-2}" \
  ${BEFORE_THREADS:+--before-threads "$BEFORE_THREADS"} --compile-flags="${COMPILE_FLAGS:-}"
