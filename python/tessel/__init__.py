"""Tessel from Python: models, hardware configs, schedules, simulation and sweeps.

Every function binds Tessel's C++ libraries (the `_tessel` extension); this package adds
only docstrings and the pandas conversion of sweep results. The numbers are the CLI's:

    import tessel
    model = tessel.load_model("resnet18")
    hw = tessel.HwConfig.load("npc19-deepfusion")
    s = tessel.schedule(model, hw, policy="optimal")          # == `tessel schedule --json`
    program = tessel.compile(model, hw, policy="optimal")
    report = tessel.simulate(program, timing_only=True)       # == `tessel sim --json`
    df = tessel.sweep({...}, out="r.jsonl", jobs=2)           # == `tessel sweep`, as a DataFrame

Long calls release the GIL. Ctrl-C stops a sweep between points (the results file stays
consistent; rerun to resume); quantize, schedule, compile, simulate and infer stop at their
next poll inside the C++ (a fraction of a second) and raise KeyboardInterrupt, returning and
writing nothing. Errors: tessel.InputError (a ValueError: bad configs, keys, arrays, specs;
`.diagnostics` lists the located ones) and tessel.Error (a RuntimeError: a stage failed).
"""

import os as _os
import tempfile as _tempfile

from . import _tessel
from ._tessel import (  # noqa: F401  (re-exported)
    Error,
    Graph,
    HwConfig,
    InputError,
    Op,
    Program,
    QuantizedModel,
    Schedule,
    SimReport,
    Tensor,
    __version__,
    default_input,
    policies,
    zoo_models,
)

__all__ = [
    "Error", "Graph", "HwConfig", "InputError", "Op", "Program", "QuantizedModel", "Schedule",
    "SimReport", "Tensor", "compile", "default_input", "infer", "load_model", "policies", "quantize", "schedule",
    "simulate", "sweep", "zoo_models",
]


def load_model(name_or_path, *, with_weights=True, batch=1, seed=0):
    """Loads a model into the graph IR: a zoo name ('resnet50', 'tiny_cnn', ...; see
    zoo_models()) or a .onnx, .tir or .json file. `with_weights=False` gives shapes only (fast;
    enough for schedule()). Raises InputError for an unknown name or a bad file."""
    return _tessel.load_model(_os.fspath(name_or_path), with_weights=with_weights, batch=batch,
                              seed=seed)


def quantize(model, hw=None, *, policy="fusion+reuse", config=None, input_seed=0):
    """Quantizes `model` (Graph or name) for `policy`'s graph form, as `tessel run` does:
    BatchNorm folded (unfolded into depthwise convs for layerwise), calibrated on synthetic
    samples, realized at `hw`'s activation width (8 without hw) unless `config` (a quant YAML
    path or a dict in that schema, docs/quantization.md) says otherwise; then runs the golden
    executor on the default input (seed `input_seed`). Returns a QuantizedModel."""
    return _tessel.quantize(model, hw, policy=policy, config=config, input_seed=input_seed)


def schedule(model, hw, *, policy="fusion+reuse", objective="bytes", weight_sweep=True,
             prefetch=True, tiles_2d=True, s2d_stem=True, fold_activations=True):
    """Schedules `model` (Graph or name) on `hw` (HwConfig, config name or YAML path) with
    `policy` (see policies()) minimising `objective` ('bytes' or 'latency'); the map-space
    switches are `tessel schedule`'s flags. Returns a checked Schedule whose to_json() is the
    text `tessel schedule --json` writes. Raises Error when no schedule fits."""
    return _tessel.schedule(model, hw, policy=policy, objective=objective,
                            weight_sweep=weight_sweep, prefetch=prefetch, tiles_2d=tiles_2d,
                            s2d_stem=s2d_stem, fold_activations=fold_activations)


def compile(model, hw, *, policy="fusion+reuse", objective="bytes", quant=None,  # noqa: A001
            input_seed=0):
    """Schedules and lowers a model to an ISA program and DRAM image for `hw`. `model` is a
    QuantizedModel (from quantize() with a policy of the same graph form) or a Graph/name,
    quantized here as quantize() does. Returns a Program (simulate() it, or write() the
    folder `tessel sim DIR` reads)."""
    return _tessel.compile(model, hw, policy=policy, objective=objective, quant=quant,
                           input_seed=input_seed)


def simulate(program, *, timing_only=False, trace=""):
    """Runs a Program on the cycle-level SystemC simulator. Full mode moves the data and checks
    every output bit for bit against the golden executor (report.bit_exact, report.outputs);
    `timing_only=True` gives the same cycles and bytes without data. `trace`: a path for a
    Chrome trace-event JSON. Returns a SimReport whose to_json() is `tessel sim --json`'s."""
    return _tessel.simulate(program, timing_only=timing_only, trace=trace)


def infer(model, x):
    """Runs the golden CPU executor. `model`: a Graph (float32, BatchNorm folded as
    `tessel infer` does) or a QuantizedModel (the integer executor, outputs dequantized).
    `x`: a float32 numpy array of the input's exact shape, or a dict {input name: array}.
    Returns a numpy array (a dict by output name when the model has several outputs).
    Raises InputError for a wrong dtype, shape or input name."""
    if isinstance(model, QuantizedModel):
        return _tessel._infer_quantized(model, x)
    if isinstance(model, (str, _os.PathLike)):
        model = load_model(model)
    return _tessel._infer_float(model, x)


def sweep(spec, *, out=None, jobs=0, progress=None, summary=False):
    """Runs a design-space sweep (docs/sweep.md) and returns its points as a pandas DataFrame.

    `spec`: a spec YAML path or a dict in the same schema (an `hw:` value may be a HwConfig;
    relative paths are relative to the working directory). `out`: the JSONL results file; a
    rerun with the same file evaluates only the points not yet in it (resumable, as
    `tessel sweep --out`); None uses a temporary file. `jobs`: threads (0: one per core).
    `progress`: True prints progress lines to stderr, a callable receives each line.
    One row per point in the spec's order: id, model, policy, mode, objective, status, reason,
    config_hash, one column per axis (named by its key path), one per figure (nested figures
    joined with '.', e.g. 'dram_bytes.total'). With summary=True returns (DataFrame, dict of
    counts). Ctrl-C stops between points; the file keeps what finished."""
    import pandas as pd

    if progress is True:
        import sys

        def progress(line):  # noqa: F811
            print(line, file=sys.stderr, flush=True)

    temporary = None
    if out is None:
        temporary = _tempfile.TemporaryDirectory(prefix="tessel-sweep-")
        out = _os.path.join(temporary.name, "results.jsonl")
    try:
        result = _tessel._sweep(spec, out, jobs, progress)
    finally:
        if temporary is not None:
            temporary.cleanup()
    frame = pd.DataFrame([_flat_row(row) for row in result.pop("rows")])
    return (frame, result) if summary else frame


def _flat_row(row):
    """One results line as one flat row (no values change; nested keys are joined by '.')."""
    flat = {key: row.get(key) for key in
            ("id", "model", "policy", "mode", "objective", "status", "reason", "config_hash")}
    flat.update(row.get("axes") or {})

    def add(prefix, value):
        if isinstance(value, dict):
            for key, item in value.items():
                add(f"{prefix}.{key}" if prefix else key, item)
        else:
            flat[prefix] = value

    add("", row.get("figures") or {})
    return flat
