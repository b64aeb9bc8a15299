// The barrier bound: for each tensor, backward through ops that read all of their input (what must
// precede it), and the Gemms and dense convs that need it whole (whose weights stream after it).
#include "scheduler/bound.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "support/int_ops.hpp"

namespace tessel::sched {
namespace {

using intops::ceil_div;

/// How often the windows along one axis read each of the `in` stored positions (taps on
/// padding are not counted). Their sum is the axis' stored (output, tap) pairs; a zero is a
/// position no window reads.
std::vector<int64_t> axis_reads(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                int64_t dilation, int64_t pad_begin) {
  std::vector<int64_t> reads(static_cast<size_t>(in), 0);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t i = o * stride + k * dilation - pad_begin;
      if (i >= 0 && i < in) ++reads[static_cast<size_t>(i)];
    }
  return reads;
}

std::vector<int64_t> rows_read(const Net& net, const Op& op) {
  const Window& w = op.window;
  return axis_reads(net.tensor(op.inputs[0]).shape.h, net.tensor(op.output).shape.h, w.kernel_h,
                    w.stride_h, w.dilation_h, w.pad_top);
}
std::vector<int64_t> cols_read(const Net& net, const Op& op) {
  const Window& w = op.window;
  return axis_reads(net.tensor(op.inputs[0]).shape.w, net.tensor(op.output).shape.w, w.kernel_w,
                    w.stride_w, w.dilation_w, w.pad_left);
}

int64_t sum(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}
bool all_read(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t r) { return r > 0; });
}

/// How many of a window's kernel taps along one axis ever land on a stored input position (a tap
/// that only meets padding multiplies nothing that exists).
int64_t used_taps(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                  int64_t pad_begin) {
  int64_t used = 0;
  for (int64_t k = 0; k < kernel; ++k)
    for (int64_t o = 0; o < out; ++o) {
      const int64_t i = o * stride + k * dilation - pad_begin;
      if (i >= 0 && i < in) {
        ++used;
        break;
      }
    }
  return used;
}

/// Weight bytes of one output channel of a conv or Gemm that multiply stored inputs (taps on
/// padding only left out; no bias or table); 0 for other ops and for a rewritten stem conv
/// (its kernel holds zeros that are not the model's).
int64_t channel_weight_bytes(const Net& net, const Op& op, int64_t weight_bytes) {
  if (op.kind == OpKind::Gemm)
    return op.macs / net.tensor(op.output).shape.c * weight_bytes;  // batch 1: K weights each
  if (op.kind != OpKind::Conv || op.space_to_depth.channels != 0) return 0;
  const Shape3& in = net.tensor(op.inputs[0]).shape;
  const Shape3& out = net.tensor(op.output).shape;
  const Window& w = op.window;
  return in.c / op.groups *
         used_taps(in.h, out.h, w.kernel_h, w.stride_h, w.dilation_h, w.pad_top) *
         used_taps(in.w, out.w, w.kernel_w, w.stride_w, w.dilation_w, w.pad_left) * weight_bytes;
}

}  // namespace

int64_t stored_input_macs(const Net& net, int op_index) {
  const Op& op = net.op(op_index);
  if (op.kind == OpKind::Gemm) return op.macs;
  if (op.kind != OpKind::Conv) return 0;
  const int64_t in_channels = net.tensor(op.inputs[0]).shape.c;
  const int64_t out_channels = net.tensor(op.output).shape.c;
  return out_channels * (in_channels / op.groups) * sum(rows_read(net, op)) *
         sum(cols_read(net, op));
}

bool reads_all_of_input(const Net& net, int op_index, size_t index) {
  const Op& op = net.op(op_index);
  switch (op.kind) {
    case OpKind::Conv:
    case OpKind::MaxPool:
    case OpKind::AvgPool:
      // One input; every channel is read (a conv's groups partition them), rows and columns
      // where a window reaches them.
      return index == 0 && all_read(rows_read(net, op)) && all_read(cols_read(net, op));
    default:
      return true;  // Pad, elementwise, Add, Concat, global pool, Gemm, softmax, reshape
  }
}

std::vector<bool> fully_needed(const Net& net, const std::vector<int>& from) {
  std::vector<bool> needed(net.tensors.size(), false);
  for (int t : from) needed[static_cast<size_t>(t)] = true;
  for (int p = net.size() - 1; p >= 0; --p) {
    const Op& op = net.op(p);
    if (!needed[static_cast<size_t>(op.output)]) continue;
    for (size_t i = 0; i < op.inputs.size(); ++i)
      if (reads_all_of_input(net, p, i)) needed[static_cast<size_t>(op.inputs[i])] = true;
  }
  return needed;
}

BarrierBound barrier_bound(const Net& net, const Machine& machine) {
  BarrierBound best;
  int64_t on_chip = 0;
  for (const auto& sp : machine.scratchpads) on_chip += sp.size_bytes;
  std::vector<int> outputs;
  for (size_t t = 0; t < net.tensors.size(); ++t)
    if (net.tensors[t].network_output) outputs.push_back(static_cast<int>(t));
  const std::vector<bool> needed_by_outputs = fully_needed(net, outputs);
  const int64_t peak = machine.macs_per_cycle();
  const double b = machine.dram_bytes_per_cycle;
  const auto bus_cycles = [b](int64_t bytes) {
    return static_cast<int64_t>(static_cast<double>(std::max<int64_t>(0, bytes)) / b);
  };

  // The completing ops: every Gemm, and every dense conv that reads all of its input, whose
  // output the network outputs need whole (so none of its output elements is skipped). For each,
  // what it needs whole before its completion event, and what it still needs after it.
  struct Completing {
    int op = -1;
    std::vector<bool> needs;  ///< tensors the op's input needs whole (fully_needed of it)
    int64_t weights_after = 0;
    int64_t macs_after = 0;
  };
  // Every op's weight bytes on stored taps, once (the per-tensor loop below sums them).
  std::vector<int64_t> op_weights(static_cast<size_t>(net.size()));
  for (int p = 0; p < net.size(); ++p)
    op_weights[static_cast<size_t>(p)] =
        channel_weight_bytes(net, net.op(p), machine.weight_bytes) *
        net.tensor(net.op(p).output).shape.c;
  std::vector<Completing> completing;
  for (int k = 0; k < net.size(); ++k) {
    const Op& op = net.op(k);
    if (!needed_by_outputs[static_cast<size_t>(op.output)]) continue;
    const int64_t per_channel = channel_weight_bytes(net, op, machine.weight_bytes);
    const int64_t channels = net.tensor(op.output).shape.c;
    Completing c;
    c.op = k;
    if (op.kind == OpKind::Gemm) {
      c.weights_after = per_channel * channels;  // no Gemm MAC precedes its whole input
      c.macs_after = op.macs;
    } else if (op.kind == OpKind::Conv && op.groups == 1 && reads_all_of_input(net, k, 0) &&
               per_channel > 0) {
      // Every channel but those whose last MAC falls in the same cycle as the first one's
      // still needs all of its weights; the matrix unit finishes at most one output element
      // per column (C channels) in a cycle.
      c.weights_after = per_channel * std::max<int64_t>(0, channels - machine.matrix_cols);
    } else {
      continue;
    }
    if (c.weights_after == 0 && c.macs_after == 0) continue;
    c.needs = fully_needed(net, {op.inputs[0]});
    completing.push_back(std::move(c));
  }

  for (int t = 0; t < static_cast<int>(net.tensors.size()); ++t) {
    int64_t after_weights = 0, after_macs = 0;
    int first = -1;
    for (const Completing& c : completing) {
      if (!c.needs[static_cast<size_t>(t)]) continue;
      after_weights += c.weights_after;
      after_macs += c.macs_after;
      if (first < 0) first = c.op;
    }
    if (first < 0) continue;
    const std::vector<bool> needed = fully_needed(net, {t});
    int64_t before_macs = 0, before_weights = 0;
    for (int p = 0; p < net.size(); ++p) {
      const Op& op = net.op(p);
      if (!needed[static_cast<size_t>(op.output)]) continue;
      before_macs += stored_input_macs(net, p);
      before_weights += op_weights[static_cast<size_t>(p)];
    }
    const int64_t cycles =
        std::max(ceil_div(before_macs, peak), bus_cycles(before_weights)) +
        std::max(ceil_div(after_macs, peak), bus_cycles(after_weights - on_chip));
    if (cycles > best.cycles) {
      best = {cycles, first, t, before_macs, before_weights, after_macs, after_weights, on_chip};
    }
  }
  return best;
}

}  // namespace tessel::sched
