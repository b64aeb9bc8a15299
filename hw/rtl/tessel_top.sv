// The Tessel accelerator: fetch/dispatch, three engine queues, four dependency-token FIFOs,
// the LOAD and STORE DMA engines, the COMPUTE engine (matrix + vector units) and the
// scratchpads, timed cycle for cycle by docs/timing.md. Ports: hw/rtl/README.md.
/* verilator lint_off UNUSEDSIGNAL */
module tessel_top (
    input  logic         clk,
    input  logic         clk2x,          // twice clk's rate, rising with it: the scratchpads'
                                         // block RAMs (tessel_sram)
    input  logic         rst_n,          // synchronous, active low
    input  logic         start,          // pulse while idle: run from instruction 0; the
                                         // next cycle is cycle 0
    output logic         busy,
    output logic         done,           // level: `finish` finished and every engine drained
    output logic         fault,          // level: the run stopped on a fault
    output logic [7:0]   fault_code,     // 1: undecodable opcode/engine, 2: illegal token flags
    output logic [31:0]  fault_index,    // the instruction at fault
    output logic [63:0]  cycle,          // the current cycle number (cycles since start)
    // program port: synchronous read, one-cycle latency (prog_data answers last cycle's addr)
    output logic [31:0]  prog_addr,      // instruction index
    input  logic [255:0] prog_data,
    input  logic         prog_valid,     // prog_data is a program word (index < length)
    // DRAM request channel: one request per merged byte run (docs/timing.md)
    output logic         dram_req_valid,
    input  logic         dram_req_ready,
    output logic         dram_req_write,     // 0 LOAD (read), 1 STORE (write)
    output logic [39:0]  dram_req_addr,
    output logic [31:0]  dram_req_bytes,
    output logic [1:0]   dram_req_kind,      // tessel_isa_pkg::TRAFFIC_*
    output logic [63:0]  dram_req_cycle,     // the presentation cycle: the instruction's start
    output logic         dram_req_last,      // the instruction's last request
    input  logic         dram_done_load,     // the LOAD instruction's last burst has completed
    input  logic         dram_done_store,    // the STORE instruction's last burst has completed
    output logic         dram_done_ack_load, // the LOAD instruction finishes this cycle
    output logic         dram_done_ack_store,
    // DRAM data port: read (LOAD; one-cycle latency), write (STORE)
    output logic         dram_rd_en,
    output logic [39:0]  dram_rd_addr,
    input  logic [tessel_cfg_pkg::DMA_BYTES_PER_CYCLE*8-1:0] dram_rd_data,
    output logic         dram_wr_en,
    output logic [39:0]  dram_wr_addr,
    output logic [tessel_cfg_pkg::DMA_BYTES_PER_CYCLE*8-1:0] dram_wr_data,
    output logic [tessel_cfg_pkg::DMA_BYTES_PER_CYCLE-1:0]   dram_wr_strb,
    // observation (counters and fault reports of the harness; ignore on an FPGA)
    output logic         obs_dispatch,       // an instruction is dispatched this cycle
    output logic [31:0]  obs_dispatch_index,
    output logic [2:0]   obs_start,          // per engine (0 LOAD, 1 COMPUTE, 2 STORE)
    output logic [95:0]  obs_start_index,
    output logic [2:0]   obs_finish,
    output logic [95:0]  obs_finish_index,
    output logic [2:0]   obs_wait_token,     // head ready but a token or FIFO room missing
    output logic         obs_fetch_blocked,  // the next instruction's queue is full
    output logic [1:0]   obs_fetch_engine,
    output logic         obs_stuck,          // nothing runs, starts or dispatches: deadlock
    output logic         obs_late,           // an engine is past its timed cost (should be 0)
    output logic         obs_sram_collision  // both scratchpad writes hit one bank word (0)
);
  localparam int unsigned R = tessel_cfg_pkg::MATRIX_ROWS;
  localparam int unsigned C = tessel_cfg_pkg::MATRIX_COLS;
  localparam int unsigned V = tessel_cfg_pkg::VECTOR_LANES;
  localparam int unsigned IB = tessel_cfg_pkg::INPUT_BITS / 8;
  localparam int unsigned WB = tessel_cfg_pkg::WEIGHT_BITS / 8;
  localparam int unsigned Q = tessel_cfg_pkg::INSN_QUEUE_DEPTH;
  localparam int unsigned K = tessel_cfg_pkg::TOKEN_FIFO_DEPTH;
  localparam int unsigned DW = tessel_cfg_pkg::DMA_BYTES_PER_CYCLE;
  // Compute port width: the widest of an input vector, a weight row, C accumulators, V int32
  // lanes and V requant parameter pairs.
  localparam int unsigned CW0 = R * IB > C * IB ? R * IB : C * IB;
  localparam int unsigned CW1 = CW0 > C * WB ? CW0 : C * WB;
  localparam int unsigned CW2 = CW1 > 4 * C ? CW1 : 4 * C;
  localparam int unsigned CW3 = CW2 > 4 * V ? CW2 : 4 * V;  // (a chunk's requant parameters,
                                                             // 8 V bytes, come on two ports)
  // The row normaliser's norm reads 16 V bytes of parameters a chunk, 8 V on each of b and c.
  localparam bit RN = tessel_cfg_pkg::VECTOR_ROW_NORMALISE != 0;
  localparam int unsigned CW = RN && 8 * V > CW3 ? 8 * V : CW3;

  logic rst;
  assign rst = !rst_n;

  typedef enum logic [1:0] {S_IDLE, S_RUN, S_DONE, S_FAULT} state_t;
  state_t state;
  assign busy = state == S_RUN;
  assign done = state == S_DONE;
  assign fault = state == S_FAULT;

  // ------------------------------------------------------------------ fetch and decode
  logic [31:0] fetch_index;
  logic fetch_stopped;
  logic [7:0] op;
  logic [1:0] eng;
  logic legal_opcode, legal_flags, word_ok, dispatch, want_dispatch;
  logic [3:0] flags;  // {push_next, push_prev, pop_next, pop_prev}
  assign op = prog_data[7:0];
  assign flags = prog_data[11:8];

  always_comb begin
    legal_opcode = (op >= tessel_isa_pkg::OP_NOP && op <= tessel_isa_pkg::OP_MATMUL)
                || op == tessel_isa_pkg::OP_SOFTMAX || op == tessel_isa_pkg::OP_NORM
                || op == tessel_isa_pkg::OP_GATHER;
    case (op)
      tessel_isa_pkg::OP_LOAD, tessel_isa_pkg::OP_GATHER: eng = 2'd0;
      tessel_isa_pkg::OP_STORE: eng = 2'd2;
      tessel_isa_pkg::OP_NOP: eng = prog_data[17:16];
      default: eng = 2'd1;
    endcase
    if (op == tessel_isa_pkg::OP_NOP && prog_data[17:16] == 2'd3) legal_opcode = 1'b0;
    // LOAD has no prev, STORE no next.
    legal_flags = !(eng == 2'd0 && (flags[0] || flags[2])) && !(eng == 2'd2 && (flags[1] || flags[3]));
    word_ok = legal_opcode && legal_flags;
  end

  // ------------------------------------------------------------------ queues and engines
  logic [2:0] q_push, q_pop, head_valid, eng_busy, eng_finish;
  logic [255:0] head_word[3];
  logic [31:0] head_index[3];
  logic [16:0] q_count[3];
  logic [31:0] run_index[3];
  logic [3:0] run_flags[3];

  for (genvar e = 0; e < 3; e++) begin : g_queue
    tessel_insn_queue u_q (
        .clk, .rst(rst || start), .push(q_push[e]), .push_word(prog_data),
        .push_index(fetch_index), .pop(q_pop[e]), .head_valid(head_valid[e]),
        .head_word(head_word[e]), .head_index(head_index[e]), .count(q_count[e]));
  end

  // ------------------------------------------------------------------ token FIFOs
  // 0 load->compute, 1 compute->load, 2 compute->store, 3 store->compute
  logic [16:0] tok_visible[4], tok_occupancy[4];
  logic [3:0] tok_push_fin, tok_pop, tok_reserve;

  // FIFO t: producer engine and flag bit, consumer engine and flag bit (flags[3:0] =
  // {push_next, push_prev, pop_next, pop_prev}).
  localparam logic [7:0] PROD_ENG = {2'd2, 2'd1, 2'd1, 2'd0};
  localparam logic [7:0] PROD_BIT = {2'd2, 2'd3, 2'd2, 2'd3};
  localparam logic [7:0] CONS_ENG = {2'd1, 2'd2, 2'd0, 2'd1};
  localparam logic [7:0] CONS_BIT = {2'd1, 2'd0, 2'd1, 2'd0};

  logic [2:0] can_start, free, tokens_ok;
  logic [3:0] has_token, has_room;
  always_comb begin
    for (int unsigned t = 0; t < 4; t++) begin
      tok_push_fin[t] = eng_finish[PROD_ENG[2*t+:2]] && run_flags[PROD_ENG[2*t+:2]][PROD_BIT[2*t+:2]];
      has_token[t] = tok_visible[t] + 17'(tok_push_fin[t]) != 0;
      has_room[t] = tok_occupancy[t] < 17'(K);
    end
    tok_pop = '0;
    tok_reserve = '0;
    for (int unsigned e = 0; e < 3; e++) begin
      logic [3:0] fl;
      logic ok;
      fl = head_word[e][11:8];
      free[e] = !eng_busy[e] || eng_finish[e];
      ok = 1'b1;
      for (int unsigned t = 0; t < 4; t++) begin
        if (32'(CONS_ENG[2*t+:2]) == e && fl[CONS_BIT[2*t+:2]] && !has_token[t]) ok = 1'b0;
        if (32'(PROD_ENG[2*t+:2]) == e && fl[PROD_BIT[2*t+:2]] && !has_room[t]) ok = 1'b0;
      end
      tokens_ok[e] = ok;
      can_start[e] = state == S_RUN && head_valid[e] && free[e] && ok;
      q_pop[e] = can_start[e];
    end
    for (int unsigned t = 0; t < 4; t++) begin
      tok_pop[t] = can_start[CONS_ENG[2*t+:2]] && head_word[CONS_ENG[2*t+:2]][8 + 32'(CONS_BIT[2*t+:2])];
      tok_reserve[t] = can_start[PROD_ENG[2*t+:2]] && head_word[PROD_ENG[2*t+:2]][8 + 32'(PROD_BIT[2*t+:2])];
    end
    // Dispatch after the starts: a start frees its queue slot in the same cycle.
    want_dispatch = state == S_RUN && !fetch_stopped && prog_valid;
    dispatch = want_dispatch && word_ok && 32'(q_count[eng]) - 32'(q_pop[eng]) < Q;
    q_push = '0;
    if (dispatch) q_push[eng] = 1'b1;
    prog_addr = dispatch ? fetch_index + 1 : fetch_index;
  end

  always_ff @(posedge clk) begin
    if (rst || start) begin
      for (int unsigned t = 0; t < 4; t++) begin
        tok_visible[t] <= '0;
        tok_occupancy[t] <= '0;
      end
    end else
      for (int unsigned t = 0; t < 4; t++) begin
        tok_visible[t] <= tok_visible[t] + 17'(tok_push_fin[t]) - 17'(tok_pop[t]);
        tok_occupancy[t] <= tok_occupancy[t] + 17'(tok_reserve[t]) - 17'(tok_pop[t]);
      end
  end

  // ------------------------------------------------------------------ run state
  logic finish_seen, finishing_finish, all_idle;
  always_comb begin
    all_idle = 1'b1;
    for (int unsigned e = 0; e < 3; e++)
      if ((eng_busy[e] && !eng_finish[e]) || can_start[e] || q_count[e] != 0) all_idle = 1'b0;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      state <= S_IDLE;
      cycle <= '0;
      fetch_index <= '0;
      fetch_stopped <= 1'b0;
      finish_seen <= 1'b0;
      fault_code <= '0;
      fault_index <= '0;
    end else if (start) begin
      state <= S_RUN;
      cycle <= '0;
      fetch_index <= '0;
      fetch_stopped <= 1'b0;
      finish_seen <= 1'b0;
      fault_code <= '0;
      fault_index <= '0;
    end else if (state == S_RUN) begin
      cycle <= cycle + 1;
      if (want_dispatch && !word_ok) begin
        state <= S_FAULT;
        fault_code <= legal_opcode ? 8'd2 : 8'd1;
        fault_index <= fetch_index;
      end
      if (dispatch) begin
        fetch_index <= fetch_index + 1;
        if (op == tessel_isa_pkg::OP_FINISH) fetch_stopped <= 1'b1;
      end
      if (finishing_finish) finish_seen <= 1'b1;
      if ((finish_seen || finishing_finish) && all_idle) state <= S_DONE;
    end
  end

  for (genvar e = 0; e < 3; e++) begin : g_run
    always_ff @(posedge clk)
      if (can_start[e]) begin
        run_index[e] <= head_index[e];
        run_flags[e] <= head_word[e][11:8];
      end
  end

  // ------------------------------------------------------------------ engines
  logic [2:0] eng_start;
  assign eng_start = can_start;

  logic ld_gen_busy, st_gen_busy, ld_req_valid, st_req_valid, ld_grant, st_grant;
  logic [63:0] ld_tag, st_tag;
  logic [39:0] ld_req_addr, st_req_addr;
  logic [31:0] ld_req_bytes, st_req_bytes;
  logic [1:0] ld_req_kind, st_req_kind;
  logic ld_req_last, st_req_last;
  logic ld_lw_en, st_lw_en;
  logic [3:0] ld_lw_sp, st_lw_sp, ld_sr_sp, st_sr_sp;
  logic [31:0] ld_lw_addr, st_lw_addr, ld_sr_addr, st_sr_addr;
  logic [DW*8-1:0] ld_lw_data, st_lw_data, sr_data, unused_rd;
  logic [DW-1:0] ld_lw_mask, st_lw_mask, unused_strb;
  logic unused_wr_en, unused_rd_en;
  logic [39:0] unused_wr_addr, unused_rd_addr;
  logic [DW*8-1:0] unused_wr_data;

  // DRAM request order: the earlier start first; LOAD before STORE in the same cycle.
  assign ld_grant = ld_req_valid && dram_req_ready && !(st_gen_busy && st_tag < ld_tag);
  assign st_grant = st_req_valid && dram_req_ready && !ld_grant
                 && !(ld_gen_busy && ld_tag <= st_tag);
  assign dram_req_valid = ld_grant || st_grant;
  assign dram_req_write = st_grant;
  assign dram_req_addr = st_grant ? st_req_addr : ld_req_addr;
  assign dram_req_bytes = st_grant ? st_req_bytes : ld_req_bytes;
  assign dram_req_kind = st_grant ? st_req_kind : ld_req_kind;
  assign dram_req_cycle = st_grant ? st_tag : ld_tag;
  assign dram_req_last = st_grant ? st_req_last : ld_req_last;

  tessel_dma #(.IS_STORE(1'b0)) u_load (
      .clk, .rst(rst || start), .cycle, .start(eng_start[0]), .insn(head_word[0]),
      .busy(eng_busy[0]), .finish_now(eng_finish[0]),
      .gen_busy(ld_gen_busy), .gen_tag(ld_tag), .req_valid(ld_req_valid), .req_grant(ld_grant),
      .req_addr(ld_req_addr), .req_bytes(ld_req_bytes), .req_kind(ld_req_kind),
      .req_last(ld_req_last), .dram_done(dram_done_load),
      .rd_en(dram_rd_en), .rd_addr(dram_rd_addr), .rd_data(dram_rd_data),
      .wr_en(unused_wr_en), .wr_addr(unused_wr_addr), .wr_data(unused_wr_data),
      .wr_strb(unused_strb),
      .lw_en(ld_lw_en), .lw_sp(ld_lw_sp), .lw_addr(ld_lw_addr), .lw_data(ld_lw_data),
      .lw_mask(ld_lw_mask), .sr_sp(ld_sr_sp), .sr_addr(ld_sr_addr), .sr_data(sr_data));

  tessel_dma #(.IS_STORE(1'b1)) u_store (
      .clk, .rst(rst || start), .cycle, .start(eng_start[2]), .insn(head_word[2]),
      .busy(eng_busy[2]), .finish_now(eng_finish[2]),
      .gen_busy(st_gen_busy), .gen_tag(st_tag), .req_valid(st_req_valid), .req_grant(st_grant),
      .req_addr(st_req_addr), .req_bytes(st_req_bytes), .req_kind(st_req_kind),
      .req_last(st_req_last), .dram_done(dram_done_store),
      .rd_en(unused_rd_en), .rd_addr(unused_rd_addr), .rd_data(unused_rd),
      .wr_en(dram_wr_en), .wr_addr(dram_wr_addr), .wr_data(dram_wr_data), .wr_strb(dram_wr_strb),
      .lw_en(st_lw_en), .lw_sp(st_lw_sp), .lw_addr(st_lw_addr), .lw_data(st_lw_data),
      .lw_mask(st_lw_mask), .sr_sp(st_sr_sp), .sr_addr(st_sr_addr), .sr_data(sr_data));
  assign unused_rd = '0;
  assign dram_done_ack_load = eng_finish[0];
  assign dram_done_ack_store = eng_finish[2];

  logic [3*4-1:0] cr_sp;
  logic [3*32-1:0] cr_addr;
  logic [3*CW*8-1:0] cr_data;
  logic cw_en, compute_late;
  logic [3:0] cw_sp;
  logic [31:0] cw_addr;
  logic [CW*8-1:0] cw_data;
  logic [CW-1:0] cw_mask;

  tessel_compute #(.CW(CW)) u_compute (
      .clk, .rst(rst || start), .start(eng_start[1]), .insn(head_word[1]),
      .busy(eng_busy[1]), .finish_now(eng_finish[1]), .finishing_finish, .late(compute_late),
      .rd_sp(cr_sp), .rd_addr(cr_addr), .rd_data(cr_data),
      .wr_en(cw_en), .wr_sp(cw_sp), .wr_addr(cw_addr), .wr_data(cw_data), .wr_mask(cw_mask));

  // The bytes of each compute port the engines use: read a = an input vector or a vector
  // operand (4 bytes a lane), b = accumulators or bias (4 a column), a vector operand or half
  // a chunk's requant parameters (4 a lane), c = a weight row or the parameters' other half;
  // the write = accumulators or a vector result.
  localparam int unsigned NV = R > C ? R : C;
  localparam int unsigned A_BYTES = NV * IB > 4 * V ? NV * IB : 4 * V;
  localparam int unsigned PV_BYTES = RN ? 8 * V : 4 * V;  // (norm: 8 V bytes of parameters)
  localparam int unsigned B_BYTES = 4 * C > PV_BYTES ? 4 * C : PV_BYTES;
  localparam int unsigned C_BYTES = C * WB > PV_BYTES ? C * WB : PV_BYTES;
  tessel_sram #(.DW(DW), .CW(CW), .A_BYTES(A_BYTES), .B_BYTES(B_BYTES), .C_BYTES(C_BYTES),
                .W_BYTES(B_BYTES)) u_sram (
      .clk, .clk2x, .lw_en(ld_lw_en), .lw_sp(ld_lw_sp), .lw_addr(ld_lw_addr), .lw_data(ld_lw_data),
      .lw_mask(ld_lw_mask), .sr_sp(st_sr_sp), .sr_addr(st_sr_addr), .sr_data,
      .cr_sp, .cr_addr, .cr_data, .cw_en, .cw_sp, .cw_addr, .cw_data, .cw_mask,
      .collision(obs_sram_collision));

  // ------------------------------------------------------------------ observation
  assign obs_dispatch = dispatch;
  assign obs_dispatch_index = fetch_index;
  assign obs_start = eng_start;
  assign obs_finish = eng_finish & {3{state == S_RUN}};
  assign obs_start_index = {head_index[2], head_index[1], head_index[0]};
  assign obs_finish_index = {run_index[2], run_index[1], run_index[0]};
  always_comb
    for (int unsigned e = 0; e < 3; e++)
      obs_wait_token[e] = state == S_RUN && head_valid[e] && free[e] && !tokens_ok[e]
                       && !(eng_busy[e] && !eng_finish[e]);
  assign obs_fetch_blocked = want_dispatch && word_ok && !dispatch;
  assign obs_fetch_engine = eng;
  assign obs_stuck = state == S_RUN && !dispatch && eng_start == 0
                  && !((eng_busy[0] && !eng_finish[0]) || (eng_busy[1] && !eng_finish[1])
                       || (eng_busy[2] && !eng_finish[2]))
                  && !((finish_seen || finishing_finish) && q_count[0] == 0 && q_count[1] == 0
                       && q_count[2] == 0)
                  && !(want_dispatch && !word_ok)
                  && (fetch_stopped || !prog_valid || obs_fetch_blocked);
  assign obs_late = compute_late;
endmodule
/* verilator lint_on UNUSEDSIGNAL */
