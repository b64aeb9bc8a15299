// Tests that write a small graph op by op (transformer blocks, the modern op kinds): inputs,
// constants (given, or seeded normal values) and ops whose one output is named after the op.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "support/seeded.hpp"

namespace tessel::testing {

class GraphBuilder {
 public:
  /// `first_seed`: the seeded stream of the first random() constant; each next one takes the
  /// next seed.
  GraphBuilder(std::string name, std::uint64_t first_seed)
      : graph{std::move(name)}, seed_(first_seed) {}

  ir::Graph graph;

  std::string input(const std::string& name, ir::Shape shape) {
    EXPECT_TRUE(graph.add_input(name, std::move(shape)).ok());
    return name;
  }
  std::string constant(const std::string& name, ir::Shape shape, std::vector<float> values) {
    ir::Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.f32_values = std::move(values);
    EXPECT_TRUE(graph.add_constant(std::move(t)).ok());
    return name;
  }
  /// N(mean, std_dev) values from the seeded generator, one stream per constant.
  std::string random(const std::string& name, ir::Shape shape, double mean, double std_dev) {
    auto values = seeded_normal_values(ir::element_count(shape), seed_++);
    for (float& v : values) v = static_cast<float>(mean + std_dev * v);
    return constant(name, std::move(shape), std::move(values));
  }
  std::string op(const std::string& name, ir::OpKind kind, std::vector<std::string> inputs,
                 ir::Attrs attrs = {}) {
    auto id = graph.add_op(ir::Op{name, kind, std::move(inputs), {name}, std::move(attrs)});
    EXPECT_TRUE(id.ok()) << name << ": " << id.reason();
    return name;
  }

 private:
  std::uint64_t seed_;
};

}  // namespace tessel::testing
