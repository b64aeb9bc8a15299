// A minimal decoder that uses tessel_isa_pkg the way hw/ will: packed views of the word and
// qualified names (Yosys 0.23 accepts these, not `import`). Linted by Verilator and read by Yosys
// in the CTests isa_sv_package_verilator / isa_sv_package_yosys.
module isa_pkg_user (
    input  logic [tessel_isa_pkg::INSN_BITS-1:0] insn,
    output logic                                 is_dma,
    output logic [23:0]                          sram_addr,
    output logic [39:0]                          dram_addr,
    output logic [9:0]                           conv_out_h,
    output logic [3:0]                           tokens
);
  tessel_isa_pkg::load_insn_t load;
  tessel_isa_pkg::conv_insn_t conv;
  assign load = insn;
  assign conv = insn;
  assign is_dma = load.opcode == tessel_isa_pkg::OP_LOAD || load.opcode == tessel_isa_pkg::OP_STORE;
  assign sram_addr = load.sram_addr;
  assign dram_addr = insn[tessel_isa_pkg::LOAD_DRAM_ADDR_LSB +: tessel_isa_pkg::LOAD_DRAM_ADDR_W];
  assign conv_out_h = conv.out_h;
  assign tokens = {load.push_next, load.push_prev, load.pop_next, load.pop_prev};
  wire unused = &{1'b0, load, conv};
endmodule
