// JSON form of the graph IR with base64 constant payloads.
#include "compiler/ir/json.hpp"

#include <cstdio>
#include <cstring>

#include "support/diagnostic.hpp"

namespace tessel::ir {
namespace {

using nlohmann::json;

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(const std::vector<unsigned char>& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t chunk = (std::uint32_t{bytes[i]} << 16) |
                                (i + 1 < bytes.size() ? std::uint32_t{bytes[i + 1]} << 8 : 0) |
                                (i + 2 < bytes.size() ? std::uint32_t{bytes[i + 2]} : 0);
    out += kAlphabet[(chunk >> 18) & 63];
    out += kAlphabet[(chunk >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[chunk & 63] : '=';
  }
  return out;
}

bool base64_decode(const std::string& text, std::vector<unsigned char>& bytes) {
  int table[256];
  for (int& entry : table) entry = -1;
  for (int i = 0; i < 64; ++i) table[static_cast<unsigned char>(kAlphabet[i])] = i;
  if (text.size() % 4 != 0) return false;
  bytes.clear();
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t chunk = 0;
    int pad = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=') {
        ++pad;
        chunk <<= 6;
        continue;
      }
      const int value = table[static_cast<unsigned char>(c)];
      if (value < 0 || pad) return false;
      chunk = (chunk << 6) | static_cast<std::uint32_t>(value);
    }
    bytes.push_back(static_cast<unsigned char>(chunk >> 16));
    if (pad < 2) bytes.push_back(static_cast<unsigned char>(chunk >> 8));
    if (pad < 1) bytes.push_back(static_cast<unsigned char>(chunk));
  }
  return true;
}

template <class T>
std::string encode_values(const std::vector<T>& values) {
  static_assert(sizeof(T) == 4);
  std::vector<unsigned char> bytes(values.size() * 4);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    for (int b = 0; b < 4; ++b)
      bytes[i * 4 + static_cast<std::size_t>(b)] = static_cast<unsigned char>(bits >> (8 * b));
  }
  return base64_encode(bytes);
}

template <class T>
bool decode_values(const std::string& text, std::vector<T>& values) {
  std::vector<unsigned char> bytes;
  if (!base64_decode(text, bytes) || bytes.size() % 4 != 0) return false;
  values.resize(bytes.size() / 4);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t bits = 0;
    for (int b = 0; b < 4; ++b)
      bits |= std::uint32_t{bytes[i * 4 + static_cast<std::size_t>(b)]} << (8 * b);
    std::memcpy(&values[i], &bits, 4);
  }
  return true;
}

json attr_to_json(const AttrValue& value) {
  return std::visit([](const auto& v) { return json(v); }, value);
}

std::string hex(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void error(const std::string& key, const std::string& message) const {
    throw InputError(Diagnostic{{source_, 0, 0}, key, message});
  }

  const json& field(const json& object, const std::string& key, const std::string& path) const {
    if (!object.is_object() || !object.contains(key)) error(path + key, "missing");
    return object.at(key);
  }

  template <class T>
  T get(const json& value, const std::string& path) const {
    try {
      return value.get<T>();
    } catch (const json::exception& e) {
      error(path, std::string("wrong type: ") + e.what());
    }
  }

  AttrValue attr(const json& value, AttrType type, const std::string& path) const {
    switch (type) {
      case AttrType::Int:
        return get<std::int64_t>(value, path);
      case AttrType::Float:
        return get<double>(value, path);
      case AttrType::Ints:
        return get<std::vector<std::int64_t>>(value, path);
      case AttrType::Floats:
        return get<std::vector<double>>(value, path);
      case AttrType::String:
        return get<std::string>(value, path);
    }
    error(path, "unknown attribute type");
  }

 private:
  std::string source_;
};

}  // namespace

nlohmann::json to_json(const Graph& graph, const JsonOptions& options) {
  json document;
  document["format"] = "tessel-ir";
  document["version"] = 1;
  document["name"] = graph.name();
  json tensors = json::array();
  for (const auto& [name, tensor] : graph.tensors()) {
    json entry;
    entry["name"] = name;
    entry["dtype"] = std::string(to_string(tensor.dtype));
    entry["shape"] = tensor.shape;
    if (tensor.constant) entry["constant"] = true;
    if (tensor.quant) {
      entry["quant"] = {{"scales", tensor.quant->scales},
                        {"zero_points", tensor.quant->zero_points},
                        {"axis", tensor.quant->axis}};
    }
    if (tensor.constant) {
      if (options.include_data && tensor.has_data()) {
        if (!tensor.f32_values.empty()) entry["data_f32"] = encode_values(tensor.f32_values);
        if (!tensor.int_values.empty()) entry["data_int"] = encode_values(tensor.int_values);
      } else if (auto digest = tensor.digest()) {
        entry["digest"] = hex(*digest);
      }
    }
    tensors.push_back(std::move(entry));
  }
  document["tensors"] = std::move(tensors);
  json ops = json::array();
  for (OpId id = 0; id < graph.num_ops(); ++id) {
    const Op& op = graph.op(id);
    json attrs = json::object();
    for (const auto& [key, value] : op.attrs) attrs[key] = attr_to_json(value);
    ops.push_back({{"name", op.name},
                   {"kind", std::string(to_string(op.kind))},
                   {"inputs", op.inputs},
                   {"outputs", op.outputs},
                   {"attrs", attrs}});
  }
  document["ops"] = std::move(ops);
  document["outputs"] = graph.outputs();
  return document;
}

Graph from_json(const nlohmann::json& document, const std::string& source_name) {
  const Reader reader(source_name);
  if (!document.is_object()) reader.error("", "expected a JSON object");
  if (reader.get<std::string>(reader.field(document, "format", ""), "format") != "tessel-ir") {
    reader.error("format", "expected \"tessel-ir\"");
  }
  const auto version = reader.get<int>(reader.field(document, "version", ""), "version");
  if (version != 1) reader.error("version", "unsupported version " + std::to_string(version));
  Graph graph(reader.get<std::string>(reader.field(document, "name", ""), "name"));

  const json& tensors = reader.field(document, "tensors", "");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const json& entry = tensors[i];
    const std::string path = "tensors[" + std::to_string(i) + "].";
    Tensor tensor;
    tensor.name = reader.get<std::string>(reader.field(entry, "name", path), path + "name");
    auto dtype =
        parse_dtype(reader.get<std::string>(reader.field(entry, "dtype", path), path + "dtype"));
    if (!dtype) reader.error(path + "dtype", dtype.reason());
    tensor.dtype = dtype.value();
    tensor.shape = reader.get<Shape>(reader.field(entry, "shape", path), path + "shape");
    tensor.constant = entry.value("constant", false);
    if (entry.contains("quant")) {
      const json& quant = entry.at("quant");
      QuantParams params;
      params.scales = reader.get<std::vector<float>>(reader.field(quant, "scales", path + "quant."),
                                                     path + "quant.scales");
      params.zero_points = reader.get<std::vector<std::int32_t>>(
          reader.field(quant, "zero_points", path + "quant."), path + "quant.zero_points");
      params.axis =
          reader.get<int>(reader.field(quant, "axis", path + "quant."), path + "quant.axis");
      tensor.quant = params;
    }
    if (entry.contains("data_f32") &&
        !decode_values(reader.get<std::string>(entry.at("data_f32"), path + "data_f32"),
                       tensor.f32_values)) {
      reader.error(path + "data_f32", "not base64 of 4-byte values");
    }
    if (entry.contains("data_int") &&
        !decode_values(reader.get<std::string>(entry.at("data_int"), path + "data_int"),
                       tensor.int_values)) {
      reader.error(path + "data_int", "not base64 of 4-byte values");
    }
    if (entry.contains("digest")) {
      tensor.elided_digest =
          std::stoull(reader.get<std::string>(entry.at("digest"), path + "digest"), nullptr, 16);
    }
    const bool constant = tensor.constant;
    Status status =
        constant ? graph.add_constant(std::move(tensor)) : graph.declare_tensor(std::move(tensor));
    if (!status) reader.error(path + "name", status.reason());
  }

  const json& ops = reader.field(document, "ops", "");
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const json& entry = ops[i];
    const std::string path = "ops[" + std::to_string(i) + "].";
    Op op;
    op.name = reader.get<std::string>(reader.field(entry, "name", path), path + "name");
    auto kind =
        parse_op_kind(reader.get<std::string>(reader.field(entry, "kind", path), path + "kind"));
    if (!kind) reader.error(path + "kind", kind.reason());
    op.kind = kind.value();
    op.inputs =
        reader.get<std::vector<std::string>>(reader.field(entry, "inputs", path), path + "inputs");
    op.outputs = reader.get<std::vector<std::string>>(reader.field(entry, "outputs", path),
                                                      path + "outputs");
    const OpSchema& entry_schema = schema(op.kind);
    if (entry.contains("attrs")) {
      for (const auto& [key, value] : entry.at("attrs").items()) {
        const AttrSpec* spec = entry_schema.find_attr(key);
        if (!spec)
          reader.error(path + "attrs." + key,
                       "unknown attribute of " + std::string(entry_schema.name));
        op.attrs[key] = reader.attr(value, spec->type, path + "attrs." + key);
      }
    }
    auto added = graph.add_op(std::move(op));
    if (!added) reader.error(path + "name", added.reason());
  }
  auto outputs =
      reader.get<std::vector<std::string>>(reader.field(document, "outputs", ""), "outputs");
  if (Status status = graph.set_outputs(std::move(outputs)); !status)
    reader.error("outputs", status.reason());
  return graph;
}

}  // namespace tessel::ir
