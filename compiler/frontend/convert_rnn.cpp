// Converters for the recurrent ops LSTM and GRU, unrolled over the model's fixed sequence length
// into Gemm, Add, Sigmoid, Tanh, Mul, Slice, Concat and Reshape.
#include "compiler/frontend/importer.hpp"

namespace tessel::frontend::detail {

void Importer::convert_lstm() {
  fail_node("LSTM is not supported yet (the unrolled form is planned)");
}

void Importer::convert_gru() {
  fail_node("GRU is not supported yet (the unrolled form is planned)");
}

}  // namespace tessel::frontend::detail
