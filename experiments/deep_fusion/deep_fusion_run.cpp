// Runs every (model, policy) of the Deep Fusion reproduction and writes one CSV row each.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "compiler/zoo/zoo.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/bound.hpp"
#include "scheduler/bytes_bound.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/policy.hpp"

namespace {

// Where a schedule's DRAM bytes beyond the compulsory ones go (issue 7's bytes goal): each
// group's lower bound (group_lower_bound: one-tile reads, stored outputs, weights, tables,
// each once) summed over the groups is compulsory + the activations written to DRAM and read
// back at group cuts; what a group moves above its bound is tiling overhead (halo rows
// re-read by recompute tiles, weight slices re-read per tile). Prints the totals and the
// groups with the largest overhead and cut traffic.
void print_breakdown(const tessel::sched::ScheduledNet& result, const tessel::HwConfig& config) {
  using namespace tessel::sched;
  const Net& net = result.net;
  const Schedule& s = result.schedule;
  const Machine machine = machine_from_config(config);
  struct Row {
    size_t group;
    int64_t cut, overhead, weights_extra;
  };
  std::vector<Row> rows;
  int64_t bound_sum = 0, overhead_sum = 0;
  for (size_t i = 0; i < s.groups.size(); ++i) {
    const GroupSchedule& g = s.groups[i];
    if (g.dram_view) continue;
    const GroupBound bound = group_lower_bound(net, machine, g.ops);
    int64_t weights = 0;
    for (int op : g.ops) weights += net.op(op).weight_bytes + net.op(op).requant_table_bytes;
    bound_sum += bound.bytes;
    overhead_sum += g.traffic.total() - bound.bytes;
    rows.push_back({i, bound.bytes - weights, g.traffic.total() - bound.bytes,
                    g.traffic.weight_traffic() - weights});
  }
  const auto mb = [](int64_t b) { return static_cast<double>(b) / 1e6; };
  std::fprintf(stderr,
               "breakdown %s %s: total %.3f MB = compulsory %.3f + group-cut activations %.3f "
               "+ tiling overhead %.3f (x%.3f compulsory)\n",
               s.model.c_str(), s.policy.c_str(), mb(s.traffic.total()), mb(s.compulsory_bytes),
               mb(bound_sum - s.compulsory_bytes), mb(overhead_sum),
               static_cast<double>(s.traffic.total()) / static_cast<double>(s.compulsory_bytes));
  auto print = [&](const char* what, auto key) {
    std::sort(rows.begin(), rows.end(),
              [&](const Row& a, const Row& b) { return key(a) > key(b); });
    for (size_t k = 0; k < rows.size() && k < 8; ++k) {
      const GroupSchedule& g = s.groups[rows[k].group];
      std::fprintf(stderr,
                   "  %-9s group %3zu %-24s .. %-24s %2zu ops tiles %lldx%lldx%lld %s %s: "
                   "in+out %.3f MB, overhead %.3f MB (weights %.3f)\n",
                   what, rows[k].group, net.op(g.ops.front()).name.c_str(),
                   net.op(g.ops.back()).name.c_str(), g.ops.size(),
                   static_cast<long long>(g.row_tiles), static_cast<long long>(g.col_tiles),
                   static_cast<long long>(g.channel_tiles), to_string(g.halo),
                   g.weight_sweep       ? "sweep"
                   : g.weights_resident ? "resident"
                                        : "streamed",
                   mb(rows[k].cut), mb(rows[k].overhead), mb(rows[k].weights_extra));
    }
  };
  print("overhead", [](const Row& r) { return r.overhead; });
  print("cut", [](const Row& r) { return r.cut; });
}

// Where the schedule's cycles go (issue 7's cycle goal): compute-engine busy, DMA busy
// (loads incl. weights, stores) and the prologue weight loads each group waits for before its
// first compute (GroupSchedule::prologue_weight_cycles; serial unless prefetched, and then only
// the prefetch's wait counts). Two estimates of cross-group prefetch: "ideal" hides every
// group's prologue but the first one's; "tail-bounded" hides what the previous group's tail
// covers (plan_prefetched's wait formula), assuming the buffer space is always free.
void print_cycle_breakdown(const tessel::sched::ScheduledNet& result,
                           const tessel::HwConfig& config) {
  using namespace tessel::sched;
  const Schedule& s = result.schedule;
  int64_t compute = 0, dma = 0, exposed = 0, prefetched = 0, ideal = 0, bounded = 0;
  const GroupSchedule* previous = nullptr;
  for (const GroupSchedule& g : s.groups) {
    if (g.dram_view) continue;
    compute += g.compute_cycles;
    dma += g.load_cycles + g.store_cycles + (g.weights_resident ? g.prologue_weight_cycles : 0);
    if (g.prefetched && !g.weights_resident) dma += g.prologue_weight_cycles;
    const int64_t own =
        g.prefetched ? g.cycles - g.prefetch_wait_cycles : g.cycles - g.prologue_weight_cycles;
    exposed += g.prefetched ? g.prefetch_wait_cycles : g.prologue_weight_cycles;
    if (g.prefetched) ++prefetched;
    if (previous == nullptr) {
      ideal += own + g.prologue_weight_cycles;
      bounded += own + g.prologue_weight_cycles;
    } else {
      ideal += own;
      bounded += own + std::max<int64_t>(0, g.prologue_weight_cycles + previous->tail_dma_cycles -
                                                previous->tail_cycles);
    }
    previous = &g;
  }
  const auto roof = static_cast<double>(s.roofline_cycles);
  const auto x = [&](int64_t c) { return static_cast<double>(c) / roof; };
  std::fprintf(stderr,
               "cycles %s %s %s: %lld (x%.3f roofline %lld); compute engine busy %lld (x%.3f), "
               "DMA busy %lld (x%.3f), exposed prologue weight loads %lld (x%.3f; %lld groups "
               "prefetched); with prefetch: ideal %lld (x%.3f), tail-bounded %lld (x%.3f)\n",
               s.model.c_str(), s.policy.c_str(), s.objective.c_str(),
               static_cast<long long>(s.cycles), x(s.cycles),
               static_cast<long long>(s.roofline_cycles), static_cast<long long>(compute),
               x(compute), static_cast<long long>(dma), x(dma), static_cast<long long>(exposed),
               x(exposed), static_cast<long long>(prefetched), static_cast<long long>(ideal),
               x(ideal), static_cast<long long>(bounded), x(bounded));
  // The barrier bound's terms (scheduler/bound.hpp): what must precede the tensor, what streams
  // after it.
  const BarrierBound b = barrier_bound(result.net, machine_from_config(config));
  if (b.cycles == 0) return;
  std::fprintf(stderr,
               "bound %s: %lld (x%.3f roofline) at tensor %s (completing set from %s): before "
               "%lld MACs, %lld weight bytes; after %lld Gemm MACs, %lld weight bytes, %lld on "
               "chip\n",
               s.model.c_str(), static_cast<long long>(b.cycles), x(b.cycles),
               result.net.tensor(b.tensor).name.c_str(), result.net.op(b.barrier).name.c_str(),
               static_cast<long long>(b.before_macs), static_cast<long long>(b.before_weight_bytes),
               static_cast<long long>(b.after_macs), static_cast<long long>(b.after_weight_bytes),
               static_cast<long long>(b.on_chip_bytes));
}

// Where a schedule's bytes exceed the bytes bound (issue 39, item 3). The bound's chain term
// comes from a partition of the net's order into groups that pass the execution model's
// capacity facts; each such group is planned alone here (plan_group, bytes objective, the map
// space of `optimal`): either no mapping of it fits (the planner's reason: weights and tiles
// together), or its best mapping moves more than the bound charges it (halo rows re-read,
// weights re-read per tile). Also lists the tensors the schedule's cuts send through DRAM that
// the bound's partition keeps on chip (each is stored and loaded at least once: 2 x bytes).
void print_gap(const tessel::sched::ScheduledNet& result, const tessel::HwConfig& config,
               const tessel::sched::MapSpaceFeatures& features) {
  using namespace tessel::sched;
  const Net& net = result.net;
  const Schedule& s = result.schedule;
  const Machine machine = machine_from_config(config);
  const BytesBoundModel model(net);
  const BytesBound bound = model.at(machine);
  const std::vector<int> seq = schedulable_ops(net);
  const auto mb = [](int64_t b) { return static_cast<double>(b) / 1e6; };
  std::fprintf(stderr,
               "gap %s %s: schedule %.3f MB, bound %.3f MB (chain %.3f, per tensor %.3f; %zu "
               "groups), x%.3f\n",
               s.model.c_str(), s.policy.c_str(), mb(s.traffic.total()), mb(bound.bytes),
               mb(bound.chain_bytes), mb(bound.per_tensor_bytes), bound.chain_groups.size(),
               static_cast<double>(s.traffic.total()) / static_cast<double>(bound.bytes));
  std::vector<int> in_bound(static_cast<size_t>(net.size()), -1);
  std::vector<int> in_schedule(static_cast<size_t>(net.size()), -1);
  const size_t groups = bound.chain_groups.size();
  auto end_of = [&](size_t k) {
    return k + 1 < groups ? static_cast<size_t>(bound.chain_groups[k + 1]) : seq.size();
  };
  for (size_t k = 0; k < groups; ++k)
    for (size_t p = static_cast<size_t>(bound.chain_groups[k]); p < end_of(k); ++p)
      in_bound[static_cast<size_t>(seq[p])] = static_cast<int>(k);
  for (size_t k = 0; k < s.groups.size(); ++k)
    for (int op : s.groups[k].ops) in_schedule[static_cast<size_t>(op)] = static_cast<int>(k);
  auto crosses = [&](const std::vector<int>& group_of, int t) {
    const int producer = net.tensor(t).producer;
    for (int c : net.tensor(t).consumers)
      if (group_of[static_cast<size_t>(c)] != group_of[static_cast<size_t>(producer)]) return true;
    return false;
  };
  std::vector<std::pair<int64_t, int>> extra;
  int64_t extra_sum = 0;
  for (int t = 0; t < static_cast<int>(net.tensors.size()); ++t) {
    const Tensor& tensor = net.tensor(t);
    if (tensor.consumers.empty() || net.op(tensor.producer).kind == OpKind::Input) continue;
    if (!crosses(in_schedule, t) || crosses(in_bound, t)) continue;
    extra.push_back({2 * net.tensor_bytes(t), t});
    extra_sum += 2 * net.tensor_bytes(t);
  }
  std::sort(extra.rbegin(), extra.rend());
  std::fprintf(stderr, "  cut by the schedule, kept by the bound: %zu tensors, >= %.3f MB\n",
               extra.size(), mb(extra_sum));
  for (size_t k = 0; k < extra.size() && k < 6; ++k)
    std::fprintf(stderr, "    %-40s %.3f MB\n", net.tensor(extra[k].second).name.c_str(),
                 mb(extra[k].first));
  PlanOptions options;
  options.allow_weight_sweep = features.weight_sweep;
  options.column_tiles_every_row = features.column_tiles_every_row;
  for (size_t k = 0; k < groups; ++k) {
    const auto first = static_cast<size_t>(bound.chain_groups[k]);
    const std::vector<int> ops(seq.begin() + static_cast<long>(first),
                               seq.begin() + static_cast<long>(end_of(k)));
    const int64_t floor = model.group_floor(first, ops.size(), machine);
    auto plan = plan_group(net, machine, ops, options);
    if (plan.ok() && plan.value().traffic.total() <= floor) continue;
    std::fprintf(stderr, "  bound group %-28s .. %-28s %2zu ops, floor %.3f MB: ",
                 net.op(ops.front()).name.c_str(), net.op(ops.back()).name.c_str(), ops.size(),
                 mb(floor));
    if (plan.ok()) {
      const GroupSchedule& g = plan.value();
      std::fprintf(stderr, "best mapping %.3f MB (+%.3f; tiles %lldx%lldx%lld %s)\n",
                   mb(g.traffic.total()), mb(g.traffic.total() - floor),
                   static_cast<long long>(g.row_tiles), static_cast<long long>(g.col_tiles),
                   static_cast<long long>(g.channel_tiles),
                   g.weight_sweep ? "sweep" : to_string(g.halo));
    } else {
      std::fprintf(stderr, "no mapping (%s)\n", plan.reason().c_str());
    }
    // F9 (docs/bounds.md): the head conv's least input loads over every part count and tile
    // grid, and over the map space's power-of-two part counts only (a planner's floor).
    const StreamedLoads any = model.head_streamed_loads(first, machine);
    const StreamedLoads pow2 = model.head_streamed_loads(first, machine, true);
    if (any.bytes >= 0 && any.parts > 1)
      std::fprintf(stderr,
                   "    F9 head input loads %.3f MB (%lld parts, %lldx%lld tiles); power-of-two "
                   "parts %.3f MB (%lld parts, %lldx%lld tiles)\n",
                   mb(any.bytes), static_cast<long long>(any.parts),
                   static_cast<long long>(any.row_tiles), static_cast<long long>(any.col_tiles),
                   mb(pow2.bytes), static_cast<long long>(pow2.parts),
                   static_cast<long long>(pow2.row_tiles), static_cast<long long>(pow2.col_tiles));
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessel;
  std::string hw = std::string(TESSEL_SOURCE_DIR) + "/configs/hw/npc19-deepfusion.yaml";
  std::string out_path = "deep_fusion.csv";
  std::vector<std::string> models = {"vgg19", "googlenet", "inception_v3", "resnet18", "resnet50"};
  bool print_groups = false;
  bool breakdown = false;
  bool cycle_breakdown = false;
  bool gap = false;
  sched::MapSpaceFeatures features;
  std::string only_policy;
  auto split = [](const std::string& list) {
    std::vector<std::string> items;
    for (size_t b = 0, e; b <= list.size(); b = e + 1) {
      e = list.find(',', b);
      if (e == std::string::npos) e = list.size();
      items.push_back(list.substr(b, e - b));
    }
    return items;
  };
  // A search depth: an integer >= -1 (-1: every tiling), else nullopt.
  auto depth_of = [](const std::string& text) -> std::optional<int> {
    int value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end || value < -1) return std::nullopt;
    return value;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if ((key == "--search-depth-bytes" || key == "--search-depth-latency") && i + 1 < argc) {
      const auto depth = depth_of(argv[++i]);
      if (!depth) {
        std::cerr << "error: " << key << " '" << argv[i]
                  << "' is not a search depth (an integer, -1 for every tiling)\n";
        return 2;
      }
      (key == "--search-depth-bytes" ? features.search_depth_bytes
                                     : features.search_depth_latency) = *depth;
      continue;
    }
    if (key == "--groups") {
      print_groups = true;
    } else if (key == "--breakdown") {
      breakdown = true;
    } else if (key == "--gap") {
      gap = true;
    } else if (key == "--cycle-breakdown") {
      cycle_breakdown = true;
    } else if (key == "--no-weight-sweep") {
      features.weight_sweep = false;
    } else if (key == "--no-s2d-stem") {
      features.space_to_depth_stem = false;
    } else if (key == "--no-fold-activations") {
      features.fold_activations = false;
    } else if (key == "--2d-tiles") {
      features.column_tiles_every_row = true;
    } else if (key == "--no-2d-tiles") {
      features.column_tiles_every_row = false;
    } else if (key == "--prefetch") {
      features.prefetch = true;
    } else if (key == "--no-prefetch") {
      features.prefetch = false;
    } else if (i + 1 < argc && key == "--hw") {
      hw = argv[++i];
    } else if (i + 1 < argc && key == "--out") {
      out_path = argv[++i];
    } else if (i + 1 < argc && key == "--models") {
      models = split(argv[++i]);
    } else if (i + 1 < argc && key == "--policy") {
      only_policy = argv[++i];
    } else {
      std::cerr << "usage: deep_fusion_run [--hw H.yaml] [--out CSV] [--models a,b] "
                   "[--policy P] [--groups] [--breakdown] [--cycle-breakdown] [--gap] "
                   "[--no-weight-sweep] "
                   "[--no-s2d-stem] [--no-fold-activations] [--2d-tiles | --no-2d-tiles] "
                   "[--search-depth-bytes N] "
                   "[--search-depth-latency N] "
                   "[--prefetch | --no-prefetch]\n";
      return 2;
    }
  }
  const auto check = check_hw_config_file(hw);
  if (!check.ok()) {
    for (const auto& d : check.diagnostics) std::cerr << d.str() << '\n';
    return 1;
  }
  const HwConfig& config = *check.config;
  std::ofstream out(out_path);
  out << "model,policy,objective,groups,dram_bytes,read_bytes,write_bytes,weight_bytes,"
         "activation_in_bytes,activation_out_bytes,compulsory_bytes,cycles,roofline_cycles,"
         "macs,search_seconds,cpu_seconds,lower_bound_cycles,bound_bytes,bound_group_caps_bytes\n";
  struct Run {
    std::string policy;
    sched::Objective objective;
  };
  const std::vector<Run> runs = {
      {"layerwise", sched::Objective::Bytes}, {"opfusion", sched::Objective::Bytes},
      {"fusion", sched::Objective::Bytes},    {"fusion+reuse", sched::Objective::Bytes},
      {"optimal", sched::Objective::Bytes},   {"optimal", sched::Objective::Latency}};
  int failures = 0;
  for (const auto& model : models) {
    auto graph = zoo::build_model(model, {.with_weights = false});
    if (!graph.ok()) {
      std::cerr << model << ": " << graph.reason() << '\n';
      ++failures;
      continue;
    }
    for (const auto& run : runs) {
      if (!only_policy.empty() && run.policy != only_policy) continue;
      // CPU time of the whole design point (net form, search, checker): the figure that does not
      // depend on how loaded the machine is (search_seconds is wall time of the search alone).
      const std::clock_t cpu_start = std::clock();
      auto result =
          sched::schedule_graph(graph.value(), config, run.policy, run.objective, features);
      const double cpu_seconds =
          static_cast<double>(std::clock() - cpu_start) / static_cast<double>(CLOCKS_PER_SEC);
      if (!result.ok()) {
        std::cerr << model << " " << run.policy << ": " << result.reason() << '\n';
        ++failures;
        continue;
      }
      const auto& s = result.value().schedule;
      // The DRAM-bytes bound of this policy's net at the config's capacity (bytes_bound.hpp).
      const sched::Machine machine = sched::machine_from_config(config);
      const int64_t bound_bytes = sched::bytes_lower_bound(result.value().net, machine).bytes;
      // The same with the planner's group caps (F8): a bound for Tessel's planner as it is.
      const int64_t capped_bytes =
          sched::BytesBoundModel(result.value().net, true).at(machine).bytes;
      if (print_groups) std::cerr << sched::format_table(result.value());
      if (breakdown) print_breakdown(result.value(), config);
      if (cycle_breakdown) print_cycle_breakdown(result.value(), config);
      if (gap) print_gap(result.value(), config, features);
      out << model << ',' << run.policy << ',' << sched::to_string(run.objective) << ','
          << s.groups.size() << ',' << s.traffic.total() << ',' << s.traffic.read() << ','
          << s.traffic.write() << ',' << s.traffic.weights_read << ',' << s.traffic.activations_read
          << ',' << s.traffic.activations_written << ',' << s.compulsory_bytes << ',' << s.cycles
          << ',' << s.roofline_cycles << ',' << s.macs << ',' << s.search_seconds << ','
          << cpu_seconds << ',' << s.lower_bound_cycles << ',' << bound_bytes << ',' << capped_bytes
          << '\n';
      std::fprintf(stderr,
                   "%-13s %-13s %-8s groups %4zu  dram %12lld (x%.2f compulsory, x%.3f "
                   "bound)  "
                   "cycles %12lld (x%.2f roofline, x%.2f bound)  search %.3f s (cpu %.3f s)\n",
                   model.c_str(), run.policy.c_str(), sched::to_string(run.objective),
                   s.groups.size(), static_cast<long long>(s.traffic.total()),
                   static_cast<double>(s.traffic.total()) / static_cast<double>(s.compulsory_bytes),
                   static_cast<double>(s.traffic.total()) / static_cast<double>(bound_bytes),
                   static_cast<long long>(s.cycles),
                   static_cast<double>(s.cycles) / static_cast<double>(s.roofline_cycles),
                   static_cast<double>(s.cycles) / static_cast<double>(s.lower_bound_cycles),
                   s.search_seconds, cpu_seconds);
    }
  }
  return failures == 0 ? 0 : 1;
}
