// From a model name to the quantized graph the GPU runs, at any batch, and the figures a GPU
// run is judged by (peak tables, roofline time, Nsight Compute's measured DRAM bytes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "compiler/quant/config.hpp"
#include "support/result.hpp"

namespace tessel::cuda {

/// Loads `model` (zoo name or file, as --model accepts) at `batch`, folds BatchNorm and
/// quantizes it. Calibration always runs at batch 1 (config.calibration_samples seeded
/// samples), and the batch-N graph is realized with those class thresholds, so every batch
/// gets the same scales as `tessel infer --quantize` at batch 1, and batch 32 costs no more
/// calibration. `sequence` sets a transformer's tokens (0: the model's default). Throws
/// InputError for a bad model; fails naming the op otherwise.
Result<ir::Graph> quantized_model(const std::string& model, std::int64_t batch,
                                  const quant::QuantConfig& config, std::int64_t sequence = 0);

/// Published peak figures of a GPU (sources in docs/cuda.md).
struct GpuPeaks {
  std::string name;
  double int8_tensor_tops = 0;  ///< dense INT8 tensor-core peak, 1e12 op/s (MAC = 2 ops)
  double dp4a_tops = 0;         ///< int8 dot products on CUDA cores (__dp4a), 1e12 op/s
  double fp16_tensor_tflops = 0;
  double dram_gbytes_per_s = 0;
};

/// The table: "h100-sxm" (default), "h100-pcie", "h200". Fails listing the names.
Result<GpuPeaks> gpu_peaks(const std::string& name);
/// The table entry whose name matches a CUDA device name ("NVIDIA H100 80GB HBM3" ->
/// h100-sxm, "NVIDIA H100 PCIe" -> h100-pcie, "NVIDIA H200" -> h200), else h100-sxm.
GpuPeaks peaks_for_device(const std::string& device_name);

/// Roofline time in milliseconds: max(2 * macs / peak ops, bytes / bandwidth).
double roofline_ms(std::int64_t macs, std::int64_t dram_bytes, double peak_tops,
                   double dram_gbytes_per_s);

/// Sums `dram__bytes_read.sum` and `dram__bytes_write.sum` over every kernel row of
/// `ncu --csv --print-units base --metrics dram__bytes_read.sum,dram__bytes_write.sum` output
/// (values may carry thousands separators). Fails when no such row is present.
struct MeasuredBytes {
  std::int64_t read = 0, written = 0;
  int kernels = 0;  ///< distinct kernel IDs seen
  std::int64_t total() const { return read + written; }
};
Result<MeasuredBytes> parse_ncu_csv(const std::string& csv);

}  // namespace tessel::cuda
