// Speed of ONNX import against the graph's size (issue 41: near-linear, a 100,000-node chain in
// under 5 s). Not a test: prints JSON (README.md).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/frontend/onnx_import.hpp"
#include "support/version.hpp"

namespace {

/// A chain of `nodes` ops on a [1, 16] float input, alternating Relu and Add-of-a-constant (so
/// that both the unary and the broadcasting-binary paths and a shared initializer are timed),
/// serialized as an ONNX model of opset 13.
std::string chain_model(int nodes) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("chain");
  auto value_info = [](onnx::ValueInfoProto* info, const std::string& name) {
    info->set_name(name);
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    type->mutable_shape()->add_dim()->set_dim_value(1);
    type->mutable_shape()->add_dim()->set_dim_value(16);
  };
  value_info(graph->add_input(), "x");
  auto* bias = graph->add_initializer();
  bias->set_name("bias");
  bias->set_data_type(onnx::TensorProto_DataType_FLOAT);
  bias->add_dims(16);
  for (int i = 0; i < 16; ++i) bias->add_float_data(0.25F);
  std::string previous = "x";
  for (int i = 0; i < nodes; ++i) {
    auto* node = graph->add_node();
    const std::string output = "t" + std::to_string(i);
    node->set_name("n" + std::to_string(i));
    node->add_input(previous);
    if (i % 2 == 0) {
      node->set_op_type("Relu");
    } else {
      node->set_op_type("Add");
      node->add_input("bias");
    }
    node->add_output(output);
    previous = output;
  }
  value_info(graph->add_output(), previous);
  return model.SerializeAsString();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  // tessel_import_speed [REPEATS=3] [LARGEST=100000]: chains of LARGEST/8, /4, /2 and LARGEST.
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const int largest = argc > 2 ? std::max(8, std::atoi(argv[2])) : 100000;
  nlohmann::json out;
  out["tool"] = "tessel_import_speed";
  out["tool_version"] = tessel::version();
  out["model"] = "Relu/Add chain, [1,16] float, opset 13";
  out["repeats"] = repeats;
  nlohmann::json runs = nlohmann::json::array();
  double smallest_seconds = 0;
  for (int nodes : {largest / 8, largest / 4, largest / 2, largest}) {
    const std::string bytes = chain_model(nodes);
    std::vector<double> times;
    std::size_t ops = 0;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      const tessel::ir::Graph graph = tessel::frontend::import_onnx_bytes(bytes, "chain.onnx");
      times.push_back(seconds_since(start));
      ops = graph.num_ops();
    }
    std::sort(times.begin(), times.end());
    if (smallest_seconds == 0) smallest_seconds = times.front();
    runs.push_back({{"nodes", nodes},
                    {"model_bytes", bytes.size()},
                    {"ir_ops", ops},
                    {"min_seconds", times.front()},
                    {"median_seconds", times[times.size() / 2]},
                    {"min_seconds_per_node_us", 1e6 * times.front() / nodes},
                    {"ratio_to_smallest", times.front() / smallest_seconds}});
  }
  out["runs"] = runs;
  // Linear import gives ratios of 1, 2, 4, 8; quadratic 1, 4, 16, 64.
  out["goal"] = "largest under 5 s, ratio_to_smallest near 8";
  std::cout << out.dump(2) << "\n";
  return 0;
}
