// The barrier bound: backward from each Gemm's input through ops that read all of theirs,
// forward from it through the ops whose every element depends on it.
#include "scheduler/bound.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace tessel::sched {
namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

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

/// Tensors whose every element `from` needs: `from` itself, then backwards through ops that
/// read all of their input (ops in topological order, so one reverse pass settles it).
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

/// Ops whose every output element depends on op `g`'s output through ops without padding or
/// skipped elements (each output element of them depends on one or more of each input).
bool propagates_dependence(OpKind kind) {
  switch (kind) {
    case OpKind::Gemm:
    case OpKind::Eltwise:
    case OpKind::Add:
    case OpKind::Concat:
    case OpKind::Reshape:
    case OpKind::GlobalPool:
    case OpKind::Softmax:
      return true;
    default:
      return false;
  }
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

BarrierBound barrier_bound(const Net& net, const Machine& machine) {
  BarrierBound best;
  int64_t on_chip = 0;
  for (const auto& sp : machine.scratchpads) on_chip += sp.size_bytes;
  std::vector<int> outputs;
  for (size_t t = 0; t < net.tensors.size(); ++t)
    if (net.tensors[t].network_output) outputs.push_back(static_cast<int>(t));
  const std::vector<bool> needed_by_outputs = fully_needed(net, outputs);
  const int64_t peak = machine.macs_per_cycle();

  for (int g = 0; g < net.size(); ++g) {
    if (net.op(g).kind != OpKind::Gemm) continue;
    const std::vector<bool> needed = fully_needed(net, {net.op(g).inputs[0]});
    int64_t before = 0;
    for (int p = 0; p < g; ++p)
      if (needed[static_cast<size_t>(net.op(p).output)]) before += stored_input_macs(net, p);

    std::vector<bool> depends(static_cast<size_t>(net.size()), false);
    int64_t after_macs = 0, after_weights = 0;
    for (int q = g; q < net.size(); ++q) {
      const Op& op = net.op(q);
      bool all = q == g;
      if (!all && propagates_dependence(op.kind)) {
        all = true;
        for (int t : op.inputs) {
          const int producer = net.tensor(t).producer;
          all = all && producer >= 0 && depends[static_cast<size_t>(producer)];
        }
      }
      depends[static_cast<size_t>(q)] = all;
      if (all && op.kind == OpKind::Gemm && needed_by_outputs[static_cast<size_t>(op.output)]) {
        after_macs += op.macs;
        after_weights += op.macs * machine.weight_bytes;  // batch 1: one weight per MAC
      }
    }
    const int64_t streamed = std::max<int64_t>(0, after_weights - on_chip);
    const int64_t dram_cycles =
        static_cast<int64_t>(static_cast<double>(streamed) / machine.dram_bytes_per_cycle);
    const int64_t cycles =
        ceil_div(before, peak) + std::max(ceil_div(after_macs, peak), dram_cycles);
    if (cycles > best.cycles) {
      best = {cycles, g, before, after_macs, after_weights, on_chip};
    }
  }
  return best;
}

}  // namespace tessel::sched
