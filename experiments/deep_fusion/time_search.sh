#!/usr/bin/env bash
# Search cost per design point: CPU seconds of fusion+reuse and optimal on ResNet-18/50.
# Usage: experiments/deep_fusion/time_search.sh [BUILD_DIR]   (prints the driver's lines)
# cpu_seconds (std::clock around schedule_graph: net form, search, checker) does not depend on
# how loaded the machine is; search_seconds is the search's wall time.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/build/default}"
cmake --build "$build" --target deep_fusion_run
for policy in fusion+reuse optimal; do
  "$build/experiments/deep_fusion/deep_fusion_run" --models resnet18,resnet50 --policy "$policy" \
    --out /dev/null
done
