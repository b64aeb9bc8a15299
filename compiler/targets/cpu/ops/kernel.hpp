// Op kernels registered by kind: the executor's ops beyond its built-in fast paths.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "compiler/targets/cpu/tensor_data.hpp"
#include "support/result.hpp"

namespace tessel::cpu {

/// What a kernel reads: its op, the graph (for the tensors' dtypes, shapes and quantization
/// parameters) and every input's value in row-major (NCHW) order, one per op input.
struct KernelArgs {
  const ir::Graph& graph;
  const ir::Op& op;
  std::vector<const TensorData*> inputs;

  const TensorData& input(std::size_t slot) const { return *inputs.at(slot); }
  const ir::Tensor& input_tensor(std::size_t slot) const {
    return graph.tensor(op.inputs.at(slot));
  }
  const ir::Tensor& output_tensor(std::size_t slot = 0) const {
    return graph.tensor(op.outputs.at(slot));
  }
  /// A zeroed value of output `slot`'s dtype and shape.
  TensorData allocate(std::size_t slot = 0) const {
    const ir::Tensor& t = output_tensor(slot);
    return TensorData(t.dtype, t.shape);
  }
  /// "%name (Kind)", the start of every kernel failure message.
  std::string where() const;
};

/// Computes every output of its op (row-major), or fails with a message that starts with
/// args.where() and says why (an unsupported dtype, an accumulator leaving int32, ...).
using OpKernel = Result<std::vector<TensorData>> (*)(const KernelArgs& args);

/// The kernel registered for `kind`, or nullptr (the executor's built-in ops have none).
OpKernel find_op_kernel(ir::OpKind kind);

/// One registration: a kind and its kernel.
struct KernelEntry {
  ir::OpKind kind;
  OpKernel kernel;
};

// One table per family, each in its own file under ops/ (the registry concatenates them).
std::vector<KernelEntry> elementwise_kernels();    // Add (broadcast), Sub, Mul, Div, Pow, Where
std::vector<KernelEntry> unary_kernels();          // Sigmoid .. Neg
std::vector<KernelEntry> matmul_kernels();         // MatMul
std::vector<KernelEntry> normalization_kernels();  // LayerNorm, RMSNorm, masked Softmax
std::vector<KernelEntry> reduction_kernels();      // ReduceMean, ReduceSum, ReduceMax
std::vector<KernelEntry> movement_kernels();  // Transpose, Slice, Gather, Expand, Trilu, Resize
std::vector<KernelEntry> layout_kernels();    // Concat, Split, Pad, Flatten, Reshape, BN, Scale

}  // namespace tessel::cpu
