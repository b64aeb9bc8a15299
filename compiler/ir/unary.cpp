// The real functions of the unary op kinds.
#include "compiler/ir/unary.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace tessel::ir {

bool is_unary_function(OpKind kind) {
  switch (kind) {
    case OpKind::Sigmoid:
    case OpKind::HardSigmoid:
    case OpKind::HardSwish:
    case OpKind::Tanh:
    case OpKind::Erf:
    case OpKind::Gelu:
    case OpKind::Silu:
    case OpKind::Sqrt:
    case OpKind::Exp:
    case OpKind::Reciprocal:
    case OpKind::Neg:
      return true;
    default:
      return false;
  }
}

double unary_function(const Op& op, double x) {
  const auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  switch (op.kind) {
    case OpKind::Sigmoid:
      return sigmoid(x);
    case OpKind::HardSigmoid:
      return std::clamp(op.get_float("alpha") * x + op.get_float("beta"), 0.0, 1.0);
    case OpKind::HardSwish:
      return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0);
    case OpKind::Tanh:
      return std::tanh(x);
    case OpKind::Erf:
      return std::erf(x);
    case OpKind::Gelu:
      if (op.get_string("approximate") == "tanh") {
        const double c = std::sqrt(2.0 / std::numbers::pi);
        return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
      }
      return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
    case OpKind::Silu:
      return x * sigmoid(x);
    case OpKind::Sqrt:
      return std::sqrt(x);
    case OpKind::Exp:
      return std::exp(x);
    case OpKind::Reciprocal:
      return 1.0 / x;
    case OpKind::Neg:
      return -x;
    default:
      throw std::logic_error("unary_function: " + std::string(to_string(op.kind)) +
                             " is not a unary function");
  }
}

}  // namespace tessel::ir
