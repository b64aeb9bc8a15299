#!/usr/bin/env python3
"""Schedules and programs before and after a change, compared byte for byte.

Usage:
  scripts/schedule_identity.py run TESSEL OUT_DIR [--programs] [--models m1,m2] [--configs ...]
      [--programs-only] [--program-models m1,m2] [--program-configs c1,c2]
  scripts/schedule_identity.py compare BEFORE_DIR AFTER_DIR
  scripts/schedule_identity.py recost TESSEL AFTER_DIR

`recost` reads every schedule of AFTER_DIR back through its explicit mappings (`tessel schedule
--mapping`, no search) and compares the result with the schedule (search_seconds and
tool_version dropped), then compiles every compile folder's schedule.json again (`tessel compile
--schedule`) and compares program.bin and dram.bin byte for byte.

`run` writes `tessel schedule --json` for every model x config x policy/objective (the six zoo
models, the four configs of configs/hw, layerwise/fusion/fusion+reuse under bytes and
opfusion/optimal under bytes and latency: 168 schedules), and with --programs `tessel compile`
program.bin files for a smaller set (PROGRAM_CASES, or --program-models x --program-configs
under fusion+reuse bytes and optimal bytes/latency); --programs-only skips the schedules (a
change to code generation alone). `compare` normalises both sides and
reports every difference:
- tool_version and search_seconds are dropped (they differ by build and by run), and so is
  machine, the hardware view written since session 29 (the config's, not a figure);
- a group written with an explicit `mapping` (issue 35) has it turned back into the flat keys
  older schedules carried (row_tiles, col_tiles, channel_tiles, halo, weights_resident,
  double_buffered, weight_sweep, op_slices, memory_reuse, rows_per_step), by the rules of
  docs/scheduler.md "The explicit mapping", written here again independently of the C++ reader.
Exit status 0 when everything compared is identical, 1 otherwise.
"""
import json
import os
import subprocess
import sys

MODELS = ["resnet18", "resnet50", "vgg19", "googlenet", "inception_v3", "mobilenet_v2"]
CONFIGS = ["edge-small", "npc19-deepfusion", "vta-pynq", "cloud-large"]
CASES = [("layerwise", "bytes"), ("fusion", "bytes"), ("fusion+reuse", "bytes"),
         ("opfusion", "bytes"), ("opfusion", "latency"), ("optimal", "bytes"),
         ("optimal", "latency")]
PROGRAM_CASES = [(m, c, p, o) for m in ["resnet18", "mobilenet_v2"]
                 for c in ["edge-small", "npc19-deepfusion"]
                 for p, o in [("fusion+reuse", "bytes"), ("optimal", "bytes"),
                              ("optimal", "latency")]]


def stem(model, config, policy, objective):
    return f"{model}.{config}.{policy.replace('+', '_')}.{objective}"


def arg_list(args, flag, default):
    if flag in args:
        return args[args.index(flag) + 1].split(",")
    return default


def run(tessel, out, args):
    os.makedirs(out, exist_ok=True)
    models = [] if "--programs-only" in args else arg_list(args, "--models", MODELS)
    configs = arg_list(args, "--configs", CONFIGS)
    for model in models:
        for config in configs:
            for policy, objective in CASES:
                path = os.path.join(out, stem(model, config, policy, objective) + ".json")
                if os.path.exists(path):
                    continue
                cmd = [tessel, "schedule", "--model", model, "--hw", config, "--policy", policy,
                       "--objective", objective, "--quiet", "--json", path + ".tmp"]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    with open(path, "w") as f:
                        json.dump({"error": r.stderr.strip()[-400:]}, f)
                else:
                    os.replace(path + ".tmp", path)
                print(path, r.returncode, flush=True)
    if "--programs" in args:
        cases = PROGRAM_CASES
        if "--program-models" in args or "--program-configs" in args:
            cases = [(m, c, p, o)
                     for m in arg_list(args, "--program-models", ["resnet18", "mobilenet_v2"])
                     for c in arg_list(args, "--program-configs", ["edge-small", "npc19-deepfusion"])
                     for p, o in [("fusion+reuse", "bytes"), ("optimal", "bytes"),
                                  ("optimal", "latency")]]
        for model, config, policy, objective in cases:
            folder = os.path.join(out, stem(model, config, policy, objective) + ".compile")
            if os.path.exists(os.path.join(folder, "program.bin")):
                continue
            cmd = [tessel, "compile", "--model", model, "--hw", config, "--policy", policy,
                   "--objective", objective, "--out", folder]
            r = subprocess.run(cmd, capture_output=True, text=True)
            print(folder, r.returncode, r.stderr.strip()[-300:], flush=True)


def flat_from_mapping(group):
    """The flat keys of a group written with an explicit mapping (docs/scheduler.md)."""
    m = group.pop("mapping")
    flat = {"row_tiles": 1, "col_tiles": 1, "channel_tiles": 1, "halo": "recompute",
            "weights_resident": True, "double_buffered": False, "memory_reuse": True,
            "rows_per_step": []}
    if m["nest"] != "dram_view":
        ops = m["ops"]
        operands = [o for op in ops for o in op["operands"]]
        flat["halo"] = m["halo"]
        flat["memory_reuse"] = m["memory_reuse"]
        flat["rows_per_step"] = [op["rows_per_step"] for op in ops]
        if m["nest"] == "op_major":
            flat["weights_resident"] = False
            flat["double_buffered"] = True
            flat["weight_sweep"] = True
            flat["op_slices"] = [
                op["loops"][0]["tiles"]
                if any(o["operand"] == "weights" for o in op["operands"]) else 0
                for op in ops]
        else:
            loops = ops[0]["loops"]
            assert [l["axis"] for l in loops[:3]] == ["channels", "rows", "cols"]
            flat["channel_tiles"], flat["row_tiles"], flat["col_tiles"] = (
                loops[0]["tiles"], loops[1]["tiles"], loops[2]["tiles"])
            flat["weights_resident"] = not any(
                o["operand"] == "weights" and o["residency"] == "streamed" for o in operands)
            flat["double_buffered"] = any(o["double_buffered"] for o in operands)
        if m["prefetched"]:
            group["prefetched"] = True
    group.update(flat)
    return group


def normalise(schedule):
    schedule.pop("tool_version", None)
    schedule.pop("machine", None)  # the hardware view (session 29): the config's, not a figure
    schedule.pop("search_seconds", None)
    for group in schedule.get("groups", []):
        if "mapping" in group:
            flat_from_mapping(group)
    return schedule


def compare(before, after):
    names = sorted(n for n in os.listdir(before) if n.endswith(".json"))
    same = differ = missing = 0
    for name in names:
        b_path, a_path = os.path.join(before, name), os.path.join(after, name)
        if not os.path.exists(a_path):
            missing += 1
            print("missing after:", name)
            continue
        b = normalise(json.load(open(b_path)))
        a = normalise(json.load(open(a_path)))
        if a == b:
            same += 1
        else:
            differ += 1
            print("DIFFERS:", name)
    programs_same = programs_differ = 0
    for name in sorted(n for n in os.listdir(before) if n.endswith(".compile")):
        for file in ["program.bin", "dram.bin"]:
            b_path, a_path = os.path.join(before, name, file), os.path.join(after, name, file)
            if not (os.path.exists(b_path) and os.path.exists(a_path)):
                print("missing:", name, file)
                programs_differ += 1
                continue
            if open(b_path, "rb").read() == open(a_path, "rb").read():
                programs_same += 1
            else:
                programs_differ += 1
                print("DIFFERS:", name, file)
    print(f"schedules: {same} identical, {differ} differ, {missing} missing of {len(names)}; "
          f"program/dram files: {programs_same} identical, {programs_differ} differ")
    return 0 if differ == 0 and missing == 0 and programs_differ == 0 else 1


def recost(tessel, after):
    same = differ = 0
    for name in sorted(n for n in os.listdir(after) if n.endswith(".json")):
        model, config = name.split(".")[0], name.split(".")[1]
        path = os.path.join(after, name)
        out = os.path.join(after + ".recost", name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        r = subprocess.run([tessel, "schedule", "--model", model, "--hw", config, "--mapping", path,
                            "--quiet", "--json", out], capture_output=True, text=True)
        if r.returncode == 0 and normalise(json.load(open(path))) == normalise(json.load(open(out))):
            same += 1
        else:
            differ += 1
            print("DIFFERS:", name, r.stderr.strip()[-300:])
    programs_same = programs_differ = 0
    for name in sorted(n for n in os.listdir(after) if n.endswith(".compile")):
        model, config = name.split(".")[0], name.split(".")[1]
        folder = os.path.join(after, name)
        again = os.path.join(after + ".recost", name)
        r = subprocess.run([tessel, "compile", "--model", model, "--hw", config, "--schedule",
                            os.path.join(folder, "schedule.json"), "--out", again],
                           capture_output=True, text=True)
        for file in ["program.bin", "dram.bin"]:
            ok = r.returncode == 0 and open(os.path.join(folder, file), "rb").read() == \
                open(os.path.join(again, file), "rb").read()
            programs_same += ok
            programs_differ += not ok
            if not ok:
                print("DIFFERS:", name, file, r.stderr.strip()[-300:])
    print(f"recosted schedules: {same} identical, {differ} differ; recompiled program/dram "
          f"files: {programs_same} identical, {programs_differ} differ")
    return 0 if differ == 0 and programs_differ == 0 else 1


def main(argv):
    if len(argv) >= 4 and argv[1] == "run":
        run(argv[2], argv[3], argv[4:])
        return 0
    if len(argv) == 4 and argv[1] == "recost":
        return recost(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == "compare":
        return compare(argv[2], argv[3])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
