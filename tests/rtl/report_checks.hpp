// What an RTL run and a simulator run of one program must agree on, shared by the tests of
// tests/rtl: every counter of the two reports and every instruction's dispatch, start and
// finish cycle.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/simulator.hpp"

namespace tessel::hw {

/// Everything the two reports must agree on.
inline void expect_same_report(const sim::SimReport& rtl, const sim::SimReport& sim) {
  EXPECT_EQ(rtl.status(), std::string(sim.status()))
      << (rtl.fault ? rtl.fault->str() : "") << " / " << (sim.fault ? sim.fault->str() : "");
  if (rtl.fault && sim.fault) {
    EXPECT_EQ(rtl.fault->kind, sim.fault->kind);
    EXPECT_EQ(rtl.fault->cycle, sim.fault->cycle);
  }
  EXPECT_EQ(rtl.cycles, sim.cycles);
  EXPECT_EQ(rtl.instructions_dispatched, sim.instructions_dispatched);
  EXPECT_EQ(rtl.instructions_executed, sim.instructions_executed);
  EXPECT_EQ(rtl.dram.read_bytes_by_kind, sim.dram.read_bytes_by_kind);
  EXPECT_EQ(rtl.dram.write_bytes_by_kind, sim.dram.write_bytes_by_kind);
  EXPECT_EQ(rtl.dram.requests, sim.dram.requests);
  EXPECT_EQ(rtl.dram.bursts, sim.dram.bursts);
  EXPECT_EQ(rtl.macs, sim.macs);
  // After a deadlock the simulator's idle/waiting counters run to its last active cycle, which
  // may lie past `cycles` (its own invariant busy + waiting + idle = cycles does not hold
  // there); the RTL's stop at `cycles`. Compare engine states on complete runs only.
  for (std::size_t e = 0; e < sim::kEngineCount && !(sim.fault && sim.fault->kind == "deadlock");
       ++e) {
    SCOPED_TRACE(sim::engine_name(e));
    EXPECT_EQ(rtl.engines[e].instructions, sim.engines[e].instructions);
    EXPECT_EQ(rtl.engines[e].busy_cycles, sim.engines[e].busy_cycles);
    EXPECT_EQ(rtl.engines[e].waiting_on_dram_cycles, sim.engines[e].waiting_on_dram_cycles);
    EXPECT_EQ(rtl.engines[e].waiting_on_token_cycles, sim.engines[e].waiting_on_token_cycles);
    EXPECT_EQ(rtl.engines[e].idle_cycles, sim.engines[e].idle_cycles);
    EXPECT_EQ(rtl.engines[e].queue_full_cycles, sim.engines[e].queue_full_cycles);
  }
  ASSERT_EQ(rtl.scratchpads.size(), sim.scratchpads.size());
  for (std::size_t k = 0; k < sim.scratchpads.size(); ++k) {
    EXPECT_EQ(rtl.scratchpads[k].read_bytes, sim.scratchpads[k].read_bytes);
    EXPECT_EQ(rtl.scratchpads[k].write_bytes, sim.scratchpads[k].write_bytes);
  }
  auto by_index = [](const std::vector<sim::InstructionCycles>& cycles) {
    std::vector<std::array<std::uint64_t, 3>> out;
    for (const auto& c : cycles) {
      if (out.size() <= c.index) out.resize(c.index + 1);
      out[c.index] = {c.dispatch_cycle, c.start_cycle, c.finish_cycle};
    }
    return out;
  };
  EXPECT_EQ(by_index(rtl.instruction_cycles), by_index(sim.instruction_cycles))
      << "per-instruction {dispatch, start, finish} cycles differ";
}

}  // namespace tessel::hw
