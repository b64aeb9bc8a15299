// FPGA top: tessel_top with its program in a block RAM, a block-RAM "DRAM" and a self-checker.
//
// After reset the wrapper pulses `start`; tessel_top fetches the embedded test program from
// program.mem and moves data through a two-bank DRAM initialised from dram_bank0.mem /
// dram_bank1.mem (words of DW = tessel_cfg_pkg::DMA_BYTES_PER_CYCLE bytes, even words in bank 0,
// odd words in bank 1, so that any DW-byte access at any byte address touches one word of each
// bank). When tessel_top is done, the checker reads the output region back through the same read
// port and compares it with expected.mem: `pass` rises when every word matches. `done`, `fault`
// and `pass` are meant for LEDs. DRAM timing is not modelled here: a request is served as fast
// as the BRAM allows (`dram_done_*` one cycle after the last request), so cycle counts on the
// FPGA are not the simulator's; the data, and hence `pass`, are.
//
// Sizes come from the generated tessel_fpga_pkg (hw/fpga/flow.cpp); $readmemh paths are
// relative to the folder the tools run in (the `tessel fpga --out` folder).
module tessel_fpga_top (
    input  logic clk,
    input  logic clk2x,  // twice clk's rate, rising with it (an MMCM's second output): the
                         // scratchpads' block RAMs (hw/rtl/tessel_sram.sv)
    input  logic rst_n,  // synchronous, active low (a push button on a board)
    output logic busy,
    output logic done,
    output logic fault,
    output logic pass    // done, and the output region equals expected.mem
);
  localparam int unsigned DW = tessel_cfg_pkg::DMA_BYTES_PER_CYCLE;
  localparam int unsigned PW = tessel_fpga_pkg::PROGRAM_WORDS;
  localparam int unsigned BW = tessel_fpga_pkg::DRAM_BANK_WORDS;  // words per bank
  localparam int unsigned BANK_BITS = BW > 1 ? $clog2(BW) : 1;
  localparam int unsigned EW = tessel_fpga_pkg::EXPECTED_WORDS;
  localparam int unsigned OUT_WORD = tessel_fpga_pkg::OUTPUT_WORD;
  localparam int unsigned OFF_BITS = $clog2(DW);

  // ---------------------------------------------------------------- start after reset
  logic started;
  logic start;
  always_ff @(posedge clk) begin
    if (!rst_n) started <= 1'b0;
    else started <= 1'b1;
  end
  assign start = rst_n && !started;

  // ---------------------------------------------------------------- tessel_top
  logic [31:0] prog_addr;
  logic [255:0] prog_data;
  logic prog_valid;
  logic dram_req_valid, dram_req_write, dram_req_last;
  logic [39:0] dram_req_addr;
  logic [31:0] dram_req_bytes;
  logic [1:0] dram_req_kind;
  logic [63:0] dram_req_cycle;
  logic dram_done_load, dram_done_store, dram_done_ack_load, dram_done_ack_store;
  logic dram_rd_en, dram_wr_en;
  logic [39:0] dram_rd_addr, dram_wr_addr;
  logic [DW*8-1:0] dram_rd_data, dram_wr_data;
  logic [DW-1:0] dram_wr_strb;
  logic core_done;
  logic [7:0] fault_code;
  logic [31:0] fault_index;
  logic [63:0] cycle;

  /* verilator lint_off PINCONNECTEMPTY */  // obs_* are the harness' observation ports
  tessel_top u_core (
      .clk, .clk2x, .rst_n, .start, .busy, .done(core_done), .fault, .fault_code, .fault_index, .cycle,
      .prog_addr, .prog_data, .prog_valid,
      .dram_req_valid, .dram_req_ready(1'b1), .dram_req_write, .dram_req_addr, .dram_req_bytes,
      .dram_req_kind, .dram_req_cycle, .dram_req_last, .dram_done_load, .dram_done_store,
      .dram_done_ack_load, .dram_done_ack_store,
      .dram_rd_en, .dram_rd_addr, .dram_rd_data,
      .dram_wr_en, .dram_wr_addr, .dram_wr_data, .dram_wr_strb,
      .obs_dispatch(), .obs_dispatch_index(), .obs_start(), .obs_start_index(), .obs_finish(),
      .obs_finish_index(), .obs_wait_token(), .obs_fetch_blocked(), .obs_fetch_engine(),
      .obs_stuck(), .obs_late());
  /* verilator lint_on PINCONNECTEMPTY */

  // ---------------------------------------------------------------- program ROM
  logic [255:0] program_rom[PW];
  initial $readmemh("program.mem", program_rom);
  always_ff @(posedge clk) begin
    prog_data  <= program_rom[prog_addr[$clog2(PW > 1 ? PW : 2)-1:0]];
    prog_valid <= prog_addr < PW;
  end

  // ---------------------------------------------------------------- request channel
  // Every request is accepted at once; the instruction's DMA may finish the cycle after its
  // last request (hw/rtl/README.md), held until tessel_top acknowledges it.
  always_ff @(posedge clk) begin
    if (!rst_n || start) begin
      dram_done_load  <= 1'b0;
      dram_done_store <= 1'b0;
    end else begin
      if (dram_req_valid && dram_req_last && !dram_req_write) dram_done_load <= 1'b1;
      else if (dram_done_ack_load) dram_done_load <= 1'b0;
      if (dram_req_valid && dram_req_last && dram_req_write) dram_done_store <= 1'b1;
      else if (dram_done_ack_store) dram_done_store <= 1'b0;
    end
  end

  // ---------------------------------------------------------------- two-bank DRAM
  // Byte address a: word w = a / DW, offset a % DW; the access covers words w and w + 1.
  logic [DW*8-1:0] bank0[BW];
  logic [DW*8-1:0] bank1[BW];
  initial $readmemh("dram_bank0.mem", bank0);
  initial $readmemh("dram_bank1.mem", bank1);

  // Read port: tessel_top's LOAD data, or the checker once the core is done.
  logic check_rd_en;
  logic [39:0] check_rd_addr;
  logic rd_en;
  logic [39:0] rd_addr;
  assign rd_en = core_done ? check_rd_en : dram_rd_en;
  assign rd_addr = core_done ? check_rd_addr : dram_rd_addr;

  logic [39:0] rd_word, rd_word_next;
  logic [BANK_BITS-1:0] rd_index0, rd_index1;  // the even word and the odd word touched
  assign rd_word = rd_addr >> OFF_BITS;
  assign rd_word_next = rd_word + 40'd1;
  assign rd_index0 = rd_word[0] ? rd_word_next[BANK_BITS:1] : rd_word[BANK_BITS:1];
  assign rd_index1 = rd_word[0] ? rd_word[BANK_BITS:1] : rd_word_next[BANK_BITS:1];

  logic [DW*8-1:0] rd_q0, rd_q1;
  logic rd_odd;
  logic [OFF_BITS-1:0] rd_offset;
  always_ff @(posedge clk) begin
    if (rd_en) begin
      rd_q0 <= bank0[rd_index0];
      rd_q1 <= bank1[rd_index1];
      rd_odd <= rd_word[0];
      rd_offset <= rd_addr[OFF_BITS-1:0];
    end
  end
  logic [2*DW*8-1:0] rd_pair, rd_shifted;  // {word w + 1, word w}, then aligned to the byte
  assign rd_pair = rd_odd ? {rd_q0, rd_q1} : {rd_q1, rd_q0};
  assign rd_shifted = rd_pair >> (8 * rd_offset);
  assign dram_rd_data = rd_shifted[DW*8-1:0];

  // Write port: STORE data with byte strobes, shifted to the byte offset.
  logic [39:0] wr_word, wr_word_next;
  logic [OFF_BITS-1:0] wr_offset;
  logic [2*DW*8-1:0] wr_pair;
  logic [2*DW-1:0] wr_pair_strb;
  logic [BANK_BITS-1:0] wr_index0, wr_index1;
  logic [DW*8-1:0] wr_data0, wr_data1;
  logic [DW-1:0] wr_strb0, wr_strb1;
  assign wr_word = dram_wr_addr >> OFF_BITS;
  assign wr_word_next = wr_word + 40'd1;
  assign wr_offset = dram_wr_addr[OFF_BITS-1:0];
  assign wr_pair = {{DW * 8{1'b0}}, dram_wr_data} << (8 * wr_offset);
  assign wr_pair_strb = {{DW{1'b0}}, dram_wr_strb} << wr_offset;
  assign wr_index0 = wr_word[0] ? wr_word_next[BANK_BITS:1] : wr_word[BANK_BITS:1];
  assign wr_index1 = wr_word[0] ? wr_word[BANK_BITS:1] : wr_word_next[BANK_BITS:1];
  assign wr_data0 = wr_word[0] ? wr_pair[2*DW*8-1:DW*8] : wr_pair[DW*8-1:0];
  assign wr_data1 = wr_word[0] ? wr_pair[DW*8-1:0] : wr_pair[2*DW*8-1:DW*8];
  assign wr_strb0 = wr_word[0] ? wr_pair_strb[2*DW-1:DW] : wr_pair_strb[DW-1:0];
  assign wr_strb1 = wr_word[0] ? wr_pair_strb[DW-1:0] : wr_pair_strb[2*DW-1:DW];
  always_ff @(posedge clk) begin
    if (dram_wr_en) begin
      for (int j = 0; j < DW; j++) begin
        if (wr_strb0[j]) bank0[wr_index0][8*j+:8] <= wr_data0[8*j+:8];
        if (wr_strb1[j]) bank1[wr_index1][8*j+:8] <= wr_data1[8*j+:8];
      end
    end
  end

  // ---------------------------------------------------------------- self-check
  logic [DW*8-1:0] expected_rom[EW];
  initial $readmemh("expected.mem", expected_rom);
  logic [31:0] check_issue, check_compare;  // words read / words compared
  logic check_valid, mismatch;
  logic [DW*8-1:0] expected_q;
  assign check_rd_en = core_done && check_issue < EW;
  assign check_rd_addr = {8'd0, OUT_WORD + check_issue} << OFF_BITS;
  always_ff @(posedge clk) begin
    if (!rst_n || start) begin
      check_issue <= '0;
      check_compare <= '0;
      check_valid <= 1'b0;
      mismatch <= 1'b0;
    end else begin
      check_valid <= check_rd_en;
      if (check_rd_en) begin
        expected_q <= expected_rom[check_issue];
        check_issue <= check_issue + 32'd1;
      end
      if (check_valid) begin
        check_compare <= check_compare + 32'd1;
        if (dram_rd_data != expected_q) mismatch <= 1'b1;
      end
    end
  end
  assign done = core_done;
  assign pass = core_done && check_compare == EW && !mismatch;
endmodule
