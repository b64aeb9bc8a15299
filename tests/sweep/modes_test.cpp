// The analytic and sim evaluators on tiny zoo nets: figures against the scheduler and the
// simulator called directly, invalid points with their reasons, timing-only vs functional.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "compiler/zoo/load_model.hpp"
#include "experiments/sweep/analytic_evaluator.hpp"
#include "experiments/sweep/evaluator.hpp"
#include "experiments/sweep/runner.hpp"
#include "experiments/sweep/spec.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/policy.hpp"
#include "tests/sweep/sweep_test_util.hpp"

namespace tessel::sweep {
namespace {

using testing::edge_config_path;
using testing::read_lines;
using testing::TempDir;

SweepSpec spec_of(const std::string& mode_and_options, const std::string& models,
                  const std::string& axes) {
  return parse_spec(mode_and_options + "\nhw: " + edge_config_path() + "\nmodels: " + models +
                        "\npolicies: [layerwise, opfusion, fusion, fusion+reuse, optimal]\n"
                        "axes: " +
                        axes + "\n",
                    "modes.yaml");
}

Evaluation evaluate(PointEvaluator& evaluator, const SweepPoint& point) {
  return evaluate_point(evaluator, point);
}

// The evaluator's cached-Net path gives exactly what schedule_graph (the driver) gives.
TEST(AnalyticMode, FiguresEqualTheDriversScheduleForEveryPolicy) {
  const SweepSpec spec =
      spec_of("mode: analytic", "[tiny_residual, tiny_depthwise]",
              "\n  scratchpads[0].size: [8KiB, 128KiB]\n  dram.bandwidth: [1GB/s, 6.4GB/s]");
  ASSERT_EQ(spec.points.size(), 2U * 2 * 2 * 5);
  auto evaluator = make_evaluator(spec);
  ASSERT_TRUE(evaluator.ok()) << evaluator.reason();
  std::map<std::string, ir::Graph> graphs;
  zoo::LoadOptions load;
  load.zoo.with_weights = false;
  for (const std::string& model : spec.models) graphs.emplace(model, zoo::load_model(model, load));
  int ok = 0;
  for (const SweepPoint& point : spec.points) {
    const Evaluation got = evaluate(*evaluator.value(), point);
    auto expected = sched::schedule_graph(graphs.at(point.model), *point.config->hw, point.policy,
                                          sched::Objective::Bytes);
    ASSERT_EQ(got.status == Evaluation::Status::ok, expected.ok()) << point.index;
    if (!expected.ok()) {
      EXPECT_EQ(got.reason, expected.reason());
      continue;
    }
    EXPECT_EQ(got.figures,
              schedule_figures(expected.value().schedule, expected.value().net, *point.config->hw))
        << "point " << point.index << " (" << point.model << ", " << point.policy << ")";
    ++ok;
  }
  EXPECT_GT(ok, 30);
  EXPECT_NE(evaluator.value()->timing_report().find("policy (search + cost model)"),
            std::string::npos);
}

// The sustained DRAM rate of each point, by hand on edge-small (16 B a cycle at 400 MHz, 32 B
// bursts, a 48-cycle latency): 4 slots carry 4 x 32 B per 50 cycles = 2.56 B a cycle = 1.024 GB/s;
// 32 slots cover the round trip, so the bus's 6.4 GB/s.
TEST(AnalyticMode, SustainedDramRateIsTheSlotsPerRoundTripOrTheBus) {
  const SweepSpec spec =
      spec_of("mode: analytic", "[tiny_residual]", "\n  dram.max_outstanding_requests: [4, 32]");
  ASSERT_EQ(spec.points.size(), 2U * 5);
  auto evaluator = make_evaluator(spec);
  ASSERT_TRUE(evaluator.ok()) << evaluator.reason();
  for (const SweepPoint& point : spec.points) {
    if (point.policy != "optimal") continue;
    const Evaluation got = evaluate(*evaluator.value(), point);
    ASSERT_EQ(got.status, Evaluation::Status::ok) << got.reason;
    const bool four = point.config->hw->dram.max_outstanding_requests == 4;
    EXPECT_DOUBLE_EQ(got.figures.at("dram_bandwidth_gbps").get<double>(), 6.4);
    EXPECT_NEAR(got.figures.at("dram_sustained_gbps").get<double>(), four ? 1.024 : 6.4, 1e-12);
  }
}

// `tiles_2d: false` schedules in the rows-then-columns map space: each point's figures are the
// driver's with column_tiles_every_row off, and some differ from the default's (2D tiles).
TEST(AnalyticMode, Tiles2dOffIsTheDriversRowsThenColumnsSchedule) {
  const std::string axes = "\n  scratchpads[0].size: [2KiB, 3KiB, 4KiB, 6KiB, 8KiB, 16KiB]";
  const SweepSpec on =
      spec_of("mode: analytic", "[tiny_conv, tiny_residual, tiny_depthwise]", axes);
  const SweepSpec off = spec_of("mode: analytic\ntiles_2d: false",
                                "[tiny_conv, tiny_residual, tiny_depthwise]", axes);
  auto on_evaluator = make_evaluator(on);
  auto off_evaluator = make_evaluator(off);
  ASSERT_TRUE(on_evaluator.ok() && off_evaluator.ok());
  std::map<std::string, ir::Graph> graphs;
  zoo::LoadOptions load;
  load.zoo.with_weights = false;
  for (const std::string& model : off.models) graphs.emplace(model, zoo::load_model(model, load));
  sched::MapSpaceFeatures rows_only;
  rows_only.column_tiles_every_row = false;
  int ok = 0, differ = 0;
  for (size_t i = 0; i < off.points.size(); ++i) {
    const SweepPoint& point = off.points[i];
    const Evaluation got = evaluate(*off_evaluator.value(), point);
    auto expected = sched::schedule_graph(graphs.at(point.model), *point.config->hw, point.policy,
                                          sched::Objective::Bytes, rows_only);
    ASSERT_EQ(got.status == Evaluation::Status::ok, expected.ok()) << point.index;
    if (!expected.ok()) continue;
    EXPECT_EQ(got.figures,
              schedule_figures(expected.value().schedule, expected.value().net, *point.config->hw))
        << "point " << point.index << " (" << point.model << ", " << point.policy << ")";
    ++ok;
    const Evaluation with_2d = evaluate(*on_evaluator.value(), on.points[i]);
    if (with_2d.status == Evaluation::Status::ok && with_2d.figures != got.figures) ++differ;
  }
  EXPECT_GT(ok, 10);
  EXPECT_GT(differ, 0);
}

// A spec's objective list: each point scheduled under its own objective, equal to the driver's
// schedule under it; and the sweep's pairing rule (energy objectives only for optimal and
// opfusion) is the scheduler's: every other policy refuses them.
TEST(AnalyticMode, EachPointRunsUnderItsOwnObjective) {
  const SweepSpec spec =
      parse_spec("mode: analytic\nhw: " + edge_config_path() +
                     "\nmodels: tiny_residual\npolicies: [fusion, opfusion, optimal]\n"
                     "objectives: [bytes, latency, energy, edp]\n",
                 "objectives.yaml");
  ASSERT_EQ(spec.points.size(), 2u + 4 + 4);
  auto evaluator = make_evaluator(spec);
  ASSERT_TRUE(evaluator.ok()) << evaluator.reason();
  zoo::LoadOptions load;
  load.zoo.with_weights = false;
  const ir::Graph graph = zoo::load_model("tiny_residual", load);
  for (const SweepPoint& point : spec.points) {
    SCOPED_TRACE(point.policy + " " + point.objective);
    const Evaluation got = evaluate(*evaluator.value(), point);
    ASSERT_EQ(got.status, Evaluation::Status::ok) << got.reason;
    auto expected = sched::schedule_graph(graph, *point.config->hw, point.policy,
                                          sched::parse_objective(point.objective).value());
    ASSERT_TRUE(expected.ok()) << expected.reason();
    EXPECT_EQ(got.figures,
              schedule_figures(expected.value().schedule, expected.value().net, *point.config->hw));
  }
  const auto& takers = energy_objective_policies();
  for (const sched::Policy& p : sched::policies()) {
    const std::string policy(p.name);
    const bool takes = std::find(takers.begin(), takers.end(), policy) != takers.end();
    auto r =
        sched::schedule_graph(graph, *spec.points[0].config->hw, policy, sched::Objective::Energy);
    EXPECT_EQ(r.ok(), takes) << policy << ": " << (r.ok() ? "" : r.reason());
  }
}

// A models: mapping builds the zoo model with its options: tiny_attention at sequence 8 (its
// default is 16) has the figures of the graph built with sequence 8, and its compulsory bytes
// are the default's less 8 rows of the input and 8 of the output (d 32, int8: 2 x 8 x 32 B).
TEST(AnalyticMode, ModelMappingBuildsTheZooModelWithItsOptions) {
  // cloud-large: attention needs the vector unit's lookup tables, which edge-small lacks.
  const SweepSpec spec = parse_spec(
      "mode: analytic\nhw: " + std::string(TESSEL_SOURCE_DIR) +
          "/configs/hw/cloud-large.yaml\nmodels: [tiny_attention, {zoo: tiny_attention, seq: "
          "8}]\npolicies: [layerwise, opfusion, fusion, fusion+reuse, optimal]\n",
      "modes.yaml");
  ASSERT_EQ(spec.models, (std::vector<std::string>{"tiny_attention", "tiny_attention-seq8"}));
  auto evaluator = make_evaluator(spec);
  ASSERT_TRUE(evaluator.ok()) << evaluator.reason();
  zoo::LoadOptions load;
  load.zoo.with_weights = false;
  load.zoo.sequence = 8;
  const ir::Graph seq8 = zoo::load_model("tiny_attention", load);
  std::map<std::string, std::int64_t> compulsory;
  for (const SweepPoint& point : spec.points) {
    const Evaluation got = evaluate(*evaluator.value(), point);
    ASSERT_EQ(got.status, Evaluation::Status::ok) << point.model << " " << got.reason;
    compulsory[point.model] = got.figures.at("compulsory_bytes").get<std::int64_t>();
    if (point.model != "tiny_attention-seq8") continue;
    auto expected =
        sched::schedule_graph(seq8, *point.config->hw, point.policy, sched::Objective::Bytes);
    ASSERT_TRUE(expected.ok()) << expected.reason();
    EXPECT_EQ(got.figures,
              schedule_figures(expected.value().schedule, expected.value().net, *point.config->hw))
        << point.policy;
  }
  EXPECT_EQ(compulsory.at("tiny_attention") - compulsory.at("tiny_attention-seq8"), 2 * 8 * 32);
}

TEST(AnalyticMode, UnknownOptionIsRefused) {
  const SweepSpec spec = spec_of("mode: analytic\nanalytic: {chek: false}", "[tiny_conv]",
                                 "{dram.bandwidth: [1GB/s]}");
  auto evaluator = make_evaluator(spec);
  ASSERT_FALSE(evaluator.ok());
  EXPECT_EQ(evaluator.reason(), "analytic.chek: unknown option or bad value (check: true|false)");
}

#ifdef TESSEL_TEST_HAVE_SIM

std::int64_t number(const nlohmann::json& figures, const char* key, const char* sub = nullptr) {
  return sub ? figures.at(key).at(sub).get<std::int64_t>() : figures.at(key).get<std::int64_t>();
}

// tiny_conv (3x8x8 -> conv3x3, 4 channels) on edge-small: every policy compiles and simulates;
// the simulated DMA bytes are the scheduler's prediction plus the requant tables, 8 B per output
// channel = 32 B, and the functional run is bit exact.
TEST(SimMode, SimulatedBytesAreThePredictionPlusRequantTablesAndOutputsAreBitExact) {
  TempDir dir;
  const SweepSpec spec =
      spec_of("mode: sim\nsim: {functional: true}", "[tiny_conv]", "{dram.bandwidth: [6.4GB/s]}");
  auto evaluator = make_evaluator(spec);
  ASSERT_TRUE(evaluator.ok()) << evaluator.reason();
  RunOptions options;
  options.out = dir / "r.jsonl";
  options.jobs = 2;
  auto summary = run_sweep(spec, *evaluator.value(), options);
  ASSERT_TRUE(summary.ok()) << summary.reason();
  EXPECT_EQ(summary.value().ok, 5U);
  const auto lines = read_lines(dir / "r.jsonl");
  ASSERT_EQ(lines.size(), 5U);
  for (const std::string& text : lines) {
    const auto line = nlohmann::json::parse(text);
    ASSERT_EQ(line["status"], "ok") << text;
    const auto& f = line["figures"];
    EXPECT_EQ(f["bit_exact"], true) << line["policy"];
    EXPECT_EQ(number(f, "requant_table_bytes"), 32);
    EXPECT_EQ(number(f, "sim_dram_bytes", "weights_read"),
              number(f, "dram_bytes", "weights_read") + 32);
    EXPECT_EQ(number(f, "sim_dram_bytes", "activations_read"),
              number(f, "dram_bytes", "activations_read"));
    EXPECT_EQ(number(f, "sim_dram_bytes", "activations_written"),
              number(f, "dram_bytes", "activations_written"));
    // Each executed instruction is fetched from DRAM: 32 B each.
    EXPECT_EQ(number(f, "sim_dram_bytes", "instructions_read"), 32 * number(f, "sim_instructions"));
    EXPECT_GE(number(f, "sim_cycles"), number(f, "roofline_cycles"));
    EXPECT_GE(number(f, "lower_bound_cycles"), number(f, "roofline_cycles"));
    EXPECT_GE(number(f, "sim_cycles"), number(f, "lower_bound_cycles"));
    EXPECT_DOUBLE_EQ(
        f["sim_over_predicted_cycles"].get<double>(),
        static_cast<double>(number(f, "sim_cycles")) / static_cast<double>(number(f, "cycles")));
  }
  EXPECT_NE(evaluator.value()->timing_report().find("sim (functional)"), std::string::npos);
}

// A transformer's output is a token tensor [1, S, d] stored row-major: the functional check reads
// it in that order (it read it as NHWC before and called every transformer point inexact);
// tiny_attention at sequence 8 (a models: mapping) on cloud-large, which has the attention units.
TEST(SimMode, TinyAttentionIsBitExactUnderEveryPolicy) {
  const SweepSpec spec =
      parse_spec("mode: sim\nsim: {functional: true}\nhw: " + std::string(TESSEL_SOURCE_DIR) +
                     "/configs/hw/cloud-large.yaml\nmodels: [{zoo: tiny_attention, seq: 8}]\n"
                     "policies: [layerwise, opfusion, fusion, fusion+reuse, optimal]\n",
                 "modes.yaml");
  auto evaluator = make_evaluator(spec);
  ASSERT_TRUE(evaluator.ok()) << evaluator.reason();
  for (const SweepPoint& point : spec.points) {
    const Evaluation got = evaluate(*evaluator.value(), point);
    ASSERT_EQ(got.status, Evaluation::Status::ok) << point.policy << ": " << got.reason;
    EXPECT_TRUE(got.figures.at("bit_exact").get<bool>()) << point.policy;
  }
}

TEST(SimMode, TimingOnlyGivesTheFunctionalRunsCyclesAndBytes) {
  const std::string models = "[tiny_depthwise]";
  const std::string axes = "\n  scratchpads[0].size: [32KiB, 128KiB]";
  const SweepSpec timing = spec_of("mode: sim", models, axes);
  const SweepSpec functional = spec_of("mode: sim\nsim: {functional: true}", models, axes);
  auto fast = make_evaluator(timing);
  auto full = make_evaluator(functional);
  ASSERT_TRUE(fast.ok() && full.ok());
  int compared = 0;
  for (std::size_t i = 0; i < timing.points.size(); ++i) {
    const Evaluation a = evaluate(*fast.value(), timing.points[i]);
    const Evaluation b = evaluate(*full.value(), functional.points[i]);
    ASSERT_EQ(a.status, b.status) << i << ": " << a.reason << " / " << b.reason;
    if (a.status != Evaluation::Status::ok) continue;
    EXPECT_FALSE(a.figures.contains("bit_exact"));
    EXPECT_EQ(b.figures["bit_exact"], true);
    EXPECT_EQ(a.figures["sim_cycles"], b.figures["sim_cycles"]);
    EXPECT_EQ(a.figures["sim_dram_bytes"], b.figures["sim_dram_bytes"]);
    ++compared;
  }
  EXPECT_EQ(compared, 10);
}

// A transformer's outputs are token tensors [1, S, d], stored as S pixels of d channels: the sim
// evaluator reads them in graph order (codegen::read_tensor), so tiny_causal (one GPT-2 block,
// causal softmax) on cloud-large is bit exact under every policy.
TEST(SimMode, TokenTensorOutputsOfACausalBlockAreBitExact) {
  TempDir dir;
  const SweepSpec spec =
      parse_spec("mode: sim\nsim: {functional: true}\nhw: " + std::string(TESSEL_SOURCE_DIR) +
                     "/configs/hw/cloud-large.yaml\nmodels: [tiny_causal]\n"
                     "policies: [layerwise, opfusion, fusion, fusion+reuse, optimal]\n"
                     "axes: {dram.bandwidth: [25.6GB/s]}\n",
                 "modes.yaml");
  auto evaluator = make_evaluator(spec);
  ASSERT_TRUE(evaluator.ok()) << evaluator.reason();
  RunOptions options;
  options.out = dir / "r.jsonl";
  options.jobs = 2;
  auto summary = run_sweep(spec, *evaluator.value(), options);
  ASSERT_TRUE(summary.ok()) << summary.reason();
  EXPECT_EQ(summary.value().ok, 5U);
  const auto lines = read_lines(dir / "r.jsonl");
  ASSERT_EQ(lines.size(), 5U);
  for (const std::string& text : lines) {
    const auto line = nlohmann::json::parse(text);
    ASSERT_EQ(line["status"], "ok") << text;
    EXPECT_EQ(line["figures"]["bit_exact"], true) << line["policy"];
  }
}

// A design point codegen cannot lower (tiny_conv's 3 input channels on a 32-row array leave 29
// zero weight rows in a block; the DMA pads at most 15) is an invalid point, not a crash.
TEST(SimMode, CodegenLimitIsAnInvalidPointNamingTheGroupAndOp) {
  // tiny_conv's 3 input channels on a 512-row array: 509 zero weight rows per block, more than
  // the load's 8-bit pad field (255) writes.
  const SweepSpec spec = spec_of("mode: sim", "[tiny_conv]", "{matrix.rows: [512]}");
  auto evaluator = make_evaluator(spec);
  ASSERT_TRUE(evaluator.ok()) << evaluator.reason();
  const Evaluation got = evaluate(*evaluator.value(), spec.points[0]);  // layerwise
  ASSERT_EQ(got.status, Evaluation::Status::invalid);
  EXPECT_EQ(got.reason,
            "codegen: group 0: conv 'conv': 509 zero weight rows to pad in one block (the DMA pads "
            "at most 255)");
}

#endif  // TESSEL_TEST_HAVE_SIM

}  // namespace
}  // namespace tessel::sweep
