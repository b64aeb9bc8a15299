// The matrix unit: an R x C int8/int16 weight-stationary MAC array with int32 accumulators in
// SRAM, sequencing one conv instruction (docs/isa.md "conv", docs/timing.md "conv"), and
// tessel_mac_pair, its two-int8-products-per-DSP48E1 multiply.
//
// Schedule (cycles after the start cycle s): W cycles load weight block 0 into the shadow
// buffer, one array row (C weights) per cycle; then for each pass (a weight block: dense
// (ocb, icb, ky, kx), depthwise (cb, ky, kx), in that loop order, which is also the packed
// weight order) max(P, W) cycles: output pixel j < P streams one input vector through the array
// (C dot products of R terms, added to the accumulators read and written back) while the rows
// of the next block load into the shadow buffer; the buffers swap at the pass end. The compute
// engine adds the F + D fill/drain cycles of the timing contract as a tail: this array
// computes a pixel's C sums within the cycle instead of skewing them through a systolic
// pipeline, which changes no cycle count because only the tile's F + D is timed.
//
// Two stages, because the scratchpads' reads are synchronous (tessel_sram): in cycle t the
// sequencer (stage A) presents the addresses of its step; in cycle t + 1 the datapath (stage B)
// gets their data and does what the step needs (the MAC and the accumulator write, a weight
// row into the shadow buffer, the swap), with the step's control registered. The datapath thus
// runs one cycle behind the sequencer; the engine's F + D >= 1 tail covers that cycle. An
// accumulator read that the previous step's write (at the same edge) makes stale takes that
// write's data instead (a pass of one pixel: P = W = 1).
/* verilator lint_off UNUSEDSIGNAL */
module tessel_matrix #(
    parameter int unsigned CW = 64  // compute port bytes
) (
    input  logic           clk,
    input  logic           rst,
    input  logic           start,
    input  logic [255:0]   insn,
    output logic           work_done,
    // read ports: a = input vector, b = accumulators (the bias on a first pass with
    // init=bias), c = weight row
    output logic [3*4-1:0] rd_sp,
    output logic [3*32-1:0] rd_addr,
    input  logic [3*CW*8-1:0] rd_data,
    output logic           wr_en,
    output logic [3:0]     wr_sp,
    output logic [31:0]    wr_addr,
    output logic [CW*8-1:0] wr_data,
    output logic [CW-1:0]  wr_mask
);
  localparam int unsigned R = tessel_cfg_pkg::MATRIX_ROWS;
  localparam int unsigned C = tessel_cfg_pkg::MATRIX_COLS;
  localparam int unsigned IB = tessel_cfg_pkg::INPUT_BITS / 8;
  localparam int unsigned WB = tessel_cfg_pkg::WEIGHT_BITS / 8;

  tessel_isa_pkg::conv_insn_t f, g;
  assign g = insn;
  logic [1:0] phase;  // 0: load block 0, 1: passes, 2: done
  logic [31:0] j, k, passes, npix, pass_len, wrows;
  logic [9:0] oy, ox, icb, ocb;
  logic [3:0] ky, kx;
  logic [31:0] wptr;
  // weights: entry (r, c) at [16*(r*C+c) +: 16], sign-extended to 16 bits
  logic [R*C*16-1:0] wcur, wnext, wnext_d;

  assign work_done = phase == 2'd2 && !b_on;

  // ---- stage A: the sequencer's step and its addresses
  logic signed [31:0] iy, ix, in_h, in_w;
  logic in_win, first, use_bias, mac, load_row, swap;
  logic [31:0] in_byte, acc_byte;
  localparam int unsigned NV = R > C ? R : C;
  // ---- stage B: the previous cycle's step, whose read data are here now
  logic b_on, b_in_win, b_first, b_mac, b_load_row, b_swap, b_fwd;
  logic [31:0] b_j, b_acc;
  logic [C*32-1:0] b_fwd_data;  // the accumulators written at the edge b_fwd says

  always_comb begin
    in_h = (32'(f.out_h) - 1) * 32'(f.stride_h) + (32'(f.kh) - 1) * 32'(f.dil_h) + 1
         - 32'(f.pad_top) - 32'(f.pad_bottom);
    in_w = (32'(f.out_w) - 1) * 32'(f.stride_w) + (32'(f.kw) - 1) * 32'(f.dil_w) + 1
         - 32'(f.pad_left) - 32'(f.pad_right);
    iy = 32'(oy) * 32'(f.stride_h) + 32'(ky) * 32'(f.dil_h) - 32'(f.pad_top);
    ix = 32'(ox) * 32'(f.stride_w) + 32'(kx) * 32'(f.dil_w) - 32'(f.pad_left);
    in_win = iy >= 0 && iy < in_h && ix >= 0 && ix < in_w;
    first = icb == 0 && ky == 0 && kx == 0;
    use_bias = first && f.init == tessel_isa_pkg::INIT_BIAS;  // port b reads the bias
    mac = phase == 2'd1 && j < npix;
    load_row = (phase == 2'd0) || (phase == 2'd1 && j < wrows && k + 1 < passes);
    swap = (phase == 2'd0 && j == wrows - 1) || (phase == 2'd1 && j == pass_len - 1);
    in_byte = 32'(f.in_addr) + (32'(iy) * 32'(f.in_stride_y) + 32'(ix) * 32'(f.in_stride_x)
            + (f.depthwise ? 32'(ocb) * C : 32'(icb) * R)) * IB;
    acc_byte = 32'(f.acc_addr) + (32'(oy) * 32'(f.acc_stride_y) + 32'(ox) * 32'(f.acc_stride_x)
             + 32'(ocb) * C) * 4;
    rd_sp = {f.w_sp, use_bias ? f.w_sp : f.acc_sp, f.in_sp};
    rd_addr = {wptr, use_bias ? 32'(f.bias_addr) + 32'(ocb) * C * 4 : acc_byte, in_byte};
  end

  // ---- products. Depthwise weights sit on the diagonal of the weight buffer (entry (c, c)
  // holds channel c's weight, the rest 0) when R >= C, so that a depthwise pass is the same
  // dot product as a dense one: sum_r in[r] * w[r][c] = in[c] * w[c]. Every product is formed
  // at its exact width (IB*8 x WB*8 bits, e.g. 8 x 8 -> 16) and the R products of a column are
  // summed in DOT_W bits, then added to the int32 accumulator: the same value modulo 2^32 as
  // the int32 products and sums of docs/isa.md, since no partial sum overflows DOT_W bits.
  localparam bit DIAG = R >= C;
  // int8 x int8 with column pairs: two products per 25 x 8 multiply (tessel_mac_pair, at the
  // end of this file), so R * C / 2 DSP48E1 instead of R * C (docs/fpga.md, "Two int8
  // products per DSP48E1").
  localparam bit PACK = DIAG && IB == 1 && WB == 1 && C % 2 == 0;
  localparam int unsigned PW = 8 * (IB + WB);  // product bits
  localparam int unsigned DOT_W = PW + $clog2(R) + 1 < 32 ? PW + $clog2(R) + 1 : 32;
  logic [NV*16-1:0] in_vec;  // entry i at [16*i +: 16], sign-extended; 0 outside the window
  logic [R*C*PW-1:0] prod;   // in[r] * w[r][c] at [PW*(r*C+c) +: PW]

  always_comb
    for (int unsigned i = 0; i < NV; i++) begin
      if (!b_in_win) in_vec[16*i+:16] = 0;
      else if (IB == 1) in_vec[16*i+:16] = 16'($signed(rd_data[8*i+:8]));
      else in_vec[16*i+:16] = rd_data[16*i+:16];
    end

  for (genvar r = 0; r < R; r++) begin : g_row
    if (PACK) begin : g_pack
      for (genvar q = 0; q < C / 2; q++) begin : g_pair
        tessel_mac_pair u_pair (
            .x(in_vec[16*r+:8]),
            .w_lo(wcur[16*(r*C+2*q)+:8]),
            .w_hi(wcur[16*(r*C+2*q+1)+:8]),
            .p_lo(prod[PW*(r*C+2*q)+:PW]),
            .p_hi(prod[PW*(r*C+2*q+1)+:PW])
        );
      end
    end else begin : g_plain
      for (genvar c = 0; c < C; c++) begin : g_col
        logic signed [IB*8-1:0] xv;
        logic signed [WB*8-1:0] wv;
        logic signed [PW-1:0] pv;
        assign xv = in_vec[16*r+:IB*8];
        assign wv = wcur[16*(r*C+c)+:WB*8];
        assign pv = xv * wv;  // sign-extended to PW bits: exact
        assign prod[PW*(r*C+c)+:PW] = pv;
      end
    end
  end

  always_comb begin
    for (int unsigned r = 0; r < R; r++)
      for (int unsigned c = 0; c < C; c++) begin
        wnext_d[16*(r*C+c)+:16] = wnext[16*(r*C+c)+:16];
        if (b_load_row && f.depthwise && DIAG) begin  // one row: channel c to entry (c, c)
          if (r != c) wnext_d[16*(r*C+c)+:16] = '0;
          else if (WB == 1) wnext_d[16*(r*C+c)+:16] = 16'($signed(rd_data[2*CW*8+8*c+:8]));
          else wnext_d[16*(r*C+c)+:16] = rd_data[2*CW*8+16*c+:16];
        end else if (b_load_row && 32'(r) == b_j) begin
          if (WB == 1) wnext_d[16*(r*C+c)+:16] = 16'($signed(rd_data[2*CW*8+8*c+:8]));
          else wnext_d[16*(r*C+c)+:16] = rd_data[2*CW*8+16*c+:16];
        end
      end
    wr_en = b_mac;
    wr_sp = f.acc_sp;
    wr_addr = b_acc;
    wr_data = '0;
    wr_mask = '0;
    for (int unsigned c = 0; c < C; c++) begin
      logic [31:0] sum;
      logic signed [DOT_W-1:0] dot;
      if (!b_first || f.init == tessel_isa_pkg::INIT_ACC)
        sum = b_fwd ? b_fwd_data[32*c+:32] : rd_data[CW*8+32*c+:32];
      else if (f.init == tessel_isa_pkg::INIT_BIAS) sum = rd_data[CW*8+32*c+:32];
      else sum = 0;
      // int32 products and sums wrap around (docs/isa.md); here none wraps before the last add
      dot = '0;
      if (f.depthwise && !DIAG)
        dot = DOT_W'($signed(in_vec[16*c+:IB*8]) * $signed(wcur[16*c+:WB*8]));
      else
        for (int unsigned r = 0; r < R; r++) dot = dot + DOT_W'($signed(prod[PW*(r*C+c)+:PW]));
      wr_data[32*c+:32] = sum + 32'(dot);
      wr_mask[4*c+:4] = 4'hf;
    end
  end

  // ---- stage B's registers: this cycle's step, for the datapath in the next cycle
  always_ff @(posedge clk) begin
    b_on <= !rst && !start && phase != 2'd2;
    b_in_win <= in_win;
    b_first <= first;
    b_mac <= !rst && !start && mac;
    b_load_row <= load_row;
    b_swap <= swap;
    b_j <= j;
    b_acc <= acc_byte;
    // This step's accumulator read sees the memory before the previous step's write, made at
    // this edge: when both are the same accumulators, the write's data replace the read's.
    b_fwd <= wr_en && !use_bias && wr_addr == acc_byte;
    b_fwd_data <= wr_data[C*32-1:0];
    if (b_on) begin
      wnext <= wnext_d;
      if (b_swap) wcur <= wnext_d;
    end
  end

  // ---- stage A: sequencing
  always_ff @(posedge clk) begin
    if (rst) phase <= 2'd2;
    else if (start) begin
      logic [31:0] p, w;
      f <= g;
      p = 32'(g.out_h) * 32'(g.out_w);
      w = g.depthwise ? 32'd1 : 32'(R);
      npix <= p;
      wrows <= w;
      pass_len <= p > w ? p : w;
      passes <= g.depthwise ? 32'(g.oc_blocks) * 32'(g.kh) * 32'(g.kw)
                            : 32'(g.oc_blocks) * 32'(g.ic_blocks) * 32'(g.kh) * 32'(g.kw);
      phase <= 2'd0;
      j <= '0;
      k <= '0;
      wptr <= 32'(g.w_addr);
      {oy, ox, icb, ocb, ky, kx} <= '0;
    end else if (phase != 2'd2) begin
      if (load_row) wptr <= wptr + C * WB;
      if (phase == 2'd0) begin
        if (j == wrows - 1) begin
          phase <= 2'd1;
          j <= '0;
        end else j <= j + 1;
      end else if (j == pass_len - 1) begin
        j <= '0;
        oy <= '0;
        ox <= '0;
        k <= k + 1;
        if (k == passes - 1) phase <= 2'd2;
        if (kx != f.kw - 1) kx <= kx + 1'b1;
        else begin
          kx <= '0;
          if (ky != f.kh - 1) ky <= ky + 1'b1;
          else begin
            ky <= '0;
            if (!f.depthwise && icb != f.ic_blocks - 1) icb <= icb + 1'b1;
            else begin
              icb <= '0;
              ocb <= ocb + 1'b1;
            end
          end
        end
      end else begin
        j <= j + 1;
        if (ox == f.out_w - 1) begin
          ox <= '0;
          oy <= oy + 1'b1;
        end else ox <= ox + 1'b1;
      end
    end
  end
endmodule
/* verilator lint_on UNUSEDSIGNAL */

// tessel_mac_pair: two signed int8 products that share one operand, x * w_lo and x * w_hi,
// from ONE 25 x 8-bit signed multiply: one DSP48E1 (25 x 18) on a 7-series FPGA instead of two.
//
// The arithmetic (docs/fpga.md, "Two int8 products per DSP48E1"):
//   A = w_hi * 2^16 + w_lo      in [-2^23 - 128, 2^23 - 2^16 + 127]: 25-bit signed
//   P = A * x = hi * 2^16 + lo  hi = x * w_hi, lo = x * w_lo, both in [-16256, 16384]
//   |P| <= (2^23 + 128) * 128 < 2^31, so P is exact in 32 bits.
//   lo in [-2^15, 2^15) is the low 16 bits of P read as signed: p_lo = P[15:0].
//   floor(P / 2^16) = hi + floor(lo / 2^16) = hi - (lo < 0), and lo < 0 iff P[15] = 1, so
//   p_hi = P[31:16] + P[15] (16-bit, exact since hi fits in 16 bits).
// A shift of 17 (the 18-bit lane of Xilinx's WP487 for the 27 x 18 DSP48E2) would not fit
// the DSP48E1's 25-bit A port: w_hi = -128, w_lo < 0 gives A < -2^24.
// tests/rtl/mac_pair_test.cpp checks every (x, w_lo, w_hi) triple, 2^24 of them.
module tessel_mac_pair (
    input  logic signed [7:0]  x,
    input  logic signed [7:0]  w_lo,
    input  logic signed [7:0]  w_hi,
    output logic signed [15:0] p_lo,  // x * w_lo
    output logic signed [15:0] p_hi   // x * w_hi
);
  logic signed [24:0] a;
  logic signed [31:0] p;
  assign a = $signed({w_hi[7], w_hi, 16'd0}) + 25'(w_lo);
  assign p = a * x;  // both signed: sign-extended to 32 bits, one 25 x 8 multiplier
  assign p_lo = p[15:0];
  assign p_hi = p[31:16] + 16'(p[15]);
endmodule
