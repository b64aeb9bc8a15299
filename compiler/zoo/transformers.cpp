// Transformer zoo models: BERT-base, GPT-2 (prefill and decode) and a Llama block, written as
// experiments/models/export_transformers.py exports the same networks from torch.nn modules.
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/models_internal.hpp"

namespace tessel::zoo::detail {
namespace {

using ir::OpKind;

/// The sizes of one attention layer.
struct Heads {
  std::int64_t batch, model_dim, heads, kv_heads, head_dim;
};

/// [B, S, heads * hd] -> [B, heads, S, hd] (`key_transposed`: [B, heads, hd, S]).
std::string split_heads(NetBuilder& net, const std::string& x, const std::string& name,
                        std::int64_t heads, std::int64_t head_dim, bool key_transposed) {
  const auto& s = net.shape(x);
  const std::string r = net.reshape(x, name + ".heads", {s[0], s[1], heads, head_dim});
  return net.transpose(r, name + ".transpose",
                       key_transposed ? std::vector<std::int64_t>{0, 2, 3, 1}
                                      : std::vector<std::int64_t>{0, 2, 1, 3});
}

/// softmax(q k^T / sqrt(hd) [masked]) v for q [B, H, S, hd], kT [B, H, hd, L], v [B, H, L, hd],
/// merged back to [B, S, H * hd].
std::string attend(NetBuilder& net, const std::string& prefix, const std::string& q,
                   const std::string& kT, const std::string& v, const std::string& mask,
                   const Heads& h) {
  const std::string scale = net.constant(prefix + ".scale", {1},
                                         {static_cast<float>(1.0 / std::sqrt(double(h.head_dim)))});
  const std::string qs = net.op(prefix + ".q_scaled", OpKind::Mul, {q, scale});
  const std::string scores = net.matmul(qs, kT, prefix + ".scores");
  std::vector<std::string> softmax_in = {scores};
  if (!mask.empty()) softmax_in.push_back(mask);
  const std::string probs =
      net.op(prefix + ".softmax", OpKind::Softmax, softmax_in, {{"axis", std::int64_t{-1}}});
  const std::string context = net.matmul(probs, v, prefix + ".context");
  const std::string merged = net.transpose(context, prefix + ".merge", {0, 2, 1, 3});
  const auto& m = net.shape(merged);
  return net.reshape(merged, prefix + ".merged", {m[0], m[1], h.heads * h.head_dim});
}

/// A causal mask [S, S]: 1 where key j <= query i (the fuse-patterns form of torch's triu fill).
std::string causal_mask(NetBuilder& net, const std::string& name, std::int64_t s) {
  std::vector<float> keep(static_cast<std::size_t>(s * s));
  for (std::int64_t i = 0; i < s; ++i)
    for (std::int64_t j = 0; j < s; ++j) keep[static_cast<std::size_t>(i * s + j)] = j <= i;
  return net.constant(name, {s, s}, std::move(keep));
}

/// A sequence's rows of a token tensor [B, S, X] in per_sequence: at B 1 the tensor itself, at
/// B > 1 a row Slice `<prefix>.s<b><suffix>` [1, S, X] (a DRAM view).
using SequenceRows =
    std::function<std::string(const std::string& tensor, const std::string& suffix)>;

/// The attention of a batch of `batch` sequences: at B 1, `attention(prefix, 0, rows)` with
/// `rows` the identity; at B > 1, each sequence's as `attention(prefix.s<b>, b, rows)` on its
/// own rows of the projections (`rows(t, suffix)`), the contexts a row Concat
/// `prefix.contexts` [B, S, d]. The Linears around it take all B x S rows at once, so the batch
/// shares their weights; only the heads are per sequence (a head view of a batched tensor is
/// refused: docs/scheduler-transformers.md "Decode", item 4).
std::string per_sequence(NetBuilder& net, const std::string& prefix, std::int64_t batch,
                         const std::function<std::string(const std::string&, std::int64_t,
                                                         const SequenceRows&)>& attention) {
  if (batch == 1)
    return attention(prefix, 0, [](const std::string& t, const std::string&) { return t; });
  std::vector<std::string> contexts;
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::string pa = prefix + ".s" + std::to_string(b);
    contexts.push_back(attention(pa, b, [&](const std::string& t, const std::string& suffix) {
      return net.slice(t, pa + suffix, 0, b, b + 1);
    }));
  }
  return net.concat_axis(contexts, prefix + ".contexts", 0);
}

/// nn.MultiheadAttention (one in_proj for q, k, v; out_proj), self-attention; a batch per
/// sequence (per_sequence).
std::string torch_self_attention(NetBuilder& net, const std::string& x, const std::string& prefix,
                                 const Heads& h, const std::string& mask) {
  const std::int64_t d = h.model_dim;
  const std::string qkv = net.dense(x, prefix + ".in_proj", 3 * d);
  const auto attention = [&](const std::string& pa, std::int64_t, const SequenceRows& rows_of) {
    const std::string rows = rows_of(qkv, ".qkv");
    const std::string q = split_heads(net, net.slice(rows, pa + ".q", 2, 0, d), pa + ".q", h.heads,
                                      h.head_dim, false);
    const std::string kT = split_heads(net, net.slice(rows, pa + ".k", 2, d, 2 * d), pa + ".k",
                                       h.heads, h.head_dim, true);
    const std::string v = split_heads(net, net.slice(rows, pa + ".v", 2, 2 * d, 3 * d), pa + ".v",
                                      h.heads, h.head_dim, false);
    return attend(net, pa, q, kT, v, mask, h);
  };
  return net.dense(per_sequence(net, prefix, h.batch, attention), prefix + ".out_proj", d);
}

}  // namespace

namespace {

/// One nn.TransformerEncoderLayer(d, heads, d_ff, activation="gelu", batch_first=True),
/// post-norm: self-attention, Add, LayerNorm, Linear, GELU, Linear, Add, LayerNorm.
std::string encoder_layer(NetBuilder& net, const std::string& x, const std::string& p,
                          const Heads& h, std::int64_t d_ff, double epsilon) {
  const std::string a = torch_self_attention(net, x, p + ".self_attn", h, "");
  const std::string n1 = net.layer_norm(net.add(x, a, p + ".add1"), p + ".norm1", epsilon);
  std::string f = net.dense(n1, p + ".linear1", d_ff, 2.0);
  f = net.op(p + ".gelu", OpKind::Gelu, {f});
  f = net.dense(f, p + ".linear2", h.model_dim);
  return net.layer_norm(net.add(n1, f, p + ".add2"), p + ".norm2", epsilon);
}

}  // namespace

// nn.TransformerEncoderLayer(768, 12, 3072, activation="gelu", batch_first=True,
// layer_norm_eps=1e-12) x `layers` (12), post-norm: BERT-base's encoder on its embeddings'
// output.
ir::Graph build_bert_base(const ZooOptions& options) {
  const std::int64_t seq = or_default(options.sequence, 128);
  const std::int64_t layers = or_default(options.layers, 12);
  const Heads h{options.batch, 768, 12, 12, 64};
  NetBuilder net("bert_base", options);
  std::string x = net.input_shaped("input", {options.batch, seq, 768});
  for (std::int64_t i = 0; i < layers; ++i)
    x = encoder_layer(net, x, "layers." + std::to_string(i), h, 3072, 1e-12);
  return net.finish({x});
}

// The tiny transformer of the default tests: one encoder layer as bert_base's, sequence
// `--seq` (16), d 32, 2 heads of 16, GELU MLP of 64, LayerNorm eps 1e-5.
ir::Graph build_tiny_attention(const ZooOptions& options) {
  const std::int64_t seq = or_default(options.sequence, 16);
  const Heads h{options.batch, 32, 2, 2, 16};
  NetBuilder net("tiny_attention", options);
  const std::string x = net.input_shaped("input", {options.batch, seq, 32});
  return net.finish({encoder_layer(net, x, "layers.0", h, 64, 1e-5)});
}

namespace {

/// GPT-2 attention of the q|k|v rows `qkv` [1, S, 3d] (names from `pa`: `pa.q`, ...). `past_key`
/// and `past_value`: the sequence's cached keys and values as token tensors [1, L, d] (row-major
/// `[L][d]`, the layout the c_attn slice writes, so that the step appends a row:
/// docs/scheduler-transformers.md "Decode"); empty for prefill. For decode, appends the new key and
/// value rows [1, 1, d] to `presents`. Returns the context [1, S, d].
std::string gpt2_attention(NetBuilder& net, const std::string& pa, const std::string& qkv,
                           const Heads& h, const std::string& mask, const std::string& past_key,
                           const std::string& past_value, std::vector<std::string>* presents) {
  const std::int64_t d = h.model_dim;
  const std::string q =
      split_heads(net, net.slice(qkv, pa + ".q", 2, 0, d), pa + ".q", h.heads, h.head_dim, false);
  std::string k = net.slice(qkv, pa + ".k", 2, d, 2 * d);
  std::string v = net.slice(qkv, pa + ".v", 2, 2 * d, 3 * d);
  std::string k_name = pa + ".k", v_name = pa + ".v";
  if (!past_key.empty()) {
    presents->push_back(k);
    presents->push_back(v);
    k_name = pa + ".key_cache";
    v_name = pa + ".value_cache";
    k = net.concat_axis({past_key, k}, k_name, 1);
    v = net.concat_axis({past_value, v}, v_name, 1);
  }
  k = split_heads(net, k, k_name, h.heads, h.head_dim, false);
  v = split_heads(net, v, v_name, h.heads, h.head_dim, false);
  const std::string kT = net.transpose(k, pa + ".kT", {0, 1, 3, 2});
  return attend(net, pa, q, kT, v, mask, h);
}

/// One GPT-2 block (pre-norm, GELU tanh). `past_keys`/`past_values`: for decode, each
/// sequence's cache [1, L, d] (gpt2_attention); empty for prefill (causal mask over the
/// sequence). A batch of B > 1 sequences (prefill or decode steps) shares the Linears (B x S
/// token rows) and runs each sequence's attention on its rows of q|k|v (`h.i.attn.s<b>.*`,
/// per_sequence). Returns the block's output; decode appends each sequence's new key and value
/// rows to `presents`.
std::string gpt2_block(NetBuilder& net, const std::string& x, int i, const Heads& h,
                       const std::string& mask, const std::vector<std::string>& past_keys,
                       const std::vector<std::string>& past_values,
                       std::vector<std::string>* presents) {
  const std::string p = "h." + std::to_string(i);
  const std::int64_t d = h.model_dim;
  const std::string n1 = net.layer_norm(x, p + ".ln_1", 1e-5);
  const std::string qkv = net.dense(n1, p + ".attn.c_attn", 3 * d);
  const auto attention = [&](const std::string& pa, std::int64_t b, const SequenceRows& rows_of) {
    const auto at = static_cast<std::size_t>(b);
    return gpt2_attention(net, pa, rows_of(qkv, ".qkv"), h, mask,
                          past_keys.empty() ? "" : past_keys.at(at),
                          past_values.empty() ? "" : past_values.at(at), presents);
  };
  const std::string a = per_sequence(net, p + ".attn", h.batch, attention);
  const std::string h1 = net.add(x, net.dense(a, p + ".attn.c_proj", d), p + ".add1");
  const std::string n2 = net.layer_norm(h1, p + ".ln_2", 1e-5);
  std::string f = net.dense(n2, p + ".mlp.c_fc", 4 * d, 2.0);
  f = net.op(p + ".mlp.act", OpKind::Gelu, {f}, {{"approximate", std::string("tanh")}});
  return net.add(h1, net.dense(f, p + ".mlp.c_proj", d), p + ".add2");
}

/// One decode step of `layers` GPT-2 blocks at the sizes `h` on the tokens `x` [B, 1, d] (one
/// per sequence), with each layer's past keys and values, one [1, L, d] per sequence, as graph
/// inputs: returns the hidden state after ln_f; each layer's new key and value rows [1, 1, d]
/// per sequence (what the step appends to the caches) go to `presents`.
std::string decode_blocks(NetBuilder& net, std::string x, const Heads& h, std::int64_t layers,
                          std::int64_t cache, std::vector<std::string>& presents) {
  const std::int64_t d = h.model_dim;
  for (int i = 0; i < layers; ++i) {
    // One cache region per sequence (`past.<i>.key`, or `past.<i>.key.<b>` in a batch).
    std::vector<std::string> keys, values;
    for (std::int64_t b = 0; b < h.batch; ++b) {
      const std::string past = "past." + std::to_string(i);
      const std::string tag = h.batch == 1 ? "" : "." + std::to_string(b);
      keys.push_back(net.input_shaped(past + ".key" + tag, {1, cache, d}));
      values.push_back(net.input_shaped(past + ".value" + tag, {1, cache, d}));
    }
    x = gpt2_block(net, x, i, h, "", keys, values, &presents);
  }
  return net.layer_norm(x, "ln_f", 1e-5);
}

/// decode_blocks on the tokens as an input `input` [B, 1, d]: the hidden state and the new rows
/// out.
ir::Graph decode_stack(NetBuilder& net, const Heads& h, std::int64_t layers, std::int64_t cache) {
  std::vector<std::string> outputs(1);
  outputs[0] = decode_blocks(net, net.input_shaped("input", {h.batch, 1, h.model_dim}), h, layers,
                             cache, outputs);
  return net.finish(outputs);
}

/// GPT-2's input from token ids `input_ids` [B, S]: the token table `wte.weight` [vocab, d]'s
/// rows (an Embedding) plus the position table's rows of the S positions from `first`, as the
/// constant `wpe.positions` [S, d] that torch's export folds `Gather(wpe, positions)` into (a
/// decode step's position is its cache length). Returns the embeddings [B, S, d].
std::string gpt2_embeddings(NetBuilder& net, std::int64_t batch, std::int64_t tokens,
                            std::int64_t vocab, std::int64_t d) {
  const std::string ids = net.input_ids("input_ids", {batch, tokens});
  const std::string wte = net.parameter("wte.weight", {vocab, d}, 0.0, 0.02);
  const std::string rows = net.op("wte", OpKind::Embedding, {ids, wte});
  return net.add(rows, net.parameter("wpe.positions", {tokens, d}, 0.0, 0.01), "embeddings");
}

/// GPT-2's LM head, tied to the token table: logits [B, S, vocab] = x wte^T, one Gemm by the
/// table that the Embedding reads (the same constant).
std::string tied_lm_head(NetBuilder& net, const std::string& x) {
  return net.linear_by(x, "lm_head", "wte.weight");
}

/// A GPT-2 language model's prefill: ids [B, S] -> embeddings -> `layers` blocks (causal) ->
/// ln_f -> tied LM head -> logits [B, S, vocab].
ir::Graph lm_prefill(NetBuilder& net, const Heads& h, std::int64_t layers, std::int64_t seq,
                     std::int64_t vocab) {
  std::string x = gpt2_embeddings(net, h.batch, seq, vocab, h.model_dim);
  const std::string mask = causal_mask(net, "causal_mask", seq);
  for (std::int64_t i = 0; i < layers; ++i)
    x = gpt2_block(net, x, static_cast<int>(i), h, mask, {}, {}, nullptr);
  return net.finish({tied_lm_head(net, net.layer_norm(x, "ln_f", 1e-5))});
}

/// A GPT-2 language model's decode step: one id per sequence [B, 1] at position `cache` ->
/// decode_blocks against the caches -> tied LM head; the logits [B, 1, vocab] and the new rows
/// out.
ir::Graph lm_decode(NetBuilder& net, const Heads& h, std::int64_t layers, std::int64_t cache,
                    std::int64_t vocab) {
  std::vector<std::string> outputs(1);
  const std::string x = gpt2_embeddings(net, h.batch, 1, vocab, h.model_dim);
  outputs[0] = tied_lm_head(net, decode_blocks(net, x, h, layers, cache, outputs));
  return net.finish(outputs);
}

}  // namespace

// GPT-2 (124M) decoder stack of `layers` blocks (12), prefill of `sequence` tokens (default
// 128), on the embeddings' output; gpt2_lm adds the tables and the tied LM head.
ir::Graph build_gpt2(const ZooOptions& options) {
  const std::int64_t seq = or_default(options.sequence, 128);
  const std::int64_t layers = or_default(options.layers, 12);
  const Heads h{options.batch, 768, 12, 12, 64};
  NetBuilder net("gpt2", options);
  std::string x = net.input_shaped("input", {options.batch, seq, 768});
  const std::string mask = causal_mask(net, "causal_mask", seq);
  for (std::int64_t i = 0; i < layers; ++i)
    x = gpt2_block(net, x, static_cast<int>(i), h, mask, {}, {}, nullptr);
  return net.finish({net.layer_norm(x, "ln_f", 1e-5)});
}

// The tiny causal transformer of the default tests: one GPT-2 block as gpt2's (pre-norm,
// causal mask, GELU tanh MLP of 4 d) and the final LayerNorm, sequence `--seq` (16), d 32,
// 2 heads of 16.
ir::Graph build_tiny_causal(const ZooOptions& options) {
  const std::int64_t seq = or_default(options.sequence, 16);
  const Heads h{options.batch, 32, 2, 2, 16};
  NetBuilder net("tiny_causal", options);
  const std::string x = net.input_shaped("input", {options.batch, seq, 32});
  const std::string mask = causal_mask(net, "causal_mask", seq);
  const std::string y = gpt2_block(net, x, 0, h, mask, {}, {}, nullptr);
  return net.finish({net.layer_norm(y, "ln_f", 1e-5)});
}

// One GPT-2 decode step: one token per sequence against a KV cache of `kv_length` (default
// 1024) per layer, `layers` (12) layers; the outputs are the hidden state and each layer's new
// key and value rows (what the step appends to the cache).
ir::Graph build_gpt2_decode(const ZooOptions& options) {
  const std::int64_t cache = or_default(options.kv_length, 1024);
  const std::int64_t layers = or_default(options.layers, 12);
  NetBuilder net("gpt2_decode", options);
  return decode_stack(net, Heads{options.batch, 768, 12, 12, 64}, layers, cache);
}

// The tiny decode step of the default tests: one GPT-2 block as gpt2_decode's (d 32, 2 heads
// of 16, GELU tanh MLP of 128) against a cache of `--kv-length` (16) rows, and ln_f.
ir::Graph build_tiny_decode(const ZooOptions& options) {
  const std::int64_t cache = or_default(options.kv_length, 16);
  NetBuilder net("tiny_decode", options);
  return decode_stack(net, Heads{options.batch, 32, 2, 2, 16}, or_default(options.layers, 1),
                      cache);
}

namespace {

/// A GPT-2 language model's sizes and defaults (ZooOptions override layers, tokens, cache).
struct LmSizes {
  const char* name;
  std::int64_t model_dim, heads, layers, tokens_or_cache, vocab;
  bool decode;
};

/// lm_prefill or lm_decode at `sizes` (heads of model_dim / heads).
ir::Graph language_model(const LmSizes& sizes, const ZooOptions& options) {
  NetBuilder net(sizes.name, options);
  const Heads h{options.batch, sizes.model_dim, sizes.heads, sizes.heads,
                sizes.model_dim / sizes.heads};
  const std::int64_t layers = or_default(options.layers, sizes.layers);
  return sizes.decode
             ? lm_decode(net, h, layers, or_default(options.kv_length, sizes.tokens_or_cache),
                         sizes.vocab)
             : lm_prefill(net, h, layers, or_default(options.sequence, sizes.tokens_or_cache),
                          sizes.vocab);
}

}  // namespace

// GPT-2 (124M) as a language model: token ids [B, `sequence`] (128) through the token and
// position tables, `layers` (12) blocks, ln_f and the LM head tied to the token table (vocabulary
// 50,257): the logits. The position table is its `sequence` rows (torch's export folds the rest).
ir::Graph build_gpt2_lm(const ZooOptions& options) {
  return language_model({"gpt2_lm", 768, 12, 12, 128, 50257, false}, options);
}

// gpt2_lm's decode step: one token id per sequence at position `kv_length` (1024) against the
// caches, the logits and each layer's new key and value rows out.
ir::Graph build_gpt2_lm_decode(const ZooOptions& options) {
  return language_model({"gpt2_lm_decode", 768, 12, 12, 1024, 50257, true}, options);
}

// The tiny language model of the default tests: tiny_causal's block from ids (vocabulary 64,
// sequence `--seq` (16)), ln_f and the tied LM head.
ir::Graph build_tiny_lm(const ZooOptions& options) {
  return language_model({"tiny_lm", 32, 2, 1, 16, 64, false}, options);
}

// tiny_lm's decode step against a `--kv-length` (16) cache.
ir::Graph build_tiny_lm_decode(const ZooOptions& options) {
  return language_model({"tiny_lm_decode", 32, 2, 1, 16, 64, true}, options);
}

namespace {

/// Rotary position embedding (rotate_half form) of x [B, H, S, hd] with cos/sin [S, hd].
std::string rotary(NetBuilder& net, const std::string& x, const std::string& name,
                   const std::string& cos, const std::string& sin, std::int64_t head_dim) {
  const std::string lo = net.slice(x, name + ".x1", 3, 0, head_dim / 2);
  const std::string hi = net.slice(x, name + ".x2", 3, head_dim / 2, head_dim);
  const std::string neg = net.op(name + ".neg", OpKind::Neg, {hi});
  const std::string rotated = net.concat_axis({neg, lo}, name + ".rotate_half", 3);
  const std::string a = net.op(name + ".cos", OpKind::Mul, {x, cos});
  const std::string b = net.op(name + ".sin", OpKind::Mul, {rotated, sin});
  return net.add(a, b, name);
}

}  // namespace

namespace {

/// One Llama decoder layer's sizes.
struct LlamaSizes {
  Heads heads;
  std::int64_t sequence, mlp_hidden;
};

/// One Llama decoder layer (pre-norm RMSNorm eps 1e-5, rotary of theta 10000 in the
/// rotate_half form, grouped-query attention by Expand, causal mask, SwiGLU MLP), as
/// transformers' LlamaDecoderLayer exports, on the embeddings' output.
ir::Graph llama_layer(const std::string& name, const LlamaSizes& sizes, const ZooOptions& options) {
  const Heads& h = sizes.heads;
  const std::int64_t seq = sizes.sequence;
  const std::int64_t groups = h.heads / h.kv_heads;
  NetBuilder net(name, options);
  const std::string x = net.input_shaped("input", {options.batch, seq, h.model_dim});
  // Rotary tables: angle(s, j) = s * theta^(-2 (j mod hd/2) / hd), duplicated halves.
  std::vector<float> cos_values, sin_values;
  for (std::int64_t s = 0; s < seq; ++s)
    for (std::int64_t j = 0; j < h.head_dim; ++j) {
      const double inv =
          std::pow(10000.0, -2.0 * double(j % (h.head_dim / 2)) / double(h.head_dim));
      cos_values.push_back(static_cast<float>(std::cos(double(s) * inv)));
      sin_values.push_back(static_cast<float>(std::sin(double(s) * inv)));
    }
  const std::string cos = net.constant("rotary.cos", {seq, h.head_dim}, std::move(cos_values));
  const std::string sin = net.constant("rotary.sin", {seq, h.head_dim}, std::move(sin_values));
  const std::string mask = causal_mask(net, "causal_mask", seq);

  const std::string n1 = net.rms_norm(x, "input_layernorm", 1e-5);
  const std::string a = "self_attn";
  // The projections, made at their first use (each just before its heads, as torch exports
  // them) and shared by every sequence of a batch.
  std::map<std::string, std::string> projected;
  const auto rows = [&](const SequenceRows& rows_of, const std::string& which, std::int64_t n) {
    std::string& t = projected[which];
    if (t.empty()) t = net.dense(n1, a + "." + which + "_proj", n * h.head_dim, 1.0, false);
    return rows_of(t, "." + which + "_rows");
  };
  const auto attention = [&](const std::string& pa, std::int64_t, const SequenceRows& rows_of) {
    std::string q =
        split_heads(net, rows(rows_of, "q", h.heads), pa + ".q", h.heads, h.head_dim, false);
    std::string k =
        split_heads(net, rows(rows_of, "k", h.kv_heads), pa + ".k", h.kv_heads, h.head_dim, false);
    std::string v =
        split_heads(net, rows(rows_of, "v", h.kv_heads), pa + ".v", h.kv_heads, h.head_dim, false);
    q = rotary(net, q, pa + ".q_rotary", cos, sin, h.head_dim);
    k = rotary(net, k, pa + ".k_rotary", cos, sin, h.head_dim);
    // Grouped-query attention: each key/value head serves `groups` query heads.
    const auto repeat = [&](const std::string& t, const std::string& prefix) {
      const std::int64_t b = net.shape(t)[0];
      const std::string r = net.reshape(t, prefix + ".group", {b, h.kv_heads, 1, seq, h.head_dim});
      const std::string e = net.op(prefix + ".repeat", OpKind::Expand, {r},
                                   {{"shape", ir::Shape{b, h.kv_heads, groups, seq, h.head_dim}}});
      return net.reshape(e, prefix + ".heads_all", {b, h.heads, seq, h.head_dim});
    };
    const std::string kT = net.transpose(repeat(k, pa + ".k"), pa + ".kT", {0, 1, 3, 2});
    return attend(net, pa, q, kT, repeat(v, pa + ".v"), mask, h);
  };
  const std::string attn = per_sequence(net, a, h.batch, attention);
  const std::string h1 =
      net.add(x, net.dense(attn, a + ".o_proj", h.model_dim, 1.0, false), "add1");
  const std::string n2 = net.rms_norm(h1, "post_attention_layernorm", 1e-5);
  const std::string gate = net.op("mlp.act", OpKind::Silu,
                                  {net.dense(n2, "mlp.gate_proj", sizes.mlp_hidden, 2.0, false)});
  const std::string up = net.dense(n2, "mlp.up_proj", sizes.mlp_hidden, 1.0, false);
  const std::string glu = net.op("mlp.glu", OpKind::Mul, {gate, up});
  return net.finish(
      {net.add(h1, net.dense(glu, "mlp.down_proj", h.model_dim, 1.0, false), "add2")});
}

}  // namespace

// One Llama decoder layer at TinyLlama-1.1B's sizes (hidden 2048, 32 heads, 4 key/value heads
// of 64, SwiGLU 5632, RMSNorm eps 1e-5, rope theta 10000), prefill of `sequence` tokens
// (default 128), causal.
ir::Graph build_llama_block(const ZooOptions& options) {
  return llama_layer("llama_block",
                     {{options.batch, 2048, 32, 4, 64}, or_default(options.sequence, 128), 5632},
                     options);
}

// The tiny Llama layer of the default tests: llama_block's graph at sequence `--seq` (8),
// d 32, 4 heads of 8 sharing 2 key/value heads, SwiGLU of 64.
ir::Graph build_tiny_llama(const ZooOptions& options) {
  return llama_layer("tiny_llama",
                     {{options.batch, 32, 4, 2, 8}, or_default(options.sequence, 8), 64}, options);
}

}  // namespace tessel::zoo::detail
