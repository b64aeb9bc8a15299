#!/usr/bin/python3
"""Exports the transformer zoo models as ONNX, written from torch.nn modules.

Run with Debian's interpreter (python3-torch 1.13, python3-onnx 1.12):

    /usr/bin/python3 experiments/models/export_transformers.py [--out DIR] [--force]
        [--seq N] [--kv-length L] [--layers N] [NAME ...]

For each NAME (default: bert_base gpt2 gpt2_decode llama_block; gpt2_lm and gpt2_lm_decode when
named) it writes, into DIR (default
${TESSEL_CACHE:-<repo>/.cache}/models), NAME.onnx (opset 17, batch 1, random weights,
torch.manual_seed(0)) and NAME.meta.json (parameter count, input/output shapes, ONNX op counts,
versions), the same networks that Tessel's zoo builders write (compiler/zoo/transformers.cpp):

  bert_base    nn.TransformerEncoderLayer(768, 12, 3072, gelu, batch_first, eps 1e-12) x 12 on
               the embeddings' output [1, seq, 768] (seq 128);
  gpt2         GPT-2 124M's 12 pre-norm blocks (GELU tanh, causal) and ln_f, prefill of seq
               tokens, on the embeddings' output (gpt2_lm below adds the tables and the head);
  gpt2_decode  one decode step: the token [1, 1, 768] and each layer's past key/value
               [1, L, 768] (L 1024; token rows, heads side by side, so that the step appends a
               row: docs/scheduler-transformers.md "Decode") as inputs; outputs: the hidden state and each
               layer's new key and value rows [1, 1, 768];
  gpt2_lm      GPT-2 as a language model: token ids [1, seq] through the token table (50,257 x
               768) and the position table (1,024 rows), the blocks, ln_f and the LM head tied
               to the token table: logits [1, seq, 50257] (torch's export folds the positions'
               rows into a [seq, 768] constant and the head's transposed table into its own);
  gpt2_lm_decode  its decode step: one id at position L with the caches as gpt2_decode's;
  (--layers N: N layers instead of 12 for bert_base, the gpt2 models, as the zoo's
  --layers; bench/e2e/
  speed_bert.sh times one BERT layer);
  llama_block  one Llama layer at TinyLlama-1.1B's sizes: RMSNorm, rotary, grouped-query
               attention (32 query, 4 key/value heads), SwiGLU 5632.

A model whose .onnx and .meta.json exist is skipped unless --force. Exit status: 0 all present,
1 an export failed, 2 torch/onnx cannot be imported.
"""

import argparse
import json
import math
import os
import sys
from pathlib import Path

SEED = 0
OPSET = 17
NAMES = ["bert_base", "gpt2", "gpt2_decode", "llama_block"]
# Exported when named (the 50,257-row table makes each ~200 MB more at 12 layers).
ON_REQUEST = ["gpt2_lm", "gpt2_lm_decode"]


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def default_out_dir() -> Path:
    cache = os.environ.get("TESSEL_CACHE")
    return (Path(cache) if cache else repo_root() / ".cache") / "models"


def modules(torch):
    nn = torch.nn

    class Gpt2Attention(nn.Module):
        def __init__(self, d=768, heads=12):
            super().__init__()
            self.heads, self.hd = heads, d // heads
            self.c_attn = nn.Linear(d, 3 * d)
            self.c_proj = nn.Linear(d, d)

        def split(self, t):
            b, s, _ = t.shape
            return t.reshape(b, s, self.heads, self.hd).transpose(1, 2)

        def forward(self, x, mask=None, past=None):
            q, k, v = self.c_attn(x).split(x.shape[-1], dim=2)
            present = (k, v)  # the new rows [B, S, d]
            if past is not None:  # the cache as token rows [B, L, d]: the step appends a row
                k = torch.cat([past[0], k], dim=1)
                v = torch.cat([past[1], v], dim=1)
            q, k, v = self.split(q), self.split(k), self.split(v)
            scores = torch.matmul(q * (1.0 / math.sqrt(self.hd)), k.transpose(-1, -2))
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            context = torch.matmul(scores.softmax(-1), v).transpose(1, 2)
            b, s = context.shape[0], context.shape[1]
            return self.c_proj(context.reshape(b, s, -1)), present

    class Gpt2Block(nn.Module):
        def __init__(self, d=768):
            super().__init__()
            self.ln_1 = nn.LayerNorm(d, eps=1e-5)
            self.attn = Gpt2Attention(d)
            self.ln_2 = nn.LayerNorm(d, eps=1e-5)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"),
                                     nn.Linear(4 * d, d))

        def forward(self, x, mask=None, past=None):
            a, present = self.attn(self.ln_1(x), mask, past)
            h = x + a
            return h + self.mlp(self.ln_2(h)), present

    class Gpt2(nn.Module):
        def __init__(self, layers=12):
            super().__init__()
            self.h = nn.ModuleList(Gpt2Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(768, eps=1e-5)

        def forward(self, x):
            s = x.shape[1]
            mask = torch.tril(torch.ones(s, s, dtype=torch.bool))
            for block in self.h:
                x, _ = block(x, mask)
            return self.ln_f(x)

    class Gpt2Decode(Gpt2):
        def forward(self, x, *past):
            presents = []
            for i, block in enumerate(self.h):
                x, (k, v) = block(x, None, (past[2 * i], past[2 * i + 1]))
                presents += [k, v]
            return (self.ln_f(x), *presents)

    class Gpt2Lm(Gpt2):  # ids -> token + position tables -> blocks -> ln_f -> tied LM head
        def __init__(self, layers=12, positions=1024):
            super().__init__(layers)
            self.wte = nn.Embedding(50257, 768)
            self.wpe = nn.Embedding(positions, 768)
            self.lm_head = nn.Linear(768, 50257, bias=False)
            self.lm_head.weight = self.wte.weight  # tied, as GPT-2's

        def embed(self, ids, first):
            return self.wte(ids) + self.wpe(torch.arange(first, first + ids.shape[1]))

        def forward(self, ids):
            return self.lm_head(Gpt2.forward(self, self.embed(ids, 0)))

    class Gpt2LmDecode(Gpt2Lm):  # one id per sequence at position L (the cache length)
        def forward(self, ids, *past):
            y = Gpt2Decode.forward(self, self.embed(ids, past[0].shape[1]), *past)
            return (self.lm_head(y[0]), *y[1:])

    class RmsNorm(nn.Module):
        def __init__(self, d, eps):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))
            self.eps = eps

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    class LlamaBlock(nn.Module):
        def __init__(self, d=2048, heads=32, kv_heads=4, ffn=5632, seq=128):
            super().__init__()
            self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
            self.input_layernorm = RmsNorm(d, 1e-5)
            self.post_attention_layernorm = RmsNorm(d, 1e-5)
            self.q_proj = nn.Linear(d, heads * self.hd, bias=False)
            self.k_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
            self.v_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
            self.o_proj = nn.Linear(heads * self.hd, d, bias=False)
            self.gate_proj = nn.Linear(d, ffn, bias=False)
            self.up_proj = nn.Linear(d, ffn, bias=False)
            self.down_proj = nn.Linear(ffn, d, bias=False)
            inv = 10000.0 ** (-torch.arange(0, self.hd, 2).float() / self.hd)
            angles = torch.outer(torch.arange(seq).float(), inv)
            angles = torch.cat([angles, angles], dim=-1)
            self.register_buffer("cos", angles.cos(), persistent=False)
            self.register_buffer("sin", angles.sin(), persistent=False)

        def rotate(self, t):
            half = t.shape[-1] // 2
            rotated = torch.cat([-t[..., half:], t[..., :half]], dim=-1)
            return t * self.cos + rotated * self.sin

        def forward(self, x):
            b, s, _ = x.shape
            n = self.input_layernorm(x)
            q = self.q_proj(n).reshape(b, s, self.heads, self.hd).transpose(1, 2)
            k = self.k_proj(n).reshape(b, s, self.kv_heads, self.hd).transpose(1, 2)
            v = self.v_proj(n).reshape(b, s, self.kv_heads, self.hd).transpose(1, 2)
            q, k = self.rotate(q), self.rotate(k)
            groups = self.heads // self.kv_heads
            k = k.repeat_interleave(groups, dim=1)
            v = v.repeat_interleave(groups, dim=1)
            scores = torch.matmul(q * (1.0 / math.sqrt(self.hd)), k.transpose(-1, -2))
            mask = torch.tril(torch.ones(s, s, dtype=torch.bool))
            scores = scores.masked_fill(~mask, float("-inf"))
            context = torch.matmul(scores.softmax(-1), v).transpose(1, 2).reshape(b, s, -1)
            h = x + self.o_proj(context)
            m = self.post_attention_layernorm(h)
            return h + self.down_proj(nn.functional.silu(self.gate_proj(m)) * self.up_proj(m))

    return {"gpt2": Gpt2, "gpt2_decode": Gpt2Decode, "gpt2_lm": Gpt2Lm,
            "gpt2_lm_decode": Gpt2LmDecode, "llama_block": LlamaBlock}


def build(torch, name, seq, kv_length, layers=12):
    torch.manual_seed(SEED)
    nn = torch.nn
    if name == "bert_base":
        layer = nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, activation="gelu",
                                           layer_norm_eps=1e-12, batch_first=True)
        model = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        # TransformerEncoder deep-copies one layer: give every layer weights of its own.
        model.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, activation="gelu",
                                       layer_norm_eps=1e-12, batch_first=True)
            for _ in range(layers))
        return model.eval(), (torch.randn(1, seq, 768),)
    classes = modules(torch)
    if name == "gpt2":
        return classes["gpt2"](layers).eval(), (torch.randn(1, seq, 768),)
    if name == "gpt2_decode":
        past = tuple(torch.randn(1, kv_length, 768) for _ in range(2 * layers))
        return classes["gpt2_decode"](layers).eval(), (torch.randn(1, 1, 768), *past)
    # GPT-2's 1,024 positions, more where the prefill or the decode position needs them.
    positions = max(1024, seq, kv_length + 1)
    if name == "gpt2_lm":
        return (classes["gpt2_lm"](layers, positions).eval(),
                (torch.randint(0, 50257, (1, seq)),))
    if name == "gpt2_lm_decode":
        past = tuple(torch.randn(1, kv_length, 768) for _ in range(2 * layers))
        return (classes["gpt2_lm_decode"](layers, positions).eval(),
                (torch.randint(0, 50257, (1, 1)), *past))
    return classes["llama_block"](seq=seq).eval(), (torch.randn(1, seq, 2048),)


def export_one(torch, onnx, name, seq, kv_length, out_dir: Path, layers=12):
    model, example = build(torch, name, seq, kv_length, layers)
    with torch.no_grad():
        outputs = model(*example)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    input_names = ["input_ids" if name.startswith("gpt2_lm") else "input"] + [f"past.{i // 2}.{'key' if i % 2 == 0 else 'value'}"
                               for i in range(len(example) - 1)]
    output_names = ["output"] + [f"present.{i // 2}.{'key' if i % 2 == 0 else 'value'}"
                                 for i in range(len(outputs) - 1)]
    onnx_path = out_dir / f"{name}.onnx"
    tmp_path = out_dir / f".{name}.onnx.partial"
    torch.onnx.export(model, example, str(tmp_path), export_params=True, opset_version=OPSET,
                      do_constant_folding=True, input_names=input_names,
                      output_names=output_names)
    proto = onnx.load(str(tmp_path))
    onnx.checker.check_model(proto)
    op_counts = {}
    for node in proto.graph.node:
        op_counts[node.op_type] = op_counts.get(node.op_type, 0) + 1
    meta = {
        "name": name, "onnx_file": onnx_path.name, "opset": OPSET, "seed": SEED,
        "sequence": seq, "kv_length": kv_length, "layers": layers,
        "inputs": [{"name": n, "shape": list(t.shape)} for n, t in zip(input_names, example)],
        "outputs": [{"name": n, "shape": list(t.shape)} for n, t in zip(output_names, outputs)],
        "parameters": sum(p.numel() for p in model.parameters()),
        "onnx_nodes": len(proto.graph.node),
        "onnx_op_counts": dict(sorted(op_counts.items())),
        "versions": {"torch": torch.__version__, "onnx": onnx.__version__},
    }
    os.replace(tmp_path, onnx_path)
    (out_dir / f"{name}.meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"default: {' '.join(NAMES)}")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--seq", type=int, default=128, help="tokens (bert_base, gpt2, llama)")
    parser.add_argument("--kv-length", type=int, default=1024, help="gpt2_decode's cache")
    parser.add_argument("--layers", type=int, default=12, help="layers (bert_base, gpt2)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in NAMES + ON_REQUEST]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: "
                     f"{', '.join(NAMES + ON_REQUEST)}")
    try:
        import torch
        import onnx
    except ImportError as error:
        print(f"export_transformers: cannot import torch/onnx: {error}", file=sys.stderr)
        return 2
    out_dir = args.out or default_out_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in args.names or NAMES:
        if (out_dir / f"{name}.onnx").exists() and (out_dir / f"{name}.meta.json").exists() \
                and not args.force:
            print(f"{name}: present")
            continue
        try:
            meta = export_one(torch, onnx, name, args.seq, args.kv_length, out_dir, args.layers)
        except Exception as error:  # report every model, then fail
            print(f"{name}: export failed: {error}", file=sys.stderr)
            failed.append(name)
            continue
        print(f"{name}: wrote {meta['onnx_file']} ({meta['parameters']} parameters, "
              f"{meta['onnx_nodes']} nodes)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
