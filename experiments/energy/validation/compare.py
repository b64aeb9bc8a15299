#!/usr/bin/env python3
"""Tessel's simulated energy of the Timeloop simple_weight_stationary layer, level by level,
against the reference output Timeloop and Accelergy publish for it (docs/energy.md,
"Validation").

  compare.py REPORT_JSON [--json OUT]

REPORT_JSON is `tessel sim`'s report.json of the layer compiled on sws.yaml (run.sh). Prints
the table and writes the same as JSON (model, config, policy, tool version, both breakdowns)."""
import argparse
import json
import sys

# Accelergy-Project/timeloop-accelergy-exercises, commit 67b75f24c84350d85c5e2ed7fdd00e2a53251577,
# workspace/example_designs/example_designs/simple_weight_stationary/ref_outputs/
# default_problem/timeloop-mapper.stats.txt: "Energy (total)" per level and data space, pJ.
SOURCE = ("Accelergy-Project/timeloop-accelergy-exercises@67b75f24c84350d85c5e2ed7fdd00e2a53251577:"
          "workspace/example_designs/example_designs/simple_weight_stationary/ref_outputs/"
          "default_problem/timeloop-mapper.stats.txt")
TIMELOOP_PJ = {
    "mac": 3413975.04,  # 10,838,016 computes x 0.315 pJ
    "registers": 1387266.05 + 1560674.30 + 1560674.30,  # output, input and weight registers
    "pe_spad": 54744.44 + 12626.29,  # accesses + leakage
    "global_buffer": 201470.67 + 22925078.11 + 49617448.29 + 4834.66,  # W, I, O + leakage
    "dram": 110592.00 + 19440128.00 + 51380224.00,  # W, I, O at 128 pJ per 16-bit word
}
TIMELOOP_TOTAL_PJ = 151.67e6  # "Energy: 151.67 uJ"
TIMELOOP_COMPUTES = 10838016


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    with open(args.report) as f:
        report = json.load(f)
    if report.get("status") != "ok":
        sys.exit(f"{args.report}: status {report.get('status')}, not ok")
    e = report["energy_pj"]
    table = report["energy_table"]
    fetch_bytes = report["dram_bytes"]["by_kind"]["instructions"]
    fetch_pj = fetch_bytes * table["dram_pj_per_byte"]
    tessel = {
        "mac": e["mac"],
        "registers": 0.0,  # inside the array's MAC energy: Tessel has no register level
        "pe_spad": 0.0,
        "global_buffer": e["sram"],
        "dram": e["dram"] - fetch_pj,  # without instruction fetch, which Timeloop has not
    }
    rows = []
    print(f"{'level':<15} {'Timeloop uJ':>12} {'Tessel uJ':>10} {'Tessel/Timeloop':>16}")
    for level, ref in TIMELOOP_PJ.items():
        ours = tessel[level]
        ratio = ours / ref if ref else None
        rows.append({"level": level, "timeloop_pj": ref, "tessel_pj": ours, "ratio": ratio})
        print(f"{level:<15} {ref * 1e-6:12.3f} {ours * 1e-6:10.3f} "
              f"{'-' if not ours else f'{ratio:.4f}':>16}")
    total = sum(tessel.values())
    print(f"{'total':<15} {TIMELOOP_TOTAL_PJ * 1e-6:12.3f} {total * 1e-6:10.3f} "
          f"{total / TIMELOOP_TOTAL_PJ:16.4f}")
    slots = round(e["mac"] / table["mac_pj"]) if table["mac_pj"] else 0
    print(f"MAC slots {slots:,} against {TIMELOOP_COMPUTES:,} computes "
          f"(x{slots / TIMELOOP_COMPUTES:.4f}); instruction fetch {fetch_pj * 1e-6:.3f} uJ left out")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"source": SOURCE, "model": "timeloop_sws_layer (conv.onnx)",
                       "config": report["config"], "policy": "layerwise",
                       "tool_version": report.get("tool_version", ""),
                       "levels": rows, "tessel_total_pj": total,
                       "timeloop_total_pj": TIMELOOP_TOTAL_PJ,
                       "tessel_mac_slots": slots, "timeloop_computes": TIMELOOP_COMPUTES,
                       "instruction_fetch_pj": fetch_pj}, f, indent=1)


if __name__ == "__main__":
    main()
