// The explicit mapping (group_mapping.hpp): derived from planned groups with hand-computed
// residencies and loops, written and read back identically, costed from a hand-written JSON,
// and refused with located errors when malformed, inconsistent or infeasible.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/checker.hpp"
#include "scheduler/group_mapping.hpp"
#include "scheduler/loop_nest.hpp"
#include "scheduler/mapped_schedule.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/policy.hpp"
#include "scheduler/schedule_json.hpp"

namespace tessel::sched::mapping_test {
namespace {

// x (4 x 8 x 8, 8-bit) -> conv (3x3, pad 1, 8 out) -> relu.
Net halo_net() {
  NetBuilder b("halo", 1, 1);
  const int x = b.input("x", {4, 8, 8});
  b.eltwise("relu", b.conv("conv", x, 8, 3, 1, 1));
  return b.build();
}

// x (16 x 5 x 5) -> gemm (400 inputs, 8 outputs): on a 4 x 4 array one output block's whole
// reduction is 100 input blocks, 100 x 16 + 16 (bias) + 32 (table) = 1648 bytes.
Net gemm_net() {
  NetBuilder b("gemm", 1, 1);
  b.gemm("fc", b.input("x", {16, 5, 5}), 8);
  return b.build();
}

// x (8 x 4 x 4) -> conv a (1x1, 16, bias) -> relu -> conv b (1x1, 8, bias) -> add(b, x) -> relu.
Net mini_block() {
  NetBuilder b("mini_block", 1, 1);
  const int x = b.input("x", {8, 4, 4});
  const int ra = b.eltwise("relu_a", b.conv("a", x, 16, 1, 1, 0, 1, 1, true));
  const int sum = b.add("add", b.conv("b", ra, 8, 1, 1, 0, 1, 1, true), x);
  b.eltwise("relu_out", sum);
  return b.build();
}

Schedule alone(const Net& net, const Machine& machine, GroupSchedule g) {
  Schedule s;
  s.model = net.name;
  s.policy = "optimal";
  s.objective = "bytes";
  s.groups = {std::move(g)};
  finalize_schedule(net, machine, s);
  return s;
}

GroupSchedule planned(const Net& net, const Machine& machine, const std::vector<int>& ops,
                      const Mapping& m) {
  auto g = evaluate_mapping(net, machine, ops, m, PlanOptions{});
  EXPECT_TRUE(g.ok()) << g.reason();
  return g.ok() ? g.value() : GroupSchedule{};
}

// Two row tiles of a 3x3 conv: output rows [0,4) and [4,8) need input rows [0,5) and [3,8),
// which overlap in rows 3 and 4 (a halo); the conv's output, read by a 1x1 ReLU, does not.
TEST(ExplicitMapping, a_row_tiled_conv_recomputes_its_input_halo) {
  const Net net = halo_net();
  const Machine machine = unified_machine(64 * 1024, 4, 4);
  Mapping m;
  m.row_tiles = 2;
  const GroupMapping gm = derive_mapping(net, planned(net, machine, {1, 2}, m));
  EXPECT_EQ(gm.nest, LoopNest::TileMajor);
  ASSERT_EQ(gm.ops.size(), 2u);
  const OpMapping& conv = gm.ops[0];
  EXPECT_EQ(conv.loops,
            (std::vector<TileLoop>{{"channels", 1, 8}, {"rows", 2, 4}, {"cols", 1, 8}}));
  ASSERT_EQ(conv.operands.size(), 3u);  // x, weights, conv's output
  EXPECT_EQ(conv.operands[0].residency, Residency::Recomputed);
  EXPECT_EQ(conv.operands[0].buffers, (std::vector<std::string>{"x"}));
  EXPECT_EQ(conv.operands[1].operand, "weights");
  EXPECT_EQ(conv.operands[1].residency, Residency::Kept);
  EXPECT_EQ(conv.operands[2].residency, Residency::Streamed);
  EXPECT_EQ(conv.operands[2].store, "");
  EXPECT_EQ(gm.ops[1].operands[1].store, "per_tile");  // relu's output: each tile its rows
  // Halo caching: the same overlap, kept on chip.
  m.halo = HaloMode::Cache;
  EXPECT_EQ(derive_mapping(net, planned(net, machine, {1, 2}, m)).ops[0].operands[0].residency,
            Residency::Cached);
  // Double-buffered: the input and the stored output ping-pong, the intermediate does not.
  m.halo = HaloMode::Recompute;
  m.double_buffered = true;
  const GroupMapping db = derive_mapping(net, planned(net, machine, {1, 2}, m));
  EXPECT_EQ(db.ops[0].operands[0].buffers, (std::vector<std::string>{"x", "x#1"}));
  EXPECT_TRUE(db.ops[0].operands[0].double_buffered);
  EXPECT_FALSE(db.ops[0].operands[2].double_buffered);
  EXPECT_TRUE(db.ops[1].operands[1].double_buffered);
}

// Channel tiles alone keep the conv's input (one box for every tile) and stream the weights.
TEST(ExplicitMapping, channel_tiles_keep_the_input_and_stream_the_weights) {
  const Net net = halo_net();
  Mapping m;
  m.channel_tiles = 2;
  m.weights_resident = false;
  const GroupMapping gm =
      derive_mapping(net, planned(net, unified_machine(64 * 1024, 4, 4), {1, 2}, m));
  EXPECT_EQ(gm.ops[0].loops[0], (TileLoop{"channels", 2, 4}));
  EXPECT_EQ(gm.ops[0].operands[0].residency, Residency::Kept);
  EXPECT_EQ(gm.ops[0].operands[1].residency, Residency::Streamed);
}

// A streamed Gemm whose block does not fit 1600 bytes accumulates chunks of 64 input blocks
// (256 inputs): 400 inputs are 2 chunks, innermost.
TEST(ExplicitMapping, a_streamed_gemm_too_large_for_its_buffer_loops_over_reduction_chunks) {
  const Net net = gemm_net();
  const Machine machine = unified_machine(1600, 4, 4);
  Mapping m;
  m.channel_tiles = 2;
  m.weights_resident = false;
  const GroupSchedule g = planned(net, machine, {1}, m);
  const GroupMapping gm = derive_mapping(net, g);
  ASSERT_EQ(gm.ops[0].loops.size(), 4u);
  EXPECT_EQ(gm.ops[0].loops[3], (TileLoop{"reduction", 2, 256}));
  // With room for a whole block (1648 bytes), no chunks.
  EXPECT_EQ(
      derive_mapping(net, planned(net, unified_machine(4096, 4, 4), {1}, m)).ops[0].loops.size(),
      3u);
}

// A weight sweep is op-major: each conv loops over its slices, the ops of its block over the
// same slices; slice-local tensors are streamed, whole maps kept; outputs stored at the end.
TEST(ExplicitMapping, a_weight_sweep_is_an_op_major_nest_of_slices) {
  const Net net = mini_block();
  Mapping m;
  m.weights_resident = false;
  m.double_buffered = true;
  m.weight_sweep = true;
  m.op_slices = {2, 0, 2, 0, 0};
  const GroupMapping gm =
      derive_mapping(net, planned(net, unified_machine(1024, 4, 4, 16), {1, 2, 3, 4, 5}, m));
  EXPECT_EQ(gm.nest, LoopNest::OpMajor);
  EXPECT_EQ(gm.ops[0].loops, (std::vector<TileLoop>{{"channels", 2, 8}}));  // a: 16 channels
  EXPECT_EQ(gm.ops[1].loops, (std::vector<TileLoop>{{"channels", 2, 8}}));  // relu_a, a's block
  EXPECT_EQ(gm.ops[2].loops, (std::vector<TileLoop>{{"channels", 2, 4}}));  // b: 8 channels
  EXPECT_EQ(gm.ops[0].operands[1].buffers, (std::vector<std::string>{"w:sweep", "w:sweep#1"}));
  EXPECT_TRUE(gm.ops[0].operands[1].double_buffered);
  EXPECT_EQ(gm.ops[0].operands[0].residency, Residency::Kept);      // x: the whole map
  EXPECT_EQ(gm.ops[0].operands[2].residency, Residency::Streamed);  // a: slice-local
  EXPECT_EQ(gm.ops[4].operands[1].store, "end");
}

// write -> read -> write is identical, and the mappings read back cost to the same schedule.
TEST(ExplicitMapping, schedules_round_trip_and_recost_identically) {
  struct Case {
    Net net;
    Machine machine;
    std::vector<int> ops;
    Mapping m;
  };
  Mapping rows;
  rows.row_tiles = 2;
  rows.col_tiles = 2;
  rows.double_buffered = true;
  Mapping chunks;
  chunks.channel_tiles = 2;
  chunks.weights_resident = false;
  Mapping sweep;
  sweep.weights_resident = false;
  sweep.double_buffered = true;
  sweep.weight_sweep = true;
  sweep.op_slices = {2, 0, 2, 0, 0};
  const std::vector<Case> cases = {
      {halo_net(), unified_machine(64 * 1024, 4, 4), {1, 2}, rows},
      {gemm_net(), unified_machine(1600, 4, 4), {1}, chunks},
      {mini_block(), unified_machine(1024, 4, 4, 16), {1, 2, 3, 4, 5}, sweep}};
  for (const Case& c : cases) {
    const Schedule s = alone(c.net, c.machine, planned(c.net, c.machine, c.ops, c.m));
    const auto first = to_json(s, c.net);
    auto back = schedule_from_json(nlohmann::json::parse(first.dump()));
    ASSERT_TRUE(back.ok()) << c.net.name << ": " << back.reason();
    EXPECT_EQ(to_json(back.value(), c.net).dump(), first.dump()) << c.net.name;
    auto recosted = schedule_from_mappings(c.net, c.machine, nlohmann::json::parse(first.dump()));
    ASSERT_TRUE(recosted.ok()) << c.net.name << ": " << recosted.reason();
    EXPECT_EQ(to_json(recosted.value(), c.net).dump(), first.dump()) << c.net.name;
  }
  // And whole searched schedules, prefetch included.
  const Net net = mini_block();
  const Machine machine = unified_machine(1024, 4, 4, 16);
  for (const char* policy : {"layerwise", "fusion", "optimal"}) {
    auto s = run_policy(net, machine, policy, Objective::Latency);
    ASSERT_TRUE(s.ok()) << policy << ": " << s.reason();
    s.value().search_seconds = 0;
    s.value().tool_version = "";
    const auto first = to_json(s.value(), net);
    auto recosted = schedule_from_mappings(net, machine, nlohmann::json::parse(first.dump()));
    ASSERT_TRUE(recosted.ok()) << policy << ": " << recosted.reason();
    EXPECT_EQ(to_json(recosted.value(), net).dump(), first.dump()) << policy;
  }
}

// A mapping written by hand (names, no buffers or sizes): two row tiles recomputing the halo
// read input rows [0,5) and [3,8): 10 rows x 8 columns x 4 channels = 320 bytes, the conv's
// weights (8 x 4 x 9 = 288 bytes) and table (8 x 8 = 64) once, the ReLU's output (8 x 8 x 8 =
// 512 bytes) once.
const char* kHandWritten = R"({
  "model": "halo", "policy": "optimal", "objective": "bytes",
  "groups": [{
    "op_names": ["conv", "relu"],
    "mapping": {
      "nest": "tile_major",
      "ops": [
        {"op": "conv", "loops": [{"axis": "channels", "tiles": 1}, {"axis": "rows", "tiles": 2},
                                 {"axis": "cols", "tiles": 1}],
         "operands": [{"operand": "input", "tensor": "x", "residency": "recomputed"},
                      {"operand": "weights", "residency": "kept"},
                      {"operand": "output", "residency": "streamed"}]},
        {"op": "relu", "loops": [{"axis": "channels", "tiles": 1}, {"axis": "rows", "tiles": 2},
                                 {"axis": "cols", "tiles": 1}],
         "operands": [{"operand": "input", "residency": "streamed"},
                      {"operand": "output", "residency": "streamed", "store": "per_tile"}]}]}}]})";

TEST(ExplicitMapping, a_hand_written_mapping_is_costed_and_checked) {
  const Net net = halo_net();
  const Machine machine = unified_machine(64 * 1024, 4, 4);
  auto s = schedule_from_mappings(net, machine, nlohmann::json::parse(kHandWritten));
  ASSERT_TRUE(s.ok()) << s.reason();
  EXPECT_EQ(s.value().traffic.activations_read, 320);
  EXPECT_EQ(s.value().traffic.weights_read, 288);
  EXPECT_EQ(s.value().traffic.requant_tables_read, 64);
  EXPECT_EQ(s.value().traffic.activations_written, 512);
  EXPECT_EQ(s.value().groups[0].row_tiles, 2);
  EXPECT_TRUE(check_schedule(net, machine, s.value()).ok());
}

// Each way a mapping can be wrong, refused naming the group, the op and the key.
TEST(ExplicitMapping, bad_mappings_are_refused_naming_group_op_and_key) {
  const Net net = halo_net();
  const Machine machine = unified_machine(64 * 1024, 4, 4);
  const auto refusal = [&](const std::function<void(nlohmann::json&)>& alter,
                           const Machine& on) -> std::string {
    auto j = nlohmann::json::parse(kHandWritten);
    alter(j);
    auto s = schedule_from_mappings(net, on, j);
    return s.ok() ? "accepted" : s.reason();
  };
  const auto ops = "/groups/0/mapping/ops"_json_pointer;
  EXPECT_EQ(refusal([&](auto& j) { j[ops][0]["operands"][0]["residency"] = "kep"; }, machine),
            "group 0: mapping.ops[0].operands[0].residency: unknown 'kep' (known: kept, "
            "streamed, recomputed, cached)");
  EXPECT_EQ(refusal([&](auto& j) { j[ops][1].erase("loops"); }, machine),
            "group 0: mapping.ops[1].loops: missing");
  EXPECT_EQ(refusal([&](auto& j) { j[ops][0]["loops"][1]["tiles"] = "2"; }, machine),
            "group 0: mapping.ops[0].loops[1].tiles: not an integer");
  EXPECT_EQ(refusal([&](auto& j) { j[ops][0]["operands"][0]["residency"] = "kept"; }, machine),
            "group 0: mapping.ops[0] ('conv').operands[0].residency: written 'kept', the model "
            "gives 'recomputed'");
  EXPECT_EQ(refusal([&](auto& j) { j[ops][1]["loops"][1]["tiles"] = 4; }, machine),
            "group 0: mapping.ops[1].loops: a tile-major nest runs every op in the same tiles: "
            "1x4x1 here, 1x2x1 in ops[0] (channels x rows x cols)");
  EXPECT_EQ(refusal([&](auto& j) { j[ops][0]["loops"][0]["axis"] = "rows"; }, machine),
            "group 0: mapping.ops[0].loops[0].axis: 'rows' where the tile order has 'channels'");
  EXPECT_EQ(refusal([&](auto& j) { j["/groups/0/op_names/1"_json_pointer] = "nope"; }, machine),
            "group 0: op_names: no op 'nope' in the net");
  EXPECT_EQ(refusal([&](auto& j) { j[ops][0]["operands"][1]["residency"] = "cached"; }, machine),
            "group 0: mapping.ops[0].operands (weights).residency: weights are kept or streamed, "
            "not cached");
  EXPECT_EQ(refusal([&](auto& j) { j[ops][0]["operands"][0]["tensor"] = 5; }, machine),
            "group 0: mapping.ops[0].operands[0].tensor: not a string");
  EXPECT_EQ(refusal([&](auto& j) { j["model"] = 5; }, machine).rfind("schedule JSON: ", 0), 0u);
  // Outside the map space (check_mapping), before the model runs.
  const auto both_ops = [&](auto& j, size_t loop, int64_t tiles) {
    j[ops][0]["loops"][loop]["tiles"] = tiles;
    j[ops][1]["loops"][loop]["tiles"] = tiles;
  };
  EXPECT_EQ(refusal([&](auto& j) { both_ops(j, 0, 3); }, machine),
            "group 0: mapping.loops (channels): 3 channel tiles (a power of two up to 8, or "
            "ceil(B / w) parts of the B = 2 column blocks)");
  EXPECT_EQ(refusal([&](auto& j) { both_ops(j, 1, 9); }, machine),
            "group 0: mapping.loops (rows): 9 row tiles (1 to the 8 rows of the stored outputs)");
  EXPECT_EQ(refusal(
                [&](auto& j) {
                  j["/groups/0/mapping/halo"_json_pointer] = "cache";
                  j[ops][0]["operands"][0]["double_buffered"] = true;
                },
                machine),
            "group 0: mapping.halo: cache keeps rows between row tiles alone (more than one, no "
            "column or channel tiles) and is never double-buffered");
  EXPECT_EQ(refusal(
                [&](auto& j) {
                  j["/groups/0/mapping/nest"_json_pointer] = "op_major";
                  for (size_t k : {0, 1})
                    j[ops][k]["loops"] = R"([{"axis": "channels", "tiles": 1}])"_json;
                },
                machine),
            "group 0: mapping.nest: op_major (a weight sweep) needs a dense conv first, two dense "
            "convs at least, and only elementwise ops, Adds, windowed pools and Concats besides");
  // Infeasible: 600 bytes hold no tiling of it (x alone is 256 bytes, its two tiles' rows and
  // the weights more); the allocator's reason, prefixed with the group.
  const std::string infeasible = refusal([](auto&) {}, unified_machine(600, 4, 4));
  EXPECT_EQ(infeasible.rfind("group 0: ", 0), 0u) << infeasible;
  EXPECT_NE(infeasible, "accepted");
  // A group that leaves an op out.
  EXPECT_EQ(refusal(
                [&](auto& j) {
                  j["/groups/0/op_names"_json_pointer] = {"conv"};
                  j[ops].erase(1);
                },
                machine),
            "groups: op 'relu' is in no group");
}

// x (8 x 4 x 4) -> conv a (1x1, 8) -> relu_a -> p (3x3/1 max pool) -> conv b (1x1, 8) -> relu_b.
Net pool_block() {
  NetBuilder b("pool_block", 1, 1);
  const int x = b.input("x", {8, 4, 4});
  const int ra = b.eltwise("relu_a", b.conv("a", x, 8, 1, 1, 0, 1, 1, true));
  const int p = b.pool("p", ra, OpKind::MaxPool, 3, 1, 1);
  b.eltwise("relu_b", b.conv("b", p, 8, 1, 1, 0, 1, 1, true));
  return b.build();
}

// An op of a hand-written mapping: its op index and its loops' tile counts by axis.
OpMapping looped(int op, std::vector<std::pair<const char*, int64_t>> loops) {
  OpMapping om;
  om.op = op;
  for (const auto& [axis, tiles] : loops) om.loops.push_back({axis, tiles, 0});
  return om;
}

// The one step enumeration (loop_nest.hpp) of hand-written mappings: a tile-major nest's tiles
// in channel_part order, an op-major nest's conv slices with their blocks and the ops run
// whole at the end of the step before them, and the refusals.
TEST(ExplicitMapping, nest_steps_enumerate_tiles_and_conv_slices) {
  const Net net = pool_block();  // ops: 1 a, 2 relu_a, 3 p, 4 b, 5 relu_b
  GroupMapping tiled;
  for (int op : {1, 2})
    tiled.ops.push_back(looped(op, {{"channels", 2}, {"rows", 3}, {"cols", 2}}));
  auto tiles = nest_steps(net, tiled);
  ASSERT_TRUE(tiles.ok()) << tiles.reason();
  ASSERT_EQ(tiles.value().size(), 12u);  // 2 x 3 x 2
  // Tile 7 = (channel part 1, row part 0, col part 1): 7 = (1 * 3 + 0) * 2 + 1.
  EXPECT_EQ(tiles.value()[7], (NestStep{7, 1, 0, 1, 0, 2, -1, {}}));
  EXPECT_EQ(tiles.value()[11], (NestStep{11, 1, 2, 1, 0, 2, -1, {}}));
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ(tiles.value()[i].tile, static_cast<int64_t>(i));

  // a in 2 slices with relu_a, p whole after a's last slice, b in 3 slices with relu_b.
  GroupMapping sweep;
  sweep.nest = LoopNest::OpMajor;
  sweep.ops = {looped(1, {{"channels", 2}}), looped(2, {{"channels", 2}}),
               looped(3, {{"channels", 1}}), looped(4, {{"channels", 3}}),
               looped(5, {{"channels", 3}})};
  auto slices = nest_steps(net, sweep);
  ASSERT_TRUE(slices.ok()) << slices.reason();
  EXPECT_EQ(slices.value(), (std::vector<NestStep>{{0, 0, 0, 0, 0, 2, 0, {}},
                                                   {0, 0, 0, 0, 0, 2, 1, {2}},
                                                   {0, 0, 0, 0, 3, 5, 0, {}},
                                                   {0, 0, 0, 0, 3, 5, 1, {}},
                                                   {0, 0, 0, 0, 3, 5, 2, {}}}));

  // The same sweep planned and derived (two slices per conv): 4 steps, p after step 1.
  const Machine machine = unified_machine(64 * 1024, 4, 4);
  Mapping m;
  m.weights_resident = false;
  m.double_buffered = true;
  m.weight_sweep = true;
  m.op_slices = {2, 0, 0, 2, 0};
  auto derived = nest_steps(net, derive_mapping(net, planned(net, machine, {1, 2, 3, 4, 5}, m)));
  ASSERT_TRUE(derived.ok()) << derived.reason();
  ASSERT_EQ(derived.value().size(), 4u);
  EXPECT_EQ(derived.value()[1].whole_ops, (std::vector<size_t>{2}));
  EXPECT_EQ(derived.value()[3], (NestStep{0, 0, 0, 0, 3, 5, 1, {}}));
  // The cost model's steps (of the search mapping, before anything is placed) are the same.
  auto searched = nest_steps(net, mapping_loops(net, {1, 2, 3, 4, 5}, m));
  ASSERT_TRUE(searched.ok()) << searched.reason();
  EXPECT_EQ(searched.value(), derived.value());
  Mapping rows;
  rows.row_tiles = 2;
  rows.channel_tiles = 2;
  rows.weights_resident = false;
  auto tiled_loops = nest_steps(net, mapping_loops(net, {1, 2}, rows));
  ASSERT_TRUE(tiled_loops.ok()) << tiled_loops.reason();
  ASSERT_EQ(tiled_loops.value().size(), 4u);
  EXPECT_EQ(tiled_loops.value()[2], (NestStep{2, 1, 0, 0, 0, 2, -1, {}}));
  EXPECT_EQ(nest_steps(net, derive_mapping(net, planned(net, machine, {1, 2}, rows))).value(),
            tiled_loops.value());

  GroupMapping view;
  view.nest = LoopNest::DramView;
  EXPECT_TRUE(nest_steps(net, view).value().empty());
  GroupMapping relu_first = sweep;
  relu_first.ops.erase(relu_first.ops.begin());
  EXPECT_EQ(nest_steps(net, relu_first).reason(), "op 'relu_a' before the first conv");
  GroupMapping pool_first = sweep;
  pool_first.ops.erase(pool_first.ops.begin(), pool_first.ops.begin() + 2);
  EXPECT_EQ(nest_steps(net, pool_first).reason(), "op 'p' runs whole before the first conv");
}

}  // namespace
}  // namespace tessel::sched::mapping_test
