// tessel_sram (the scratchpads as block RAM, on clk and clk2x, as tessel_top has them) against
// tessel_sram_model (their behaviour in a few lines) and against a byte array, cycle by cycle, on
// random traffic: both writes and all four reads at once, at any byte address and byte mask,
// reads of bytes written in the same and the previous cycle, runs across the end of a bank row
// and of a scratchpad, every scratchpad of the config. (Never both writes to one byte at one
// edge: a write collision leaves a true dual-port RAM's content undefined.)
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "tests/rtl/sram_pair_model.hpp"

namespace tessel::hw::test {
namespace {

struct Coverage {
  int both_writes = 0;       // cycles with the load and the compute write
  int read_after_write = 0;  // a read of a byte written at the same edge (read-first)
  int read_next = 0;         // a read of a byte written at the edge before
  int past_end = 0;          // an access that runs past its scratchpad's end
  int collisions = 0;        // cycles whose writes share a bank word (flagged, not compared)
};

void run(const std::string& name, const std::string& yaml, int cycles, std::uint32_t seed) {
  SCOPED_TRACE(name);
  const HwConfig config = load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/" + yaml);
  SramPairModel model(name);
  const unsigned dw = model.dma_bytes(), cw = model.compute_bytes();
  std::vector<std::vector<std::uint8_t>> ref;  // the byte array: what every read must see
  for (const auto& sp : config.scratchpads) ref.emplace_back(sp.size_bytes, 0);
  const unsigned nsp = static_cast<unsigned>(ref.size());
  std::mt19937 rng(seed);
  auto uniform = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
  Coverage coverage;
  // An address in scratchpad sp for a run of `len` bytes: anywhere, near the end (past it), or
  // near `hint` (the bytes another port writes).
  auto address = [&](unsigned sp, unsigned len, std::uint32_t hint) -> std::uint32_t {
    const auto size = static_cast<std::uint32_t>(ref[sp].size());
    switch (uniform(4)) {
      case 0:
        return size - 1 - uniform(std::min<std::uint32_t>(size, len + 8));
      case 1:
        return hint + uniform(2 * len) - std::min<std::uint32_t>(hint, len);
      default:
        return uniform(size);
    }
  };
  struct Read {
    unsigned sp;
    std::uint32_t addr;
    unsigned len;
    std::vector<std::uint8_t> expected;
  };
  std::vector<Read> pending;  // reads of the previous cycle: their data come now
  bool collided = false;      // the previous cycle's writes share a 4-byte word
  std::vector<std::pair<unsigned, std::uint32_t>> written_before;  // (sp, byte) at the last edge
  for (int t = 0; t < cycles; ++t) {
    SramInputs in;
    in.lw_en = uniform(2) != 0;
    in.lw_sp = uniform(nsp);
    in.lw_addr = address(in.lw_sp, dw, 0);
    in.cw_en = uniform(2) != 0;
    in.cw_sp = uniform(nsp);
    in.cw_addr = address(in.cw_sp, cw, 0);
    for (unsigned j = 0; j < dw; ++j) {
      in.lw_data.push_back(static_cast<std::uint8_t>(rng()));
      in.lw_mask.push_back(uniform(4) != 0);
    }
    for (unsigned j = 0; j < cw; ++j) {
      in.cw_data.push_back(static_cast<std::uint8_t>(rng()));
      in.cw_mask.push_back(uniform(4) != 0);
    }
    // Both writes to one byte at one edge are a write collision in a true dual-port RAM (its
    // content undefined): no program whose tokens order its engines does it, so the load
    // leaves out the bytes the compute writes.
    if (in.lw_en && in.cw_en && in.lw_sp == in.cw_sp)
      for (unsigned j = 0; j < dw; ++j) {
        const std::uint64_t byte = std::uint64_t{in.lw_addr} + j;
        if (byte >= in.cw_addr && byte < std::uint64_t{in.cw_addr} + cw &&
            in.cw_mask[byte - in.cw_addr])
          in.lw_mask[j] = false;
      }
    // This cycle's reads, near the writes of this cycle (read-first) or of the last one.
    std::vector<Read> reads;
    for (unsigned p = 0; p < 4; ++p) {
      const bool near_load = uniform(2) != 0;
      const unsigned sp = uniform(3) == 0 ? uniform(nsp) : near_load ? in.lw_sp : in.cw_sp;
      const unsigned len = p < 3 ? cw : dw;
      const std::uint32_t a = address(sp, len, near_load ? in.lw_addr : in.cw_addr);
      Read r{sp, a, len, {}};
      for (unsigned j = 0; j < len; ++j) {
        const std::uint64_t byte = std::uint64_t{a} + j;
        r.expected.push_back(byte < ref[sp].size() ? ref[sp][byte] : 0);
        if (byte >= ref[sp].size()) ++coverage.past_end;
        for (const auto& w : written_before)
          if (w.first == sp && w.second == byte) ++coverage.read_next;
      }
      reads.push_back(std::move(r));
      if (p < 3) {
        in.cr_sp[p] = sp;
        in.cr_addr[p] = a;
      } else {
        in.sr_sp = sp;
        in.sr_addr = a;
      }
    }
    const SramOutputs out = model.cycle(in);
    ASSERT_EQ(out.collision, collided) << "cycle " << t;
    // The reads of the last cycle: both memories equal the byte array as it was then.
    for (std::size_t p = 0; p < pending.size(); ++p) {
      const Read& r = pending[p];
      for (unsigned j = 0; j < r.len; ++j) {
        const std::uint8_t model_byte = p < 3 ? out.cr_model[p * cw + j] : out.sr_model[j];
        const std::uint8_t banked_byte = p < 3 ? out.cr_banked[p * cw + j] : out.sr_banked[j];
        ASSERT_EQ(model_byte, r.expected[j])
            << "cycle " << t << " read " << p << " sp " << r.sp << " byte " << r.addr + j;
        ASSERT_EQ(banked_byte, r.expected[j])
            << "cycle " << t << " read " << p << " sp " << r.sp << " byte " << r.addr + j;
      }
    }
    // This edge's writes (disjoint bytes).
    written_before.clear();
    auto write = [&](bool en, unsigned sp, std::uint32_t a, const std::vector<std::uint8_t>& data,
                     const std::vector<bool>& mask) {
      if (!en) return;
      for (std::size_t j = 0; j < data.size(); ++j) {
        const std::uint64_t byte = std::uint64_t{a} + j;
        if (!mask[j]) continue;
        if (byte >= ref[sp].size()) {
          ++coverage.past_end;
          continue;
        }
        ref[sp][byte] = data[j];
        written_before.emplace_back(sp, static_cast<std::uint32_t>(byte));
        for (const Read& r : reads)
          if (r.sp == sp && byte >= r.addr && byte < std::uint64_t{r.addr} + r.len)
            ++coverage.read_after_write;
      }
    };
    if (in.lw_en && in.cw_en) ++coverage.both_writes;
    write(in.lw_en, in.lw_sp, in.lw_addr, in.lw_data, in.lw_mask);
    const std::size_t load_bytes = written_before.size();
    write(in.cw_en, in.cw_sp, in.cw_addr, in.cw_data, in.cw_mask);
    // A write collision: a 4-byte word (a bank word) with bytes of both writes.
    collided = false;
    for (std::size_t i = 0; i < load_bytes && !collided; ++i)
      for (std::size_t j = load_bytes; j < written_before.size(); ++j)
        if (written_before[i].first == written_before[j].first &&
            written_before[i].second / 4 == written_before[j].second / 4)
          collided = true;
    coverage.collisions += collided;
    pending = std::move(reads);
  }
  EXPECT_GT(coverage.both_writes, cycles / 8);
  EXPECT_GT(coverage.read_after_write, cycles / 8);
  EXPECT_GT(coverage.read_next, cycles / 8);
  EXPECT_GT(coverage.past_end, cycles / 8);
  EXPECT_GT(coverage.collisions, 100);
  EXPECT_LT(coverage.collisions, coverage.both_writes);
  std::printf(
      "%s: %d cycles, %d with both writes (%d colliding in a word), %d bytes read at "
      "their write's edge, %d at the next, %d past an end\n",
      name.c_str(), cycles, coverage.both_writes, coverage.collisions, coverage.read_after_write,
      coverage.read_next, coverage.past_end);
}

TEST(Sram, the_block_ram_build_equals_the_model_and_a_byte_array_on_micro) {
  run("micro", "tests/isa/programs/micro.yaml", 20000, 1);
}

TEST(Sram, the_block_ram_build_equals_the_model_and_a_byte_array_on_edge_small) {
  run("edge-small", "configs/hw/edge-small.yaml", 20000, 2);
}

}  // namespace
}  // namespace tessel::hw::test
