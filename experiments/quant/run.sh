#!/usr/bin/env bash
# The quantization figures: SQNR table (six zoo models x four calibration methods) and the speed
# of the int8 executor beside onnxruntime fp32 on ResNet-50 batch 1 (same input, one run).
#   experiments/quant/run.sh [BUILD_DIR]      (default build/default)
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$repo/build/default}"
bench="$build/experiments/quant/quant_bench"
out="$repo/experiments/quant/results"
mkdir -p "$out"
: > "$out/sqnr.jsonl"
: > "$out/sqnr.txt"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"

echo "== SQNR (int8 vs fp32) =="
# One model at a time, niced (a shared 2-core machine); JSON lines include each method's median
# threshold / max |x| over tensors (how much it clips).
for model in resnet18 resnet50 vgg19 googlenet inception_v3 mobilenet_v2; do
  nice -n 10 "$bench" sqnr --samples 4 "$model" 2>> "$out/sqnr.jsonl" | tee -a "$out/sqnr.txt"
done

echo "== Speed: ResNet-50 batch 1 =="
/usr/bin/python3 "$repo/experiments/models/export_torchvision.py" resnet50 >/dev/null
model="${TESSEL_CACHE:-$repo/.cache}/models/resnet50.onnx"
"$bench" speed --runs 10 --save-input "$out/resnet50_input.npy" "$model" 2> "$out/speed.jsonl"
if "$repo/tests/oracles/setup_ort.sh" >/dev/null; then
  node "$repo/tests/oracles/ort_run.js" "$model" "$out/resnet50_input.npy" "$out/ort_out.npy" \
    --runs 10 | tee -a "$out/speed.jsonl"
else
  echo "onnxruntime not available: speed comparison skipped"
fi

# fp32 executor vs onnxruntime fp32 on the same input: max |diff| relative to the output range.
if [[ -f "$out/ort_out.npy" ]]; then
  /usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np
out = sys.argv[1]
ort = np.load(f"{out}/ort_out.npy").ravel()
fp32 = np.load(f"{out}/resnet50_input.npy.fp32_out.npy").ravel()
int8 = np.load(f"{out}/resnet50_input.npy.int8_out.npy").ravel()
rng = ort.max() - ort.min()
print(f"fp32 vs onnxruntime: max|diff| = {np.abs(fp32 - ort).max():.3g} = "
      f"{np.abs(fp32 - ort).max() / rng:.3g} x output range (goal <= 1e-4)")
sq = 10 * np.log10((ort ** 2).sum() / ((ort - int8) ** 2).sum())
print(f"int8 vs onnxruntime fp32: SQNR {sq:.2f} dB")
PY
fi
