// ONNX import: reads an .onnx model (opsets 11-20) into the graph IR, with located errors.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "compiler/ir/graph.hpp"
#include "support/result.hpp"

namespace tessel::frontend {

/// Import limits (docs/onnx-import.md "Limits"): a model past one is refused with a located
/// error before anything is allocated for it, so that a hostile file cannot make a later stage
/// wrap its arithmetic or exhaust memory (issue 41).
/// The largest model file: protobuf's message limit (2 GiB - 1).
inline constexpr std::uint64_t kMaxModelBytes = (std::uint64_t{1} << 31) - 1;
/// Elements of any one tensor (graph input, op result, Reshape/Expand/Resize target): 2^30, or
/// 4 GiB of float32, the limit of .npy inputs and DRAM images (support/files.hpp).
inline constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 30;
/// Each kernel, stride, dilation and pad of a window, and each Pad amount: 2^30, so that the
/// IR's output-size arithmetic stays far from int64 overflow.
inline constexpr std::int64_t kMaxWindowValue = std::int64_t{1} << 30;
/// Nodes in the graph, and ops in the imported IR graph (LSTM/GRU unroll into many).
inline constexpr std::int64_t kMaxNodes = 2'000'000;
inline constexpr std::int64_t kMaxImportedOps = 2'000'000;
/// Time steps an LSTM or GRU is unrolled over, and its hidden size.
inline constexpr std::int64_t kMaxRecurrentSteps = 16'384;
inline constexpr std::int64_t kMaxHiddenSize = 65'536;

/// How a model is imported.
struct OnnxImportOptions {
  /// Shapes of graph inputs by name (`--input-shape input:1x3x224x224`). Fixes dynamic
  /// dimensions; a fixed dimension of the model must agree with the override.
  std::map<std::string, ir::Shape, std::less<>> input_shapes;
  /// Fold `Pad(constant 0, spatial only) -> AveragePool(ceil_mode 0)` into one AveragePool with
  /// those pads and count_include_pad=1 (exactly the same values). PyTorch exports
  /// `avg_pool2d(padding=p)` this way (Inception-v3); the zoo builders use the folded form.
  bool fold_pad_into_average_pool = true;
};

/// Reads `path` and imports it (see import_onnx_bytes). The graph is named after the file's
/// stem ("resnet18" for ".../resnet18.onnx").
/// Throws tessel::InputError `PATH: error: <where>: <what>` on any problem; never crashes on a
/// malformed file.
ir::Graph import_onnx(const std::string& path, const OnnxImportOptions& options = {});

/// Imports a serialized onnx.ModelProto. `source_name` is the file name used in diagnostics.
///
/// Result: a validated graph with inferred shapes. Graph inputs are the model inputs that have
/// no initializer; initializers and Constant nodes become IR constants (each distinct ONNX name
/// read by an op becomes one constant, so an Identity-renamed initializer is its own constant,
/// as it is its own parameter in the exporting framework); Identity, Dropout and float Casts
/// disappear; nodes whose inputs are all constant (and Shape of any tensor) are evaluated at
/// import; MatMul by a constant matrix becomes Gemm (rows flattened for N-D operands), and with
/// the Add of a constant [N] bias one Gemm; other MatMuls stay MatMul; LSTM and GRU are unrolled;
/// shapes, axes, indices, pads and bounds given as constant inputs become attributes. Nodes
/// whose results reach no graph output are skipped. docs/onnx-import.md lists every op.
///
/// Diagnostics locate the problem by node (`node 12 'Conv_12' (LSTM): unsupported op type
/// 'LSTM'`), graph input, initializer or byte offset (for a truncated or corrupt file).
ir::Graph import_onnx_bytes(std::string_view bytes, const std::string& source_name,
                            const OnnxImportOptions& options = {});

/// Parses one `--input-shape` value, `NAME:D0xD1x...` (e.g. `input:1x3x224x224`; the name may
/// itself contain ':', the shape is after the last one). Dimensions must be positive.
Result<std::pair<std::string, ir::Shape>> parse_input_shape(std::string_view spec);

}  // namespace tessel::frontend
