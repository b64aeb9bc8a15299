#!/bin/sh
# Verilator speed on a conv layer: simulated kHz with 1 and 2 model threads (bench/rtl/README.md).
# Usage: bench/rtl/run.sh [TESSEL]   (default build/h-rtl2/tools/tessel/tessel; needs the
# micro model built with TESSEL_RTL_THREADED_CONFIGS=micro for the 2-thread row)
set -e
TESSEL=${1:-build/h-rtl2/tools/tessel/tessel}
DIR=$(dirname "$0")
for threads in 1 2; do
  echo "threads $threads:"
  "$TESSEL" rtl "$DIR/conv_layer.tasm" --hw tests/isa/programs/micro.yaml --threads $threads \
    | grep -E "^(status|cycles|speed)"
done
