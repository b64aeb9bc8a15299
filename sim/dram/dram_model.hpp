// DramModel: a deterministic, exact-integer DRAM timing model (bandwidth, latency, bursts,
// outstanding requests) shared by the SystemC simulator and the Verilator harness.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "support/result.hpp"

namespace tessel::sim {

/// What a DRAM transfer carries; reports split DRAM bytes by it.
enum class TrafficKind : std::uint8_t { kWeights, kActivations, kOutputs, kInstructions };
inline constexpr std::size_t kTrafficKindCount = 4;

/// "weights", "activations", "outputs", "instructions".
const char* traffic_kind_name(TrafficKind kind);

enum class DramDirection : std::uint8_t { kRead, kWrite };

/// The timing parameters of the DRAM channel. Bandwidth and clock are integers (bytes per
/// second, hertz) so that bytes per cycle is the exact rational bandwidth / clock.
struct DramParams {
  std::uint64_t bandwidth_bytes_per_second = 0;
  std::uint64_t clock_hz = 0;
  std::uint64_t latency_cycles = 0;  ///< issue of a burst to its first data beat
  std::uint64_t burst_bytes = 0;     ///< transfer granule; requests split at its multiples
  std::uint64_t max_outstanding_requests = 0;  ///< bursts in flight at once (>= 1)
};

/// One DMA request as the engines present it.
struct DramRequest {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;  ///< > 0
  DramDirection direction = DramDirection::kRead;
  TrafficKind kind = TrafficKind::kActivations;
  std::uint64_t issue_cycle = 0;  ///< the cycle the engine presents it
};

/// When a request's data is done: every burst has crossed the data bus by `completion_cycle`.
struct DramCompletion {
  std::uint64_t first_data_cycle = 0;  ///< cycle the first burst's data starts on the bus
  std::uint64_t completion_cycle = 0;  ///< first cycle at which all of its data has arrived
  std::uint64_t bursts = 0;            ///< aligned bursts the request was split into
};

/// Traffic counters since construction (or the last reset).
struct DramCounters {
  std::array<std::uint64_t, kTrafficKindCount> read_bytes_by_kind{};
  std::array<std::uint64_t, kTrafficKindCount> write_bytes_by_kind{};
  std::uint64_t requests = 0;
  std::uint64_t bursts = 0;

  std::uint64_t read_bytes() const;
  std::uint64_t write_bytes() const;
  std::uint64_t total_bytes() const { return read_bytes() + write_bytes(); }
};

/// A single DRAM channel, first-come first-served at request granularity.
///
/// Timing (docs/sim.md, "DRAM model"): with bytes per cycle b = bandwidth / clock, exact,
/// - a request [address, address + bytes) is split into the aligned bursts that cover it;
///   every burst moves `burst_bytes` over the data bus (an unaligned edge costs a whole burst);
/// - burst k is issued at cycle i_k = max(issue_cycle, c_{k-N}) where c_{k-N} is the
///   completion cycle of the burst N = max_outstanding_requests before it (a free slot);
/// - its data occupies the bus from s_k = max(i_k + latency_cycles, e_{k-1}) for
///   burst_bytes / b cycles, to e_k (exact rational; the bus may end mid-cycle);
/// - its completion cycle is c_k = ceil(e_k); the request completes at its last burst's c_k.
/// Reads and writes share the bus and the slots. Requests must be presented in
/// non-decreasing issue_cycle (a simulator presents them at the cycle they are issued).
class DramModel {
 public:
  /// Fails with a message naming the bad parameter (zero bandwidth, clock, burst or slots).
  static Result<DramModel> create(const DramParams& params);

  /// Times one request, updates the counters and returns when its data is done.
  /// Precondition: request.bytes > 0 and issue_cycle >= the previous request's issue_cycle.
  /// When the slots cannot hold a burst back (slots_never_bind()), the request is timed in
  /// closed form, O(1) in its bursts; otherwise burst by burst.
  DramCompletion access(const DramRequest& request);

  /// access() by the definition above, one burst at a time (tests compare the two). Use one
  /// or the other on a model: the closed form does not keep the slot ring up to date.
  DramCompletion access_burst_by_burst(const DramRequest& request);

  /// Whether N - 1 bursts' bus time covers the latency with a 2-cycle margin,
  /// (N - 1) * burst_bytes / b >= latency_cycles + 2. Then a burst's slot is always free
  /// before the bus is (its slot holder completed at c_{k-N} < e_{k-N} + 1, and
  /// e_{k-1} >= e_{k-N} + (N - 1) * burst_bytes / b), so s_k = max(issue_cycle + latency,
  /// e_{k-1}) for the first burst of a request and e_{k-1} for the others: the request takes
  /// bursts * burst_bytes / b on the bus from s_0.
  bool slots_never_bind() const { return slots_never_bind_; }

  const DramParams& params() const { return params_; }
  const DramCounters& counters() const { return counters_; }

  /// Bytes per cycle as the reduced fraction numerator / denominator.
  std::uint64_t bytes_per_cycle_numerator() const { return rate_num_; }
  std::uint64_t bytes_per_cycle_denominator() const { return rate_den_; }

  /// Cycles one burst occupies the data bus, rounded up (for documentation and reports).
  std::uint64_t burst_transfer_cycles_ceil() const;

  /// ceil(bursts * burst_bytes / b): the bus time of `bursts` bursts, computed in 128 bits
  /// (bursts * burst_bytes * denominator passed 2^64 on slow buses and wrapped to a small
  /// busy time); saturates at 2^64 - 1.
  std::uint64_t bus_cycles(std::uint64_t bursts) const;

 private:
  /// A time on the data bus: `cycle` + `fraction` / rate_num_ cycles, fraction < rate_num_.
  struct BusTime {
    std::uint64_t cycle = 0;
    std::uint64_t fraction = 0;
  };

  explicit DramModel(const DramParams& params);

  DramParams params_;
  std::uint64_t rate_num_ = 1;  // bytes per cycle = rate_num_ / rate_den_
  std::uint64_t rate_den_ = 1;
  // One burst's bus time burst_bytes * rate_den_ / rate_num_ as whole cycles + a fraction
  // (< rate_num_): access() adds it without a division per burst.
  std::uint64_t burst_whole_cycles_ = 0;
  std::uint64_t burst_fraction_ = 0;
  bool slots_never_bind_ = false;
  BusTime bus_free_;                            // end of the last burst on the bus
  std::vector<std::uint64_t> slot_free_cycle_;  // ring: completion of the last N bursts
  std::size_t next_slot_ = 0;
  DramCounters counters_;
};

}  // namespace tessel::sim
