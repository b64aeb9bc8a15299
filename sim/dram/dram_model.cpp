// DramModel: bursts serialised on one data bus at an exact rational rate, latency overlapped
// across up to N outstanding bursts.
#include "sim/dram/dram_model.hpp"

#include <algorithm>
#include <numeric>

namespace tessel::sim {
namespace {

// Products of burst counts or slot counts and rates, which may pass 2^64.
__extension__ typedef unsigned __int128 Wide;

}  // namespace

const char* traffic_kind_name(TrafficKind kind) {
  switch (kind) {
    case TrafficKind::kWeights:
      return "weights";
    case TrafficKind::kActivations:
      return "activations";
    case TrafficKind::kOutputs:
      return "outputs";
    case TrafficKind::kInstructions:
      return "instructions";
  }
  return "unknown";
}

std::uint64_t DramCounters::read_bytes() const {
  return std::accumulate(read_bytes_by_kind.begin(), read_bytes_by_kind.end(), std::uint64_t{0});
}

std::uint64_t DramCounters::write_bytes() const {
  return std::accumulate(write_bytes_by_kind.begin(), write_bytes_by_kind.end(), std::uint64_t{0});
}

Result<DramModel> DramModel::create(const DramParams& params) {
  if (params.bandwidth_bytes_per_second == 0) return fail("dram.bandwidth must be > 0");
  if (params.clock_hz == 0) return fail("clock must be > 0 Hz");
  if (params.burst_bytes == 0) return fail("dram.burst_bytes must be > 0");
  if (params.max_outstanding_requests == 0)
    return fail("dram.max_outstanding_requests must be > 0");
  if (params.max_outstanding_requests > (1u << 20))
    return fail("dram.max_outstanding_requests must be <= 1048576");
  return DramModel(params);
}

DramModel::DramModel(const DramParams& params)
    : params_(params), slot_free_cycle_(params.max_outstanding_requests, 0) {
  const std::uint64_t divisor = std::gcd(params.bandwidth_bytes_per_second, params.clock_hz);
  rate_num_ = params.bandwidth_bytes_per_second / divisor;
  rate_den_ = params.clock_hz / divisor;
  const std::uint64_t burst_units = params.burst_bytes * rate_den_;  // in 1/rate_num_ cycles
  burst_whole_cycles_ = burst_units / rate_num_;
  burst_fraction_ = burst_units % rate_num_;
  const Wide window = static_cast<Wide>(params.max_outstanding_requests - 1) * burst_units;
  slots_never_bind_ = window >= static_cast<Wide>(params.latency_cycles + 2) * rate_num_;
}

std::uint64_t DramModel::burst_transfer_cycles_ceil() const {
  const std::uint64_t units = params_.burst_bytes * rate_den_;  // in 1/rate_num_ cycles
  return (units + rate_num_ - 1) / rate_num_;
}

std::uint64_t DramModel::bus_cycles(std::uint64_t bursts) const {
  const Wide units = static_cast<Wide>(bursts) * params_.burst_bytes * rate_den_;
  const Wide cycles = (units + rate_num_ - 1) / rate_num_;
  return cycles > Wide{UINT64_MAX} ? UINT64_MAX : static_cast<std::uint64_t>(cycles);
}

DramCompletion DramModel::access(const DramRequest& request) {
  if (!slots_never_bind_) return access_burst_by_burst(request);
  const std::uint64_t burst = params_.burst_bytes;
  const std::uint64_t first = request.address / burst;
  const std::uint64_t last =
      (request.address + std::max<std::uint64_t>(request.bytes, 1) - 1) / burst;
  const std::uint64_t bursts = last - first + 1;

  DramCompletion done;
  done.bursts = bursts;
  const std::uint64_t ready = request.issue_cycle + params_.latency_cycles;
  BusTime start = bus_free_;
  if (ready > start.cycle || (ready == start.cycle && start.fraction == 0)) start = {ready, 0};
  done.first_data_cycle = start.cycle;
  // The fractions of the request's bursts: one 64-bit division unless the product overflows.
  std::uint64_t product = 0;
  if (!__builtin_mul_overflow(bursts, burst_fraction_, &product) &&
      product <= ~std::uint64_t{0} - start.fraction) {
    const std::uint64_t units = start.fraction + product;
    bus_free_.cycle = start.cycle + bursts * burst_whole_cycles_ + units / rate_num_;
    bus_free_.fraction = units % rate_num_;
  } else {
    const Wide units = start.fraction + static_cast<Wide>(bursts) * burst_fraction_;
    bus_free_.cycle =
        start.cycle + bursts * burst_whole_cycles_ + static_cast<std::uint64_t>(units / rate_num_);
    bus_free_.fraction = static_cast<std::uint64_t>(units % rate_num_);
  }
  done.completion_cycle = bus_free_.cycle + (bus_free_.fraction ? 1 : 0);

  auto& by_kind = request.direction == DramDirection::kRead ? counters_.read_bytes_by_kind
                                                            : counters_.write_bytes_by_kind;
  by_kind[static_cast<std::size_t>(request.kind)] += request.bytes;
  counters_.requests += 1;
  counters_.bursts += bursts;
  return done;
}

DramCompletion DramModel::access_burst_by_burst(const DramRequest& request) {
  const std::uint64_t burst = params_.burst_bytes;
  const std::uint64_t first = request.address / burst;
  const std::uint64_t last =
      (request.address + std::max<std::uint64_t>(request.bytes, 1) - 1) / burst;
  const std::uint64_t bursts = last - first + 1;
  const std::size_t slots = slot_free_cycle_.size();

  DramCompletion done;
  done.bursts = bursts;
  for (std::uint64_t k = 0; k < bursts; ++k) {
    std::uint64_t& slot = slot_free_cycle_[next_slot_];
    const std::uint64_t issue = std::max(request.issue_cycle, slot);
    const std::uint64_t ready = issue + params_.latency_cycles;
    BusTime start = bus_free_;
    if (ready > start.cycle || (ready == start.cycle && start.fraction == 0)) start = {ready, 0};
    if (k == 0) done.first_data_cycle = start.cycle;
    // end = start + burst_units / rate_num_ cycles, carried exactly (fractions < rate_num_).
    BusTime end{start.cycle + burst_whole_cycles_, start.fraction + burst_fraction_};
    if (end.fraction >= rate_num_) {
      end.fraction -= rate_num_;
      end.cycle += 1;
    }
    bus_free_ = end;
    const std::uint64_t complete = end.cycle + (end.fraction ? 1 : 0);
    slot = complete;
    if (++next_slot_ == slots) next_slot_ = 0;
    done.completion_cycle = complete;
  }

  auto& by_kind = request.direction == DramDirection::kRead ? counters_.read_bytes_by_kind
                                                            : counters_.write_bytes_by_kind;
  by_kind[static_cast<std::size_t>(request.kind)] += request.bytes;
  counters_.requests += 1;
  counters_.bursts += bursts;
  return done;
}

}  // namespace tessel::sim
