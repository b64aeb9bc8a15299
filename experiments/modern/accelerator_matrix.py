#!/usr/bin/python3
"""Issue 36 item 1's matrix: torchvision classifiers on the accelerator, full simulation.

    /usr/bin/python3 experiments/modern/accelerator_matrix.py [--models a,b,...]
        [--hw configs/hw/cloud-large.yaml] [--policies optimal,layerwise] [--build build/default]
        [--out DIR] [--exports DIR] [--timeout S] [--keep-exports]

`--models torch-nn` (or its names) runs the models of torch_nn_models.py instead: recurrences and
encoders written with torch.nn modules, exported as a user would.

For each model: the export of oracle_matrix.py (opset 17, batch 1, random weights,
torch.manual_seed(0), its export workarounds) into --exports (default .cache/oracle, shared with
the oracle matrix), then `tessel run -m MODEL.onnx --hw HW -p POLICY...` (quantized at the
config's bits, every policy compiled and simulated in full) and, per policy, from its
report.json: bit exact against the golden executor, simulated DRAM bytes equal to the schedule's
class by class (weights read = predicted weights + requant tables), simulated / predicted cycles
and bytes / compulsory. A refusal (a config without a unit the model needs) is reported with its
message ("failed: ..."). Appends one JSON line per model to DIR/accelerator_matrix.jsonl (model, config, policies,
figures, tool version, the command) and rewrites DIR/accelerator_matrix.md from every line there;
a model already in the JSONL for this config is skipped, so a long run resumes. An export this
run made is deleted after its run unless --keep-exports is given (the largest are several GB);
one already in --exports is kept.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle_matrix  # noqa: E402  (export_classifier, register_export_workarounds, classifiers)
import torch_nn_models  # noqa: E402  (models written with torch.nn: NAMES, export)


def policy_row(p):
    d, q = p["dram_bytes"], p["predicted_dram_bytes"]
    equal = (d["activations_read"] == q["activations_read"]
             and d["activations_written"] == q["activations_written"]
             and d["instructions_read"] == q["instructions_read"]
             and d["weights_read"] == q["weights_read"] + d.get("requant_tables_read", 0))
    return {"policy": p["policy"], "bit_exact": p["bit_exact"], "bytes_equal": equal,
            "cycles": p["cycles"], "predicted_cycles": p["predicted_cycles"],
            "cycle_ratio": p["cycles"] / max(p["predicted_cycles"], 1),
            "x_compulsory": p["x_compulsory"]}


def run_model(tessel, model_path, hw, policies, out_dir, timeout):
    folder = out_dir / "runs" / model_path.stem
    cmd = [str(tessel), "run", "-m", str(model_path), "--hw", str(hw), "-p", *policies,
           "--out", str(folder)]
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout} s"}, cmd, time.monotonic() - start
    seconds = time.monotonic() - start
    report = folder / "report.json"
    if not report.exists():
        text = (done.stdout + done.stderr).strip().splitlines()
        return {"error": oracle_matrix.first_error("\n".join(text))}, cmd, seconds
    r = json.loads(report.read_text())
    row = {"tool_version": r.get("tool_version"), "compulsory_bytes": r.get("compulsory_bytes"),
           "policies": [policy_row(p) for p in r.get("policies", [])],
           "failures": r.get("failures", [])}
    return row, cmd, seconds


def cell(row, policy):
    if "error" in row:
        return row["error"][:120]
    for f in row.get("failures", []):  # a refusal by name (a unit the config lacks) or an error
        if f.get("policy") == policy:
            return "failed: " + f["error"][:110]
    for p in row.get("policies", []):
        if p["policy"] == policy:
            ok = "ok" if p["bit_exact"] and p["bytes_equal"] else (
                ("" if p["bit_exact"] else "NOT BIT EXACT ") +
                ("" if p["bytes_equal"] else "BYTES DIFFER"))
            return f"{ok}, cycles {p['cycle_ratio']:.4f}x, bytes {p['x_compulsory']:.3f}x"
    return "-"


def write_table(jsonl, md, config):
    rows = [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["config"] == config]
    policies = []
    for r in rows:
        for p in r["policies_asked"]:
            if p not in policies:
                policies.append(p)
    lines = [f"# Accelerator matrix on {config} (experiments/modern/accelerator_matrix.py)", "",
             "Per policy: bit exact and simulated DRAM bytes equal to the schedule's (ok), "
             "simulated / predicted cycles, DRAM bytes / compulsory.", "",
             "| model | " + " | ".join(policies) + " | seconds |",
             "|---|" + "---|" * len(policies) + "---|"]
    for r in sorted(rows, key=lambda r: r["model"]):
        lines.append(f"| {r['model']} | " + " | ".join(cell(r["result"], p) for p in policies) +
                     f" | {r['seconds']:.0f} |")
    md.write_text("\n".join(lines) + "\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="", help="comma-separated names (default: all)")
    parser.add_argument("--hw", type=Path, default=ROOT / "configs" / "hw" / "cloud-large.yaml")
    parser.add_argument("--policies", default="optimal,layerwise")
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "default")
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "accelerator")
    parser.add_argument("--exports", type=Path, default=ROOT / ".cache" / "oracle")
    parser.add_argument("--timeout", type=int, default=3600)
    parser.add_argument("--keep-exports", action="store_true")
    args = parser.parse_args(argv)
    tessel = args.build / "tools" / "tessel" / "tessel"
    if not tessel.exists():
        print(f"accelerator_matrix: {tessel} is not built", file=sys.stderr)
        return 2
    import torch
    import torchvision
    oracle_matrix.register_export_workarounds(torch)
    names = [m for m in args.models.split(",") if m] or oracle_matrix.classifiers(torchvision)
    if "torch-nn" in names:  # every torch.nn model of torch_nn_models.py
        at = names.index("torch-nn")
        names[at:at + 1] = torch_nn_models.NAMES
    policies = [p for p in args.policies.split(",") if p]
    args.out.mkdir(parents=True, exist_ok=True)
    args.exports.mkdir(parents=True, exist_ok=True)
    jsonl, md = args.out / "accelerator_matrix.jsonl", args.out / "accelerator_matrix.md"
    config = args.hw.stem
    done = set()
    if jsonl.exists():
        for line in jsonl.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                if r["config"] == config:
                    done.add(r["model"])
    for name in names:
        if name in done:
            continue
        model = args.exports / f"{name}.onnx"
        existed = model.exists()
        try:
            if not existed and name in torch_nn_models.NAMES:
                torch_nn_models.export(torch, name, model)
            elif not existed:
                oracle_matrix.export_classifier(torch, torchvision, name, model)
            result, cmd, seconds = run_model(tessel, model, args.hw, policies, args.out,
                                             args.timeout)
        except Exception as e:  # an export torch cannot write: the row says so
            result, cmd, seconds = {"error": f"export: {str(e).splitlines()[0][:200]}"}, [], 0.0
        finally:
            if not existed and not args.keep_exports and model.exists():
                model.unlink()
        row = {"model": name, "config": config, "policies_asked": policies, "result": result,
               "seconds": seconds, "command": cmd}
        with jsonl.open("a") as f:
            f.write(json.dumps(row) + "\n")
        write_table(jsonl, md, config)
        print(f"{name}: " + "; ".join(f"{p} {cell(result, p)}" for p in policies), flush=True)
    if jsonl.exists():
        write_table(jsonl, md, config)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
