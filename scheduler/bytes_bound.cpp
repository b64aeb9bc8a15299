// The DRAM-bytes bound per capacity: per tensor, whether any group can keep it on chip (its
// span's weights, the maps a sweep over it holds) and whether a conv reader must split its
// weights into channel parts that each reload it (docs/bounds.md, "Lower bounds: DRAM bytes
// per capacity").
#include "scheduler/bytes_bound.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "scheduler/bound.hpp"
#include "scheduler/cost_model.hpp"
#include "scheduler/map_space.hpp"

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

/// The widest input extent one output position's window touches along an axis (taps on
/// padding left out).
int64_t widest_position_window(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                               int64_t dilation, int64_t pad_begin) {
  int64_t widest = 0;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t b = std::max<int64_t>(o * stride - pad_begin, 0);
    const int64_t e = std::min(o * stride + (kernel - 1) * dilation + 1 - pad_begin, in);
    widest = std::max(widest, e - b);
  }
  return widest;
}
bool is_view_op(const Op& op) {
  return op.kind == OpKind::Reshape || (op.kind == OpKind::Concat && !op.copy_only) ||
         op.kind == OpKind::Slice;
}

/// A Reshape or Concat that reads a network input or a network output, directly or through
/// other such views: its output may be that tensor in DRAM, never stored by any group (or
/// stored as the network output, which compulsory counts).
bool views_an_input(const Net& net, int tensor) {
  const Op& producer = net.op(net.tensor(tensor).producer);
  if (producer.kind == OpKind::Input) return true;
  if (!is_view_op(producer)) return false;
  return std::any_of(producer.inputs.begin(), producer.inputs.end(),
                     [&](int t) { return net.tensor(t).network_output || views_an_input(net, t); });
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

/// Ops a weight sweep runs as a block of their own (sweep_model.cpp's blocks: a dense conv and
/// the per-slice ops after it, or a pool or Concat run whole, runs_whole_in_sweep).
bool starts_sweep_block(const Op& op) {
  return is_dense_conv(op) || runs_whole_in_sweep(op);
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

  /// Whether a group that makes `t` and does not hold all of its readers stores bytes(t) that
  /// no other term counts: not a network input or output, not a view of one, and not read by a
  /// Concat or Reshape (which may be DRAM views: their output's store is its inputs' stores).
  bool counts_store(int t) const {
    const Tensor& tensor = net_.tensor(t);
    if (net_.op(tensor.producer).kind == OpKind::Input || tensor.network_output ||
        views_an_input(net_, t))
      return false;
    return std::none_of(tensor.consumers.begin(), tensor.consumers.end(),
                        [&](int c) { return is_view_op(net_.op(c)); });
  }

  BytesBoundModel::TensorTerms terms(int t) const {
    const Tensor& tensor = net_.tensor(t);
    BytesBoundModel::TensorTerms out;
    out.tensor = t;
    out.network_input = net_.op(tensor.producer).kind == OpKind::Input;
    out.store_bytes = net_.tensor_bytes(t);
    out.counts_store = counts_store(t);
    out.min_load_bytes = -1;
    for (int c : tensor.consumers) {
      const Op& op = net_.op(c);
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
  /// Whether a group that may chunk the MLP's hidden dimension (hidden_chunks) holds `span`,
  /// the span of tensor `t`: the span itself, or the span with its head extended back over the
  /// elementwise ops before it to the first Linear A (t a hidden tensor of the E's).
  bool in_hidden_chunks(int t, const std::vector<int>& span) const {
    if (span.empty()) return false;
    if (hidden_chunks(net_, span).found()) return true;
    int head = net_.tensor(t).producer;
    while (head >= 0 && net_.op(head).kind == OpKind::Eltwise && net_.op(head).inputs.size() == 1)
      head = net_.tensor(net_.op(head).inputs[0]).producer;
    if (head < 0 || head == net_.tensor(t).producer) return false;
    std::vector<int> group;
    for (int p = head; p <= span.back(); ++p)
      if (net_.op(p).kind != OpKind::Input) group.push_back(p);
    return hidden_chunks(net_, group).found();
  }

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
    // The MLP's hidden chunks hold one chunk of each Linear's weights (map_space.hpp).
    out.span_weights = streams || in_hidden_chunks(t, span) ? 0 : conv_weights;
    out.span_first = first;
    out.span_last = last;
    if (!out.sweep_shaped) return;
    for (int o : span) {
      if (!starts_sweep_block(net_.op(o))) continue;
      // The cut at o (a conv's first phase, or a pool's or Concat's block): tensors made before
      // o (or loaded) and read by o or a later op of the span, each whole as far as those
      // readers read it.
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

/// Ops that run alone in their group (F6).
bool runs_alone(const Op& op) {
  return op.kind == OpKind::Softmax || op.kind == OpKind::Reshape;
}

/// The chain bound's candidate groups (docs/bounds.md, "The chain bound"): per first
/// position, each length's loads, stores, conv weights and sweep maps, built incrementally.
class ChainBuilder {
 public:
  ChainBuilder(const Net& net, const TermBuilder& terms) : net_(net), terms_(terms) {
    for (int i = 0; i < net.size(); ++i)
      if (net.op(i).kind != OpKind::Input) seq_.push_back(i);
    const size_t tensors = net.tensors.size();
    stores_.assign(tensors, 0);
    last_reader_.assign(tensors, -1);
    load_.assign(tensors, 0);
    epoch_of_.assign(tensors, -1);
    for (size_t t = 0; t < tensors; ++t) {
      const Tensor& tensor = net.tensor(static_cast<int>(t));
      if (tensor.consumers.empty()) continue;
      last_reader_[t] = *std::max_element(tensor.consumers.begin(), tensor.consumers.end());
      if (terms.counts_store(static_cast<int>(t)))
        stores_[t] = net.tensor_bytes(static_cast<int>(t));
    }
    std::vector<int> position(static_cast<size_t>(net.size()), -1);
    for (size_t p = 0; p < seq_.size(); ++p)
      position[static_cast<size_t>(seq_[p])] = static_cast<int>(p);
    // Per dense conv: whether a reader of its output lies past its sweep block (the output is
    // then whole at the conv's first phase) and the most any reader reads of it. A pool's or a
    // Concat's block is itself (a sweep runs no per-slice op after it), so every reader of its
    // output lies past it.
    late_read_.assign(seq_.size(), -1);
    size_t next_block = seq_.size();
    for (size_t p = seq_.size(); p-- > 0;) {
      const Op& op = net.op(seq_[p]);
      if (is_dense_conv(op)) {
        int64_t most = 0;
        bool late = false;
        for (int c : net.tensor(op.output).consumers) {
          most = std::max(most, terms.read(c, op.output));
          late |= static_cast<size_t>(position[static_cast<size_t>(c)]) >= next_block;
        }
        late_read_[p] = late ? most : 0;
      } else if (runs_whole_in_sweep(op)) {
        int64_t most = 0;
        for (int c : net.tensor(op.output).consumers)
          most = std::max(most, terms.read(c, op.output));
        late_read_[p] = most;
      }
      if (starts_sweep_block(op)) next_block = p;
    }
  }

  size_t size() const { return seq_.size(); }

  /// The candidate groups from position `first`, at most `longest` ops long.
  std::vector<BytesBoundModel::GroupTerms> from(size_t first, size_t longest) {
    ++epoch_;
    std::vector<BytesBoundModel::GroupTerms> out;
    const int head = seq_[first];
    const Op& h = net_.op(head);
    BytesBoundModel::GroupTerms g;
    int64_t loads = 0, stores = 0, parameters = 0, outputs = 0;
    bool sweep = is_dense_conv(h);
    int convs = 0;
    phases_.clear();
    matmul_phases_.clear();
    std::vector<int> ops;
    for (size_t pos = first; pos < seq_.size() && pos - first < longest; ++pos) {
      const int q = seq_[pos];
      const Op& op = net_.op(q);
      ops.push_back(q);
      g.hidden_chunks = hidden_chunks(net_, ops).found();
      const size_t length = pos - first + 1;
      if (length > 1 && (runs_alone(op) || runs_alone(h))) break;  // F6: so is every longer one
      g.streams = length == 1
                      ? h.kind == OpKind::Conv || h.kind == OpKind::Gemm || is_elementwise(h.kind)
                      : g.streams && is_elementwise(op.kind);
      if (op.kind == OpKind::Conv) g.conv_weights += op.weight_bytes;
      parameters += op.weight_bytes + op.requant_table_bytes;
      if (net_.tensor(op.output).network_output) outputs += net_.tensor_bytes(op.output);
      sweep = sweep && may_sweep(op);
      if (starts_sweep_block(op)) phases_.push_back({q, pos, {}, 0});
      if (op.kind == OpKind::MatMul && op.inputs.size() > 1) {
        // F10: at each MatMul's step at or before q, q's `b` operand is live whole if made
        // before that MatMul (or loaded).
        matmul_phases_.push_back({q, pos, {}, 0});
        add_to_cuts(matmul_phases_, op.inputs[1], terms_.read(q, op.inputs[1]));
      }
      if (is_dense_conv(op)) {
        ++convs;
        const int64_t channels = std::max<int64_t>(1, net_.tensor(op.output).shape.c);
        g.sweep_weights = std::max(g.sweep_weights, 2 * (op.weight_bytes / channels));
      }
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const int s = op.inputs[k];
        if (std::find(op.inputs.begin(), op.inputs.begin() + static_cast<long>(k), s) !=
            op.inputs.begin() + static_cast<long>(k))
          continue;
        const auto t = static_cast<size_t>(s);
        const int64_t bytes = terms_.read(q, s);
        if (!made_at_or_after(s, head)) {
          if (epoch_of_[t] != epoch_) {
            epoch_of_[t] = epoch_;
            load_[t] = 0;
          }
          if (bytes > load_[t]) {
            loads += bytes - load_[t];
            load_[t] = bytes;
          }
        } else if (last_reader_[t] == q) {
          stores -= stores_[t];  // its last reader joined: it no longer leaves the group
        }
        add_to_cuts(phases_, s, bytes);  // the cut at each block at or before q (F5)
      }
      if (last_reader_[static_cast<size_t>(op.output)] >= 0)
        stores += stores_[static_cast<size_t>(op.output)];
      if (is_dense_conv(h)) {
        const auto in = static_cast<size_t>(h.inputs[0]);
        g.head_input_load = epoch_of_[in] == epoch_ ? load_[in] : 0;
      }
      // A view alone (a Concat or Reshape in DRAM) loads nothing.
      g.traffic = length == 1 && is_view_op(op) ? stores : loads + stores;
      g.view = length == 1 && is_view_op(op);
      g.fixed_bytes = parameters + (g.view ? 0 : outputs);
      g.matmul_maps = 0;
      for (const Phase& phase : matmul_phases_) g.matmul_maps = std::max(g.matmul_maps, phase.sum);
      g.sweep_maps = -1;
      if (sweep && convs >= 2) {
        g.sweep_maps = 0;
        for (const Phase& phase : phases_)
          g.sweep_maps = std::max(g.sweep_maps, phase.sum + output_at(phase, q));
      }
      out.push_back(g);
    }
    return out;
  }

 private:
  struct Phase {
    int op = -1;
    size_t pos = 0;
    std::vector<std::pair<int, int64_t>> cut;
    int64_t sum = 0;
  };

  /// `tensor`, read `bytes` at an op, joins the cut of each phase it was made before (or
  /// loaded): each tensor counted once, as many bytes as its widest read.
  void add_to_cuts(std::vector<Phase>& phases, int tensor, int64_t bytes) {
    for (Phase& phase : phases) {
      if (made_at_or_after(tensor, phase.op)) continue;
      auto it = std::find_if(phase.cut.begin(), phase.cut.end(),
                             [&](const auto& e) { return e.first == tensor; });
      if (it == phase.cut.end()) it = phase.cut.insert(phase.cut.end(), {tensor, 0});
      if (bytes > it->second) {
        phase.sum += bytes - it->second;
        it->second = bytes;
      }
    }
  }

  /// Whether an op at or after `op` (not an Input) makes `tensor`.
  bool made_at_or_after(int tensor, int op) const {
    const int p = net_.tensor(tensor).producer;
    return net_.op(p).kind != OpKind::Input && p >= op;
  }

  /// Bytes of conv `phase.op`'s output buffer at its first phase in a sweep ending at op `last`
  /// (or of a pool's or Concat's at its block): whole when stored (read past the group or a
  /// network output), else the most its readers read when one of them is past the op's block,
  /// else 0 (slice-local: one slice).
  int64_t output_at(const Phase& phase, int last) const {
    const int t = net_.op(phase.op).output;
    if (net_.tensor(t).network_output || last_reader_[static_cast<size_t>(t)] > last)
      return net_.tensor_bytes(t);
    return late_read_[phase.pos];
  }

  const Net& net_;
  const TermBuilder& terms_;
  std::vector<int> seq_;
  std::vector<int64_t> stores_;   // per tensor: counts_store ? bytes : 0
  std::vector<int> last_reader_;  // per tensor (-1: none)
  std::vector<int64_t> late_read_;
  std::vector<int64_t> load_;
  std::vector<int> epoch_of_;
  int epoch_ = 0;
  std::vector<Phase> phases_;
  std::vector<Phase> matmul_phases_;  // per MatMul of the group: its `b` operands' cut (F10)
};

/// An accumulator element's bytes where accumulators share the one scratchpad of weights and
/// activations (F11 counts them there), else 0.
int64_t shared_accumulator_bytes(const Machine& machine) {
  const int pad = machine.scratchpad(BufferKind::Accumulators);
  return pad == machine.scratchpad(BufferKind::Weights) &&
                 pad == machine.scratchpad(BufferKind::Activations)
             ? machine.accumulator_bytes
             : 0;
}

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

namespace {
/// Input positions the windows of outputs [ob, oe) touch along one axis: shape.cpp's
/// window_axis, clamped to the input.
int64_t window_extent(int64_t in, int64_t ob, int64_t oe, int64_t kernel, int64_t stride,
                      int64_t dilation, int64_t pad_begin) {
  const int64_t b = std::max<int64_t>(ob * stride - pad_begin, 0);
  const int64_t e = std::min((oe - 1) * stride + (kernel - 1) * dilation + 1 - pad_begin, in);
  return std::max<int64_t>(e - b, 0);
}
}  // namespace

std::vector<AxisTiling> axis_tilings(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                     int64_t dilation, int64_t pad_begin) {
  std::vector<AxisTiling> all;
  for (int64_t n = 1; n <= out; ++n) {
    AxisTiling a{n, 0, 0};
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ob = out * i / n, oe = out * (i + 1) / n;  // as group_info's part()
      if (ob >= oe) continue;
      const int64_t extent = window_extent(in, ob, oe, kernel, stride, dilation, pad_begin);
      a.widest = std::max(a.widest, extent);
      a.total += extent;
    }
    all.push_back(a);
  }
  std::stable_sort(all.begin(), all.end(), [](const AxisTiling& x, const AxisTiling& y) {
    return x.widest != y.widest ? x.widest < y.widest : x.total < y.total;
  });
  std::vector<AxisTiling> front;  // widest ascending, total strictly descending
  for (const AxisTiling& a : all)
    if (front.empty() || a.total < front.back().total) front.push_back(a);
  return front;
}

int64_t ConvTiles::min_box_bytes() const {
  if (!valid || rows.empty() || cols.empty()) return 0;
  return rows.front().widest * cols.front().widest * pixel_bytes;
}

ConvTiles conv_tiles(const Net& net, int conv, bool output_needed) {
  ConvTiles t;
  const Op& op = net.op(conv);
  if (!is_dense_conv(op) || op.inputs.empty() || op.space_to_depth.channels > 0 || !output_needed)
    return t;
  const Tensor& input = net.tensor(op.inputs[0]);
  if (input.space_to_depth != 1) return t;
  const Shape3& in = input.shape;
  const Shape3& out = net.tensor(op.output).shape;
  if (out.c <= 0 || out.h <= 0 || out.w <= 0) return t;
  const Window& w = op.window;
  t.valid = true;
  t.pixel_bytes = in.c * net.activation_bytes;  // a dense conv reads every input channel
  t.channels = out.c;
  t.per_channel = op.weight_bytes / out.c;
  t.read_bytes = bytes_read_by(net, conv, op.inputs[0]);
  t.rows = axis_tilings(in.h, out.h, w.kernel_h, w.stride_h, w.dilation_h, w.pad_top);
  t.cols = axis_tilings(in.w, out.w, w.kernel_w, w.stride_w, w.dilation_w, w.pad_left);
  t.whole_box_bytes =
      window_extent(in.h, 0, out.h, w.kernel_h, w.stride_h, w.dilation_h, w.pad_top) *
      window_extent(in.w, 0, out.w, w.kernel_w, w.stride_w, w.dilation_w, w.pad_left) *
      t.pixel_bytes;
  return t;
}

StreamedLoads streamed_input_loads(const ConvTiles& t, int64_t weights, int64_t maps, bool unified,
                                   bool power_of_two_parts,
                                   const std::function<int64_t(int64_t)>& widest_slice) {
  StreamedLoads best;
  if (!t.valid || t.per_channel <= 0 || t.rows.empty() || t.cols.empty()) return best;
  auto consider = [&](int64_t bytes, int64_t parts, int64_t rows, int64_t cols) {
    if (best.bytes >= 0 && bytes >= best.bytes) return;
    best = {bytes, parts, rows, cols};
  };
  auto slice_of = [&](int64_t k) {
    return widest_slice ? widest_slice(k) : (t.channels + k - 1) / k * t.per_channel;
  };
  auto allowed = [&](int64_t k) { return !power_of_two_parts || (k & (k - 1)) == 0; };
  // One tile: the input is kept whole and loaded once, beside a slice of one channel at least.
  if (unified ? t.whole_box_bytes + slice_of(t.channels) <= weights
              : t.whole_box_bytes <= maps && slice_of(t.channels) <= weights) {
    const int64_t room = unified ? weights - t.whole_box_bytes : weights;
    int64_t parts = fewest_channel_parts(t.channels, t.per_channel, room);
    while (parts < t.channels && (slice_of(parts) > room || !allowed(parts))) ++parts;
    consider(t.whole_box_bytes, parts, 1, 1);
  }
  // k parts, each loading every tile's box: the widest slice and the largest box fit together.
  int64_t first = fewest_channel_parts(t.channels, t.per_channel, weights);
  while (!allowed(first)) ++first;
  const int64_t last = power_of_two_parts ? std::min<int64_t>(t.channels, 1024) : t.channels;
  for (int64_t k = first; k <= last; k = power_of_two_parts ? 2 * k : k + 1) {
    if (best.bytes >= 0 && k * t.read_bytes >= best.bytes) break;  // every grid loads >= read
    const int64_t slice = slice_of(k);
    if (slice > weights) continue;
    const int64_t room = unified ? weights - slice : maps;
    const int64_t pixels = room / t.pixel_bytes;  // of the largest box
    for (const AxisTiling& r : t.rows) {
      if (r.widest > pixels) break;
      const int64_t widest = pixels / r.widest;
      auto c = std::upper_bound(t.cols.begin(), t.cols.end(), widest,
                                [](int64_t v, const AxisTiling& a) { return v < a.widest; });
      if (c == t.cols.begin()) continue;
      --c;
      if (r.parts == 1 && c->parts == 1) {  // one tile keeps the input: counted above
        if (c == t.cols.begin()) continue;
        --c;
      }
      consider(k * r.total * c->total * t.pixel_bytes, k, r.parts, c->parts);
    }
  }
  return best;
}

BytesBoundModel::BytesBoundModel(const Net& net, bool group_caps) : group_caps_(group_caps) {
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
      base_without_inputs_ -= most;
    }
    if (terms.readers.empty() && !terms.counts_store) continue;
    terms_.push_back(std::move(terms));
  }
  base_without_inputs_ += base_;
  ChainBuilder chain(net, builder);
  const PlanOptions limits;
  const size_t longest =
      group_caps_ ? static_cast<size_t>(std::max(limits.max_group_ops, limits.max_sweep_ops))
                  : chain.size();
  groups_.reserve(chain.size());
  heads_.assign(chain.size(), HeadConv{});
  net_ = std::make_shared<const Net>(net);
  tiles_.assign(static_cast<size_t>(net.size()), ConvTiles{});
  window_pixels_.assign(chain.size(), 0);
  window_cols_.assign(chain.size(), 0);
  std::vector<size_t> position_of(static_cast<size_t>(net.size()), chain.size());
  size_t pos = 0;
  for (int op = 0; op < net.size(); ++op) {
    const Op& o = net.op(op);
    if (o.kind == OpKind::Input) continue;
    seq_.push_back(op);
    // F11: a conv computing every output pixel (a space-to-depth stem left out) reads, in some
    // tile, the widest window of one position along each axis.
    if (o.kind == OpKind::Conv && !o.inputs.empty() && o.space_to_depth.channels == 0 &&
        net.tensor(o.inputs[0]).space_to_depth == 1 && builder.read(op, o.inputs[0]) > 0) {
      const Shape3& in = net.tensor(o.inputs[0]).shape;
      const Shape3& out = net.tensor(o.output).shape;
      const Window& w = o.window;
      window_cols_[pos] =
          widest_position_window(in.w, out.w, w.kernel_w, w.stride_w, w.dilation_w, w.pad_left);
      window_pixels_[pos] =
          widest_position_window(in.h, out.h, w.kernel_h, w.stride_h, w.dilation_h, w.pad_top) *
          window_cols_[pos];
      position_of[static_cast<size_t>(op)] = pos;
    }
    if (is_dense_conv(o)) {
      const int64_t read = builder.read(op, o.inputs[0]);
      heads_[pos] = {op, o.weight_bytes, net.tensor(o.output).shape.c, read};
      tiles_[static_cast<size_t>(op)] = conv_tiles(net, op, read > 0);
    }
    groups_.push_back(chain.from(pos++, longest));
  }
  conv_readers_.assign(seq_.size(), {});
  for (size_t j = 0; j < seq_.size(); ++j) {
    const int out = net.op(seq_[j]).output;
    for (int r : net.tensor(out).consumers) {
      const size_t at = position_of[static_cast<size_t>(r)];
      if (at < seq_.size() && net.op(r).inputs[0] == out) conv_readers_[j].push_back(at);
    }
    std::sort(conv_readers_[j].begin(), conv_readers_[j].end());
  }
}

BytesBoundModel::Capacities::Capacities(const BytesBoundModel& model, const Machine& machine)
    : weights(scratchpad_bytes(machine, BufferKind::Weights)),
      maps(scratchpad_bytes(machine, BufferKind::Activations)),
      unified(machine.scratchpad(BufferKind::Weights) ==
              machine.scratchpad(BufferKind::Activations)),
      on(&machine),
      packed(&model.packed_weights(machine)) {}

int64_t BytesBoundModel::PackedWeights::conv_weights(size_t first, size_t length) const {
  return prefix[first + length] - prefix[first];
}

namespace {
int64_t range_max(const std::vector<std::vector<int64_t>>& table, size_t first, size_t length) {
  size_t j = 0;
  while ((size_t{2} << j) <= length) ++j;  // 2^j <= length < 2^(j + 1)
  const std::vector<int64_t>& level = table[j];
  return std::max(level[first], level[first + length - (size_t{1} << j)]);
}

std::vector<std::vector<int64_t>> range_max_table(std::vector<int64_t> values) {
  std::vector<std::vector<int64_t>> table;
  const size_t n = values.size();
  table.push_back(std::move(values));
  for (size_t half = 1; 2 * half <= n; half *= 2) {
    const std::vector<int64_t>& below = table.back();
    std::vector<int64_t> level(n - 2 * half + 1);
    for (size_t i = 0; i < level.size(); ++i) level[i] = std::max(below[i], below[i + half]);
    table.push_back(std::move(level));
  }
  return table;
}

}  // namespace

int64_t BytesBoundModel::PackedWeights::one_slice(size_t first, size_t length) const {
  return range_max(slice_max, first, length);
}

bool BytesBoundModel::PackedWeights::chunks(size_t first, size_t length, int64_t weights) const {
  for (size_t pos = first; pos < first + length; ++pos)
    if (reduces_in_chunks(block_whole[pos], block_chunk[pos], weights)) return true;
  return false;
}

// Built once per array shape and weight width (optimal asks per candidate group): O(n log n).
const BytesBoundModel::PackedWeights& BytesBoundModel::packed_weights(
    const Machine& machine) const {
  const std::lock_guard<std::mutex> lock(packed_mutex_);
  for (const auto& p : packed_)
    if (p->rows == machine.matrix_rows && p->cols == machine.matrix_cols &&
        p->weight_bytes == machine.weight_bytes &&
        p->accumulator_bytes == shared_accumulator_bytes(machine))
      return *p;
  auto p = std::make_unique<PackedWeights>();
  p->rows = machine.matrix_rows;
  p->cols = machine.matrix_cols;
  p->weight_bytes = machine.weight_bytes;
  p->accumulator_bytes = shared_accumulator_bytes(machine);
  const size_t n = seq_.size();
  p->prefix.assign(n + 1, 0);
  std::vector<int64_t> slice(n, 0);
  p->block_whole.assign(n, 0);
  p->block_chunk.assign(n, 0);
  p->window.assign(n, 0);
  p->acc_pixel.assign(n, 0);
  for (size_t pos = 0; pos < n; ++pos) {
    const Op& op = net_->op(seq_[pos]);
    const int64_t channels = net_->tensor(op.output).shape.c;
    // F4: a tiled group's conv holds every channel's packed weights at step 0 (resident, or a
    // per-tile slice of all channels; buffers.cpp), as Schedule's weight buffers hold them.
    const int64_t whole = op.kind == OpKind::Conv && channels > 0
                              ? onchip_weight_bytes(*net_, machine, op, Interval{0, channels})
                              : 0;
    p->prefix[pos + 1] = p->prefix[pos] + whole;
    p->block_whole[pos] = output_block_reduction_bytes(*net_, machine, op);
    p->block_chunk[pos] = output_block_chunk_bytes(*net_, machine, op);
    // F5: a sweep's slice of a dense conv holds whole column blocks, one at least
    // (widest_slice_bytes of one channel; every part count the sweep offers is at least that).
    if (is_dense_conv(op) && channels > 0)
      slice[pos] = widest_slice_bytes(*net_, machine, op, channels);
    // F11: the conv's input box (every channel, padded to the block its reader packs: columns
    // for a depthwise conv, rows else; tiling.cpp channel_blocks) and one accumulator pixel.
    if (window_pixels_[pos] > 0) {
      const int64_t block = is_depthwise(*net_, op) ? machine.matrix_cols : machine.matrix_rows;
      const int64_t in_channels = net_->tensor(op.inputs[0]).shape.c;
      p->window[pos] =
          window_pixels_[pos] * ceil_div(in_channels, block) * block * net_->activation_bytes;
      p->acc_pixel[pos] =
          ceil_div(channels, machine.matrix_cols) * machine.matrix_cols * p->accumulator_bytes;
    }
  }
  p->slice_max = range_max_table(std::move(slice));
  packed_.push_back(std::move(p));
  return *packed_.back();
}

StreamedLoads BytesBoundModel::packed_streamed_loads(int op, const Capacities& c,
                                                     bool power_of_two_parts) const {
  const Op& o = net_->op(op);
  return streamed_input_loads(
      tiles_[static_cast<size_t>(op)], c.weights, c.maps, c.unified, power_of_two_parts,
      [&](int64_t k) { return widest_slice_bytes(*net_, *c.on, o, k, true); });
}

bool BytesBoundModel::sweep_fits(size_t first, size_t length, const GroupTerms& g,
                                 const Capacities& c) const {
  if (g.sweep_maps < 0) return false;  // F5
  // Two copies of the widest slice buffer, each at least one packed column block of each conv.
  const int64_t slices = std::max(g.sweep_weights, 2 * c.packed->one_slice(first, length));
  return c.unified ? g.sweep_maps + slices <= c.maps
                   : g.sweep_maps <= c.maps && slices <= c.weights;
}

// F11 (docs/bounds.md): at conv j's step, the weights of j and of every later conv of the
// group (live from step 0 to their op's step at least), j's input box and output box (the
// output may overwrite the input in place: the larger of the two counts), each holding the
// widest window of one position of its conv reader with every channel, and j's accumulator,
// a row of its output box at least (as wide as its widest in-group reader's window).
BytesBoundModel::TiledSteps BytesBoundModel::tiled_steps(size_t first, size_t length,
                                                         const Capacities& c) const {
  const PackedWeights& p = *c.packed;
  const size_t end = first + length;
  TiledSteps most;
  for (size_t j = first; j < end; ++j) {
    if (window_pixels_[j] <= 0) continue;
    int64_t out_box = 0, acc_cols = 1;
    for (size_t r : conv_readers_[j]) {
      if (r >= end) break;
      out_box = std::max(out_box, p.window[r]);
      acc_cols = std::max(acc_cols, window_cols_[r]);
    }
    const int64_t boxes = std::max(p.window[j], out_box);
    most.maps = std::max(most.maps, boxes);
    most.unified =
        std::max(most.unified, p.prefix[end] - p.prefix[j] + boxes + acc_cols * p.acc_pixel[j]);
  }
  return most;
}

bool BytesBoundModel::group_fits(size_t first, const GroupTerms& g, size_t length,
                                 const Capacities& c) const {
  const PlanOptions limits;
  // F4 (and with the group caps, F8: a group longer than max_group_ops is a sweep), with F9:
  // a head conv's largest input box beside its weights (a slice of one channel at least).
  if (!group_caps_ || length <= static_cast<size_t>(limits.max_group_ops)) {
    // The MLP's hidden chunks: a chunk's weights may be as small as one block (a lower bound
    // takes every such group as fitting); so may a group with reduction chunks.
    if (g.hidden_chunks) return true;
    if (c.packed->chunks(first, length, c.weights) && g.matmul_maps <= c.maps) return true;
    const HeadConv& head = heads_[first];
    const ConvTiles* tiles = head.op >= 0 ? &tiles_[static_cast<size_t>(head.op)] : nullptr;
    const int64_t box = tiles != nullptr ? tiles->min_box_bytes() : 0;
    // A streaming head holds one packed slice of one channel at least.
    const int64_t held =
        !g.streams ? std::max(g.conv_weights, c.packed->conv_weights(first, length))
        : tiles != nullptr && tiles->valid
            ? widest_slice_bytes(*net_, *c.on, net_->op(head.op), tiles->channels, true)
            : 0;
    // F11: with no channel tiles (not streaming), each conv's step holds its input window,
    // its accumulator and the weights of it and every later conv.
    bool steps_fit = true;
    if (!g.streams) {
      const TiledSteps steps = tiled_steps(first, length, c);
      steps_fit = c.unified ? steps.unified <= c.weights : steps.maps <= c.maps;
    }
    // F10: a MatMul's step holds the `b` operands (of it and of later MatMuls) whole.
    if (held <= c.weights && (c.unified ? held + box <= c.weights : box <= c.maps) &&
        g.matmul_maps <= c.maps && steps_fit)
      return true;
  }
  return sweep_fits(first, length, g, c);
}

int64_t BytesBoundModel::streamed_loads(int op, int64_t weight_bytes, int64_t channels,
                                        int64_t read_bytes, const Capacities& c) const {
  // A conv in reduction chunks may stream its weights again per tile instead of its input per
  // channel part (docs/codegen.md "Reduction chunks"): its input once is all a bound can say.
  if (reduction_chunk_blocks(*net_, *c.on, net_->op(op)) > 0) return read_bytes;
  const StreamedLoads loads = packed_streamed_loads(op, c, false);
  if (loads.bytes >= 0) return loads.bytes;
  // A space-to-depth stem, or no tiling fits beside any slice (no schedule exists): step 3
  // without F9.
  return fewest_channel_parts(channels, weight_bytes / channels, c.weights) * read_bytes;
}

int64_t BytesBoundModel::head_rereads(size_t first, size_t length, const GroupTerms& g,
                                      const Capacities& c, int64_t streamed) const {
  const HeadConv& head = heads_[first];
  // Weights that do not fit, in a group that is no sweep that fits: the group streams k parts
  // of the head's weights, each loading the input boxes of its tiles (F7, F9). The MLP's hidden
  // chunks keep the input over the parts: none.
  if (head.read_bytes <= 0 || g.hidden_chunks || head.weight_bytes <= c.weights ||
      sweep_fits(first, length, g, c))
    return 0;
  const int64_t loads =
      streamed >= 0 ? streamed
                    : streamed_loads(head.op, head.weight_bytes, head.channels, head.read_bytes, c);
  return std::max<int64_t>(0, loads - g.head_input_load);
}

int64_t BytesBoundModel::group_floor(size_t first, size_t length, const Machine& machine) const {
  if (first >= groups_.size() || length < 1 || length > groups_[first].size()) return -1;
  const Capacities c(*this, machine);
  const GroupTerms& g = groups_[first][length - 1];
  if (!group_fits(first, g, length, c)) return -1;
  if (g.view) return 0;
  return g.traffic + head_rereads(first, length, g, c) + g.fixed_bytes;
}

StreamedLoads BytesBoundModel::head_streamed_loads(size_t first, const Machine& machine,
                                                   bool power_of_two_parts) const {
  if (first >= heads_.size() || heads_[first].op < 0) return {};
  const Capacities c(*this, machine);
  return packed_streamed_loads(heads_[first].op, c, power_of_two_parts);
}

// The least over partitions into groups that fit of the bytes their cuts move (a DP over the
// net's order, as `optimal`'s, with each group's cost from its terms).
void BytesBoundModel::chain_bound(const Machine& machine, BytesBound& bound) const {
  const Capacities c(*this, machine);
  const size_t n = groups_.size();
  constexpr int64_t kNone = -1;
  std::vector<int64_t> best(n + 1, kNone);
  std::vector<size_t> start(n + 1, 0);
  best[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    if (best[i] == kNone) continue;
    const HeadConv& head = heads_[i];
    const int64_t streamed =
        head.read_bytes > 0 && head.weight_bytes > c.weights
            ? streamed_loads(head.op, head.weight_bytes, head.channels, head.read_bytes, c)
            : -1;  // the same for every length: once
    for (size_t length = 1; length <= groups_[i].size(); ++length) {
      const GroupTerms& g = groups_[i][length - 1];
      if (!group_fits(i, g, length, c)) continue;
      const int64_t cost = g.traffic + head_rereads(i, length, g, c, streamed);
      int64_t& to = best[i + length];
      if (to == kNone || best[i] + cost < to) {
        to = best[i] + cost;
        start[i + length] = i;
      }
    }
  }
  if (best[n] == kNone) return;
  bound.chain_bytes = base_without_inputs_ + best[n];
  for (size_t j = n; j > 0; j = start[j]) bound.chain_groups.push_back(static_cast<int>(start[j]));
  std::reverse(bound.chain_groups.begin(), bound.chain_groups.end());
}

BytesBound BytesBoundModel::at(const Machine& machine) const {
  const int64_t weights_capacity = scratchpad_bytes(machine, BufferKind::Weights);
  const int64_t maps_capacity = scratchpad_bytes(machine, BufferKind::Activations);
  const Capacities c(*this, machine);
  BytesBound bound;
  for (const auto& sp : machine.scratchpads) bound.capacity_bytes += sp.size_bytes;
  bound.compulsory_bytes = compulsory_;
  bound.base_bytes = base_;
  // Whether an op of a tensor's span runs its reduction in chunks on this machine: then the
  // span's conv weights need not be on chip at once.
  std::vector<char> chunked(static_cast<size_t>(net_->size()), 0);
  for (int p = 0; p < net_->size(); ++p)
    chunked[static_cast<size_t>(p)] = reduction_chunk_blocks(*net_, machine, net_->op(p)) > 0;
  auto span_chunks = [&](const TensorTerms& t) {
    for (int p = std::max(0, t.span_first); p <= t.span_last; ++p)
      if (chunked[static_cast<size_t>(p)]) return true;
    return false;
  };
  for (const TensorTerms& t : terms_) {
    // Readers that can neither hold their weights whole nor their input whole: channel parts,
    // each loading every input byte the conv reads.
    int64_t reader_loads = 0, reader_extra = 0;
    for (const Reader& r : t.readers) {
      if (r.weight_bytes <= weights_capacity || r.read_bytes <= maps_capacity) continue;
      const int64_t loads = streamed_loads(r.op, r.weight_bytes, r.channels, r.read_bytes, c);
      reader_loads += loads;
      reader_extra += loads - r.read_bytes;
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
      const bool span =
          t.always_forced || (t.span_weights > weights_capacity &&
                              (!t.sweep_shaped || t.sweep_cut > maps_capacity) && !span_chunks(t));
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
  bound.per_tensor_bytes = bound.base_bytes + bound.crossing_bytes + bound.reread_bytes;
  chain_bound(machine, bound);
  bound.bytes = std::max(bound.per_tensor_bytes, bound.chain_bytes);
  bound.own_bytes = bound.bytes;
  return bound;
}

void lift_to_larger_capacities(std::vector<BytesBound>& rows) {
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return rows[a].capacity_bytes > rows[b].capacity_bytes; });
  int64_t most = 0;  // the largest bound at a capacity at or above this row's
  for (size_t i : order) {
    most = std::max(most, rows[i].own_bytes);
    rows[i].bytes = most;
  }
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
