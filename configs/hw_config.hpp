// The typed hardware config (HwConfig) and its loader: one YAML file drives every stage.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/diagnostic.hpp"
#include "support/result.hpp"

namespace tessel {

/// The kinds of data a scratchpad may hold. Order is the canonical serialisation order.
enum class DataKind : std::uint8_t {
  kActivations,   ///< layer inputs (the matrix unit's left operand), int8/int16
  kWeights,       ///< filter / GEMM weights (the matrix unit's right operand)
  kAccumulators,  ///< int32-class partial sums (and biases) written by the matrix unit
  kOutputs,       ///< requantized results of the vector unit, on their way to DRAM
};

/// All kinds, in canonical order.
inline constexpr std::array<DataKind, 4> kAllDataKinds = {
    DataKind::kActivations, DataKind::kWeights, DataKind::kAccumulators, DataKind::kOutputs};

/// "activations", "weights", "accumulators", "outputs" (the YAML spelling).
std::string_view to_string(DataKind kind);

/// Inverse of to_string; nullopt for anything else.
std::optional<DataKind> data_kind_from_string(std::string_view text);

/// The R x C matrix unit. Convention (VTA's GEMM core with BATCH=1): each cycle it multiplies
/// one `rows`-element activation vector by a `rows` x `cols` weight block and adds the `cols`
/// products into accumulators; `rows` is the reduction (input-channel) dimension.
struct MatrixUnitConfig {
  int rows = 0;              ///< reduction width, 1..4096
  int cols = 0;              ///< output width, 1..4096
  int input_bits = 0;        ///< activation width: 8 or 16
  int weight_bits = 0;       ///< weight width: 8 or 16
  int accumulator_bits = 0;  ///< multiple of 8 in [16, 64], >= input_bits + weight_bits
  int fill_cycles = 0;       ///< cycles before the first result of a tile (default: rows)
  int drain_cycles = 0;      ///< cycles after the last input of a tile (default: cols)
  /// The array takes its held operand from an activation scratchpad too, row-major or
  /// transposed (ISA `matmul`: MatMul of two activations, Q x K^T without a transpose pass).
  bool activation_operands = false;
  /// Rows of a held block (or, for a transposed matmul operand, columns) that enter the
  /// array's shadow buffer per cycle: a block loads in W = ceil(rows / weight_load_rows) cycles
  /// (docs/timing.md "conv"). 1 is one row a cycle (TPU-style); a wider load path is what
  /// lets a GEMV (LLM decode, fully connected layers at batch 1) keep up with DRAM.
  int weight_load_rows = 1;

  /// Bytes of one rows x cols weight block.
  std::int64_t weight_tile_bytes() const;
  /// Bytes of one rows-element activation vector.
  std::int64_t activation_tile_bytes() const;
  /// Bytes of one cols-element accumulator vector.
  std::int64_t accumulator_tile_bytes() const;
  /// Bytes of one cols-element output vector (outputs have input_bits).
  std::int64_t output_tile_bytes() const;
  /// Bytes of one tile of `kind` (one of the four above).
  std::int64_t tile_bytes(DataKind kind) const;

  bool operator==(const MatrixUnitConfig&) const = default;
};

/// The vector unit (requantize, activation, pooling, elementwise) working on `lanes` elements.
struct VectorUnitConfig {
  int lanes = 0;  ///< elements per cycle, 1..4096
  /// The unit holds a 256-entry lookup table (ISA `lut`: unary nonlinearities of 8-bit inputs).
  bool lookup_table = false;
  /// The unit reduces rows (ISA `reduce`: max, sum, sum of squares into int32).
  bool row_reduce = false;
  /// The unit multiplies two operands, the second broadcast per pixel or per channel, and
  /// requantizes (ISA `mul`: the graph's broadcasting Mul: gating, SE blocks, row scales).
  bool broadcast_multiply = false;
  /// The unit normalises rows (ISA `softmax` and `norm`: the integer Softmax with an optional
  /// causal mask, LayerNorm and RMSNorm, each row's statistics, reciprocal or rsqrt inside).
  bool row_normalise = false;

  bool operator==(const VectorUnitConfig&) const = default;
};

/// Documented limits of sizes the schema would allow but no machine holds (docs/config.md,
/// "Limits"); the loader refuses a config past them with a located error before anything is
/// allocated.
/// A scratchpad's size: the simulator and the RTL harness hold each one in host memory.
inline constexpr std::int64_t kMaxScratchpadBytes = std::int64_t{1} << 30;
/// Scratchpads per config: the ISA's scratchpad id fields are 4 bits wide.
inline constexpr std::size_t kMaxScratchpads = 16;
/// DRAM bandwidth range: at least 1/1024 byte per cycle (so cycles = bytes * cycles-per-byte
/// stays far inside int64 for any traffic below 2^52 bytes: the 1 B/s bus made cycles wrap),
/// at most 1 PB/s.
inline constexpr double kMinDramBytesPerCycle = 1.0 / 1024;
inline constexpr double kMaxDramBytesPerSecond = 1e15;

/// One named on-chip SRAM. `holds` lists the kinds it may hold (a unified buffer holds all).
struct ScratchpadConfig {
  std::string name;             ///< unique, [A-Za-z0-9_-]+
  std::int64_t size_bytes = 0;  ///< > 0, a multiple of banks * port_width_bytes
  int banks = 0;                ///< power of two, 1..1024
  int port_width_bytes = 0;     ///< bytes per bank access per cycle, power of two, 1..4096
  std::vector<DataKind> holds;  ///< non-empty, no repeats, canonical order after loading

  /// True when `kind` is in `holds`.
  bool may_hold(DataKind kind) const;

  bool operator==(const ScratchpadConfig&) const = default;
};

/// The off-chip memory as the DMA engines see it.
struct DramConfig {
  double bandwidth_bytes_per_second = 0;  ///< sustained peak, > 0 (YAML: "1.5GB/s")
  double latency_ns = 0;                  ///< first-byte latency of one request, >= 0
  int burst_bytes = 0;                    ///< transfer granule, power of two, 1..65536
  int max_outstanding_requests = 0;       ///< in-flight bursts, 1..1024

  bool operator==(const DramConfig&) const = default;
};

/// Depths of the decoupled access/execute queues (per engine).
struct QueueConfig {
  int instruction_queue_depth = 0;  ///< instructions per engine queue, 1..65536
  int token_fifo_depth = 0;         ///< dependency tokens per FIFO, 1..65536

  bool operator==(const QueueConfig&) const = default;
};

/// The optional `energy:` section (docs/energy.md): the process node and DRAM kind whose
/// published figures configs/energy_model.hpp derives every per-action energy and area from,
/// and per-entry overrides (all >= 0). An absent entry inherits the derived figure.
struct EnergyConfig {
  std::string technology = "45nm";               ///< a node of energy_model.hpp's table
  std::string dram_technology = "ddr3";          ///< a DRAM kind of energy_model.hpp's table
  std::optional<double> mac_pj;                  ///< one multiply-accumulate
  std::optional<double> sram_read_pj_per_byte;   ///< one byte read from any scratchpad
  std::optional<double> sram_write_pj_per_byte;  ///< one byte written to any scratchpad
  std::optional<double> dram_pj_per_byte;        ///< one byte moved to or from DRAM
  std::optional<double> vector_op_pj;            ///< one requantized or added element
  std::optional<double> leakage_mw_per_mm2;      ///< static power per area

  bool operator==(const EnergyConfig&) const = default;
};

/// Optional FPGA implementation target for hw/ (independent of the modelled clock_mhz).
struct FpgaTargetConfig {
  std::string part;      ///< vendor part number, e.g. "xc7z020clg400-1"
  double clock_mhz = 0;  ///< synthesis clock target, > 0

  bool operator==(const FpgaTargetConfig&) const = default;
};

/// A validated hardware config. Every instance produced by the loader satisfies all the rules
/// in docs/config.md (for instance every DataKind has a scratchpad that may hold it), so
/// consumers need not re-check them.
/// The DMA data mover's bytes a cycle (the RTL's DW) for DRAM bursts of `burst_bytes`: the
/// burst, within [16, 64]. The timing contract charges it where the mover, not the DRAM, can
/// bound a DMA (a gather's rows: docs/timing.md "gather"). The one rule: the simulator, hwgen
/// and the scheduler's Machine take it from here.
std::int64_t dma_mover_bytes_per_cycle(std::int64_t burst_bytes);

struct HwConfig {
  std::string name;         ///< short identifier, [A-Za-z0-9._-]+
  std::string description;  ///< free text; not part of the content hash
  double clock_mhz = 0;     ///< accelerator clock, > 0
  MatrixUnitConfig matrix;
  VectorUnitConfig vector;
  std::vector<ScratchpadConfig> scratchpads;  ///< in file order, at least one
  DramConfig dram;
  QueueConfig queues;
  std::optional<EnergyConfig> energy;
  std::optional<FpgaTargetConfig> fpga;

  // ---- derived figures ----
  /// rows * cols.
  std::int64_t macs_per_cycle() const;
  /// 2 * macs_per_cycle * clock (a MAC counts as two operations), in 1e9 op/s.
  double peak_gops() const;
  /// DRAM bandwidth divided by the clock.
  double dram_bytes_per_cycle() const;
  /// macs_per_cycle / dram_bytes_per_cycle: the arithmetic intensity (MACs per DRAM byte) a
  /// layer needs to be compute-bound (the roofline's ridge point).
  double machine_balance_macs_per_dram_byte() const;
  /// ceil(latency_ns * clock_mhz / 1000).
  std::int64_t dram_latency_cycles() const;
  /// The DRAM bytes per cycle a long stream of bursts sustains under the DRAM model
  /// (docs/timing.md "DMA"): min(b, O * B / (L + ceil(B / b))) with b = dram_bytes_per_cycle,
  /// O outstanding bursts of B bytes and L = dram_latency_cycles. Below b when the slots do
  /// not cover a burst's round trip (the DMA is latency-bound, Little's law).
  double dram_sustained_bytes_per_cycle() const;
  /// The DMA data mover's bytes a cycle (the RTL's DW): dma_mover_bytes_per_cycle(burst).
  std::int64_t dma_mover_bytes_per_cycle() const;
  /// Sum of all scratchpad sizes.
  std::int64_t total_onchip_bytes() const;
  /// The first scratchpad (in file order) that may hold `kind`; a validated config always has
  /// one.
  const ScratchpadConfig& scratchpad_for(DataKind kind) const;
  /// Indices of every scratchpad that may hold `kind`, in file order.
  std::vector<std::size_t> scratchpads_holding(DataKind kind) const;
  /// The scratchpad called `scratchpad_name`, or nullptr.
  const ScratchpadConfig* find_scratchpad(std::string_view scratchpad_name) const;

  bool operator==(const HwConfig&) const = default;
};

// ---- serialisation ----

/// Canonical JSON for tools and reports: schema order, units in the key names
/// (`size_bytes`, `bandwidth_bytes_per_second`), 2-space indent, shortest round-trip numbers.
std::string to_canonical_json(const HwConfig& config);

/// Canonical YAML in the input schema (sizes as plain byte counts, bandwidth as "<n>B/s");
/// parse_hw_config(to_yaml(c)) == c.
std::string to_yaml(const HwConfig& config);

/// The derived figures above as a JSON object text (for `tessel config show --json`).
std::string derived_figures_json(const HwConfig& config);

/// A human-readable table of the config and its derived figures (for `tessel config show`).
std::string describe(const HwConfig& config);

/// 16 hex digits: FNV-1a 64 of the canonical JSON without `name` and `description`, so it
/// identifies the hardware, not its label. Stable across runs, platforms and key order.
std::string content_hash(const HwConfig& config);

// ---- loading ----

/// A value to set before validation, addressed by YAML key path: "matrix.rows",
/// "dram.bandwidth", "scratchpads[0].size". `value_yaml` is YAML text ("32", "2GB/s",
/// "[weights, activations]"). Missing maps on the path are created; a sequence index must exist.
struct KeyOverride {
  std::string key_path;
  std::string value_yaml;
};

/// Parses "key.path=value" (as given on a command line) into a KeyOverride.
Result<KeyOverride> parse_key_override(std::string_view assignment);

/// What a load found: the config when valid, otherwise every problem (sorted by position).
struct HwConfigCheck {
  std::optional<HwConfig> config;
  std::vector<Diagnostic> diagnostics;

  bool ok() const { return config.has_value(); }
};

/// Parses and validates YAML `text`; `file_label` is used in diagnostics. Never throws.
HwConfigCheck check_hw_config_text(std::string_view text, const std::string& file_label,
                                   const std::vector<KeyOverride>& overrides = {});

/// Reads `path` and validates it (diagnostics name `path` as given). Never throws.
HwConfigCheck check_hw_config_file(const std::string& path,
                                   const std::vector<KeyOverride>& overrides = {});

/// As check_hw_config_text; a failure's message is every diagnostic line, joined by '\n'.
Result<HwConfig> parse_hw_config(std::string_view text, const std::string& file_label = "<string>",
                                 const std::vector<KeyOverride>& overrides = {});

/// Input boundary: loads and validates `path`, throwing InputError with every diagnostic.
HwConfig load_hw_config(const std::string& path, const std::vector<KeyOverride>& overrides = {});

/// The shipped configs folder of this source tree (absolute; fixed at build time).
std::string hw_config_dir();

/// hw_config_dir() + "/npc19-deepfusion.yaml": the default config of `tessel run`.
std::string default_hw_config_path();

/// What every `--hw` accepts: a path (it has a '/' or ends in .yaml/.yml) as given, otherwise a
/// shipped config's name, hw_config_dir() + "/NAME.yaml" ("edge-small").
std::string resolve_hw_config(const std::string& name_or_path);

}  // namespace tessel
