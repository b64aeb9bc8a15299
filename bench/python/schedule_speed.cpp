// Times, call by call, what `tessel schedule` runs in-process after loading and what
// tessel.schedule binds: the policy's graph (passes::graph_for_policy), sched::schedule_graph
// and the predicted instruction fetch. The C++ side of bench/python/schedule_overhead.py.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "compiler/passes/policy_graph.hpp"
#include "compiler/zoo/load_model.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/driver.hpp"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s MODEL HW.yaml POLICY OBJECTIVE CALLS\n", argv[0]);
    return 2;
  }
  try {
    using namespace tessel;
    zoo::LoadOptions load;
    load.zoo.with_weights = false;  // as `tessel schedule` and tessel.schedule(name) load it
    const ir::Graph graph = zoo::load_model(argv[1], load);
    const HwConfig config = load_hw_config(argv[2]);
    const sched::Objective objective = sched::objective_option(argv[4]);
    const int calls = std::atoi(argv[5]);
    long long cycles = 0;
    for (int i = 0; i < calls; ++i) {
      const auto start = std::chrono::steady_clock::now();
      auto prepared = passes::graph_for_policy(graph, argv[3]);
      if (!prepared.ok()) {
        std::fprintf(stderr, "error: %s\n", prepared.reason().c_str());
        return 1;
      }
      auto result = sched::schedule_graph(prepared.value(), config, argv[3], objective);
      if (result.ok()) sched::add_predicted_fetch(result.value());
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!result.ok()) {
        std::fprintf(stderr, "error: %s\n", result.reason().c_str());
        return 1;
      }
      cycles = result.value().schedule.cycles;
      std::printf("{\"call\": %d, \"seconds\": %.9f, \"cycles\": %lld}\n", i, seconds, cycles);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
