#!/usr/bin/env bash
# One command: GPT-2 decode (issue 36 item 3) at KV length 1024, 12 layers, batch 1, 8 and 32,
# simulated on cloud-large under layerwise and optimal (functional: bit exact), and the same
# models on edge-small (the scheduler's refusal, naming the unit it lacks); one table of DRAM
# bytes / (weights + KV cache + new rows) and cycles / the bandwidth bound (decode_table.py).
#   experiments/transformers/decode.sh [--build DIR] [--layers N] [--batches "1 8 32"]
#       [--kv-length N] [-j N]
# Results (git-ignored) in experiments/transformers/results/decode/: decode-sim.yaml,
# decode-refusal.yaml (the generated specs), results-sim.jsonl, results-refusal.jsonl,
# decode_table.md/.csv. Rerunning resumes; a changed spec starts afresh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$root/build/default"
layers=12
batches="1 8 32"
kv_length=1024
jobs=1  # one point at a time: two 12-layer batch-32 points reached 18.2 GB (OOM on 23 GiB)
usage="usage: $0 [--build DIR] [--layers N] [--batches \"1 8 32\"] [--kv-length N] [-j N]"
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
  case "$1" in
    --build) build="$2" ;;
    --layers) layers="$2" ;;
    --batches) batches="$2" ;;
    --kv-length) kv_length="$2" ;;
    -j) jobs="$2" ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
  shift 2
done
tessel="$build/tools/tessel/tessel"
results="$here/results/decode"
mkdir -p "$results"
models=""
for b in $batches; do
  models+="${models:+, }{zoo: gpt2_decode, layers: $layers, kv_length: $kv_length, batch: $b}"
done
for run in sim:cloud-large refusal:edge-small; do
  spec="${run%%:*}"
  sed -e "s|@HW@|$root/configs/hw/${run#*:}.yaml|" -e "s|@MODELS@|[$models]|" \
    "$here/decode-$spec.yaml.in" >"$results/decode-$spec.yaml"
  # A changed spec gives other point ids; start fresh results rather than mixing runs.
  if ! cmp -s "$results/decode-$spec.yaml" "$results/decode-$spec.used.yaml"; then
    rm -f "$results/results-$spec.jsonl"
  fi
  cp "$results/decode-$spec.yaml" "$results/decode-$spec.used.yaml"
done
"$tessel" sweep "$results/decode-refusal.yaml" --out "$results/results-refusal.jsonl" -j "$jobs"
"$tessel" sweep "$results/decode-sim.yaml" --out "$results/results-sim.jsonl" -j "$jobs"
/usr/bin/python3 "$here/decode_table.py" "cloud-large=$results/results-sim.jsonl" \
  "edge-small=$results/results-refusal.jsonl" --out "$results"
echo "wrote $results/{decode-sim.yaml,decode-refusal.yaml,results-sim.jsonl,results-refusal.jsonl,decode_table.md,decode_table.csv}"
