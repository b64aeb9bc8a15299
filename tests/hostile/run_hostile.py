#!/usr/bin/env python3
"""Runs the hostile-input cases of cases.py against the tessel binary.

Each case gets a fresh folder with its files, runs one `tessel` command there and checks:
  - the exit code is the expected one (1 for a refused input) and no signal killed it
    (an uncaught exception aborts with 134, a crash dies of SIGSEGV);
  - it ended within the case's time limit (no hang);
  - every expected pattern (regular expressions, {d} = the case folder) is in stderr: the
    error names the file and the key, line or field;
  - no file in the folder changed, appeared or vanished (names, types, modes, contents,
    symlink targets): nothing of the user's is lost and no partial output is left behind.
Prints one line per failure and a table of cases per category; exits 1 on any failure.
Usage: run_hostile.py --tessel PATH [--jobs N] [--only SUBSTRING] [--verbose]
"""
import argparse
import collections
import concurrent.futures
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as case_catalogue  # noqa: E402


def snapshot(folder):
    """Everything a user could lose in `folder`: one entry per path."""
    state = {}
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in sorted(dirs + files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                state[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256()
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        digest.update(chunk)
                state[rel] = ("file", stat.S_IMODE(info.st_mode), info.st_size, digest.hexdigest())
            elif stat.S_ISDIR(info.st_mode):
                state[rel] = ("dir", stat.S_IMODE(info.st_mode))
            else:
                state[rel] = ("other", stat.S_IFMT(info.st_mode))
    return state


def make_files(folder, files):
    for name, content in files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, case_catalogue.Special):
            content.make(path)
        else:
            with open(path, "wb") as f:
                f.write(content.encode() if isinstance(content, str) else content)


def run_case(tessel, case):
    """Returns (case, problem or None, stderr)."""
    folder = tempfile.mkdtemp(prefix="tessel_hostile_")
    try:
        make_files(folder, case.files)
        before = snapshot(folder)
        argv = [tessel] + [a.replace("{d}", folder) for a in case.argv]
        try:
            done = subprocess.run(argv, cwd=folder, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=case.timeout)
        except subprocess.TimeoutExpired:
            return case, f"hung: no exit within {case.timeout} s", ""
        stderr = done.stderr.decode(errors="replace")
        if done.returncode < 0:
            return case, f"killed by signal {-done.returncode}", stderr
        if done.returncode != case.exit_code:
            return case, f"exit code {done.returncode}, expected {case.exit_code}", stderr
        for pattern in case.expect:
            regex = pattern.replace("{d}", re.escape(folder))
            if not re.search(regex, stderr):
                return case, f"stderr lacks /{pattern}/", stderr
        after = snapshot(folder)
        if after != before:
            changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
            return case, "files changed on disk: " + ", ".join(changed), stderr
        return case, None, stderr
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tessel", required=True, type=os.path.abspath)
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument("--only", default="")
    parser.add_argument("--verbose", action="store_true")
    # Every K-th case of each category (the first of each always): the ASan preset's sample,
    # where the suite is mostly `tessel` starting under the sanitizer; the default preset runs
    # every case.
    parser.add_argument("--sample", type=int, default=1)
    args = parser.parse_args()
    selected = [c for c in case_catalogue.all_cases() if args.only in c.name]
    seen = collections.Counter()
    sampled = []
    for c in selected:
        if seen[c.category] % max(1, args.sample) == 0:
            sampled.append(c)
        seen[c.category] += 1
    selected = sampled
    names = collections.Counter(c.name for c in selected)
    duplicates = [n for n, k in names.items() if k > 1]
    if duplicates:
        print("duplicate case names: " + ", ".join(duplicates))
        return 1
    by_category = collections.OrderedDict()
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for case, problem, stderr in pool.map(lambda c: run_case(args.tessel, c), selected):
            row = by_category.setdefault(case.category, [0, 0])
            row[0] += 1
            if problem is None:
                row[1] += 1
                if args.verbose:
                    print(f"ok   {case.name}: {stderr.strip().splitlines()[-1:]}")
            else:
                failures += 1
                print(f"FAIL {case.name}: {problem}\n     stderr: {stderr.strip()[:600]}")
    print(f"{'category':<28} {'cases':>5} {'passed':>6}")
    for category, (total, passed) in by_category.items():
        print(f"{category:<28} {total:>5} {passed:>6}")
    print(f"{'total':<28} {len(selected):>5} {len(selected) - failures:>6}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
