#!/bin/bash
# Sweep throughput benchmark (docs/sweep.md "Throughput"): runs the 2048-point ResNet-50
# fusion+reuse analytic spec (or shard 0/K of it) into a fresh results file and prints the
# runner's summary: points/min, evaluation ms/point and the scheduler's per-phase split.
#   experiments/sweep/bench/bench.sh [path/to/tessel] [-j N] [--sample K]
# --sample K runs only every K-th point (shard 0/K), for a quick estimate on a slow scheduler.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tessel=$here/../../../build/default/tools/tessel/tessel
if [[ $# -gt 0 && $1 != -* ]]; then tessel=$1; shift; fi
jobs=2
sample=1
while [[ $# -gt 0 ]]; do
  case $1 in
    -j) jobs=$2; shift 2 ;;
    --sample) sample=$2; shift 2 ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
out=$(mktemp -d /tmp/tessel-sweep-bench-XXXXXX)
trap 'rm -rf "$out"' EXIT
shard=()
if [[ $sample -gt 1 ]]; then shard=(--shard "0/$sample"); fi
echo "bench: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), -j $jobs, sample 1/$sample"
start=$(date +%s.%N)
"$tessel" sweep "$here/resnet50_fusion_reuse.yaml" --out "$out/results.jsonl" -j "$jobs" \
  "${shard[@]}" 2>&1 | grep -v '^sweep: [0-9]*/[0-9]* ('
end=$(date +%s.%N)
lines=$(wc -l < "$out/results.jsonl")
echo "bench: $lines lines in $(echo "$end - $start" | bc) s wall including model load" \
  "and process start"
