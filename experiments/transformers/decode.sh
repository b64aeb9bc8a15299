#!/usr/bin/env bash
# One command: GPT-2 decode (issue 36 item 3) at KV length 1024, 12 layers, batch 1, 8 and 32,
# simulated on cloud-large under layerwise and optimal (functional: bit exact), on cloud-large
# with a wider weight-load path (`matrix.weight_load_rows` 16: a 128-row block loads in 8
# cycles, 2 KiB a cycle against the bus's 1,277 B; docs/timing.md "conv"), and the same models
# on edge-small (the scheduler's refusal, naming the unit it lacks); one table of DRAM bytes /
# (weights + KV cache + new rows) and cycles / the bandwidth bound (decode_table.py).
#   experiments/transformers/decode.sh [--build DIR] [--layers N] [--batches "1 8 32"]
#       [--kv-length N] [--load-rows N] [-j N]
# Results (git-ignored) in experiments/transformers/results/decode/: decode-sim.yaml,
# decode-sim-wide.yaml, decode-refusal.yaml (the generated specs), cloud-large-wide.yaml (the
# derived config), results-sim.jsonl, results-sim-wide.jsonl, results-refusal.jsonl,
# decode_table.md/.csv. Rerunning resumes; a changed spec starts afresh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$root/build/default"
layers=12
batches="1 8 32"
kv_length=1024
load_rows=16
jobs=1  # one point at a time: two 12-layer batch-32 points reached 18.2 GB (OOM on 23 GiB)
usage="usage: $0 [--build DIR] [--layers N] [--batches \"1 8 32\"] [--kv-length N] [--load-rows N] [-j N]"
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
  case "$1" in
    --build) build="$2" ;;
    --layers) layers="$2" ;;
    --batches) batches="$2" ;;
    --kv-length) kv_length="$2" ;;
    --load-rows) load_rows="$2" ;;
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
# cloud-large with a wider weight-load path: the shipped file plus one key under matrix.
wide="$results/cloud-large-wide.yaml"
sed -e "s|^name: cloud-large$|name: cloud-large-load$load_rows|" \
  -e "s|^  drain_cycles: 128$|  drain_cycles: 128\n  weight_load_rows: $load_rows|" \
  "$root/configs/hw/cloud-large.yaml" >"$wide"
grep -q "^  weight_load_rows: $load_rows$" "$wide" || { echo "decode.sh: $wide not derived" >&2; exit 1; }
for run in sim:sim:$root/configs/hw/cloud-large.yaml sim-wide:sim:$wide \
           refusal:refusal:$root/configs/hw/edge-small.yaml; do
  spec="${run%%:*}"
  rest="${run#*:}"
  sed -e "s|@HW@|${rest#*:}|" -e "s|@MODELS@|[$models]|" \
    "$here/decode-${rest%%:*}.yaml.in" >"$results/decode-$spec.yaml"
  # A changed spec gives other point ids; start fresh results rather than mixing runs.
  if ! cmp -s "$results/decode-$spec.yaml" "$results/decode-$spec.used.yaml"; then
    rm -f "$results/results-$spec.jsonl"
  fi
  cp "$results/decode-$spec.yaml" "$results/decode-$spec.used.yaml"
done
"$tessel" sweep "$results/decode-refusal.yaml" --out "$results/results-refusal.jsonl" -j "$jobs"
"$tessel" sweep "$results/decode-sim.yaml" --out "$results/results-sim.jsonl" -j "$jobs"
"$tessel" sweep "$results/decode-sim-wide.yaml" --out "$results/results-sim-wide.jsonl" -j "$jobs"
/usr/bin/python3 "$here/decode_table.py" "cloud-large=$results/results-sim.jsonl" \
  "cloud-large-load$load_rows=$results/results-sim-wide.jsonl" \
  "edge-small=$results/results-refusal.jsonl" --out "$results"
echo "wrote $results/{decode-sim.yaml,decode-sim-wide.yaml,decode-refusal.yaml,results-sim.jsonl,results-sim-wide.jsonl,results-refusal.jsonl,decode_table.md,decode_table.csv}"
