#!/usr/bin/env python3
"""speed.sh's measurements and table: `tessel compile`, `tessel sim` (full and --timing-only)
and onnxruntime fp32 on ResNet-50 batch 1 (speed.sh), or another model with --tessel-model (speed_bert.sh: one bert_base layer at sequence 128, as a
.json IR that `tessel import` wrote). What each figure means: bench/e2e/README.md.

Per `tessel sim` run: the process's wall time, its CPU time (user + sys, all threads, from
wait4) and its own `simulate` seconds (report.json host_seconds: program and DRAM image in
memory -> FINISH, the analogue of onnxruntime's session.run). onnxruntime: ort_time.js, mean of
N in-process session.run calls after a warm-up, model loading excluded, with onnxruntime's
default intra-op threads (one per physical core) and with 1 thread; the default-thread figure is
taken before and after the tessel runs and averaged.
"""
import argparse
import filecmp
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import time


def run_timed(cmd, log):
    """(wall s, CPU s) of one child process; stdout to `log`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(log, "w") as out:
        subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def ort_ms(args, threads):
    out = subprocess.run(["node", args.ort, args.model, str(args.work / "input.npy"), "--runs",
                          str(args.ort_runs), "--threads", str(threads)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def report_without_host(path):
    report = json.loads(pathlib.Path(path).read_text())
    for key in ("host_seconds", "host_cpu_seconds", "host_threads", "tool_version"):
        report.pop(key, None)
    return report


def main():
    p = argparse.ArgumentParser()
    for name in ("--tessel", "--hw", "--policy", "--model", "--ort", "--before"):
        p.add_argument(name)
    p.add_argument("--work", type=pathlib.Path)
    p.add_argument("--objective", default="bytes", help="tessel compile --objective")
    p.add_argument("--skip-compile", action="store_true")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--ort-runs", type=int, default=10)
    p.add_argument("--sim-threads", type=int, default=2, help="tessel sim --threads (1-3)")
    p.add_argument("--before-threads", type=int,
                   help="the --before binary's --threads (default: --sim-threads)")
    p.add_argument("--tessel-model", default="resnet50",
                   help="tessel compile --model: a zoo name or a model file")
    p.add_argument("--label", default="ResNet-50", help="the model's name in the table")
    p.add_argument("--timing-goal", default="0.2", help="the --timing-only goal (x onnxruntime)")
    p.add_argument("--compile-flags", default="",
                   help="more tessel compile flags, space-separated (e.g. --no-2d-tiles)")
    args = p.parse_args()
    compile_flags = args.compile_flags.split()
    # optimal (bytes objective) keeps the folder's old name; other programs have their own, so
    # that SKIP_COMPILE=1 never runs one program under another's name.
    default_program = args.policy == "optimal" and args.objective == "bytes" and not compile_flags
    compiled = args.work / ("compiled" if default_program else
                            f"compiled-{args.policy}-{args.objective}" +
                            "".join(compile_flags).replace("-", "_"))

    compile_row = None
    if not (args.skip_compile and (compiled / "program.bin").exists()):
        compile_row = run_timed([args.tessel, "compile", "--model", args.tessel_model,
                                 "--hw", args.hw,
                                 "--policy", args.policy, "--objective", args.objective,
                                 *compile_flags, "--out", str(compiled)],
                                args.work / "compile.log")

    ort_default = [ort_ms(args, 0)]
    ort_single = ort_ms(args, 1)

    binaries = [("after", args.tessel)] + ([("before", args.before)] if args.before else [])
    modes = [("full", ["--input", str(args.work / "input.npy")]), ("timing-only", ["--timing-only"])]
    samples = {(b, m): [] for b, _ in binaries for m, _ in modes}
    for _ in range(args.repeats):
        for label, binary in reversed(binaries):  # before (if any) then after, alternating
            for mode, extra in modes:
                out = args.work / f"{label}-{mode}"
                wall, cpu = run_timed([binary, "sim", str(compiled), *extra, "--out", str(out),
                                       "--timings", "--threads",
                                       str(args.before_threads if label == "before" and
                                           args.before_threads else args.sim_threads)],
                                      args.work / f"{label}-{mode}.log")
                report = json.loads((out / "report.json").read_text())
                simulate = report.get("host_seconds", {}).get("simulate")
                simulate_cpu = report.get("host_cpu_seconds", {}).get("simulate")
                samples[(label, mode)].append((wall, cpu, simulate, report.get("host_threads", 1),
                                               simulate_cpu))
    ort_default.append(ort_ms(args, 0))
    ort_s = statistics.mean(o["ms_per_run"] for o in ort_default) / 1000
    ort1_s = ort_single["ms_per_run"] / 1000

    print(f"onnxruntime fp32, in-process session.run, mean of {args.ort_runs} after a warm-up:")
    print(f"  default intra-op threads (one per core): "
          f"{', '.join('%.4f' % (o['ms_per_run'] / 1000) for o in ort_default)} s "
          f"(before/after the tessel runs; fastest single run "
          f"{min(o['ms_min'] for o in ort_default) / 1000:.4f} s) -> {ort_s:.4f} s")
    print(f"  1 intra-op thread: {ort1_s:.4f} s (fastest {ort_single['ms_min'] / 1000:.4f} s)")
    meta = json.loads((compiled / "compile.json").read_text())
    print(f"program: {compiled} ({args.label}, {args.hw}, {meta.get('policy')}, objective "
          f"{meta.get('objective', 'bytes')}, {meta.get('predicted_cycles')} predicted cycles)")
    if compile_row:
        print(f"tessel compile: {compile_row[0]:.3f} s wall, {compile_row[1]:.2f} s CPU "
              f"(goal <= 2 s)")
    print(f"tessel sim, median of {args.repeats} (fastest in brackets); x = / onnxruntime "
          f"default threads ({ort_s:.4f} s), x1 = / onnxruntime 1 thread ({ort1_s:.4f} s):")
    summary = {"model": args.label, "tessel_model": args.tessel_model, "hw": args.hw,
               "policy": args.policy, "objective": args.objective,
               "tool_version": json.loads((args.work / "after-full" / "report.json").read_text())
               .get("tool_version"), "onnxruntime_s": ort_s, "onnxruntime_1thread_s": ort1_s,
               "repeats": args.repeats, "rows": []}
    print(f"  {'binary':7} {'mode':12} {'threads':>7} {'simulate s':>18} {'x':>6} {'x1':>6} "
          f"{'sim CPU s':>9} {'process wall s':>18} {'x':>6} {'CPU s':>6}   goal")
    for label, _ in binaries:
        for mode, _ in modes:
            rows = samples[(label, mode)]
            wall = statistics.median(r[0] for r in rows)
            cpu = statistics.median(r[1] for r in rows)
            sims = [r[2] for r in rows if r[2] is not None]
            if sims:
                sim = statistics.median(sims)
                sim_text = f"{sim:8.4f} ({min(sims):.4f})"
                x, x1 = f"{sim / ort_s:6.2f}", f"{sim / ort1_s:6.2f}"
            else:
                sim_text, x, x1 = f"{'n/a':>18}", f"{'':6}", f"{'':6}"
            goal = "<= 2x" if mode == "full" else f"<= {args.timing_goal}x"
            sim_cpus = [r[4] for r in rows if r[4] is not None]
            sim_cpu = f"{statistics.median(sim_cpus):9.4f}" if sim_cpus else f"{'n/a':>9}"
            summary["rows"].append({
                "binary": label, "mode": mode, "threads": rows[0][3],
                "simulate_s": statistics.median(sims) if sims else None,
                "simulate_fastest_s": min(sims) if sims else None,
                "x": statistics.median(sims) / ort_s if sims else None,
                "process_wall_s": wall, "goal": goal})
            print(f"  {label:7} {mode:12} {rows[0][3]:>7} {sim_text:>18} {x} {x1} {sim_cpu} "
                  f"{wall:8.4f} ({min(r[0] for r in rows):.4f}) {wall / ort_s:6.2f} {cpu:6.3f}"
                  f"   {goal}")
    if args.before:
        for mode, _ in modes:
            same_report = (report_without_host(args.work / f"after-{mode}" / "report.json") ==
                           report_without_host(args.work / f"before-{mode}" / "report.json"))
            line = f"  {mode}: report.json (minus host_*, tool_version) identical: {same_report}"
            if mode == "full":
                same_output = filecmp.cmp(args.work / "after-full" / "output.npy",
                                          args.work / "before-full" / "output.npy", shallow=False)
                line += f"; output.npy identical: {same_output}"
            print(line)
    print(f"load average now {open('/proc/loadavg').read().split()[:3]}")
    (args.work / "speed.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"wrote {args.work / 'speed.json'}")


if __name__ == "__main__":
    sys.exit(main())
