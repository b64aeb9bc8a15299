// Binary elementwise kernels with NumPy broadcasting: Add, Sub, Mul, Div, Pow, and Where.
// Integers (docs/quantization.md): Add/Sub as the residual add (Sub negates the second product),
// Mul with one requantize, Pow by its table; Div exists on integers only as the quantizer's Mul.
#include <cmath>
#include <variant>

#include "compiler/quant/realize.hpp"
#include "compiler/quant/workload_params.hpp"
#include "compiler/targets/cpu/ops/common.hpp"
#include "compiler/targets/cpu/workload_kernels.hpp"

namespace tessel::cpu {
namespace {

using ir::DType;
using ir::OpKind;

/// An integer binary op with broadcasting: y[i] = f(a code, b code) (the int_ops rule of the op,
/// parameters from the tensors' scales).
template <class F>
Result<std::vector<TensorData>> int_binary(const KernelArgs& args, F&& f) {
  const TensorData &a = args.input(0), &b = args.input(1);
  TensorData y = args.allocate();
  if (!ir::is_integer(y.dtype()) || y.dtype() == DType::i32)
    return fail(args.where() + ": integer operands need an i8/i16 output");
  const auto av = a.to_i32(), bv = b.to_i32();
  std::vector<std::int32_t> out(static_cast<std::size_t>(y.size()));
  ops::for_each_broadcast<2>(y.shape(), {a.shape(), b.shape()},
                             [&](std::int64_t i, const std::array<std::int64_t, 2>& at) {
                               out[static_cast<std::size_t>(i)] =
                                   f(av[static_cast<std::size_t>(at[0])],
                                     bv[static_cast<std::size_t>(at[1])]);
                             });
  ops::store_ints(out, y);
  return ops::one(std::move(y));
}

/// The vectorised form of int_binary when a, b and y share one type (i8 or i16): the broadcast
/// as runs (ops::broadcast_runs), each through workload_kernels.hpp, runs split over the OpenMP
/// threads. `q` is an AddRequant (Add, or Sub with M_b negated) or a Requant (Mul). Returns
/// nullopt when the types differ (int_binary then runs).
std::optional<TensorData> fast_int_binary(
    const KernelArgs& args, const std::variant<intops::AddRequant, intops::Requant>& q) {
  const TensorData &a = args.input(0), &b = args.input(1);
  const DType t = a.dtype();
  if (b.dtype() != t || args.output_tensor().dtype != t || (t != DType::i8 && t != DType::i16))
    return std::nullopt;
  TensorData y = args.allocate();
  const auto runs = ops::broadcast_runs<2>(y.shape(), {a.shape(), b.shape()});
  const auto n = static_cast<std::int64_t>(runs.size());
  const auto go = [&](auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    const T *av = a.data<T>(), *bv = b.data<T>();
#pragma omp parallel for schedule(static) if (y.size() >= (1 << 16) && n > 1)
    for (std::int64_t r = 0; r < n; ++r) {
      const auto& run = runs[static_cast<std::size_t>(r)];
      const T *pa = av + run.offset[0], *pb = bv + run.offset[1];
      if (const auto* add = std::get_if<intops::AddRequant>(&q))
        fast::add_requantize(pa, run.step[0], pb, run.step[1], out + run.begin, run.length, *add);
      else
        fast::mul_requantize(pa, run.step[0], pb, run.step[1], out + run.begin, run.length,
                             std::get<intops::Requant>(q));
    }
  };
  if (t == DType::i8)
    go(y.data<std::int8_t>());
  else
    go(y.data<std::int16_t>());
  return y;
}

bool integer_operands(const KernelArgs& args) {
  return ir::is_integer(args.input(0).dtype()) && ir::is_integer(args.input(1).dtype());
}

template <class F>
Result<std::vector<TensorData>> float_binary(const KernelArgs& args, F&& f) {
  const TensorData &a = args.input(0), &b = args.input(1);
  if (a.dtype() != DType::f32 || b.dtype() != DType::f32)
    return fail(args.where() + ": operands " + std::string(ir::to_string(a.dtype())) + " and " +
                std::string(ir::to_string(b.dtype())) +
                " (both f32, or both integer for Add/Sub/Mul)");
  TensorData y = args.allocate();
  const float *av = a.data<float>(), *bv = b.data<float>();
  float* out = y.data<float>();
  if (a.shape() == b.shape()) {
    for (std::int64_t i = 0; i < y.size(); ++i) out[i] = f(av[i], bv[i]);
  } else {
    ops::for_each_broadcast<2>(y.shape(), {a.shape(), b.shape()},
                               [&](std::int64_t i, const std::array<std::int64_t, 2>& at) {
                                 out[i] = f(av[at[0]], bv[at[1]]);
                               });
  }
  return ops::one(std::move(y));
}

Result<std::vector<TensorData>> add(const KernelArgs& args) {
  if (integer_operands(args)) {
    const auto p =
        quant::add_params(args.input_tensor(0), args.input_tensor(1), args.output_tensor());
    if (auto y = fast_int_binary(args, p)) return ops::one(std::move(*y));
    return int_binary(
        args, [&](std::int32_t a, std::int32_t b) { return intops::add_requantize(a, b, p); });
  }
  return float_binary(args, [](float x, float y) { return x + y; });
}
Result<std::vector<TensorData>> sub(const KernelArgs& args) {
  if (integer_operands(args)) {
    const auto p =
        quant::add_params(args.input_tensor(0), args.input_tensor(1), args.output_tensor());
    intops::AddRequant negated = p;  // a * M_a + b * (-M_b): sub_requantize's int64 sum
    negated.multiplier_b = -p.multiplier_b;
    if (auto y = fast_int_binary(args, negated)) return ops::one(std::move(*y));
    return int_binary(
        args, [&](std::int32_t a, std::int32_t b) { return intops::sub_requantize(a, b, p); });
  }
  return float_binary(args, [](float x, float y) { return x - y; });
}
Result<std::vector<TensorData>> mul(const KernelArgs& args) {
  if (integer_operands(args)) {
    const auto p =
        quant::mul_params(args.input_tensor(0), args.input_tensor(1), args.output_tensor());
    if (auto y = fast_int_binary(args, p)) return ops::one(std::move(*y));
    return int_binary(
        args, [&](std::int32_t a, std::int32_t b) { return intops::mul_requantize(a, b, p); });
  }
  return float_binary(args, [](float x, float y) { return x * y; });
}
Result<std::vector<TensorData>> div(const KernelArgs& args) {
  return float_binary(args, [](float x, float y) { return x / y; });
}
Result<std::vector<TensorData>> pow(const KernelArgs& args) {
  // On integers: (x, exponent, table), the table of x -> x ^ exponent.
  if (args.inputs.size() == 3 && ir::is_integer(args.input(0).dtype()))
    return ops::table_kernel(args, 2);
  // Exponent 2 and 0.5 are what normalisation decompositions write: exact forms for them.
  return float_binary(args, [](float x, float y) {
    if (y == 2.0f) return x * x;
    if (y == 0.5f) return std::sqrt(x);
    return static_cast<float>(std::pow(double{x}, double{y}));
  });
}

/// Where(cond, a, b): the condition is read as "!= 0" whatever its dtype; a and b share the
/// output's dtype (on integers they share a scale, so selection moves values only).
Result<std::vector<TensorData>> where_kernel(const KernelArgs& args) {
  const TensorData &c = args.input(0), &a = args.input(1), &b = args.input(2);
  if (a.dtype() != b.dtype()) return fail(args.where() + ": the branches differ in dtype");
  TensorData y = args.allocate();
  const auto cond = c.to_f32();
  Status status;
  ops::visit_elements(y, [&](auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    const T *av = a.data<T>(), *bv = b.data<T>();
    ops::for_each_broadcast<3>(y.shape(), {c.shape(), a.shape(), b.shape()},
                               [&](std::int64_t i, const std::array<std::int64_t, 3>& at) {
                                 out[i] = cond[static_cast<std::size_t>(at[0])] != 0.0f ? av[at[1]]
                                                                                        : bv[at[2]];
                               });
  });
  return ops::one(std::move(y));
}

}  // namespace

std::vector<KernelEntry> elementwise_kernels() {
  return {{OpKind::Sub, sub},
          {OpKind::Mul, mul},
          {OpKind::Div, div},
          {OpKind::Pow, pow},
          {OpKind::Where, where_kernel},
          {OpKind::Add, add}};
}

}  // namespace tessel::cpu
