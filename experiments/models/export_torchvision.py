#!/usr/bin/python3
"""Exports the six torchvision models of Tessel's zoo as ONNX into a git-ignored cache.

Run with Debian's interpreter (python3-torchvision 0.14, python3-onnx 1.12):

    /usr/bin/python3 experiments/models/export_torchvision.py [--out DIR] [--force] [NAME ...]

For each NAME (default: all six) it writes, into DIR (default
${TESSEL_CACHE:-<repo>/.cache}/models):

  NAME.onnx       opset 13, batch 1, random weights (torch.manual_seed(0)), constant folding on,
                  BatchNormalization kept as its own node (see below);
  NAME.meta.json  torchvision's parameter count, buffer sizes, the input/output shapes, the
                  ONNX node count by op type, and the versions that produced it.

A model whose .onnx and .meta.json both exist is skipped unless --force is given, so tests can
call this script to "ensure the cache" cheaply. Exit status: 0 all requested models present,
1 an export failed, 2 torch/torchvision/onnx cannot be imported (tests skip on 2).

Why BatchNorm stays: torch.onnx.export in TrainingMode.EVAL runs an "eval peephole" that folds
each BatchNormalization into the preceding Conv. Tessel's zoo builders keep BatchNorm (folding
is a compiler pass, and the Deep Fusion paper's statistics count BatchNorm separately), so the
export uses TrainingMode.PRESERVE with the model already in eval() mode: inference semantics
(Dropout removed, BatchNorm with running statistics) without the fold.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

# (name, input H=W). googlenet and inception_v3 are built without their auxiliary heads and
# with transform_input=False (the torchvision default when no pretrained weights are used).
MODELS = {
    "resnet18": 224,
    "resnet50": 224,
    "vgg19": 224,
    "googlenet": 224,
    "inception_v3": 299,
    "mobilenet_v2": 224,
}
OPSET = 13
SEED = 0


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def default_out_dir() -> Path:
    cache = os.environ.get("TESSEL_CACHE")
    return (Path(cache) if cache else repo_root() / ".cache") / "models"


def build(torchvision, name):
    models = torchvision.models
    if name == "googlenet":
        return models.googlenet(weights=None, aux_logits=False, transform_input=False,
                                init_weights=True)
    if name == "inception_v3":
        return models.inception_v3(weights=None, aux_logits=False, transform_input=False,
                                   init_weights=True)
    return getattr(models, name)(weights=None)


def export_one(torch, torchvision, onnx, name, size, out_dir: Path):
    torch.manual_seed(SEED)
    model = build(torchvision, name).eval()
    example = torch.randn(1, 3, size, size)
    with torch.no_grad():
        output = model(example)
    onnx_path = out_dir / f"{name}.onnx"
    tmp_path = out_dir / f".{name}.onnx.partial"
    torch.onnx.export(
        model, example, str(tmp_path),
        export_params=True, opset_version=OPSET, do_constant_folding=True,
        training=torch.onnx.TrainingMode.PRESERVE,
        input_names=["input"], output_names=["output"])
    proto = onnx.load(str(tmp_path))
    onnx.checker.check_model(proto)
    op_counts = {}
    for node in proto.graph.node:
        op_counts[node.op_type] = op_counts.get(node.op_type, 0) + 1
    initializer_elements = 0
    for init in proto.graph.initializer:
        count = 1
        for d in init.dims:
            count *= d
        initializer_elements += count
    parameters = sum(p.numel() for p in model.parameters())
    # BatchNorm running statistics are buffers, not parameters; num_batches_tracked is not
    # exported.
    bn_stat_elements = sum(b.numel() for n, b in model.named_buffers()
                           if n.endswith("running_mean") or n.endswith("running_var"))
    meta = {
        "name": name,
        "onnx_file": onnx_path.name,
        "opset": OPSET,
        "seed": SEED,
        "input": {"name": "input", "shape": list(example.shape)},
        "output": {"name": "output", "shape": list(output.shape)},
        "parameters": parameters,
        "batchnorm_running_stat_elements": bn_stat_elements,
        "onnx_initializer_elements": initializer_elements,
        "onnx_nodes": len(proto.graph.node),
        "onnx_op_counts": dict(sorted(op_counts.items())),
        "versions": {"torch": torch.__version__, "torchvision": torchvision.__version__,
                     "onnx": onnx.__version__},
    }
    os.replace(tmp_path, onnx_path)
    meta_path = out_dir / f"{name}.meta.json"
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"models to export (default: all of {', '.join(MODELS)})")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: ${TESSEL_CACHE:-<repo>/.cache}/models)")
    parser.add_argument("--force", action="store_true", help="re-export existing models")
    args = parser.parse_args(argv)

    unknown = [n for n in args.names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    names = args.names or list(MODELS)
    out_dir = args.out or default_out_dir()

    try:
        import torch
        import torchvision
        import onnx
    except ImportError as error:  # the C++ slow test skips on this exit status
        print(f"export_torchvision: cannot import the exporter's packages: {error}",
              file=sys.stderr)
        return 2

    out_dir.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in names:
        onnx_path = out_dir / f"{name}.onnx"
        meta_path = out_dir / f"{name}.meta.json"
        if onnx_path.exists() and meta_path.exists() and not args.force:
            print(f"{name}: present ({onnx_path})")
            continue
        start = time.monotonic()
        try:
            meta = export_one(torch, torchvision, onnx, name, MODELS[name], out_dir)
        except Exception as error:  # report every model, then fail
            print(f"{name}: export failed: {error}", file=sys.stderr)
            failed.append(name)
            continue
        size_mb = onnx_path.stat().st_size / 1e6
        print(f"{name}: wrote {onnx_path} ({size_mb:.1f} MB, {meta['parameters']} parameters, "
              f"{meta['onnx_nodes']} nodes, {time.monotonic() - start:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
