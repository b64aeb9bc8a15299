// A lower bound on the DRAM bytes of every schedule of a network as a function of the on-chip
// capacity (the "ski slope"; docs/scheduler.md, "Lower bounds: DRAM bytes per capacity").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"

namespace tessel::sched {

/// One tensor that every schedule moves beyond the compulsory bytes at a capacity.
struct ForcedTraffic {
  int tensor = -1;
  int64_t crossing_bytes = 0;  ///< its store and one load (it cannot stay on chip)
  int64_t reread_bytes = 0;    ///< further loads: a conv's channel parts each read it
  std::string why;             ///< "span" (no group can hold its producer and readers), "reread"
};

/// The bound at one capacity and its terms.
struct BytesBound {
  int64_t capacity_bytes = 0;    ///< every scratchpad together
  int64_t compulsory_bytes = 0;  ///< as Schedule::compulsory_bytes
  /// Compulsory, less the network-input bytes that no op reads (a strided 1x1 window that
  /// skips rows); equal to compulsory on every net whose inputs are read whole.
  int64_t base_bytes = 0;
  int64_t crossing_bytes = 0;  ///< stores + first loads of tensors that must cross DRAM
  int64_t reread_bytes = 0;    ///< loads beyond the first, forced by weight slices
  int64_t bytes = 0;           ///< base + crossing + reread: no schedule moves fewer
  std::vector<ForcedTraffic> forced;
};

/// The capacity-independent part of the bound of one network (per tensor: its span's conv
/// weights, the largest sweep cut, what a crossing stores and loads; per conv reader: its
/// weights and the bytes it reads). Build once, then evaluate at each capacity (`at`).
class BytesBoundModel {
 public:
  explicit BytesBoundModel(const Net& net);

  /// The bound on `machine`'s scratchpads (the weights' and the activations' scratchpad
  /// capacities; one unified scratchpad serves both).
  BytesBound at(const Machine& machine) const;

  /// What the bound adds for one tensor at given capacities of the weights' and the
  /// activations' scratchpads (ForcedTraffic with tensor -1 when nothing).
  struct Reader {
    int op = -1;
    int64_t weight_bytes = 0;  ///< the conv's compact weights + bias
    int64_t channels = 0;      ///< its output channels
    int64_t read_bytes = 0;    ///< the input bytes its windows touch
  };
  struct TensorTerms {
    int tensor = -1;
    bool network_input = false;
    bool counts_store = true;    ///< false: a view's consumer, a network output, a view of an input
    bool always_forced = false;  ///< its span holds a Softmax or a Reshape and another op
    int64_t span_weights = 0;    ///< conv weights any group holding the span keeps at step 0
    bool sweep_shaped = false;   ///< every op of the span may be in a weight sweep
    int64_t sweep_cut = 0;       ///< the most whole maps a sweep holding the span keeps at once
    int64_t store_bytes = 0;
    int64_t min_load_bytes = 0;   ///< the least any one reader loads
    std::vector<Reader> readers;  ///< dense conv readers that compute every output element
  };
  const std::vector<TensorTerms>& terms() const { return terms_; }

 private:
  int64_t compulsory_ = 0;
  int64_t base_ = 0;
  std::vector<TensorTerms> terms_;
};

/// The bound of `net` on `machine` (BytesBoundModel(net).at(machine)).
BytesBound bytes_lower_bound(const Net& net, const Machine& machine);

/// `machine` with every scratchpad scaled by `total_bytes` / (their sum), so that they hold
/// `total_bytes` together (rounded down per scratchpad; a unified buffer becomes exactly
/// `total_bytes`).
Machine scale_scratchpads(const Machine& machine, int64_t total_bytes);

/// Bytes of `tensor` that op `reader` touches when it computes every output element: every
/// element, except for a conv or pool whose windows miss rows or columns (a strided 1x1
/// window), where only the rows and columns some window reads count.
int64_t bytes_read_by(const Net& net, int reader, int tensor);

/// The smallest number of output-channel parts of `channels` channels whose widest part
/// (ceil(channels / k) channels of `per_channel` bytes) fits `capacity`; `channels` when not
/// even one channel fits (no schedule exists then).
int64_t fewest_channel_parts(int64_t channels, int64_t per_channel, int64_t capacity);

}  // namespace tessel::sched
