#!/usr/bin/env python3
"""Energy per inference vs on-chip buffer capacity, one line per policy (the Deep Fusion
paper's kind of figure), and the energy-optimal capacity per model and policy.

  energy_vs_buffer.py results.jsonl --out DIR [--json FILE] [--config NAME]

Reads a `tessel sweep` JSONL whose rows carry figures.energy_pj (issue 37). Prints, per model,
the capacity of least predicted energy for each policy and over all policies; --json writes
the same as JSON: {tool_version, spec, config, optima: [{model, policy, capacity_bytes,
energy_uj, energy_pj by component, config_hash}]}. Needs matplotlib (run.sh uses
/usr/bin/python3, Debian's python3-matplotlib, or $TESSEL_PYTHON, as `tessel plot` does)."""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.fonttype"] = "none"
import matplotlib.pyplot as plt  # noqa: E402

MARKERS = "osD^v<>ph*"


def load(path):
    rows = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{number}: not JSON ({e.msg})")
            if row.get("status") == "ok" and "energy_pj" in row.get("figures", {}):
                rows.append(row)
    return rows


def optimum(rows):
    """The row of least total energy (ties: the smaller buffer)."""
    return min(rows, key=lambda r: (r["figures"]["energy_pj"]["total"],
                                    r["figures"]["onchip_capacity_bytes"]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results")
    parser.add_argument("--out", required=True)
    parser.add_argument("--json", help="write the optima here")
    parser.add_argument("--config", default="", help="the base config's name, for the JSON")
    args = parser.parse_args(argv)
    rows = load(args.results)
    if not rows:
        sys.exit(f"{args.results}: no ok rows with figures.energy_pj")
    os.makedirs(args.out, exist_ok=True)
    optima = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for i, policy in enumerate(dict.fromkeys(r["policy"] for r in mine)):
            pts = sorted((r["figures"]["onchip_capacity_bytes"], r["figures"]["energy_pj"]["total"])
                         for r in mine if r["policy"] == policy)
            ax.plot([p[0] / 1024 for p in pts], [p[1] * 1e-6 for p in pts],
                    marker=MARKERS[i % len(MARKERS)], label=policy)
            best = optimum([r for r in mine if r["policy"] == policy])
            optima.append({"model": model, "policy": policy,
                           "capacity_bytes": best["figures"]["onchip_capacity_bytes"],
                           "energy_uj": best["figures"]["energy_pj"]["total"] * 1e-6,
                           "energy_pj": best["figures"]["energy_pj"],
                           "config_hash": best.get("config_hash", "")})
        best = optimum(mine)
        print(f"{model}: least energy {best['figures']['energy_pj']['total'] * 1e-6:.1f} uJ at "
              f"{best['figures']['onchip_capacity_bytes'] // 1024} KiB ({best['policy']})")
        for o in optima:
            if o["model"] == model:
                e = o["energy_pj"]
                print(f"  {o['policy']:<13} {o['capacity_bytes'] // 1024:>6} KiB  "
                      f"{o['energy_uj']:9.1f} uJ  (dram {e['dram'] * 1e-6:.1f}, sram "
                      f"{e['sram'] * 1e-6:.1f}, mac {e['mac'] * 1e-6:.1f}, leakage "
                      f"{e['leakage'] * 1e-6:.2f})")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("on-chip buffer capacity (KiB)")
        ax.set_ylabel("energy per inference (uJ, predicted)")
        ax.set_title(f"{model}: energy vs on-chip buffer", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        for ext in ("png", "svg"):
            fig.savefig(os.path.join(args.out, f"energy-vs-buffer-{model}.{ext}"), dpi=150,
                        bbox_inches="tight")
        plt.close(fig)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tool_version": rows[0].get("tool_version", ""),
                       "spec": rows[0].get("spec", ""), "config": args.config,
                       "optima": optima}, f, indent=1)


if __name__ == "__main__":
    main()
