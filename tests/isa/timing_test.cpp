// The per-instruction formulas of docs/timing.md on hand-computed cases.
#include <gtest/gtest.h>

#include "isa/timing.hpp"

namespace tessel::isa::timing {
namespace {

const ComputeParams kMicro{4, 4, 4, 4, 4};  // R, C, F, D, V of tests/isa/programs/micro.yaml

TEST(IsaTiming, conv_worked_example_is_16_cycles) {
  Conv x;  // 1x1 conv, 2x2 outputs, one block each way
  x.out_h = x.out_w = 2;
  EXPECT_EQ(conv_cycles(x, kMicro), 4 + 1 * 4 + 4 + 4);
  EXPECT_EQ(conv_macs(x, kMicro), 4 * 16);
}

TEST(IsaTiming, short_passes_are_bound_by_the_weight_load) {
  Conv fc;  // GEMV: 1 output position, 3 x 2 blocks
  fc.ic_blocks = 3;
  fc.oc_blocks = 2;
  EXPECT_EQ(conv_cycles(fc, kMicro), 4 + 6 * 4 + 8);
}

TEST(IsaTiming, depthwise_loads_one_weight_per_column) {
  Conv dw;
  dw.depthwise = true;
  dw.out_h = dw.out_w = 3;
  dw.kh = dw.kw = 3;
  dw.oc_blocks = 2;
  dw.pad_top = dw.pad_left = dw.pad_bottom = dw.pad_right = 1;
  EXPECT_EQ(conv_cycles(dw, kMicro), 1 + 2 * 9 * 9 + 8);
  EXPECT_EQ(conv_macs(dw, kMicro), 9 * 18 * 4);
}

TEST(IsaTiming, vector_ops_take_one_cycle_per_pixel_per_lane_group) {
  Requant r;
  r.y_size = 2;
  r.x_size = 3;
  r.c_size = 5;  // ceil(5/4) = 2
  EXPECT_EQ(compute_cycles(r, kMicro), 2 * 3 * 2 + kVectorPipelineCycles);
  Pool p;
  p.out_h = p.out_w = 2;
  p.kh = p.kw = 2;
  p.stride_h = p.stride_w = 2;
  p.c_size = 4;
  EXPECT_EQ(compute_cycles(p, kMicro), 4 * 4 * 1 + kVectorPipelineCycles);
  EXPECT_EQ(compute_cycles(Vcfg{}, kMicro), 1);
  EXPECT_EQ(compute_cycles(Load{}, kMicro), 0);
}

TEST(IsaTiming, dma_merges_adjacent_runs) {
  Load x;
  x.dram_addr = 0x1000;
  x.y_size = 2;
  x.x_size = 3;
  x.c_size = 8;
  x.dram_stride_x = 8;   // pixels adjacent: one run per row
  x.dram_stride_y = 40;  // rows 40 elements apart: 16-byte gap
  const auto runs = dma_requests(x);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], (DramRun{0x1000, 24}));
  EXPECT_EQ(runs[1], (DramRun{0x1000 + 40, 24}));
  x.dram_stride_y = 24;  // rows adjacent too: one request
  EXPECT_EQ(dma_requests(x), (std::vector<DramRun>{{0x1000, 48}}));
  EXPECT_EQ(dma_bytes(x), 48u);
}

TEST(IsaTiming, unaligned_runs_cover_extra_bursts) {
  EXPECT_EQ(bursts_covering({0, 64}, 64), 1u);
  EXPECT_EQ(bursts_covering({32, 64}, 64), 2u);
  EXPECT_EQ(bursts_covering({63, 2}, 64), 2u);
  EXPECT_EQ(bursts_covering({64, 1}, 64), 1u);
}

// docs/timing.md's matmul examples on cloud-large (R = C = 128, F + D = 128 + 128), by hand.
TEST(IsaTiming, matmul_loads_b_by_rows_or_transposed_by_columns) {
  const ComputeParams cloud{128, 128, 128, 128, 128};
  Matmul qk;  // one head's Q x K^T: 512 queries x 512 keys, d = 64, K stored [512][64]
  qk.transpose_b = true;
  qk.m_size = 512;
  qk.n_size = 512;
  qk.k_size = 64;
  // W = C = 128; passes = 4 column blocks x 1 reduction block; 128 + 4 * 512 + 256
  EXPECT_EQ(matmul_cycles(qk, cloud), 2432);
  EXPECT_EQ(matmul_macs(qk, cloud), 512 * 4 * 128 * 128);
  Matmul sv;  // scores x V: 512 x 64, K = 512, V row-major
  sv.m_size = 512;
  sv.n_size = 64;
  sv.k_size = 512;
  EXPECT_EQ(matmul_cycles(sv, cloud), 128 + 4 * 512 + 256);
  Matmul decode = qk;  // one decode step's query row: every pass bound by the block load
  decode.m_size = 1;
  EXPECT_EQ(matmul_cycles(decode, cloud), 128 + 4 * 128 + 256);
  // A non-square array: the transposed load takes C cycles, the row-major one R (micro's F, D).
  const ComputeParams wide{4, 8, 4, 4, 4};
  Matmul x;
  x.m_size = 2;
  x.n_size = 9;  // 2 column blocks of 8
  x.k_size = 5;  // 2 reduction blocks of 4
  EXPECT_EQ(matmul_cycles(x, wide), 4 + 4 * 4 + 8);
  x.transpose_b = true;
  EXPECT_EQ(matmul_cycles(x, wide), 8 + 4 * 8 + 8);
  EXPECT_EQ(compute_cycles(Instruction{x}, wide), 8 + 4 * 8 + 8);
}

// matrix.weight_load_rows (Kw): a block loads in ceil(R / Kw) cycles (transposed: ceil(C / Kw)),
// the rest of the formula unchanged; depthwise keeps its one-row load. By hand.
TEST(IsaTiming, a_wider_weight_load_path_shortens_w) {
  ComputeParams cloud{128, 128, 128, 128, 128};
  cloud.weight_load_rows = 16;  // W = 8
  EXPECT_EQ(block_load_cycles(cloud), 8);
  Conv gemv;  // a decode step's Linear: one pixel, 6 x 18 blocks, every pass load-bound
  gemv.ic_blocks = 6;
  gemv.oc_blocks = 18;
  EXPECT_EQ(conv_cycles(gemv, cloud), 8 + 108 * 8 + 256);
  gemv.out_w = 20;  // P = 20 > W: the pass streams its pixels, the load hides behind them
  EXPECT_EQ(conv_cycles(gemv, cloud), 8 + 108 * 20 + 256);
  Conv depthwise;
  depthwise.depthwise = true;
  depthwise.oc_blocks = 2;
  depthwise.kh = depthwise.kw = 3;
  EXPECT_EQ(conv_cycles(depthwise, cloud), 1 + 18 * 1 + 256);
  Matmul decode;  // one query row against a 1025-key cache of one 64-wide head, K transposed
  decode.transpose_b = true;
  decode.m_size = 1;
  decode.n_size = 1025;  // 9 column blocks
  decode.k_size = 64;
  EXPECT_EQ(matmul_cycles(decode, cloud), 8 + 9 * 8 + 256);
  // Rounded up; on a non-square array the transposed load divides C. Kw past R loads in 1.
  ComputeParams wide{4, 8, 4, 4, 4};
  wide.weight_load_rows = 3;
  Matmul x;
  x.m_size = 1;
  x.n_size = 9;
  x.k_size = 5;
  EXPECT_EQ(matmul_cycles(x, wide), 2 + 4 * 2 + 8);  // ceil(4 / 3)
  x.transpose_b = true;
  EXPECT_EQ(matmul_cycles(x, wide), 3 + 4 * 3 + 8);  // ceil(8 / 3)
  wide.weight_load_rows = 8;
  EXPECT_EQ(matmul_cycles(x, wide), 1 + 4 * 1 + 8);
  x.transpose_b = false;
  EXPECT_EQ(matmul_cycles(x, wide), 1 + 4 * 1 + 8);
}

}  // namespace
}  // namespace tessel::isa::timing
