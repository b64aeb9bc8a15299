// Test top: tessel_sram_model (the scratchpads' behaviour, one clock) and tessel_sram (the
// block-RAM build tessel_top instantiates, on clk and clk2x) on the same inputs, with both
// outputs, for tests/rtl/sram_test.cpp.
/* verilator lint_off UNUSEDSIGNAL */
module sram_pair_top #(
    parameter int unsigned DW = tessel_cfg_pkg::DMA_BYTES_PER_CYCLE,
    parameter int unsigned CW0 = tessel_cfg_pkg::MATRIX_ROWS * tessel_cfg_pkg::INPUT_BITS / 8,
    parameter int unsigned CW1 = CW0 > 4 * tessel_cfg_pkg::MATRIX_COLS
                               ? CW0 : 4 * tessel_cfg_pkg::MATRIX_COLS,
    parameter int unsigned CW = CW1 > 4 * tessel_cfg_pkg::VECTOR_LANES
                              ? CW1 : 4 * tessel_cfg_pkg::VECTOR_LANES
) (
    input  logic              clk,
    input  logic              clk2x,
    input  logic              lw_en,
    input  logic [3:0]        lw_sp,
    input  logic [31:0]       lw_addr,
    input  logic [DW*8-1:0]   lw_data,
    input  logic [DW-1:0]     lw_mask,
    input  logic [3:0]        sr_sp,
    input  logic [31:0]       sr_addr,
    output logic [DW*8-1:0]   sr_data_model,
    output logic [DW*8-1:0]   sr_data_banked,
    input  logic [3*4-1:0]    cr_sp,
    input  logic [3*32-1:0]   cr_addr,
    output logic [3*CW*8-1:0] cr_data_model,
    output logic [3*CW*8-1:0] cr_data_banked,
    input  logic              cw_en,
    input  logic [3:0]        cw_sp,
    input  logic [31:0]       cw_addr,
    input  logic [CW*8-1:0]   cw_data,
    input  logic [CW-1:0]     cw_mask,
    output logic              collision
);
  tessel_sram_model #(.DW(DW), .CW(CW)) u_model (
      .clk, .lw_en, .lw_sp, .lw_addr, .lw_data, .lw_mask, .sr_sp, .sr_addr,
      .sr_data(sr_data_model), .cr_sp, .cr_addr, .cr_data(cr_data_model), .cw_en, .cw_sp,
      .cw_addr, .cw_data, .cw_mask);
  tessel_sram #(.DW(DW), .CW(CW)) u_banked (
      .clk, .clk2x, .lw_en, .lw_sp, .lw_addr, .lw_data, .lw_mask, .sr_sp, .sr_addr,
      .sr_data(sr_data_banked), .cr_sp, .cr_addr, .cr_data(cr_data_banked), .cw_en, .cw_sp,
      .cw_addr, .cw_data, .cw_mask, .collision);
endmodule
/* verilator lint_on UNUSEDSIGNAL */
