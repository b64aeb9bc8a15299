// Slow: torchvision's ONNX exports of the six zoo models import equal to the built-in builders.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/frontend/onnx_import.hpp"
#include "compiler/ir/analysis.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/zoo/zoo.hpp"

namespace tessel::frontend {
namespace {

namespace fs = std::filesystem;

fs::path cache_dir() {
  if (const char* cache = std::getenv("TESSEL_CACHE")) return fs::path(cache) / "models";
  return fs::path(TESSEL_SOURCE_DIR) / ".cache" / "models";
}

/// Multiply-accumulates of Conv and Gemm ops (the matrix unit's work), counted independently of
/// compiler/stats: Conv N*Co*Ho*Wo*(Ci/group)*kh*kw, Gemm M*N*K.
std::int64_t count_macs(const ir::Graph& graph) {
  std::int64_t macs = 0;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
    const ir::Op& op = graph.op(id);
    const ir::Shape& out = graph.tensor(op.outputs[0]).shape;
    if (op.kind == ir::OpKind::Conv) {
      const ir::Shape& w = graph.tensor(op.inputs[1]).shape;
      macs += out[0] * out[1] * out[2] * out[3] * w[1] * w[2] * w[3];
    } else if (op.kind == ir::OpKind::Gemm) {
      const ir::Shape& a = graph.tensor(op.inputs[0]).shape;
      macs += out[0] * out[1] * a[1];
    }
  }
  return macs;
}

/// True for a Concat whose only reader is a Concat along the same axis (and not an output).
bool is_nested_concat(const ir::Graph& graph, ir::OpId id) {
  const ir::Op& op = graph.op(id);
  if (op.kind != ir::OpKind::Concat) return false;
  const auto& outputs = graph.outputs();
  if (std::find(outputs.begin(), outputs.end(), op.outputs[0]) != outputs.end()) return false;
  const auto uses = graph.consumers(op.outputs[0]);
  if (uses.size() != 1) return false;
  const ir::Op& reader = graph.op(uses[0].op);
  return reader.kind == ir::OpKind::Concat && reader.get_int("axis") == op.get_int("axis");
}

/// A Concat's inputs with nested Concats spliced in: cat(a, cat(b, c)) reads a, b, c.
void concat_inputs(const ir::Graph& graph, const ir::Op& op, std::vector<std::string>& out) {
  for (const std::string& in : op.inputs) {
    const auto producer = graph.producer(in);
    if (producer && is_nested_concat(graph, *producer)) {
      concat_inputs(graph, graph.op(*producer), out);
    } else {
      out.push_back(in);
    }
  }
}

/// One line per op in topological order: kind, attributes, input and output shapes — the
/// structure two graphs must share, whatever their tensor names. torch.onnx merges a torch.cat
/// of torch.cat results into one Concat (Inception-v3's InceptionE blocks), so structures
/// compare modulo that: a Concat read only by a Concat on the same axis is spliced into it.
std::vector<std::string> structure(const ir::Graph& graph) {
  auto order = ir::topological_order(graph);
  EXPECT_TRUE(order.ok()) << order.reason();
  std::vector<std::string> lines;
  if (!order.ok()) return lines;
  for (ir::OpId id : order.value()) {
    if (is_nested_concat(graph, id)) continue;
    const ir::Op& op = graph.op(id);
    std::ostringstream line;
    line << ir::to_string(op.kind) << " {";
    for (const auto& [key, value] : op.attrs) {
      line << " " << key << "=";
      std::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, std::vector<std::int64_t>> ||
                          std::is_same_v<V, std::vector<double>>) {
              for (auto x : v) line << x << ",";
            } else {
              line << v;
            }
          },
          value);
    }
    std::vector<std::string> inputs;
    if (op.kind == ir::OpKind::Concat) {
      concat_inputs(graph, op, inputs);
    } else {
      inputs = op.inputs;
    }
    line << " } (";
    for (const auto& in : inputs) line << ir::type_string(graph.tensor(in)) << " ";
    line << ") -> " << ir::type_string(graph.tensor(op.outputs[0]));
    lines.push_back(line.str());
  }
  return lines;
}

class TorchvisionExport : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchvisionExport, imports_equal_to_the_zoo_builder) {
  const std::string name = GetParam();
  const fs::path dir = cache_dir();
  const fs::path onnx_path = dir / (name + ".onnx");
  const fs::path meta_path = dir / (name + ".meta.json");
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  // The exporter skips models already in the cache; exit status 2: torchvision unavailable.
  const std::string command = "/usr/bin/python3 '" TESSEL_SOURCE_DIR
                              "/experiments/models/export_torchvision.py' --out '" +
                              dir.string() + "' " + name + " > /dev/null 2>&1";
  const int status = std::system(command.c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch, torchvision and onnx (install "
                    "python3-torchvision python3-onnx); skipping the torchvision comparison";
  }
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "export failed: " << command << " (exit status " << status << ")";
  ASSERT_TRUE(fs::exists(onnx_path) && fs::exists(meta_path));

  const ir::Graph imported = import_onnx(onnx_path.string());
  zoo::ZooOptions options;
  options.with_weights = false;
  auto built = zoo::build_model(name, options);
  ASSERT_TRUE(built.ok()) << built.reason();
  const ir::Graph& reference = built.value();

  // Same op sequence, attributes and shapes.
  const auto got = structure(imported), want = structure(reference);
  EXPECT_EQ(got.size(), want.size()) << "op count";
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    ASSERT_EQ(got[i], want[i]) << "first difference at op " << i << " in topological order";
  }
  // Same parameters and MACs; torchvision's own parameter count as the outside oracle.
  std::ifstream meta_file(meta_path);
  const auto meta = nlohmann::json::parse(meta_file);
  EXPECT_EQ(ir::parameter_count(imported), meta.at("parameters").get<std::int64_t>());
  EXPECT_EQ(ir::parameter_count(imported), ir::parameter_count(reference));
  EXPECT_EQ(count_macs(imported), count_macs(reference));
  // Same interface.
  ASSERT_EQ(imported.inputs().size(), 1u);
  EXPECT_EQ(imported.tensor("input").shape, meta.at("input").at("shape").get<ir::Shape>());
  ASSERT_EQ(imported.outputs().size(), 1u);
  EXPECT_EQ(imported.tensor(imported.outputs()[0]).shape,
            meta.at("output").at("shape").get<ir::Shape>());
}

INSTANTIATE_TEST_SUITE_P(Zoo, TorchvisionExport,
                         ::testing::Values("resnet18", "resnet50", "vgg19", "googlenet",
                                           "inception_v3", "mobilenet_v2"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace tessel::frontend
