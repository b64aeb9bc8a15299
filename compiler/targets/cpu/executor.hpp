// The CPU executor: runs a float or quantized graph IR, op by op (the golden model).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "compiler/targets/cpu/tensor_data.hpp"
#include "support/result.hpp"

namespace tessel::cpu {

/// Options of one run.
struct RunOptions {
  /// Called with every op result (not constants) as soon as it is computed, in topological
  /// order: calibration statistics and --dump-dir use it. A failure stops the run with it.
  std::function<Status(const std::string& tensor, const TensorData& value)> observer;
  /// Like `observer`, but a 4-D value arrives in whichever layout the executor holds it:
  /// `channels_last` true means its elements are in NHWC order (the shape stays NCHW). For
  /// statistics that do not depend on element order (calibration's max |x| and histograms) it
  /// saves a transpose of every op result. Either observer, or both, may be set.
  std::function<Status(const std::string& tensor, const TensorData& value, bool channels_last)>
      layout_observer;
  /// Keep every intermediate tensor in the returned map (default: graph outputs only; other
  /// tensors are freed after their last reader, which keeps VGG-19 within memory).
  bool keep_intermediates = false;
  /// When set, receives the wall seconds spent per op kind ("Conv", "Requantize", ...; an op
  /// group the fast path fused is counted under its joined name, "Conv+Requantize+Relu").
  std::map<std::string, double>* seconds_by_op = nullptr;
};

/// Runs graphs whose shapes are inferred. Kernels are chosen by dtype:
/// - f32 Conv through oneDNN, f32 Gemm, pools, elementwise, BatchNormalization, Scale, Softmax
///   in plain C++;
/// - a quantized graph (see docs/quantization.md): i8/u8 x i8 Conv through oneDNN with an s32
///   destination and no scales (exact where onednn_int8_conv_exact(); else through the exact
///   im2col loop of the 16-bit convolutions), an i8 x i8 Gemm with int32 dot products (exact, see
///   nhwc_kernels.hpp), any other integer Conv/Gemm in C++ with int64 accumulation and an int32
///   range check; Requantize, Add, pools, Clip, Concat, Quantize and Dequantize compute exactly
///   what support/int_ops.hpp defines.
/// Internally, 4-D activations between convolutions, pools, concats and elementwise ops are kept
/// channels-last (NHWC), the layout oneDNN's kernels read and write, so no op reorders them;
/// every value handed out (observer, result map) is NCHW. Without an observer and without
/// keep_intermediates, a Conv's int32 result feeding only a Requantize (and that only a
/// Relu/Clip) is requantized in the same pass and never stored, likewise Add -> Relu: the
/// values are bit-identical, only the unobservable intermediates are skipped.
/// oneDNN primitives and reordered weights are created on first use and reused by later runs.
class Executor {
 public:
  explicit Executor(const ir::Graph& graph);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Runs the graph on `inputs` (one per graph input, by name, with the input's shape and
  /// dtype). Returns the graph outputs (or every tensor with keep_intermediates). Fails with a
  /// message naming the op for: a missing/mis-shaped input, an unsupported op/dtype combination,
  /// an accumulator leaving int32.
  Result<std::map<std::string, TensorData>> run(const std::map<std::string, TensorData>& inputs,
                                                const RunOptions& options = {});

  /// Called by run_lockstep with each op result of each sample, in the value's own layout
  /// (as RunOptions::layout_observer).
  using SampleObserver = std::function<Status(std::size_t sample, const std::string& tensor,
                                              const TensorData& value, bool channels_last)>;
  /// Runs every sample (inputs as for `run`) in lockstep: op by op, each op on sample 0, 1, ...
  /// before the next op, so the observer sees an op's results for all samples in a row. The
  /// elements of a value the observer saw stay where they are, unchanged, until the op has run
  /// on the last sample (the TensorData object itself is moved away: keep a pointer to its
  /// elements, not to it). Calibration's histograms use this: they need every sample's
  /// max |x| before they count. Each sample's values are those of a separate `run`; no op is
  /// fused (as with any observer). Returns each sample's graph outputs; on a failure (the
  /// observer's included), `failed_sample`, when given, is set to the sample it occurred in.
  Result<std::vector<std::map<std::string, TensorData>>> run_lockstep(
      std::span<const std::map<std::string, TensorData>> samples, const SampleObserver& observer,
      std::size_t* failed_sample = nullptr);

  const ir::Graph& graph() const { return graph_; }

 private:
  /// The one op loop behind run and run_lockstep: sample_options[k] applies to sample k;
  /// `current_sample` (when given) holds the sample being run, so after a failure, its sample.
  Result<std::vector<std::map<std::string, TensorData>>> run_samples(
      std::span<const std::map<std::string, TensorData>* const> sample_inputs,
      std::span<const RunOptions> sample_options, std::size_t* current_sample = nullptr);

  struct Impl;
  const ir::Graph& graph_;
  std::unique_ptr<Impl> impl_;
};

/// Whether oneDNN's s8/u8 x s8 -> s32 convolutions are exact on this CPU: only where its
/// effective ISA has VNNI (AVX-512 VNNI or AVX-VNNI; AMX includes it). Without VNNI oneDNN
/// multiplies with vpmaddubsw, whose int16 sums of two u8 x s8 products saturate, and its s8
/// source goes through a +128 shift and a compensation: on session 17's AMD EPYC host (AVX2,
/// no AVX-512) its results differed from the int64 reference by up to ~1% (a 1x1 conv with
/// weight 127 computed as 128). Also false when the environment sets TESSEL_CPU_NO_ONEDNN_INT8
/// (to anything but "" or "0"). Decided once per process. Where false, the executor's 8-bit
/// convolutions take the im2col loop (exact: int16 operands, int64 sums) with the same fusions.
bool onednn_int8_conv_exact();

/// The network input every tool uses when none is given (`tessel infer`, calibration, and the
/// simulator's `tessel sim DIR` through the DRAM image codegen writes): N(0, 1) samples from
/// support/seeded.hpp's counter RNG with `seed`, shaped like the graph input.
TensorData default_input(const ir::Shape& shape, std::uint64_t seed = 0);

/// The rows of the smallest Embedding table that reads the i32 graph input `input` (token ids
/// are valid in [0, rows)); 0 when no Embedding reads it.
std::int64_t token_id_range(const ir::Graph& graph, const std::string& input);

/// default_input for graph input `input` of `graph`: f32 inputs as default_input(shape, seed);
/// i32 token ids uniform over [0, token_id_range) from the same counter RNG and seed.
TensorData default_graph_input(const ir::Graph& graph, const std::string& input,
                               std::uint64_t seed = 0);

/// The integer values a program's DRAM image holds for graph input `input` of quantized graph
/// `graph` given its value `x` (float, or i32 token ids), keyed as codegen::compile takes them:
/// token ids as they are, by the input's name; a float input quantized as the graph's Quantize
/// op does, by its integer tensor's name ("<input>.q"). Fails naming an input with neither.
Result<std::pair<std::string, std::vector<std::int32_t>>> input_codes(const ir::Graph& graph,
                                                                      const std::string& input,
                                                                      const TensorData& x);

}  // namespace tessel::cpu
