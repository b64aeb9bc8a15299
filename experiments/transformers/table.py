#!/usr/bin/env python3
"""The transformer sweep's tables, from `tessel sweep` results (JSONL, docs/sweep.md).

    table.py results.jsonl --out DIR [--bandwidth GBPS] [--sim SIM.jsonl]

Writes DIR/sweep.csv (every point, flattened: model, policy, axes, status, figures) and, at one
DRAM bandwidth (default: the config's own, cloud-large's 1.2 TB/s), DIR/table.md and
DIR/table.csv: per model and on-chip capacity (all buffers), each policy's DRAM bytes (and / the
compulsory bytes, / the DRAM-bytes bound) and predicted cycles (and / the lower bound), and
layerwise's bytes and cycles over each policy's ("x vs layerwise": how much fusion saves).
A point without a schedule (status invalid) is a row with its reason.

--sim: results of a `mode: sim` sweep with `functional: true` (spec-sim.yaml.in); writes
DIR/sim_table.md and DIR/sim_table.csv: per model and policy, the predicted and simulated DRAM
bytes (the simulator's total less its instruction fetch, which the schedule's bytes leave out;
equal means the classes agree in sum), the predicted and simulated cycles and their ratio, and
whether the outputs are bit exact against the golden executor.
"""
import argparse
import csv
import json
import pathlib
import sys

POLICIES = ["layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"]


def read(path):
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            sys.exit(f"{path}:{number}: not a results line ({error})")
    return rows


def write_sweep_csv(rows, out):
    axes = sorted({key for r in rows for key in r.get("axes", {})})
    header = ["model", "policy", "objective", *axes, "status", "reason", "dram_bytes",
              "compulsory_bytes", "bound_bytes", "cycles", "lower_bound_cycles",
              "roofline_cycles", "latency_ms", "onchip_capacity_bytes", "dram_bandwidth_gbps",
              "groups", "tool_version"]
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            fig = r.get("figures") or {}
            w.writerow([r["model"], r["policy"], r.get("objective"),
                        *[r.get("axes", {}).get(a) for a in axes], r["status"], r.get("reason", ""),
                        (fig.get("dram_bytes") or {}).get("total"), fig.get("compulsory_bytes"),
                        fig.get("bound_bytes"), fig.get("cycles"), fig.get("lower_bound_cycles"),
                        fig.get("roofline_cycles"), fig.get("latency_ms"),
                        fig.get("onchip_capacity_bytes"), fig.get("dram_bandwidth_gbps"),
                        fig.get("groups"), r.get("tool_version")])


def size_axes(r):
    return json.dumps({k: v for k, v in r.get("axes", {}).items() if k.endswith("].size")},
                      sort_keys=True)


def capacities(rows):
    """Size axes -> on-chip capacity, from the points that ran (their figures hold it)."""
    return {size_axes(r): int(r["figures"]["onchip_capacity_bytes"]) for r in rows
            if r["status"] == "ok"}


def buffer_of(r, known):
    """The on-chip capacity: the figures', else that of a point with the same sizes that ran,
    else the sum of the size axes."""
    fig = r.get("figures") or {}
    if fig.get("onchip_capacity_bytes") is not None:
        return int(fig["onchip_capacity_bytes"])
    if size_axes(r) in known:
        return known[size_axes(r)]
    return sum(int(float(v)) for k, v in r.get("axes", {}).items()
               if k.startswith("scratchpads[") and k.endswith("].size"))


def table(rows, bandwidth):
    """(model, buffer) -> policy -> row, at `bandwidth` GB/s."""
    cells = {}
    known = capacities(rows)
    for r in rows:
        fig = r.get("figures") or {}
        gbps = fig.get("dram_bandwidth_gbps")
        if r["status"] == "ok" and abs(gbps - bandwidth) > 1e-6 * bandwidth:
            continue
        if r["status"] != "ok" and str(r["axes"].get("dram.bandwidth")) != bandwidth_text(bandwidth):
            continue
        cells.setdefault((r["model"], buffer_of(r, known)), {})[r["policy"]] = r
    return cells


def bandwidth_text(gbps):
    return f"{gbps / 1000:g}TB/s" if gbps >= 1000 else f"{gbps:g}GB/s"


def sim_table(rows, out):
    header = ["model", "policy", "predicted_bytes", "simulated_bytes", "bytes_equal",
              "predicted_cycles", "simulated_cycles", "sim_over_predicted", "bit_exact", "note"]
    lines = ["Simulated (`mode: sim`, functional) against predicted; simulated bytes exclude the "
             "instruction fetch.", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table_rows = []
    order = {p: i for i, p in enumerate(POLICIES)}
    for r in sorted(rows, key=lambda r: (r["model"], order.get(r["policy"], 99), r["policy"])):
        if r["status"] != "ok":
            row = [r["model"], r["policy"]] + [""] * 7 + [r.get("reason", r["status"])]
        else:
            f = r["figures"]
            simulated = f["sim_dram_bytes"]["total"] - f["sim_dram_bytes"].get("instructions_read", 0)
            predicted = f["dram_bytes"]["total"]
            row = [r["model"], r["policy"], predicted, simulated, predicted == simulated,
                   f["cycles"], f["sim_cycles"], f"{f['sim_cycles'] / f['cycles']:.4f}",
                   f.get("bit_exact", ""), ""]
        table_rows.append(row)
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    with open(out / "sim_table.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(table_rows)
    (out / "sim_table.md").write_text("\n".join(lines) + "\n")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", type=pathlib.Path)
    p.add_argument("--out", type=pathlib.Path, required=True)
    p.add_argument("--bandwidth", type=float, default=1200.0, help="GB/s (default 1200)")
    p.add_argument("--sim", type=pathlib.Path, help="a functional sim sweep's results")
    args = p.parse_args()
    rows = read(args.results)
    if not rows:
        sys.exit(f"{args.results}: no results")
    args.out.mkdir(parents=True, exist_ok=True)
    write_sweep_csv(rows, args.out / "sweep.csv")
    cells = table(rows, args.bandwidth)
    header = ["model", "onchip_KiB", "policy", "dram_MB", "x_compulsory", "x_bound", "cycles",
              "x_lower_bound", "layerwise_bytes_x", "layerwise_cycles_x", "groups", "note"]
    lines = [f"DRAM bandwidth {bandwidth_text(args.bandwidth)}; x_compulsory = DRAM bytes / "
             "compulsory, x_bound = / the DRAM-bytes bound at this capacity, x_lower_bound = "
             "cycles / the cycle lower bound; layerwise_*_x = layerwise's figure / this "
             "policy's (> 1: fusion saves).", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table_rows = []
    for (model, buffer), by_policy in sorted(cells.items()):
        base = by_policy.get("layerwise")
        base_fig = base["figures"] if base and base["status"] == "ok" else None
        for policy in POLICIES + sorted(set(by_policy) - set(POLICIES)):
            r = by_policy.get(policy)
            if r is None:
                continue
            if r["status"] != "ok":
                row = [model, buffer // 1024, policy] + [""] * 8 + [r.get("reason", r["status"])]
            else:
                f = r["figures"]
                total = f["dram_bytes"]["total"]
                row = [model, buffer // 1024, policy, f"{total / 1e6:.3f}",
                       f"{total / f['compulsory_bytes']:.3f}",
                       f"{total / f['bound_bytes']:.3f}" if f.get("bound_bytes") else "",
                       f["cycles"], f"{f['cycles'] / f['lower_bound_cycles']:.3f}",
                       f"{base_fig['dram_bytes']['total'] / total:.2f}" if base_fig else "",
                       f"{base_fig['cycles'] / f['cycles']:.2f}" if base_fig else "",
                       f["groups"], ""]
            table_rows.append(row)
            lines.append("| " + " | ".join(str(c) for c in row) + " |")
    with open(args.out / "table.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(table_rows)
    (args.out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if args.sim:
        print("\n".join(sim_table(read(args.sim), args.out)))


if __name__ == "__main__":
    main()
