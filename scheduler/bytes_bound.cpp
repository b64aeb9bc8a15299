// The DRAM-bytes bound per capacity: per tensor, whether any group can keep it on chip (its
// span's weights, the maps a sweep over it holds) and whether a conv reader must split its
// weights into channel parts that each reload it (docs/scheduler.md, "Lower bounds: DRAM bytes
// per capacity").
#include "scheduler/bytes_bound.hpp"

#include <algorithm>
#include <map>

#include "scheduler/bound.hpp"

namespace tessel::sched {
namespace {

/// Positions of `in` that some window along one axis reads (taps on padding left out).
int64_t positions_read(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                       int64_t pad_begin) {
  std::vector<char> read(static_cast<size_t>(std::max<int64_t>(in, 0)), 0);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t i = o * stride + k * dilation - pad_begin;
      if (i >= 0 && i < in) read[static_cast<size_t>(i)] = 1;
    }
  return std::count(read.begin(), read.end(), 1);
}

bool is_view_op(const Op& op) {
  return op.kind == OpKind::Reshape || op.kind == OpKind::Concat;
}

/// A Reshape or Concat that reads a network input, directly or through other such views: its
/// output may be that input in DRAM, never stored by any group.
bool views_an_input(const Net& net, int tensor) {
  const Op& producer = net.op(net.tensor(tensor).producer);
  if (producer.kind == OpKind::Input) return true;
  if (!is_view_op(producer)) return false;
  return std::any_of(producer.inputs.begin(), producer.inputs.end(),
                     [&](int t) { return views_an_input(net, t); });
}

bool is_dense_conv(const Op& op) {
  return op.kind == OpKind::Conv && op.groups == 1;
}
bool is_elementwise(OpKind kind) {
  return kind == OpKind::Eltwise || kind == OpKind::Add;
}
/// The ops a weight sweep may hold (is_weight_sweep_group needs more; this is necessary).
bool may_sweep(const Op& op) {
  if (is_elementwise(op.kind)) return op.weight_bytes == 0 && op.requant_table_bytes == 0;
  return is_dense_conv(op) || op.kind == OpKind::MaxPool || op.kind == OpKind::AvgPool ||
         op.kind == OpKind::Concat;
}

class TermBuilder {
 public:
  explicit TermBuilder(const Net& net) : net_(net) {
    std::vector<int> outputs;
    for (size_t t = 0; t < net.tensors.size(); ++t)
      if (net.tensors[t].network_output) outputs.push_back(static_cast<int>(t));
    needed_ = fully_needed(net, outputs);
  }

  /// Bytes of `tensor` that `reader` loads at least, summed over its tiles: what its windows
  /// touch when it computes every output element (its output is needed whole), else nothing.
  int64_t read(int reader, int tensor) const {
    if (!needed_[static_cast<size_t>(net_.op(reader).output)]) return 0;
    return bytes_read_by(net_, reader, tensor);
  }

  BytesBoundModel::TensorTerms terms(int t) const {
    const Tensor& tensor = net_.tensor(t);
    BytesBoundModel::TensorTerms out;
    out.tensor = t;
    out.network_input = net_.op(tensor.producer).kind == OpKind::Input;
    out.store_bytes = net_.tensor_bytes(t);
    out.counts_store = !out.network_input && !tensor.network_output && !views_an_input(net_, t);
    out.min_load_bytes = -1;
    for (int c : tensor.consumers) {
      const Op& op = net_.op(c);
      out.counts_store &= !is_view_op(op);
      const int64_t bytes = read(c, t);
      out.min_load_bytes = out.min_load_bytes < 0 ? bytes : std::min(out.min_load_bytes, bytes);
      if (is_dense_conv(op) && op.inputs[0] == t && bytes > 0)
        out.readers.push_back({c, op.weight_bytes, net_.tensor(op.output).shape.c, bytes});
    }
    out.min_load_bytes = std::max<int64_t>(out.min_load_bytes, 0);
    if (!out.counts_store) return out;
    span_terms(t, out);
    return out;
  }

 private:
  /// The span: every non-Input op from the producer to the last reader. Groups are contiguous
  /// in the net's order, so a group that keeps `t` on chip holds all of them.
  void span_terms(int t, BytesBoundModel::TensorTerms& out) const {
    const Tensor& tensor = net_.tensor(t);
    const int first = tensor.producer;
    const int last = *std::max_element(tensor.consumers.begin(), tensor.consumers.end());
    std::vector<int> span;
    for (int p = first; p <= last; ++p)
      if (net_.op(p).kind != OpKind::Input) span.push_back(p);
    bool streams = false;
    if (!span.empty()) {
      const OpKind head = net_.op(span[0]).kind;
      streams = head == OpKind::Conv || head == OpKind::Gemm || is_elementwise(head);
      for (size_t i = 1; i < span.size(); ++i) streams &= is_elementwise(net_.op(span[i]).kind);
    }
    out.sweep_shaped = true;
    int64_t conv_weights = 0;
    for (int p : span) {
      const Op& op = net_.op(p);
      out.always_forced |=
          span.size() > 1 && (op.kind == OpKind::Softmax || op.kind == OpKind::Reshape);
      out.sweep_shaped &= may_sweep(op);
      if (op.kind == OpKind::Conv) conv_weights += op.weight_bytes;
    }
    out.span_weights = streams ? 0 : conv_weights;
    if (!out.sweep_shaped) return;
    for (int o : span) {
      if (!is_dense_conv(net_.op(o))) continue;
      // The cut at o: tensors made before o (or loaded) and read by o or a later op of the
      // span, each whole as far as those readers read it.
      std::map<int, int64_t> cut;
      for (int q = o; q <= last; ++q) {
        const Op& op = net_.op(q);
        if (op.kind == OpKind::Input) continue;
        for (int s : op.inputs) {
          if (net_.tensor(s).producer >= o) continue;
          int64_t& bytes = cut[s];
          bytes = std::max(bytes, read(q, s));
        }
      }
      int64_t sum = 0;
      for (const auto& [s, bytes] : cut) sum += bytes;
      out.sweep_cut = std::max(out.sweep_cut, sum);
    }
  }

  const Net& net_;
  std::vector<bool> needed_;
};

int64_t scratchpad_bytes(const Machine& machine, BufferKind kind) {
  return machine.scratchpads[static_cast<size_t>(machine.scratchpad(kind))].size_bytes;
}

}  // namespace

int64_t bytes_read_by(const Net& net, int reader, int tensor) {
  const Op& op = net.op(reader);
  const Tensor& in = net.tensor(tensor);
  const bool windowed =
      op.kind == OpKind::Conv || op.kind == OpKind::MaxPool || op.kind == OpKind::AvgPool;
  if (!windowed || op.inputs.empty() || op.inputs[0] != tensor) return net.tensor_bytes(tensor);
  const Shape3& out = net.tensor(op.output).shape;
  const Window& w = op.window;
  const int64_t rows =
      positions_read(in.shape.h, out.h, w.kernel_h, w.stride_h, w.dilation_h, w.pad_top);
  const int64_t cols =
      positions_read(in.shape.w, out.w, w.kernel_w, w.stride_w, w.dilation_w, w.pad_left);
  return in.shape.c * rows * cols * net.activation_bytes;
}

int64_t fewest_channel_parts(int64_t channels, int64_t per_channel, int64_t capacity) {
  if (per_channel <= 0) return 1;
  const int64_t most = capacity / per_channel;  // channels one part may hold
  if (most < 1) return channels;
  return (channels + most - 1) / most;
}

BytesBoundModel::BytesBoundModel(const Net& net) {
  compulsory_ = net.model_weight_bytes() + net.total_requant_table_bytes() + net.io_bytes();
  base_ = compulsory_;
  const TermBuilder builder(net);
  for (int t = 0; t < static_cast<int>(net.tensors.size()); ++t) {
    const Tensor& tensor = net.tensor(t);
    if (tensor.consumers.empty()) continue;
    TensorTerms terms = builder.terms(t);
    if (terms.network_input) {
      // Compulsory loads the input once; only what some reader touches must be loaded.
      int64_t most = 0;
      for (int c : tensor.consumers) most = std::max(most, builder.read(c, t));
      base_ -= net.tensor_bytes(t) - most;
    }
    if (terms.readers.empty() && !terms.counts_store) continue;
    terms_.push_back(std::move(terms));
  }
}

BytesBound BytesBoundModel::at(const Machine& machine) const {
  const int64_t weights_capacity = scratchpad_bytes(machine, BufferKind::Weights);
  const int64_t maps_capacity = scratchpad_bytes(machine, BufferKind::Activations);
  BytesBound bound;
  for (const auto& sp : machine.scratchpads) bound.capacity_bytes += sp.size_bytes;
  bound.compulsory_bytes = compulsory_;
  bound.base_bytes = base_;
  for (const TensorTerms& t : terms_) {
    // Readers that can neither hold their weights whole nor their input whole: channel parts,
    // each loading every input byte the conv reads.
    int64_t reader_loads = 0, reader_extra = 0;
    for (const Reader& r : t.readers) {
      if (r.weight_bytes <= weights_capacity || r.read_bytes <= maps_capacity) continue;
      const int64_t parts =
          fewest_channel_parts(r.channels, r.weight_bytes / r.channels, weights_capacity);
      reader_loads += parts * r.read_bytes;
      reader_extra += (parts - 1) * r.read_bytes;
    }
    ForcedTraffic forced;
    forced.tensor = t.tensor;
    if (t.network_input) {
      forced.reread_bytes = reader_extra;
      forced.why = "reread";
    } else if (!t.counts_store) {
      forced.reread_bytes = reader_loads;
      forced.why = "reread";
    } else {
      const bool span = t.always_forced || (t.span_weights > weights_capacity &&
                                            (!t.sweep_shaped || t.sweep_cut > maps_capacity));
      if (span || reader_loads > 0) {
        forced.crossing_bytes = t.store_bytes + t.min_load_bytes;
        forced.reread_bytes = reader_loads > 0 ? reader_loads - t.min_load_bytes : 0;
        forced.why = span ? "span" : "reread";
      }
    }
    if (forced.crossing_bytes + forced.reread_bytes == 0) continue;
    bound.crossing_bytes += forced.crossing_bytes;
    bound.reread_bytes += forced.reread_bytes;
    bound.forced.push_back(std::move(forced));
  }
  bound.bytes = bound.base_bytes + bound.crossing_bytes + bound.reread_bytes;
  return bound;
}

BytesBound bytes_lower_bound(const Net& net, const Machine& machine) {
  return BytesBoundModel(net).at(machine);
}

Machine scale_scratchpads(const Machine& machine, int64_t total_bytes) {
  Machine scaled = machine;
  int64_t sum = 0;
  for (const auto& sp : machine.scratchpads) sum += sp.size_bytes;
  if (sum <= 0) return scaled;
  for (auto& sp : scaled.scratchpads) {
    // A single scratchpad becomes exactly total_bytes; shares are exact below 2^63 bytes.
    sp.size_bytes = sp.size_bytes == sum
                        ? total_bytes
                        : static_cast<int64_t>(static_cast<long double>(sp.size_bytes) *
                                               static_cast<long double>(total_bytes) /
                                               static_cast<long double>(sum));
  }
  return scaled;
}

}  // namespace tessel::sched
