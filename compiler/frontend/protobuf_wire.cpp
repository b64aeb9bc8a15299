// A minimal protobuf wire-format walker that names the field and offset where framing breaks.
#include "compiler/frontend/protobuf_wire.hpp"

#include <cstdint>

namespace tessel::frontend {
namespace {

/// The ONNX messages the walker descends into; everything else is skipped as opaque bytes.
enum class Message { Model, Graph, Node, Opaque };

struct Child {
  Message message;
  std::string_view label;  ///< "graph", "node", ...
  bool repeated;
};

/// Submessages worth naming in a fault (onnx.proto field numbers).
std::optional<Child> child_of(Message parent, std::uint64_t field) {
  switch (parent) {
    case Message::Model:
      if (field == 7) return Child{Message::Graph, "graph", false};
      if (field == 8) return Child{Message::Opaque, "opset_import", true};
      break;
    case Message::Graph:
      if (field == 1) return Child{Message::Node, "node", true};
      if (field == 5) return Child{Message::Opaque, "initializer", true};
      if (field == 11) return Child{Message::Opaque, "input", true};
      if (field == 12) return Child{Message::Opaque, "output", true};
      if (field == 13) return Child{Message::Opaque, "value_info", true};
      break;
    case Message::Node:
      if (field == 5) return Child{Message::Opaque, "attribute", true};
      break;
    case Message::Opaque:
      break;
  }
  return std::nullopt;
}

class Walker {
 public:
  explicit Walker(std::string_view bytes) : bytes_(bytes) {}

  /// Walks [begin, end) as `message`; `path` prefixes field labels ("graph.node[3]").
  std::optional<WireFault> walk(std::size_t begin, std::size_t end, Message message,
                                const std::string& path) {
    std::size_t pos = begin;
    std::uint64_t counts[32] = {};  // occurrences of low-numbered repeated fields, for indices
    while (pos < end) {
      const std::size_t tag_offset = pos;
      std::uint64_t tag = 0;
      if (!read_varint(pos, end, tag)) {
        return fault(tag_offset, where(path) + "truncated field tag");
      }
      const std::uint64_t field = tag >> 3;
      const unsigned wire_type = static_cast<unsigned>(tag & 7);
      if (field == 0) return fault(tag_offset, where(path) + "field number 0 is invalid");
      std::string child_path;
      const std::string name = field_name(message, field, path, counts, child_path);
      switch (wire_type) {
        case 0: {  // varint
          std::uint64_t ignored = 0;
          if (!read_varint(pos, end, ignored)) {
            return fault(tag_offset, name + " has a truncated varint");
          }
          break;
        }
        case 1:    // fixed64
        case 5: {  // fixed32
          const std::size_t width = wire_type == 1 ? 8 : 4;
          if (end - pos < width) {
            return fault(tag_offset, name + " needs " + std::to_string(width) + " bytes but only " +
                                         std::to_string(end - pos) + " remain");
          }
          pos += width;
          break;
        }
        case 2: {  // length-delimited
          std::uint64_t length = 0;
          if (!read_varint(pos, end, length)) {
            return fault(tag_offset, name + " has a truncated length prefix");
          }
          if (length > end - pos) {
            return fault(tag_offset, name + " declares " + std::to_string(length) +
                                         " bytes but only " + std::to_string(end - pos) +
                                         " remain");
          }
          const std::size_t child_end = pos + static_cast<std::size_t>(length);
          if (auto child = child_of(message, field); child && child->message != Message::Opaque) {
            if (auto inner = walk(pos, child_end, child->message, child_path)) return inner;
          }
          pos = child_end;
          break;
        }
        default:
          return fault(tag_offset, name + " uses wire type " + std::to_string(wire_type) +
                                       (wire_type == 3 || wire_type == 4 ? " (group)" : "") +
                                       ", which ONNX never writes");
      }
    }
    return std::nullopt;
  }

 private:
  static std::string where(const std::string& path) {
    return path.empty() ? std::string() : path + ": ";
  }

  /// "graph.node[3] (field 1)": the field's path (indexed when repeated) and its number.
  static std::string field_name(Message message, std::uint64_t field, const std::string& path,
                                std::uint64_t (&counts)[32], std::string& child_path) {
    const std::string prefix = path.empty() ? std::string() : path + ".";
    if (auto child = child_of(message, field)) {
      child_path = prefix + std::string(child->label);
      if (child->repeated && field < 32) child_path += "[" + std::to_string(counts[field]++) + "]";
      return child_path + " (field " + std::to_string(field) + ")";
    }
    child_path = prefix + "field " + std::to_string(field);
    return child_path;
  }

  bool read_varint(std::size_t& pos, std::size_t end, std::uint64_t& value) const {
    value = 0;
    for (int shift = 0; shift < 64 && pos < end; shift += 7) {
      const auto byte = static_cast<unsigned char>(bytes_[pos++]);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  static WireFault fault(std::size_t offset, std::string what) {
    return WireFault{offset, std::move(what)};
  }

  std::string_view bytes_;
};

}  // namespace

std::optional<WireFault> find_wire_fault(std::string_view bytes) {
  return Walker(bytes).walk(0, bytes.size(), Message::Model, "");
}

}  // namespace tessel::frontend
