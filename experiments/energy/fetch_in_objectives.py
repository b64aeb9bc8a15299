#!/usr/bin/env python3
"""Would instruction fetch change what the energy objectives choose? (issue 37, docs/energy.md
"Instruction fetch" and "Optimising energy").

Reads the log of the zoo timing matrix (`e2e_zoo_tests --gtest_filter='Matrix/ZooTiming.*'`),
whose `energy MODEL CONFIG POLICY: ...` lines give, per compiled schedule, the predicted energy
with the program's instruction fetch, the fetch's own part, the cycles and the EDP. For every
(model, config) it compares `optimal` under the four objectives (bytes, latency, energy, edp):

- without fetch (what the objectives minimise): is the energy schedule the least in energy, the
  edp schedule the least in E x T?
- with fetch: is it still so? If yes everywhere, counting fetch inside the objectives could not
  have changed their choice among these candidates.

Writes JSON (per cell: each objective's energy with and without fetch, cycles, the verdicts;
the tool version given with --tool-version) and prints a summary.

    python3 experiments/energy/fetch_in_objectives.py LOG --json OUT [--tool-version V]
"""
import argparse
import json
import re
import sys

LINE = re.compile(
    r"^energy (?P<model>\S+) (?P<config>\S+) (?P<policy>\S+): .*predicted (?P<uj>[0-9.e+-]+) uJ "
    r"\(fetch (?P<fetch>[0-9.e+-]+) uJ\), (?P<cycles>\d+) cycles")
OBJECTIVES = {"optimal": "bytes", "optimal:latency": "latency", "optimal:energy": "energy",
              "optimal:edp": "edp"}


def parse(lines):
    cells = {}
    for line in lines:
        m = LINE.match(line.strip())
        if not m or m["policy"] not in OBJECTIVES:
            continue
        with_fetch = float(m["uj"])
        fetch = float(m["fetch"])
        cells.setdefault((m["model"], m["config"]), {})[OBJECTIVES[m["policy"]]] = {
            "energy_uj": with_fetch - fetch, "energy_with_fetch_uj": with_fetch,
            "fetch_uj": fetch, "cycles": int(m["cycles"])}
    return cells


def verdicts(rows):
    e = lambda r: r["energy_uj"]
    ef = lambda r: r["energy_with_fetch_uj"]
    out = {}
    if "energy" in rows:
        out["energy_least_without_fetch"] = all(e(rows["energy"]) <= e(r) * (1 + 1e-9)
                                                for r in rows.values())
        out["energy_least_with_fetch"] = all(ef(rows["energy"]) <= ef(r) * (1 + 1e-9)
                                             for r in rows.values())
        # Over the bytes and latency schedules, the candidates the energy objective beat.
        others = [r for n, r in rows.items() if n in ("bytes", "latency")]
        if others:
            out["energy_with_fetch_margin"] = min(
                (ef(r) - ef(rows["energy"])) / ef(rows["energy"]) for r in others)
    if "edp" in rows:
        out["edp_least_without_fetch"] = all(
            e(rows["edp"]) * rows["edp"]["cycles"] <= e(r) * r["cycles"] * (1 + 1e-9)
            for r in rows.values())
        out["edp_least_with_fetch"] = all(
            ef(rows["edp"]) * rows["edp"]["cycles"] <= ef(r) * r["cycles"] * (1 + 1e-9)
            for r in rows.values())
    spread = [r["fetch_uj"] for r in rows.values()]
    out["fetch_spread_uj"] = max(spread) - min(spread)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log")
    parser.add_argument("--json", required=True)
    parser.add_argument("--tool-version", default="unknown")
    args = parser.parse_args()
    with open(args.log, encoding="utf-8", errors="replace") as f:
        cells = parse(f)
    if not cells:
        sys.exit(f"{args.log}: no 'energy MODEL CONFIG optimal...' lines with fetch")
    rows = []
    for (model, config), by_objective in sorted(cells.items()):
        rows.append({"model": model, "config": config, "policy": "optimal",
                     "objectives": by_objective, **verdicts(by_objective)})
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump({"tool_version": args.tool_version, "source": args.log, "cells": rows}, f,
                  indent=1)
    complete = [r for r in rows if len(r["objectives"]) == 4]
    print(f"{len(rows)} cells, {len(complete)} with all four objectives")
    for key in ("energy_least_without_fetch", "energy_least_with_fetch", "edp_least_without_fetch",
                "edp_least_with_fetch"):
        bad = [f"{r['model']}/{r['config']}" for r in complete if r.get(key) is False]
        print(f"{key}: {len(complete) - len(bad)}/{len(complete)}" + (f" (not: {bad})" if bad else ""))
    margins = [r["energy_with_fetch_margin"] for r in complete if "energy_with_fetch_margin" in r]
    if margins:
        print(f"least margin of the energy schedule over the bytes and latency ones, fetch "
              f"included: "
              f"{100 * min(margins):.3f}%")
    print(f"largest fetch difference between a cell's schedules: "
          f"{max(r['fetch_spread_uj'] for r in complete):.2f} uJ" if complete else "")


if __name__ == "__main__":
    main()
