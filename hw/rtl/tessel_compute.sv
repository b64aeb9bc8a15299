// The COMPUTE engine: runs conv and matmul (matrix unit), vcfg/requant/add/pool/copy/lut/reduce/mul (vector
// unit), softmax and norm (the vector unit's row normaliser, tessel_rownorm), nop and finish,
// one at a time, each for exactly its docs/timing.md cost.
//
// At the start cycle s the cost is computed from the instruction word; the engine finishes at
// s + cost (and not before its sequencer is done; with every shipped config the sequencers
// finish F + D or P_v cycles early, so the cost alone decides).
/* verilator lint_off UNUSEDSIGNAL */
module tessel_compute #(
    parameter int unsigned CW = 64
) (
    input  logic           clk,
    input  logic           rst,
    input  logic           start,
    input  logic [255:0]   insn,
    output logic           busy,
    output logic           finish_now,
    output logic           finishing_finish,  // the instruction finishing now is `finish`
    output logic           late,              // cost elapsed but the sequencer is not done
    output logic [3*4-1:0] rd_sp,   // read ports a, b, c (tessel_matrix, tessel_vector)
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
  localparam bit AO = tessel_cfg_pkg::MATRIX_ACTIVATION_OPERANDS != 0;
  localparam int unsigned V = tessel_cfg_pkg::VECTOR_LANES;
  localparam int unsigned FD = tessel_cfg_pkg::FILL_CYCLES + tessel_cfg_pkg::DRAIN_CYCLES;
  localparam int unsigned PV = tessel_cfg_pkg::VECTOR_PIPE_CYCLES;
  localparam bit RN = tessel_cfg_pkg::VECTOR_ROW_NORMALISE != 0;

  logic running, is_finish, is_conv, is_rn;
  logic [47:0] rem;
  logic [7:0] op;
  assign op = insn[7:0];

  // vcfg registers (power-on 0)
  logic [30:0] mult_a, mult_b;
  logic [5:0] shift;
  logic signed [15:0] zp, lo, hi;

  // ---- cost of the instruction starting now
  function automatic logic [47:0] chunks(input logic [15:0] c);
    logic [31:0] n;
    n = (32'(c) + 32'(V) - 32'd1) / 32'(V);
    chunks = 48'(n);
  endfunction

  logic [47:0] cost;
  tessel_isa_pkg::conv_insn_t cv;
  tessel_isa_pkg::requant_insn_t rq;
  tessel_isa_pkg::add_insn_t ad;
  tessel_isa_pkg::pool_insn_t pl;
  tessel_isa_pkg::copy_insn_t cp;
  tessel_isa_pkg::vcfg_insn_t vc;
  tessel_isa_pkg::lut_insn_t lu;
  tessel_isa_pkg::reduce_insn_t rd;
  tessel_isa_pkg::mul_insn_t mu;
  tessel_isa_pkg::matmul_insn_t mm;
  tessel_isa_pkg::softmax_insn_t sm;
  tessel_isa_pkg::norm_insn_t nm;
  assign mm = insn;
  assign sm = insn;
  assign nm = insn;
  assign mu = insn;
  assign lu = insn;
  assign rd = insn;
  assign cv = insn;
  assign rq = insn;
  assign ad = insn;
  assign pl = insn;
  assign cp = insn;
  assign vc = insn;
  always_comb begin
    logic [47:0] p, w, passes, mw, mpasses;
    logic [31:0] kblk, nblk;
    p = 48'(cv.out_h) * 48'(cv.out_w);
    w = cv.depthwise ? 48'd1 : 48'(R);
    passes = cv.depthwise ? 48'(cv.oc_blocks) * 48'(cv.kh) * 48'(cv.kw)
                          : 48'(cv.oc_blocks) * 48'(cv.ic_blocks) * 48'(cv.kh) * 48'(cv.kw);
    // matmul: b's block loads a row (R) or, transposed, a column (C) a cycle
    mw = mm.transpose_b ? 48'(C) : 48'(R);
    nblk = (32'(mm.n_size) + 32'(C) - 32'd1) / 32'(C);
    kblk = (32'(mm.k_size) + 32'(R) - 32'd1) / 32'(R);
    mpasses = 48'(nblk) * 48'(kblk);
    case (op)
      tessel_isa_pkg::OP_CONV: cost = w + passes * (p > w ? p : w) + 48'(FD);
      tessel_isa_pkg::OP_MATMUL:
        cost = mw + mpasses * (48'(mm.m_size) > mw ? 48'(mm.m_size) : mw) + 48'(FD);
      tessel_isa_pkg::OP_REQUANT:
        cost = 48'(rq.y_size) * 48'(rq.x_size) * chunks(rq.c_size) + 48'(PV);
      tessel_isa_pkg::OP_ADD: cost = 48'(ad.y_size) * 48'(ad.x_size) * chunks(ad.c_size) + 48'(PV);
      tessel_isa_pkg::OP_COPY: cost = 48'(cp.y_size) * 48'(cp.x_size) * chunks(cp.c_size) + 48'(PV);
      tessel_isa_pkg::OP_LUT:  // the 256-entry table enters V entries a cycle first
        cost = chunks(16'd256) + 48'(lu.y_size) * 48'(lu.x_size) * chunks(lu.c_size) + 48'(PV);
      tessel_isa_pkg::OP_REDUCE:
        cost = 48'(rd.y_size) * 48'(rd.x_size) * chunks(rd.c_size) + 48'(PV);
      tessel_isa_pkg::OP_MUL: cost = 48'(mu.y_size) * 48'(mu.x_size) * chunks(mu.c_size) + 48'(PV);
      tessel_isa_pkg::OP_POOL:
        cost = 48'(pl.out_h) * 48'(pl.out_w) * 48'(pl.kh) * 48'(pl.kw) * chunks(pl.c_size)
             + 48'(PV);
      // the row normaliser (built with RN only; the harness refuses both opcodes without it):
      // softmax's 512 table entries, then per row its max, sum, 31 divider steps and output
      // pass; norm's statistics pass, 56 scale steps and output pass
      tessel_isa_pkg::OP_SOFTMAX:
        cost = RN ? chunks(16'd512) + 48'(sm.y_size) * 48'(sm.x_size)
                    * (48'd3 * chunks(sm.c_size) + 48'd31) + 48'(PV) : 48'd1;
      tessel_isa_pkg::OP_NORM:
        cost = RN ? 48'(nm.y_size) * 48'(nm.x_size) * (48'd2 * chunks(nm.c_size) + 48'd56)
                    + 48'(PV) : 48'd1;
      default: cost = 48'd1;  // nop, vcfg, finish
    endcase
  end

  logic start_conv, start_vec, start_rn, conv_done, vec_done, rn_done, seq_done;
  assign start_conv = start && (op == tessel_isa_pkg::OP_CONV
                             || (AO && op == tessel_isa_pkg::OP_MATMUL));
  assign start_vec = start && (op == tessel_isa_pkg::OP_REQUANT || op == tessel_isa_pkg::OP_ADD
                            || op == tessel_isa_pkg::OP_POOL || op == tessel_isa_pkg::OP_COPY
                            || op == tessel_isa_pkg::OP_LUT || op == tessel_isa_pkg::OP_REDUCE
                            || op == tessel_isa_pkg::OP_MUL);
  assign start_rn = start && RN && (op == tessel_isa_pkg::OP_SOFTMAX
                                 || op == tessel_isa_pkg::OP_NORM);
  assign seq_done = conv_done && vec_done && rn_done;

  logic [3*4-1:0] m_rd_sp, v_rd_sp, n_rd_sp;
  logic [3*32-1:0] m_rd_addr, v_rd_addr, n_rd_addr;
  logic m_wr_en, v_wr_en, n_wr_en;
  logic [3:0] m_wr_sp, v_wr_sp, n_wr_sp;
  logic [31:0] m_wr_addr, v_wr_addr, n_wr_addr;
  logic [CW*8-1:0] m_wr_data, v_wr_data, n_wr_data;
  logic [CW-1:0] m_wr_mask, v_wr_mask, n_wr_mask;

  tessel_matrix #(.CW(CW)) u_matrix (
      .clk, .rst, .start(start_conv), .insn, .work_done(conv_done),
      .rd_sp(m_rd_sp), .rd_addr(m_rd_addr), .rd_data,
      .wr_en(m_wr_en), .wr_sp(m_wr_sp), .wr_addr(m_wr_addr), .wr_data(m_wr_data),
      .wr_mask(m_wr_mask));

  tessel_vector #(.CW(CW)) u_vector (
      .clk, .rst, .start(start_vec), .insn, .mult_a, .mult_b, .shift, .zp, .lo, .hi,
      .work_done(vec_done),
      .rd_sp(v_rd_sp), .rd_addr(v_rd_addr), .rd_data,
      .wr_en(v_wr_en), .wr_sp(v_wr_sp), .wr_addr(v_wr_addr), .wr_data(v_wr_data),
      .wr_mask(v_wr_mask));

  if (RN) begin : g_rownorm
    tessel_rownorm #(.CW(CW)) u_rownorm (
        .clk, .rst, .start(start_rn), .insn, .mult_a, .shift, .zp, .lo, .hi,
        .work_done(rn_done),
        .rd_sp(n_rd_sp), .rd_addr(n_rd_addr), .rd_data,
        .wr_en(n_wr_en), .wr_sp(n_wr_sp), .wr_addr(n_wr_addr), .wr_data(n_wr_data),
        .wr_mask(n_wr_mask));
  end else begin : g_no_rownorm  // not built: nothing to read, write or wait for
    assign rn_done = 1'b1;
    assign {n_rd_sp, n_rd_addr, n_wr_en, n_wr_sp, n_wr_addr, n_wr_data, n_wr_mask} = '0;
  end

  always_comb begin
    if (RN && is_rn) begin
      rd_sp = n_rd_sp;
      rd_addr = n_rd_addr;
      wr_en = n_wr_en;
      wr_sp = n_wr_sp;
      wr_addr = n_wr_addr;
      wr_data = n_wr_data;
      wr_mask = n_wr_mask;
    end else if (is_conv) begin
      rd_sp = m_rd_sp;
      rd_addr = m_rd_addr;
      wr_en = m_wr_en;
      wr_sp = m_wr_sp;
      wr_addr = m_wr_addr;
      wr_data = m_wr_data;
      wr_mask = m_wr_mask;
    end else begin
      rd_sp = v_rd_sp;
      rd_addr = v_rd_addr;
      wr_en = v_wr_en;
      wr_sp = v_wr_sp;
      wr_addr = v_wr_addr;
      wr_data = v_wr_data;
      wr_mask = v_wr_mask;
    end
  end

  assign busy = running;
  assign finish_now = running && rem == 0 && seq_done;
  assign late = running && rem == 0 && !seq_done;
  assign finishing_finish = finish_now && is_finish;

  always_ff @(posedge clk) begin
    if (rst) begin
      running <= 1'b0;
      is_conv <= 1'b0;
      is_rn <= 1'b0;
      {mult_a, mult_b, shift, zp, lo, hi} <= '0;
    end else if (start) begin
      running <= 1'b1;
      rem <= cost - 1;
      is_finish <= op == tessel_isa_pkg::OP_FINISH;
      is_conv <= op == tessel_isa_pkg::OP_CONV || (AO && op == tessel_isa_pkg::OP_MATMUL);
      is_rn <= op == tessel_isa_pkg::OP_SOFTMAX || op == tessel_isa_pkg::OP_NORM;
      if (op == tessel_isa_pkg::OP_VCFG) begin
        mult_a <= vc.mult_a;
        mult_b <= vc.mult_b;
        shift <= vc.shift;
        zp <= $signed(vc.zp);
        lo <= $signed(vc.lo);
        hi <= $signed(vc.hi);
      end
    end else if (running) begin
      if (rem != 0) rem <= rem - 1;
      else if (seq_done) running <= 1'b0;
    end
  end
endmodule
/* verilator lint_on UNUSEDSIGNAL */
