#!/usr/bin/python3
"""The oracle matrix of issue 33: every torchvision classifier and the transformer exports through
Tessel's importer and golden executors, against onnxruntime and against fp32.

    /usr/bin/python3 experiments/modern/oracle_matrix.py [--models a,b,...] [--subset]
        [--build build/default] [--out DIR] [--timeout S] [--no-int16]

For each model: export (torchvision classifiers: opset 17, batch 1, random weights,
torch.manual_seed(0), eval mode, an all-zero Linear weight (the ViT heads) re-drawn N(0, 1/fan_in); transformers: experiments/models/export_transformers.py) into
.cache/oracle/, then
  1. `tessel import` (does it import?),
  2. `tessel infer` fp32 on a seeded N(0, 1) input vs onnxruntime-node on the same input:
     max |diff| / max |ref| (goal <= 1e-4),
  3. `tessel infer --quantize` at 8 and 16 bits (default calibration): SQNR of the dequantized
     output against the fp32 executor's (goals: >= 25 dB CNN, >= 20 dB transformer at 8 bits;
     >= 50 dB at 16 bits).
Prints a table and writes DIR/oracle_matrix.jsonl (one JSON line per model, with the tool
version, the commands and every figure) and DIR/oracle_matrix.md. A model that fails a step is
reported with the step and the first line of the error; the script still exits 0 unless the
tools are missing (the table is the result; docs/modern-workloads.md quotes it).
--subset runs the representative subset that `make test` also runs (one transformer, two
modern CNNs). `--models torch-nn` (or its names) runs torch_nn_models.py's models written with
torch.nn (recurrences, encoders, a causal LM reading int64 token ids).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch_nn_models  # noqa: E402  (models written with torch.nn: NAMES, export)

SUBSET = ["mobilenet_v3_large", "efficientnet_b0", "bert_base"]
TRANSFORMERS = ["bert_base", "gpt2", "llama_block"]
# The exports of export_transformers.py by name: the default ones, the decode step and the
# language models from token ids (named only).
TRANSFORMER_EXPORTS = TRANSFORMERS + ["gpt2_decode", "gpt2_lm", "gpt2_lm_decode"]


def classifiers(torchvision):
    return sorted(torchvision.models.list_models(module=torchvision.models))


def register_export_workarounds(torch):
    """torch 1.13 cannot export `Tensor.zero_()` (aten::zero, swin_v2's relative coordinates):
    written as x - x, which the importer folds (the operand is a constant there)."""
    from torch.onnx import register_custom_op_symbolic
    register_custom_op_symbolic("aten::zero", lambda g, x: g.op("Sub", x, x), 17)


def reinit_zero_linears(torch, model):
    """torchvision zero-initialises some heads (every ViT's `heads.head`): their output is all
    zero for any input, so no SQNR can be measured. Such a Linear's weight gets N(0, 1 / fan_in)
    instead, drawn from its own seeded generator (the rest of the model keeps torch.manual_seed(0)'s
    draws). Returns the names re-initialised."""
    names = []
    generator = torch.Generator().manual_seed(1)
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and not module.weight.detach().any():
            with torch.no_grad():
                module.weight.copy_(torch.randn(module.weight.shape, generator=generator)
                                    / module.in_features ** 0.5)
            names.append(name)
    return names


def export_classifier(torch, torchvision, name, path):
    torch.manual_seed(0)
    kwargs = {"weights": None}
    if name in ("googlenet", "inception_v3"):
        kwargs.update(aux_logits=False, init_weights=True)
    model = torchvision.models.get_model(name, **kwargs).eval()
    reinit_zero_linears(torch, model)
    size = 299 if name == "inception_v3" else 256 if name.startswith("swin_v2") else 224
    example = torch.randn(1, 3, size, size)
    tmp = path.with_suffix(".partial")
    torch.onnx.export(model, example, str(tmp), opset_version=17, do_constant_folding=True,
                      input_names=["input"], output_names=["output"])
    os.replace(tmp, path)
    return [1, 3, size, size]


def run(cmd, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"timeout after {timeout} s", time.monotonic() - start
    out = (p.stdout + p.stderr).strip()
    return p.returncode == 0, out, time.monotonic() - start


def first_error(text):
    for line in text.splitlines():
        if "error" in line.lower():
            return line.strip()[:200]
    return (text.splitlines() or [""])[-1][:200]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="", help="comma-separated names (default: all)")
    parser.add_argument("--subset", action="store_true", help=f"only {', '.join(SUBSET)}")
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "default")
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "oracle")
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--no-int16", action="store_true")
    parser.add_argument("--seq", type=int, default=128, help="transformer tokens (exports)")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless every model meets the goals (for ctest)")
    parser.add_argument("--int8-floor", type=float, default=None,
                        help="with --check: the int8 SQNR floor for every model instead of the "
                             "issue's goals (a regression floor)")
    parser.add_argument("--int16-floor", type=float, default=None,
                        help="with --check: the int16 SQNR floor instead of 50 dB")
    args = parser.parse_args(argv)
    import numpy as np
    import onnx
    try:
        import torch
        import torchvision
    except ImportError as error:
        print(f"oracle_matrix: {error}", file=sys.stderr)
        return 77 if args.check else 2  # ctest: skipped
    register_export_workarounds(torch)
    tessel = args.build / "tools" / "tessel" / "tessel"
    if not tessel.exists():
        print(f"oracle_matrix: {tessel} not built", file=sys.stderr)
        return 2
    ort = ROOT / "tests" / "oracles" / "ort_run.js"
    have_ort = (ROOT / ".cache" / "ort" / "node_modules" / "onnxruntime-node").exists()
    if args.check and not have_ort:
        print("oracle_matrix: onnxruntime-node is not in .cache/ort (tests/oracles/setup_ort.sh); "
              "skipped", file=sys.stderr)
        return 77
    names = SUBSET if args.subset else (
        args.models.split(",") if args.models else classifiers(torchvision) + TRANSFORMERS)
    if "torch-nn" in names:  # every torch.nn model of torch_nn_models.py (token ids included)
        at = names.index("torch-nn")
        names[at:at + 1] = torch_nn_models.NAMES
    args.out.mkdir(parents=True, exist_ok=True)
    version = run([str(tessel), "--version"], 60)[1].strip()
    rows = []
    for name in names:
        row = {"model": name, "tool_version": version}
        model = args.out / f"{name}.onnx"
        work = args.out / name
        work.mkdir(exist_ok=True)
        try:
            if not model.exists():
                if name in torch_nn_models.NAMES:
                    torch_nn_models.export(torch, name, model)
                elif name in TRANSFORMER_EXPORTS:
                    ok, out, _ = run(["/usr/bin/python3", str(ROOT / "experiments" / "models" /
                                                             "export_transformers.py"),
                                      "--out", str(args.out), "--seq", str(args.seq), name],
                                     args.timeout)
                    if not ok:
                        raise RuntimeError("export: " + first_error(out))
                else:
                    export_classifier(torch, torchvision, name, model)
        except Exception as error:  # report the model, go on
            row["export"] = f"failed: {str(error)[:200]}"
            rows.append(row)
            print(json.dumps(row), flush=True)
            continue
        ok, out, seconds = run([str(tessel), "import", str(model), "-o", str(work / "m.tir")],
                               args.timeout)
        row["import"] = "ok" if ok else "failed: " + first_error(out)
        if ok:
            # The fp32 run on the default seeded input (N(0, 1), seed 0).
            ok, out, seconds = run([str(tessel), "infer", "--model", str(model), "--output",
                                    str(work / "fp32.npy")], args.timeout)
            row["fp32_seconds"] = round(seconds, 2)
            if not ok:
                row["fp32"] = "failed: " + first_error(out)
        if ok and have_ort:
            # The same default input onnxruntime reads: tessel writes it with --dump-dir's input.
            run([str(tessel), "infer", "--model", str(model), "--output", str(work / "fp32.npy"),
                 "--dump-dir", str(work / "dump")], args.timeout)
            # The model's first input as the dump names it (tensor_file_name: [^A-Za-z0-9._-]
            # -> _); token ids are int32 there, which ort_run.js widens to the model's int64.
            # Every input the dump holds (a decode step's caches too), fed by name; the first
            # output compared.
            names = [i.name for i in onnx.load(str(model), load_external_data=False).graph.input]
            feeds = [(n, work / "dump" / (re.sub(r"[^A-Za-z0-9._-]", "_", n) + ".npy"))
                     for n in names]
            feeds = [(n, f) for n, f in feeds if f.exists()]
            if feeds and feeds[0][0] == names[0]:
                (work / "feeds.json").write_text(json.dumps([[n, str(f)] for n, f in feeds]))
                ok2, out, _ = run(["node", str(ort), str(model), "--feeds",
                                   str(work / "feeds.json"), "--out-dir", str(work / "ort")],
                                  args.timeout)
                if ok2:
                    outputs = json.loads((work / "ort" / "outputs.json").read_text())
                    ref = np.load(work / "ort" / outputs[0]["file"]).astype(np.float64)
                    got = np.load(work / "fp32.npy").astype(np.float64)
                    diff = float(np.max(np.abs(got - ref)))
                    scale = float(np.max(np.abs(ref)))
                    # torchvision's ViTs zero-initialise the head: the output is all zeros,
                    # and only the absolute difference says anything.
                    row["fp32_vs_ort"] = (diff / scale if scale > 0 else
                                          f"output all zero; max|diff| = {diff:.1e}")
                else:
                    row["fp32_vs_ort"] = "ort failed: " + first_error(out)
        if ok:
            for bits in ([8] if args.no_int16 else [8, 16]):
                config = work / f"q{bits}.yaml"
                config.write_text(f"bits: {bits}\n")
                okq, out, seconds = run([str(tessel), "infer", "--model", str(model),
                                         "--quantize", str(config), "--output",
                                         str(work / f"int{bits}.npy")], args.timeout)
                key = f"int{bits}_sqnr_db"
                if okq and "SQNR vs fp32:" in out:
                    row[key] = float(out.split("SQNR vs fp32:")[1].split("dB")[0])
                else:
                    row[key] = "failed: " + first_error(out)
        rows.append(row)
        print(json.dumps(row), flush=True)
    with open(args.out / "oracle_matrix.jsonl", "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    header = "| model | import | fp32 max\\|diff\\|/max\\|ref\\| vs ORT | int8 SQNR dB | int16 SQNR dB |"
    lines = [header, "|---|---|---|---|---|"]
    for r in rows:
        def cell(v):
            return f"{v:.2e}" if isinstance(v, float) and v < 1e-1 else (
                f"{v:.2f}" if isinstance(v, float) else str(v if v is not None else "-"))
        lines.append(f"| {r['model']} | {r.get('import', r.get('export', '-'))} | "
                     f"{cell(r.get('fp32_vs_ort', r.get('fp32')))} | {cell(r.get('int8_sqnr_db'))}"
                     f" | {cell(r.get('int16_sqnr_db'))} |")
    (args.out / "oracle_matrix.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if not args.check:
        return 0
    misses = [f"{r['model']}: {goal}" for r in rows for goal in missed_goals(r, args)]
    for miss in misses:
        print("oracle_matrix: goal missed: " + miss, file=sys.stderr)
    print(f"oracle_matrix: {len(rows) - len({m.split(':')[0] for m in misses})} passed, "
          f"{len({m.split(':')[0] for m in misses})} failed")
    return 1 if misses else 0


def missed_goals(row, args):
    """The issue's goals that `row` misses (a step that failed misses its goal)."""
    transformer = (row["model"] in TRANSFORMER_EXPORTS or
                   row["model"].startswith(("vit_", "swin_", "maxvit_", "torch_")))
    int8 = args.int8_floor if args.int8_floor is not None else (20 if transformer else 25)
    int16 = args.int16_floor if args.int16_floor is not None else 50
    goals = [("import", lambda v: v == "ok", "imports"),
             ("fp32_vs_ort", lambda v: isinstance(v, float) and v <= 1e-4,
              "fp32 max|diff|/max|ref| <= 1e-4 against onnxruntime"),
             ("int8_sqnr_db", lambda v: isinstance(v, float) and v >= int8,
              f"int8 SQNR >= {int8} dB")]
    if not args.no_int16:
        goals.append(("int16_sqnr_db", lambda v: isinstance(v, float) and v >= int16,
                      f"int16 SQNR >= {int16} dB"))
    return [f"{text} (got {row.get(key, row.get('export', 'nothing'))})"
            for key, ok, text in goals if not ok(row.get(key))]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
