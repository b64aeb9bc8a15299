#!/usr/bin/python3
"""RTL (Verilator) vs SystemC simulator: cycles, DRAM bytes and final DRAM per program and group.

Runs `tessel sim` and `tessel rtl` on every ISA microbenchmark (tests/isa/programs, config
micro.yaml) and on `tessel compile` folders of zoo nets, and prints one row per program: sim
cycles, RTL cycles, error %, DRAM bytes equal, final DRAM equal (so the network outputs are
bit-exact), Verilator speed; then the mean absolute percentage error (MAPE) over programs.
For compile folders it also prints one row per fusion group (the group's instruction range from
compile.json; cycles = finish of the group's last instruction minus the previous group's, the
rule of `tessel sim`'s report.json) and the MAPE over groups. Results (JSON reports, per-group
rows) go to experiments/rtl_vs_sim/results/; compile folders to .cache/rtl_vs_sim/.

    nice -n 10 /usr/bin/python3 experiments/rtl_vs_sim/run.py \\
        [--tessel build/h-rtl2/tools/tessel/tessel] [--no-micro] \\
        [--nets resnet18,mobilenet_v2] [--configs edge-small,vta-pynq] \\
        [--policies opfusion,layerwise,fusion] [--first-policy]

--first-policy: per net and config, use only the first policy in --policies that compiles.
"""
import argparse
import filecmp
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


def pct(a, b):
    """|a - b| / b in percent (0 when b is 0)."""
    return 100.0 * abs(a - b) / b if b else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build/h-rtl2/tools/tessel/tessel"))
    ap.add_argument("--nets", default="tiny_conv,tiny_residual,tiny_depthwise,tiny_inception,tiny_mlp")
    ap.add_argument("--configs", default="edge-small")
    ap.add_argument("--policies", default="layerwise,fusion")
    ap.add_argument("--first-policy", action="store_true",
                    help="per net and config, only the first policy that compiles")
    ap.add_argument("--no-micro", action="store_true", help="skip the ISA microbenchmarks")
    ap.add_argument("--out", default=os.path.join(ROOT, "experiments/rtl_vs_sim/results"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    cases = []  # (label, tessel sim/rtl arguments, compile folder or None)
    programs = os.path.join(ROOT, "tests/isa/programs")
    if not args.no_micro:
        for name in sorted(os.listdir(programs)):
            if name.endswith(".tasm"):
                cases.append((name[:-5], [os.path.join(programs, name), "--hw",
                                          os.path.join(programs, "micro.yaml")], None))
    for config in filter(None, args.configs.split(",")):
        for net in filter(None, args.nets.split(",")):
            for policy in filter(None, args.policies.split(",")):
                folder = os.path.join(ROOT, ".cache/rtl_vs_sim", f"{net}.{config}.{policy}")
                rc, text = run([args.tessel, "compile", "-m", net, "--hw", config, "-p", policy,
                                "-o", folder])
                if rc != 0:
                    print(f"# skip {net}/{config}/{policy}: compile failed: "
                          f"{text.strip().splitlines()[-1][-160:] if text.strip() else rc}")
                    continue
                cases.append((f"{net}/{config}/{policy}", [folder], folder))
                if args.first_policy:
                    break

    header = (f"{'program':42} {'sim cycles':>12} {'rtl cycles':>12} {'error %':>8} "
              f"{'dram bytes':>10} {'final dram':>10} {'rtl kHz':>8}")
    errors, group_errors, rows, failed = [], [], [], 0
    for label, target, folder in cases:
        stem = os.path.join(args.out, label.replace("/", "."))
        sim_cmd = [args.tessel, "sim", *target, "--json", stem + ".sim.json",
                   "--dram-out", stem + ".sim.bin"]
        if folder:
            sim_cmd += ["--out", stem + ".sim"]  # report.json with the per-group rows
        rc_s, out_s = run(sim_cmd)
        start = time.time()
        rc_r, out_r = run([args.tessel, "rtl", *target, "--json", stem + ".rtl.json",
                           "--dram-out", stem + ".rtl.bin"])
        rtl_seconds = time.time() - start
        if not (os.path.exists(stem + ".sim.json") and os.path.exists(stem + ".rtl.json")):
            print(f"{label:42} run failed: sim rc {rc_s}, rtl rc {rc_r}\n{out_r[-400:]}")
            failed += 1
            continue
        sim = json.load(open(stem + ".sim.json"))
        rtl = json.load(open(stem + ".rtl.json"))
        cs, cr = sim["cycles"], rtl["cycles"]
        err = pct(cr, cs)
        errors.append(err)
        same_bytes = sim["dram_bytes"] == rtl["dram_bytes"]
        same_dram = (rc_s == rc_r and os.path.exists(stem + ".rtl.bin")
                     and filecmp.cmp(stem + ".sim.bin", stem + ".rtl.bin", shallow=False))
        khz = next((line.split("=")[-1].strip() for line in out_r.splitlines()
                    if line.startswith("speed")), "")
        row = {"program": label, "sim_cycles": cs, "rtl_cycles": cr, "error_pct": err,
               "dram_bytes_equal": same_bytes, "final_dram_equal": same_dram,
               "sim_status": sim["status"], "rtl_status": rtl["status"],
               "rtl_late_cycles": rtl.get("late_cycles"),
               "rtl_sram_collisions": rtl.get("sram_collisions"), "rtl_wall_seconds": rtl_seconds}
        if folder:
            sim_groups = json.load(open(os.path.join(stem + ".sim", "report.json")))["groups"]
            rtl_groups = rtl.get("groups", [])
            print(f"\n{label}: per group ({len(sim_groups)} groups)")
            print(f"{'#':>4} {'first op':32} {'sim cycles':>12} {'rtl cycles':>12} {'error %':>8}")
            row["groups"] = []
            errs = []
            for i, (gs, gr) in enumerate(zip(sim_groups, rtl_groups)):
                e = pct(gr["cycles"], gs["cycles"])
                errs.append(e)
                first_op = (gs.get("ops") or ["?"])[0]
                print(f"{i:>4} {first_op[:32]:32} {gs['cycles']:>12} {gr['cycles']:>12} {e:>8.3f}")
                row["groups"].append({"ops": gs.get("ops"), "sim_cycles": gs["cycles"],
                                      "rtl_cycles": gr["cycles"], "error_pct": e})
            if len(sim_groups) != len(rtl_groups):
                print(f"  group count differs: sim {len(sim_groups)}, rtl {len(rtl_groups)}")
                failed += 1
            group_mape = sum(errs) / len(errs) if errs else 0.0
            row["group_mape_pct"] = group_mape
            row["group_max_error_pct"] = max(errs) if errs else 0.0
            group_errors += errs
            print(f"  group MAPE {group_mape:.4f} %, max {row['group_max_error_pct']:.4f} %\n")
        print(header)
        print(f"{label:42} {cs:>12} {cr:>12} {err:>8.3f} {str(same_bytes):>10} "
              f"{str(same_dram):>10} {khz.replace(' kHz', ''):>8}")
        sys.stdout.flush()
        rows.append(row)
        if not (same_bytes and same_dram and sim["status"] == rtl["status"]):
            failed += 1
        for suffix in (".sim.bin", ".rtl.bin"):  # large; the comparison is what matters
            if os.path.exists(stem + suffix):
                os.remove(stem + suffix)
    mape = sum(errors) / len(errors) if errors else 0.0
    group_mape = sum(group_errors) / len(group_errors) if group_errors else 0.0
    print(f"MAPE {mape:.4f} % over {len(errors)} programs; "
          f"{failed} with a bytes/data/status mismatch")
    if group_errors:
        print(f"group MAPE {group_mape:.4f} % over {len(group_errors)} groups, "
              f"max {max(group_errors):.4f} %")
    summary = f"summary.{args.nets.replace(',', '+')}.{args.configs.replace(',', '+')}.json"
    json.dump({"rows": rows, "mape_pct": mape, "group_mape_pct": group_mape},
              open(os.path.join(args.out, summary), "w"), indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
