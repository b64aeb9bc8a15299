// Network statistics: MACs, parameters, bytes moved and compute-to-memory ratio per layer/type.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"

namespace tessel::stats {

/// How layers are counted.
struct StatsOptions {
  /// Bytes per element = bits / 8, for activations and weights alike (8, 16 or 32).
  int bits = 8;
  /// Count each BatchNormalization as Caffe's two layers: BatchNorm (normalise with mean/var)
  /// and Scale (gamma/beta), each reading its input and writing its output. This is how the
  /// Deep Fusion paper's Caffe ResNet-18 is layered (its Table 1).
  bool caffe_batchnorm = true;
};

/// One layer (an op; a BatchNormalization is two layers when caffe_batchnorm is set).
///
/// Counting convention (one for every model, never tuned to a paper):
/// - `ops`: the compute amount. Conv and Gemm: MACs. BatchNorm, Scale, ReLU/Clip, Eltwise (Add),
///   Softmax, Quantize/Dequantize/Requantize: one per output element. Max/average pooling: one
///   per window element read (output elements x kernel area); global pooling: one per input
///   element. Concat, Split, Pad, Flatten, Reshape: zero.
/// - bytes: every tensor the layer reads or writes, once, at bits/8 bytes per element:
///   `input_bytes` (non-constant inputs), `weight_bytes` (constant inputs: weights, biases,
///   BN statistics), `output_bytes`. Flatten and Reshape are views: zero bytes.
struct LayerStats {
  std::string name;
  std::string op_kind;     ///< "Conv", ... ("Scale" for the second half of a split BN)
  std::string layer_type;  ///< Caffe category: Convolution, InnerProduct, BatchNorm, Scale,
                           ///< ReLU, Pooling, Eltwise, SoftMax, Concat, ... (Table 1's rows)
  std::int64_t macs = 0;
  std::int64_t ops = 0;
  std::int64_t params = 0;
  std::int64_t input_bytes = 0;
  std::int64_t weight_bytes = 0;
  std::int64_t output_bytes = 0;

  std::int64_t memory_bytes() const { return input_bytes + weight_bytes + output_bytes; }
  /// ops per byte moved (0 when nothing moves).
  double compute_to_memory() const;
};

/// Totals of one Caffe layer type, with its share of the network's ops and bytes (0..1).
struct TypeStats {
  std::string layer_type;
  int layers = 0;
  std::int64_t macs = 0, ops = 0, params = 0, memory_bytes = 0;
  double compute_share = 0, memory_share = 0;
};

struct NetworkStats {
  std::string model;
  int bits = 8;
  std::vector<LayerStats> layers;  ///< topological order
  std::vector<TypeStats> by_type;  ///< descending ops, then name
  /// total_params counts a constant that several layers read (a tied weight) once.
  std::int64_t total_macs = 0, total_ops = 0, total_params = 0, total_memory_bytes = 0;
  /// What crosses the bus at least once whatever the schedule, at `bits`: every constant once,
  /// every graph input once (a decode step's KV cache is graph inputs) and every graph output
  /// once (a decode step's new key/value rows are graph outputs).
  std::int64_t constant_bytes = 0, graph_input_bytes = 0, graph_output_bytes = 0;
};

/// Statistics of a graph whose shapes are inferred (zoo models and imported ones are).
/// Fails when a shape is missing or bits is not 8, 16 or 32.
Result<NetworkStats> compute_stats(const ir::Graph& graph, const StatsOptions& options = {});

/// One row of the Deep Fusion paper's Table 1 (ResNet-18 in Caffe), in percent.
struct PaperShare {
  std::string layer_type;
  double compute_percent, memory_percent;
};
/// Table 1 of Zhuang et al., "Deep Fusion", NPC 2019: Convolution 99.55/45.59, BatchNorm
/// 0.15/15.27, Scale 0.15/15.24, ReLU 0.06/13.10, Pooling 0.05/2.92, Eltwise 0.02/6.41,
/// InnerProduct 0.03/1.46, SoftMax 0.00/0.01.
const std::vector<PaperShare>& deep_fusion_table1();

/// Per-layer table: name, type, output shape... as aligned text.
std::string format_layers(const NetworkStats& stats);
/// Per-type table; with `paper`, Table 1's percentages in two more columns (types the paper
/// lists but the graph lacks show 0).
std::string format_by_type(const NetworkStats& stats, bool paper);
/// {"model","bits","totals":{...},"layers":[...],"by_type":[...], "paper_table1"?: [...]}.
nlohmann::json to_json(const NetworkStats& stats, bool paper);

}  // namespace tessel::stats
