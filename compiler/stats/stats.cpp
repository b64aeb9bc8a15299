// Per-layer and per-type counting of compute and memory traffic (convention in stats.hpp).
#include "compiler/stats/stats.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "compiler/ir/analysis.hpp"

namespace tessel::stats {
namespace {

std::string caffe_type(ir::OpKind kind) {
  switch (kind) {
    case ir::OpKind::Conv:
      return "Convolution";
    case ir::OpKind::Gemm:
      return "InnerProduct";
    case ir::OpKind::MaxPool:
    case ir::OpKind::AveragePool:
    case ir::OpKind::GlobalAveragePool:
      return "Pooling";
    case ir::OpKind::Relu:
    case ir::OpKind::Clip:
      return "ReLU";
    case ir::OpKind::Add:
      return "Eltwise";
    case ir::OpKind::BatchNormalization:
      return "BatchNorm";
    case ir::OpKind::Scale:
      return "Scale";
    case ir::OpKind::Softmax:
      return "SoftMax";
    case ir::OpKind::Flatten:
      return "Flatten";
    default:
      return std::string(ir::to_string(kind));
  }
}

std::int64_t elements(const ir::Graph& graph, const std::string& tensor) {
  return ir::element_count(graph.tensor(tensor).shape);
}

}  // namespace

double LayerStats::compute_to_memory() const {
  const std::int64_t bytes = memory_bytes();
  return bytes ? static_cast<double>(ops) / static_cast<double>(bytes) : 0.0;
}

Result<NetworkStats> compute_stats(const ir::Graph& graph, const StatsOptions& options) {
  if (options.bits != 8 && options.bits != 16 && options.bits != 32) {
    return fail("bits must be 8, 16 or 32, got " + std::to_string(options.bits));
  }
  auto order = ir::topological_order(graph);
  if (!order) return order.failure();
  const std::int64_t bytes_per_element = options.bits / 8;
  NetworkStats stats;
  stats.model = graph.name();
  stats.bits = options.bits;
  // A constant read by more than one op (a tied weight: GPT-2's token table, gathered by the
  // Embedding and multiplied by the LM head) is each reader's parameter, and the network's once.
  std::set<std::string> counted;
  std::int64_t shared_params = 0;

  for (ir::OpId id : order.value()) {
    const ir::Op& op = graph.op(id);
    if (op.kind == ir::OpKind::Input) continue;
    for (const std::string& name : op.inputs) {
      if (!graph.tensor(name).has_shape())
        return fail("%" + op.name + ": input %" + name + " has no shape");
    }
    for (const std::string& name : op.outputs) {
      if (!graph.tensor(name).has_shape())
        return fail("%" + op.name + ": result %" + name + " has no shape");
    }
    LayerStats layer;
    layer.name = op.name;
    layer.op_kind = std::string(ir::to_string(op.kind));
    layer.layer_type = caffe_type(op.kind);
    std::int64_t output_elements = 0;
    for (const std::string& name : op.outputs) output_elements += elements(graph, name);
    for (const std::string& name : op.inputs) {
      const std::int64_t count = elements(graph, name);
      if (graph.tensor(name).constant) {
        layer.params += count;
        if (!counted.insert(name).second) shared_params += count;
        layer.weight_bytes += count * bytes_per_element;
      } else {
        layer.input_bytes += count * bytes_per_element;
      }
    }
    layer.output_bytes = output_elements * bytes_per_element;

    switch (op.kind) {
      case ir::OpKind::Conv: {
        const ir::Shape& w = graph.tensor(op.inputs[1]).shape;
        layer.macs = output_elements * w[1] * w[2] * w[3];
        layer.ops = layer.macs;
        break;
      }
      case ir::OpKind::Gemm: {
        const ir::Shape& a = graph.tensor(op.inputs[0]).shape;
        layer.macs = output_elements * a[1];
        layer.ops = layer.macs;
        break;
      }
      case ir::OpKind::MatMul: {
        // [..., M, K] x [..., K, N]: K MACs per output element.
        layer.macs = output_elements * graph.tensor(op.inputs[0]).shape.back();
        layer.ops = layer.macs;
        break;
      }
      case ir::OpKind::MaxPool:
      case ir::OpKind::AveragePool: {
        const ir::WindowGeometry geometry = ir::window_geometry(op);
        layer.ops = output_elements * geometry.kernel_h * geometry.kernel_w;
        break;
      }
      case ir::OpKind::GlobalAveragePool:
        layer.ops = elements(graph, op.inputs[0]);
        break;
      case ir::OpKind::Concat:
      case ir::OpKind::Split:
      case ir::OpKind::Pad:
        layer.ops = 0;
        break;
      case ir::OpKind::Transpose:
      case ir::OpKind::Slice:
      case ir::OpKind::Gather:
      case ir::OpKind::Expand:
        layer.ops = 0;  // data movement
        break;
      case ir::OpKind::Embedding:  // one table row per id: the ids are 4-byte integers
        layer.ops = 0;
        layer.input_bytes = elements(graph, op.inputs[0]) * 4;
        break;
      case ir::OpKind::Flatten:
      case ir::OpKind::Reshape:
        layer.ops = 0;
        layer.input_bytes = layer.output_bytes = layer.weight_bytes = 0;  // views
        break;
      default:
        layer.ops = output_elements;
        break;
    }

    if (op.kind == ir::OpKind::BatchNormalization && options.caffe_batchnorm) {
      // Caffe: BatchNorm (mean, var) then Scale (gamma, beta), each a full pass over the data.
      const std::int64_t channel_bytes = 2 * elements(graph, op.inputs[1]) * bytes_per_element;
      LayerStats scale = layer;
      scale.name = op.name + ".scale";
      scale.op_kind = "Scale";
      scale.layer_type = "Scale";
      scale.params = 2 * elements(graph, op.inputs[1]);
      scale.weight_bytes = channel_bytes;
      scale.input_bytes = layer.output_bytes;
      layer.params = 0;  // mean/var are statistics, not parameters (as in PyTorch)
      layer.weight_bytes = channel_bytes;
      stats.layers.push_back(layer);
      stats.layers.push_back(scale);
      continue;
    }
    if (op.kind == ir::OpKind::BatchNormalization)
      layer.params -= 2 * elements(graph, op.inputs[3]);
    stats.layers.push_back(layer);
  }

  for (const auto& [name, tensor] : graph.tensors())
    if (tensor.constant && tensor.has_shape())
      stats.constant_bytes += ir::element_count(tensor.shape) * bytes_per_element;
  for (const ir::OpId id : graph.inputs()) {
    const std::string& name = graph.op(id).outputs[0];
    const bool ids = graph.tensor(name).dtype == ir::DType::i32;  // token ids: 4 bytes each
    stats.graph_input_bytes += elements(graph, name) * (ids ? 4 : bytes_per_element);
  }
  for (const std::string& name : graph.outputs())
    stats.graph_output_bytes += elements(graph, name) * bytes_per_element;

  std::map<std::string, TypeStats> types;
  for (const LayerStats& layer : stats.layers) {
    TypeStats& type = types[layer.layer_type];
    type.layer_type = layer.layer_type;
    type.layers += 1;
    type.macs += layer.macs;
    type.ops += layer.ops;
    type.params += layer.params;
    type.memory_bytes += layer.memory_bytes();
    stats.total_macs += layer.macs;
    stats.total_ops += layer.ops;
    stats.total_params += layer.params;
    stats.total_memory_bytes += layer.memory_bytes();
  }
  stats.total_params -= shared_params;
  for (auto& [name, type] : types) {
    type.compute_share =
        stats.total_ops ? static_cast<double>(type.ops) / static_cast<double>(stats.total_ops) : 0;
    type.memory_share = stats.total_memory_bytes ? static_cast<double>(type.memory_bytes) /
                                                       static_cast<double>(stats.total_memory_bytes)
                                                 : 0;
    stats.by_type.push_back(type);
  }
  std::sort(stats.by_type.begin(), stats.by_type.end(), [](const TypeStats& a, const TypeStats& b) {
    return a.ops != b.ops ? a.ops > b.ops : a.layer_type < b.layer_type;
  });
  return stats;
}

const std::vector<PaperShare>& deep_fusion_table1() {
  static const std::vector<PaperShare> table = {
      {"Convolution", 99.55, 45.59}, {"BatchNorm", 0.15, 15.27}, {"Scale", 0.15, 15.24},
      {"ReLU", 0.06, 13.10},         {"Pooling", 0.05, 2.92},    {"Eltwise", 0.02, 6.41},
      {"InnerProduct", 0.03, 1.46},  {"SoftMax", 0.00, 0.01},
  };
  return table;
}

namespace {

std::string printf_string(const char* format, auto... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, format, args...);
  return buffer;
}

}  // namespace

std::string format_layers(const NetworkStats& stats) {
  std::ostringstream out;
  out << printf_string("%-36s %-13s %14s %11s %12s %12s %12s %9s\n", "layer", "type", "MACs",
                       "params", "in bytes", "weight bytes", "out bytes", "ops/byte");
  for (const LayerStats& layer : stats.layers) {
    out << printf_string("%-36s %-13s %14lld %11lld %12lld %12lld %12lld %9.2f\n",
                         layer.name.c_str(), layer.layer_type.c_str(),
                         static_cast<long long>(layer.macs), static_cast<long long>(layer.params),
                         static_cast<long long>(layer.input_bytes),
                         static_cast<long long>(layer.weight_bytes),
                         static_cast<long long>(layer.output_bytes), layer.compute_to_memory());
  }
  out << printf_string("total: %lld MACs, %lld ops, %lld parameters, %lld bytes moved at %d-bit\n",
                       static_cast<long long>(stats.total_macs),
                       static_cast<long long>(stats.total_ops),
                       static_cast<long long>(stats.total_params),
                       static_cast<long long>(stats.total_memory_bytes), stats.bits);
  out << printf_string(
      "at least once: %lld bytes of constants, %lld of graph inputs, %lld of "
      "graph outputs\n",
      static_cast<long long>(stats.constant_bytes), static_cast<long long>(stats.graph_input_bytes),
      static_cast<long long>(stats.graph_output_bytes));
  return out.str();
}

std::string format_by_type(const NetworkStats& stats, bool paper) {
  std::ostringstream out;
  out << printf_string("%-13s %6s %14s %14s %9s %9s", "type", "layers", "ops", "bytes", "compute%",
                       "memory%");
  if (paper) out << printf_string(" %13s %12s", "paper comp%", "paper mem%");
  out << "\n";
  std::vector<TypeStats> rows = stats.by_type;
  if (paper) {
    for (const PaperShare& share : deep_fusion_table1()) {
      const bool present = std::any_of(rows.begin(), rows.end(), [&](const TypeStats& row) {
        return row.layer_type == share.layer_type;
      });
      if (!present) rows.push_back(TypeStats{share.layer_type, 0, 0, 0, 0, 0, 0, 0});
    }
  }
  for (const TypeStats& row : rows) {
    out << printf_string("%-13s %6d %14lld %14lld %8.2f%% %8.2f%%", row.layer_type.c_str(),
                         row.layers, static_cast<long long>(row.ops),
                         static_cast<long long>(row.memory_bytes), 100.0 * row.compute_share,
                         100.0 * row.memory_share);
    if (paper) {
      const auto& table = deep_fusion_table1();
      const auto it = std::find_if(table.begin(), table.end(), [&](const PaperShare& share) {
        return share.layer_type == row.layer_type;
      });
      if (it != table.end()) {
        out << printf_string(" %12.2f%% %11.2f%%", it->compute_percent, it->memory_percent);
      } else {
        out << printf_string(" %13s %12s", "-", "-");
      }
    }
    out << "\n";
  }
  return out.str();
}

nlohmann::json to_json(const NetworkStats& stats, bool paper) {
  nlohmann::ordered_json out;
  out["model"] = stats.model;
  out["bits"] = stats.bits;
  out["totals"] = {{"macs", stats.total_macs},
                   {"ops", stats.total_ops},
                   {"params", stats.total_params},
                   {"memory_bytes", stats.total_memory_bytes},
                   {"constant_bytes", stats.constant_bytes},
                   {"graph_input_bytes", stats.graph_input_bytes},
                   {"graph_output_bytes", stats.graph_output_bytes}};
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const LayerStats& layer : stats.layers) {
    layers.push_back({{"name", layer.name},
                      {"op", layer.op_kind},
                      {"type", layer.layer_type},
                      {"macs", layer.macs},
                      {"ops", layer.ops},
                      {"params", layer.params},
                      {"input_bytes", layer.input_bytes},
                      {"weight_bytes", layer.weight_bytes},
                      {"output_bytes", layer.output_bytes},
                      {"ops_per_byte", layer.compute_to_memory()}});
  }
  out["layers"] = std::move(layers);
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  for (const TypeStats& type : stats.by_type) {
    types.push_back({{"type", type.layer_type},
                     {"layers", type.layers},
                     {"macs", type.macs},
                     {"ops", type.ops},
                     {"params", type.params},
                     {"memory_bytes", type.memory_bytes},
                     {"compute_share", type.compute_share},
                     {"memory_share", type.memory_share}});
  }
  out["by_type"] = std::move(types);
  if (paper) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const PaperShare& share : deep_fusion_table1()) {
      rows.push_back({{"type", share.layer_type},
                      {"compute_percent", share.compute_percent},
                      {"memory_percent", share.memory_percent}});
    }
    out["paper_table1"] = std::move(rows);
  }
  return nlohmann::json::parse(out.dump());
}

}  // namespace tessel::stats
