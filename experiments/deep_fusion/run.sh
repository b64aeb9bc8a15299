#!/usr/bin/env bash
# One command: build the driver, schedule 5 nets x 5 policies on npc19-deepfusion, plot.
# Usage: experiments/deep_fusion/run.sh [BUILD_DIR]   (results in experiments/deep_fusion/results/)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/build/default}"
results="$here/results"
mkdir -p "$results"
cmake --build "$build" --target deep_fusion_run
"$build/experiments/deep_fusion/deep_fusion_run" --cycle-breakdown --out "$results/deep_fusion.csv" \
  2> >(tee "$results/run.log" >&2)
/usr/bin/python3 "$here/plot.py" "$results/deep_fusion.csv" "$results"
echo "wrote $results/{deep_fusion.csv,reduction.png,speedup.png,deep_fusion.md,run.log}"
