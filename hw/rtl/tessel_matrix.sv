// The matrix unit: an R x C int8/int16 weight-stationary MAC array with int32 accumulators in
// SRAM, sequencing one conv instruction (docs/isa.md "conv", docs/timing.md "conv") or, with
// MATRIX_ACTIVATION_OPERANDS, one matmul (docs/isa.md "matmul"), and tessel_mac_pair, its
// two-int8-products-per-DSP48E1 multiply.
//
// matmul runs conv's schedule with b in place of the weights (passes: column block, then
// reduction block; a pass streams the m_size rows of a, one R-element chunk a cycle): a block
// of b loads one array row a cycle (row-major, C elements of one k from port c) or one array
// column a cycle (transpose_b: R elements of one stored row n), rows k >= k_size and columns
// n >= n_size of a last block loaded as zeros; the accumulator write masks the columns past
// n_size. Its fields sit at conv's bits up to bit 127 (sps, elem, init, addresses), so only
// the sizes, strides, bias_sp and transpose_b (conv's depthwise bit) are read apart.
//
// Schedule (cycles after the start cycle s): W cycles load weight block 0 into the shadow
// buffer, one array row (C weights) per cycle; then for each pass (a weight block: dense
// (ocb, icb, ky, kx), depthwise (cb, ky, kx), in that loop order, which is also the packed
// weight order) max(P, W) cycles: output pixel j < P streams one input vector through the array
// (C dot products of R terms, added to the accumulators read and written back) while the rows
// of the next block load into the shadow buffer; the buffers swap at the pass end. The compute
// engine adds the F + D fill/drain cycles of the timing contract as a tail, which covers the
// array's latency: only the tile's F + D is timed.
//
// Stages, because the scratchpads' reads are synchronous (tessel_sram): in cycle t the
// sequencer (stage A) presents the addresses of its step; in cycle t + 1 (stage B) their data
// are here. An adder-tree array then does the whole step (the MAC and the accumulator write, a
// weight row into the shadow buffer, the swap), with the step's control registered. A systolic
// array (SYSTOLIC, below) takes the step in at stage B and adds its sums to the accumulators
// LAT cycles later (the output stage), whose read address it presents a cycle before. An
// accumulator read that the previous step's write (at the same edge) makes stale takes that
// write's data instead (passes of one cycle: P = W = 1).
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

  localparam bit AO = tessel_cfg_pkg::MATRIX_ACTIVATION_OPERANDS != 0;

  tessel_isa_pkg::conv_insn_t f, g;
  tessel_isa_pkg::matmul_insn_t fm, gm;
  assign g = insn;
  assign gm = insn;
  logic mm, tr, dw;  // a matmul; its b read transposed; a depthwise conv
  assign dw = !mm && f.depthwise;
  logic [1:0] phase;  // 0: load block 0, 1: passes, 2: done
  logic [31:0] j, k, passes, npix, pass_len, wrows;
  logic [3:0] r_kh, r_kw;  // kernel height and width (matmul: 1)
  logic [15:0] r_icbs;     // reduction blocks (conv: input-channel blocks, matmul: k blocks)
  logic [15:0] lkb, lnb;            // matmul: the block of b loading now (k block, n block)
  logic [9:0] oy, ox;
  logic [15:0] icb, ocb;
  logic [3:0] ky, kx;
  logic [31:0] wptr;
  // weights: entry (r, c) at [16*(r*C+c) +: 16], sign-extended to 16 bits
  logic [R*C*16-1:0] wcur, wnext, wnext_d;

  // ---- the array's form (docs/fpga.md "The MAC array"). Depthwise weights sit on the
  // diagonal of the weight buffer when R >= C (DIAG, below); int8 x int8 with column pairs
  // takes two products per 25 x 8 multiply (PACK). With PACK, the array is systolic when the
  // contract's F + D cover its latency: a pixel's inputs enter row r r cycles after row 0 and
  // move one column pair a cycle, partial sums move one row a cycle, so its sums leave the last
  // row LAT = R + C/2 - 1 cycles after they would leave an adder tree; the engine is then
  // done LAT + 2 cycles after the sequencer's last step, within F + D. Otherwise each column
  // sums its R products in one cycle (an adder tree), as npc19-deepfusion's and vta-pynq's
  // F + D (a multiply and a log2(R)-level tree) describe.
  localparam int unsigned FD = tessel_cfg_pkg::FILL_CYCLES + tessel_cfg_pkg::DRAIN_CYCLES;
  localparam bit DIAG = R >= C;
  localparam bit PACK = DIAG && IB == 1 && WB == 1 && C % 2 == 0;
  localparam bit SYSTOLIC = PACK && R + C / 2 + 1 <= FD;
  localparam int unsigned LAT = SYSTOLIC ? R + C / 2 - 1 : 0;

  // ---- stage A: the sequencer's step and its addresses
  logic signed [31:0] iy, ix, in_h, in_w;
  logic in_win, first, use_bias, mac, load_row, swap, newpass;
  logic [31:0] in_byte, acc_byte, w_byte;
  localparam int unsigned WL = $clog2(C + 1);
  logic [31:0] klim, nlim, wrest;  // valid rows / columns of the block loading; n left
  logic [WL-1:0] wcols;           // accumulator columns written (matmul: up to n_size)
  localparam int unsigned NV = R > C ? R : C;
  logic [3:0] pb_sp;     // port b's request of this step: the accumulators, or the bias on a
  logic [31:0] pb_addr;  // first pass with init=bias
  // ---- stage B: the previous cycle's step, whose read data are here now
  logic b_on, b_in_win, b_first, b_mac, b_load_row, b_swap, b_newpass;
  logic [31:0] b_j, b_acc, b_klim, b_nlim;
  logic [WL-1:0] b_wcols;
  // ---- the output stage: the step whose column sums are ready now, LAT cycles after stage B
  // (the same cycle without a systolic array), and port b's request made LAT cycles after
  // stage A, whose data it reads now
  logic o_on, o_first, o_mac, o_fwd, q_use_bias;
  logic [31:0] o_acc, q_addr;
  logic [WL-1:0] o_wcols;
  logic [3:0] q_sp;
  logic [C*32-1:0] o_fwd_data;  // the accumulators written at the edge o_fwd says
  logic drained;                // no step in the array's pipeline

  assign work_done = phase == 2'd2 && !b_on && drained;

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
    newpass = phase == 2'd1 && j == 0;  // the first step of a pass: its weights in the array
    in_byte = 32'(f.in_addr) + (32'(iy) * 32'(f.in_stride_y) + 32'(ix) * 32'(f.in_stride_x)
            + (dw ? 32'(ocb) * C : 32'(icb) * R)) * IB;
    acc_byte = 32'(f.acc_addr) + (32'(oy) * 32'(f.acc_stride_y) + 32'(ox) * 32'(f.acc_stride_x)
             + 32'(ocb) * C) * 4;
    pb_sp = use_bias ? f.w_sp : f.acc_sp;
    w_byte = wptr;
    klim = R;
    nlim = C;
    wrest = C;
    if (AO && mm) begin  // row j of a and of the accumulators; b's row or column j of its block
      in_win = 1'b1;
      in_byte = 32'(fm.a_addr) + (j * 32'(fm.a_stride) + 32'(icb) * R) * IB;
      acc_byte = 32'(fm.acc_addr) + (j * 32'(fm.acc_stride) + 32'(ocb) * C) * 4;
      pb_sp = use_bias ? fm.bias_sp : fm.acc_sp;
      w_byte = 32'(fm.b_addr) + (tr ? (32'(lnb) * C + j) * 32'(fm.b_stride) + 32'(lkb) * R
                                    : (32'(lkb) * R + j) * 32'(fm.b_stride) + 32'(lnb) * C) * IB;
      klim = 32'(fm.k_size) - 32'(lkb) * R;
      nlim = 32'(fm.n_size) - 32'(lnb) * C;
      wrest = 32'(fm.n_size) - 32'(ocb) * C;
    end
    wcols = wrest >= C ? WL'(C) : WL'(wrest);
    pb_addr = use_bias ? 32'(f.bias_addr) + 32'(ocb) * C * 4 : acc_byte;
  end
  // (Outside the block above: without a systolic array q_* are pb_*, and one block reading
  // what it writes through them would be a combinational loop to Verilator.)
  assign rd_sp = {f.w_sp, q_sp, f.in_sp};
  assign rd_addr = {w_byte, q_addr, in_byte};

  // ---- products. Depthwise weights sit on the diagonal of the weight buffer (entry (c, c)
  // holds channel c's weight, the rest 0) when R >= C, so that a depthwise pass is the same
  // dot product as a dense one: sum_r in[r] * w[r][c] = in[c] * w[c]. Every product is formed
  // at its exact width (IB*8 x WB*8 bits, e.g. 8 x 8 -> 16) and the R products of a column are
  // summed in DOT_W bits, then added to the int32 accumulator: the same value modulo 2^32 as
  // the int32 products and sums of docs/isa.md, since no partial sum overflows DOT_W bits.
  // (DIAG above.) PACK: two int8 products per 25 x 8 multiply (tessel_mac_pair, at the end of
  // this file), so R * C / 2 DSP48E1 instead of R * C (docs/fpga.md, "Two int8 products per
  // DSP48E1").
  localparam int unsigned PW = 8 * (IB + WB);  // product bits
  localparam int unsigned DOT_W = PW + $clog2(R) + 1 < 32 ? PW + $clog2(R) + 1 : 32;
  logic [NV*16-1:0] in_vec;  // entry i at [16*i +: 16], sign-extended; 0 outside the window
  logic [R*C*PW-1:0] prod;   // in[r] * w[r][c] at [PW*(r*C+c) +: PW]

  // matmul's operand shift and conv's input shift: round half away from zero of x / 2^u
  // (docs/quantization.md), a magnitude add and shift per operand lane; u = 0 keeps x.
  // (No `return`: Yosys 0.23 reads functions that assign their name.)
  function automatic logic [15:0] rha_of(input logic on, input logic [15:0] x,
                                         input logic [3:0] u);
    logic [16:0] mag, neg;
    mag = x[15] ? 17'd0 - {x[15], x} : {1'b0, x};
    mag = (mag + (17'd1 << (u - 4'd1))) >> u;
    neg = 17'd0 - mag;
    if (!on || u == 4'd0) rha_of = x;
    else if (x[15]) rha_of = neg[15:0];
    else rha_of = mag[15:0];
  endfunction
  function automatic logic [15:0] rha(input logic [15:0] x, input logic [3:0] u);
    rha = rha_of(AO && mm, x, u);
  endfunction
  // The streamed input: matmul's a by its operand shift, a conv's input by its in_shift (the
  // quantizer's input shift, docs/quantization.md; bits 12-15, zero in a matmul word).
  function automatic logic [15:0] in_rha(input logic [15:0] x);
    in_rha = AO && mm ? rha_of(1'b1, x, fm.operand_shift) : rha_of(1'b1, x, f.in_shift);
  endfunction

  always_comb
    for (int unsigned i = 0; i < NV; i++) begin
      if (!b_in_win) in_vec[16*i+:16] = 0;
      else if (IB == 1) in_vec[16*i+:16] = in_rha(16'($signed(rd_data[8*i+:8])));
      else in_vec[16*i+:16] = in_rha(rd_data[16*i+:16]);
    end

  for (genvar r = 0; r < R; r++) begin : g_row
    if (SYSTOLIC) begin : g_none  // the processing elements below form their own products
      assign prod[PW*r*C+:PW*C] = '0;
    end else if (PACK) begin : g_pack
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
        if (b_load_row && dw && DIAG) begin  // one row: channel c to entry (c, c)
          if (r != c) wnext_d[16*(r*C+c)+:16] = '0;
          else if (WB == 1) wnext_d[16*(r*C+c)+:16] = 16'($signed(rd_data[2*CW*8+8*c+:8]));
          else wnext_d[16*(r*C+c)+:16] = rd_data[2*CW*8+16*c+:16];
        end else if (AO && b_load_row && tr && 32'(c) == b_j) begin  // matmul: b's column c
          if (32'(r) >= b_klim || 32'(c) >= b_nlim) wnext_d[16*(r*C+c)+:16] = '0;
          else if (IB == 1)
            wnext_d[16*(r*C+c)+:16] = rha(16'($signed(rd_data[2*CW*8+8*r+:8])), fm.operand_shift);
          else wnext_d[16*(r*C+c)+:16] = rha(rd_data[2*CW*8+16*r+:16], fm.operand_shift);
        end else if (b_load_row && !tr && 32'(r) == b_j) begin
          if (AO && mm && (32'(r) >= b_klim || 32'(c) >= b_nlim)) wnext_d[16*(r*C+c)+:16] = '0;
          else if (AO && mm && IB == 1)
            wnext_d[16*(r*C+c)+:16] = rha(16'($signed(rd_data[2*CW*8+8*c+:8])), fm.operand_shift);
          else if (AO && mm) wnext_d[16*(r*C+c)+:16] = rha(rd_data[2*CW*8+16*c+:16], fm.operand_shift);
          else if (WB == 1) wnext_d[16*(r*C+c)+:16] = 16'($signed(rd_data[2*CW*8+8*c+:8]));
          else wnext_d[16*(r*C+c)+:16] = rd_data[2*CW*8+16*c+:16];
        end
      end
    wr_en = o_mac;
    wr_sp = f.acc_sp;
    wr_addr = o_acc;
    wr_data = '0;
    wr_mask = '0;
    for (int unsigned c = 0; c < C; c++) begin
      logic [31:0] sum;
      logic signed [DOT_W-1:0] dot;
      if (!o_first || f.init == tessel_isa_pkg::INIT_ACC)
        sum = o_fwd ? o_fwd_data[32*c+:32] : rd_data[CW*8+32*c+:32];
      else if (f.init == tessel_isa_pkg::INIT_BIAS) sum = rd_data[CW*8+32*c+:32];
      else sum = 0;
      // int32 products and sums wrap around (docs/isa.md); here none wraps before the last add
      dot = '0;
      if (SYSTOLIC) dot = $signed(sys_dot[DOT_W*c+:DOT_W]);
      else if (dw && !DIAG)
        dot = DOT_W'($signed(in_vec[16*c+:IB*8]) * $signed(wcur[16*c+:WB*8]));
      else
        for (int unsigned r = 0; r < R; r++) dot = dot + DOT_W'($signed(prod[PW*(r*C+c)+:PW]));
      wr_data[32*c+:32] = sum + 32'(dot);
      wr_mask[4*c+:4] = 32'(c) < 32'(o_wcols) ? 4'hf : 4'h0;  // matmul: none past n_size
    end
  end

  // ---- stage B's registers: this cycle's step, for the datapath in the next cycle
  always_ff @(posedge clk) begin
    b_on <= !rst && !start && phase != 2'd2;
    b_in_win <= in_win;
    b_first <= first;
    b_mac <= !rst && !start && mac;
    b_load_row <= !rst && load_row;
    b_swap <= swap;
    b_newpass <= !rst && newpass;
    b_j <= j;
    b_acc <= acc_byte;
    b_klim <= klim;
    b_nlim <= nlim;
    b_wcols <= wcols;
    // This cycle's accumulator read sees the memory before the previous step's write, made at
    // this edge: when both are the same accumulators, the write's data replace the read's.
    o_fwd <= wr_en && !q_use_bias && wr_addr == q_addr;
    o_fwd_data <= wr_data[C*32-1:0];
    if (b_on && !SYSTOLIC) begin
      wnext <= wnext_d;
      if (b_swap) wcur <= wnext_d;
    end
  end

  // ---- the output stage: stage B's step and stage A's port-b request, LAT cycles later
  if (LAT == 0) begin : g_no_delay
    assign {o_on, o_first, o_mac, o_acc, o_wcols} = {b_on, b_first, b_mac, b_acc, b_wcols};
    assign {q_use_bias, q_sp, q_addr} = {use_bias, pb_sp, pb_addr};
    assign drained = 1'b1;
  end else begin : g_delay
    localparam int unsigned OW = 35 + WL;  // {on, first, mac, acc, wcols}
    logic [LAT*OW-1:0] o_line;  // a stage each, the newest at [OW-1:0]
    logic [LAT*37-1:0] q_line;  // {use_bias, sp, addr}
    always_ff @(posedge clk) begin
      o_line[OW-1:0] <= {!rst && b_on, b_first, !rst && b_mac, b_acc, b_wcols};
      q_line[36:0] <= {use_bias, pb_sp, pb_addr};
      for (int unsigned i = 1; i < LAT; i++) begin
        o_line[OW*i+:OW] <= o_line[OW*(i-1)+:OW];
        q_line[37*i+:37] <= q_line[37*(i-1)+:37];
      end
      if (rst) o_line <= '0;
    end
    assign {o_on, o_first, o_mac, o_acc, o_wcols} = o_line[(LAT-1)*OW+:OW];
    assign {q_use_bias, q_sp, q_addr} = q_line[(LAT-1)*37+:37];
    always_comb begin
      drained = 1'b1;
      for (int unsigned i = 0; i < LAT; i++) if (o_line[OW*i+OW-1]) drained = 1'b0;
    end
  end

  // ---- the systolic array (SYSTOLIC): R rows of C/2 processing elements, each holding two
  // columns' weights (current and next) and forming their two products in one tessel_mac_pair.
  // Stage B's step enters row r r cycles late (a delay line) and moves one element right a
  // cycle: the input x = in[r], `np` (the first step of a pass: the element switches to its
  // next weights for it), `ld` and `wd` (row r's next weights, or a depthwise row's diagonal).
  // Partial sums move down a cycle; column pair q's sums leave the last row R + q cycles after
  // stage B and wait C/2 - 1 - q more, so that all C leave together, LAT cycles after it. A
  // pass's next weights reach an element after it switched to the current ones (row r is
  // loaded at step r of the pass before, r < R <= the pass's length).
  localparam int unsigned NP = C / 2;
  logic [C*DOT_W-1:0] sys_dot;  // the output stage's column sums (column c at [DOT_W*c])
  if (SYSTOLIC) begin : g_sys
    localparam int unsigned EW = C + 8 + 2 + 8 * C;  // an entry: {ce, x, np, ld, wd}
    logic [R*NP*EW-1:0] pe_in;     // what element (r, q) works on now: [EW*(r*NP+q)]
    logic [R*NP*EW-1:0] pe_pass;   // what it hands to (r, q + 1)
    logic [R*NP*16-1:0] pe_wc, pe_wn;          // current and next weights {hi, lo}
    logic [R*NP*2*DOT_W-1:0] pe_sum;           // partial sums {hi, lo}, registered
    logic [R*EW-1:0] entry;                    // stage B's entry of each row
    always_comb
      for (int unsigned r = 0; r < R; r++) begin
        logic [8*C-1:0] wd;
        logic [C-1:0] ce;  // the columns the entry loads: all, or a transposed load's one
        for (int unsigned c = 0; c < C; c++) begin
          logic [15:0] shifted;  // matmul's operand, rounded by the shift (int8: stays 8 bits)
          ce[c] = !tr || 32'(c) == b_j;
          shifted = rha(16'($signed(rd_data[2*CW*8+8*(tr ? r : c)+:8])), fm.operand_shift);
          if (AO && mm && (32'(r) >= b_klim || 32'(c) >= b_nlim)) wd[8*c+:8] = 8'd0;
          else if (tr) wd[8*c+:8] = shifted[7:0];  // column b_j holds b's k = r
          else if (AO && mm) wd[8*c+:8] = shifted[7:0];
          else wd[8*c+:8] = dw && c != r ? 8'd0 : rd_data[2*CW*8+8*c+:8];
        end
        entry[EW*r+:EW] = {ce, in_vec[16*r+:8], b_newpass,
                           b_load_row && (dw || tr || b_j == 32'(r)), wd};
      end
    for (genvar r = 0; r < R; r++) begin : g_srow
      // Row r's entries, r cycles late.
      if (r == 0) begin : g_first
        assign pe_in[0+:EW] = entry[0+:EW];
      end else begin : g_late
        logic [r*EW-1:0] line;  // the newest entry at [EW-1:0]
        always_ff @(posedge clk) begin
          line[EW-1:0] <= entry[EW*r+:EW];
          for (int unsigned i = 1; i < r; i++) line[EW*i+:EW] <= line[EW*(i-1)+:EW];
          if (rst)
            for (int unsigned i = 0; i < r; i++) line[EW*i+8*C+:2] <= 2'b00;  // no np, ld
        end
        assign pe_in[EW*(r*NP)+:EW] = line[EW*(r-1)+:EW];
      end
      for (genvar q = 0; q < NP; q++) begin : g_pe
        localparam int unsigned I = r * NP + q;
        logic [7:0] x;
        logic np, ld;
        logic [15:0] w;
        logic signed [15:0] p_lo, p_hi;
        assign {x, np, ld} = pe_in[EW*I+8*C+:10];
        if (q > 0) begin : g_right
          assign pe_in[EW*I+:EW] = pe_pass[EW*(I-1)+:EW];
        end
        assign w = np ? pe_wn[16*I+:16] : pe_wc[16*I+:16];
        tessel_mac_pair u_pair (.x(x), .w_lo(w[7:0]), .w_hi(w[15:8]), .p_lo, .p_hi);
        logic [2*DOT_W-1:0] above;  // the sums of (r - 1, q), a cycle ago
        if (r == 0) begin : g_top
          assign above = '0;
        end else begin : g_below
          assign above = pe_sum[2*DOT_W*(I-NP)+:2*DOT_W];
        end
        always_ff @(posedge clk) begin
          pe_sum[2*DOT_W*I+:DOT_W] <= above[0+:DOT_W] + DOT_W'(p_lo);
          pe_sum[2*DOT_W*I+DOT_W+:DOT_W] <= above[DOT_W+:DOT_W] + DOT_W'(p_hi);
          pe_pass[EW*I+:EW] <= pe_in[EW*I+:EW];
          if (rst) pe_pass[EW*I+8*C+:2] <= 2'b00;
          if (np) pe_wc[16*I+:16] <= pe_wn[16*I+:16];
          if (ld && pe_in[EW*I+8*C+10+2*q]) pe_wn[16*I+:8] <= pe_in[EW*I+16*q+:8];
          if (ld && pe_in[EW*I+8*C+10+2*q+1]) pe_wn[16*I+8+:8] <= pe_in[EW*I+16*q+8+:8];
        end
      end
    end
    // Column pair q's sums from the last row, C/2 - 1 - q cycles late.
    for (genvar q = 0; q < NP; q++) begin : g_out
      localparam int unsigned I = (R - 1) * NP + q;
      if (q == NP - 1) begin : g_now
        assign sys_dot[2*DOT_W*q+:2*DOT_W] = pe_sum[2*DOT_W*I+:2*DOT_W];
      end else begin : g_wait
        logic [(NP-1-q)*2*DOT_W-1:0] line;  // the newest at [2*DOT_W-1:0]
        always_ff @(posedge clk) begin
          line[2*DOT_W-1:0] <= pe_sum[2*DOT_W*I+:2*DOT_W];
          for (int unsigned i = 1; i < NP - 1 - q; i++)
            line[2*DOT_W*i+:2*DOT_W] <= line[2*DOT_W*(i-1)+:2*DOT_W];
        end
        assign sys_dot[2*DOT_W*q+:2*DOT_W] = line[(NP-2-q)*2*DOT_W+:2*DOT_W];
      end
    end
  end else begin : g_tree
    assign sys_dot = '0;
  end

  // ---- stage A: sequencing
  always_ff @(posedge clk) begin
    if (rst) phase <= 2'd2;
    else if (start) begin
      logic [31:0] p, w, kblk, nblk;
      logic is_mm;
      f <= g;
      fm <= gm;
      is_mm = AO && insn[7:0] == tessel_isa_pkg::OP_MATMUL;
      mm <= is_mm;
      tr <= is_mm && gm.transpose_b;
      kblk = (32'(gm.k_size) + R - 1) / R;
      nblk = (32'(gm.n_size) + C - 1) / C;
      if (is_mm) begin
        p = 32'(gm.m_size);
        w = gm.transpose_b ? 32'(C) : 32'(R);
        passes <= nblk * kblk;
        {r_kh, r_kw, r_icbs} <= {4'd1, 4'd1, kblk[15:0]};
      end else begin
        p = 32'(g.out_h) * 32'(g.out_w);
        w = g.depthwise ? 32'd1 : 32'(R);
        passes <= g.depthwise ? 32'(g.oc_blocks) * 32'(g.kh) * 32'(g.kw)
                              : 32'(g.oc_blocks) * 32'(g.ic_blocks) * 32'(g.kh) * 32'(g.kw);
        {r_kh, r_kw, r_icbs} <= {g.kh, g.kw, g.depthwise ? 16'd1 : 16'(g.ic_blocks)};
      end
      npix <= p;
      wrows <= w;
      pass_len <= p > w ? p : w;
      phase <= 2'd0;
      j <= '0;
      k <= '0;
      wptr <= 32'(g.w_addr);
      {oy, ox, icb, ocb, ky, kx, lkb, lnb} <= '0;
    end else if (phase != 2'd2) begin
      if (load_row) wptr <= wptr + C * WB;
      if (AO && mm && load_row && j == wrows - 1) begin  // a block of b loaded: the next one
        if (lkb == r_icbs - 16'd1) begin
          lkb <= '0;
          lnb <= lnb + 1'b1;
        end else lkb <= lkb + 1'b1;
      end
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
        if (kx != r_kw - 4'd1) kx <= kx + 1'b1;
        else begin
          kx <= '0;
          if (ky != r_kh - 4'd1) ky <= ky + 1'b1;
          else begin
            ky <= '0;
            if (icb != r_icbs - 16'd1) icb <= icb + 1'b1;
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
