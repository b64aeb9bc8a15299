// Synthesis-only stand-in for hw/rtl/tessel_sram.sv: the same module, parameters and ports, as a
// black box. `tessel fpga` gives Yosys this file instead of the real scratchpads (docs/fpga.md,
// "What is synthesised"): the real ones are flip-flop byte arrays with four combinational 64-byte
// read ports that no FPGA RAM primitive implements, so their block RAM is counted analytically
// (hw/fpga/bram_map.hpp) and everything else is synthesised. Keeping the ports keeps the logic
// on both sides alive: the engines' address generators drive the inputs, and the matrix and
// vector datapaths consume the outputs. Never simulated; Vivado's script reads the real RTL.
(* blackbox *)
module tessel_sram #(
    parameter int unsigned DW = 16,  // DMA port bytes (tessel_top passes the config's)
    parameter int unsigned CW = 64   // compute port bytes
) (
    input  logic              clk,
    input  logic              lw_en,
    input  logic [3:0]        lw_sp,
    input  logic [31:0]       lw_addr,
    input  logic [DW*8-1:0]   lw_data,
    input  logic [DW-1:0]     lw_mask,
    input  logic [3:0]        sr_sp,
    input  logic [31:0]       sr_addr,
    output logic [DW*8-1:0]   sr_data,
    input  logic [4*4-1:0]    cr_sp,
    input  logic [4*32-1:0]   cr_addr,
    output logic [4*CW*8-1:0] cr_data,
    input  logic              cw_en,
    input  logic [3:0]        cw_sp,
    input  logic [31:0]       cw_addr,
    input  logic [CW*8-1:0]   cw_data,
    input  logic [CW-1:0]     cw_mask
);
endmodule
