#!/usr/bin/python3
"""CPU seconds (user + sys) of compiling single translation units, with extra flags appended.

Issue 38, item 7: what a flag change saves, measured per unit on a shared machine (CPU time,
which load inflates little; wall time means nothing at load 20). Each LABEL=SUFFIX:FLAGS
compiles the build's own command for the first unit of compile_commands.json whose path ends
with SUFFIX, with FLAGS appended after its own (the last -O/-g wins), into a scratch object,
without ccache, niced. The units run one after another (-j 1) or --jobs at a time.

  bench/python/tu_cpu.py --build build/default \\
      'bind_asis=python/src/bind_pipeline.cpp:' 'bind_O1g1=python/src/bind_pipeline.cpp:-O1 -g1'

Prints one line per unit: label, CPU seconds, the unit. python/README.md has the results.
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys
import tempfile


def command_for(entries, suffix, extra, out):
    matches = [e for e in entries if e["file"].endswith(suffix)]
    if not matches:
        sys.exit(f"tu_cpu: no unit in compile_commands.json ends with {suffix!r}")
    entry = matches[0]
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    if os.path.basename(args[0]) in ("ccache", "sccache"):
        args = args[1:]
    args[args.index("-o") + 1] = out
    c = args.index("-c")
    args[c:c] = shlex.split(extra)
    return entry["directory"], args, entry["file"]


def cpu_seconds(directory, args):
    """Runs the compile as a child; returns its CPU seconds (user + sys, children included)."""
    script = ("import resource,subprocess,sys;"
              "r=subprocess.run(sys.argv[1:]).returncode;"
              "u=resource.getrusage(resource.RUSAGE_CHILDREN);"
              "print(u.ru_utime+u.ru_stime);sys.exit(r)")
    done = subprocess.run(["nice", "-n", "10", sys.executable, "-c", script, *args],
                          cwd=directory, capture_output=True, text=True,
                          env={**os.environ, "CCACHE_DISABLE": "1"})
    if done.returncode != 0:
        sys.exit(f"tu_cpu: the compile failed:\n{done.stderr}")
    return float(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build/default")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("units", nargs="+", help="LABEL=SUFFIX:FLAGS")
    options = parser.parse_args()
    with open(os.path.join(options.build, "compile_commands.json")) as f:
        entries = json.load(f)
    scratch = tempfile.mkdtemp(prefix="tu_cpu.")
    jobs = []
    for spec in options.units:
        label, _, rest = spec.partition("=")
        suffix, _, extra = rest.partition(":")
        jobs.append((label, *command_for(entries, suffix, extra,
                                         os.path.join(scratch, label + ".o"))))
    with concurrent.futures.ThreadPoolExecutor(options.jobs) as pool:
        results = pool.map(lambda job: (job[0], cpu_seconds(job[1], job[2]), job[3]), jobs)
        for label, seconds, unit in results:
            print(f"{label}\t{seconds:.2f}\t{os.path.relpath(unit)}", flush=True)


if __name__ == "__main__":
    main()
