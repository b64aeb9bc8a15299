#!/usr/bin/python3
"""Tessel int8/fp32 executors vs onnxruntime fp32 on one model, same input, interleaved runs.

    bench/cpu/run.py [--build DIR] [--model PATH] [--runs N] [--threads 1,2] [--out DIR]

For each thread count it starts three engines (onnxruntime fp32 via ort_serve.js, tessel int8
and tessel fp32 via tessel_cpu_bench), all niced, and asks them for one run each in turn
(A B C A B C ...), N times; reports the median ms per engine and the ratios tessel/onnxruntime
(goal for int8: <= 1.0). It also checks that the engines saw the same input: the fp32 output's
max |diff| to onnxruntime (relative to the output range) and the int8 output's SQNR against it.
Results: a table on stdout and DIR/speed.json (default .cache/bench-cpu/, git-ignored).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Engine:
    """A benchmark process that answers one JSON line per command line."""

    def __init__(self, name, argv, env):
        self.name = name
        self.proc = subprocess.Popen(["nice", "-n", "10"] + argv, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env)
        self.ready = self._read()

    def _read(self):
        line = self.proc.stdout.readline()
        if not line:
            sys.exit(f"{self.name}: engine exited (rc {self.proc.wait()})")
        return json.loads(line)

    def ask(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        reply = self._read()
        if "error" in reply:
            sys.exit(f"{self.name}: {reply['error']}")
        return reply

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build", "default"))
    ap.add_argument("--model", default=os.path.join(REPO, ".cache", "models", "resnet50.onnx"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", default=os.path.join(REPO, ".cache", "bench-cpu"))
    ap.add_argument("--profile", action="store_true", help="also print tessel's per-op times")
    ap.add_argument("--omp-wait-policy", choices=["active", "passive"],
                    help="OMP_WAIT_POLICY for Tessel (default: libgomp's, which spins)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    bench = os.path.join(args.build, "bench", "cpu", "tessel_cpu_bench")
    ort_serve = os.path.join(REPO, "bench", "cpu", "ort_serve.js")
    input_npy = os.path.join(args.out, "input.npy")
    report = {"model": args.model, "runs": args.runs, "omp_wait_policy": args.omp_wait_policy,
              "by_threads": {}}

    for threads in [int(t) for t in args.threads.split(",")]:
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        if args.omp_wait_policy:
            env["OMP_WAIT_POLICY"] = args.omp_wait_policy
        int8 = Engine("tessel int8", [bench, "--model", args.model, "--mode", "int8",
                                      "--save-input", input_npy], env)
        fp32 = Engine("tessel fp32", [bench, "--model", args.model, "--mode", "fp32",
                                      "--input", input_npy], env)
        ort = Engine("onnxruntime fp32",
                     ["node", ort_serve, args.model, input_npy, "--threads", str(threads)], env)
        engines = [ort, int8, fp32]
        times = {e.name: [] for e in engines}
        cpu_times = {e.name: [] for e in engines}
        for _ in range(args.runs):
            for e in engines:
                reply = e.ask("run")
                times[e.name].append(reply["ms"])
                cpu_times[e.name].append(reply["cpu_ms"])
        outputs = {}
        for e in engines:
            path = os.path.join(args.out, f"out_{e.name.split()[-1]}_{e.name.split()[0]}.npy")
            e.ask("output " + path)
            outputs[e.name] = np.load(path).ravel()
        profile = int8.ask("profile") if args.profile else None
        profile_fp32 = fp32.ask("profile") if args.profile else None
        for e in engines:
            e.close()

        med = {name: statistics.median(t) for name, t in times.items()}
        cpu_med = {name: statistics.median(t) for name, t in cpu_times.items()}
        ref = outputs["onnxruntime fp32"]
        rng = float(ref.max() - ref.min())
        fp32_diff = float(np.abs(outputs["tessel fp32"] - ref).max())
        err = outputs["tessel int8"] - ref
        sqnr = float(10 * np.log10((ref ** 2).sum() / (err ** 2).sum()))
        row = {"median_ms": med, "all_ms": times, "median_cpu_ms": cpu_med, "all_cpu_ms": cpu_times,
               "int8_over_ort": med["tessel int8"] / med["onnxruntime fp32"],
               "fp32_over_ort": med["tessel fp32"] / med["onnxruntime fp32"],
               "int8_over_ort_cpu": cpu_med["tessel int8"] / cpu_med["onnxruntime fp32"],
               "fp32_over_ort_cpu": cpu_med["tessel fp32"] / cpu_med["onnxruntime fp32"],
               "fp32_max_abs_diff_over_range": fp32_diff / rng, "int8_sqnr_db_vs_ort": sqnr}
        if profile:
            row["int8_profile_ms"] = profile
            row["fp32_profile_ms"] = profile_fp32
        report["by_threads"][str(threads)] = row
        print(f"threads {threads}: median of {args.runs} interleaved runs, wall ms (CPU ms)")
        for name in times:
            print(f"  {name:18s} {med[name]:8.1f} ({cpu_med[name]:.1f})   all wall: " +
                  " ".join(f"{t:.1f}" for t in times[name]))
        print(f"  int8 / onnxruntime = {row['int8_over_ort']:.2f} wall, "
              f"{row['int8_over_ort_cpu']:.2f} CPU   "
              f"fp32 / onnxruntime = {row['fp32_over_ort']:.2f} wall, "
              f"{row['fp32_over_ort_cpu']:.2f} CPU")
        print(f"  same input: fp32 max|diff| = {row['fp32_max_abs_diff_over_range']:.2g} x range,"
              f" int8 SQNR vs onnxruntime = {sqnr:.1f} dB")
        if profile:
            for label, p in (("int8", profile), ("fp32", profile_fp32)):
                parts = sorted(p["ms_by_op"].items(), key=lambda kv: -kv[1])
                print(f"  tessel {label} per op kind (ms, one run): " +
                      ", ".join(f"{k} {v:.1f}" for k, v in parts))
        sys.stdout.flush()
    with open(os.path.join(args.out, "speed.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
