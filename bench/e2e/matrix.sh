#!/usr/bin/env bash
# The whole-zoo end-to-end matrix (issue 8): every model x shipped config, every policy, full
# functional + cycle simulation through `tessel run`; one summary line per (model, config,
# policy) with bit exactness, simulated vs predicted bytes and cycles.
#   bench/e2e/matrix.sh [BUILD_DIR] [MODELS...]     (results: .cache/e2e/<model>-<config>/)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/default}
shift || true
models=${*:-"resnet18 resnet50 vgg19 googlenet inception_v3 mobilenet_v2"}
configs="npc19-deepfusion vta-pynq edge-small cloud-large"
tessel=$build/tools/tessel/tessel
out=$root/.cache/e2e
mkdir -p "$out"
for model in $models; do
  for config in $configs; do
    dir=$out/$model-$config
    start=$(date +%s.%N)
    nice -n 10 "$tessel" run --model "$model" --hw "$config" --out "$dir" >"$dir.log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    printf '%s %s rc=%d %.1fs\n' "$model" "$config" "$rc" "$(echo "$end - $start" | bc)"
  done
done
/usr/bin/python3 "$root/bench/e2e/summarize.py" "$out"
