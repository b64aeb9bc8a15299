// Accelerator: per-active-cycle arbitration of fetch, engines, tokens and DMA (docs/timing.md).
#include "sim/core/accelerator.hpp"

#include <algorithm>
#include <cstdio>
#include <type_traits>
#include <variant>

#include "isa/assembler.hpp"
#include "sim/core/costs.hpp"
#include "support/cancel.hpp"

namespace tessel::sim {
namespace {

constexpr std::size_t kLoad = 0, kCompute = 1, kStore = 2;
// Indices into Accelerator::fifos_.
constexpr std::size_t kLoadToCompute = 0, kComputeToLoad = 1, kComputeToStore = 2,
                      kStoreToCompute = 3;

sc_core::sc_time cycles(std::uint64_t n) {
  return sc_core::sc_time::from_value(n);  // resolution: 1 ns = 1 cycle (SystemcSession)
}

std::string hex_word(const isa::Word& word) {
  std::string out = "0x";
  char buffer[3];
  for (std::size_t i = word.size(); i-- > 0;) {
    std::snprintf(buffer, sizeof buffer, "%02x", word[i]);
    out += buffer;
  }
  return out;
}

}  // namespace

Engine::Engine(const sc_core::sc_module_name& name, std::size_t engine_id, std::size_t depth)
    : sc_core::sc_module(name), id(engine_id), queue_depth(depth), queue(depth) {}

FetchUnit::FetchUnit(const sc_core::sc_module_name& name, std::span<const isa::Word> words)
    : sc_core::sc_module(name), program(words) {}

Accelerator::Accelerator(const sc_core::sc_module_name& name, RunContext& context,
                         std::span<const isa::Word> program)
    : sc_core::sc_module(name),
      context_(context),
      predecoder_(context.config, context.target),
      fetch_("fetch", program) {
  const auto queue_depth = static_cast<std::size_t>(context.config.queues.instruction_queue_depth);
  for (std::size_t e = 0; e < kEngineCount; ++e)
    engines_.push_back(std::make_unique<Engine>(engine_name(e), e, queue_depth));
  const auto token_depth = static_cast<std::uint64_t>(context.config.queues.token_fifo_depth);
  const char* names[] = {"load->compute", "compute->load", "compute->store", "store->compute"};
  for (std::size_t f = 0; f < 4; ++f) fifos_[f] = TokenFifo{names[f], token_depth, 0, 0};
  // threads 2: the datapath on a thread of its own; 3: that thread with a split helper.
  if (!context.options.timing_only && context.options.threads >= 2) {
    worker_ = std::make_unique<DatapathWorker>(context.config, context.dram_bytes,
                                               context.options.threads >= 3 ? 2 : 1);
  } else if (!context.options.timing_only) {
    datapath_ = std::make_unique<Datapath>(context.config, context.dram_bytes);
  }
  if (context.trace)
    for (std::size_t e = 0; e < kEngineCount; ++e)
      context.trace->name_track(static_cast<int>(e), engine_name(e));
  if (context.options.record_instruction_cycles)
    context.report.instruction_cycles.reserve(program.size());

  SC_METHOD(run);
  // Not dont_initialize(): the method runs at cycle 0 to dispatch instruction 0; later
  // activations are its own next_trigger()s.
}

TokenFifo* Accelerator::pop_fifo(std::size_t engine, bool prev) {
  switch (engine) {
    case kLoad:
      return prev ? nullptr : &fifos_[kComputeToLoad];
    case kCompute:
      return prev ? &fifos_[kLoadToCompute] : &fifos_[kStoreToCompute];
    default:
      return prev ? &fifos_[kComputeToStore] : nullptr;
  }
}

TokenFifo* Accelerator::push_fifo(std::size_t engine, bool prev) {
  switch (engine) {
    case kLoad:
      return prev ? nullptr : &fifos_[kLoadToCompute];
    case kCompute:
      return prev ? &fifos_[kComputeToLoad] : &fifos_[kComputeToStore];
    default:
      return prev ? &fifos_[kStoreToCompute] : nullptr;
  }
}

const TokenFifo* Accelerator::pop_fifo(std::size_t engine, bool prev) const {
  return const_cast<Accelerator*>(this)->pop_fifo(engine, prev);
}

const TokenFifo* Accelerator::push_fifo(std::size_t engine, bool prev) const {
  return const_cast<Accelerator*>(this)->push_fifo(engine, prev);
}

void Accelerator::run() {
  const std::uint64_t kernel_now = sc_core::sc_time_stamp().value();
  const std::uint64_t quantum = std::max<std::uint64_t>(context_.options.sync_quantum_cycles, 1);
  while (!faulted_) {
    // A cancelled call (support/cancel.hpp) stops here; simulate() then returns cancelled().
    if ((++cancel_polls_ & 0x3ffU) == 0 && cancel_requested()) {
      raise_fault("cancelled", next_cycle_, "fetch", -1, "", "the call was cancelled");
      return;
    }
    cycle(next_cycle_);
    next_cycle_ = next_active_cycle();
    if (next_cycle_ == kNever) return;  // nothing can change any more: sc_start() returns
    if (next_cycle_ - kernel_now >= quantum) {
      next_trigger(cycles(next_cycle_ - kernel_now));
      return;
    }
  }
}

std::uint64_t Accelerator::next_active_cycle() const {
  // Every cycle with a pending event: the engines' finishes and fetch's wake (the events a
  // kernel process per cycle would be woken by).
  std::uint64_t next = fetch_.wake_pending ? next_cycle_ + 1 : kNever;
  for (const auto& engine : engines_)
    if (engine->running) next = std::min(next, engine->running->finish_cycle);
  return next;
}

void Accelerator::cycle(std::uint64_t now) {
  fetch_.wake_pending = false;
  account(now);
  for (auto& engine : engines_)
    if (engine->running && engine->running->finish_cycle == now) finish_instruction(*engine, now);

  for (auto& fifo : fifos_) fifo.occupancy_at_cycle_start = fifo.occupancy;
  for (auto& engine : engines_) {
    try_start(*engine, now);
    if (faulted_) return;
  }
  for (auto& engine : engines_)
    if (engine->running && engine->running->started_this_cycle) time_started(*engine, now);
  dispatch(now);
}

void Accelerator::account(std::uint64_t now) {
  for (auto& engine : engines_) {
    if (engine->running) continue;  // accounted when it finishes
    const std::uint64_t span = now - std::min(now, engine->accounted_until);
    (engine->waiting_on_token ? engine->stats.waiting_on_token_cycles
                              : engine->stats.idle_cycles) += span;
    engine->accounted_until = now;
  }
  if (fetch_.blocked_on) {
    engines_[*fetch_.blocked_on]->stats.queue_full_cycles += now - fetch_.blocked_since;
    fetch_.blocked_since = now;
  }
}

void Accelerator::finish_instruction(Engine& engine, std::uint64_t now) {
  const Engine::Running running = *engine.running;
  engine.running.reset();
  const QueuedInstruction& entry = *running.entry;
  const DecodedInstruction& decoded = entry.decoded;
  if (datapath_) datapath_->execute(decoded.instruction);
  if (worker_) worker_->execute(decoded.instruction);
  if ((datapath_ || worker_) && is_data_checked(decoded.instruction))
    per_channel_requants_.push_back({running.start_cycle, entry.index});

  if (decoded.push_prev) push_fifo(engine.id, true)->visible += 1;
  if (decoded.push_next) push_fifo(engine.id, false)->visible += 1;

  const std::uint64_t cost = now - running.start_cycle;
  const std::uint64_t busy = std::min(cost, running.bus_cycles ? running.bus_cycles : cost);
  engine.stats.busy_cycles += busy;
  engine.stats.waiting_on_dram_cycles += cost - busy;
  engine.accounted_until = now;
  engine.waiting_on_token = false;

  SimReport& report = context_.report;
  report.instructions_executed += 1;
  report.macs += decoded.macs;
  report.vector_ops += decoded.vector;
  for (const auto& traffic : decoded.sram_traffic()) {
    report.scratchpads[traffic.sp].read_bytes += traffic.read_bytes;
    report.scratchpads[traffic.sp].write_bytes += traffic.write_bytes;
  }
  max_finish_cycle_ = std::max(max_finish_cycle_, now);
  if (context_.options.record_instruction_cycles)
    report.instruction_cycles.push_back(
        {entry.index, entry.dispatch_cycle, running.start_cycle, now});
  if (decoded.is_finish) finish_done_ = true;

  if (context_.trace) {
    char args[160];
    std::snprintf(args, sizeof args, R"({"index":%llu,"dispatch":%llu,"ready":%llu})",
                  static_cast<unsigned long long>(entry.index),
                  static_cast<unsigned long long>(entry.dispatch_cycle),
                  static_cast<unsigned long long>(entry.dispatch_cycle + 1));
    context_.trace->slice(static_cast<int>(engine.id),
                          std::string(isa::mnemonic(decoded.instruction)), running.start_cycle, now,
                          args);
  }
}

bool Accelerator::try_start(Engine& engine, std::uint64_t now) {
  if (engine.running || engine.queue.empty()) return false;
  const QueuedInstruction& head = engine.queue.front();
  if (head.dispatch_cycle + 1 > now) return false;  // decode
  const DecodedInstruction& decoded = head.decoded;
  engine.waiting_on_token = true;
  if (decoded.pop_prev && !pop_fifo(engine.id, true)->has_token()) return false;
  if (decoded.pop_next && !pop_fifo(engine.id, false)->has_token()) return false;
  if (decoded.push_prev && !push_fifo(engine.id, true)->has_room()) return false;
  if (decoded.push_next && !push_fifo(engine.id, false)->has_room()) return false;
  engine.waiting_on_token = false;

  // Checks against the config and the DRAM image, in both modes alike.
  // (The Predecoder ran isa::validate; its message is re-derived only for a fault.)
  if (!decoded.ok()) {
    raise_fault(decoded.status == DecodedInstruction::Status::kOutOfBounds ? "out_of_bounds"
                                                                           : "illegal_instruction",
                now, engine_name(engine.id), static_cast<std::int64_t>(head.index),
                isa::format_instruction(head.instruction()),
                predecoder_.fault_message(fetch_.program[head.index], decoded));
    return false;
  }
  if (decoded.dma.rows > 0 && decoded.dma.end_address() > context_.dram_size_bytes) {
    // The walk's last run ends highest; the message names the first request beyond the image.
    std::string message;
    decoded.dma.for_each_request(now, [&](const DramRequest& request) {
      if (!message.empty() || request.address + request.bytes <= context_.dram_size_bytes) return;
      char text[200];
      std::snprintf(text, sizeof text,
                    "DRAM bytes [0x%llx, 0x%llx) beyond the DRAM image (%llu bytes)",
                    static_cast<unsigned long long>(request.address),
                    static_cast<unsigned long long>(request.address + request.bytes),
                    static_cast<unsigned long long>(context_.dram_size_bytes));
      message = text;
    });
    if (message.empty()) {  // a gather's table: rows its ids may name lie beyond the image
      char text[200];
      std::snprintf(text, sizeof text,
                    "the gather's table [0x%llx, 0x%llx) lies beyond the DRAM image (%llu bytes)",
                    static_cast<unsigned long long>(decoded.dma.address),
                    static_cast<unsigned long long>(decoded.dma.table_end),
                    static_cast<unsigned long long>(context_.dram_size_bytes));
      message = text;
    }
    raise_fault("out_of_bounds", now, engine_name(engine.id), static_cast<std::int64_t>(head.index),
                isa::format_instruction(head.instruction()), message);
    return false;
  }

  for (const auto& [wanted, prev] :
       {std::pair{decoded.pop_prev, true}, {decoded.pop_next, false}}) {
    if (!wanted) continue;
    TokenFifo* fifo = pop_fifo(engine.id, prev);
    fifo->visible -= 1;
    fifo->occupancy -= 1;
    fetch_.wake_pending = true;  // the freed place counts from the next cycle
  }
  if (decoded.push_prev) push_fifo(engine.id, true)->occupancy += 1;
  if (decoded.push_next) push_fifo(engine.id, false)->occupancy += 1;
  engine.running.emplace(Engine::Running{&head, now, now, 0, true});
  engine.queue.pop_front();
  engine.stats.instructions += 1;
  engine.accounted_until = now;
  return true;
}

void Accelerator::time_started(Engine& engine, std::uint64_t now) {
  Engine::Running& running = *engine.running;
  running.started_this_cycle = false;
  const DmaWalk& dma = running.entry->decoded.dma;
  if (dma.rows == 0) {
    running.finish_cycle = now + running.entry->decoded.fixed_cost_cycles;
  } else {
    // The walk's requests, in order, as the DMA presents them this cycle.
    DramModel& dram = context_.dram;
    std::uint64_t bursts = 0;
    dma.for_each_request(now, [&](const DramRequest& request) {
      const DramCompletion done = dram.access(request);
      running.finish_cycle = done.completion_cycle;
      bursts += done.bursts;
    });
    // A gather waits for its mover too (docs/timing.md "gather"); 0 for load and store.
    running.finish_cycle =
        std::max(running.finish_cycle, now + running.entry->decoded.fixed_cost_cycles);
    // Busy = the bus time of its bursts, ceil(bursts * B / b); the rest waits on DRAM.
    running.bus_cycles = dram.bus_cycles(bursts);
  }
}

void Accelerator::dispatch(std::uint64_t now) {
  if (fetch_.stopped || now < fetch_.earliest_cycle) return;
  if (fetch_.next_index >= fetch_.program.size()) return;
  const std::uint64_t index = fetch_.next_index;
  const isa::Word& word = fetch_.program[index];
  if (!fetch_.next_decoded) {
    // Decoded once, straight into the back slot of the queue it goes to (the word names the
    // engine; a word that does not decode faults below, whichever slot it went to).
    fetch_.next_engine = predecoder_.engine_of(word);
    DecodedInstruction& decoded = engines_[fetch_.next_engine]->queue.back_slot().decoded;
    predecoder_.decode(word, decoded);
    if (decoded.status != DecodedInstruction::Status::kUndecodable &&
        decoded.engine != fetch_.next_engine) {  // cannot happen; kept correct regardless
      engines_[decoded.engine]->queue.back_slot().decoded = decoded;
      fetch_.next_engine = decoded.engine;
    }
    fetch_.next_decoded = true;
  }
  Engine& engine = *engines_[fetch_.next_engine];
  QueuedInstruction& slot = engine.queue.back_slot();
  if (slot.decoded.status == DecodedInstruction::Status::kUndecodable) {
    raise_fault("illegal_instruction", now, "fetch", static_cast<std::int64_t>(index),
                hex_word(word), predecoder_.fault_message(word, slot.decoded));
    return;
  }
  if (engine.queue.full()) {
    if (!fetch_.blocked_on) {
      fetch_.blocked_on = engine.id;
      fetch_.blocked_since = now;
    }
    return;  // a start on that engine frees a slot and dispatch retries in that same cycle
  }
  fetch_.blocked_on.reset();
  slot.index = index;
  slot.dispatch_cycle = now;
  engine.queue.push_back();
  fetch_.next_decoded = false;
  fetch_.next_index += 1;
  fetch_.earliest_cycle = now + 1;
  fetch_.stopped = slot.decoded.is_finish;
  last_dispatch_cycle_ = now;
  context_.report.instructions_dispatched += 1;
  fetch_.wake_pending = true;
}

void Accelerator::raise_fault(std::string kind, std::uint64_t cycle, std::string engine,
                              std::int64_t index, std::string text, std::string message) {
  faulted_ = true;
  context_.report.fault = SimFault{
      std::move(kind), cycle, std::move(engine), index, std::move(text), std::move(message), {}};
  sc_core::sc_stop();
}

bool Accelerator::ended() const {
  if (!finish_done_) return false;
  return std::all_of(engines_.begin(), engines_.end(),
                     [](const auto& e) { return !e->running && e->queue.empty(); });
}

std::string Accelerator::describe_block(const Engine& engine) const {
  const QueuedInstruction& head = engine.queue.front();
  const DecodedInstruction& flags = head.decoded;
  std::string out = std::string(engine_name(engine.id)) + ": instruction " +
                    std::to_string(head.index) + " (`" +
                    isa::format_instruction(head.instruction()) + "`)";
  std::string reasons;
  auto add = [&](const std::string& reason) { reasons += (reasons.empty() ? " " : "; ") + reason; };
  for (const auto& [wanted, prev] : {std::pair{flags.pop_prev, true}, {flags.pop_next, false}}) {
    const TokenFifo* fifo = wanted ? pop_fifo(engine.id, prev) : nullptr;
    if (fifo && !fifo->has_token())
      add(std::string("waits to pop a token from ") + fifo->name +
          ", which is empty and no running or queued instruction will push one (underflow)");
  }
  for (const auto& [wanted, prev] : {std::pair{flags.push_prev, true}, {flags.push_next, false}}) {
    const TokenFifo* fifo = wanted ? push_fifo(engine.id, prev) : nullptr;
    if (fifo && !fifo->has_room())
      add(std::string("waits for room to push to ") + fifo->name + ", which holds " +
          std::to_string(fifo->occupancy) + " of " + std::to_string(fifo->depth) +
          " tokens that no one will pop (overflow)");
  }
  return out + reasons;
}

std::string Accelerator::blocking_fifo(const Engine& engine) const {
  const DecodedInstruction& flags = engine.queue.front().decoded;
  for (const auto& [wanted, prev] : {std::pair{flags.pop_prev, true}, {flags.pop_next, false}})
    if (wanted && !pop_fifo(engine.id, prev)->has_token()) return pop_fifo(engine.id, prev)->name;
  for (const auto& [wanted, prev] : {std::pair{flags.push_prev, true}, {flags.push_next, false}})
    if (wanted && !push_fifo(engine.id, prev)->has_room()) return push_fifo(engine.id, prev)->name;
  return "";
}

void Accelerator::finalize() {
  SimReport& report = context_.report;
  if (!faulted_ && !ended()) {
    const bool all_idle = std::all_of(engines_.begin(), engines_.end(), [](const auto& e) {
      return !e->running && e->queue.empty();
    });
    if (!fetch_.stopped && fetch_.next_index >= fetch_.program.size() && all_idle) {
      report.fault = SimFault{"no_finish",
                              max_finish_cycle_,
                              "fetch",
                              -1,
                              "",
                              "the program's " + std::to_string(fetch_.program.size()) +
                                  " instructions ran without a finish instruction",
                              {}};
    } else {
      // The first cycle from which nothing changes: the last finish or dispatch.
      const std::uint64_t deadlock_cycle = std::max(max_finish_cycle_, last_dispatch_cycle_);
      std::string message = "no instruction is running and none can ever start";
      const Engine* first = nullptr;
      std::vector<BlockedEngine> blocked;
      for (const auto& engine : engines_) {
        if (engine->queue.empty()) continue;
        if (!first) first = engine.get();
        message += "\n  " + describe_block(*engine);
        blocked.push_back(
            {engine_name(engine->id), engine->queue.front().index, blocking_fifo(*engine)});
      }
      if (fetch_.blocked_on)
        message += "\n  fetch: instruction " + std::to_string(fetch_.next_index) +
                   " waits for room in the " + engine_name(*fetch_.blocked_on) + " queue (" +
                   std::to_string(engines_[*fetch_.blocked_on]->queue.size()) + " of " +
                   std::to_string(engines_[*fetch_.blocked_on]->queue_depth) + ")";
      if (first) {
        const QueuedInstruction& head = first->queue.front();
        report.fault = SimFault{"deadlock",
                                deadlock_cycle,
                                engine_name(first->id),
                                static_cast<std::int64_t>(head.index),
                                isa::format_instruction(head.instruction()),
                                message,
                                std::move(blocked)};
      } else {
        report.fault = SimFault{"deadlock", deadlock_cycle, "fetch", -1, "", message, {}};
      }
    }
  }
  report.cycles =
      report.fault && report.fault->kind != "no_finish" ? report.fault->cycle : max_finish_cycle_;
  if (report.fault && report.fault->kind == "deadlock")
    report.cycles = std::max(report.cycles, max_finish_cycle_);

  // Close the books at `cycles`.
  const std::uint64_t end = report.cycles;
  for (auto& engine : engines_) {
    if (engine->running) {
      const std::uint64_t elapsed = end - std::min(end, engine->running->start_cycle);
      const std::uint64_t busy =
          engine->running->bus_cycles ? std::min(elapsed, engine->running->bus_cycles) : elapsed;
      engine->stats.busy_cycles += busy;
      engine->stats.waiting_on_dram_cycles += elapsed - busy;
    } else if (end > engine->accounted_until) {
      (engine->waiting_on_token ? engine->stats.waiting_on_token_cycles
                                : engine->stats.idle_cycles) += end - engine->accounted_until;
    }
    engine->accounted_until = end;
    report.engines[engine->id] = engine->stats;
  }
  if (worker_) worker_->finish();
  if (context_.options.keep_scratchpads) {
    if (datapath_) context_.final_scratchpads = datapath_->take_scratchpads();
    if (worker_) context_.final_scratchpads = worker_->take_scratchpads();
  }
  // A bad requantize table is found by the datapath, which may run behind the timing model:
  // the fault is reported at the requantize's start, and the counters stay the run's (the
  // timing reads no data). An earlier fault of the timing model stands.
  const Datapath* datapath = datapath_ ? datapath_.get() : worker_ ? &worker_->datapath() : nullptr;
  if (datapath && datapath->bad_table()) {
    const PerChannelRequant& at =
        per_channel_requants_.at(datapath->bad_table()->per_channel_requant);
    const isa::Instruction instruction = isa::decode(fetch_.program[at.index]).value();
    if (!report.fault || report.fault->cycle > at.start_cycle)
      report.fault =
          SimFault{"invalid_data",
                   at.start_cycle,
                   std::string(engine_name(static_cast<std::size_t>(isa::engine_of(instruction)))),
                   static_cast<std::int64_t>(at.index),
                   isa::format_instruction(instruction),
                   datapath->bad_table()->message,
                   {}};
  }
  if (fetch_.blocked_on && end > fetch_.blocked_since)
    report.engines[*fetch_.blocked_on].queue_full_cycles += end - fetch_.blocked_since;
}

}  // namespace tessel::sim
