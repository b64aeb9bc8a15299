#!/usr/bin/env python3
"""The decode table (issue 36 item 3), from `tessel sweep` results of decode models (JSONL,
docs/sweep.md): decode.sh's simulated cloud-large sweep and its edge-small refusals.

    decode_table.py CONFIG=RESULTS.jsonl [CONFIG=MORE.jsonl ...] --out DIR [--model-dim 768]

CONFIG names the hardware config of that file's sweep (a results line has only its hash).
Writes DIR/decode_table.md and DIR/decode_table.csv: per config, batch and policy, the DRAM
bytes (simulated where the results are `mode: sim`, less the instruction fetch, else
predicted) over the goal's bound, weights + KV cache + new K/V rows, and the cycles over the
bandwidth bound, the goal's bound in bytes over the DRAM bytes per cycle. A refused point is a
row with the scheduler's reason.

The goal's bound is the schedule's compulsory bytes (weights with their requant tables, every
network input and output once) less the token in and the hidden state out: B x d bytes each at
8 bits (--model-dim d, GPT-2's 768), since a decode step's other inputs are the KV caches and
its other outputs the new K/V rows. The batch is read from the model label (`-batch8-`, the
sweep spec's default label; none: 1).
"""
import argparse
import csv
import pathlib
import re
import sys

from table import read  # one reader of results lines (table.py, beside this file)

HEADER = ["config", "model", "batch", "policy", "dram_bytes", "predicted_bytes", "bound_bytes",
          "x_bound", "cycles", "predicted_cycles", "bandwidth_bound_cycles", "x_bandwidth_bound",
          "bit_exact", "note"]


def batch_of(model):
    match = re.search(r"-batch(\d+)(-|$)", model)
    return int(match.group(1)) if match else 1


def row_of(r, config, model_dim):
    batch = batch_of(r["model"])
    row = {"config": config, "model": r["model"], "batch": batch, "policy": r["policy"]}
    if r["status"] != "ok":
        return {**row, "note": r.get("reason", r["status"])}
    f = r["figures"]
    bound = f["compulsory_bytes"] - 2 * batch * model_dim
    # DRAM bytes per cycle: the bandwidth over the clock (cycles / latency).
    clock_hz = f["cycles"] / (f["latency_ms"] / 1e3)
    per_cycle = f["dram_bandwidth_gbps"] * 1e9 / clock_hz
    bandwidth_bound = bound / per_cycle
    simulated = "sim_dram_bytes" in f
    total = (f["sim_dram_bytes"]["total"] - f["sim_dram_bytes"].get("instructions_read", 0)
             if simulated else f["dram_bytes"]["total"])
    cycles = f["sim_cycles"] if simulated else f["cycles"]
    return {**row, "dram_bytes": total, "predicted_bytes": f["dram_bytes"]["total"],
            "bound_bytes": bound, "x_bound": f"{total / bound:.4f}", "cycles": cycles,
            "predicted_cycles": f["cycles"], "bandwidth_bound_cycles": round(bandwidth_bound),
            "x_bandwidth_bound": f"{cycles / bandwidth_bound:.1f}",
            "bit_exact": f.get("bit_exact", ""),
            "note": "" if simulated else "predicted (analytic)"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", metavar="CONFIG=RESULTS.jsonl")
    p.add_argument("--out", type=pathlib.Path, required=True)
    p.add_argument("--model-dim", type=int, default=768, help="d of the model (GPT-2: 768)")
    args = p.parse_args()
    rows = []
    for item in args.results:
        config, sep, path = item.partition("=")
        if not sep or not config or not path:
            sys.exit(f"{item}: expected CONFIG=RESULTS.jsonl")
        path = pathlib.Path(path)
        results = read(path)
        if not results:
            sys.exit(f"{path}: no results")
        order = {"layerwise": 0, "optimal": 1}
        for r in sorted(results, key=lambda r: (batch_of(r["model"]), order.get(r["policy"], 9),
                                                r["policy"])):
            rows.append(row_of(r, config, args.model_dim))
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "decode_table.csv", "w", newline="") as f:
        w = csv.DictWriter(f, HEADER)
        w.writeheader()
        w.writerows(rows)
    lines = ["DRAM bytes: simulated less the instruction fetch (predicted where the note says "
             "so); bound = weights (with requant tables) + KV cache + new K/V rows; "
             "bandwidth bound = bound / DRAM bytes per cycle.", "",
             "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(str(r.get(k, "")) for k in HEADER) + " |" for r in rows]
    (args.out / "decode_table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
