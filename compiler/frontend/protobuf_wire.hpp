// Locates where an ONNX file stops being well-formed protobuf, for messages protobuf cannot give.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tessel::frontend {

/// The first structural fault in a serialized message: its byte offset in the input and what
/// is wrong there, e.g. "graph.initializer[3] (field 5) declares 2359296 bytes but only 1000
/// remain".
struct WireFault {
  std::size_t offset = 0;
  std::string what;
};

/// Walks the protobuf wire format of `bytes` as an onnx.ModelProto: every tag, varint and
/// length prefix of the model, descending into the graph (field 7), its nodes (1) and its
/// initializers, inputs and outputs (5, 11, 12) by name; other length-delimited fields are
/// skipped whole. Returns the first fault (a truncated varint or length, a length past the end
/// of its enclosing message, field number 0, a group or unknown wire type), or nullopt when
/// the framing is sound (protobuf may still reject the content, e.g. bad UTF-8).
std::optional<WireFault> find_wire_fault(std::string_view bytes);

}  // namespace tessel::frontend
