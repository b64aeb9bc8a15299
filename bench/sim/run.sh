#!/usr/bin/env bash
# Builds and runs the simulation-speed benchmark; prints and saves JSON (bench/sim/results.json).
# Usage: bench/sim/run.sh [BUILD_DIR] [HW_YAML] [TILES]   (defaults: build/default, edge-small, 25000)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/default}"
cmake --build "$build" --target tessel_sim_speed
"$build/bench/sim/tessel_sim_speed" "${2:-$root/configs/hw/edge-small.yaml}" "${3:-25000}" |
  tee "${RESULTS:-$root/bench/sim/results.json}"
