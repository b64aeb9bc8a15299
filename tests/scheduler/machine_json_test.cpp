// The schedule's hardware view in JSON (issue 35 item 2; docs/scheduler-mapping.md "The hardware
// view"): written and read back exactly, checked for form key by key, compared with the view of
// the config a schedule is read for, and absent from schedules written before it.
#include <gtest/gtest.h>

#include "compiler/zoo/zoo.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/machine_json.hpp"
#include "scheduler/schedule_json.hpp"

namespace tessel::sched {
namespace {

const std::string kHw = std::string(TESSEL_SOURCE_DIR) + "/configs/hw/";

// configs/hw/vta-pynq.yaml by hand: 100 MHz; 16 x 16 int8, fill 4, drain 1, one block row
// loaded a cycle; 16 lanes, no
// optional vector instruction; 800 MB/s = 8 B/cycle, 300 ns = 30 cycles, 128 B bursts, 8
// outstanding, a 64 B DMA mover (the burst within [16, 64]); inp 32 KiB, wgt 256 KiB, acc 128 KiB,
// out 32 KiB, each holding one kind.
const char* kVtaView = R"({"name":"vta-pynq","clock_mhz":100.0,
  "matrix":{"rows":16,"cols":16,"fill_cycles":4,"drain_cycles":1,"activation_operands":false,
            "weight_load_rows":1},
  "vector":{"lanes":16,"lookup_table":false,"broadcast_multiply":false,"row_normalise":false},
  "element_bytes":{"activations":1,"weights":1,"accumulators":4},
  "dram":{"bytes_per_cycle":8.0,"latency_cycles":30,"burst_bytes":128,"max_outstanding":8,
          "mover_bytes_per_cycle":64},
  "scratchpads":[{"name":"inp","size":32768},{"name":"wgt","size":262144},
                 {"name":"acc","size":131072},{"name":"out","size":32768}],
  "scratchpad_for":{"activations":0,"weights":1,"accumulators":2,"outputs":3}})";

std::string reason_of(const nlohmann::json& view, const Machine& config_view) {
  auto s = check_machine_json(view, config_view);
  return s.ok() ? "accepted" : s.reason();
}

TEST(MachineJson, a_shipped_config_is_written_as_its_yaml_says) {
  const Machine vta = machine_from_config(load_hw_config(kHw + "vta-pynq.yaml"));
  EXPECT_EQ(machine_to_json(vta).dump(), nlohmann::ordered_json::parse(kVtaView).dump());
  // Read back, every field is the config's, bit for bit.
  auto back = machine_from_json(nlohmann::json::parse(kVtaView));
  ASSERT_TRUE(back.ok()) << back.reason();
  const Machine& m = back.value();
  EXPECT_EQ(m.name, "vta-pynq");
  EXPECT_EQ(m.clock_mhz, 100.0);
  EXPECT_EQ(m.matrix_rows, 16);
  EXPECT_EQ(m.matrix_fill_cycles, 4);
  EXPECT_EQ(m.matrix_drain_cycles, 1);
  EXPECT_EQ(m.dram_bytes_per_cycle, 8.0);
  EXPECT_EQ(m.dram_latency_cycles, 30);
  EXPECT_EQ(m.burst_bytes, 128);
  EXPECT_EQ(m.capacities(), (std::vector<int64_t>{32768, 262144, 131072, 32768}));
  EXPECT_EQ(m.scratchpad(BufferKind::Accumulators), 2);
  EXPECT_EQ(m.scratchpad(BufferKind::Outputs), 3);
  EXPECT_EQ(m.energy, nullptr);  // the energy table is the config's, never the schedule's
}

TEST(MachineJson, every_shipped_view_round_trips_exactly) {
  for (const char* name : {"edge-small", "npc19-deepfusion", "vta-pynq", "cloud-large"}) {
    const Machine view = machine_from_config(load_hw_config(kHw + name + ".yaml"));
    const auto written = machine_to_json(view);
    auto back = machine_from_json(nlohmann::json::parse(written.dump()));
    ASSERT_TRUE(back.ok()) << name << ": " << back.reason();
    EXPECT_EQ(machine_to_json(back.value()).dump(), written.dump()) << name;
    EXPECT_EQ(back.value().dram_bytes_per_cycle, view.dram_bytes_per_cycle) << name;
    EXPECT_TRUE(check_machine_json(written, view).ok()) << name;
  }
}

TEST(MachineJson, a_view_for_other_hardware_is_refused_naming_the_key) {
  const Machine vta = machine_from_config(load_hw_config(kHw + "vta-pynq.yaml"));
  auto view = nlohmann::json::parse(kVtaView);
  view["scratchpads"][1]["size"] = 131072;
  EXPECT_EQ(reason_of(view, vta),
            "machine.scratchpads[1].size: schedule made for 131072, config has 262144");
  view = nlohmann::json::parse(kVtaView);
  view["dram"]["burst_bytes"] = 64;
  EXPECT_EQ(reason_of(view, vta), "machine.dram.burst_bytes: schedule made for 64, config has 128");
  view = nlohmann::json::parse(kVtaView);
  view["scratchpad_for"]["outputs"] = 0;
  EXPECT_EQ(reason_of(view, vta),
            "machine.scratchpad_for.outputs: schedule made for 0, config has 3");
  view = nlohmann::json::parse(kVtaView);
  view["scratchpads"].erase(3);
  view["scratchpad_for"]["outputs"] = 0;
  EXPECT_EQ(reason_of(view, vta), "machine.scratchpads: schedule made for 3 entries, config has 4");
  view["name"] = "edge-small";  // the hardware is named before the name
  EXPECT_EQ(reason_of(view, vta), "machine.scratchpads: schedule made for 3 entries, config has 4");
  view = nlohmann::json::parse(kVtaView);
  view["name"] = "edge-small";
  EXPECT_EQ(reason_of(view, vta),
            "machine.name: schedule made for \"edge-small\", config has \"vta-pynq\"");
}

// matrix.weight_load_rows (session 33): a view written before it has no key and was made for
// one row a cycle; a view made for a wider load path is refused for a config without one.
TEST(MachineJson, a_view_without_weight_load_rows_was_made_for_one_row_a_cycle) {
  const Machine vta = machine_from_config(load_hw_config(kHw + "vta-pynq.yaml"));
  auto view = nlohmann::json::parse(kVtaView);
  view["matrix"].erase("weight_load_rows");
  auto back = machine_from_json(view);
  ASSERT_TRUE(back.ok()) << back.reason();
  EXPECT_EQ(back.value().weight_load_rows, 1);
  EXPECT_EQ(reason_of(view, vta), "accepted");
  view["matrix"]["weight_load_rows"] = 4;
  EXPECT_EQ(reason_of(view, vta),
            "machine.matrix.weight_load_rows: schedule made for 4, config has 1");
  view["matrix"]["weight_load_rows"] = 0;
  EXPECT_EQ(reason_of(view, vta), "machine.matrix.weight_load_rows: must be at least 1, not 0");
}

// dram.mover_bytes_per_cycle (session 46): a view written before it has the mover of its
// bursts; a view made for another mover is refused.
TEST(MachineJson, a_view_without_the_mover_width_has_its_bursts_mover) {
  const Machine vta = machine_from_config(load_hw_config(kHw + "vta-pynq.yaml"));
  auto view = nlohmann::json::parse(kVtaView);
  view["dram"].erase("mover_bytes_per_cycle");
  auto back = machine_from_json(view);
  ASSERT_TRUE(back.ok()) << back.reason();
  EXPECT_EQ(back.value().dma_mover_bytes, 64);
  EXPECT_EQ(reason_of(view, vta), "accepted");
  view["dram"]["burst_bytes"] = 8;  // a burst below the mover's floor: 16
  EXPECT_EQ(machine_from_json(view).value().dma_mover_bytes, 16);
  view = nlohmann::json::parse(kVtaView);
  view["dram"]["mover_bytes_per_cycle"] = 32;
  EXPECT_EQ(reason_of(view, vta),
            "machine.dram.mover_bytes_per_cycle: schedule made for 32, config has 64");
}

TEST(MachineJson, a_malformed_view_is_refused_naming_the_key) {
  const Machine vta = machine_from_config(load_hw_config(kHw + "vta-pynq.yaml"));
  auto view = nlohmann::json::parse(kVtaView);
  view["matrix"].erase("rows");
  EXPECT_EQ(reason_of(view, vta), "machine.matrix.rows: missing");
  view = nlohmann::json::parse(kVtaView);
  view["dram"]["banks"] = 2;
  EXPECT_EQ(reason_of(view, vta), "machine.dram.banks: unknown key");
  view = nlohmann::json::parse(kVtaView);
  view["element_bytes"]["weights"] = "1";
  EXPECT_EQ(reason_of(view, vta), "machine.element_bytes.weights: must be an integer, not \"1\"");
  view = nlohmann::json::parse(kVtaView);
  view["vector"]["lanes"] = 0;
  EXPECT_EQ(reason_of(view, vta), "machine.vector.lanes: must be at least 1, not 0");
  view = nlohmann::json::parse(kVtaView);
  view["scratchpad_for"]["weights"] = 4;
  EXPECT_EQ(reason_of(view, vta), "machine.scratchpad_for.weights: scratchpad 4 of 4");
  view = nlohmann::json::parse(kVtaView);
  view["dram"]["bytes_per_cycle"] = -8;
  EXPECT_EQ(reason_of(view, vta),
            "machine.dram.bytes_per_cycle: must be a positive number, not -8");
  EXPECT_EQ(reason_of(nlohmann::json::array(), vta), "machine: must be an object");
}

// A schedule carries its view after `config`; read back for its config it is costed again, for
// another config it is refused naming the key, and without the key (written before session 29,
// or by hand) it is read for the config given.
TEST(MachineJson, a_schedule_is_read_back_only_for_the_hardware_it_was_made_for) {
  auto graph = zoo::build_model("tiny_residual", {.with_weights = false});
  ASSERT_TRUE(graph.ok()) << graph.reason();
  const HwConfig vta = load_hw_config(kHw + "vta-pynq.yaml");
  auto made = schedule_graph(graph.value(), vta, "fusion", Objective::Bytes);
  ASSERT_TRUE(made.ok()) << made.reason();
  const auto written = to_json(made.value().schedule, made.value().net, made.value().machine);
  auto it = written.begin();
  EXPECT_EQ((++it).key(), "config");
  EXPECT_EQ((++it).key(), "machine");
  EXPECT_EQ(written["machine"].dump(), nlohmann::ordered_json::parse(kVtaView).dump());
  EXPECT_TRUE(schedule_from_json(nlohmann::json::parse(written.dump())).ok());

  const nlohmann::json json = nlohmann::json::parse(written.dump());
  auto again = schedule_graph_from_mappings(graph.value(), vta, json);
  ASSERT_TRUE(again.ok()) << again.reason();
  again.value().schedule.search_seconds = made.value().schedule.search_seconds;  // none: no search
  EXPECT_EQ(to_json(again.value().schedule, again.value().net, again.value().machine).dump(),
            written.dump());

  HwConfig smaller = vta;
  smaller.scratchpads[1].size_bytes = 65536;
  auto refused = schedule_graph_from_mappings(graph.value(), smaller, json);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.reason(),
            "machine.scratchpads[1].size: schedule made for 262144, config has 65536");

  nlohmann::json old = json;
  old.erase("machine");
  auto legacy = schedule_graph_from_mappings(graph.value(), vta, old);
  ASSERT_TRUE(legacy.ok()) << legacy.reason();
  EXPECT_EQ(legacy.value().machine.name, "vta-pynq");

  nlohmann::json broken = json;
  broken["machine"]["matrix"]["rows"] = 16.5;
  auto bad = schedule_from_json(broken);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.reason(), "schedule JSON: machine.matrix.rows: must be an integer, not 16.5");
}

}  // namespace
}  // namespace tessel::sched
