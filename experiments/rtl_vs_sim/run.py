#!/usr/bin/python3
"""RTL (Verilator) vs SystemC simulator: cycles, DRAM bytes and final DRAM per program.

Runs `tessel sim` and `tessel rtl` on every ISA microbenchmark (tests/isa/programs, config
micro.yaml) and on the compile folders of small zoo nets (`tessel compile`), and prints one row
per program: sim cycles, RTL cycles, error %, DRAM bytes equal, final DRAM equal; then the mean
absolute percentage error. Results (JSON reports) go to experiments/rtl_vs_sim/results/.

    /usr/bin/python3 experiments/rtl_vs_sim/run.py [--tessel build/h-rtl2/tools/tessel/tessel]
        [--nets tiny_conv,tiny_residual] [--configs edge-small] [--policies layerwise,fusion]
"""
import argparse
import filecmp
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build/h-rtl2/tools/tessel/tessel"))
    ap.add_argument("--nets", default="tiny_conv,tiny_residual,tiny_depthwise,tiny_inception,tiny_mlp")
    ap.add_argument("--configs", default="edge-small")
    ap.add_argument("--policies", default="layerwise,fusion")
    ap.add_argument("--no-micro", action="store_true", help="skip the ISA microbenchmarks")
    ap.add_argument("--out", default=os.path.join(ROOT, "experiments/rtl_vs_sim/results"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    cases = []  # (label, tessel sim/rtl arguments)
    programs = os.path.join(ROOT, "tests/isa/programs")
    if not args.no_micro:
        for name in sorted(os.listdir(programs)):
            if name.endswith(".tasm"):
                cases.append((name[:-5], [os.path.join(programs, name), "--hw",
                                          os.path.join(programs, "micro.yaml")]))
    for config in filter(None, args.configs.split(",")):
        for net in filter(None, args.nets.split(",")):
            for policy in filter(None, args.policies.split(",")):
                folder = os.path.join(ROOT, ".cache/rtl_vs_sim", f"{net}.{config}.{policy}")
                rc, text = run([args.tessel, "compile", "-m", net, "--hw", config, "-p", policy,
                                "-o", folder])
                if rc != 0:
                    print(f"# skip {net}/{config}/{policy}: compile failed: {text.strip()[-200:]}")
                    continue
                cases.append((f"{net}/{config}/{policy}", [folder]))

    print(f"{'program':42} {'sim cycles':>12} {'rtl cycles':>12} {'error %':>8} "
          f"{'dram bytes':>10} {'final dram':>10} {'rtl kHz':>8}")
    errors, rows, failed = [], [], 0
    for label, target in cases:
        stem = os.path.join(args.out, label.replace("/", "."))
        rc_s, out_s = run([args.tessel, "sim", *target, "--json", stem + ".sim.json",
                           "--dram-out", stem + ".sim.bin"])
        rc_r, out_r = run([args.tessel, "rtl", *target, "--json", stem + ".rtl.json",
                           "--dram-out", stem + ".rtl.bin"])
        if not (os.path.exists(stem + ".sim.json") and os.path.exists(stem + ".rtl.json")):
            print(f"{label:42} run failed: sim rc {rc_s}, rtl rc {rc_r}\n{out_r[-400:]}")
            failed += 1
            continue
        sim = json.load(open(stem + ".sim.json"))
        rtl = json.load(open(stem + ".rtl.json"))
        cs, cr = sim["cycles"], rtl["cycles"]
        err = 100.0 * abs(cr - cs) / cs if cs else 0.0
        errors.append(err)
        same_bytes = sim["dram_bytes"] == rtl["dram_bytes"]
        same_dram = (rc_s == rc_r and os.path.exists(stem + ".rtl.bin")
                     and filecmp.cmp(stem + ".sim.bin", stem + ".rtl.bin", shallow=False))
        khz = next((line.split("=")[-1].strip() for line in out_r.splitlines()
                    if line.startswith("speed")), "")
        print(f"{label:42} {cs:>12} {cr:>12} {err:>8.3f} {str(same_bytes):>10} "
              f"{str(same_dram):>10} {khz.replace(' kHz', ''):>8}")
        rows.append({"program": label, "sim_cycles": cs, "rtl_cycles": cr, "error_pct": err,
                     "dram_bytes_equal": same_bytes, "final_dram_equal": same_dram,
                     "sim_status": sim["status"], "rtl_status": rtl["status"]})
        if not (same_bytes and same_dram and sim["status"] == rtl["status"]):
            failed += 1
        for suffix in (".sim.bin", ".rtl.bin"):  # large; the comparison is what matters
            if os.path.exists(stem + suffix):
                os.remove(stem + suffix)
    mape = sum(errors) / len(errors) if errors else 0.0
    print(f"MAPE {mape:.4f} % over {len(errors)} programs; "
          f"{failed} with a bytes/data/status mismatch")
    json.dump({"rows": rows, "mape_pct": mape}, open(os.path.join(args.out, "summary.json"), "w"),
              indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
