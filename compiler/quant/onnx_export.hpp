// QDQ ONNX export of a quantized graph: the form onnxruntime runs as the outside int8 check.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "support/result.hpp"

namespace tessel::quant {

/// What the exported model exposes besides the graph's own inputs and outputs.
struct OnnxExportOptions {
  /// Every integer activation (i8/i16, not the i32 accumulators) also becomes a graph output
  /// under its own name, so a runtime's values can be compared with ours tensor by tensor.
  bool expose_intermediates = false;
  /// Layer isolation: every op reads each integer activation it consumes from a graph input
  /// named `<tensor>::golden` instead of from the op that produced it, so each layer runs on
  /// values the caller feeds (ours) and errors cannot accumulate across layers. Implies
  /// expose_intermediates.
  bool isolate_layers = false;
};

/// An exported model.
struct OnnxExport {
  std::string bytes;  ///< serialized onnx.ModelProto
  int opset = 13;     ///< 13 for int8-only graphs, 21 when any tensor is int16
  /// Integer activations exposed as graph outputs (expose_intermediates), topological order.
  std::vector<std::string> intermediates;
  /// With isolate_layers: the tensors read from `<tensor>::golden` graph inputs.
  std::vector<std::string> golden_inputs;
};

/// Writes `quantized` (the output of `realize`, docs/quantization.md) as a QDQ ONNX model:
/// - every integer activation `t` is produced by `QuantizeLinear(.., scale, zero_point)` under
///   its own name and read through `DequantizeLinear` (per-tensor scale, zero point 0);
/// - Conv/Gemm weights are int8 (int16) initializers under `DequantizeLinear` with per-output-
///   channel scales (`axis`), biases int32 initializers under `DequantizeLinear` with scale
///   s_in * s_w[c]; the float Conv/Gemm then writes the accumulator (as float) and the
///   `Requantize` becomes `QuantizeLinear` to the output's scale;
/// - every other integer op (Relu, pools, Add, Concat, Split, Pad, Flatten, Reshape, and the
///   modern-workload kinds: MatMul, Sub, Mul, Where, the unary functions written from their
///   definitions instead of our tables, LayerNorm, RMSNorm, masked Softmax, reductions,
///   Transpose, Slice, Gather, Expand, Trilu, Resize) is `DequantizeLinear` -> the float op(s)
///   -> `QuantizeLinear` at the output's scale; float ops (Softmax) are copied as they are.
///   Opset 13, 17 with a modern kind, 21 with an int16 tensor.
/// Semantics that QDQ cannot express (float requantization rounding half to even) are listed in
/// docs/quantization.md, "QDQ ONNX export". Fails naming the op for an op kind it cannot write
/// (BatchNormalization, Scale: a realized graph has none).
Result<OnnxExport> export_qdq_onnx(const ir::Graph& quantized, const OnnxExportOptions& options);

/// The conventional graph-input name of a golden feed under isolate_layers.
std::string golden_input_name(const std::string& tensor);

}  // namespace tessel::quant
