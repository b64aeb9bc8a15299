#!/bin/bash
# Runs the buffer x bandwidth sweep (resumable) and draws its three plots into results/.
#   experiments/buffer_bandwidth/run.sh [path/to/tessel] [-j N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tessel=${1:-$here/../../build/default/tools/tessel/tessel}
shift || true
mkdir -p "$here/results"
"$tessel" sweep "$here/spec.yaml" --out "$here/results/results.jsonl" "$@"
for kind in ski-slope bandwidth pareto; do
  "$tessel" plot "$here/results/results.jsonl" --kind "$kind" --out "$here/results/plots"
done
