#!/usr/bin/env python3
"""Plots and a markdown table from deep_fusion.csv, side by side with the paper's figures."""
import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Deep Fusion (NPC 2019), Sec. 4.2: only these figures are stated in the text.
PAPER = {
    "average": "32% reduction, 1.6x speedup",
    "resnet50": "56% reduction, 2.62x speedup",
    "vgg19": ">= 1.26x speedup (the lowest)",
    "every net": ">= 15% reduction",
}
POLICIES = [("opfusion", "bytes"), ("fusion", "bytes"), ("fusion+reuse", "bytes"),
            ("optimal", "bytes"), ("optimal", "latency")]


def label(policy, objective):
    return policy if policy != "optimal" else f"optimal ({objective})"


def main(csv_path, out_dir):
    rows = list(csv.DictReader(open(csv_path)))
    by = {(r["model"], r["policy"], r["objective"]): r for r in rows}
    models = list(dict.fromkeys(r["model"] for r in rows))
    out_dir = Path(out_dir)

    def metric(model, policy, objective, key):
        r = by.get((model, policy, objective))
        return float(r[key]) if r else float("nan")

    reduction, speedup = {}, {}
    for policy, objective in POLICIES:
        for model in models:
            base_bytes = metric(model, "layerwise", "bytes", "dram_bytes")
            base_cycles = metric(model, "layerwise", "bytes", "cycles")
            reduction[(model, policy, objective)] = 1 - metric(
                model, policy, objective, "dram_bytes") / base_bytes
            speedup[(model, policy, objective)] = base_cycles / metric(
                model, policy, objective, "cycles")

    for name, values, ylabel in [("reduction", reduction, "DRAM access reduction vs layerwise"),
                                 ("speedup", speedup, "speedup vs layerwise")]:
        fig, ax = plt.subplots(figsize=(9, 4))
        width = 0.8 / len(POLICIES)
        for i, (policy, objective) in enumerate(POLICIES):
            xs = [m + (i - len(POLICIES) / 2 + 0.5) * width for m in range(len(models))]
            ax.bar(xs, [values[(m, policy, objective)] for m in models], width,
                   label=label(policy, objective))
        ax.set_xticks(range(len(models)))
        ax.set_xticklabels(models)
        ax.set_ylabel(ylabel)
        if name == "speedup":
            ax.axhline(1.0, color="black", linewidth=0.5)
        ax.legend(fontsize=8)
        ax.set_title(f"Deep Fusion reproduction: {ylabel} (npc19-deepfusion)")
        fig.tight_layout()
        fig.savefig(out_dir / f"{name}.png", dpi=120)

    lines = ["# Deep Fusion reproduction (npc19-deepfusion)", "",
             "Measured with the analytical cost model (tessel scheduler); baseline = `layerwise`.",
             "", "| model | policy | DRAM MB | reduction vs layerwise | reduction vs opfusion | "
             "speedup vs layerwise | speedup vs opfusion | DRAM / compulsory | DRAM / bytes bound | "
             "cycles / roofline "
             "| lower bound / roofline | cycles / lower bound | search CPU s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for model in models:
        for policy, objective in [("layerwise", "bytes")] + POLICIES:
            r = by.get((model, policy, objective))
            if not r:
                continue
            dram = float(r["dram_bytes"])
            ob = metric(model, "opfusion", "bytes", "dram_bytes")
            oc = metric(model, "opfusion", "bytes", "cycles")
            lb = metric(model, "layerwise", "bytes", "dram_bytes")
            lc = metric(model, "layerwise", "bytes", "cycles")
            # max(roofline, the barrier bound): no schedule is faster (docs/scheduler.md).
            bound = float(r.get("lower_bound_cycles") or r["roofline_cycles"])
            # The DRAM-bytes bound at the config's capacity (docs/bounds.md, "Lower bounds:
            # DRAM bytes per capacity"); CSVs written before it have no column.
            over_bound = (f"{dram / float(r['bound_bytes']):.3f}" if r.get("bound_bytes")
                          else "-")
            lines.append(
                f"| {model} | {label(policy, objective)} | {dram / 1e6:.2f} | "
                f"{100 * (1 - dram / lb):.1f}% | {100 * (1 - dram / ob):.1f}% | "
                f"{lc / float(r['cycles']):.2f}x | {oc / float(r['cycles']):.2f}x | "
                f"{dram / float(r['compulsory_bytes']):.3f} | "
                f"{over_bound} | "
                f"{float(r['cycles']) / float(r['roofline_cycles']):.3f} | "
                f"{bound / float(r['roofline_cycles']):.3f} | "
                f"{float(r['cycles']) / bound:.3f} | "
                f"{float(r.get('cpu_seconds') or r['search_seconds']):.3f} |")
    lines += ["", "## Side by side with the paper (fusion+reuse is the paper's method)", "",
              "| figure | paper | fusion+reuse (ours) | optimal, bytes (ours) | optimal, latency (ours) |",
              "|---|---|---|---|---|"]

    def avg(values, policy, objective):
        xs = [values[(m, policy, objective)] for m in models]
        return sum(xs) / len(xs)

    lines.append(f"| average DRAM reduction | 32% | {100 * avg(reduction, 'fusion+reuse', 'bytes'):.1f}% "
                 f"| {100 * avg(reduction, 'optimal', 'bytes'):.1f}% "
                 f"| {100 * avg(reduction, 'optimal', 'latency'):.1f}% |")
    lines.append(f"| average speedup | 1.6x | {avg(speedup, 'fusion+reuse', 'bytes'):.2f}x "
                 f"| {avg(speedup, 'optimal', 'bytes'):.2f}x "
                 f"| {avg(speedup, 'optimal', 'latency'):.2f}x |")
    for model, paper in [("resnet50", "56%, 2.62x"), ("vgg19", ">= 1.26x (speedup)")]:
        if model in models:
            lines.append(
                f"| {model} | {paper} | {100 * reduction[(model, 'fusion+reuse', 'bytes')]:.1f}%, "
                f"{speedup[(model, 'fusion+reuse', 'bytes')]:.2f}x | "
                f"{100 * reduction[(model, 'optimal', 'bytes')]:.1f}%, "
                f"{speedup[(model, 'optimal', 'bytes')]:.2f}x | "
                f"{100 * reduction[(model, 'optimal', 'latency')]:.1f}%, "
                f"{speedup[(model, 'optimal', 'latency')]:.2f}x |")
    worst = min(reduction[(m, "fusion+reuse", "bytes")] for m in models)
    worst_opt = min(reduction[(m, "optimal", "bytes")] for m in models)
    worst_lat = min(reduction[(m, "optimal", "latency")] for m in models)
    lines.append(f"| smallest reduction over the nets | >= 15% | {100 * worst:.1f}% | "
                 f"{100 * worst_opt:.1f}% | {100 * worst_lat:.1f}% |")
    slowest = min(speedup[(m, "optimal", "latency")] for m in models)
    lines.append(f"| smallest speedup over the nets | >= 1.26x (VGG-19) | "
                 f"{min(speedup[(m, 'fusion+reuse', 'bytes')] for m in models):.2f}x | "
                 f"{min(speedup[(m, 'optimal', 'bytes')] for m in models):.2f}x | {slowest:.2f}x |")
    (out_dir / "deep_fusion.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ".")
