// Outside oracle (a): ONNX backend node tests (Debian libonnx-testdata) through Tessel's executors.
//
// For every /usr/share/libonnx-testdata/data/node/test_*/ whose op Tessel supports, the model
// is imported with the ONNX frontend (IR ops) or evaluated with Tessel's integer kernels (the
// QLinear/Integer family, which the IR has no op for), and each output is compared with the
// stored one at the suite's tolerances (numpy.allclose, rtol 1e-3, atol 1e-7; integers exactly).
// The test prints which cases ran, passed and were skipped, and why.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "compiler/frontend/onnx_import.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/kernels.hpp"
#include "support/diagnostic.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;
using cpu::TensorData;

const char* kNodeDir = "/usr/share/libonnx-testdata/data/node";

// Ops the IR runs (imported by the frontend) and ops run here with the integer kernels.
const std::set<std::string> kIrOps = {"Conv",
                                      "MaxPool",
                                      "AveragePool",
                                      "GlobalAveragePool",
                                      "Gemm",
                                      "MatMul",
                                      "Relu",
                                      "Clip",
                                      "Add",
                                      "Concat",
                                      "Flatten",
                                      "Softmax",
                                      "BatchNormalization",
                                      "Reshape",
                                      "Pad"};
const std::set<std::string> kIntegerOps = {"ConvInteger",   "MatMulInteger",  "QLinearConv",
                                           "QLinearMatMul", "QuantizeLinear", "DequantizeLinear"};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// TensorProto -> TensorData (f32, i8, u8, i16, i32; int64 narrowed to i32).
std::optional<TensorData> to_tensor(const onnx::TensorProto& t, std::string& why) {
  ir::Shape shape(t.dims().begin(), t.dims().end());
  if (shape.empty()) shape = {1};
  const auto n = ir::element_count(shape);
  const std::string& raw = t.raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: {
      TensorData d(ir::DType::f32, shape);
      if (!raw.empty())
        std::memcpy(d.raw(), raw.data(), d.bytes());
      else
        for (std::int64_t i = 0; i < n; ++i) d.data<float>()[i] = t.float_data(static_cast<int>(i));
      return d;
    }
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT64: {
      const auto type = t.data_type();
      const ir::DType dtype = type == onnx::TensorProto::UINT8   ? ir::DType::u8
                              : type == onnx::TensorProto::INT8  ? ir::DType::i8
                              : type == onnx::TensorProto::INT16 ? ir::DType::i16
                                                                 : ir::DType::i32;
      std::vector<std::int32_t> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        if (!raw.empty()) {
          switch (type) {
            case onnx::TensorProto::UINT8:
              v[i] = static_cast<std::uint8_t>(raw[i]);
              break;
            case onnx::TensorProto::INT8:
              v[i] = static_cast<std::int8_t>(raw[i]);
              break;
            case onnx::TensorProto::INT16: {
              std::int16_t x;
              std::memcpy(&x, raw.data() + 2 * i, 2);
              v[i] = x;
              break;
            }
            case onnx::TensorProto::INT32: {
              std::int32_t x;
              std::memcpy(&x, raw.data() + 4 * i, 4);
              v[i] = x;
              break;
            }
            default: {
              std::int64_t x;
              std::memcpy(&x, raw.data() + 8 * i, 8);
              v[i] = static_cast<std::int32_t>(x);
            }
          }
        } else if (type == onnx::TensorProto::INT64) {
          v[i] = static_cast<std::int32_t>(t.int64_data(static_cast<int>(i)));
        } else {
          v[i] = t.int32_data(static_cast<int>(i));
        }
      }
      return TensorData::from_ints(dtype, shape, v);
    }
    default:
      why = "tensor data type " + std::to_string(t.data_type()) + " not supported";
      return std::nullopt;
  }
}

// numpy.allclose(actual, expected, rtol=1e-3, atol=1e-7) for floats, equality for integers.
std::string compare(const TensorData& actual, const TensorData& expected) {
  if (actual.size() != expected.size())
    return "size " + std::to_string(actual.size()) + " vs expected " +
           std::to_string(expected.size());
  const bool exact = expected.dtype() != ir::DType::f32;
  for (std::int64_t i = 0; i < actual.size(); ++i) {
    const double a = actual.at(i), e = expected.at(i);
    const bool ok = exact ? a == e : std::fabs(a - e) <= 1e-7 + 1e-3 * std::fabs(e);
    if (!ok) {
      std::ostringstream s;
      s << "element " << i << ": got " << a << ", expected " << e;
      return s.str();
    }
  }
  return "";
}

struct Attributes {
  std::map<std::string, std::vector<std::int64_t>> ints;
  std::map<std::string, std::string> strings;
  std::int64_t get(const std::string& k, std::int64_t fallback) const {
    const auto it = ints.find(k);
    return it == ints.end() || it->second.empty() ? fallback : it->second[0];
  }
};

Attributes attributes(const onnx::NodeProto& node) {
  Attributes a;
  for (const auto& attr : node.attribute()) {
    if (attr.type() == onnx::AttributeProto::INT) a.ints[attr.name()] = {attr.i()};
    if (attr.type() == onnx::AttributeProto::INTS)
      a.ints[attr.name()] = {attr.ints().begin(), attr.ints().end()};
    if (attr.type() == onnx::AttributeProto::STRING) a.strings[attr.name()] = attr.s();
  }
  return a;
}

// ONNX's requantization: saturate(round_half_even(acc * scale) + zp).
std::int32_t onnx_requantize(double v, std::int32_t zp, ir::DType dtype) {
  const double r = std::nearbyint(v) + zp;  // default rounding mode: half to even
  const double lo = dtype == ir::DType::u8 ? 0 : -128, hi = dtype == ir::DType::u8 ? 255 : 127;
  return static_cast<std::int32_t>(std::clamp(r, lo, hi));
}

// Evaluates the integer-family node with Tessel's kernels. Returns outputs or sets `why`.
std::optional<std::vector<TensorData>> run_integer_op(const onnx::NodeProto& node,
                                                      const std::vector<TensorData>& in,
                                                      ir::DType out_dtype, std::string& why) {
  const std::string& op = node.op_type();
  const Attributes attrs = attributes(node);
  const auto zp = [&](std::size_t i) -> std::int32_t {
    return i < in.size() && in[i].size() > 0 ? static_cast<std::int32_t>(in[i].at(0)) : 0;
  };
  const auto conv = [&](const TensorData& x, const TensorData& w, const TensorData* bias,
                        std::int32_t xzp, std::int32_t wzp) -> std::optional<TensorData> {
    if (attrs.strings.count("auto_pad") && attrs.strings.at("auto_pad") != "NOTSET") {
      why = "auto_pad in the integer runner";
      return std::nullopt;
    }
    ir::WindowGeometry g;
    g.kernel_h = w.shape()[2];
    g.kernel_w = w.shape()[3];
    if (attrs.ints.count("strides")) {
      g.stride_h = attrs.ints.at("strides")[0];
      g.stride_w = attrs.ints.at("strides")[1];
    }
    if (attrs.ints.count("dilations")) {
      g.dilation_h = attrs.ints.at("dilations")[0];
      g.dilation_w = attrs.ints.at("dilations")[1];
    }
    if (attrs.ints.count("pads")) {
      const auto& p = attrs.ints.at("pads");
      g.pad_top = p[0];
      g.pad_left = p[1];
      g.pad_bottom = p[2];
      g.pad_right = p[3];
    }
    g.group = attrs.get("group", 1);
    const auto& xs = x.shape();
    TensorData y(ir::DType::i32, {xs[0], w.shape()[0], g.output_h(xs[2]), g.output_w(xs[3])});
    if (auto ok = cpu::conv_int_reference(x, w, bias, g, y, xzp, wzp); !ok) {
      why = ok.reason();
      return std::nullopt;
    }
    return y;
  };
  const auto matmul = [&](const TensorData& a, const TensorData& b, std::int32_t azp,
                          std::int32_t bzp) -> std::optional<TensorData> {
    // Batched [.., M, K] x [K, N] or [.., K, N]: loop over the batch with the 2-D kernel.
    const auto& as = a.shape();
    const auto& bs = b.shape();
    const std::int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
    const std::int64_t batch = a.size() / (M * K);
    const bool b_batched = bs.size() == as.size() && bs.size() > 2;
    ir::Shape ys = as;
    ys.back() = N;
    TensorData y(ir::DType::i32, ys);
    const auto av = a.to_i32(), bv = b.to_i32();
    for (std::int64_t i = 0; i < batch; ++i) {
      const auto a2 =
          TensorData::from_ints(ir::DType::i32, {M, K}, std::span(av).subspan(i * M * K, M * K));
      const auto b2 = TensorData::from_ints(
          ir::DType::i32, {K, N}, std::span(bv).subspan(b_batched ? i * K * N : 0, K * N));
      TensorData y2(ir::DType::i32, {M, N});
      if (auto ok = cpu::gemm_int_reference(a2, b2, nullptr, false, y2, azp, bzp); !ok) {
        why = ok.reason();
        return std::nullopt;
      }
      std::memcpy(y.data<std::int32_t>() + i * M * N, y2.raw(), y2.bytes());
    }
    return y;
  };
  const auto per_tensor = [&](std::initializer_list<std::size_t> indices) {
    for (auto i : indices)
      if (i < in.size() && in[i].size() != 1) return false;
    return true;
  };

  if (op == "ConvInteger") {
    if (!per_tensor({2, 3})) return why = "per-channel zero points", std::nullopt;
    auto y = conv(in[0], in[1], nullptr, zp(2), zp(3));
    if (!y) return std::nullopt;
    return std::vector<TensorData>{std::move(*y)};
  }
  if (op == "MatMulInteger") {
    if (!per_tensor({2, 3})) return why = "per-row/column zero points", std::nullopt;
    auto y = matmul(in[0], in[1], zp(2), zp(3));
    if (!y) return std::nullopt;
    return std::vector<TensorData>{std::move(*y)};
  }
  if (op == "QLinearConv" || op == "QLinearMatMul") {
    const bool is_conv = op == "QLinearConv";
    if (!per_tensor({1, 2, 4, 5, 6, 7})) return why = "per-channel scales", std::nullopt;
    std::optional<TensorData> bias;
    if (is_conv && in.size() > 8) bias = in[8];
    auto acc = is_conv ? conv(in[0], in[3], bias ? &*bias : nullptr, zp(2), zp(5))
                       : matmul(in[0], in[3], zp(2), zp(5));
    if (!acc) return std::nullopt;
    const double scale = in[1].at(0) * in[4].at(0) / in[6].at(0);
    TensorData y(out_dtype, acc->shape());
    std::vector<std::int32_t> v(static_cast<std::size_t>(acc->size()));
    for (std::int64_t i = 0; i < acc->size(); ++i)
      v[static_cast<std::size_t>(i)] = onnx_requantize(acc->at(i) * scale, zp(7), out_dtype);
    return std::vector<TensorData>{TensorData::from_ints(out_dtype, acc->shape(), v)};
  }
  if (op == "QuantizeLinear" || op == "DequantizeLinear") {
    if (!per_tensor({1, 2}))
      return why = "per-axis scales (Tessel activations are per-tensor)", std::nullopt;
    // Through Tessel's own Quantize/Dequantize ops on a two-op graph.
    ir::Graph g("node");
    const bool quantize = op == "QuantizeLinear";
    const ir::DType in_type = in[0].dtype();
    (void)g.add_input("x", in[0].shape(), in_type);
    ir::Tensor q;
    q.name = quantize ? "y" : "x";
    const float scale = static_cast<float>(in[1].at(0));
    const std::int32_t zero = zp(2);
    ir::Tensor y;
    y.name = "y";
    y.shape = in[0].shape();
    y.dtype = quantize ? (in.size() > 2 ? in[2].dtype() : ir::DType::u8) : ir::DType::f32;
    if (quantize) {
      y.quant = ir::QuantParams::per_tensor(scale, zero);
    } else {
      g.tensor_mut("x").quant = ir::QuantParams::per_tensor(scale, zero);
    }
    (void)g.declare_tensor(y);
    ir::Op node_op;
    node_op.name = "op";
    node_op.kind = quantize ? ir::OpKind::Quantize : ir::OpKind::Dequantize;
    node_op.inputs = {"x"};
    node_op.outputs = {"y"};
    (void)g.add_op(node_op);
    (void)g.set_outputs({"y"});
    cpu::Executor executor(g);
    auto out = executor.run({{"x", in[0]}});
    if (!out) return why = out.reason(), std::nullopt;
    return std::vector<TensorData>{out.value().at("y")};
  }
  why = "no integer runner for " + op;
  return std::nullopt;
}

struct Outcome {
  std::string name, op, status, detail;
};

Outcome run_case(const fs::path& dir) {
  Outcome r{dir.filename().string(), "", "skipped", ""};
  onnx::ModelProto model;
  const std::string bytes = read_file(dir / "model.onnx");
  if (!model.ParseFromString(bytes)) return r.detail = "model.onnx does not parse", r;
  if (model.graph().node_size() != 1) return r.detail = "not a single-node model", r;
  const auto& node = model.graph().node(0);
  r.op = node.op_type();
  const bool ir_op = kIrOps.count(r.op) != 0, int_op = kIntegerOps.count(r.op) != 0;
  if (!ir_op && !int_op) return r.detail = "op not supported by Tessel", r;

  std::optional<ir::Graph> graph;
  if (ir_op) {
    try {
      graph = frontend::import_onnx_bytes(bytes, (dir / "model.onnx").string());
    } catch (const InputError& e) {
      std::string what = e.what();
      return r.detail = "importer: " + what.substr(what.find("error: ") + 7), r;
    } catch (const std::exception& e) {
      return r.detail = std::string("importer threw: ") + e.what(), r;
    }
  }
  int sets = 0;
  for (int k = 0;; ++k) {
    const fs::path data = dir / ("test_data_set_" + std::to_string(k));
    if (!fs::exists(data)) break;
    ++sets;
    std::vector<TensorData> inputs, expected;
    for (int i = 0;; ++i) {
      const fs::path p = data / ("input_" + std::to_string(i) + ".pb");
      if (!fs::exists(p)) break;
      onnx::TensorProto t;
      t.ParseFromString(read_file(p));
      std::string why;
      auto v = to_tensor(t, why);
      if (!v) return r.detail = why, r;
      inputs.push_back(std::move(*v));
    }
    for (int i = 0;; ++i) {
      const fs::path p = data / ("output_" + std::to_string(i) + ".pb");
      if (!fs::exists(p)) break;
      onnx::TensorProto t;
      t.ParseFromString(read_file(p));
      std::string why;
      auto v = to_tensor(t, why);
      if (!v) return r.detail = why, r;
      expected.push_back(std::move(*v));
    }
    std::vector<TensorData> actual;
    if (graph) {
      std::map<std::string, TensorData> feed;
      for (int i = 0; i < model.graph().input_size() && i < static_cast<int>(inputs.size()); ++i) {
        const std::string& name = model.graph().input(i).name();
        if (graph->has_tensor(name) && !graph->tensor(name).constant) {
          TensorData v = inputs[static_cast<std::size_t>(i)];
          if (graph->tensor(name).shape != v.shape()) v.reshape(graph->tensor(name).shape);
          feed[name] = std::move(v);
        }
      }
      try {
        cpu::Executor executor(*graph);
        auto out = executor.run(feed);
        if (!out) return r.status = "failed", r.detail = out.reason(), r;
        for (const auto& name : graph->outputs()) actual.push_back(out.value().at(name));
      } catch (const std::exception& e) {
        return r.status = "failed", r.detail = e.what(), r;
      }
    } else {
      std::string why;
      auto out = run_integer_op(node, inputs, expected.at(0).dtype(), why);
      if (!out) return r.detail = why, r;
      actual = std::move(*out);
    }
    for (std::size_t i = 0; i < expected.size() && i < actual.size(); ++i) {
      const std::string diff = compare(actual[i], expected[i]);
      if (!diff.empty())
        return r.status = "failed",
               r.detail =
                   "data set " + std::to_string(k) + " output " + std::to_string(i) + ": " + diff,
               r;
    }
  }
  r.status = "passed";
  r.detail = std::to_string(sets) + " data set(s)";
  return r;
}

TEST(OnnxNodeTests, EverySupportedNodeTestMatchesItsStoredOutputs) {
  if (!fs::is_directory(kNodeDir)) GTEST_SKIP() << kNodeDir << " missing (libonnx-testdata)";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kNodeDir))
    if (e.is_directory() && e.path().filename().string().rfind("test_", 0) == 0)
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  int passed = 0, failed = 0, skipped_supported = 0, unsupported = 0;
  for (const auto& dir : dirs) {
    const Outcome r = run_case(dir);
    if (r.status == "skipped" &&
        (r.detail == "op not supported by Tessel" || r.detail == "not a single-node model")) {
      ++unsupported;
      continue;
    }
    std::cout << r.status << " " << r.name << " (" << r.op << "): " << r.detail << '\n';
    if (r.status == "passed") ++passed;
    if (r.status == "failed") {
      ++failed;
      ADD_FAILURE() << r.name << ": " << r.detail;
    }
    if (r.status == "skipped") ++skipped_supported;
  }
  std::cout << "ONNX node tests: " << passed << " passed, " << failed << " failed, "
            << skipped_supported << " skipped (supported op, unsupported case), " << unsupported
            << " skipped (op not supported, or not a single-node model)\n";
  // The runner must actually exercise the suite: a change that skips everything fails here.
  EXPECT_GE(passed, 60);
}

}  // namespace
}  // namespace tessel
