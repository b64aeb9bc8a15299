#!/usr/bin/env bash
# ResNet-50 batch 1 and 32 on the local GPU: Tessel int8 (`tessel gpu`) vs PyTorch fp16
# channels-last (torch_resnet50.py); prints the latency ratios and keeps the JSON reports in
# .cache/bench-gpu/. Usage: bench/gpu/run.sh [BUILD_DIR]   (default build/default)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/default}"
tessel="$build/tools/tessel/tessel"
out="$root/.cache/bench-gpu"
mkdir -p "$out"
[[ -x "$tessel" ]] || { echo "no tessel binary at $tessel (build with CUDA first)" >&2; exit 1; }

for batch in 1 32; do
  echo "== batch $batch: Tessel int8"
  "$tessel" gpu --model resnet50 --batch "$batch" --runs 50 --warmup 10 \
    --json "$out/tessel_b$batch.json"
  echo "== batch $batch: PyTorch fp16 channels-last"
  /usr/bin/python3 "$root/bench/gpu/torch_resnet50.py" --batch "$batch" --runs 50 \
    | tee "$out/torch_b$batch.json"
done

/usr/bin/python3 - "$out" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
print(f"\n{'batch':>5} {'tessel int8 ms':>15} {'torch fp16 ms':>14} {'ratio':>7}  (goal <= 1.5)")
for b in (1, 32):
    t = json.loads((out / f"tessel_b{b}.json").read_text())["latency_ms"]["median"]
    p = json.loads((out / f"torch_b{b}.json").read_text())["latency_ms"]["median"]
    print(f"{b:>5} {t:>15.3f} {p:>14.3f} {t / p:>7.2f}")
PY
