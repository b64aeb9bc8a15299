// Tests that write a graph in Tessel's IR text (docs/ir.md) and need its shapes.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "compiler/ir/graph.hpp"
#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/text.hpp"

namespace tessel::test_support {

/// The graph of `text` with every shape inferred; an inference failure fails the test.
inline ir::Graph parse_graph(const std::string& text, const std::string& name = "test") {
  ir::Graph g = ir::parse_text(text, name);
  const auto ok = ir::infer_all_shapes(g);
  EXPECT_TRUE(ok.ok()) << ok.reason();
  return g;
}

}  // namespace tessel::test_support
