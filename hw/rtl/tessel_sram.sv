// tessel_sram: the scratchpads, built from RAMs that Yosys and Vivado map to block RAM
// (docs/fpga.md, "The scratchpads in block RAM"), with the behaviour of tessel_sram_model at
// every clk edge (synchronous read-first reads, writes at the edge): tests/rtl checks one
// against the other.
//
// Per scratchpad, NB banks of 4-byte words (NB the power of two above the widest port / 4),
// so that a port's run of bytes at any byte address touches each bank at most once: bank b
// holds the words w with w mod NB = b, and a run starting at byte A takes bank b's row
// A / (4 NB) + (b < (A / 4) mod NB), and the bank words rotated by A mod 4 NB bytes.
//
// Six ports at once (the load and compute writes, the compute reads a, b, c and the store
// read) on a RAM with two: each bank is kept twice and both copies run on clk2x, a clock of
// twice clk's rate whose every other rising edge is clk's. At clk's edges (E) each copy's two
// ports read (copy 0: reads a and b, copy 1: read c and the store's), into output registers
// that hold until the next read (the RAM's no-change mode), i.e. through the next clk cycle;
// at the edges between (M) both ports of both copies write (port A the load's bytes, port B
// the compute's), registered at the E before. So a read at E sees every write registered at
// an earlier E, and not the one registered at the same E: tessel_sram's read-first order.
//
// Bytes beyond a scratchpad's end read as 0 and are not written (the harness' checker faults
// such instructions before they start). A bank word both writes touch at one edge is a write
// collision (`collision`).
/* verilator lint_off UNUSEDSIGNAL */
module tessel_sram #(
    parameter int unsigned DW = tessel_cfg_pkg::DMA_BYTES_PER_CYCLE,  // DMA port bytes
    parameter int unsigned CW = 64,                                   // compute port bytes
    // The bytes of each compute port its engines use (at most CW; the rest read as 0 and are
    // never written): reads a, b, c and the compute write. tessel_top derives them from the
    // config; narrower ports mean narrower byte rotations.
    parameter int unsigned A_BYTES = CW,
    parameter int unsigned B_BYTES = CW,
    parameter int unsigned C_BYTES = CW,
    parameter int unsigned W_BYTES = CW
) (
    input  logic              clk,
    input  logic              clk2x,  // twice clk's rate, rising with clk
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
    input  logic [CW-1:0]     cw_mask,
    // A write collision in this cycle: the load's and the compute's writes registered at the
    // last edge touch one bank word (a true dual-port RAM's content is then undefined). The
    // contract has no such case (docs/timing.md); the harness counts them (0 on every program
    // the tests run).
    output logic              collision
);
  localparam int unsigned NSP = tessel_cfg_pkg::NUM_SCRATCHPADS;
  localparam int unsigned PW0 = A_BYTES > B_BYTES ? A_BYTES : B_BYTES;
  localparam int unsigned PW1 = C_BYTES > W_BYTES ? C_BYTES : W_BYTES;
  localparam int unsigned PW2 = PW0 > PW1 ? PW0 : PW1;
  localparam int unsigned PW = PW2 > DW ? PW2 : DW;      // widest port, bytes
  localparam int unsigned NB = 2 ** $clog2(PW / 4 + 1);  // banks
  localparam int unsigned RB = 4 * NB;                   // bytes in a row of all banks
  localparam int unsigned LRB = $clog2(RB);
  localparam int unsigned NR = 4;                        // reads: a, b, c, store
  localparam int unsigned VB = $clog2(PW + 1);           // bits of a count of bytes <= PW

  // ---------------------------------------------------------------- clk2x's phase
  // tog flips at every clk edge; tog_d follows it one clk2x edge later. So they differ from an
  // E to the next M and agree from that M to the next E: `mid` says the coming clk2x edge is M.
  logic tog, tog_d, mid;
  always_ff @(posedge clk) tog <= !tog;
  always_ff @(posedge clk2x) tog_d <= tog;
  assign mid = tog != tog_d;

  // Byte j of the result is byte (j + sh) mod RB of v, and its inverse (log2 RB mux stages).
  // The read side takes the largest step first and the write side the smallest, so that
  // synthesis keeps only the bytes a port's width needs in each stage (a read's first bytes;
  // a write's data bytes spread one step at a time).
  function automatic logic [RB*8-1:0] rot_right(input logic [RB*8-1:0] v,
                                                input logic [LRB-1:0] sh);
    logic [RB*8-1:0] r;
    r = v;
    for (int s = LRB - 1; s >= 0; s--)
      if (sh[s]) r = (r >> (8 * (2 ** s))) | (r << (RB * 8 - 8 * (2 ** s)));
    rot_right = r;
  endfunction
  function automatic logic [RB*8-1:0] rot_left(input logic [RB*8-1:0] v,
                                               input logic [LRB-1:0] sh);
    logic [RB*8-1:0] r;
    r = v;
    for (int unsigned s = 0; s < LRB; s++)
      if (sh[s]) r = (r << (8 * (2 ** s))) | (r >> (RB * 8 - 8 * (2 ** s)));
    rot_left = r;
  endfunction
  function automatic logic [RB-1:0] rot_left_mask(input logic [RB-1:0] v,
                                                  input logic [LRB-1:0] sh);
    logic [RB-1:0] r;
    r = v;
    for (int unsigned s = 0; s < LRB; s++)
      if (sh[s]) r = (r << (2 ** s)) | (r >> (RB - 2 ** s));
    rot_left_mask = r;
  endfunction

  // ---------------------------------------------------------------- reads (addresses at E)
  logic [NR*4-1:0] r_sp;
  logic [NR*32-1:0] r_addr;
  assign r_sp = {sr_sp, cr_sp};
  assign r_addr = {sr_addr, cr_addr};
  // Bytes of a run at `a` that lie inside scratchpad `sp`, saturated at PW.
  function automatic logic [VB-1:0] bytes_in(input logic [3:0] sp, input logic [31:0] a);
    logic [31:0] size;
    size = '0;
    for (int unsigned k = 0; k < NSP; k++)
      if (sp == 4'(k)) size = tessel_cfg_pkg::SP_SIZE_BYTES[32*k+:32];
    bytes_in = a >= size ? '0 : size - a >= 32'(PW) ? VB'(PW) : VB'(size - a);
  endfunction

  // Each read's bank rows: banks before the run's first word read row r_row1 (one past), the
  // rest row r_row0 (both as wide as the deepest bank; a bank ignores what lies past it).
  logic [NR*32-1:0] r_row0, r_row1;
  logic [NR*LRB-1:0] r_first;  // the run's first byte within the bank row
  always_comb
    for (int unsigned p = 0; p < NR; p++) begin
      r_row0[32*p+:32] = r_addr[32*p+:32] >> LRB;
      r_row1[32*p+:32] = (r_addr[32*p+:32] >> LRB) + 1;
      r_first[LRB*p+:LRB] = r_addr[32*p+:LRB];
    end
  // What the output side needs of this cycle's reads, for the next cycle.
  logic [NR*4-1:0] q_sp;
  logic [NR*LRB-1:0] q_rot;
  logic [NR*VB-1:0] q_valid;  // bytes of the read inside its scratchpad
  always_ff @(posedge clk)
    for (int unsigned p = 0; p < NR; p++) begin
      q_sp[4*p+:4] <= r_sp[4*p+:4];
      q_rot[LRB*p+:LRB] <= r_first[LRB*p+:LRB];
      q_valid[VB*p+:VB] <= bytes_in(r_sp[4*p+:4], r_addr[32*p+:32]);
    end

  // ---------------------------------------------------------------- writes (registered at E)
  // Per write port t (0 the load's, 1 the compute's), flat vectors: field t at [W * t +: W].
  logic [1:0] w_en;
  logic [2*4-1:0] w_sp;
  logic [2*32-1:0] w_row0, w_row1;  // as r_row0 and r_row1
  logic [2*NB-1:0] w_next_row;  // bank b writes row w_row1 (it lies before the run's start)
  logic [2*RB*8-1:0] w_data;
  logic [2*RB-1:0] w_be;
  always_ff @(posedge clk) begin
    logic [VB-1:0] room;
    logic [RB*8-1:0] data;
    logic [RB-1:0] mask;
    // port A: the load's bytes
    room = bytes_in(lw_sp, lw_addr);
    data = '0;
    mask = '0;
    for (int unsigned j = 0; j < DW; j++) begin
      data[8*j+:8] = lw_data[8*j+:8];
      mask[j] = lw_mask[j] && VB'(j) < room;
    end
    w_en[0] <= lw_en;
    w_sp[3:0] <= lw_sp;
    w_row0[31:0] <= lw_addr >> LRB;
    w_row1[31:0] <= (lw_addr >> LRB) + 1;
    for (int unsigned b = 0; b < NB; b++) w_next_row[b] <= 32'(b) < 32'(lw_addr[LRB-1:0]) >> 2;
    w_data[RB*8-1:0] <= rot_left(data, lw_addr[LRB-1:0]);
    w_be[RB-1:0] <= rot_left_mask(mask, lw_addr[LRB-1:0]);
    // port B: the compute's bytes
    room = bytes_in(cw_sp, cw_addr);
    data = '0;
    mask = '0;
    for (int unsigned j = 0; j < W_BYTES; j++) begin
      data[8*j+:8] = cw_data[8*j+:8];
      mask[j] = cw_mask[j] && VB'(j) < room;
    end
    w_en[1] <= cw_en;
    w_sp[7:4] <= cw_sp;
    w_row0[63:32] <= cw_addr >> LRB;
    w_row1[63:32] <= (cw_addr >> LRB) + 1;
    for (int unsigned b = 0; b < NB; b++) w_next_row[NB+b] <= 32'(b) < 32'(cw_addr[LRB-1:0]) >> 2;
    w_data[2*RB*8-1:RB*8] <= rot_left(data, cw_addr[LRB-1:0]);
    w_be[2*RB-1:RB] <= rot_left_mask(mask, cw_addr[LRB-1:0]);
  end

  always_comb begin
    collision = 1'b0;
    if (w_en[0] && w_en[1] && w_sp[3:0] == w_sp[7:4])
      for (int unsigned b = 0; b < NB; b++)
        if (w_be[4*b+:4] != 0 && w_be[RB+4*b+:4] != 0
            && (w_next_row[b] ? w_row1[31:0] : w_row0[31:0])
               == (w_next_row[NB+b] ? w_row1[63:32] : w_row0[63:32]))
          collision = 1'b1;
  end

  // ---------------------------------------------------------------- the banks
  // Per read: which banks take the row after the run's first (they lie before its first word).
  logic [NR*NB-1:0] r_next;  // read p's bank b at [NB * p + b]
  always_comb
    for (int unsigned p = 0; p < NR; p++)
      for (int unsigned b = 0; b < NB; b++)
        r_next[NB*p+b] = 32'(b) < 32'(r_first[LRB*p+:LRB]) >> 2;
  // Bank b's word for read p of scratchpad k (p = copy * 2 + port) at [(k * NR + p) * NB + b]:
  // an array of words, not one wide vector (Verilator rebuilt a vector of every bank's output,
  // concatenation by concatenation, each time one changed: 20x slower on micro).
  logic [31:0] bank_q[NSP*NR*NB];
  for (genvar k = 0; k < NSP; k++) begin : g_sp
    localparam int unsigned SIZE = tessel_cfg_pkg::SP_SIZE_BYTES[32*k+:32];
    localparam int unsigned DEPTH = (SIZE + RB - 1) / RB;
    localparam int unsigned AW = DEPTH > 1 ? $clog2(DEPTH) : 1;
    for (genvar c = 0; c < 2; c++) begin : g_copy
      for (genvar b = 0; b < NB; b++) begin : g_bank
        // Rows past the bank's depth hold bytes past the scratchpad's end: never written (their
        // enables are off) and never kept (their read bytes are masked).
        tessel_sram_bank #(.DEPTH(DEPTH), .AW(AW)) u_bank (
            .clk2x, .mid,
            .a_re(r_sp[4*(2*c)+:4] == 4'(k)), .a_row0(AW'(r_row0[32*(2*c)+:32])),
            .a_row1(AW'(r_row1[32*(2*c)+:32])), .a_next(r_next[NB*(2*c)+b]),
            .a_wrow0(AW'(w_row0[31:0])), .a_wrow1(AW'(w_row1[31:0])), .a_wnext(w_next_row[b]),
            .a_be(w_en[0] && w_sp[3:0] == 4'(k) ? w_be[4*b+:4] : 4'd0),
            .a_din(w_data[32*b+:32]),
            .a_dout(bank_q[(k*NR+2*c)*NB+b]),
            .b_re(r_sp[4*(2*c+1)+:4] == 4'(k)), .b_row0(AW'(r_row0[32*(2*c+1)+:32])),
            .b_row1(AW'(r_row1[32*(2*c+1)+:32])), .b_next(r_next[NB*(2*c+1)+b]),
            .b_wrow0(AW'(w_row0[63:32])), .b_wrow1(AW'(w_row1[63:32])),
            .b_wnext(w_next_row[NB+b]),
            .b_be(w_en[1] && w_sp[7:4] == 4'(k) ? w_be[RB+4*b+:4] : 4'd0),
            .b_din(w_data[RB*8+32*b+:32]),
            .b_dout(bank_q[(k*NR+2*c+1)*NB+b]));
      end
    end
  end

  // ---------------------------------------------------------------- read data (cycle t + 1)
  always_comb begin
    logic [RB*8-1:0] row, run;
    cr_data = '0;
    sr_data = '0;
    for (int unsigned p = 0; p < NR; p++) begin
      row = '0;
      for (int unsigned k = 0; k < NSP; k++)
        if (q_sp[4*p+:4] == 4'(k))
          for (int unsigned b = 0; b < NB; b++) row[32*b+:32] = bank_q[(k*NR+p)*NB+b];
      run = rot_right(row, q_rot[LRB*p+:LRB]);
      if (p < 3) begin
        for (int unsigned j = 0; j < CW; j++)
          if (j < (p == 0 ? A_BYTES : p == 1 ? B_BYTES : C_BYTES) && VB'(j) < q_valid[VB*p+:VB])
            cr_data[CW*8*p+8*j+:8] = run[8*j+:8];
      end else begin
        for (int unsigned j = 0; j < DW; j++)
          if (VB'(j) < q_valid[VB*p+:VB]) sr_data[8*j+:8] = run[8*j+:8];
      end
    end
  end
endmodule
/* verilator lint_on UNUSEDSIGNAL */

// One bank of one copy: DEPTH 4-byte words, two ports on clk2x. With `mid` low (the coming
// edge is clk's) a port whose read is enabled reads its row (row1 if `next`, else row0) into
// its output; with `mid` high it writes the enabled bytes at its write row and its output
// holds. Yosys maps it to a RAMB36E1 in true dual-port mode with byte write enables and read
// enables (docs/fpga.md). One process for both ports keeps the Verilator model's work per
// bank small; a byte both ports write at one edge is a write collision (the RAM's content is
// undefined; here port B's byte is kept).
module tessel_sram_bank #(
    parameter int unsigned DEPTH = 1024,
    parameter int unsigned AW = 10
) (
    input  logic          clk2x,
    input  logic          mid,
    input  logic          a_re,
    input  logic [AW-1:0] a_row0,
    input  logic [AW-1:0] a_row1,
    input  logic          a_next,
    input  logic [AW-1:0] a_wrow0,
    input  logic [AW-1:0] a_wrow1,
    input  logic          a_wnext,
    input  logic [3:0]    a_be,
    input  logic [31:0]   a_din,
    output logic [31:0]   a_dout,
    input  logic          b_re,
    input  logic [AW-1:0] b_row0,
    input  logic [AW-1:0] b_row1,
    input  logic          b_next,
    input  logic [AW-1:0] b_wrow0,
    input  logic [AW-1:0] b_wrow1,
    input  logic          b_wnext,
    input  logic [3:0]    b_be,
    input  logic [31:0]   b_din,
    output logic [31:0]   b_dout
);
  logic [31:0] mem[DEPTH];
  logic [AW-1:0] a_addr, b_addr;
  assign a_addr = mid ? (a_wnext ? a_wrow1 : a_wrow0) : (a_next ? a_row1 : a_row0);
  assign b_addr = mid ? (b_wnext ? b_wrow1 : b_wrow0) : (b_next ? b_row1 : b_row0);
`ifdef VERILATOR
  // The same bytes as the byte enables below, as one masked word write per port: a Verilator
  // model then keeps two delayed assignments per bank instead of eight (bench/rtl).
  logic [31:0] a_mask, b_mask;
  always_comb
    for (int unsigned i = 0; i < 4; i++) begin
      a_mask[8*i+:8] = {8{a_be[i]}};
      b_mask[8*i+:8] = {8{b_be[i]}};
    end
  always_ff @(posedge clk2x)
    if (mid) begin
      if (a_be != 0) mem[a_addr] <= (mem[a_addr] & ~a_mask) | (a_din & a_mask);
      if (b_be != 0) mem[b_addr] <= ((a_be != 0 && a_addr == b_addr
                                      ? (mem[a_addr] & ~a_mask) | (a_din & a_mask)
                                      : mem[b_addr]) & ~b_mask) | (b_din & b_mask);
    end else begin
`else
  always_ff @(posedge clk2x)
    if (mid) begin
      for (int unsigned i = 0; i < 4; i++) if (a_be[i]) mem[a_addr][8*i+:8] <= a_din[8*i+:8];
      for (int unsigned i = 0; i < 4; i++) if (b_be[i]) mem[b_addr][8*i+:8] <= b_din[8*i+:8];
    end else begin
`endif
      if (a_re) a_dout <= mem[a_addr];
      if (b_re) b_dout <= mem[b_addr];
    end
endmodule
