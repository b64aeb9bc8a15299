// The executor's channels-last kernels (internal to compiler/targets/cpu): the CNN kinds with
// fast paths that read and write 4-D values in NHWC order and keep per-op state (oneDNN
// primitives, reordered weights, requantization tables) across runs. They are registered by
// kind in the one kernel table (ops/kernel.hpp) beside the row-major kernels.
#pragma once

#include <omp.h>
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/targets/cpu/nhwc_kernels.hpp"
#include "compiler/targets/cpu/ops/common.hpp"
#include "compiler/targets/cpu/ops/kernel.hpp"
#include "support/int_ops.hpp"

namespace tessel::cpu {

class DnnlConv;  // dnnl_conv.hpp

/// As ops::visit_elements, for integer dtypes only; f is never instantiated for float.
template <class Value, class F>
void with_int(Value& t, F&& f) {
  ops::visit_elements(t, [&](auto* p) {
    if constexpr (std::is_same_v<std::remove_cv_t<std::remove_pointer_t<decltype(p)>>, float>) {
      throw std::logic_error("with_int on f32");
    } else {
      f(p);
    }
  });
}

/// Whether NCHW and NHWC storage of `shape` differ (4-D with C > 1 and H * W > 1).
bool layouts_differ(const ir::Shape& shape);
/// `t` stored in the other layout (NCHW -> NHWC when `to_nhwc`, else back).
TensorData relayout(const TensorData& t, bool to_nhwc);

/// Calls ok = f(begin, end) on slices of [0, n) in parallel on the OpenMP threads oneDNN also
/// uses (OMP_NUM_THREADS), one slice when n < 2 * grain; true when every slice returned true.
/// The kernels it splits are elementwise (or per pixel): the result does not depend on the
/// number of threads.
template <class F>
bool parallel_slices(std::int64_t n, std::int64_t grain, F&& f) {
  const std::int64_t slices =
      std::clamp<std::int64_t>(n / std::max<std::int64_t>(grain, 1), 1, omp_get_max_threads());
  if (slices == 1) return f(std::int64_t{0}, n);
  bool ok = true;
  const int threads = static_cast<int>(slices);
#pragma omp parallel for num_threads(threads) schedule(static) reduction(&& : ok)
  for (std::int64_t t = 0; t < slices; ++t) ok = f(n * t / slices, n * (t + 1) / slices) && ok;
  return ok;
}

/// The clamp a Relu/Clip on integers applies ([0, int32 max] for Relu).
std::pair<std::int32_t, std::int32_t> activation_bounds(const ir::Graph& graph, const ir::Op& op);

/// Ops the fast path runs as one: `head` (a Conv or an Add) and the ops it absorbs, whose
/// results are never stored; `output` is the last absorbed op's result.
struct Fusion {
  std::vector<ir::OpId> absorbed;
  std::string output;
  std::string label;  ///< "Conv+Requantize+Relu"
  /// Conv: the requantization (bounds narrowed by an absorbed Relu/Clip); Add: unused.
  nhwc::ChannelRequant requant;
  /// Add: the rescale with the narrowed bounds.
  intops::AddRequant add;
};

/// What the channels-last kernels keep per op across runs of one executor.
struct KernelCache {
  KernelCache();
  ~KernelCache();
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::unordered_map<ir::OpId, std::unique_ptr<DnnlConv>> convs;
  std::unordered_map<ir::OpId, nhwc::ChannelRequant> requants;
  std::unordered_map<ir::OpId, std::vector<std::int8_t>> gemm_weights_kn;
  std::unordered_map<ir::OpId, std::vector<std::int16_t>> im2col_weights;  // [o][kh][kw][c/g]
  std::vector<std::int32_t> accumulators;  // a fused conv's int32 result (reused)
};

/// A value in flight. A 4-D tensor may be stored channels-last (`nhwc`); its shape stays NCHW.
struct Value {
  TensorData data;
  bool nhwc = false;
};

/// One sample's values in flight, read in the layout an op needs: a stored value is converted in
/// place (a later reader wanting the other layout converts it back), a constant's channels-last
/// copy is cached for every sample.
class SampleValues {
 public:
  SampleValues(const std::unordered_map<std::string, TensorData>& constants,
               std::unordered_map<std::string, TensorData>& constants_nhwc)
      : constants_(&constants), constants_nhwc_(&constants_nhwc) {}
  const TensorData& nchw(const std::string& name);
  const TensorData& channels_last(const std::string& name);
  /// Whatever layout the value has (for elementwise ops), and whether it is channels-last.
  std::pair<const TensorData*, bool> as_is(const std::string& name);
  const TensorData& in_layout(const std::string& name, bool nhwc_wanted) {
    return nhwc_wanted ? channels_last(name) : nchw(name);
  }

  std::unordered_map<std::string, Value> values;

 private:
  const std::unordered_map<std::string, TensorData>* constants_;
  std::unordered_map<std::string, TensorData>* constants_nhwc_;
};

/// What a channels-last kernel reads and writes.
struct ChannelsLastArgs {
  const ir::Graph& graph;
  const ir::Op& op;
  ir::OpId id;
  SampleValues& values;
  KernelCache& cache;
  const Fusion* fusion;         ///< the fusion `op` heads in this run, or nullptr
  const std::string& out_name;  ///< op.outputs[0], or the fusion's last result
  const std::map<std::string, TensorData>& graph_inputs;
  TensorData y;         ///< out: the value of out_name
  bool y_nhwc = false;  ///< out: y's elements are channels-last

  /// "%name (Kind)", the start of every kernel failure message.
  std::string where() const;
  /// A zeroed value of out_name's dtype and shape.
  TensorData allocate() const {
    const ir::Tensor& t = graph.tensor(out_name);
    return TensorData(t.dtype, t.shape);
  }
};

// The channels-last families (one table each, concatenated by ops/registry.cpp).
std::vector<KernelEntry> convolution_kernels();   // Conv, Gemm (ops/convolution.cpp)
std::vector<KernelEntry> quantization_kernels();  // Requantize, Quantize, Dequantize
std::vector<KernelEntry> pixel_kernels();  // Input, MaxPool, AveragePool, GAP, Relu, Clip, Add

}  // namespace tessel::cpu
