#!/usr/bin/env python3
"""Per-call time of tessel.schedule from Python against the same call in C++, side by side.

Usage: PYTHONPATH=build/default/python bench/python/schedule_overhead.py [BUILD_DIR]
       [--model resnet50] [--hw npc19-deepfusion] [--policy optimal] [--objective bytes]
       [--rounds 5] [--calls 3]

Each round runs `tessel_schedule_speed` (a C++ process timing, call by call, what `tessel
schedule` runs in-process after loading: the policy's graph, sched::schedule_graph and the
predicted instruction fetch) and then the same number of
tessel.schedule(graph, hw, ...) calls in this process on a graph and config loaded once, so
both sides time only the call. Rounds alternate, so machine load hits both alike. Prints the
median per-call seconds of each, their ratio and the JSON line of the run.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir", nargs="?", default=str(ROOT / "build/default"))
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--hw", default="npc19-deepfusion")
    parser.add_argument("--policy", default="optimal")
    parser.add_argument("--objective", default="bytes")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=3)
    args = parser.parse_args()
    build = pathlib.Path(args.build_dir)
    sys.path.insert(0, str(build / "python"))
    import tessel

    speed = build / "bench/python/tessel_schedule_speed"
    hw_path = ROOT / "configs/hw" / f"{args.hw}.yaml"
    graph = tessel.load_model(args.model, with_weights=False)
    hw = tessel.HwConfig.load(str(hw_path))
    cpp, python, cycles = [], [], set()
    for _ in range(args.rounds):
        out = subprocess.run([str(speed), args.model, str(hw_path), args.policy, args.objective,
                              str(args.calls)], check=True, capture_output=True, text=True)
        for line in out.stdout.splitlines():
            row = json.loads(line)
            cpp.append(row["seconds"])
            cycles.add(row["cycles"])
        for _ in range(args.calls):
            start = time.perf_counter()
            s = tessel.schedule(graph, hw, policy=args.policy, objective=args.objective)
            python.append(time.perf_counter() - start)
            cycles.add(s.cycles)
    assert len(cycles) == 1, f"C++ and Python schedules differ: {cycles}"
    c, p = statistics.median(cpp), statistics.median(python)
    print(f"{args.model} on {args.hw}, {args.policy} ({args.objective}): "
          f"{len(cpp)} calls each, medians")
    print(f"  C++ (policy graph, schedule, fetch) {c * 1e6:11.1f} us  (min {min(cpp) * 1e6:.1f})")
    print(f"  Python tessel.schedule              {p * 1e6:11.1f} us  (min {min(python) * 1e6:.1f})")
    print(f"  Python - C++                        {(p - c) * 1e6:11.1f} us")
    print(f"  Python / C++                        {p / c:9.3f}x  (goal <= 1.05)")
    # The fastest calls: the overhead the binding adds, less of the machine's noise (a shared
    # VM's medians moved by 1.5x between runs of this script in session 42).
    print(f"  Python / C++, fastest calls         {min(python) / min(cpp):9.3f}x")
    print(json.dumps({"bench": "python_schedule_overhead", "model": args.model,
                      "config": args.hw, "policy": args.policy, "objective": args.objective,
                      "tool_version": tessel.__version__, "cpp_median_seconds": c,
                      "python_median_seconds": p, "ratio": p / c,
                      "cpp_min_seconds": min(cpp), "python_min_seconds": min(python),
                      "min_ratio": min(python) / min(cpp), "calls": len(cpp),
                      "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
