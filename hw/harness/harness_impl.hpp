// The cycle loop around one Verilator model of tessel_top: serves the program port, the DRAM
// request channel (timed by sim/dram's DramModel) and the DRAM data port, watches the
// observation ports, and fills the simulator's SimReport. Included by the generated models.cpp.
#pragma once

#include <verilated.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <type_traits>
#include <variant>

#include "hw/harness/model_registry.hpp"
#include "isa/assembler.hpp"
#include "isa/target.hpp"
#include "sim/core/costs.hpp"
#include "sim/dram/dram_model.hpp"

#if TESSEL_RTL_HAS_FST
#include <verilated_fst_c.h>
#endif

namespace tessel::hw::detail {

/// Writes `n` little-endian bytes into a Verilator port (scalar or VlWide).
template <class Port>
void put_bytes(Port& port, const std::uint8_t* bytes, std::size_t n) {
  if constexpr (std::is_integral_v<Port>) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < n && i < 8; ++i) value |= std::uint64_t{bytes[i]} << (8 * i);
    port = static_cast<Port>(value);
  } else {
    for (std::size_t w = 0; w < sizeof(Port) / 4; ++w) {
      std::uint32_t value = 0;
      for (std::size_t i = 0; i < 4 && 4 * w + i < n; ++i)
        value |= std::uint32_t{bytes[4 * w + i]} << (8 * i);
      port[w] = value;
    }
  }
}

/// Byte `i` of a Verilator port (scalar or VlWide).
template <class Port>
std::uint8_t byte_of(const Port& port, std::size_t i) {
  if constexpr (std::is_integral_v<Port>) {
    return static_cast<std::uint8_t>(static_cast<std::uint64_t>(port) >> (8 * i));
  } else {
    return static_cast<std::uint8_t>(port[i / 4] >> (8 * (i % 4)));
  }
}

/// 32-bit lane `i` of a wide port.
template <class Port>
std::uint32_t word_of(const Port& port, std::size_t i) {
  return port[i];
}

/// The per-cycle loop. Time: cycle t is the t-th clock cycle after the start pulse; inputs for
/// t are set after the rising edge that begins it, the outputs read, then clk2x's edge in the
/// middle of the cycle and the rising edge that ends it.
template <class Model>
Result<RtlResult> run_model(const HwConfig& config, std::span<const isa::Word> program,
                            sim::DramImage image, const RtlOptions& options) {
  if (image.bytes.size() != image.size_bytes)
    return fail("the DRAM image holds " + std::to_string(image.bytes.size()) +
                " bytes but declares " + std::to_string(image.size_bytes));
  auto created = sim::DramModel::create(sim::dram_params(config));
  if (!created.ok()) return created.failure();
  sim::DramModel dram = std::move(created).value();
  const isa::TargetInfo target = sim::target_info(config);
  constexpr std::size_t kLoad = 0, kCompute = 1, kStore = 2;

  RtlResult result;
  sim::SimReport& report = result.report;
  report.config_name = config.name;
  report.config_hash = content_hash(config);
  for (const auto& sp : config.scratchpads) report.scratchpads.push_back({sp.name, 0, 0});

  auto context = std::make_unique<VerilatedContext>();
  context->traceEverOn(!options.fst_path.empty());
  auto top = std::make_unique<Model>(context.get(), "tessel_top");
#if TESSEL_RTL_HAS_FST
  std::unique_ptr<VerilatedFstC> trace;
  if (!options.fst_path.empty()) {
    trace = std::make_unique<VerilatedFstC>();
    top->trace(trace.get(), 99);
    trace->open(options.fst_path.c_str());
  }
#else
  if (!options.fst_path.empty())
    return fail(
        "this RTL model was built without FST tracing (configure with "
        "-DTESSEL_RTL_TRACE=ON)");
#endif
  // Four evaluations a cycle, one per half period of clk2x (twice clk's rate, rising with it:
  // the scratchpads' block RAMs, tessel_sram): after the edge that began the cycle
  // (clk 1, clk2x 0) the inputs are set and the outputs read; then clk2x's edge in the middle
  // of the cycle (clk 0, clk2x 1), clk2x low again, and the edge of both that ends the cycle.
  std::uint64_t quarters = 0;
  auto quarter = [&](int clk, int clk2x) {
    top->clk = static_cast<std::uint8_t>(clk);
    top->clk2x = static_cast<std::uint8_t>(clk2x);
    top->eval();
#if TESSEL_RTL_HAS_FST
    if (trace) trace->dump(quarters);
#endif
    ++quarters;
    context->timeInc(1);
  };
  // The rest of a cycle whose first quarter was evaluated: its middle and its ending edge.
  auto finish_cycle = [&] {
    quarter(0, 1);
    quarter(0, 0);
    quarter(1, 1);
  };
  auto edge = [&] {
    quarter(1, 0);
    finish_cycle();
  };

  // Reset, then the start pulse.
  top->rst_n = 0;
  top->start = 0;
  top->dram_req_ready = 1;
  edge();
  edge();
  top->rst_n = 1;
  top->start = 1;
  edge();
  top->start = 0;

  struct Running {
    std::uint64_t index = 0, start = 0, bursts = 0;
    bool active = false;
    std::uint64_t mover_due = 0;  ///< a gather: start + its mover's cycles (docs/timing.md)
  };
  std::array<Running, 3> running{};
  std::array<bool, 3> dma_pending{};
  std::array<std::uint64_t, 3> dma_completion{};
  std::vector<std::uint64_t> dispatch_cycle(program.size(), 0);
  // Per-cycle counters of the last few cycles, undone at the end for cycles >= `cycles`.
  struct Tick {
    std::uint64_t cycle;
    std::uint64_t* counter;
  };
  std::deque<Tick> recent;

  std::uint64_t prev_prog_addr = 0;
  bool prev_rd_en = false;
  std::uint64_t prev_rd_addr = 0;
  std::uint64_t max_finish = 0, last_dispatch = 0, last_event = 0, dispatched = 0;
  bool ended = false;
  bool finish_dispatched = false;
  std::optional<std::uint64_t> end_cycle;
  // DW bytes: the data ports are at least 16 bytes wide, so always VlWide.
  const std::size_t rd_bytes = sizeof(top->dram_rd_data);
  std::vector<std::uint8_t> rd_buffer(rd_bytes, 0);

  auto set_fault = [&](std::string kind, std::uint64_t cycle, std::string engine,
                       std::int64_t index, std::string message) {
    std::string text;
    if (index >= 0 && static_cast<std::size_t>(index) < program.size()) {
      auto decoded = isa::decode(program[static_cast<std::size_t>(index)]);
      if (decoded.ok()) text = isa::format_instruction(decoded.value());
    }
    report.fault = sim::SimFault{
        std::move(kind), cycle, std::move(engine), index, std::move(text), std::move(message), {}};
    end_cycle = cycle;
    ended = true;
  };

  const auto start_wall = std::chrono::steady_clock::now();
  for (std::uint64_t t = 0; !ended; ++t) {
    // ---- inputs of cycle t
    if (prev_prog_addr < program.size()) {
      put_bytes(top->prog_data, program[prev_prog_addr].data(), isa::kInstructionBytes);
      top->prog_valid = 1;
    } else {
      top->prog_valid = 0;
    }
    if (prev_rd_en) {
      for (std::size_t i = 0; i < rd_buffer.size(); ++i)
        rd_buffer[i] = prev_rd_addr + i < image.bytes.size() ? image.bytes[prev_rd_addr + i] : 0;
      put_bytes(top->dram_rd_data, rd_buffer.data(), rd_buffer.size());
    }
    top->dram_done_load = dma_pending[kLoad] && t >= dma_completion[kLoad];
    top->dram_done_store = dma_pending[kStore] && t >= dma_completion[kStore];
    quarter(1, 0);

    // ---- outputs of cycle t
    if (top->fault) {  // registered at the end of the faulting cycle
      const auto index = static_cast<std::int64_t>(top->fault_index);
      auto decoded = isa::decode(program[static_cast<std::size_t>(index)]);
      set_fault("illegal_instruction", t - 1, "fetch", index,
                !decoded.ok() ? decoded.reason() : "the RTL decoder rejected the word");
      break;
    }
    // Finishes (results and tokens visible at t).
    for (std::size_t e = 0; e < 3; ++e) {
      if (!((top->obs_finish >> e) & 1u)) continue;
      Running& r = running[e];
      const std::uint64_t cost = t - r.start;
      std::uint64_t busy = cost;
      if (e != kCompute && r.bursts > 0) {  // a DMA (nop engine=load/store: no bursts)
        const std::uint64_t bus = dram.bus_cycles(r.bursts);
        busy = std::min(cost, bus);
        const std::uint64_t due = std::max(dma_completion[e], r.mover_due);
        if (t > due) result.late_cycles += t - due;
        dma_pending[e] = false;
      }
      sim::EngineStats& s = report.engines[e];
      s.busy_cycles += busy;
      s.waiting_on_dram_cycles += cost - busy;
      report.instructions_executed += 1;
      auto decoded = isa::decode(program[r.index]);
      if (decoded.ok()) {
        report.macs += sim::mac_count(decoded.value(), config);
        report.vector_ops += sim::vector_ops(decoded.value());
        for (const auto& traffic : sim::sram_traffic(decoded.value(), config)) {
          report.scratchpads[traffic.sp].read_bytes += traffic.read_bytes;
          report.scratchpads[traffic.sp].write_bytes += traffic.write_bytes;
        }
      }
      if (options.record_instruction_cycles)
        report.instruction_cycles.push_back({r.index, dispatch_cycle[r.index], r.start, t});
      max_finish = std::max(max_finish, t);
      r.active = false;
      last_event = t;
    }
    // Starts, with the simulator's start-time checks.
    for (std::size_t e = 0; e < 3 && !ended; ++e) {
      if (!((top->obs_start >> e) & 1u)) continue;
      const std::uint64_t index = word_of(top->obs_start_index, e);
      auto decoded = isa::decode(program[index]);
      if (!decoded.ok()) {
        set_fault("illegal_instruction", t, sim::engine_name(e), static_cast<std::int64_t>(index),
                  decoded.reason());
        break;
      }
      const isa::Instruction& instruction = decoded.value();
      if (auto problem = isa::validate(instruction, target)) {
        bool out_of_bounds = false;
        for (const auto& access : isa::sram_accesses(instruction, target.matrix_rows,
                                                     target.matrix_cols, target.weight_bits))
          if (access.sp < target.scratchpads.size() &&
              access.end > target.scratchpads[access.sp].size_bytes)
            out_of_bounds = true;
        set_fault(out_of_bounds ? "out_of_bounds" : "illegal_instruction", t, sim::engine_name(e),
                  static_cast<std::int64_t>(index), problem->message);
        break;
      }
      for (const auto& request : sim::dma_requests(instruction, t)) {
        if (request.address + request.bytes > image.size_bytes) {
          char message[200];
          std::snprintf(message, sizeof message,
                        "DRAM bytes [0x%llx, 0x%llx) beyond the DRAM image (%llu bytes)",
                        static_cast<unsigned long long>(request.address),
                        static_cast<unsigned long long>(request.address + request.bytes),
                        static_cast<unsigned long long>(image.size_bytes));
          set_fault("out_of_bounds", t, sim::engine_name(e), static_cast<std::int64_t>(index),
                    message);
          break;
        }
      }
      if (const sim::DmaWalk walk = sim::dma_walk(instruction);
          !ended && walk.table_end > image.size_bytes) {
        char message[200];
        std::snprintf(message, sizeof message,
                      "the gather's table [0x%llx, 0x%llx) lies beyond the DRAM image (%llu bytes)",
                      static_cast<unsigned long long>(walk.address),
                      static_cast<unsigned long long>(walk.table_end),
                      static_cast<unsigned long long>(image.size_bytes));
        set_fault("out_of_bounds", t, sim::engine_name(e), static_cast<std::int64_t>(index),
                  message);
        break;
      }
      if (ended) break;
      running[e] = Running{index, t, 0, true,
                           std::holds_alternative<isa::Gather>(instruction)
                               ? t + sim::fixed_cost_cycles(instruction, config)
                               : 0};
      report.engines[e].instructions += 1;
      last_event = t;
    }
    if (ended) break;
    // DRAM requests: timed as presented at their instruction's start cycle.
    if (top->dram_req_valid) {
      const std::size_t e = top->dram_req_write ? kStore : kLoad;
      sim::DramRequest request;
      request.address = top->dram_req_addr;
      request.bytes = top->dram_req_bytes;
      request.direction =
          top->dram_req_write ? sim::DramDirection::kWrite : sim::DramDirection::kRead;
      request.kind = sim::traffic_kind(static_cast<isa::Traffic>(top->dram_req_kind));
      request.issue_cycle = top->dram_req_cycle;
      const sim::DramCompletion done = dram.access(request);
      running[e].bursts += done.bursts;
      if (top->dram_req_last) {
        dma_pending[e] = true;
        dma_completion[e] = std::max(done.completion_cycle, t + 1);
        if (done.completion_cycle <= t) result.late_cycles += t + 1 - done.completion_cycle;
      }
      last_event = t;
    }
    if (top->dram_wr_en) {
      const std::uint64_t address = top->dram_wr_addr;
      for (std::size_t i = 0; i < rd_buffer.size(); ++i)
        if (((static_cast<std::uint64_t>(top->dram_wr_strb) >> i) & 1u) &&
            address + i < image.bytes.size())
          image.bytes[address + i] = byte_of(top->dram_wr_data, i);
    }
    prev_rd_en = top->dram_rd_en;
    prev_rd_addr = top->dram_rd_addr;
    prev_prog_addr = top->prog_addr;
    if (top->obs_dispatch) {
      const std::uint64_t index = top->obs_dispatch_index;
      dispatch_cycle[index] = t;
      last_dispatch = t;
      dispatched += 1;
      last_event = t;
      auto decoded = isa::decode(program[index]);
      if (!decoded.ok()) {
        set_fault("illegal_instruction", t, "fetch", static_cast<std::int64_t>(index),
                  decoded.reason());
        break;
      }
      if (std::holds_alternative<isa::Finish>(decoded.value())) finish_dispatched = true;
    }
    // Per-cycle states.
    for (std::size_t e = 0; e < 3; ++e) {
      if (running[e].active) continue;
      std::uint64_t* counter = ((top->obs_wait_token >> e) & 1u)
                                   ? &report.engines[e].waiting_on_token_cycles
                                   : &report.engines[e].idle_cycles;
      *counter += 1;
      recent.push_back({t, counter});
    }
    if (top->obs_fetch_blocked) {
      std::uint64_t* counter = &report.engines[top->obs_fetch_engine].queue_full_cycles;
      *counter += 1;
      recent.push_back({t, counter});
    }
    while (!recent.empty() && recent.front().cycle + 8 < t) recent.pop_front();
    if (top->obs_late) result.late_cycles += 1;
    if (top->obs_sram_collision) result.sram_collisions += 1;

    if (top->done) {
      end_cycle = max_finish;
      ended = true;
    } else if (top->obs_stuck) {
      const bool all_idle = !running[0].active && !running[1].active && !running[2].active;
      if (!finish_dispatched && dispatched >= program.size() && all_idle) {
        report.fault = sim::SimFault{"no_finish",
                                     max_finish,
                                     "fetch",
                                     -1,
                                     "",
                                     "the program's " + std::to_string(program.size()) +
                                         " instructions ran without a finish instruction",
                                     {}};
        end_cycle = max_finish;
        ended = true;
      } else {
        set_fault("deadlock", std::max(max_finish, last_dispatch), "fetch", -1,
                  "no instruction is running and none can ever start (RTL)");
      }
    } else if (options.max_cycles != 0 && t > options.max_cycles) {
      set_fault("cycle_cap", t, "fetch", -1,
                "the run passed its cycle cap of " + std::to_string(options.max_cycles) +
                    " (twice the program's bound without overlap, hw/harness/rtl_runner.hpp); "
                    "the RTL is slower than docs/timing.md allows");
    } else if (t - last_event > options.watchdog_cycles) {
      set_fault("watchdog", t, "fetch", -1,
                "no dispatch, start, finish or DRAM request for " +
                    std::to_string(options.watchdog_cycles) + " cycles: the RTL hangs");
    }
    if (!ended) finish_cycle();
  }
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_wall).count();
  result.simulated_cycles = quarters / 4;
  top->final();
#if TESSEL_RTL_HAS_FST
  if (trace) trace->close();
#endif

  // Close the books at `cycles`, as the simulator does.
  const std::uint64_t end = end_cycle.value_or(max_finish);
  report.cycles = end;
  for (const Tick& tick : recent)
    if (tick.cycle >= report.cycles) *tick.counter -= 1;
  for (std::size_t e = 0; e < 3; ++e) {
    if (!running[e].active) continue;
    const std::uint64_t elapsed = report.cycles - std::min(report.cycles, running[e].start);
    report.engines[e].busy_cycles += elapsed;
  }
  report.instructions_dispatched = dispatched;
  report.dram = dram.counters();
  report.dram.read_bytes_by_kind[static_cast<std::size_t>(sim::TrafficKind::kInstructions)] +=
      report.instructions_dispatched * isa::kInstructionBytes;
  const double peak =
      static_cast<double>(report.cycles) * static_cast<double>(config.macs_per_cycle());
  report.mac_utilisation = peak > 0 ? static_cast<double>(report.macs) / peak : 0.0;
  report.energy = sim::estimate_energy(config, report);
  result.dram = std::move(image.bytes);
  return result;
}

}  // namespace tessel::hw::detail
