// hw::program_cycle_bound, the RTL run's overall cycle cap, on hand-computed micro programs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "hw/harness/rtl_runner.hpp"
#include "isa/assembler.hpp"

namespace tessel::hw {
namespace {

std::vector<isa::Word> words_of(const std::string& text) {
  std::vector<isa::Word> words;
  for (const auto& instruction : isa::assemble(text, "test.tasm").instructions)
    words.push_back(isa::encode(instruction).value());
  return words;
}

HwConfig micro() {
  return load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/tests/isa/programs/micro.yaml");
}

// micro: 1000 MHz and 16 GB/s = 16 B/cycle, so a 64-byte burst holds the bus 4 cycles; DRAM
// latency 10 ns = 10 cycles; each step adds a hand-off of 4 cycles.
TEST(CycleBound, finish_alone_is_one_fetch_and_one_cycle) {
  // fetch: 10 + 4 + 4 = 18; finish: 1 + 4 = 5.
  EXPECT_EQ(program_cycle_bound(micro(), words_of("finish\n")), 23u);
}

TEST(CycleBound, a_one_burst_load_adds_its_latency_and_bus_time) {
  // load: fetch 18, one request of 64 bytes at 0x1000 = 1 burst: 10 + 4 + 4 = 18, + 4 = 22;
  // finish 23 as above: 40 + 23 = 63.
  EXPECT_EQ(program_cycle_bound(micro(), words_of("load sp=0 kind=activations elem=i8 "
                                                  "sram_addr=0x0 dram_addr=0x1000 y_size=1 "
                                                  "x_size=1 c_size=64 push_next=1\n"
                                                  "finish pop_prev=1\n")),
            63u);
}

TEST(CycleBound, an_undecodable_word_counts_as_a_fetch) {
  std::vector<isa::Word> junk(1);
  junk[0].fill(0xff);
  EXPECT_EQ(program_cycle_bound(micro(), junk), 18u);
}

}  // namespace
}  // namespace tessel::hw
