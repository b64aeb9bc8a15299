#!/bin/bash
# Validation (issue 37, item 5): the layer of the Timeloop/Accelergy reference outputs compiled
# and simulated on two of their example designs with the references' per-action figures, level
# by level and data space by data space against the published outputs. docs/energy.md,
# "Validation", has the result.
#   sws.yaml          simple_weight_stationary
#   sws-by-kind.yaml  the same, its global buffer split by data kind (attribution only)
#   sos.yaml          simple_output_stationary
#   experiments/energy/validation/run.sh [path/to/tessel]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tessel=${1:-$here/../../../build/default/tools/tessel/tessel}
python=${TESSEL_PYTHON:-/usr/bin/python3}  # onnx, numpy: Debian's python3 has them
out=$here/../results/validation
mkdir -p "$out"
"$python" "$here/make_conv.py" "$out/conv.onnx"
for design in sws sws-by-kind sos; do
  # The layer as Timeloop has it: no space-to-depth rewrite of the stride-2 conv.
  "$tessel" compile -m "$out/conv.onnx" --hw "$here/$design.yaml" -p layerwise --no-s2d-stem \
    -o "$out/$design"
  "$tessel" sim "$out/$design" --timing-only > "$out/$design/sim.txt"
done
echo "== simple_weight_stationary (sws.yaml)"
"$python" "$here/compare.py" sws "$out/sws/report.json" --json "$out/validation-sws.json"
echo "== simple_weight_stationary, the glb by data kind (sws-by-kind.yaml)"
"$python" "$here/compare.py" sws "$out/sws-by-kind/report.json" --base "$out/sws/report.json" \
  --json "$out/validation-sws-by-kind.json"
echo "== simple_output_stationary (sos.yaml)"
"$python" "$here/compare.py" sos "$out/sos/report.json" --json "$out/validation-sos.json"
