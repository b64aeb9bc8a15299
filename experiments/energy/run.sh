#!/bin/bash
# Energy vs buffer size (resumable), its plots, and the energy-optimal buffer per model.
#   experiments/energy/run.sh [path/to/tessel] [-j N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tessel=${1:-$here/../../build/default/tools/tessel/tessel}
shift || true
mkdir -p "$here/results"
"$tessel" sweep "$here/spec.yaml" --out "$here/results/results.jsonl" "$@"
# opfusion and optimal again under the energy objective (their own rows, their own file).
"$tessel" sweep "$here/spec-energy.yaml" --out "$here/results/results-energy.jsonl" "$@"
"$tessel" plot "$here/results/results.jsonl" --kind energy-breakdown --out "$here/results/plots"
"$tessel" plot "$here/results/results.jsonl" --kind pareto --x area --y energy \
  --out "$here/results/plots"
# matplotlib: Debian's python3 (python3-matplotlib) unless TESSEL_PYTHON names another, as for
# `tessel plot`.
"${TESSEL_PYTHON:-/usr/bin/python3}" "$here/energy_vs_buffer.py" "$here/results/results.jsonl" \
  --out "$here/results/plots" --json "$here/results/optima.json" --config npc19-deepfusion
"${TESSEL_PYTHON:-/usr/bin/python3}" "$here/energy_vs_buffer.py" "$here/results/results-energy.jsonl" \
  --out "$here/results/plots-energy" --json "$here/results/optima-energy.json" \
  --config npc19-deepfusion
# A transformer: one BERT-base layer (sequence 128) on cloud-large, the three buffers scaled
# together (spec-transformer.yaml), under the bytes and the energy objective.
"$tessel" sweep "$here/spec-transformer.yaml" --out "$here/results/results-transformer.jsonl" "$@"
"$tessel" sweep "$here/spec-transformer-energy.yaml" \
  --out "$here/results/results-transformer-energy.jsonl" "$@"
"${TESSEL_PYTHON:-/usr/bin/python3}" "$here/energy_vs_buffer.py" \
  "$here/results/results-transformer.jsonl" --out "$here/results/plots-transformer" \
  --json "$here/results/optima-transformer.json" --config cloud-large
"${TESSEL_PYTHON:-/usr/bin/python3}" "$here/energy_vs_buffer.py" \
  "$here/results/results-transformer-energy.jsonl" --out "$here/results/plots-transformer-energy" \
  --json "$here/results/optima-transformer-energy.json" --config cloud-large
