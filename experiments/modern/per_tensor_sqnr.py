#!/usr/bin/python3
"""Where a quantized model loses precision: the SQNR of every integer activation.

    /usr/bin/python3 experiments/modern/per_tensor_sqnr.py MODEL [--config q.yaml]
        [--build build/default] [--out DIR] [--worst N]

Runs `tessel infer` on MODEL (a zoo name or an .onnx/.tir file) in fp32 and quantized (the
default seeded input, `--dump-dir` both), and `tessel quantize` for the scales (q.json). For every
integer activation t (i8/i16) of the quantized graph, in graph order:

  - `e2e`: SQNR of scale_t * q_t (the golden executor's value) against the fp32 executor's t:
    what has accumulated up to t;
  - `own`: SQNR of t's own quantization, clamp(round(t_fp32 / scale_t)) * scale_t against
    t_fp32: the rounding and clipping t's scale alone costs, whatever came before;
  - `clip%`: the share of t_fp32 beyond the threshold; `max/thr`: max |t_fp32| / threshold.

A steady fall of `e2e` along tensors with a high `own` is the chain of roundings; a low `own` is
a tensor whose scale does not fit it. Prints the table (graph order, then the N worst `own`)
and writes DIR/per_tensor_sqnr.json (model, config, tool version, commands, every row).
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def sqnr(ref, got):
    noise = float(np.sum((ref - got) ** 2))
    return 10 * np.log10(float(np.sum(ref ** 2)) / noise) if noise > 0 else float("inf")


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"per_tensor_sqnr: {' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return p.stdout + p.stderr


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--config", default="", help="quantization YAML (default: built-in)")
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "default")
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "per_tensor_sqnr")
    parser.add_argument("--worst", type=int, default=15)
    args = parser.parse_args(argv)
    tessel = str(args.build / "tools" / "tessel" / "tessel")
    args.out.mkdir(parents=True, exist_ok=True)
    quantize = ["--quantize"] + ([args.config] if args.config else [])
    config = ["--config", args.config] if args.config else []
    commands = [
        [tessel, "infer", "--model", args.model, "--output", str(args.out / "fp32.npy"),
         "--dump-dir", str(args.out / "fp32")],
        [tessel, "infer", "--model", args.model, *quantize, "--output",
         str(args.out / "int.npy"), "--dump-dir", str(args.out / "int")],
        [tessel, "quantize", "--model", args.model, *config, "--out", str(args.out / "q.json")],
    ]
    outputs = [run(c) for c in commands]
    summary = outputs[1].split("SQNR vs fp32:")[1].split("dB")[0].strip() \
        if "SQNR vs fp32:" in outputs[1] else "?"
    q = json.loads((args.out / "q.json").read_text())
    rows = []
    for name, t in q["tensors"].items():
        if t["dtype"] not in ("i8", "i16") or "scale" not in t:
            continue
        base = name[:-2] if name.endswith(".q") else name
        got_file = args.out / "int" / (name.replace("/", "_") + ".npy")
        ref_file = args.out / "fp32" / (base.replace("/", "_") + ".npy")
        if not got_file.exists() or not ref_file.exists():
            continue
        ref = np.load(ref_file).astype(np.float64)
        scale = float(t["scale"])
        got = np.load(got_file).astype(np.float64) * scale
        qmax = 127 if t["dtype"] == "i8" else 32767
        own = np.clip(np.round(ref / scale), -qmax - 1, qmax) * scale
        rows.append({"tensor": name, "dtype": t["dtype"], "e2e_db": sqnr(ref, got),
                     "own_db": sqnr(ref, own),
                     "clip_percent": 100.0 * float(np.mean(np.abs(ref) > qmax * scale)),
                     "max_over_threshold": float(np.max(np.abs(ref))) / (qmax * scale)})
    line = "{e2e_db:7.2f} {own_db:7.2f} {clip_percent:8.4f} {max_over_threshold:7.2f} {dtype:>4} {tensor}"
    print(f"{args.model}: output SQNR {summary} dB; {len(rows)} tensors")
    print("    e2e     own    clip%  max/thr type tensor")
    for r in rows:
        print(line.format(**r))
    print(f"-- the {args.worst} lowest own SQNRs")
    for r in sorted(rows, key=lambda r: r["own_db"])[:args.worst]:
        print(line.format(**r))
    version = run([tessel, "--version"]).strip()
    (args.out / "per_tensor_sqnr.json").write_text(json.dumps(
        {"model": args.model, "config": q.get("config"), "tool_version": version,
         "commands": commands, "output_sqnr_db": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
