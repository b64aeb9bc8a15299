#!/usr/bin/python3
"""Each Conv/Gemm alone: how much of its output noise is input rounding, how much weights.

    /usr/bin/python3 experiments/quant/layer_noise.py IR.json QDQ.onnx Q.json FP32_DUMPS OUT.json

IR.json: `tessel opt --model M -p shape-inference,fold-batchnorm --json -o IR.json` (the float
weights as the quantizer sees them, BatchNorm folded); QDQ.onnx and Q.json:
`tessel quantize --model M --config q.yaml --out Q.json --export-onnx QDQ.onnx`; FP32_DUMPS:
`tessel infer --model M --dump-dir DIR` (every fp32 activation). For every Conv/Gemm, fed its
fp32 input, SQNR (dB) against its fp32 output of: `all` (input code, input shift, quantized
weights; the float bias), `input` (input rounding only), `weights` (quantized weights only),
`weights_mean_removed` (the weights' error less its per-output-channel mean: what bias
correction can reach; Conv only), and the input's `mean_power_share` (sum of squared
per-channel means over E[x^2]). Prints the table; writes OUT.json (model, config, tool version
from Q.json, every row). Needs numpy, onnx and torch (Debian's python3-*).
"""
import base64
import json
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper


def sqnr(ref, got):
    noise = float(((ref - got) ** 2).sum())
    return 10 * np.log10(float((ref ** 2).sum()) / noise) if noise > 0 else float("inf")


def rha(q, u):
    return q if u == 0 else np.sign(q) * np.floor((np.abs(q) + 2 ** (u - 1)) / 2 ** u)


def main(ir_file, qdq_file, q_file, dumps, out_file):
    ir = json.load(open(ir_file))
    tensors = {t["name"]: t for t in ir["tensors"]}
    q = json.load(open(q_file))

    def f32(name):
        t = tensors[name]
        shape = json.loads(t["shape"]) if isinstance(t["shape"], str) else t["shape"]
        return np.frombuffer(base64.b64decode(t["data_f32"]), np.float32).reshape(shape)

    init = {i.name: numpy_helper.to_array(i) for i in onnx.load(qdq_file).graph.initializer}
    rows = []
    print(f"{'layer':16} {'K':>6} u {'all':>6} {'input':>6} {'weights':>7} {'w-mean':>6} share")
    for op in ir["ops"]:
        if op["kind"] not in ("Conv", "Gemm"):
            continue
        xin, wn = op["inputs"][:2]
        load = lambda n: np.load(f"{dumps}/{n.replace('/', '_')}.npy").astype(np.float64)
        x = load(xin)
        w = f32(wn).astype(np.float64)
        b = f32(op["inputs"][2]).astype(np.float64) if len(op["inputs"]) > 2 else 0.0
        wq, sw = init[wn].astype(np.float64), init[wn + "::scale"].astype(np.float64)
        xs = xin + ".q" if xin + ".q::scale" in init else xin
        sx = float(init[xs + "::scale"])
        u = max([k for k in range(1, 16) if f"{xs}::shift{k}::scale" in init], default=0)
        bits = 16 if wq.dtype == np.int16 or np.abs(wq).max() > 127 else 8
        lim = 2 ** (bits - 1)
        xq = rha(np.clip(np.sign(x) * np.floor(np.abs(x) / sx + 0.5), -lim, lim - 1), u) * sx * 2**u
        wd = wq * sw.reshape(-1, *([1] * (wq.ndim - 1)))
        if op["kind"] == "Conv":
            a = op["attrs"]
            lin = lambda xx, ww: torch.nn.functional.conv2d(
                torch.from_numpy(xx), torch.from_numpy(ww), None, stride=a["stride"],
                padding=(a["pad"][0], a["pad"][1]), dilation=a["dilation"],
                groups=a["group"]).numpy()
            bb = np.reshape(b, (1, -1, 1, 1))
            axes = (0, 2, 3)
        else:
            lin = lambda xx, ww: xx.reshape(xx.shape[0], -1) @ ww.T
            bb = np.reshape(b, (1, -1))
            axes = None
        y = lin(x, w) + bb
        ew = lin(x, wd) - lin(x, w)
        row = {"op": op["name"], "kind": op["kind"], "k": int(w[0].size), "input_shift": u,
               "all": sqnr(y, lin(xq, wd) + bb), "input": sqnr(y, lin(xq, w) + bb),
               "weights": sqnr(y, y + ew)}
        if axes:
            row["weights_mean_removed"] = sqnr(y, y + ew - ew.mean(axis=axes, keepdims=True))
            means = x.mean(axis=axes)
            row["mean_power_share"] = float((means ** 2).mean() / (x ** 2).mean())
        rows.append(row)
        print(f"{row['op']:16} {row['k']:6d} {u} {row['all']:6.2f} {row['input']:6.2f} "
              f"{row['weights']:7.2f} {row.get('weights_mean_removed', float('nan')):6.2f} "
              f"{row.get('mean_power_share', float('nan')):.2f}", flush=True)
    json.dump({"model": q.get("model"), "config": q.get("config"),
               "tool_version": q.get("tool_version"), "rows": rows},
              open(out_file, "w"), indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    main(*sys.argv[1:])
