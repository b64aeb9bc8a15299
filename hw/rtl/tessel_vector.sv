// The vector unit: requant, add, copy, pool, lut, reduce and mul over V lanes (docs/isa.md,
// docs/quantization.md).
//
// lut (when VECTOR_LOOKUP_TABLE) first reads its 256-entry table from the scratchpad, V entries
// a step, into the unit's table registers (int16, an i8 table sign-extended), then walks its box
// like copy, each lane looking its int8 element up. reduce (when VECTOR_ROW_REDUCE) walks like
// copy and folds each chunk's lanes into a pixel's running max / sum / sum of squares, written
// as one int32 at the pixel's last chunk. mul (when VECTOR_BROADCAST_MULTIPLY) walks like add,
// its b port reading b's chunk (or, with b_per_pixel, the pixel's one element, broadcast to the
// lanes); each lane forms a * b (16 x 16 bits) and feeds it to the requantize path with vcfg's
// M, r, zp, lo, hi. Without the parameters none of them is built: the opcodes
// then run as a copy-like walk that writes nothing (the harness refuses them first, as the
// simulator does, naming the missing unit).
//
// One pixel's channels are processed V at a time, one chunk per cycle (pool: one window
// element per cycle): requant/add/copy walk (y, x, chunk), pool walks (oy, ox, chunk, ky, kx).
// Two stages, because the scratchpads' reads are synchronous (tessel_sram): in cycle t the
// sequencer (stage A) presents a step's operand addresses; in cycle t + 1 the datapath (stage
// B) gets the operands, computes the fixed-point multiply, round-half-away shift, zero point
// and clamp, and writes the chunk (a pool step updates its window's max or sum). The compute
// engine adds the P_v pipeline cycles of the timing contract as a tail, which covers stage B's
// cycle (the RTL evaluates the datapath's stages in one cycle).
/* verilator lint_off UNUSEDSIGNAL */
module tessel_vector #(
    parameter int unsigned CW = 64
) (
    input  logic           clk,
    input  logic           rst,
    input  logic           start,
    input  logic [255:0]   insn,
    // vcfg registers
    input  logic [30:0]    mult_a,
    input  logic [30:0]    mult_b,
    input  logic [5:0]     shift,
    input  logic signed [15:0] zp,
    input  logic signed [15:0] lo,
    input  logic signed [15:0] hi,
    output logic           work_done,
    // read ports: a = source / first operand, b = second operand (add) or the first half of
    // the chunk's per-channel requant parameters, c = their second half (8 bytes a channel:
    // 8 V bytes a chunk, 4 V on each port, so that no port is wider than 4 V)
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
  localparam bit LT = tessel_cfg_pkg::VECTOR_LOOKUP_TABLE != 0;
  localparam bit RR = tessel_cfg_pkg::VECTOR_ROW_REDUCE != 0;
  localparam bit BM = tessel_cfg_pkg::VECTOR_BROADCAST_MULTIPLY != 0;
  localparam int unsigned NT = (256 + V - 1) / V;  // table steps of a lut
  localparam int unsigned TAB_N = LT ? 256 : 2;    // 2 entries, constant 0, when not built
  localparam int unsigned TAB_BITS = LT ? 8 : 1;

  logic [255:0] w;
  logic active;
  logic [9:0] y, x;
  logic [15:0] ch, nch;
  logic [3:0] ky, kx;
  // pooling accumulators per lane: max at [32*l +: 32], sum at [64*l +: 64]
  logic [V*32-1:0] pmax, pmax_d;
  logic [V*64-1:0] psum, psum_d;

  tessel_isa_pkg::requant_insn_t rq;
  tessel_isa_pkg::add_insn_t ad;
  tessel_isa_pkg::pool_insn_t pl;
  tessel_isa_pkg::copy_insn_t cp;
  tessel_isa_pkg::lut_insn_t lu;
  tessel_isa_pkg::reduce_insn_t rd;
  tessel_isa_pkg::mul_insn_t mu;
  assign mu = w;
  assign lu = w;
  assign rd = w;
  assign rq = w;
  assign ad = w;
  assign pl = w;
  assign cp = w;
  logic [7:0] op;
  assign op = w[7:0];
  logic is_lut, is_red, is_mul;  // constant 0 when the unit is not built: synthesis drops it
  assign is_mul = BM && op == tessel_isa_pkg::OP_MUL;
  assign is_lut = LT && op == tessel_isa_pkg::OP_LUT;
  assign is_red = RR && op == tessel_isa_pkg::OP_REDUCE;

  // lut: the table registers, the table-load phase and its step.
  logic [15:0] tab[TAB_N];
  logic tload, b_tload;
  logic [15:0] tk, b_tk;
  // reduce: the pixel's running value (stage B) and its first / last chunk.
  logic signed [31:0] racc, racc_d;
  logic b_first_chunk, b_last_chunk;

  assign work_done = !active && !b_valid;

  function automatic logic [2:0] bytes_of(input logic [1:0] elem);
    bytes_of = elem == tessel_isa_pkg::ELEM_I8 ? 3'd1 : elem == tessel_isa_pkg::ELEM_I16 ? 3'd2
             : 3'd4;
  endfunction

  function automatic logic signed [31:0] elem_at(input logic [CW*8-1:0] data,
                                                 input int unsigned lane, input logic [2:0] e);
    if (e == 3'd1) elem_at = 32'($signed(data[8*lane+:8]));
    else if (e == 3'd2) elem_at = 32'($signed(data[16*lane+:16]));
    else elem_at = $signed(data[32*lane+:32]);
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

  logic [2:0] e, de;
  logic last_window;
  logic signed [31:0] iy, ix, in_h, in_w;
  logic in_win;
  // Stage B: the previous cycle's step (its operands are here now).
  logic b_valid, b_in_win, b_first_window, b_last_window;
  logic [31:0] b_lane0, b_wr_addr;
  logic [31:0] wr_addr_a;  // stage A's destination address, registered for stage B

  logic [31:0] a_base, a_sy, a_sx, a_y, a_x, b_base, b_sy, b_sx, d_base, d_sy, d_sx;
  logic [2:0] a_e;

  // v * e for an element size e of 1, 2 or 4 bytes.
  function automatic logic [31:0] times_bytes(input logic [31:0] v, input logic [2:0] eb);
    times_bytes = eb == 3'd1 ? v : eb == 3'd2 ? v << 1 : v << 2;
  endfunction

  logic [31:0] lane0;
  logic [15:0] csz;
  assign lane0 = 32'(ch) * V;
  always_comb
    case (op)
      tessel_isa_pkg::OP_REQUANT: csz = rq.c_size;
      tessel_isa_pkg::OP_ADD: csz = ad.c_size;
      tessel_isa_pkg::OP_POOL: csz = pl.c_size;
      tessel_isa_pkg::OP_LUT: csz = lu.c_size;
      tessel_isa_pkg::OP_REDUCE: csz = rd.c_size;
      tessel_isa_pkg::OP_MUL: csz = mu.c_size;
      default: csz = cp.c_size;
    endcase

  always_comb begin
    e = op == tessel_isa_pkg::OP_ADD ? bytes_of(ad.elem)
      : op == tessel_isa_pkg::OP_POOL ? bytes_of(pl.elem)
      : op == tessel_isa_pkg::OP_COPY ? bytes_of(cp.elem)
      : op == tessel_isa_pkg::OP_LUT ? 3'd1
      : op == tessel_isa_pkg::OP_REDUCE ? bytes_of(rd.elem)
      : is_mul ? bytes_of(mu.elem) : 3'd4;
    de = op == tessel_isa_pkg::OP_REQUANT ? bytes_of(rq.dst_elem)
       : op == tessel_isa_pkg::OP_LUT ? bytes_of(lu.dst_elem)
       : is_mul ? bytes_of(mu.dst_elem)
       : op == tessel_isa_pkg::OP_REDUCE ? 3'd4 : e;
    in_h = (32'(pl.out_h) - 1) * 32'(pl.stride_h) + 32'(pl.kh) - 32'(pl.pad_top)
         - 32'(pl.pad_bottom);
    in_w = (32'(pl.out_w) - 1) * 32'(pl.stride_w) + 32'(pl.kw) - 32'(pl.pad_left)
         - 32'(pl.pad_right);
    iy = 32'(y) * 32'(pl.stride_h) + 32'(ky) - 32'(pl.pad_top);
    ix = 32'(x) * 32'(pl.stride_w) + 32'(kx) - 32'(pl.pad_left);
    in_win = iy >= 0 && iy < in_h && ix >= 0 && ix < in_w;
    last_window = ky == pl.kh - 1 && kx == pl.kw - 1;
    // Operand addresses: the op picks base, strides and position first, then one address path
    // per port computes base + (y * stride_y + x * stride_x + lane0) * element bytes (each op
    // had its own multipliers before; same 32-bit values). Element bytes are 1, 2 or 4: shifts.
    rd_sp = '0;
    rd_addr = '0;
    a_base = '0;
    a_sy = '0;
    a_sx = '0;
    a_y = 32'(y);
    a_x = 32'(x);
    a_e = e;
    b_base = 32'(ad.b_addr);
    b_sy = 32'(ad.b_stride_y);
    b_sx = 32'(ad.b_stride_x);
    wr_sp = '0;
    d_base = '0;
    d_sy = '0;
    d_sx = '0;
    case (op)
      tessel_isa_pkg::OP_REQUANT: begin
        rd_sp = {rq.param_sp, rq.param_sp, rq.src_sp};
        {a_base, a_sy, a_sx, a_e} = {32'(rq.src_addr), 32'(rq.src_stride_y),
                                     32'(rq.src_stride_x), 3'd4};
        rd_addr[63:32] = 32'(rq.param_addr) + lane0 * 8;
        rd_addr[95:64] = 32'(rq.param_addr) + lane0 * 8 + 4 * V;
        wr_sp = rq.dst_sp;
        {d_base, d_sy, d_sx} = {32'(rq.dst_addr), 32'(rq.dst_stride_y), 32'(rq.dst_stride_x)};
      end
      tessel_isa_pkg::OP_ADD: begin
        rd_sp = {4'd0, ad.b_sp, ad.a_sp};
        {a_base, a_sy, a_sx} = {32'(ad.a_addr), 32'(ad.a_stride_y), 32'(ad.a_stride_x)};
        wr_sp = ad.dst_sp;
        {d_base, d_sy, d_sx} = {32'(ad.dst_addr), 32'(ad.dst_stride_y), 32'(ad.dst_stride_x)};
      end
      tessel_isa_pkg::OP_POOL: begin
        rd_sp = {4'd0, 4'd0, pl.src_sp};
        {a_base, a_sy, a_sx, a_y, a_x} = {32'(pl.src_addr), 32'(pl.src_stride_y),
                                          32'(pl.src_stride_x), 32'(iy), 32'(ix)};
        wr_sp = pl.dst_sp;
        {d_base, d_sy, d_sx} = {32'(pl.dst_addr), 32'(pl.dst_stride_y), 32'(pl.dst_stride_x)};
      end
      tessel_isa_pkg::OP_LUT: begin
        rd_sp = {4'd0, 4'd0, tload ? lu.table_sp : lu.src_sp};
        {a_base, a_sy, a_sx} = {32'(lu.src_addr), 32'(lu.src_stride_y), 32'(lu.src_stride_x)};
        wr_sp = lu.dst_sp;
        {d_base, d_sy, d_sx} = {32'(lu.dst_addr), 32'(lu.dst_stride_y), 32'(lu.dst_stride_x)};
      end
      tessel_isa_pkg::OP_MUL:
        if (BM) begin  // without the unit nothing is read or written (the harness refuses it)
          rd_sp = {4'd0, mu.b_sp, mu.a_sp};
          {a_base, a_sy, a_sx} = {32'(mu.a_addr), 32'(mu.a_stride_y), 32'(mu.a_stride_x)};
          {b_base, b_sy, b_sx} = {32'(mu.b_addr), 32'(mu.b_stride_y), 32'(mu.b_stride_x)};
          wr_sp = mu.dst_sp;
          {d_base, d_sy, d_sx} = {32'(mu.dst_addr), 32'(mu.dst_stride_y), 32'(mu.dst_stride_x)};
        end
      tessel_isa_pkg::OP_REDUCE: begin
        rd_sp = {4'd0, 4'd0, rd.src_sp};
        {a_base, a_sy, a_sx} = {32'(rd.src_addr), 32'(rd.src_stride_y), 32'(rd.src_stride_x)};
        wr_sp = rd.dst_sp;
        {d_base, d_sy, d_sx} = {32'(rd.dst_addr), 32'(rd.dst_stride_y), 32'(rd.dst_stride_x)};
      end
      default: begin  // copy
        rd_sp = {4'd0, 4'd0, cp.src_sp};
        {a_base, a_sy, a_sx} = {32'(cp.src_addr), 32'(cp.src_stride_y), 32'(cp.src_stride_x)};
        wr_sp = cp.dst_sp;
        {d_base, d_sy, d_sx} = {32'(cp.dst_addr), 32'(cp.dst_stride_y), 32'(cp.dst_stride_x)};
      end
    endcase
    rd_addr[31:0] = a_base + times_bytes(a_y * a_sy + a_x * a_sx + lane0, a_e);
    // mul's b per pixel: the pixel's one element with every chunk (no lane offset).
    if (op == tessel_isa_pkg::OP_ADD || is_mul)
      rd_addr[63:32] = b_base + times_bytes(32'(y) * b_sy + 32'(x) * b_sx
                                            + (is_mul && mu.b_per_pixel ? 32'd0 : lane0), e);
    // lut's table step k reads entries [k V, k V + V); reduce writes one int32 per pixel.
    if (tload) rd_addr[31:0] = 32'(lu.table_addr) + times_bytes(32'(tk) * V, de);
    wr_addr_a = d_base + times_bytes(32'(y) * d_sy + 32'(x) * d_sx
                                     + (op == tessel_isa_pkg::OP_REDUCE ? 32'd0 : lane0), de);
  end
  assign wr_addr = b_wr_addr;

  // The chunk's per-channel requant parameters: 8 bytes a lane (int32 M, then r), the first
  // 4 V bytes from port b, the rest from port c.
  logic [8*V*8-1:0] params;
  assign params = {rd_data[2*CW*8+:4*V*8], rd_data[CW*8+:4*V*8]};

  // The chunk's write bytes: V lanes of at most 4 bytes, within the CW-byte port.
  localparam int unsigned OUT_BYTES = 4 * V < CW ? 4 * V : CW;
  logic [V*32-1:0] lane_res;  // each lane's result (its low de bytes are written)
  logic [V-1:0] lane_wr;      // each lane's channel exists (lane0 + l < c_size)
  logic [V*32-1:0] lut_val;   // each lane's table entry (lut)

  always_comb begin
    wr_data = '0;
    wr_mask = '0;
    for (int unsigned l = 0; l < V; l++) begin
      logic signed [31:0] a, b, res, x1, m1, ab;
      logic signed [63:0] prod;
      logic signed [31:0] arith;
      logic [5:0] rs;
      logic lane_on;
      lane_on = b_lane0 + l < 32'(csz);
      a = elem_at(rd_data[CW*8-1:0], l, op == tessel_isa_pkg::OP_REQUANT ? 3'd4 : e);
      lut_val[32*l+:32] = 32'($signed(tab[TAB_BITS'(a[7:0] + 8'd128)]));
      b = elem_at(rd_data[2*CW*8-1:CW*8], is_mul && mu.b_per_pixel ? 0 : l, e);
      // mul's a * b: int16 operands at most, |a * b| <= 2^30 fits 32 bits (a 16 x 16 multiply).
      ab = $signed(a[15:0]) * $signed(b[15:0]);
      pmax_d[32*l+:32] = pmax[32*l+:32];
      psum_d[64*l+:64] = psum[64*l+:64];
      if (op == tessel_isa_pkg::OP_POOL) begin
        if (b_first_window) begin
          pmax_d[32*l+:32] = 32'sh80000000;
          psum_d[64*l+:64] = 0;
        end
        if (b_in_win) begin
          if (a > $signed(pmax_d[32*l+:32])) pmax_d[32*l+:32] = a;
          psum_d[64*l+:64] = psum_d[64*l+:64] + 64'(a);
        end
      end
      // One multiply-shift-clamp path per lane, shared by the three ops that scale:
      //   requant  clamp(rha(a * M, r) + zp)                      (M, r per channel or vcfg)
      //   add      clamp(rha(a * mult_a +/- b * mult_b, shift) + zp)  (- with subtract)
      //   avg pool clamp(rha(sum * mult_a, shift) + zp)           (sum: low 32 bits, signed)
      //   mul      clamp(rha((a * b) * mult_a, shift) + zp)       (a * b: 32 bits, exact)
      // (each op used its own multipliers and rounding shifter before; same values.)
      x1 = op == tessel_isa_pkg::OP_POOL ? $signed(psum_d[64*l+:32]) : is_mul ? ab : a;
      m1 = 32'(mult_a);  // 31 bits: non-negative
      rs = shift;
      if (op == tessel_isa_pkg::OP_REQUANT && rq.per_channel) begin
        m1 = $signed(params[64*l+:32]);
        rs = params[64*l+32+:6];
      end
      // 32 x 32 -> 64-bit signed products, written with 32-bit operands so that synthesis
      // builds 32-bit multipliers (64'(x) * 64'(y) gave Yosys 64 x 64 ones: same value).
      prod = x1 * m1;
      // add's subtract flag (ONNX Sub) takes b's product away instead.
      if (op == tessel_isa_pkg::OP_ADD)
        prod = ad.subtract ? prod - b * $signed({1'b0, mult_b}) : prod + b * $signed({1'b0, mult_b});
      arith = clamp(rha(prod, rs) + 64'(zp), lo, hi);
      case (op)
        tessel_isa_pkg::OP_REQUANT, tessel_isa_pkg::OP_ADD, tessel_isa_pkg::OP_MUL: res = arith;
        tessel_isa_pkg::OP_POOL:
          res = pl.mode == tessel_isa_pkg::POOL_MODE_MAX ? $signed(pmax_d[32*l+:32]) : arith;
        tessel_isa_pkg::OP_LUT: res = $signed(lut_val[32*l+:32]);
        default: res = a;
      endcase
      lane_res[32*l+:32] = res;
      lane_wr[l] = lane_on;
    end
    // reduce: the chunk's lanes folded into the pixel's running value (lane 0 is always on).
    racc_d = b_first_chunk ? (rd.mode == tessel_isa_pkg::REDUCE_MODE_MAX ? 32'sh80000000 : 32'sd0)
                           : racc;
    if (is_red)
      for (int unsigned l = 0; l < V; l++) begin
        logic signed [31:0] v;
        logic signed [17:0] sq;
        v = elem_at(rd_data[CW*8-1:0], l, e);
        sq = 18'($signed(v[8:0])) * 18'($signed(v[8:0]));  // sumsq, of int8 only: v^2 <= 2^14
        if (b_lane0 + l < 32'(csz))
          case (rd.mode)
            tessel_isa_pkg::REDUCE_MODE_MAX: if (v > racc_d) racc_d = v;
            tessel_isa_pkg::REDUCE_MODE_SUM: racc_d = racc_d + v;
            default: racc_d = racc_d + 32'(sq);
          endcase
      end
    if (op == tessel_isa_pkg::OP_REDUCE) begin
      lane_res[31:0] = racc_d;
      lane_wr = V'(1);
    end
    // Lane l's de bytes land at bytes [l * de, (l + 1) * de) of the chunk: byte o is byte
    // o mod de of lane o / de, chosen per byte by de (1, 2 or 4). (Writing each lane at the
    // run-time offset l * de instead made synthesis build a shifter across the whole write
    // word per lane and byte, quadratic in the lanes: docs/fpga.md, session 5.)
    for (int unsigned o = 0; o < OUT_BYTES; o++)
      if (de == 3'd1 && o < V) begin
        wr_data[8*o+:8] = lane_res[32*o+:8];
        wr_mask[o] = lane_wr[o];
      end else if (de == 3'd2 && o < 2 * V) begin
        wr_data[8*o+:8] = lane_res[32*(o/2)+8*(o%2)+:8];
        wr_mask[o] = lane_wr[o/2];
      end else if (de == 3'd4) begin
        wr_data[8*o+:8] = lane_res[32*(o/4)+8*(o%4)+:8];
        wr_mask[o] = lane_wr[o/4];
      end
    wr_en = b_valid && (op != tessel_isa_pkg::OP_POOL || b_last_window) && !b_tload
         && (op != tessel_isa_pkg::OP_LUT || LT) && (op != tessel_isa_pkg::OP_MUL || BM)
         && (op != tessel_isa_pkg::OP_REDUCE || (RR && b_last_chunk));
  end

  // Stage B's registers: this cycle's step for the datapath in the next cycle; the pool's
  // running max and sum are stage B's.
  always_ff @(posedge clk) begin
    b_valid <= !rst && !start && active;
    b_in_win <= in_win;
    b_first_window <= ky == 0 && kx == 0;
    b_last_window <= last_window;
    b_lane0 <= lane0;
    b_wr_addr <= wr_addr_a;
    b_tload <= tload;
    b_tk <= tk;
    b_first_chunk <= ch == 0;
    b_last_chunk <= ch == nch - 1;
    if (b_valid) begin
      pmax <= pmax_d;
      psum <= psum_d;
      if (is_red) racc <= racc_d;
    end
  end

  // lut's table registers: a table step's V entries, written in stage B (an i8 entry
  // sign-extended). Entries of a step past 255 (V not dividing 256) are not written.
  if (LT) begin : g_table
    always_ff @(posedge clk)
      if (b_valid && b_tload)
        for (int unsigned l = 0; l < V; l++)
          if (32'(b_tk) * V + l < 256)
            tab[TAB_BITS'(32'(b_tk) * V + l)] <= de == 3'd1 ? 16'($signed(rd_data[8*l+:8]))
                                                    : rd_data[16*l+:16];
  end else begin : g_no_table
    always_comb for (int unsigned i = 0; i < TAB_N; i++) tab[i] = '0;
  end

  always_ff @(posedge clk) begin
    if (rst) active <= 1'b0;
    else if (start) begin
      logic [15:0] c;
      w <= insn;
      active <= 1'b1;
      {y, x, ch, ky, kx} <= '0;
      tload <= LT && insn[7:0] == tessel_isa_pkg::OP_LUT;
      tk <= '0;
      case (insn[7:0])
        tessel_isa_pkg::OP_REQUANT:
          c = insn[tessel_isa_pkg::REQUANT_C_SIZE_LSB+:tessel_isa_pkg::REQUANT_C_SIZE_W];
        tessel_isa_pkg::OP_ADD: c = insn[tessel_isa_pkg::ADD_C_SIZE_LSB+:tessel_isa_pkg::ADD_C_SIZE_W];
        tessel_isa_pkg::OP_POOL:
          c = insn[tessel_isa_pkg::POOL_C_SIZE_LSB+:tessel_isa_pkg::POOL_C_SIZE_W];
        tessel_isa_pkg::OP_LUT: c = insn[tessel_isa_pkg::LUT_C_SIZE_LSB+:tessel_isa_pkg::LUT_C_SIZE_W];
        tessel_isa_pkg::OP_REDUCE:
          c = insn[tessel_isa_pkg::REDUCE_C_SIZE_LSB+:tessel_isa_pkg::REDUCE_C_SIZE_W];
        tessel_isa_pkg::OP_MUL: c = insn[tessel_isa_pkg::MUL_C_SIZE_LSB+:tessel_isa_pkg::MUL_C_SIZE_W];
        default: c = insn[tessel_isa_pkg::COPY_C_SIZE_LSB+:tessel_isa_pkg::COPY_C_SIZE_W];
      endcase
      nch <= 16'((32'(c) + V - 1) / V);
    end else if (active && tload) begin
      if (tk == 16'(NT - 1)) tload <= 1'b0;
      else tk <= tk + 1'b1;
    end else if (active) begin
      logic [9:0] ys, xs;
      logic next_pixel;
      ys = op == tessel_isa_pkg::OP_REQUANT ? rq.y_size : op == tessel_isa_pkg::OP_ADD ? ad.y_size
         : op == tessel_isa_pkg::OP_POOL ? pl.out_h : op == tessel_isa_pkg::OP_LUT ? lu.y_size
         : op == tessel_isa_pkg::OP_REDUCE ? rd.y_size : op == tessel_isa_pkg::OP_MUL ? mu.y_size
         : cp.y_size;
      xs = op == tessel_isa_pkg::OP_REQUANT ? rq.x_size : op == tessel_isa_pkg::OP_ADD ? ad.x_size
         : op == tessel_isa_pkg::OP_POOL ? pl.out_w : op == tessel_isa_pkg::OP_LUT ? lu.x_size
         : op == tessel_isa_pkg::OP_REDUCE ? rd.x_size : op == tessel_isa_pkg::OP_MUL ? mu.x_size
         : cp.x_size;
      next_pixel = 1'b0;
      if (op == tessel_isa_pkg::OP_POOL && !last_window) begin
        if (kx != pl.kw - 1) kx <= kx + 1'b1;
        else begin
          kx <= '0;
          ky <= ky + 1'b1;
        end
      end else begin
        ky <= '0;
        kx <= '0;
        if (ch != nch - 1) ch <= ch + 1'b1;
        else begin
          ch <= '0;
          next_pixel = 1'b1;
        end
      end
      if (next_pixel) begin
        if (x != xs - 1) x <= x + 1'b1;
        else begin
          x <= '0;
          if (y != ys - 1) y <= y + 1'b1;
          else active <= 1'b0;
        end
      end
    end
  end
endmodule
/* verilator lint_on UNUSEDSIGNAL */
