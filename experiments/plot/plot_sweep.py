#!/usr/bin/env python3
"""Plots of sweep results (JSONL from `tessel sweep`): ski-slope, bandwidth, pareto; PNG + SVG.

  ski-slope  DRAM traffic vs on-chip buffer capacity, one line per policy, with the bytes bound
             (figures.bound_bytes, where the results have it) and the
             compulsory-traffic bound (weights + input + output, each once).
  bandwidth  latency vs DRAM bandwidth, one line per policy, with the roofline latency.
  pareto     latency vs on-chip bytes used (or an FPGA resource column when the figures have
             one), every point by policy, and the Pareto front over all policies; --x and --y
             pick other figures: latency, energy, edp, area, onchip, dram (docs/energy.md).
  energy-breakdown
             predicted energy per inference by component (MAC, SRAM, vector, DRAM, leakage),
             one stacked bar per policy (figures.energy_pj of sweeps since issue 37).

One figure per model. Axes other than the plotted one are held at one value each: the one given
with --where KEY=VALUE, else the median of that axis's values (stated in the figure's title).
Only status "ok" lines are plotted; invalid points are counted in the title.
"""
import argparse
import collections
import json
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.fonttype"] = "none"  # keep SVG text as text (searchable, editable)
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

MARKERS = "osD^v<>ph*"


def load(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.endswith("\n"):
                break  # a torn last line of a sweep still running
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{number}: not JSON: {e}")
    return rows


UNIT_SCALE = {"": 1, "B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "KB": 1e3, "MB": 1e6,
              "GB": 1e9, "B/s": 1, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "ns": 1, "MHz": 1}


def axis_value_key(value):
    """Orders axis values by magnitude, also when written with units ("12.8GB/s" > "3.2GB/s")."""
    if isinstance(value, (int, float)):
        return (0, value)
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z/]*)\s*", str(value))
    if match and match.group(2) in UNIT_SCALE:
        return (0, float(match.group(1)) * UNIT_SCALE[match.group(2)])
    return (1, str(value))


def hold_other_axes(rows, plotted, where):
    """Keeps rows whose axes other than `plotted` equal the --where value or the median value."""
    keys = sorted({k for r in rows for k in r.get("axes", {})})
    held = {}
    for key in keys:
        if key in plotted:
            continue
        values = sorted({json.dumps(r["axes"][key]) for r in rows if key in r["axes"]},
                        key=lambda v: axis_value_key(json.loads(v)))
        if key in where:
            wanted = where[key]
            match = [v for v in values if str(json.loads(v)) == wanted or v == wanted]
            if not match:
                sys.exit(f"--where {key}={wanted}: no such value (have {', '.join(values)})")
            held[key] = match[0]
        elif len(values) > 1:
            held[key] = values[(len(values) - 1) // 2]
    kept = [r for r in rows if all(json.dumps(r["axes"].get(k)) == v for k, v in held.items())]
    note = ", ".join(f"{k}={json.loads(v)}" for k, v in held.items())
    return kept, note


def figure_rows(rows, model):
    mine = [r for r in rows if r.get("model") == model]
    ok = [r for r in mine if r.get("status") == "ok"]
    return ok, len(mine) - len(ok)


def human_bytes(value, _position=None):
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:g} {unit}"
    return f"{value:g} B"


def save(fig, out_dir, name):
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        path = os.path.join(out_dir, f"{name}.{ext}")
        fig.savefig(path, dpi=150, bbox_inches="tight")
        paths.append(path)
    plt.close(fig)
    print("wrote " + " ".join(paths))


def by_policy(rows):
    groups = collections.OrderedDict()
    for r in rows:
        groups.setdefault(r["policy"], []).append(r)
    return groups


def title(model, kind, note, invalid):
    text = f"{model}: {kind}"
    if note:
        text += f"\n(held: {note})"
    if invalid:
        text += f"\n{invalid} invalid points not shown"
    return text


def ski_slope(rows, model, out_dir, where):
    ok, invalid = figure_rows(rows, model)
    ok, note = hold_other_axes(ok, {k for r in ok for k in r["axes"] if "size" in k}, where)
    if not ok:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (policy, group) in enumerate(by_policy(ok).items()):
        pts = sorted((r["figures"]["onchip_capacity_bytes"], r["figures"]["dram_bytes"]["total"]) for r in group)
        ax.plot([p[0] for p in pts], [p[1] / 1e6 for p in pts],
                marker=MARKERS[i % len(MARKERS)], label=policy)
    bound = sorted({(r["figures"]["onchip_capacity_bytes"], r["figures"]["compulsory_bytes"]) for r in ok})
    ax.plot([b[0] for b in bound], [b[1] / 1e6 for b in bound], "k--", label="compulsory")
    # The DRAM-bytes bound (docs/scheduler.md, "Lower bounds: DRAM bytes per capacity"): per
    # capacity the least over the policies' nets, so no policy's point lies below it. Results
    # written before it have no bound_bytes.
    lowest = {}
    for r in ok:
        if r["figures"].get("bound_bytes") is not None:
            c = r["figures"]["onchip_capacity_bytes"]
            lowest[c] = min(lowest.get(c, r["figures"]["bound_bytes"]), r["figures"]["bound_bytes"])
    if lowest:
        pts = sorted(lowest.items())
        ax.plot([p[0] for p in pts], [p[1] / 1e6 for p in pts], "k-", linewidth=2.0,
                label="bound (no schedule below)")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(human_bytes))
    ax.set_yscale("log")
    ax.set_xlabel("on-chip buffer capacity")
    ax.set_ylabel("DRAM traffic (MB)")
    ax.set_title(title(model, "DRAM traffic vs on-chip buffer", note, invalid), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, out_dir, f"ski-slope-{model}")


def bandwidth(rows, model, out_dir, where):
    ok, invalid = figure_rows(rows, model)
    ok, note = hold_other_axes(ok, {k for r in ok for k in r["axes"] if "bandwidth" in k}, where)
    if not ok:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (policy, group) in enumerate(by_policy(ok).items()):
        pts = sorted((r["figures"]["dram_bandwidth_gbps"], r["figures"]["latency_ms"]) for r in group)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=MARKERS[i % len(MARKERS)], label=policy)
    roof = {}
    for r in ok:
        f = r["figures"]
        ms = f.get("roofline_latency_ms", f["latency_ms"] * f["roofline_cycles"] / max(f["cycles"], 1))
        roof[f["dram_bandwidth_gbps"]] = min(ms, roof.get(f["dram_bandwidth_gbps"], math.inf))
    xs = sorted(roof)
    ax.plot(xs, [roof[x] for x in xs], "k--", label="roofline")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("DRAM bandwidth (GB/s)")
    ax.set_ylabel("latency (ms)")
    ax.set_title(title(model, "latency vs DRAM bandwidth", note, invalid), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, out_dir, f"bandwidth-{model}")


def pareto_front(points):
    """Points (cost, latency) not dominated by another (lower or equal in both, lower in one)."""
    front, best = [], math.inf
    for cost, latency in sorted(points):
        if latency < best:
            front.append((cost, latency))
            best = latency
    return front


# Pareto axes: name -> (figure key, scale, label, log-2 bytes axis).
AXES = {
    "latency": ("latency_ms", 1, "latency (ms)", False),
    "energy": ("energy_uj", 1, "energy per inference (uJ, predicted)", False),
    "edp": ("edp_pj_s", 1e-6, "energy x delay (uJ x s, predicted)", False),
    "area": ("area_mm2", 1, "area (mm^2, logic + SRAM)", False),
    "onchip": ("onchip_bytes", 1, "on-chip bytes used (largest group)", True),
    "dram": (None, 1e-6, "DRAM traffic (MB)", False),
}


def axis_of(name, figures):
    """(key, scale, label, bytes axis) of axis `name`; None: the default cost axis."""
    if name is None:
        resource = next((k for k in ("fpga_luts", "fpga_dsps", "fpga_brams") if k in figures), None)
        return (resource, 1, resource, False) if resource else AXES["onchip"]
    return AXES[name]


def figure_value(figures, key):
    return figures["dram_bytes"]["total"] if key is None else figures[key]


def pareto(rows, model, out_dir, where, x=None, y="latency"):
    ok, invalid = figure_rows(rows, model)
    ok, note = hold_other_axes(ok, set().union(*(set(r["axes"]) for r in ok)) if ok else set(), where)
    if not ok:
        return
    xk, xs, xlabel, xbytes = axis_of(x, ok[0]["figures"])
    yk, ys, ylabel, ybytes = axis_of(y, ok[0]["figures"])
    missing = [k for k in (xk, yk) if k is not None and k not in ok[0]["figures"]]
    if missing:
        sys.exit(f"{model}: the results have no {', '.join(missing)} (sweeps since issue 37 carry "
                 "energy_uj, edp_pj_s and area_mm2)")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (policy, group) in enumerate(by_policy(ok).items()):
        ax.scatter([figure_value(r["figures"], xk) * xs for r in group],
                   [figure_value(r["figures"], yk) * ys for r in group],
                   marker=MARKERS[i % len(MARKERS)], s=18, alpha=0.7, label=policy)
    front = pareto_front([(figure_value(r["figures"], xk) * xs, figure_value(r["figures"], yk) * ys)
                          for r in ok])
    ax.step([p[0] for p in front], [p[1] for p in front], "k-", where="post", label="Pareto front")
    ax.set_xscale("log", base=2 if xbytes else 10)
    if xbytes:
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(human_bytes))
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    xname = x or xk
    ax.set_title(title(model, f"Pareto front, {y} vs {xname}", note, invalid), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    suffix = "" if x is None and y == "latency" else f"-{y}-vs-{xname}"
    save(fig, out_dir, f"pareto-{model}{suffix}")


COMPONENTS = ["mac", "sram", "vector", "dram", "leakage"]


def energy_breakdown(rows, model, out_dir, where):
    ok, invalid = figure_rows(rows, model)
    ok, note = hold_other_axes(ok, set().union(*(set(r["axes"]) for r in ok)) if ok else set(), where)
    ok = [r for r in ok if "energy_pj" in r["figures"]]
    if not ok:
        print(f"{model}: no energy_pj in the results (sweeps since issue 37 carry it)")
        return
    groups = by_policy(ok)
    policies = list(groups)
    # One point per policy once the other axes are held; where several remain, their mean.
    values = {c: [sum(r["figures"]["energy_pj"][c] for r in groups[p]) / len(groups[p]) * 1e-6
                  for p in policies] for c in COMPONENTS}
    fig, ax = plt.subplots(figsize=(7, 4.5))
    bottom = [0.0] * len(policies)
    for c in COMPONENTS:
        ax.bar(policies, values[c], bottom=bottom, label=c)
        bottom = [b + v for b, v in zip(bottom, values[c])]
    for i, total in enumerate(bottom):
        ax.annotate(f"{total:.4g}", (i, total), ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("energy per inference (uJ, predicted)")
    ax.set_title(title(model, "energy by component", note, invalid), fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, out_dir, f"energy-breakdown-{model}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", help="sweep results (JSONL)")
    parser.add_argument("--kind", required=True,
                        choices=["ski-slope", "bandwidth", "pareto", "energy-breakdown"])
    parser.add_argument("--x", choices=sorted(AXES), help="pareto: the cost axis (default: on-chip "
                        "bytes, or an FPGA resource where the figures have one)")
    parser.add_argument("--y", choices=sorted(AXES), default="latency",
                        help="pareto: the other axis (default: latency)")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                        help="hold an axis at this value (default: its median value)")
    args = parser.parse_args(argv)
    where = {}
    for item in args.where:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--where {item}: expected KEY=VALUE")
        where[key] = value
    rows = load(args.results)
    if not rows:
        sys.exit(f"{args.results}: no results")
    plot = {"ski-slope": ski_slope, "bandwidth": bandwidth, "energy-breakdown": energy_breakdown,
            "pareto": lambda *a: pareto(*a, x=args.x, y=args.y)}[args.kind]
    for model in dict.fromkeys(r["model"] for r in rows):
        plot(rows, model, args.out, where)


if __name__ == "__main__":
    main()
