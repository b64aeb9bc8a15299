#!/usr/bin/env bash
# One command: every policy's DRAM bytes and the bytes bound (tessel bound) on the six zoo
# models at each capacity of npc19-deepfusion's unified buffer; writes results/ski_slope.csv
# (deep_fusion_run's columns + capacity_bytes) and results/ski_slope.md (optimal bytes / bound
# per capacity; every row checked: no policy below the bound).
# Usage: experiments/deep_fusion/ski_slope.sh [BUILD_DIR] [CAPACITIES]
#   CAPACITIES: space-separated sizes (default "256KiB 512KiB 768KiB 1MiB 2MiB 4MiB 8MiB")
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/build/default}"
capacities="${2:-256KiB 512KiB 768KiB 1MiB 2MiB 4MiB 8MiB}"
results="$here/results"
mkdir -p "$results"
cmake --build "$build" --target deep_fusion_run
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
models=vgg19,googlenet,inception_v3,resnet18,resnet50,mobilenet_v2
for c in $capacities; do
  # The config with only the unified buffer's size replaced.
  sed "s/^    size: 768KiB$/    size: $c/" "$root/configs/hw/npc19-deepfusion.yaml" >"$tmp/hw-$c.yaml"
  grep -q "size: $c\$" "$tmp/hw-$c.yaml" || { echo "error: could not set size $c" >&2; exit 1; }
  "$build/experiments/deep_fusion/deep_fusion_run" --hw "$tmp/hw-$c.yaml" --models "$models" \
    --out "$tmp/$c.csv" 2>"$tmp/$c.log" ||
    { echo "@$c: some (model, policy) pairs have no schedule:" >&2; grep -v groups "$tmp/$c.log" >&2; }
done
/usr/bin/python3 "$here/ski_slope.py" "$results" $(for c in $capacities; do echo "$c=$tmp/$c.csv"; done)
echo "wrote $results/{ski_slope.csv,ski_slope.md}"
