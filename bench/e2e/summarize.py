#!/usr/bin/env python3
"""Summarises bench/e2e results (report.json per model-config folder) as one table.

Per (model, config, policy): bit exact, simulated/predicted DRAM bytes (weights + requant tables,
activations), simulated/predicted cycles; then the cycle-ratio distribution per model.
Usage: summarize.py RESULTS_DIR
"""
import json
import pathlib
import statistics
import sys


def main(results: pathlib.Path) -> None:
    ratios = {}
    print(f"{'model':13} {'config':17} {'policy':13} {'exact':5} {'act bytes':>9} "
          f"{'wgt bytes':>9} {'cycles sim/pred':>15}")
    for report_path in sorted(results.glob("*/report.json")):
        report = json.loads(report_path.read_text())
        model, config = report["model"], report["config"]["name"]
        for p in report.get("policies", []):
            d, q = p["dram_bytes"], p["predicted_dram_bytes"]
            act_ok = (d["activations_read"] == q["activations_read"]
                      and d["activations_written"] == q["activations_written"])
            wgt_ok = d["weights_read"] == q["weights_read"] + d["requant_tables_read"]
            ratio = p["cycles"] / max(p["predicted_cycles"], 1)
            ratios.setdefault(model, []).append(ratio)
            print(f"{model:13} {config:17} {p['policy']:13} "
                  f"{'yes' if p.get('bit_exact') else 'NO':5} {'=' if act_ok else 'DIFF':>9} "
                  f"{'=' if wgt_ok else 'DIFF':>9} {ratio:15.3f}")
        for f in report.get("failures", []):
            print(f"{model:13} {config:17} {f['policy']:13} FAIL  {f['error'][:90]}")
    print("\ncycle ratio (simulated / predicted) per model: min median max, share within 10%")
    for model, r in sorted(ratios.items()):
        within = sum(abs(x - 1) <= 0.10 for x in r) / len(r)
        print(f"{model:13} {min(r):.3f} {statistics.median(r):.3f} {max(r):.3f}  {within:.0%} "
              f"of {len(r)}")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".cache/e2e"))
