#!/bin/bash
# Energy vs buffer size (resumable), its plots, and the energy-optimal buffer per model.
#   experiments/energy/run.sh [path/to/tessel] [-j N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tessel=${1:-$here/../../build/default/tools/tessel/tessel}
shift || true
mkdir -p "$here/results"
"$tessel" sweep "$here/spec.yaml" --out "$here/results/results.jsonl" "$@"
"$tessel" plot "$here/results/results.jsonl" --kind energy-breakdown --out "$here/results/plots"
"$tessel" plot "$here/results/results.jsonl" --kind pareto --x area --y energy \
  --out "$here/results/plots"
python3 "$here/energy_vs_buffer.py" "$here/results/results.jsonl" --out "$here/results/plots"
