// The end-to-end pipeline: quantize a model once, then per policy schedule, compile, simulate
// and check the simulator against the golden executor and the scheduler's predictions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/codegen.hpp"
#include "compiler/ir/graph.hpp"
#include "compiler/quant/config.hpp"
#include "compiler/targets/cpu/tensor_data.hpp"
#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"
#include "scheduler/driver.hpp"
#include "sim/simulator.hpp"
#include "support/result.hpp"

namespace tessel::pipeline {

/// A model made ready for every policy: BatchNorm folded, quantized, run once on the golden
/// executor. The same quantized graph feeds every policy's codegen.
struct PreparedModel {
  std::string name;
  ir::Graph prepared;   ///< the float graph (BN folded) the scheduler partitions
  ir::Graph quantized;  ///< what codegen lowers and the golden executor runs
  /// The network input(s) quantized as the graph's Quantize op does, by integer tensor name
  /// ("input.q"), NCHW: what codegen writes into the DRAM image.
  std::map<std::string, std::vector<std::int32_t>> input_values;
  /// The golden executor's graph outputs (dequantized float32, NCHW), by float tensor name.
  std::map<std::string, cpu::TensorData> golden;
  double quantize_seconds = 0;
  double golden_seconds = 0;
};

/// Prepares `graph` for `config`: folds BatchNorm, quantizes with `qconfig` (its `bits` should
/// be the config's matrix.input_bits), runs the golden executor on `cpu::default_input(shape,
/// input_seed)`. With `pools_before_concat`, rewrites the float and quantized graphs with
/// passes::pools_before_concat after quantizing (what `optimal` compiles; the integers stay the
/// same). Fails with the quantizer's, the pass' or the executor's message.
Result<PreparedModel> prepare_model(const ir::Graph& graph, const quant::QuantConfig& qconfig,
                                    std::uint64_t input_seed = 0, bool pools_before_concat = false);

/// How a policy's program is run.
struct RunOptions {
  bool timing_only = false;  ///< no data: cycles and bytes only, no bit-exactness check
  std::string trace_path;    ///< Chrome trace-event JSON of the simulation, empty for none
  /// When not bit exact, re-run the golden executor with every intermediate kept to name the
  /// first wrong DRAM tensor in `mismatch`. Off in forked workers (tools/run/workers.hpp): the
  /// executor uses OpenMP, which does not survive fork().
  bool diagnose_mismatch = true;
  /// What `optimal` (and `opfusion`) minimise (`tessel run --objective`).
  sched::Objective objective = sched::Objective::Bytes;
};

/// One policy, end to end.
struct PolicyResult {
  std::string policy;
  sched::ScheduledNet scheduled;
  codegen::CompiledProgram compiled;
  std::vector<isa::Word> words;  ///< the encoded program
  sim::SimReport report;
  /// Simulator outputs dequantized (float32, NCHW) by float tensor name; empty in timing-only.
  std::map<std::string, std::vector<float>> outputs;
  /// Full mode: every network output equals the golden executor's, bit for bit.
  std::optional<bool> bit_exact;
  std::string mismatch;  ///< the first difference, when not bit exact
  double schedule_seconds = 0, compile_seconds = 0, simulate_seconds = 0;

  /// Simulated DRAM bytes by the scheduler's classes.
  std::int64_t sim_weights_read() const;
  std::int64_t sim_activations_read() const;
  std::int64_t sim_activations_written() const;
  /// Simulated instruction fetch (the schedule's instruction_fetch_bytes predicts it).
  std::int64_t sim_instructions_read() const;
};

/// Schedules `model.prepared` with `policy` (objective: bytes), compiles `model.quantized`,
/// simulates it on `config` and, in full mode, compares the outputs with `model.golden`.
/// Fails with the scheduler's, codegen's or simulator's message; a simulated fault fails too.
/// It is compile_policy followed by simulate_policy.
Result<PolicyResult> run_policy(const PreparedModel& model, const HwConfig& config,
                                const std::string& policy, const RunOptions& options = {});

/// run_policy's first half: schedules `model.prepared` (options.objective) and compiles
/// `model.quantized`; fills `scheduled`, `compiled`, `words` and their seconds.
Result<PolicyResult> compile_policy(const PreparedModel& model, const HwConfig& config,
                                    const std::string& policy, const RunOptions& options = {});

/// run_policy's second half: simulates `r` (from compile_policy with the same model and
/// config) and fills `report`, `simulate_seconds` and, in full mode, `outputs`, `bit_exact`
/// and `mismatch`. Fails with the simulator's message; a simulated fault fails too.
Status simulate_policy(const PreparedModel& model, const HwConfig& config, PolicyResult& r,
                       const RunOptions& options = {});

/// The model `policy` compiles, as `tessel run` prepares it: BatchNorm unfolded into depthwise
/// convs for layerwise (passes::graph_for_policy), pools before the Concats they alone read
/// for optimal (prepare_model's pools_before_concat), else prepare_model(graph) itself.
Result<PreparedModel> prepare_model_for_policy(const ir::Graph& graph,
                                               const quant::QuantConfig& qconfig,
                                               std::uint64_t input_seed, const std::string& policy);

/// Reads every network output of a finished run from its final DRAM, dequantized to float32
/// NCHW exactly as the graph's Dequantize op computes (`(q - zp) * double(scale)` as float).
Result<std::map<std::string, std::vector<float>>> read_outputs(
    const ir::Graph& quantized, const codegen::CompiledProgram& compiled, const sched::Net& net,
    const std::vector<std::uint8_t>& dram, int element_bytes);

}  // namespace tessel::pipeline
