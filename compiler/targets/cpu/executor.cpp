// The CPU executor: the op loop. Each op kind's kernels are registered by kind (ops/kernel.hpp):
// channels-last kernels for the CNN kinds with fast paths (ops/channels_last.hpp), row-major ones
// for the rest; this file plans the fused groups, runs the ops in order and keeps the values.
#include "compiler/targets/cpu/executor.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "compiler/ir/analysis.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/targets/cpu/ops/channels_last.hpp"
#include "support/cancel.hpp"
#include "support/int_ops.hpp"
#include "support/seeded.hpp"

namespace tessel::cpu {

namespace {

using ir::DType;
using ir::OpKind;

using ir::where;

}  // namespace

// ------------------------------------------------------------------------------------------------
// The executor

struct Executor::Impl {
  std::unordered_map<std::string, TensorData> constants;
  std::unordered_map<std::string, TensorData> constants_nhwc;  // 4-D constants, channels-last
  std::string missing_constant;  ///< the refusal of a constant read without values, if any
  std::vector<ir::OpId> order;
  std::unordered_map<std::string, std::size_t> last_use;  // tensor -> position in `order`
  std::unordered_map<std::string, std::vector<ir::OpId>> readers;
  std::unordered_map<ir::OpId, Fusion> fusions;  // by head op
  KernelCache cache;

  /// The single reader of `tensor` when it has exactly one and is not a graph output.
  std::optional<ir::OpId> sole_reader(const ir::Graph& graph, const std::string& tensor) const {
    const auto it = readers.find(tensor);
    if (it == readers.end() || it->second.size() != 1) return std::nullopt;
    const auto& outputs = graph.outputs();
    if (std::find(outputs.begin(), outputs.end(), tensor) != outputs.end()) return std::nullopt;
    return it->second[0];
  }

  bool is_output(const ir::Graph& graph, const std::string& tensor) const {
    const auto& outputs = graph.outputs();
    return std::find(outputs.begin(), outputs.end(), tensor) != outputs.end();
  }

  void plan_fusions(const ir::Graph& graph);
  /// Runs the op at `pos` of `order` (the head of `fusion` when given) on one sample's values.
  Status run_op(const ir::Graph& graph, std::size_t pos, const Fusion* fusion, SampleValues& values,
                const std::map<std::string, TensorData>& inputs, const RunOptions& options);
  /// The row-major kernel's run: inputs NCHW; outputs after the first are stored (and observed)
  /// here, the first goes to args.y.
  static Status run_row_major(OpKernel kernel, ChannelsLastArgs& args, const RunOptions& options);
  /// Observes and stores an op's result `y`, then frees what no later op reads.
  Status store(const ir::Graph& graph, std::size_t pos, const std::string& name, TensorData y,
               bool y_nhwc, SampleValues& values, const RunOptions& options);
};

void Executor::Impl::plan_fusions(const ir::Graph& graph) {
  // Narrows [lo, hi] by a following Relu/Clip when the two clamps compose into one.
  const auto absorb_activation = [&](const std::string& tensor, Fusion& f, std::int32_t& lo,
                                     std::int32_t& hi) {
    const auto act_id = sole_reader(graph, tensor);
    if (!act_id) return;
    const ir::Op* act = &graph.op(*act_id);
    if (act->kind != OpKind::Relu && act->kind != OpKind::Clip) return;
    if (graph.tensor(act->outputs[0]).dtype != graph.tensor(tensor).dtype) return;
    const auto [alo, ahi] = activation_bounds(graph, *act);
    const std::int32_t nlo = std::max(lo, alo), nhi = std::min(hi, ahi);
    if (alo > ahi || nlo > nhi) return;
    lo = nlo;
    hi = nhi;
    f.absorbed.push_back(*act_id);
    f.output = act->outputs[0];
    f.label += "+" + std::string(ir::to_string(act->kind));
  };
  for (const ir::OpId id : order) {
    const ir::Op& op = graph.op(id);
    if (op.kind == OpKind::Conv && op.inputs.size() >= 2) {
      const auto& x = graph.tensor(op.inputs[0]);
      const auto& w = graph.tensor(op.inputs[1]);
      const auto& acc = graph.tensor(op.outputs[0]);
      if (!((x.dtype == DType::i8 || x.dtype == DType::u8) && w.dtype == DType::i8 && w.constant &&
            acc.dtype == DType::i32 && acc.shape.size() == 4 && op.get_int("input_shift") == 0))
        continue;
      const auto rq_id = sole_reader(graph, op.outputs[0]);
      if (!rq_id) continue;
      const ir::Op* rq = &graph.op(*rq_id);
      if (rq->kind != OpKind::Requantize) continue;
      const auto& y = graph.tensor(rq->outputs[0]);
      if (y.dtype != DType::i8 && y.dtype != DType::u8 && y.dtype != DType::i16) continue;
      Fusion f;
      f.absorbed = {*rq_id};
      f.output = rq->outputs[0];
      f.label = "Conv+Requantize";
      f.requant = nhwc::channel_requant(quant::requantize_params(acc, y), acc.shape[1]);
      f.requant.zero_point = y.quant->zero_points.empty() ? 0 : y.quant->zero_points[0];
      absorb_activation(rq->outputs[0], f, f.requant.lo, f.requant.hi);
      fusions.emplace(id, std::move(f));
    } else if (op.kind == OpKind::Add && op.inputs.size() == 2) {
      const auto& a = graph.tensor(op.inputs[0]);
      const auto& b = graph.tensor(op.inputs[1]);
      const auto& y = graph.tensor(op.outputs[0]);
      // Equal shapes only: a broadcast is the row-major kernel's, which fuses nothing.
      if (!(a.dtype == y.dtype && b.dtype == y.dtype && a.shape == b.shape &&
            (y.dtype == DType::i8 || y.dtype == DType::i16)))
        continue;
      Fusion f;
      f.label = "Add";
      f.add = quant::add_params(a, b, y);
      absorb_activation(op.outputs[0], f, f.add.lo, f.add.hi);
      if (!f.absorbed.empty()) fusions.emplace(id, std::move(f));
    }
  }
}

Executor::Executor(const ir::Graph& graph) : graph_(graph), impl_(std::make_unique<Impl>()) {
  auto order = ir::topological_order(graph);
  if (!order) throw std::invalid_argument("Executor: " + order.reason());
  impl_->order = std::move(order.value());
  for (const auto& [name, tensor] : graph.tensors())
    if (tensor.constant && tensor.has_data())
      impl_->constants.emplace(name, TensorData::from_constant(tensor));
  for (std::size_t pos = 0; pos < impl_->order.size(); ++pos) {
    const ir::OpId id = impl_->order[pos];
    for (const auto& in : graph.op(id).inputs) {
      impl_->last_use[in] = pos;
      impl_->readers[in].push_back(id);
      // A constant held only as a digest (`tessel import` and `tessel compile` write weights
      // elided in .tir files) has no values to compute with: every run refuses it.
      if (impl_->missing_constant.empty() && graph.tensor(in).constant &&
          !impl_->constants.count(in))
        impl_->missing_constant =
            "constant %" + in + ", read by op '" + graph.op(id).name +
            "', has no values (a file that holds weights as digests only, such as the .tir "
            "`tessel import` writes, cannot run: run the .onnx or a model file written with "
            "its weights)";
    }
  }
  impl_->plan_fusions(graph);
}

Executor::~Executor() = default;

Result<std::map<std::string, TensorData>> Executor::run(
    const std::map<std::string, TensorData>& inputs, const RunOptions& options) {
  const std::map<std::string, TensorData>* sample[] = {&inputs};
  auto results = run_samples(sample, {&options, 1});
  if (!results) return fail(results.reason());
  return std::move(results.value()[0]);
}

Result<std::vector<std::map<std::string, TensorData>>> Executor::run_lockstep(
    std::span<const std::map<std::string, TensorData>> samples, const SampleObserver& observer,
    std::size_t* failed_sample) {
  std::vector<const std::map<std::string, TensorData>*> inputs;
  std::vector<RunOptions> options(samples.size());
  for (std::size_t k = 0; k < samples.size(); ++k) {
    inputs.push_back(&samples[k]);
    options[k].layout_observer = [&observer, k](const std::string& tensor, const TensorData& value,
                                                bool channels_last) {
      return observer(k, tensor, value, channels_last);
    };
  }
  return run_samples(inputs, options, failed_sample);
}

Status Executor::Impl::run_row_major(OpKernel kernel, ChannelsLastArgs& args,
                                     const RunOptions& options) {
  const ir::Op& op = args.op;
  if (!kernel) return fail(where(op) + ": no kernel for this op kind");
  KernelArgs row_major{args.graph, op, {}};
  for (const auto& in : op.inputs) row_major.inputs.push_back(&args.values.nchw(in));
  auto results = kernel(row_major);
  if (!results) return fail(results.reason());
  auto& values_out = results.value();
  args.y = std::move(values_out[0]);
  args.y_nhwc = false;
  for (std::size_t k = 1; k < values_out.size(); ++k) {
    if (options.observer)
      if (auto ok = options.observer(op.outputs[k], values_out[k]); !ok) return ok;
    if (options.layout_observer)
      if (auto ok = options.layout_observer(op.outputs[k], values_out[k], false); !ok) return ok;
    args.values.values[op.outputs[k]] = Value{std::move(values_out[k]), false};
  }
  return {};
}

Status Executor::Impl::run_op(const ir::Graph& graph, std::size_t pos, const Fusion* fusion,
                              SampleValues& values, const std::map<std::string, TensorData>& inputs,
                              const RunOptions& options) {
  const ir::OpId id = order[pos];
  const ir::Op& op = graph.op(id);
  const auto start = std::chrono::steady_clock::now();
  const std::string& out_name = fusion ? fusion->output : op.outputs.at(0);
  ChannelsLastArgs args{graph,  op,       id,     values,       cache,
                        fusion, out_name, inputs, TensorData(), false};
  // A kind with both kernels tries the channels-last one first (Add: equal shapes).
  const KernelEntry& kernels = find_kernels(op.kind);
  try {
    bool done = false;
    if (kernels.channels_last) {
      auto ran = kernels.channels_last(args);
      if (!ran) return fail(ran.reason());
      done = ran.value();
    }
    if (!done)
      if (auto ok = run_row_major(kernels.kernel, args, options); !ok) return ok;
  } catch (const dnnl::error& e) {
    return fail(where(op) + ": oneDNN: " + e.what());
  }
  if (options.seconds_by_op) {
    const std::string label = fusion ? fusion->label : std::string(ir::to_string(op.kind));
    (*options.seconds_by_op)[label] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return store(graph, pos, out_name, std::move(args.y), args.y_nhwc, values, options);
}

Status Executor::Impl::store(const ir::Graph& graph, std::size_t pos, const std::string& name,
                             TensorData y, bool y_nhwc, SampleValues& values,
                             const RunOptions& options) {
  if (options.observer) {
    const TensorData observed = y_nhwc ? relayout(y, false) : TensorData();
    if (auto ok = options.observer(name, y_nhwc ? observed : y); !ok) return ok;
  }
  if (options.layout_observer)
    if (auto ok = options.layout_observer(name, y, y_nhwc && layouts_differ(y.shape())); !ok)
      return ok;
  values.values[name] = Value{std::move(y), y_nhwc};
  // Free what no later op reads.
  if (!options.keep_intermediates)
    for (const auto& in : graph.op(order[pos]).inputs) {
      const auto it = last_use.find(in);
      if (it != last_use.end() && it->second == pos && !is_output(graph, in))
        values.values.erase(in);
    }
  return {};
}

Result<std::vector<std::map<std::string, TensorData>>> Executor::run_samples(
    std::span<const std::map<std::string, TensorData>* const> sample_inputs,
    std::span<const RunOptions> sample_options, std::size_t* current_sample) {
  if (!impl_->missing_constant.empty()) return fail(impl_->missing_constant);
  const RunOptions& first_options = sample_options[0];
  const bool fuse = !first_options.observer && !first_options.layout_observer &&
                    !first_options.keep_intermediates;
  std::vector<bool> absorbed(graph_.num_ops(), false);
  std::vector<SampleValues> sample_values(sample_inputs.size(),
                                          SampleValues(impl_->constants, impl_->constants_nhwc));

  // Op by op, each op on every sample before the next op (one sample: a plain run).
  for (std::size_t pos = 0; pos < impl_->order.size(); ++pos)
    for (std::size_t sample = 0; sample < sample_inputs.size(); ++sample) {
      if (cancel_requested()) return cancelled();  // support/cancel.hpp
      if (current_sample) *current_sample = sample;
      const ir::OpId id = impl_->order[pos];
      if (absorbed[id]) continue;
      const Fusion* fusion = nullptr;
      if (fuse)
        if (auto it = impl_->fusions.find(id); it != impl_->fusions.end()) {
          fusion = &it->second;
          for (const ir::OpId a : fusion->absorbed) absorbed[a] = true;
        }
      if (auto ok = impl_->run_op(graph_, pos, fusion, sample_values[sample],
                                  *sample_inputs[sample], sample_options[sample]);
          !ok)
        return fail(ok.reason());
    }
  std::vector<std::map<std::string, TensorData>> results(sample_inputs.size());
  for (std::size_t sample = 0; sample < sample_inputs.size(); ++sample) {
    auto& result = results[sample];
    for (auto& [name, value] : sample_values[sample].values)
      if (sample_options[sample].keep_intermediates || impl_->is_output(graph_, name))
        result[name] = value.nhwc ? relayout(value.data, false) : std::move(value.data);
    for (const auto& name : graph_.outputs())
      if (!result.count(name)) return fail("graph output %" + name + " was not computed");
  }
  return results;
}

TensorData default_input(const ir::Shape& shape, std::uint64_t seed) {
  const auto values = seeded_normal_values(ir::element_count(shape), seed);
  return TensorData::from_f32(shape, values);
}

std::int64_t token_id_range(const ir::Graph& graph, const std::string& input) {
  std::int64_t rows = 0;
  for (const ir::Use& use : graph.consumers(input)) {
    const ir::Op& op = graph.op(use.op);
    if (op.kind != ir::OpKind::Embedding || use.input_index != 0) continue;
    const std::int64_t v = graph.tensor(op.inputs[1]).shape.at(0);
    rows = rows == 0 ? v : std::min(rows, v);
  }
  return rows;
}

Result<std::pair<std::string, std::vector<std::int32_t>>> input_codes(const ir::Graph& graph,
                                                                      const std::string& input,
                                                                      const TensorData& x) {
  if (graph.tensor(input).dtype == ir::DType::i32) {  // token ids: stored as they are
    const auto* ids = x.data<std::int32_t>();
    return std::pair{input, std::vector<std::int32_t>(ids, ids + x.size())};
  }
  const std::string qname = input + ".q";
  if (!graph.has_tensor(qname) || !graph.tensor(qname).quant)
    return fail("network input '" + input + "' has no quantized form");
  const ir::Tensor& q = graph.tensor(qname);
  const float* values = x.data<float>();
  std::vector<std::int32_t> codes(static_cast<std::size_t>(x.size()));
  for (std::int64_t i = 0; i < x.size(); ++i)
    codes[static_cast<std::size_t>(i)] =
        intops::quantize_value(values[i], q.quant->scales[0], quant::dtype_bits(q.dtype));
  return std::pair{qname, std::move(codes)};
}

TensorData default_graph_input(const ir::Graph& graph, const std::string& input,
                               std::uint64_t seed) {
  const ir::Tensor& tensor = graph.tensor(input);
  if (tensor.dtype != ir::DType::i32) return default_input(tensor.shape, seed);
  // Token ids: uniform over the rows of the smallest table that reads them (1 when none does).
  const std::int64_t rows = std::max<std::int64_t>(1, token_id_range(graph, input));
  TensorData value(ir::DType::i32, tensor.shape);
  std::int32_t* ids = value.data<std::int32_t>();
  for (std::int64_t i = 0; i < value.size(); ++i) {
    const auto pick = static_cast<std::int64_t>(
        seeded_uniform(seed, static_cast<std::uint64_t>(i)) * static_cast<double>(rows));
    ids[i] = static_cast<std::int32_t>(std::min(pick, rows - 1));
  }
  return value;
}

}  // namespace tessel::cpu
