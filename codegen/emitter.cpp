// Instruction emitter: appends checked instructions and keeps token FIFOs balanced.
#include "codegen/emitter.hpp"

#include <variant>

namespace tessel::codegen {

const char* to_string(Fifo fifo) {
  switch (fifo) {
    case Fifo::LoadToCompute:
      return "load->compute";
    case Fifo::ComputeToLoad:
      return "compute->load";
    case Fifo::ComputeToStore:
      return "compute->store";
    case Fifo::StoreToCompute:
      return "store->compute";
  }
  return "?";
}

namespace {

struct Flags {
  bool pop_prev, pop_next, push_prev, push_next;
};

Flags flags_of(const isa::Instruction& instruction) {
  return std::visit(
      [](const auto& x) {
        return Flags{x.pop_prev, x.pop_next, x.push_prev, x.push_next};
      },
      instruction);
}

}  // namespace

Emitter::Emitter(int token_fifo_depth) : depth_(token_fifo_depth) {}

Status Emitter::insert(std::size_t index, isa::Instruction instruction) {
  const std::string where = "instruction inserted at " + std::to_string(index) + " (" +
                            std::string(isa::mnemonic(instruction)) + ")";
  if (index > program_.instructions.size())
    return fail(where + ": past the end (" + std::to_string(program_.instructions.size()) + ")");
  if (auto checked = isa::check(instruction); !checked.ok()) {
    return fail(where + ": " + checked.reason());
  }
  const Flags f = flags_of(instruction);
  if (f.pop_prev || f.pop_next || f.push_prev || f.push_next)
    return fail(where + ": carries a token flag");
  program_.instructions.insert(program_.instructions.begin() + static_cast<std::ptrdiff_t>(index),
                               std::move(instruction));
  return {};
}

Status Emitter::emit(isa::Instruction instruction) {
  const std::string where = "instruction " + std::to_string(program_.instructions.size()) + " (" +
                            std::string(isa::mnemonic(instruction)) + ")";
  if (auto checked = isa::check(instruction); !checked.ok()) {
    return fail(where + ": " + checked.reason());
  }
  const Flags f = flags_of(instruction);
  // FIFOs this engine pops from / pushes to, by flag (docs/isa.md's table).
  Fifo pop_prev{}, pop_next{}, push_prev{}, push_next{};
  switch (isa::engine_of(instruction)) {
    case isa::Engine::kLoad:
      pop_next = Fifo::ComputeToLoad;
      push_next = Fifo::LoadToCompute;
      break;
    case isa::Engine::kCompute:
      pop_prev = Fifo::LoadToCompute;
      pop_next = Fifo::StoreToCompute;
      push_prev = Fifo::ComputeToLoad;
      push_next = Fifo::ComputeToStore;
      break;
    case isa::Engine::kStore:
      pop_prev = Fifo::ComputeToStore;
      push_prev = Fifo::StoreToCompute;
      break;
  }
  std::array<int, 4> after = tokens_;
  auto pop = [&](Fifo fifo) -> Status {
    int& n = after[static_cast<std::size_t>(fifo)];
    if (n == 0) return fail(where + ": pops " + to_string(fifo) + ", which is empty");
    --n;
    return {};
  };
  auto push = [&](Fifo fifo) -> Status {
    int& n = after[static_cast<std::size_t>(fifo)];
    if (n == depth_) {
      return fail(where + ": pushes " + to_string(fifo) + ", which already holds " +
                  std::to_string(depth_) + " tokens (the FIFO depth)");
    }
    ++n;
    return {};
  };
  // Pops happen before the instruction starts, pushes after it finishes.
  if (f.pop_prev)
    if (auto s = pop(pop_prev); !s.ok()) return s;
  if (f.pop_next)
    if (auto s = pop(pop_next); !s.ok()) return s;
  if (f.push_prev)
    if (auto s = push(push_prev); !s.ok()) return s;
  if (f.push_next)
    if (auto s = push(push_next); !s.ok()) return s;
  tokens_ = after;
  program_.instructions.push_back(std::move(instruction));
  return {};
}

Status Emitter::finish() {
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i] != 0) {
      return fail("program ends with " + std::to_string(tokens_[i]) + " token(s) left in " +
                  to_string(static_cast<Fifo>(i)));
    }
  }
  return emit(isa::Finish{});
}

}  // namespace tessel::codegen
