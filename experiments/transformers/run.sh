#!/usr/bin/env bash
# One command: transformer prefill and decode on cloud-large, buffer size x DRAM bandwidth x
# every policy with the analytic evaluator (`tessel sweep`), the ski-slope (with the DRAM-bytes
# bound of `tessel bound`) and bandwidth plots per model (`tessel plot`), the table of fused vs
# layerwise DRAM bytes and cycles of every model (table.py), and the same models simulated on
# cloud-large under every policy (functional: bit exact, simulated bytes and cycles).
#   experiments/transformers/run.sh [--build DIR] [-j N]
#       [--model NAME [--layers N] [--seq N] [--kv-length N] [--batch N]]
# Default models (one layer each): bert_base prefill (sequence 128), gpt2 prefill (128),
# gpt2_decode at KV length 1024, batch 1 and 8, and vit_b_16 (197 tokens of a 224 x 224 image). --model runs that one zoo model instead, with
# the options given (e.g. `--model tiny_attention --seq 16` for a quick try).
# Results (git-ignored) in experiments/transformers/results/: spec.yaml and spec-sim.yaml (the
# generated specs), results.jsonl, results-sim.jsonl, sweep.csv, table.md/.csv,
# sim_table.md/.csv, plots/{ski-slope,bandwidth}-<model>.{png,svg}.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$root/build/default"
models="[{zoo: bert_base, layers: 1, seq: 128}, {zoo: gpt2, layers: 1, seq: 128},"
models+=" {zoo: gpt2_decode, layers: 1, kv_length: 1024},"
models+=" {zoo: gpt2_decode, layers: 1, kv_length: 1024, batch: 8},"
models+=" {zoo: vit_b_16, layers: 1}]"
model=""
options=""
jobs=2
usage="usage: $0 [--build DIR] [-j N] [--model NAME [--layers N] [--seq N] [--kv-length N] [--batch N]]"
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
  case "$1" in
    --build) build="$2" ;;
    --model) model="$2" ;;
    --layers) options+=", layers: $2" ;;
    --seq) options+=", seq: $2" ;;
    --kv-length) options+=", kv_length: $2" ;;
    --batch) options+=", batch: $2" ;;
    -j) jobs="$2" ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
  shift 2
done
if [ -n "$model" ]; then
  models="[{zoo: $model$options}]"
elif [ -n "$options" ]; then
  echo "$0: --layers, --seq, --kv-length and --batch go with --model" >&2; exit 2
fi
tessel="$build/tools/tessel/tessel"
results="$here/results"
mkdir -p "$results"
# The specs: spec.yaml.in and spec-sim.yaml.in with the model rows filled in (the spec checks
# the model options: docs/sweep.md).
for spec in spec spec-sim; do
  sed -e "s|@HW@|$root/configs/hw/cloud-large.yaml|" -e "s|@MODELS@|$models|" \
    "$here/$spec.yaml.in" >"$results/$spec.yaml"
done
# A changed spec gives other point ids; start fresh results rather than mixing runs.
if ! cmp -s "$results/spec.yaml" "$results/spec.used.yaml"; then
  rm -rf "$results/results.jsonl" "$results/results-sim.jsonl" "$results/plots"
fi
cp "$results/spec.yaml" "$results/spec.used.yaml"
"$tessel" sweep "$results/spec.yaml" --out "$results/results.jsonl" -j "$jobs"
"$tessel" sweep "$results/spec-sim.yaml" --out "$results/results-sim.jsonl" -j "$jobs"
# The ski-slope at cloud-large's bandwidth, the bandwidth plot at its buffers (24 MiB in all):
# the median points (400 GB/s, 3 MiB) are below where a decode step's KV cache fits.
"$tessel" plot "$results/results.jsonl" --kind ski-slope --out "$results/plots" \
  --where dram.bandwidth=1.2TB/s
"$tessel" plot "$results/results.jsonl" --kind bandwidth --out "$results/plots" \
  --where 'scratchpads[0].size=16777216' --where 'scratchpads[1].size=4194304' \
  --where 'scratchpads[2].size=4194304'
/usr/bin/python3 "$here/table.py" "$results/results.jsonl" --out "$results" \
  --sim "$results/results-sim.jsonl"
echo "wrote $results/{spec.yaml,spec-sim.yaml,results.jsonl,results-sim.jsonl,sweep.csv,table.md,table.csv,sim_table.md,sim_table.csv,plots/}"
