// Reductions over a set of axes: ReduceMean, ReduceSum, ReduceMax. Integers: max on codes;
// sum and mean as an int64 sum and one requantize (docs/quantization.md, "Reductions").
#include <algorithm>
#include <limits>

#include "compiler/quant/workload_params.hpp"
#include "compiler/targets/cpu/ops/common.hpp"

namespace tessel::cpu {
namespace {

using ir::OpKind;

/// Calls f(out_index, in_index) for every input element, with the output element it reduces
/// into.
template <class F>
void for_each_reduced(const ir::Shape& xs, const std::vector<std::int64_t>& axes, F&& f) {
  // Output strides over the input's axes (0 on reduced axes).
  std::vector<std::int64_t> stride(xs.size(), 0);
  std::int64_t s = 1;
  for (std::size_t d = xs.size(); d-- > 0;) {
    if (std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(d)) != axes.end()) continue;
    stride[d] = s;
    s *= xs[d];
  }
  std::vector<std::int64_t> index(xs.size(), 0);
  std::int64_t out = 0;
  const std::int64_t total = ir::element_count(xs);
  for (std::int64_t i = 0; i < total; ++i) {
    f(out, i);
    for (std::size_t d = xs.size(); d-- > 0;) {
      ++index[d];
      out += stride[d];
      if (index[d] < xs[d]) break;
      out -= stride[d] * xs[d];
      index[d] = 0;
    }
  }
}

/// ReduceSum / ReduceMean on integers: int64 sums (the quantizer refused any that can leave
/// int32), then one requantize with quant::reduce_params.
Result<std::vector<TensorData>> int_sum(const KernelArgs& args,
                                        const std::vector<std::int64_t>& axes, TensorData y) {
  auto p = quant::reduce_params(args.op, args.input_tensor(0), args.output_tensor());
  if (!p) return p.failure();
  const TensorData& x = args.input(0);
  const auto xv = x.to_i32();
  std::vector<std::int64_t> sums(static_cast<std::size_t>(y.size()), 0);
  for_each_reduced(x.shape(), axes, [&](std::int64_t o, std::int64_t i) {
    sums[static_cast<std::size_t>(o)] += xv[static_cast<std::size_t>(i)];
  });
  std::vector<std::int32_t> out(sums.size());
  for (std::size_t o = 0; o < sums.size(); ++o)
    out[o] = intops::requantize(static_cast<std::int32_t>(sums[o]), p.value());
  ops::store_ints(out, y);
  return ops::one(std::move(y));
}

Result<std::vector<TensorData>> reduce(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  auto axes = ir::reduce_axes(args.op, x.shape().size());
  if (!axes) return axes.failure();
  TensorData y = args.allocate();
  if (args.op.kind == OpKind::ReduceMax) {
    Status status;
    ops::visit_elements(y, [&](auto* out) {
      using T = std::remove_pointer_t<decltype(out)>;
      std::fill(out, out + y.size(), std::numeric_limits<T>::lowest());
      const T* xv = x.data<T>();
      for_each_reduced(x.shape(), axes.value(),
                       [&](std::int64_t o, std::int64_t i) { out[o] = std::max(out[o], xv[i]); });
    });
    return ops::one(std::move(y));
  }
  if (ir::is_integer(x.dtype())) return int_sum(args, axes.value(), std::move(y));
  if (x.dtype() != ir::DType::f32)
    return fail(args.where() + ": " + std::string(ir::to_string(x.dtype())) + " input");
  std::vector<double> sums(static_cast<std::size_t>(y.size()), 0.0);
  const float* xv = x.data<float>();
  for_each_reduced(x.shape(), axes.value(), [&](std::int64_t o, std::int64_t i) {
    sums[static_cast<std::size_t>(o)] += xv[i];
  });
  const double count = static_cast<double>(x.size()) / static_cast<double>(y.size());
  float* out = y.data<float>();
  for (std::int64_t o = 0; o < y.size(); ++o)
    out[o] = static_cast<float>(args.op.kind == OpKind::ReduceMean
                                    ? sums[static_cast<std::size_t>(o)] / count
                                    : sums[static_cast<std::size_t>(o)]);
  return ops::one(std::move(y));
}

}  // namespace

std::vector<KernelEntry> reduction_kernels() {
  return {{OpKind::ReduceMean, reduce}, {OpKind::ReduceSum, reduce}, {OpKind::ReduceMax, reduce}};
}

}  // namespace tessel::cpu
