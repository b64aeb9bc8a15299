// Op kernels registered by kind: one table, every op kind the executor runs.
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

struct ChannelsLastArgs;  // ops/channels_last.hpp (internal to the executor)

/// A channels-last kernel: runs its op on the executor's values in the layouts it chooses
/// (4-D values NHWC where that pays), with per-op state kept across runs. Returns true when it
/// ran the op, false when this form of the op is the row-major kernel's (a broadcasting Add),
/// or fails with a message that starts with the op's "%name (Kind)".
using ChannelsLastKernel = Result<bool> (*)(ChannelsLastArgs& args);

/// One registration: a kind and its kernels (at least one of the two). A kind with both runs
/// the channels-last kernel first and the row-major one when that declines.
struct KernelEntry {
  ir::OpKind kind;
  OpKernel kernel = nullptr;
  ChannelsLastKernel channels_last = nullptr;
};

/// The kernels registered for `kind` (both null for a kind the executor cannot run).
const KernelEntry& find_kernels(ir::OpKind kind);

// One table per family, each in its own file under ops/ (the registry concatenates them).
std::vector<KernelEntry> elementwise_kernels();    // Add (broadcast), Sub, Mul, Div, Pow, Where
std::vector<KernelEntry> unary_kernels();          // Sigmoid .. Neg
std::vector<KernelEntry> matmul_kernels();         // MatMul
std::vector<KernelEntry> normalization_kernels();  // LayerNorm, RMSNorm, masked Softmax
std::vector<KernelEntry> reduction_kernels();      // ReduceMean, ReduceSum, ReduceMax
std::vector<KernelEntry> movement_kernels();       // Transpose .. Resize, Embedding
std::vector<KernelEntry> layout_kernels();  // Concat, Split, Pad, Flatten, Reshape, BN, Scale
// The channels-last families are declared in ops/channels_last.hpp.

}  // namespace tessel::cpu
