// The host tail (docs/codegen.md, "Host ops"): the Softmax groups that end the schedule run
// after the program on the golden executor; this finds them and builds their host graph.
#include <algorithm>
#include <set>

#include "codegen/lowering.hpp"
#include "support/diagnostic.hpp"

namespace tessel::codegen::detail {

Status Lowering::find_host_groups() {
  const auto& groups = schedule_.groups;
  host_from_ = groups.size();
  for (size_t g = 0; g < groups.size(); ++g) {
    size_t host_ops = 0;
    for (int o : groups[g].ops) host_ops += net_.op(o).kind == sched::OpKind::Softmax;
    if (host_ops == 0) {
      if (host_from_ < g)
        return fail("group " + std::to_string(g) + ": op '" + net_.op(groups[g].ops.front()).name +
                    "' runs on the accelerator after host op '" +
                    net_.op(groups[host_from_].ops.front()).name +
                    "' (host ops must end the network)");
      continue;
    }
    if (host_ops != groups[g].ops.size()) {
      std::string softmax;
      for (int o : groups[g].ops)
        if (net_.op(o).kind == sched::OpKind::Softmax) softmax = net_.op(o).name;
      return fail("group " + std::to_string(g) + ": op '" + softmax +
                  "' (softmax) runs on the host and cannot share a group with accelerator ops");
    }
    host_from_ = std::min(host_from_, g);
  }
  return {};
}

Status Lowering::plan_host() {
  HostPart& host = out_.host;
  std::set<std::string> boundary;  // integer IR tensors the host reads
  for (size_t g = host_from_; g < schedule_.groups.size(); ++g) {
    for (int o : schedule_.groups[g].ops) {
      const sched::Op& op = net_.op(o);
      host.ops.push_back(op.name);
      for (int t : op.inputs) {
        const sched::Tensor& tensor = net_.tensor(t);
        if (net_.op(tensor.producer).kind == sched::OpKind::Softmax) continue;
        auto ir_name = int_tensor(tensor.name);
        if (!ir_name.ok()) return fail("host op '" + op.name + "': " + ir_name.reason());
        if (!boundary.insert(ir_name.value()).second) continue;
        if (slice_of_.count(t))
          return fail("host op '" + op.name + "': its input '" + tensor.name +
                      "' lies in a concat's channel slice");
        HostInput in;
        in.name = tensor.name;
        in.ir_tensor = ir_name.value();
        in.offset = region_of(tensor.name)->offset;
        in.shape = graph_.tensor(in.ir_tensor).shape;
        in.bytes = tensor.shape.elements() * act_bytes_;
        host.inputs.push_back(std::move(in));
      }
    }
  }
  if (host.empty()) return {};
  // The host graph: every op of the quantized graph downstream of the boundary, in an order
  // whose inputs are ready (the boundary tensors become graph inputs).
  ir::Graph& hg = host.graph;
  hg.set_name(graph_.name() + ".host");
  std::set<std::string> ready;
  for (const HostInput& in : host.inputs) {
    const ir::Tensor& t = graph_.tensor(in.ir_tensor);
    if (auto r = hg.add_input(in.ir_tensor, t.shape, t.dtype); !r) return fail(r.reason());
    hg.tensor_mut(in.ir_tensor).quant = t.quant;
    ready.insert(in.ir_tensor);
  }
  std::set<ir::OpId> taken;
  for (bool grew = true; grew;) {
    grew = false;
    for (ir::OpId id = 0; id < graph_.num_ops(); ++id) {
      const ir::Op& op = graph_.op(id);
      if (taken.count(id) || op.kind == ir::OpKind::Input) continue;
      bool reads_host = false, all_ready = true;
      for (const auto& x : op.inputs) {
        if (x.empty()) continue;
        const ir::Tensor& t = graph_.tensor(x);
        if (ready.count(x)) {
          reads_host = true;
        } else if (!t.constant) {
          all_ready = false;
        }
      }
      if (!reads_host || !all_ready) continue;
      for (const auto& x : op.inputs) {
        if (x.empty() || ready.count(x) || hg.has_tensor(x)) continue;
        if (auto r = hg.add_constant(graph_.tensor(x)); !r) return fail(r.reason());
      }
      for (const auto& y : op.outputs) {
        if (auto r = hg.declare_tensor(graph_.tensor(y)); !r) return fail(r.reason());
        ready.insert(y);
      }
      if (auto r = hg.add_op(op); !r) return fail(r.reason());
      taken.insert(id);
      grew = true;
    }
  }
  for (const auto& y : graph_.outputs())
    if (ready.count(y) && !boundary.count(y)) host.outputs.push_back(y);
  if (host.outputs.empty()) return fail("host ops '" + host.ops.front() + "': no network output");
  if (auto r = hg.set_outputs(host.outputs); !r) return fail(r.reason());
  return {};
}

}  // namespace tessel::codegen::detail
