// tessel_sram_model: the scratchpads' behaviour in a few lines, the reference that
// hw/rtl/tessel_sram.sv (the block-RAM build tessel_top instantiates) must equal at every clk
// edge (tests/rtl/sram_banked_test.cpp runs both, and a byte array, on random traffic). Not
// part of tessel_top (hw/rtl/filelist.f).
//
// One byte-addressed RAM per config scratchpad, with the access ports the engines use at once
// (docs/timing.md: SRAM ports are never a bottleneck). Every port moves a run of consecutive
// bytes starting at any byte address (the ISA's SRAM operands are byte-addressed boxes). Reads
// are synchronous, as an SRAM macro's or a block RAM's: the address presented in cycle t is
// sampled at the edge that ends it and its data are out in cycle t + 1; the read sees the
// memory before that edge's writes (read-first). Writes land at the clock edge (the load's,
// then the compute's). Bytes beyond a scratchpad's end read as 0 and are not written.
/* verilator lint_off UNUSEDSIGNAL */
module tessel_sram_model #(
    parameter int unsigned DW = tessel_cfg_pkg::DMA_BYTES_PER_CYCLE,  // DMA port bytes
    parameter int unsigned CW = 64                                    // compute port bytes
) (
    input  logic              clk,
    // LOAD data mover: write
    input  logic              lw_en,
    input  logic [3:0]        lw_sp,
    input  logic [31:0]       lw_addr,
    input  logic [DW*8-1:0]   lw_data,
    input  logic [DW-1:0]     lw_mask,
    // STORE data mover: read
    input  logic [3:0]        sr_sp,
    input  logic [31:0]       sr_addr,
    output logic [DW*8-1:0]   sr_data,
    // COMPUTE: three read ports (a, b, c) and one write port
    input  logic [3*4-1:0]    cr_sp,
    input  logic [3*32-1:0]   cr_addr,
    output logic [3*CW*8-1:0] cr_data,
    input  logic              cw_en,
    input  logic [3:0]        cw_sp,
    input  logic [31:0]       cw_addr,
    input  logic [CW*8-1:0]   cw_data,
    input  logic [CW-1:0]     cw_mask
);
  localparam int unsigned NSP = tessel_cfg_pkg::NUM_SCRATCHPADS;

  logic [DW*8-1:0] sr_k[NSP];
  logic [3*CW*8-1:0] cr_k[NSP];

  for (genvar k = 0; k < NSP; k++) begin : g_sp
    localparam int unsigned SIZE = tessel_cfg_pkg::SP_SIZE_BYTES[32*k+:32];
    logic [7:0] mem[SIZE];

    // The byte loops run only for a port that writes this scratchpad (bench/rtl: Verilator
    // evaluates an unguarded loop's conditions every cycle).
    always_ff @(posedge clk) begin
      if (lw_en && lw_sp == 4'(k))
        for (int unsigned j = 0; j < DW; j++)
          if (lw_mask[j] && lw_addr + j < SIZE) mem[lw_addr+j] <= lw_data[8*j+:8];
      if (cw_en && cw_sp == 4'(k))
        for (int unsigned j = 0; j < CW; j++)
          if (cw_mask[j] && cw_addr + j < SIZE) mem[cw_addr+j] <= cw_data[8*j+:8];
    end

    // Only a port that selects this scratchpad reads it (the mux below picks it anyway): the
    // guards let Verilator skip the byte loops of the other scratchpads (bench/rtl).
    always_comb begin
      sr_k[k] = '0;
      if (sr_sp == 4'(k))
        for (int unsigned j = 0; j < DW; j++)
          if (sr_addr + j < SIZE) sr_k[k][8*j+:8] = mem[sr_addr+j];
    end
    always_comb begin
      cr_k[k] = '0;
      for (int unsigned p = 0; p < 3; p++)
        if (cr_sp[4*p+:4] == 4'(k))
          for (int unsigned j = 0; j < CW; j++)
            if (cr_addr[32*p+:32] + j < SIZE) cr_k[k][CW*8*p+8*j+:8] = mem[cr_addr[32*p+:32]+j];
    end
  end

  // This cycle's reads (from the memory before the edge), registered: out in the next cycle.
  logic [DW*8-1:0] sr_now;
  logic [3*CW*8-1:0] cr_now;
  always_comb begin
    sr_now = '0;
    cr_now = '0;
    for (int unsigned k = 0; k < NSP; k++) begin
      if (sr_sp == 4'(k)) sr_now = sr_k[k];
      for (int unsigned p = 0; p < 3; p++)
        if (cr_sp[4*p+:4] == 4'(k)) cr_now[CW*8*p+:CW*8] = cr_k[k][CW*8*p+:CW*8];
    end
  end
  always_ff @(posedge clk) begin
    sr_data <= sr_now;
    cr_data <= cr_now;
  end
endmodule
/* verilator lint_on UNUSEDSIGNAL */
