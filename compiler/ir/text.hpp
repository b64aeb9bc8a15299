// The text form of a graph: a stable, readable dump, one op per line, and its parser.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "compiler/ir/graph.hpp"

namespace tessel::ir {

/// Options of the text dump.
struct TextOptions {
  /// Constants with at most this many elements print their values inline (so that small test
  /// graphs round-trip with data); larger ones print shape and a payload digest only.
  std::size_t inline_constant_limit = 16;
};

/// The text form:
///
///     graph tiny_conv {
///       input %input : f32[1,3,8,8]
///       const %conv.weight : f32[4,3,3,3] #9f6c0c1d2b3a4e5f
///       const %conv.bias : f32[4] = [0, 0.5, -1, 2]
///       %conv = Conv(%input, %conv.weight, %conv.bias) {kernel=3x3, pad=1,1,1,1} : f32[1,4,8,8]
///       %relu = Relu(%conv) : f32[1,4,8,8]
///       output %relu
///     }
///
/// Ops print in topological order (id order when the graph has a cycle), constants in name
/// order. Attributes print in schema order and only when they differ from the default. An op
/// whose name differs from its first output adds ` @name`. A type is `dtype[dims]`, `dtype[?]`
/// when not inferred, followed by `{scale=..., zp=...}` or `{axis=0, scales=[...], zps=[...]}`
/// when quantized. Floats print in the shortest form that reads back exactly.
std::string to_text(const Graph& graph, const TextOptions& options = {});

/// Parses the text form. Syntax errors throw tessel::InputError located at
/// `source_name:line:column`; the parsed graph is checked with `validate` only by the caller.
/// Summarised constants come back without payload but with their digest, so that
/// `to_text(parse_text(to_text(g))) == to_text(g)`.
Graph parse_text(std::string_view text, const std::string& source_name = "<text>");

/// Reads a `.tir` file (throws InputError when it cannot be read or parsed).
Graph read_text_file(const std::string& path);

}  // namespace tessel::ir
