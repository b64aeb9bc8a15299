#!/bin/bash
# Validation (issue 37, item 5): the Timeloop/Accelergy simple_weight_stationary layer compiled
# and simulated on sws.yaml (that design, its per-action figures), level by level against the
# published reference output. docs/energy.md, "Validation", has the result.
#   experiments/energy/validation/run.sh [path/to/tessel]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tessel=${1:-$here/../../../build/default/tools/tessel/tessel}
python=${TESSEL_PYTHON:-/usr/bin/python3}  # onnx, numpy: Debian's python3 has them
out=$here/../results/validation
mkdir -p "$out"
"$python" "$here/make_conv.py" "$out/conv.onnx"
# The layer as Timeloop has it: no space-to-depth rewrite of the stride-2 conv.
"$tessel" compile -m "$out/conv.onnx" --hw "$here/sws.yaml" -p layerwise --no-s2d-stem \
  -o "$out/compile"
"$tessel" sim "$out/compile" --timing-only
"$python" "$here/compare.py" "$out/compile/report.json" --json "$out/validation.json"
