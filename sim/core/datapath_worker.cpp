// DatapathWorker: a single-producer, single-consumer queue of instructions and its thread.
#include "sim/core/datapath_worker.hpp"

#include <algorithm>
#include <optional>
#include <variant>

#include "sim/core/amx_conv.hpp"
#include "sim/core/costs.hpp"
#include "sim/core/split_runner.hpp"

namespace tessel::sim {
namespace {

// Checks before sleeping: the worker waits for instructions that come every few microseconds
// (the timing model's share of one); the caller, ahead with a full queue, sleeps soon.
constexpr int kWorkerSpins = 4000;
constexpr int kCallerSpins = 200;

}  // namespace

DatapathWorker::DatapathWorker(const HwConfig& config, std::vector<std::uint8_t>& dram,
                               int datapath_threads)
    : datapath_(config, dram, false, datapath_threads),
      dram_(dram),
      matrix_rows_(config.matrix.rows),
      matrix_cols_(config.matrix.cols),
      weight_bytes_(config.matrix.weight_bits / 8),
      prepack_(!kernels::amx::available()),
      copies_(config.scratchpads.size()),
      slots_(kSlots),
      thread_([this] { loop(); }) {
  // The weights the convs read come packed ahead: their loads' copies wait until needed.
  if (prepack_) datapath_.defer_weight_loads();
}

DatapathWorker::~DatapathWorker() {
  wait_until_queued_at_most(0);
  quit_.store(true, std::memory_order_seq_cst);
  work_signal_.fetch_add(1, std::memory_order_seq_cst);
  work_signal_.notify_one();
  thread_.join();
}

void DatapathWorker::execute(const isa::Instruction& instruction) {
  const std::uint64_t queued = queued_.load(std::memory_order_relaxed);
  if (queued - done_.load(std::memory_order_acquire) == kSlots)
    wait_until_queued_at_most(kSlots / 2);
  Slot& slot = slots_[queued % kSlots];
  slot.instruction = instruction;
  slot.prepacked.reset();
  if (prepack_) {
    // As Datapath::execute follows them: writes before, a load's copy after.
    copies_.before(instruction, matrix_cols_);
    if (const auto* load = std::get_if<isa::Load>(&instruction)) copies_.after_load(*load);
    if (const auto* conv = std::get_if<isa::Conv>(&instruction))
      slot.prepacked = packed_weights(*conv);
    if (slot.prepacked) ++prepacked_convs_;
  }
  queued_.store(queued + 1, std::memory_order_seq_cst);
  // Seen asleep (seq_cst on both sides: either it saw the new count before sleeping or this
  // sees it asleep): wake it.
  if (worker_asleep_.load(std::memory_order_seq_cst)) {
    work_signal_.fetch_add(1, std::memory_order_seq_cst);
    work_signal_.notify_one();
  }
}

void DatapathWorker::finish() {
  wait_until_queued_at_most(0);
  if (error_) std::rethrow_exception(error_);
}

std::vector<ScratchpadBytes> DatapathWorker::take_scratchpads() {
  finish();
  return datapath_.take_scratchpads();
}

void DatapathWorker::wait_until_queued_at_most(std::uint64_t limit) {
  const std::uint64_t queued = queued_.load(std::memory_order_relaxed);
  for (int spin = 0;; ++spin) {
    if (queued - done_.load(std::memory_order_acquire) <= limit) return;
    if (spin < kCallerSpins) {
      cpu_relax();
      continue;
    }
    const std::uint64_t signal = room_signal_.load(std::memory_order_seq_cst);
    caller_wake_limit_.store(limit, std::memory_order_seq_cst);
    caller_asleep_.store(true, std::memory_order_seq_cst);
    if (queued - done_.load(std::memory_order_seq_cst) > limit)
      room_signal_.wait(signal, std::memory_order_seq_cst);
    caller_asleep_.store(false, std::memory_order_seq_cst);
  }
}

std::shared_ptr<const DenseWeights> DatapathWorker::packed_weights(const isa::Conv& x) {
  // What the datapath's dense loop takes (Datapath::execute_conv decides the same way, and
  // ignores a packing for any other loop).
  const std::uint64_t in_bytes = element_bytes(x.elem);
  if (x.depthwise || in_bytes > 2 || weight_bytes_ > 2) return nullptr;
  const std::uint64_t raw_bytes = std::uint64_t{x.oc_blocks} * x.ic_blocks * x.kh * x.kw *
                                  static_cast<std::uint64_t>(matrix_rows_) *
                                  static_cast<std::uint64_t>(matrix_cols_) *
                                  static_cast<std::uint64_t>(weight_bytes_);
  const std::optional<std::uint64_t> source =
      copies_.source(x.w_sp, x.w_addr, x.w_addr + raw_bytes);
  if (!source || *source + raw_bytes > dram_.size()) return nullptr;
  const std::array<std::uint32_t, 3> key = {x.kh * x.kw, x.ic_blocks, x.oc_blocks};
  ++uses_;
  for (Packed& entry : packed_)
    if (entry.source == *source && entry.key == key) {
      entry.last_use = uses_;
      return entry.weights;
    }
  auto weights = std::make_shared<DenseWeights>();
  pack_dense_weights(x, matrix_rows_, matrix_cols_, weight_bytes_, dram_.data() + *source,
                     *weights);
  Packed entry{*source, key, std::move(weights), uses_};
  if (packed_.size() < kPackedEntries) {
    packed_.push_back(std::move(entry));
    return packed_.back().weights;
  }
  Packed& oldest =
      *std::min_element(packed_.begin(), packed_.end(),
                        [](const Packed& a, const Packed& b) { return a.last_use < b.last_use; });
  oldest = std::move(entry);
  return oldest.weights;
}

void DatapathWorker::loop() {
  std::uint64_t done = 0;
  for (int spin = 0;;) {
    const std::uint64_t queued = queued_.load(std::memory_order_acquire);
    if (done == queued) {
      if (quit_.load(std::memory_order_acquire)) return;
      if (spin++ < kWorkerSpins) {
        cpu_relax();
        continue;
      }
      const std::uint64_t signal = work_signal_.load(std::memory_order_seq_cst);
      worker_asleep_.store(true, std::memory_order_seq_cst);
      if (queued_.load(std::memory_order_seq_cst) == done && !quit_.load(std::memory_order_seq_cst))
        work_signal_.wait(signal, std::memory_order_seq_cst);
      worker_asleep_.store(false, std::memory_order_seq_cst);
      continue;
    }
    spin = 0;
    for (; done < queued; ++done) {
      // After a failure the rest only count as run: the caller rethrows it.
      if (!error_) {
        try {
          const Slot& slot = slots_[done % kSlots];
          datapath_.execute(slot.instruction, slot.prepacked.get());
        } catch (...) {
          error_ = std::current_exception();
        }
      }
      done_.store(done + 1, std::memory_order_seq_cst);
      if (caller_asleep_.load(std::memory_order_seq_cst) &&
          queued_.load(std::memory_order_relaxed) - (done + 1) <=
              caller_wake_limit_.load(std::memory_order_seq_cst)) {
        // (The caller clears the flag when it wakes: until then each step signals again.)
        room_signal_.fetch_add(1, std::memory_order_seq_cst);
        room_signal_.notify_one();
      }
    }
  }
}

}  // namespace tessel::sim
