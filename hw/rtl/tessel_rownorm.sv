// The vector unit's row normaliser (VECTOR_ROW_NORMALISE): softmax and norm (docs/isa.md),
// the golden integer rules of support/int_nonlinear.hpp (intops::softmax_row, norm_row and
// norm_scale) step for step, on the schedule of docs/timing.md "softmax, norm":
//
//   softmax  ceil(512 / V) table steps (exp_high then exp_low into 512 16-bit registers, V
//            entries a step through read port a), then per row (a pixel's c_size elements):
//            a max pass (ceil(c / V) chunks), a sum pass (the same chunks: u = m - x, the two
//            table reads, rha(hi * lo, 15), an adder tree into the row's sum S), 31 divider
//            steps (R = floor(2^45 / S), a restoring divider, one quotient bit a step) and
//            the normalising pass (e again, rha(e * R, 15), vcfg's requantize, written).
//   norm     per row: a statistics pass (S1, S2 by adder trees; E read on port b), 56 scale
//            steps (W = D + E and g, then isqrt(W << 2g) two root bits a step, 31 steps,
//            then inv = floor(2^54 / s), one quotient bit a step, 25) and the normalising pass
//            (port a the chunk, ports b and c its 16 V bytes of (G, r, B): t = rha(c * inv,
//            38 - g), clamp(rha(t * G + B, r))), written.
//
// Like tessel_vector: stage A (the step registers) presents the step's read addresses in
// cycle t; stage B, in cycle t + 1, gets the data and does the step's arithmetic (every
// dependency between passes is between stage-B registers, so a pass's first step sees the
// previous pass's last result). The sequencer takes exactly the steps the cost formula counts;
// the compute engine adds P_v as a tail that covers stage B's cycle.
/* verilator lint_off UNUSEDSIGNAL */
module tessel_rownorm #(
    parameter int unsigned CW = 64
) (
    input  logic           clk,
    input  logic           rst,
    input  logic           start,
    input  logic [255:0]   insn,
    // vcfg registers (softmax's requantize; norm's clamp)
    input  logic [30:0]    mult_a,
    input  logic [5:0]     shift,
    input  logic signed [15:0] zp,
    input  logic signed [15:0] lo,
    input  logic signed [15:0] hi,
    output logic           work_done,
    // read ports: a = the source chunk or a table step, b and c = norm's parameters
    // (8 V bytes each), b = norm's E during the statistics pass
    output logic [3*4-1:0] rd_sp,
    output logic [3*32-1:0] rd_addr,
    input  logic [3*CW*8-1:0] rd_data,
    output logic           wr_en,
    output logic [3:0]     wr_sp,
    output logic [31:0]    wr_addr,
    output logic [CW*8-1:0] wr_data,
    output logic [CW-1:0]  wr_mask
);
  localparam int unsigned V = tessel_cfg_pkg::VECTOR_LANES;
  localparam int unsigned NT = (512 + V - 1) / V;  // softmax's table steps
  localparam int unsigned OUT_BYTES = 2 * V < CW ? 2 * V : CW;
  // phases of a step
  localparam logic [2:0] PH_TABLE = 3'd0, PH_PASS1 = 3'd1, PH_SUM = 3'd2, PH_WAIT = 3'd3,
                         PH_OUT = 3'd4;

  logic [255:0] w;
  logic active;
  logic [2:0] phase;
  logic [9:0] y, x;
  logic [15:0] ch, nch, tk;
  logic [5:0] k;  // divider / scale step

  tessel_isa_pkg::softmax_insn_t sm;
  tessel_isa_pkg::norm_insn_t nm;
  assign sm = w;
  assign nm = w;
  logic is_sm;
  assign is_sm = w[7:0] == tessel_isa_pkg::OP_SOFTMAX;

  // The fields both instructions share (same bit positions: docs/isa.md).
  logic [3:0] src_sp, dst_sp, aux_sp;
  logic [2:0] e, de;
  logic [15:0] csz;
  logic [9:0] ys, xs;
  assign src_sp = sm.src_sp;
  assign dst_sp = sm.dst_sp;
  assign aux_sp = sm.table_sp;  // norm: param_sp
  assign e = sm.elem == tessel_isa_pkg::ELEM_I16 ? 3'd2 : 3'd1;
  assign de = sm.dst_elem == tessel_isa_pkg::ELEM_I16 ? 3'd2 : 3'd1;
  assign csz = sm.c_size;
  assign ys = sm.y_size;
  assign xs = sm.x_size;

  function automatic logic signed [31:0] elem_at(input logic [CW*8-1:0] data,
                                                 input int unsigned lane, input logic [2:0] eb);
    if (eb == 3'd1) elem_at = 32'($signed(data[8*lane+:8]));
    else elem_at = 32'($signed(data[16*lane+:16]));
  endfunction

  // round_half_away(t, r) = sign(t) * ((|t| + 2^(r-1)) >> r); r = 0 returns t.
  function automatic logic signed [63:0] rha(input logic signed [63:0] t, input logic [5:0] r);
    logic [63:0] mag;
    if (r == 0) rha = t;
    else begin
      mag = t[63] ? 64'(-t) : 64'(t);
      mag = (mag + (64'd1 << (r - 1))) >> r;
      rha = t[63] ? -$signed(mag) : $signed(mag);
    end
  endfunction

  function automatic logic signed [31:0] clamp(input logic signed [63:0] v,
                                               input logic signed [15:0] l,
                                               input logic signed [15:0] h);
    if (v < 64'(l)) clamp = 32'(l);
    else if (v > 64'(h)) clamp = 32'(h);
    else clamp = 32'(v);
  endfunction

  // ---- stage A: the step's addresses
  logic [31:0] lane0, wr_addr_a;
  assign lane0 = 32'(ch) * V;
  always_comb begin
    logic [31:0] pix_src, pix_dst;
    pix_src = 32'(y) * 32'(sm.src_stride_y) + 32'(x) * 32'(sm.src_stride_x) + lane0;
    rd_sp = {aux_sp, aux_sp, phase == PH_TABLE ? aux_sp : src_sp};
    rd_addr[31:0] = phase == PH_TABLE ? 32'(sm.table_addr) + 32'(tk) * (2 * V)
                  : 32'(sm.src_addr) + (e == 3'd2 ? pix_src << 1 : pix_src);
    // norm: E (the statistics pass), then each chunk's 16 bytes a lane: b the first 8 V
    rd_addr[63:32] = phase == PH_OUT ? 32'(nm.param_addr) + 32'd8 + lane0 * 16
                                     : 32'(nm.param_addr);
    rd_addr[95:64] = 32'(nm.param_addr) + 32'd8 + lane0 * 16 + 8 * V;
    pix_dst = 32'(y) * 32'(sm.dst_stride_y) + 32'(x) * 32'(sm.dst_stride_x) + lane0;
    wr_addr_a = 32'(sm.dst_addr) + (de == 3'd2 ? pix_dst << 1 : pix_dst);
  end

  // ---- stage B's step (registered from stage A)
  logic b_valid, b_first;
  logic [2:0] b_phase;
  logic [5:0] b_k;
  logic [15:0] b_tk;
  logic [31:0] b_lane0, b_wr_addr;
  logic [9:0] b_x;
  assign wr_addr = b_wr_addr;
  assign wr_sp = dst_sp;
  assign work_done = !active && !b_valid;

  // The row's state (stage B): softmax's max, its any-kept flag, the exp sum; norm's S1, S2,
  // E, W == 0 and g; the square root's remainder and root; the divider's remainder and
  // quotient (softmax: R; norm: inv).
  logic signed [31:0] rmax, rmax_d;
  logic any, any_d;
  logic [31:0] ssum, ssum_d;
  logic signed [31:0] s1, s1_d;
  logic [47:0] s2, s2_d;
  logic signed [63:0] eps;
  logic wzero;
  logic [4:0] g;
  logic [63:0] sq_rem, sq_root;
  logic [32:0] dv_rem;
  logic [30:0] dv_q;

  // softmax's exp tables
  logic [15:0] tab_hi[256];
  logic [15:0] tab_lo[256];

  logic [8*V*16-1:0] params;  // norm: the chunk's (G, r, B), 16 bytes a lane
  assign params = {rd_data[2*CW*8+:8*V*8], rd_data[CW*8+:8*V*8]};

  logic [V*32-1:0] lane_res;
  logic [V-1:0] lane_wr;

  // Stage B's lanes: the pass's fold (max, sum, S1 / S2) and the normalising pass's results.
  always_comb begin
    logic signed [31:0] lim;
    lim = 32'(b_x) + 32'($signed(sm.mask_offset));
    rmax_d = b_first ? 32'sd0 : rmax;
    any_d = b_first ? 1'b0 : any;
    ssum_d = b_first ? 32'd0 : ssum;
    s1_d = b_first ? 32'sd0 : s1;
    s2_d = b_first ? 48'd0 : s2;
    for (int unsigned l = 0; l < V; l++) begin
      logic signed [31:0] a, res;
      logic signed [15:0] a16;  // an i8 or i16 element: 16 x 16 and 16 x 17 multiplies
      logic lane_on, kept;
      logic [15:0] u;
      logic [31:0] ehl;
      logic [17:0] ex;
      logic [48:0] pr;
      logic signed [31:0] p;
      logic signed [32:0] c;
      logic signed [63:0] ci, tg, pm, sq;
      logic signed [31:0] t;
      a = elem_at(rd_data[CW*8-1:0], l, e);
      a16 = a[15:0];
      lane_on = b_lane0 + l < 32'(csz);
      kept = lane_on && (!sm.causal || $signed(b_lane0 + l) <= lim);
      // softmax: u = m - x (kept lanes: 0 .. 65535), e = rha(hi[u >> 8] * lo[u & 255], 15)
      u = 16'(rmax - a);
      ehl = tab_hi[u[15:8]] * tab_lo[u[7:0]];  // 16 x 16 -> 32 bits
      ex = 18'((33'(ehl) + 33'd16384) >> 15);
      pr = 49'(ex) * 49'(dv_q);
      p = 32'((pr + 49'd16384) >> 15);  // rha(e * R, 15): at most 2^30
      pm = p * $signed({1'b0, mult_a});  // 32 x 32 -> 64 bits (p <= 2^30, M < 2^31)
      // norm: c = N x - S1 (centre) or N x; t = rha(c * inv, 38 - g), the normalised value
      // times 2^16: |t| <= sqrt(N) 2^16 < 2^24 (docs/isa.md's bounds), so 32 bits hold it.
      // (Products are written with narrow signed operands and a wide result, so that
      // synthesis builds multipliers of the operands' widths: same values.)
      c = a16 * $signed({1'b0, csz}) - (nm.centre ? 33'(s1) : 33'sd0);
      ci = c * $signed({1'b0, wzero ? 25'd0 : dv_q[24:0]});
      t = 32'(rha(ci, 6'd38 - 6'(g)));
      tg = t * $signed(params[128*l+:32]);
      sq = a16 * a16;
      if (b_phase == PH_PASS1 && is_sm && kept) begin
        if (!any_d || a > rmax_d) rmax_d = a;
        any_d = 1'b1;
      end
      if (b_phase == PH_SUM && kept) ssum_d = ssum_d + 32'(ex);
      if (b_phase == PH_PASS1 && !is_sm && lane_on) begin
        s1_d = s1_d + a;
        s2_d = s2_d + sq[47:0];
      end
      if (is_sm)
        res = kept ? clamp(rha(pm, shift) + 64'(zp), lo, hi) : 32'sd0;
      else res = clamp(rha(tg + $signed(params[128*l+64+:64]), params[128*l+32+:6]), lo, hi);
      lane_res[32*l+:32] = res;
      lane_wr[l] = lane_on;
    end
    // Lane l's de bytes land at bytes [l * de, (l + 1) * de) of the chunk (as tessel_vector).
    wr_data = '0;
    wr_mask = '0;
    for (int unsigned o = 0; o < OUT_BYTES; o++)
      if (de == 3'd1 && o < V) begin
        wr_data[8*o+:8] = lane_res[32*o+:8];
        wr_mask[o] = lane_wr[o];
      end else if (de == 3'd2) begin
        wr_data[8*o+:8] = lane_res[32*(o/2)+8*(o%2)+:8];
        wr_mask[o] = lane_wr[o/2];
      end
    wr_en = b_valid && b_phase == PH_OUT;
  end

  // The divider and square-root steps (stage B of PH_WAIT): softmax steps 0..30 divide 2^45 by
  // S; norm steps 0..30 take isqrt(W << 2g) (step 0 also forms W and g), 31..55 divide 2^54 by
  // the root. A restoring divider whose quotient has at most 31 (25) bits starts from the
  // dividend's bits above them, 2^14 (2^29), below the divisor (S >= 2^15, s >= 2^29.5).
  logic [63:0] sq_rem_d, sq_root_d;
  logic [32:0] dv_rem_d;
  logic [30:0] dv_q_d;
  logic wzero_d;
  logic [4:0] g_d;
  always_comb begin
    logic signed [63:0] d, ss, wv;
    logic [63:0] v, bit_k, rem, root;
    logic [32:0] r2, dvs;
    logic [6:0] bl;
    d = $signed({1'b0, s2}) * $signed({1'b0, csz});  // N S2 <= 2^58
    ss = s1 * s1;
    wv = d - (nm.centre ? ss : 64'sd0) + eps;
    bl = 7'd0;
    for (int unsigned i = 0; i < 64; i++)
      if (wv[i]) bl = 7'(i + 1);
    wzero_d = b_k == 0 ? wv == 0 : wzero;
    g_d = b_k == 0 ? 5'((7'd61 - bl) >> 1) : g;
    v = 64'(wv) << (2 * g_d);
    rem = b_k == 0 ? v : sq_rem;
    root = b_k == 0 ? 64'd0 : sq_root;
    bit_k = 64'd1 << (60 - 2 * 32'(b_k));
    sq_rem_d = sq_rem;
    sq_root_d = sq_root;
    if (b_k < 31) begin
      if (rem >= root + bit_k) begin
        sq_rem_d = rem - (root + bit_k);
        sq_root_d = (root >> 1) + bit_k;
      end else begin
        sq_rem_d = rem;
        sq_root_d = root >> 1;
      end
    end
    // the divider: its first step starts from the dividend's top bits
    dvs = is_sm ? 33'(ssum) : 33'(sq_root);
    if (is_sm ? b_k == 0 : b_k == 31) r2 = is_sm ? 33'd32768 : 33'd1 << 30;  // 2^14 << 1
    else r2 = dv_rem << 1;
    if (r2 >= dvs) begin
      dv_rem_d = r2 - dvs;
      dv_q_d = {dv_q[29:0], 1'b1};
    end else begin
      dv_rem_d = r2;
      dv_q_d = {dv_q[29:0], 1'b0};
    end
    if (is_sm ? b_k == 0 : b_k == 31) dv_q_d[30:1] = '0;
  end

  always_ff @(posedge clk) begin
    b_valid <= !rst && !start && active;
    b_phase <= phase;
    b_first <= phase == PH_WAIT ? k == 0 : ch == 0;
    b_k <= k;
    b_tk <= tk;
    b_lane0 <= lane0;
    b_x <= x;
    b_wr_addr <= wr_addr_a;
    if (b_valid) begin
      case (b_phase)
        PH_TABLE:
          for (int unsigned l = 0; l < V; l++)
            if (32'(b_tk) * V + l < 256) tab_hi[8'(32'(b_tk) * V + l)] <= rd_data[16*l+:16];
            else if (32'(b_tk) * V + l < 512) tab_lo[8'(32'(b_tk) * V + l)] <= rd_data[16*l+:16];
        PH_PASS1: begin
          rmax <= rmax_d;
          any <= any_d;
          s1 <= s1_d;
          s2 <= s2_d;
          if (b_first) eps <= $signed(rd_data[CW*8+:64]);
        end
        PH_SUM: ssum <= ssum_d;
        PH_WAIT: begin
          if (!is_sm) begin
            sq_rem <= sq_rem_d;
            sq_root <= sq_root_d;
            wzero <= wzero_d;
            g <= g_d;
          end
          if (is_sm || b_k >= 31) begin
            dv_rem <= dv_rem_d;
            dv_q <= dv_q_d;
          end
        end
        default: ;
      endcase
    end
  end

  // ---- stage A: the steps
  always_ff @(posedge clk) begin
    if (rst) active <= 1'b0;
    else if (start) begin
      logic [15:0] c;
      w <= insn;
      active <= 1'b1;
      {y, x, ch, tk, k} <= '0;
      phase <= insn[7:0] == tessel_isa_pkg::OP_SOFTMAX ? PH_TABLE : PH_PASS1;
      c = insn[tessel_isa_pkg::SOFTMAX_C_SIZE_LSB+:tessel_isa_pkg::SOFTMAX_C_SIZE_W];
      nch <= 16'((32'(c) + V - 1) / V);
    end else if (active) begin
      case (phase)
        PH_TABLE:
          if (tk == 16'(NT - 1)) phase <= PH_PASS1;
          else tk <= tk + 1'b1;
        PH_PASS1, PH_SUM:
          if (ch != nch - 1) ch <= ch + 1'b1;
          else begin
            ch <= '0;
            k <= '0;
            phase <= phase == PH_PASS1 && is_sm ? PH_SUM : PH_WAIT;
          end
        PH_WAIT:
          if (k != (is_sm ? 6'd30 : 6'd55)) k <= k + 1'b1;
          else phase <= PH_OUT;
        default:  // PH_OUT
          if (ch != nch - 1) ch <= ch + 1'b1;
          else begin
            ch <= '0;
            phase <= PH_PASS1;
            if (x != xs - 1) x <= x + 1'b1;
            else begin
              x <= '0;
              if (y != ys - 1) y <= y + 1'b1;
              else active <= 1'b0;
            end
          end
      endcase
    end
  end
endmodule
/* verilator lint_on UNUSEDSIGNAL */
