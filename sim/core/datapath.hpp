// Datapath: the functional (bit-exact) effect of each instruction on scratchpads and DRAM,
// per docs/isa.md and docs/quantization.md. Knows nothing of time.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"
#include "sim/core/amx_conv.hpp"
#include "sim/core/split_runner.hpp"
#include "sim/core/zeroed_bytes.hpp"
#include "support/int_ops.hpp"

namespace tessel::sim {

/// The vector unit's registers, set by `vcfg` (power-on: all 0).
struct VectorRegisters {
  std::int64_t mult_a = 0;
  std::int64_t mult_b = 0;
  int shift = 0;
  std::int32_t zero_point = 0;
  std::int32_t lo = 0;
  std::int32_t hi = 0;
};

/// What an instruction writes: its output box's byte range in scratchpad `sp` (a superset:
/// any gaps between its rows and pixels too), or with `sram` false a store's in DRAM; nothing
/// (begin = end) for vcfg, nop and finish.
struct WrittenBytes {
  bool sram = false;
  std::uint32_t sp = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};
WrittenBytes written_bytes(const isa::Instruction& instruction, int matrix_cols);

/// Which scratchpad bytes are an unchanged copy of DRAM bytes that no store wrote, followed
/// through the instructions in the order they execute (their data is not needed): the key of
/// the packed-weight caches. Datapath keeps one; DatapathWorker's caller keeps another, to
/// pack weights ahead of the datapath thread.
///
/// Scratchpad bytes that hold DRAM bytes, by first byte: [begin, end) holds DRAM bytes
/// [dram, dram + end - begin). Disjoint runs (CopyTracker's loaded copies, Datapath's deferred
/// loads).
struct DramRun {
  std::uint64_t end = 0;
  std::uint64_t dram = 0;
};
using DramRuns = std::map<std::uint64_t, DramRun>;

/// Takes the bytes [begin, end) out of `runs` (a run across either end keeps its bytes
/// outside), calling taken(from, to, dram) for each piece [from, to) taken, whose DRAM bytes
/// start at `dram`.
template <class Taken>
void take_runs(DramRuns& runs, std::uint64_t begin, std::uint64_t end, Taken&& taken) {
  if (begin >= end) return;
  auto it = runs.lower_bound(begin);
  if (it != runs.begin() && std::prev(it)->second.end > begin) --it;
  while (it != runs.end() && it->first < end) {
    const std::uint64_t at = it->first;
    const DramRun run = it->second;
    const std::uint64_t from = std::max(at, begin), to = std::min(run.end, end);
    it = runs.erase(it);
    taken(from, to, run.dram + (from - at));
    if (at < from) runs.emplace(at, DramRun{from, run.dram});
    if (to < run.end) runs.emplace(to, DramRun{run.end, run.dram + (to - at)});
  }
}

class CopyTracker {
 public:
  explicit CopyTracker(std::size_t scratchpads) : loaded_(scratchpads) {}
  /// Before `instruction` executes: the bytes it writes are no copy any more (a store's DRAM
  /// pages: stored to).
  void before(const isa::Instruction& instruction, int matrix_cols);
  /// After a load executes: its scratchpad bytes are a copy of its DRAM bytes when both are
  /// one run without padding.
  void after_load(const isa::Load& x);
  /// Scratchpad bytes [begin, end) of `sp` may have changed.
  void written(std::uint32_t sp, std::uint64_t begin, std::uint64_t end);
  /// DRAM bytes [begin, end) may have changed.
  void stored(std::uint64_t begin, std::uint64_t end);
  /// The DRAM address that [begin, end) of scratchpad `sp` is an unchanged copy of, when one
  /// load run (or adjacent runs of contiguous DRAM) put them there, nothing wrote them since
  /// and no store has ever written those DRAM bytes: then they equal the DRAM image's
  /// bytes as the program started. Else none.
  std::optional<std::uint64_t> source(std::uint32_t sp, std::uint64_t begin,
                                      std::uint64_t end) const;

 private:
  static constexpr std::uint64_t kPageBytes = 4096;
  /// Per scratchpad: the runs loads copied, with no write since.
  std::vector<DramRuns> loaded_;
  /// Per kPageBytes page of DRAM: whether a store wrote any of its bytes.
  std::vector<bool> dram_stored_;
};

/// A dense conv's weights as kernels::conv_dense reads them: kernels::dense_index layout in
/// column blocks of `block` (kernels::dense_block), and the input channels of the pairs kept
/// (kernels::drop_zero_pairs; empty: every pair).
struct DenseWeights {
  kernels::PairWeights packed;
  std::vector<std::int32_t> pair_channels;
  std::int64_t block = 0;
};

/// Packs dense conv `x`'s raw weights ([ocb][icb][ky][kx][r][c], `weight_bytes` each, for a
/// `rows` x `cols` matrix unit) into `out` (its allocations reused).
void pack_dense_weights(const isa::Conv& x, int rows, int cols, int weight_bytes,
                        const std::uint8_t* raw, DenseWeights& out);

/// Whether the datapath checks `instruction`'s data (a table or parameters in SRAM, a gather's
/// ids in DRAM) before it runs, and may record a Datapath::BadTable: a per-channel requantize,
/// softmax, norm, gather.
inline bool is_data_checked(const isa::Instruction& instruction) {
  if (const auto* requant = std::get_if<isa::Requant>(&instruction)) return requant->per_channel;
  return std::holds_alternative<isa::Softmax>(instruction) ||
         std::holds_alternative<isa::Norm>(instruction) ||
         std::holds_alternative<isa::Gather>(instruction);
}

/// Scratchpad and DRAM contents and the instruction semantics over them.
/// Precondition of execute(): the instruction passed isa::check and every byte it touches is
/// inside its scratchpads and DRAM (the simulator checks bounds before executing).
class Datapath {
 public:
  /// Zeroed scratchpads of the config's sizes over `dram` (not owned; must outlive this).
  /// `reference_kernels` runs every conv through the loop-by-loop transcription of
  /// docs/isa.md instead of the vectorised loops (tests compare the two).
  /// `threads` = 2 runs large dense convs' pixels half on a helper thread (the results are
  /// the same: each output pixel is computed by one thread, in the same arithmetic).
  /// `dram` changes only through store instructions once execute() has run (the weight cache
  /// trusts loaded copies of DRAM bytes no store wrote).
  Datapath(const HwConfig& config, std::vector<std::uint8_t>& dram, bool reference_kernels = false,
           int threads = 1);
  ~Datapath();

  /// Applies `instruction`'s effect (nop, finish: none). `prepacked`, for a dense conv: its
  /// weights packed ahead (pack_dense_weights of the same bytes), used instead of the cache's
  /// where no AMX tiles are wanted.
  void execute(const isa::Instruction& instruction, const DenseWeights* prepacked = nullptr);

  /// Scratchpad `id` for the caller to read or write (tests): its cached weight packings are
  /// dropped, as after any write. Writes through the span after a later execute() are not
  /// seen by the cache: call scratchpad() again before writing.
  std::span<std::uint8_t> scratchpad(std::size_t id) {
    settle_all();
    mark_written(static_cast<std::uint32_t>(id), 0, scratchpads_[id].size());
    return scratchpads_[id];
  }
  /// How many times a dense conv's weights were packed, in either layout (a weight cache miss;
  /// tests): the AMX tiles on a CPU with AMX, the pair layout otherwise.
  std::uint64_t weight_packings() const { return weight_packings_; }
  /// Hands the scratchpad contents over (the Datapath is not used afterwards).
  std::vector<ScratchpadBytes> take_scratchpads() {
    settle_all();
    return std::move(scratchpads_);
  }
  /// Defers weight loads that are one run on both sides (DatapathWorker, whose dense convs
  /// come with their weights packed ahead from DRAM): such a load's copy is made only when
  /// an instruction reads or partly writes those scratchpad bytes, a store writes the DRAM
  /// bytes it copies, or the scratchpads are read out; a dense conv given its packing does not
  /// read them, and a later load over all of them drops the copy. The same bytes come out.
  void defer_weight_loads() { deferred_.resize(scratchpads_.size()); }
  /// Bytes of the weight loads deferred, and of those copied since (settled); the rest were
  /// overwritten first or are still pending (tests).
  std::uint64_t deferred_weight_bytes() const { return deferred_bytes_; }
  std::uint64_t settled_weight_bytes() const { return settled_bytes_; }
  const VectorRegisters& registers() const { return registers_; }

  /// A requantize whose per-channel table held an entry outside docs/isa.md's ranges
  /// (`0 <= M < 2^31`, `0 <= r <= 62`), a softmax whose exp table or a norm whose parameters
  /// did: table entries are data, so no check of the instruction word sees them.
  /// `per_channel_requant` counts the data-checked instructions (per-channel requantizes,
  /// softmax, norm: is_data_checked) this datapath ran before it (the simulator maps it to the
  /// instruction); `message` names the channel or entry, its scratchpad and byte, and values.
  struct BadTable {
    std::uint64_t per_channel_requant = 0;
    std::string message;
  };
  /// The first such requantize: it wrote nothing, and the datapath went on with the next
  /// instruction (whose data may then be wrong; the simulator reports an `invalid_data` fault).
  const std::optional<BadTable>& bad_table() const { return bad_table_; }

 private:
  void execute_load(const isa::Load& x);
  /// Makes the copies of the deferred loads over any byte of [begin, end) of `sp`.
  void settle(std::uint32_t sp, std::uint64_t begin, std::uint64_t end);
  /// Whether a deferred load holds any byte of [begin, end) of `sp`.
  bool deferred_over(std::uint32_t sp, std::uint64_t begin, std::uint64_t end) const;
  /// Makes the copies of the deferred loads from any byte of DRAM [begin, end).
  void settle_dram(std::uint64_t begin, std::uint64_t end);
  void settle_all();
  /// Before `instruction` runs: settles the deferred loads it reads (a dense conv's weights
  /// are settled in execute_conv, where it is known whether it reads them) or writes, or
  /// whose DRAM bytes it stores to; a deferred load over all of a deferred load's bytes
  /// drops it. Returns whether `instruction` itself is a load to defer.
  bool settle_before(const isa::Instruction& instruction);
  void execute_store(const isa::Store& x);
  /// A gather (datapath_dma.cpp): its ids checked first (an id outside [-table_rows,
  /// table_rows): nothing written, bad_table_ set), then each row copied.
  void execute_gather(const isa::Gather& x);
  void execute_conv(const isa::Conv& x, const DenseWeights* prepacked);
  void execute_conv_reference(const isa::Conv& x);
  struct PackedWeights;
  /// A dense conv's packed weights, from weight_cache_ when an entry for the same scratchpad
  /// address, size and geometry was packed after the last write to any page of those bytes
  /// or, after such a write, holds the same raw bytes (compared), else packed anew: with
  /// `amx`, the entry's AMX tiles (packed straight from the raw bytes), else its pair_index
  /// layout (the other packing is not made).
  const PackedWeights& dense_weights(const isa::Conv& x, std::int64_t in_channels,
                                     std::int64_t out_channels, const std::uint8_t* weights,
                                     std::size_t raw_bytes, bool amx);
  /// Marks the scratchpad bytes `instruction` writes (its output box's byte range) as written,
  /// and a store's DRAM bytes as stored to.
  void note_writes(const isa::Instruction& instruction);
  /// [begin, end) of scratchpad `sp` may have changed: its pages take a new write generation.
  void mark_written(std::uint32_t sp, std::uint64_t begin, std::uint64_t end);
  /// Whether a page holding any of [begin, end) of `sp` was written after generation `since`.
  bool written_since(std::uint32_t sp, std::uint64_t begin, std::uint64_t end,
                     std::uint64_t since) const;
  void execute_requant(const isa::Requant& x);
  /// Whether table entries [0, count) at `table` (per-channel requantize `x`'s, from entry
  /// `first` on) are within docs/isa.md's ranges; the first time one is not, records it in
  /// bad_table_.
  bool table_ok(const isa::Requant& x, const std::uint8_t* table, std::uint64_t first,
                std::uint64_t count);
  void execute_add(const isa::Add& x);
  void execute_pool(const isa::Pool& x);
  void execute_copy(const isa::Copy& x);
  /// ISA version 3's vector ops (sim/core/datapath_v3.cpp): table lookup and row reduction.
  void execute_lut(const isa::Lut& x);
  void execute_reduce(const isa::Reduce& x);
  /// The broadcast multiply (datapath_v3.cpp): intops::mul_requantize, the golden Mul's rule.
  void execute_mul(const isa::Mul& x);
  /// The matrix unit's MatMul of two activations (datapath_matmul.cpp): the golden
  /// executor's integer MatMul, b row-major or read transposed.
  void execute_matmul(const isa::Matmul& x);
  /// execute_matmul through kernels::conv_dense (a as pixels, b as a 1x1 conv's weights);
  /// false, with nothing done, where the loop of execute_matmul is needed (reference kernels,
  /// operands over 2 bytes, accumulator rows that overlap).
  bool execute_matmul_dense(const isa::Matmul& x);
  /// The row normaliser (sim/core/datapath_norm.cpp): intops::softmax_row and intops::norm_row,
  /// the golden Softmax's and LayerNorm/RMSNorm's rules, after checking their table or
  /// parameters (a bad entry: nothing written, bad_table_ set).
  void execute_softmax(const isa::Softmax& x);
  void execute_norm(const isa::Norm& x);
  /// Records the first data fault of a data-checked instruction (bad_table_).
  void note_bad_data(std::string message);
  /// Calls fn(begin, end) over [0, count): split between this thread and the helper when
  /// there is one and `elements` (the instruction's work) is at least kSplitMinElements,
  /// else in one call. `fn` must be safe to run on disjoint ranges at once.
  void for_split(std::int64_t count, std::int64_t elements,
                 const std::function<void(std::int64_t, std::int64_t)>& fn);
  /// Work below which a second thread costs more than it saves (a hand-over is ~1 us).
  static constexpr std::int64_t kSplitMinElements = 4096;

  std::vector<ScratchpadBytes> scratchpads_;
  std::unique_ptr<SplitRunner> split_;  // with threads >= 2
  std::vector<std::uint8_t>& dram_;
  bool reference_kernels_ = false;
  VectorRegisters registers_;
  std::vector<std::string> scratchpad_names_;
  std::uint64_t per_channel_requants_ = 0;  // data-checked instructions run so far
  std::optional<BadTable> bad_table_;
  int matrix_rows_ = 0;
  int matrix_cols_ = 0;
  int weight_bytes_ = 1;
  // Working buffers of the fast conv, kept to reuse their allocations.
  std::vector<std::int16_t> packed_weights_;  // a depthwise conv's weights, int16 [tap][o]
  std::vector<std::uint32_t> sums_;
  std::vector<std::int32_t> pixel_;
  std::vector<std::int16_t> image_;  // a dense conv's input, int16, zero-padded (when needed)
  std::vector<std::int64_t> pixel_offsets_, tap_offsets_, slot_offsets_;  // kernels::conv_dense
  kernels::PairWeights matmul_weights_;    // a matmul's b, as a 1x1 conv's weights
  std::vector<std::uint8_t> matmul_bias_;  // a matmul's bias, read before any result is written
  /// `count` consecutive input channels from `channel`, copied to a pixel's values from `at`
  /// (a dense conv's copy that holds only the channels its weights use).
  struct KeptRun {
    std::int64_t channel = 0;
    std::int64_t at = 0;
    std::int64_t count = 0;
  };
  std::vector<KeptRun> kept_runs_;
  /// Dense conv weights as kernels::conv_dense reads them, with where and how many raw bytes
  /// and the geometry (taps, in, out, rows, weight bytes) they were packed from. The tiles of a
  /// layer, and the layers of a fused group whose weights stay on chip, reuse them instead of
  /// repacking.
  struct PackedWeights {
    std::uint32_t sp = 0;
    std::uint64_t addr = 0;
    std::array<std::int64_t, 5> key{};
    std::uint64_t raw_bytes = 0;
    std::uint64_t generation = 0;  // write_generation_ when last found valid
    /// The DRAM address the packed bytes were loaded from (CopyTracker::source), if they were:
    /// any scratchpad copy of those DRAM bytes uses the entry, and `raw` is not kept.
    std::optional<std::uint64_t> source;
    std::vector<std::uint8_t> raw;  // without a source: the bytes packed (compared after a write)
    DenseWeights dense;             // dense.packed empty: not (yet) packed
    kernels::amx::Weights amx;      // AMX tiles; none: not (yet) packed
    std::uint64_t last_use = 0;
  };
  /// Least recently used goes first. ResNet-50 npc19 optimal (21 weight addresses, ~31 address
  /// and geometry pairs): 8 entries repacked 1595 of 7125 uses, 32 repack 596.
  static constexpr std::size_t kWeightCacheEntries = 32;
  std::vector<PackedWeights> weight_cache_;
  std::uint64_t weight_uses_ = 0;
  std::uint64_t weight_packings_ = 0;
  /// Write generations of kPageBytes pages, per scratchpad: a cache entry is valid while no
  /// page of its raw weights has a later generation than the entry's (no bytes are compared).
  static constexpr std::uint64_t kPageBytes = 4096;
  std::vector<std::vector<std::uint64_t>> page_generation_;
  std::uint64_t write_generation_ = 0;
  CopyTracker copies_;
  /// Deferred weight loads per scratchpad: copies not made yet. Empty (no scratchpad) unless
  /// defer_weight_loads() was called.
  std::vector<DramRuns> deferred_;
  std::uint64_t deferred_bytes_ = 0, settled_bytes_ = 0;
};

/// Reads a little-endian signed element of `bytes` bytes (1, 2, 4) at `p`. Inline: the
/// datapath's loops call it per element (GCC merges the byte loads into one load).
inline std::int32_t read_element(const std::uint8_t* p, std::uint64_t bytes) {
  switch (bytes) {
    case 1:
      return static_cast<std::int8_t>(p[0]);
    case 2:
      return static_cast<std::int16_t>(static_cast<std::uint16_t>(p[0] | (p[1] << 8)));
    default: {
      const std::uint32_t u = std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) |
                              (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
      return static_cast<std::int32_t>(u);
    }
  }
}

/// `count` elements of `bytes` (1 or 2) at `src`, sign-extended, then rounded right by the
/// conv's or matmul's input shift `u` (round half away; docs/quantization.md, "Input shift on
/// Conv/Gemm").
template <class T>
void widen_elements(const std::uint8_t* src, std::uint64_t bytes, std::int64_t count, T* dst,
                    int u) {
  if (bytes == 1) {
    for (std::int64_t i = 0; i < count; ++i) dst[i] = static_cast<std::int8_t>(src[i]);
  } else if (std::endian::native == std::endian::little && sizeof(T) == 2) {
    std::memcpy(dst, src, static_cast<std::size_t>(count) * 2);  // the same bytes
  } else {
    for (std::int64_t i = 0; i < count; ++i) dst[i] = static_cast<T>(read_element(src + 2 * i, 2));
  }
  if (u > 0)
    for (std::int64_t i = 0; i < count; ++i)
      dst[i] = static_cast<T>(intops::round_half_away(dst[i], u));
}

/// Writes the low `bytes` bytes of `value`, little-endian, at `p`.
inline void write_element(std::uint8_t* p, std::uint64_t bytes, std::int32_t value) {
  const auto u = static_cast<std::uint32_t>(value);
  for (std::uint64_t i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(u >> (8 * i));
}

}  // namespace tessel::sim
