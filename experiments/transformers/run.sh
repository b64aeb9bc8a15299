#!/usr/bin/env bash
# One command: BERT-base prefill (one encoder layer, sequence 128 by default) on cloud-large,
# buffer size x DRAM bandwidth x every policy with the analytic evaluator (`tessel sweep`), the
# ski-slope (with the DRAM-bytes bound of `tessel bound`) and bandwidth plots (`tessel plot`),
# the table of fused vs layerwise DRAM bytes and cycles (table.py), and the same model simulated
# on cloud-large under every policy (functional: bit exact, simulated bytes and cycles).
#   experiments/transformers/run.sh [--build DIR] [--model NAME] [--layers N] [--seq N] [-j N]
# (--model: another zoo transformer, e.g. tiny_attention for a quick try; default bert_base)
# Results (git-ignored) in experiments/transformers/results/: spec.yaml and spec-sim.yaml (the
# generated specs), results.jsonl, results-sim.jsonl, sweep.csv, table.md/.csv,
# sim_table.md/.csv, plots/{ski-slope,bandwidth}-<model>.{png,svg}.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$root/build/default"
model=bert_base
layers=1
seq=128
jobs=2
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --layers) layers="$2"; shift 2 ;;
    --seq) seq="$2"; shift 2 ;;
    -j) jobs="$2"; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--model NAME] [--layers N] [--seq N] [-j N]" >&2; exit 2 ;;
  esac
done
tessel="$build/tools/tessel/tessel"
results="$here/results"
mkdir -p "$results"
# The spec: spec.yaml.in with the model rows filled in. A GPT-2 prefill or decode row is one
# more models: entry (README.md).
for spec in spec spec-sim; do
  sed -e "s|@HW@|$root/configs/hw/cloud-large.yaml|" \
    -e "s|@MODELS@|[{zoo: $model, layers: $layers, seq: $seq}]|" \
    "$here/$spec.yaml.in" >"$results/$spec.yaml"
done
# A changed spec gives other point ids; start fresh results rather than mixing runs.
if ! cmp -s "$results/spec.yaml" "$results/spec.used.yaml"; then
  rm -rf "$results/results.jsonl" "$results/results-sim.jsonl" "$results/plots"
fi
cp "$results/spec.yaml" "$results/spec.used.yaml"
"$tessel" sweep "$results/spec.yaml" --out "$results/results.jsonl" -j "$jobs"
"$tessel" sweep "$results/spec-sim.yaml" --out "$results/results-sim.jsonl" -j "$jobs"
for kind in ski-slope bandwidth; do
  "$tessel" plot "$results/results.jsonl" --kind "$kind" --out "$results/plots"
done
/usr/bin/python3 "$here/table.py" "$results/results.jsonl" --out "$results" \
  --sim "$results/results-sim.jsonl"
echo "wrote $results/{spec.yaml,spec-sim.yaml,results.jsonl,results-sim.jsonl,sweep.csv,table.md,table.csv,sim_table.md,sim_table.csv,plots/}"
