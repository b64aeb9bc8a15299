// ShuffleNet's channel shuffle on the accelerator (issue 36 item 1): channel-shuffle-to-conv
// makes it a 1x1 Conv of the permutation, and a Slice of an NCHW map's channels is a view.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/zoo/builder.hpp"
#include "tests/codegen/e2e_check.hpp"

namespace tessel::codegen {
namespace {

using test::config_path;
using test::expect_end_to_end;

// One ShuffleNet-v2 unit of 48 channels (2 groups) at 14 x 14: the shuffle of a Concat, then its
// halves (x.chunk(2, dim=1)) as two channel Slices, one passed on, one through a 1x1 conv, joined
// again and shuffled once more, as torchvision writes it.
ir::Graph shuffle_unit() {
  zoo::NetBuilder net("shuffle_unit", {});
  const auto shuffle = [&](const std::string& x, const std::string& name) {
    const std::string split = net.reshape(x, name + ".split", {1, 2, 24, 14, 14});
    const std::string swapped = net.transpose(split, name + ".swap", {0, 2, 1, 3, 4});
    return net.reshape(swapped, name + ".merge", {1, 48, 14, 14});
  };
  const std::string x = net.input("input", 24, 14, 14);
  const std::string a = net.relu(net.conv(x, "a", zoo::conv_spec(24, 1)), "a_relu");
  const std::string b = net.relu(net.conv(x, "b", zoo::conv_spec(24, 3, 1, 1)), "b_relu");
  const std::string s1 = shuffle(net.concat_axis({a, b}, "join1", 1), "shuffle1");
  const std::string kept = net.slice(s1, "kept", 1, 0, 24);
  const std::string half = net.slice(s1, "half", 1, 24, 48);
  const std::string c = net.relu(net.conv(half, "c", zoo::conv_spec(24, 1)), "c_relu");
  const std::string s2 = shuffle(net.concat_axis({kept, c}, "join2", 1), "shuffle2");
  return net.finish({s2});
}

TEST(ChannelShuffle, the_pass_makes_the_permutation_a_1x1_conv_by_hand) {
  ir::Graph graph = shuffle_unit();
  ASSERT_TRUE(passes::run_passes(graph, "channel-shuffle-to-conv").ok());
  int convs = 0;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
    const ir::Op& op = graph.op(id);
    EXPECT_NE(op.kind, ir::OpKind::Transpose) << op.name;
    if (op.name != "shuffle1.merge") continue;
    ++convs;
    ASSERT_EQ(op.kind, ir::OpKind::Conv);
    const ir::Tensor& w = graph.tensor(op.inputs[1]);
    ASSERT_EQ(w.shape, (ir::Shape{48, 48, 1, 1}));
    // Output channel j = b * 2 + a reads input channel a * 24 + b: 0, 24, 1, 25, ...
    for (std::int64_t j = 0; j < 48; ++j)
      for (std::int64_t i = 0; i < 48; ++i)
        EXPECT_EQ(w.f32_values[static_cast<std::size_t>(j * 48 + i)],
                  i == (j % 2) * 24 + j / 2 ? 1.0f : 0.0f)
            << j << ", " << i;
  }
  EXPECT_EQ(convs, 1);
}

// The halves are read through the Slice views, 24 of 48 channels per pixel: the cost model
// prices those loads as 24-byte runs in the Slice's input, one burst each (vta-pynq's bursts
// are 128 B: shufflenet_v2_x0_5 simulated 1.12x its prediction while they were priced as
// contiguous).
TEST(ChannelShuffle, a_shufflenet_unit_runs_bit_exact_with_the_scheduled_bytes) {
  for (const char* config : {"edge-small", "vta-pynq"})
    for (const char* policy : {"layerwise", "fusion", "optimal"}) {
      SCOPED_TRACE(std::string(config) + " " + policy);
      std::uint64_t cycles = 0;
      sched::ScheduledNet scheduled;
      expect_end_to_end(shuffle_unit(), load_hw_config(config_path(config)), policy, nullptr,
                        &scheduled, {}, nullptr, &cycles);
      const double ratio =
          static_cast<double>(cycles) / static_cast<double>(scheduled.schedule.cycles);
      EXPECT_GT(ratio, 0.95);
      EXPECT_LT(ratio, 1.05);
    }
}

// A Slice of an NCHW map's width is no channel view (it was taken for a channel slice, the last
// axis, before session 37): a pixel view, stored as a gather where an op reads it (session 42),
// refused by name as a graph output of its own.
TEST(ChannelShuffle, a_slice_of_a_maps_width_is_a_gather) {
  for (const bool read : {true, false}) {
    zoo::NetBuilder net("width_slice", {});
    const std::string x = net.input("input", 8, 6, 6);
    const std::string a = net.relu(net.conv(x, "a", zoo::conv_spec(8, 1)), "a_relu");
    const std::string cols = net.slice(a, "cols", 3, 1, 4);  // [1, 8, 6, 3]
    ir::Graph graph = net.finish({read ? net.conv(cols, "b", zoo::conv_spec(8, 3, 1, 1)) : cols});
    if (read) {
      sched::ScheduledNet scheduled;
      expect_end_to_end(graph, load_hw_config(config_path("edge-small")), "layerwise", nullptr,
                        &scheduled);
      int gathers = 0;
      for (const sched::Op& op : scheduled.net.ops) gathers += !op.pixel_source.empty();
      EXPECT_EQ(gathers, 1);
      continue;
    }
    auto scheduled = sched::schedule_graph(graph, load_hw_config(config_path("edge-small")),
                                           "layerwise", sched::Objective::Bytes);
    ASSERT_FALSE(scheduled.ok());
    EXPECT_NE(scheduled.reason().find("graph output 'cols' (made by op 'cols')"), std::string::npos)
        << scheduled.reason();
  }
}

}  // namespace
}  // namespace tessel::codegen
