// Quantization at any batch, the GPU peak table, the roofline and the ncu CSV parser.
#include "compiler/targets/cuda/flow.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "compiler/quant/realize.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/load_model.hpp"
#include "support/diagnostic.hpp"

namespace tessel::cuda {

namespace {
ir::Graph prepared(const std::string& model, std::int64_t batch, std::int64_t sequence) {
  zoo::LoadOptions options;
  options.zoo.batch = batch;
  options.zoo.sequence = sequence;
  const ir::Graph graph = zoo::load_model(model, options);
  auto p = cpu::prepare_graph(graph);
  if (!p) throw_input_error({model, 0, 0}, "", p.reason());
  return std::move(p.value());
}
}  // namespace

Result<ir::Graph> quantized_model(const std::string& model, std::int64_t batch,
                                  const quant::QuantConfig& config, std::int64_t sequence) {
  const ir::Graph one = prepared(model, 1, sequence);
  auto q = cpu::quantize_model(one, config, cpu::synthetic_samples(one, config));
  if (!q) return q.failure();
  if (batch == 1) return std::move(q.value().graph);
  const ir::Graph many = prepared(model, batch, sequence);
  auto plan = quant::plan_scales(many, config);
  if (!plan) return plan.failure();
  return quant::realize(many, plan.value(), q.value().thresholds, &q.value().tensor_mean_squares,
                        config.bias_correction ? &q.value().tensor_moments : nullptr);
}

Result<GpuPeaks> gpu_peaks(const std::string& name) {
  // dp4a: 64 dp4a/clk/SM (the integer multiply-add rate of cc 9.0), 4 MACs each.
  static const std::vector<GpuPeaks> table = {
      {"h100-sxm", 1979.0, 2.0 * 4 * 64 * 132 * 1.98e9 / 1e12, 989.4, 3350.0},
      {"h100-pcie", 1513.0, 2.0 * 4 * 64 * 114 * 1.755e9 / 1e12, 756.0, 2000.0},
      {"h200", 1979.0, 2.0 * 4 * 64 * 132 * 1.98e9 / 1e12, 989.4, 4800.0},
  };
  for (const auto& p : table)
    if (p.name == name) return p;
  return fail("unknown GPU '" + name + "' (known: h100-sxm, h100-pcie, h200)");
}

GpuPeaks peaks_for_device(const std::string& device_name) {
  std::string lower = device_name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.find("h200") != std::string::npos) return gpu_peaks("h200").value();
  if (lower.find("h100") != std::string::npos && lower.find("pcie") != std::string::npos)
    return gpu_peaks("h100-pcie").value();
  return gpu_peaks("h100-sxm").value();
}

double roofline_ms(std::int64_t macs, std::int64_t dram_bytes, double peak_tops,
                   double dram_gbytes_per_s) {
  const double compute_ms = 2.0 * static_cast<double>(macs) / (peak_tops * 1e12) * 1e3;
  const double memory_ms = static_cast<double>(dram_bytes) / (dram_gbytes_per_s * 1e9) * 1e3;
  return std::max(compute_ms, memory_ms);
}

namespace {
/// Splits one CSV line with double-quoted fields.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (const char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(field);
  return fields;
}
}  // namespace

Result<MeasuredBytes> parse_ncu_csv(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::vector<std::string> header;
  int id_col = -1, name_col = -1, value_col = -1;
  MeasuredBytes m;
  std::set<std::string> ids;
  bool any = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] != '"') continue;  // ncu's own "==PROF==" lines, app output
    const auto fields = csv_fields(line);
    if (header.empty()) {
      header = fields;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (fields[i] == "ID") id_col = static_cast<int>(i);
        if (fields[i] == "Metric Name") name_col = static_cast<int>(i);
        if (fields[i] == "Metric Value") value_col = static_cast<int>(i);
      }
      if (name_col < 0 || value_col < 0)
        return fail("ncu CSV: no 'Metric Name'/'Metric Value' header");
      continue;
    }
    if (static_cast<int>(fields.size()) <= std::max(name_col, value_col)) continue;
    const std::string& metric = fields[static_cast<std::size_t>(name_col)];
    if (metric != "dram__bytes_read.sum" && metric != "dram__bytes_write.sum") continue;
    std::string digits;
    for (const char c : fields[static_cast<std::size_t>(value_col)])
      if (c != ',') digits += c;
    std::int64_t value = 0;
    try {
      value = static_cast<std::int64_t>(std::stod(digits));
    } catch (const std::exception&) {
      return fail("ncu CSV: bad value '" + fields[static_cast<std::size_t>(value_col)] + "' for " +
                  metric);
    }
    (metric == "dram__bytes_read.sum" ? m.read : m.written) += value;
    if (id_col >= 0) ids.insert(fields[static_cast<std::size_t>(id_col)]);
    any = true;
  }
  if (!any) return fail("ncu CSV: no dram__bytes_read.sum / dram__bytes_write.sum rows");
  m.kernels = static_cast<int>(ids.size());
  return m;
}

}  // namespace tessel::cuda
