// The mapping-independent view of a group: local ids, steps, op predicates.
#include "scheduler/group_info.hpp"

namespace tessel::sched {

Interval part(int64_t extent, int64_t parts, int64_t i) {
  return {extent * i / parts, extent * (i + 1) / parts};
}

bool is_view(const Op& op, const PlanOptions& options) {
  return op.kind == OpKind::Reshape || op.kind == OpKind::Slice ||
         (op.kind == OpKind::Concat && (op.concat_rows || (options.alias_concat && !op.copy_only)));
}

bool has_matrix_work(const Op& op) {
  return op.kind == OpKind::Conv || op.kind == OpKind::Gemm || op.pool_by_conv;
}

int64_t pool_sub_windows(int64_t extent) {
  return (extent + kPoolWindowMax - 1) / kPoolWindowMax;
}

bool is_dense_conv(const Op& op) {
  return op.kind == OpKind::Conv && op.groups == 1;
}

bool is_depthwise(const Net& net, const Op& op) {
  return op.kind == OpKind::Conv && op.groups > 1 &&
         op.groups == net.tensor(op.inputs[0]).shape.c &&
         op.groups == net.tensor(op.output).shape.c;
}

bool skips_rows_or_columns(const Net& net, const std::vector<int>& ops) {
  for (int op : ops) {
    const Op& o = net.op(op);
    if (o.kind != OpKind::Conv && o.kind != OpKind::MaxPool && o.kind != OpKind::AvgPool) continue;
    const Window& w = o.window;
    if ((w.kernel_h - 1) * w.dilation_h + 1 < w.stride_h ||
        (w.kernel_w - 1) * w.dilation_w + 1 < w.stride_w)
      return true;
  }
  return false;
}

GroupInfo describe(const Net& net, const std::vector<int>& ops) {
  GroupInfo g;
  g.ops = ops;
  std::vector<int> local_of(net.tensors.size(), -1);
  std::vector<char> in_group(net.ops.size(), 0);
  for (int op : ops) in_group[static_cast<size_t>(op)] = 1;
  auto local = [&](int tensor) {
    int& id = local_of[static_cast<size_t>(tensor)];
    if (id < 0) {
      id = static_cast<int>(g.tensors.size());
      g.tensors.push_back(tensor);
      g.is_input.push_back(0);
      g.stored.push_back(0);
      g.produced_step.push_back(0);
      g.last_use_step.push_back(0);
      g.internal_use.push_back(0);
      g.gathered.push_back(0);
    }
    return id;
  };
  for (size_t pos = 0; pos < ops.size(); ++pos) {
    const Op& op = net.op(ops[pos]);
    const int step = static_cast<int>(pos) + 1;
    std::vector<int> ins;
    for (int input : op.inputs) {
      const int l = local(input);
      ins.push_back(l);
      const int producer = net.tensor(input).producer;
      if (producer < 0 || !in_group[static_cast<size_t>(producer)])
        g.is_input[static_cast<size_t>(l)] = 1;
      g.last_use_step[static_cast<size_t>(l)] = step;
      g.internal_use[static_cast<size_t>(l)] = 1;
    }
    g.in_local.push_back(std::move(ins));
    const int out = local(op.output);
    g.out_local.push_back(out);
    g.produced_step[static_cast<size_t>(out)] = step;
    g.gathered[static_cast<size_t>(out)] = op.kind == OpKind::Embedding;
    const Tensor& t = net.tensor(op.output);
    bool external = t.network_output;
    for (int consumer : t.consumers) {
      if (!in_group[static_cast<size_t>(consumer)]) external = true;
    }
    g.stored[static_cast<size_t>(out)] = external ? 1 : 0;
  }
  return g;
}

void transfer_local(const Net& net, const GroupInfo& g, Box* need) {
  for (size_t pos = g.ops.size(); pos-- > 0;) {
    const Op& op = net.op(g.ops[pos]);
    const Box out = need[static_cast<size_t>(g.out_local[pos])];
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const InputNeed in = deduce_input(net, op, static_cast<int>(i), out);
      Box& slot = need[static_cast<size_t>(g.in_local[pos][i])];
      slot = hull(slot, in.box);
    }
  }
}

}  // namespace tessel::sched
