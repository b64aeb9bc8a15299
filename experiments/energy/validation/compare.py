#!/usr/bin/env python3
"""Tessel's simulated energy of the Timeloop/Accelergy reference layer, level by level and data
space by data space, against the reference outputs Timeloop and Accelergy publish for two of
their example designs (docs/energy.md, "Validation").

  compare.py DESIGN REPORT_JSON [--base REPORT_JSON] [--json OUT]

DESIGN is `sws` (simple_weight_stationary: sws.yaml, or sws-by-kind.yaml, its global buffer
split by data kind) or `sos` (simple_output_stationary: sos.yaml). REPORT_JSON is `tessel sim`'s
report.json of the layer compiled on that config (run.sh). Every Tessel figure is a count of the
simulator's times a per-action figure of the reference's ERT: the simulator's own energy where
the config carries the figure (MAC, DRAM, the glb), and the simulator's counted bytes of a
scratchpad times the reference figure where a Tessel config cannot carry it (its SRAM figures
apply to every scratchpad; sos.yaml's `spad` is priced at the reference's pe_spad figures here).
With --base (the sws.yaml run), the by-kind run must have the base's counts (MAC slots, DRAM
bytes, SRAM bytes read and written in all), so that the split only attributes bytes. Prints the
tables and writes them as JSON."""
import argparse
import json
import sys

REPO = "Accelergy-Project/timeloop-accelergy-exercises@67b75f24c84350d85c5e2ed7fdd00e2a53251577"
DIR = "workspace/example_designs/example_designs/{}/ref_outputs/default_problem/"
COMPUTES = 10838016  # both references' layer: 3 -> 32 channels, 3x3, stride 2, 112 x 112

# Per data space "Energy (total)" of each level in timeloop-mapper.stats.txt, pJ; the
# leakage of a level is its own row. The per-action figures are the ERT summary's
# (timeloop-mapper.ERT_summary.yaml beside it): glb read 32.342452 and write 26.121552 pJ per
# 64-bit access, pe_spad read 0.660171 and write 1.562612 pJ per 16-bit access, DRAM 512 pJ per
# 64 bits, MAC 0.315 pJ.
DESIGNS = {
    "sws": {
        "source": REPO + ":" + DIR.format("simple_weight_stationary") + "timeloop-mapper.stats.txt",
        "total_pj": 151.67e6,  # "Energy: 151.67 uJ"
        "levels": {
            "mac": {"computes": 3413975.04},
            "registers": {"outputs": 1387266.05, "inputs": 1560674.30, "weights": 1560674.30},
            "pe_spad": {"weights": 54744.44, "leakage": 12626.29},
            "global_buffer": {"weights": 201470.67, "inputs": 22925078.11,
                              "outputs": 49617448.29, "leakage": 4834.66},
            "dram": {"weights": 110592.00, "inputs": 19440128.00, "outputs": 51380224.00},
        },
    },
    "sos": {
        "source": REPO + ":" + DIR.format("simple_output_stationary") + "timeloop-mapper.stats.txt",
        "total_pj": 118.46e6,  # "Energy: 118.46 uJ"
        "levels": {
            "mac": {"computes": 3413975.04},
            "registers": {"outputs": 1502871.55, "inputs": 1560674.30, "weights": 1560674.30},
            "pe_spad": {"outputs": 24252456.40, "leakage": 12626.29},
            "global_buffer": {"weights": 6356663.22, "inputs": 6511574.88, "leakage": 3625.99},
            "dram": {"weights": 1769472.00, "inputs": 20133888.00, "outputs": 51380224.00},
        },
    },
}

# Tessel's scratchpads: the reference level and data space each stands for, and (where the
# config cannot carry it) the reference's per-byte read and write figures to price its bytes.
PE_SPAD_PJ_PER_BYTE = (0.660171 / 2, 1.562612 / 2)
SCRATCHPADS = {
    "glb": ("global_buffer", None, None),
    "glb_inputs": ("global_buffer", "inputs", None),
    "glb_weights": ("global_buffer", "weights", None),
    "glb_accumulators": ("global_buffer", "outputs", None),
    "glb_outputs": ("global_buffer", "outputs", None),
    "spad": ("pe_spad", "outputs", PE_SPAD_PJ_PER_BYTE),
}
DRAM_KINDS = {"weights": "weights", "activations": "inputs", "outputs": "outputs"}


def tessel_breakdown(report):
    """{level: {data space or None: pJ}} from the report's counts."""
    e = report["energy_pj"]
    table = report["energy_table"]
    out = {"mac": {"computes": e["mac"]}, "registers": {}, "pe_spad": {}, "global_buffer": {},
           "dram": {}}
    for name, counted in report["sram_bytes"].items():
        if name not in SCRATCHPADS:
            sys.exit(f"scratchpad '{name}': not one of {sorted(SCRATCHPADS)}")
        level, space, price = SCRATCHPADS[name]
        if price is None:
            pj = e["sram_by_scratchpad"][name]
        else:
            pj = counted["read_bytes"] * price[0] + counted["write_bytes"] * price[1]
        out[level][space] = out[level].get(space, 0.0) + pj
    per_byte = table["dram_pj_per_byte"]
    for kind, space in DRAM_KINDS.items():
        out["dram"][space] = report["dram_bytes"]["by_kind"][kind] * per_byte
    return out


def counts(report):
    return {"mac_slots": report["macs"], "dram_bytes": report["dram_bytes"]["total"],
            "sram_read_bytes": sum(s["read_bytes"] for s in report["sram_bytes"].values()),
            "sram_write_bytes": sum(s["write_bytes"] for s in report["sram_bytes"].values())}


def ratio(ours, ref):
    return ours / ref if ref else None


def fmt(r):
    return "-" if r is None else f"{r:.4f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("design", choices=sorted(DESIGNS))
    parser.add_argument("report")
    parser.add_argument("--base", help="the sws.yaml run whose counts the by-kind run must have")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    with open(args.report) as f:
        report = json.load(f)
    if report.get("status") != "ok":
        sys.exit(f"{args.report}: status {report.get('status')}, not ok")
    design = DESIGNS[args.design]
    ours = tessel_breakdown(report)
    same = None
    if args.base:
        with open(args.base) as f:
            base = counts(json.load(f))
        same = counts(report) == base
        print(f"counts of {args.report} against {args.base}: {counts(report)} "
              f"{'equal' if same else 'DIFFER: ' + str(base)}")
        if not same:
            sys.exit("the split changed the schedule's counts: it would not only attribute bytes")
    levels, spaces = [], []
    print(f"{'level':<15} {'Timeloop uJ':>12} {'Tessel uJ':>10} {'Tessel/Timeloop':>16}")
    for level, ref_spaces in design["levels"].items():
        ref = sum(ref_spaces.values())
        mine = sum(ours[level].values())
        levels.append({"level": level, "timeloop_pj": ref, "tessel_pj": mine,
                       "ratio": ratio(mine, ref) if mine else None})
        print(f"{level:<15} {ref * 1e-6:12.3f} {mine * 1e-6:10.3f} "
              f"{fmt(ratio(mine, ref) if mine else None):>16}")
        for space, ref_pj in ref_spaces.items():
            if space in ours[level]:
                spaces.append({"level": level, "space": space, "timeloop_pj": ref_pj,
                               "tessel_pj": ours[level][space],
                               "ratio": ratio(ours[level][space], ref_pj)})
    total = sum(sum(v.values()) for v in ours.values())
    print(f"{'total':<15} {design['total_pj'] * 1e-6:12.3f} {total * 1e-6:10.3f} "
          f"{total / design['total_pj']:16.4f}")
    print("by data space (where Tessel's counts name it):")
    for row in spaces:
        print(f"  {row['level'] + ' ' + row['space']:<28} {row['timeloop_pj'] * 1e-6:10.3f} "
              f"{row['tessel_pj'] * 1e-6:10.3f} {fmt(row['ratio']):>10}")
    fetch_pj = report["dram_bytes"]["by_kind"]["instructions"] * \
        report["energy_table"]["dram_pj_per_byte"]
    slots = report["macs"]
    print(f"MAC slots {slots:,} against {COMPUTES:,} computes (x{slots / COMPUTES:.4f}); "
          f"instruction fetch {fetch_pj * 1e-6:.3f} uJ left out; SRAM bytes "
          + ", ".join(f"{n} r {s['read_bytes']:,} w {s['write_bytes']:,}"
                      for n, s in report["sram_bytes"].items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"source": design["source"], "design": args.design,
                       "model": "timeloop_sws_layer (conv.onnx)", "config": report["config"],
                       "policy": "layerwise", "tool_version": report.get("tool_version", ""),
                       "levels": levels, "data_spaces": spaces, "tessel_total_pj": total,
                       "timeloop_total_pj": design["total_pj"], "tessel_mac_slots": slots,
                       "timeloop_computes": COMPUTES, "sram_bytes": report["sram_bytes"],
                       "instruction_fetch_pj": fetch_pj, "counts_equal_base": same}, f, indent=1)


if __name__ == "__main__":
    main()
