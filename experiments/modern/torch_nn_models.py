"""Models written with torch.nn modules (not torchvision, not the zoo), exported as a user would.

The accelerator matrix (accelerator_matrix.py --models torch-nn, or any of these names) runs them
through `tessel run` like the torchvision classifiers: recurrences (nn.LSTM, nn.GRU, one and two
layers, bidirectional), nn.TransformerEncoder with a mean over its tokens (post-norm GELU and
pre-norm ReLU), a causal LM that reads int64 token ids through nn.Embedding, and one of GPT-2's
shape (token and learned position tables, final LayerNorm, an LM head tied to the token table).
Random weights (torch.manual_seed(0)), opset 17, batch 1.
"""

import sys


def _modules(torch):
    nn = torch.nn

    class Recurrent(nn.Module):  # a classifier over the last step's output
        def __init__(self, gru=False, bidirectional=False, layers=1):
            super().__init__()
            cls = nn.GRU if gru else nn.LSTM
            self.rnn = cls(32, 64, num_layers=layers, batch_first=True,
                           bidirectional=bidirectional)
            self.fc = nn.Linear(64 * (2 if bidirectional else 1), 10)

        def forward(self, x):
            y, _ = self.rnn(x)
            return self.fc(y[:, -1])

    class Encoder(nn.Module):  # two layers, mean over the tokens, a Linear head
        def __init__(self, norm_first=False, activation="gelu"):
            super().__init__()
            layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation=activation,
                                               batch_first=True, norm_first=norm_first)
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(64, 10)

        def forward(self, x):
            return self.head(self.enc(x).mean(dim=1))

    class CausalLm(nn.Module):  # token ids -> embedding -> two causal layers -> logits
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(100, 64)
            layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation="gelu",
                                               batch_first=True, norm_first=True)
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.lm = nn.Linear(64, 100)
            self.register_buffer("mask", torch.triu(torch.full((16, 16), float("-inf")), 1))

        def forward(self, ids):
            return self.lm(self.enc(self.emb(ids), mask=self.mask))

    class TiedLm(nn.Module):  # GPT-2's shape: token and position tables, a tied LM head
        def __init__(self, vocab=96, d=64, tokens=16):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(tokens, d)
            layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, activation="gelu",
                                               batch_first=True, norm_first=True)
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.ln_f = nn.LayerNorm(d)
            self.lm = nn.Linear(d, vocab, bias=False)
            self.lm.weight = self.wte.weight  # tied, as GPT-2's and Llama's exports
            self.register_buffer("mask", torch.triu(torch.full((tokens, tokens), float("-inf")), 1))
            self.register_buffer("positions", torch.arange(tokens))

        def forward(self, ids):
            x = self.wte(ids) + self.wpe(self.positions)
            return self.lm(self.ln_f(self.enc(x, mask=self.mask)))

    return {
        "torch_lstm": (lambda: Recurrent(), lambda: torch.randn(1, 8, 32)),
        "torch_gru": (lambda: Recurrent(gru=True), lambda: torch.randn(1, 8, 32)),
        "torch_bilstm2": (lambda: Recurrent(bidirectional=True, layers=2),
                          lambda: torch.randn(1, 8, 32)),
        "torch_encoder_post_gelu": (lambda: Encoder(), lambda: torch.randn(1, 16, 64)),
        "torch_encoder_pre_relu": (lambda: Encoder(True, "relu"), lambda: torch.randn(1, 16, 64)),
        "torch_causal_lm": (lambda: CausalLm(), lambda: torch.randint(0, 100, (1, 16))),
        "torch_tied_lm": (lambda: TiedLm(), lambda: torch.randint(0, 96, (1, 16))),
        # The same, exported without constant folding: the LM head is MatMul(x, Transpose(wte))
        # of the one table the Gather reads (torch's default folds the Transpose into a copy).
        "torch_tied_lm_shared": (lambda: TiedLm(), lambda: torch.randint(0, 96, (1, 16))),
    }


# Export options of the models that need other than the defaults.
_EXPORT_OPTIONS = {"torch_tied_lm_shared": {"do_constant_folding": False}}


NAMES = ["torch_lstm", "torch_gru", "torch_bilstm2", "torch_encoder_post_gelu",
         "torch_encoder_pre_relu", "torch_causal_lm", "torch_tied_lm", "torch_tied_lm_shared"]


def export(torch, name, path):
    """Exports model `name` to `path` (opset 17, seeded weights and input)."""
    torch.manual_seed(0)
    make, example = _modules(torch)[name]
    model = make().eval()
    # Not under torch.no_grad(): there nn.TransformerEncoderLayer takes its fused fast path
    # (aten::_transformer_encoder_layer_fwd), which the ONNX exporter cannot write.
    torch.onnx.export(model, example(), str(path), opset_version=17, input_names=["x"],
                      output_names=["y"], **_EXPORT_OPTIONS.get(name, {}))


if __name__ == "__main__":  # python3 torch_nn_models.py OUT_DIR [NAME...]
    import torch as _torch
    from pathlib import Path
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for n in sys.argv[2:] or NAMES:
        export(_torch, n, out / f"{n}.onnx")
        print("exported", out / f"{n}.onnx")
