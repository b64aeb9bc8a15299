// A DMA engine (LOAD when IS_STORE = 0, STORE when 1): the request generator that presents an
// instruction's merged byte runs on the DRAM request channel, and the data mover that copies
// the bytes between the DRAM data port and the scratchpads (load: with zero/pad_value padding).
//
// Timing (docs/timing.md "load and store"): every request of an instruction carries the
// instruction's start cycle s in `req_cycle`; the harness' DramModel times the request as if
// presented at s, in presentation order, and raises `dram_done` from the cycle the last burst
// completes (f = c_last). The engine finishes in the first cycle with dram_done, every request
// presented, and every byte moved. Requests are generated at one merged run per cycle (runs
// are whole rows when the DRAM pixels of a row are contiguous); the mover moves DW bytes per
// cycle per row when both sides are contiguous, otherwise a *pixel group* per cycle: as many
// pixels of one row (the left padding alone, or data pixels and the right padding after them)
// as fit in a DW-byte window on both sides, placed by a per-instruction byte shuffle (so strided scratchpad layouts and padding run at up to DW
// bytes per cycle instead of one pixel per cycle).
//
// A gather (LOAD only, ISA v3: an Embedding's table rows) has its own generator and mover
// below: the generator presents the ids' run, then one request per row at the table's row
// stride (the rows start on bursts, so their bursts and the DRAM's timing do not depend on
// the ids: docs/timing.md "gather"); the mover reads a row's id on the DRAM data port, forms
// the row's address (the one product, id x row bytes, registered), then moves the row DW bytes a
// cycle: 2 + ceil(row bytes / DW) cycles a row, which the timing contract charges.
//
// No address is a per-cycle product: the generator's and the mover's DRAM and SRAM addresses are
// registers stepped by `stride << log2(element bytes)` (or a group of pixels' worth of it) as
// their loop counters advance, and every per-instruction product (row and pad lengths, group
// steps) is registered at the start (docs/fpga.md, session 5).
/* verilator lint_off UNUSEDSIGNAL */
module tessel_dma #(
    parameter bit IS_STORE = 1'b0,
    parameter int unsigned DW = tessel_cfg_pkg::DMA_BYTES_PER_CYCLE
) (
    input  logic            clk,
    input  logic            rst,
    input  logic [63:0]     cycle,
    input  logic            start,      // start the instruction `insn` in this cycle
    input  logic [255:0]    insn,
    output logic            busy,       // running (an instruction started and not finished)
    output logic            finish_now, // the running instruction finishes in this cycle
    // request channel (the top arbitrates LOAD against STORE)
    output logic            gen_busy,   // requests of the running instruction not all presented
    output logic [63:0]     gen_tag,    // its start cycle
    output logic            req_valid,
    input  logic            req_grant,  // presented and accepted in this cycle
    output logic [39:0]     req_addr,
    output logic [31:0]     req_bytes,
    output logic [1:0]      req_kind,
    output logic            req_last,
    input  logic            dram_done,
    // DRAM data port (load: read, one-cycle latency; store: write)
    output logic            rd_en,
    output logic [39:0]     rd_addr,
    input  logic [DW*8-1:0] rd_data,
    output logic            wr_en,
    output logic [39:0]     wr_addr,
    output logic [DW*8-1:0] wr_data,
    output logic [DW-1:0]   wr_strb,
    // scratchpad ports
    output logic            lw_en,
    output logic [3:0]      lw_sp,
    output logic [31:0]     lw_addr,
    output logic [DW*8-1:0] lw_data,
    output logic [DW-1:0]   lw_mask,
    output logic [3:0]      sr_sp,
    output logic [31:0]     sr_addr,
    input  logic [DW*8-1:0] sr_data
);
  tessel_isa_pkg::load_insn_t f;  // the running instruction (store_insn_t has the same layout up to sram_stride_x)
  tessel_isa_pkg::load_insn_t w;  // the word being started (a store word has the same layout
                                  // up to sram_stride_x; a gather word reads as a load of one
                                  // unpadded pixel a row, its own fields kept in g_* registers)
  tessel_isa_pkg::gather_insn_t gw;
  logic is_gather;  // the word being started is a gather
  assign gw = insn;
  assign is_gather = !IS_STORE && insn[7:0] == tessel_isa_pkg::OP_GATHER;
  always_comb begin
    w = insn;
    if (is_gather) begin
      w.x_size = 12'd1;
      w.dram_stride_x = 20'(gw.c_size);
      w.sram_stride_x = gw.c_size;
      w.pad_top = '0;
      w.pad_bottom = '0;
      w.pad_left = '0;
      w.pad_right = '0;
      w.pad_value = '0;
    end
  end
  logic [17:0] ce;  // bytes per pixel: c_size << log2(ebytes)
  // Per-instruction steps and lengths, registered at the start (from the instruction word).
  logic [25:0] dram_step_y;  // dram_stride_y << log2(ebytes): bytes between DRAM rows
  logic [21:0] dram_step_x;  // dram_stride_x << log2(ebytes): bytes between DRAM pixels
  logic [21:0] sram_step_y;  // sram_stride_y << log2(ebytes)
  logic [31:0] row_bytes;    // x_size * ce: a row's data
  logic [31:0] left_bytes, right_bytes, pad_row_bytes;  // pad_left, pad_right, padded row * ce
  logic running, is_nop;  // a `nop engine=load/store` costs one cycle and moves no data

  // ---------------------------------------------------------------- request generator
  logic gen_active, flushing, run_valid;
  logic [11:0] gy, gx;
  logic [39:0] run_addr, run_len;
  logic row_req;  // the pixels of a DRAM row are contiguous: one unit per row
  // unit_addr = dram_addr + (gy * dram_stride_y + gx * dram_stride_x) * ebytes and
  // gen_row_addr = the same at gx = 0, kept in registers (mod 2^40, as the products were).
  logic [39:0] unit_addr, gen_row_addr, gen_row_next, unit_len;
  logic unit_last, can_emit, accept;

  always_comb begin
    gen_row_next = gen_row_addr + 40'(dram_step_y);
    if (row_req) begin
      unit_len = 40'(row_bytes);
      unit_last = gy == f.y_size - 1;
    end else begin
      unit_len = 40'(ce);
      unit_last = gy == f.y_size - 1 && gx == f.x_size - 1;
    end
  end

  // The gather's generator: the ids' run first (counted as activations), then row r at
  // dram_addr + r * row stride, one request each.
  logic g_gen, g_gen_ids, req_ids;
  logic [11:0] g_gy;
  logic [39:0] g_gaddr, g_ids_addr;

  assign accept = req_valid && req_grant;
  assign can_emit = !req_valid || accept;
  assign gen_busy = gen_active || req_valid || g_gen;
  assign req_kind = req_ids ? tessel_isa_pkg::TRAFFIC_ACTIVATIONS : f.kind;

  always_ff @(posedge clk) begin
    if (rst) begin
      gen_active <= 1'b0;
      req_valid <= 1'b0;
      flushing <= 1'b0;
      run_valid <= 1'b0;
      g_gen <= 1'b0;
    end else if (start) begin
      gen_active <= insn[7:0] != tessel_isa_pkg::OP_NOP && !is_gather;
      g_gen <= is_gather;
      g_gen_ids <= 1'b1;
      g_gy <= '0;
      g_gaddr <= gw.dram_addr;
      g_ids_addr <= gw.ids_addr;
      flushing <= 1'b0;
      run_valid <= 1'b0;
      gy <= '0;
      gx <= '0;
      unit_addr <= w.dram_addr;
      gen_row_addr <= w.dram_addr;
      gen_tag <= cycle;
    end else begin
      if (accept) req_valid <= 1'b0;
      if (g_gen && can_emit) begin
        req_valid <= 1'b1;
        req_ids <= g_gen_ids;
        if (g_gen_ids) begin
          req_addr <= g_ids_addr;
          req_bytes <= 32'(f.y_size) << 2;
          req_last <= 1'b0;
          g_gen_ids <= 1'b0;
        end else begin
          req_addr <= g_gaddr;
          req_bytes <= 32'(ce);
          req_last <= g_gy == f.y_size - 1;
          g_gaddr <= g_gaddr + 40'(dram_step_y);
          g_gy <= g_gy + 1'b1;
          if (g_gy == f.y_size - 1) g_gen <= 1'b0;
        end
      end
      if (gen_active) begin
        if (flushing) begin
          if (can_emit) begin
            req_valid <= 1'b1;
            req_ids <= 1'b0;
            req_addr <= run_addr;
            req_bytes <= 32'(run_len);
            req_last <= 1'b1;
            gen_active <= 1'b0;
            run_valid <= 1'b0;
          end
        end else begin
          logic advance;
          advance = 1'b0;
          if (run_valid && unit_addr == run_addr + run_len) begin
            run_len <= run_len + unit_len;
            advance = 1'b1;
          end else if (!run_valid || can_emit) begin
            if (run_valid) begin
              req_valid <= 1'b1;
              req_ids <= 1'b0;
              req_addr <= run_addr;
              req_bytes <= 32'(run_len);
              req_last <= 1'b0;
            end
            run_valid <= 1'b1;
            run_addr <= unit_addr;
            run_len <= unit_len;
            advance = 1'b1;
          end
          if (advance) begin
            if (unit_last) flushing <= 1'b1;
            else if (row_req || gx == f.x_size - 1) begin
              gx <= '0;
              gy <= gy + 1'b1;
              gen_row_addr <= gen_row_next;
              unit_addr <= gen_row_next;
            end else begin
              gx <= gx + 1'b1;
              unit_addr <= unit_addr + 40'(dram_step_x);
            end
          end
        end
      end
    end
  end

  // ---------------------------------------------------------------- data mover
  // Segments: in row mode (both sides contiguous along x) a padded row is [left pad][data]
  // [right pad] (parts 0, 1, 2) or one pad run (part 3); in pixel mode a segment is a pixel.
  logic row_mv;
  logic mv_active;
  // Field widths from the ISA package: a padded extent is pad + size + pad (at most 4605 with
  // 8-bit pads and 12-bit sizes, so 13 bits).
  localparam int unsigned PADF_W = tessel_isa_pkg::LOAD_PAD_TOP_W;
  localparam int unsigned SIZE_W = tessel_isa_pkg::LOAD_Y_SIZE_W > tessel_isa_pkg::LOAD_X_SIZE_W
                                 ? tessel_isa_pkg::LOAD_Y_SIZE_W : tessel_isa_pkg::LOAD_X_SIZE_W;
  localparam int unsigned EXT_W = $clog2(2 * (2 ** PADF_W - 1) + 2 ** SIZE_W);
  logic [EXT_W-1:0] my, mx;  // padded row, padded pixel (pixel mode)
  logic [1:0] part;
  logic [31:0] off;  // bytes of the segment already moved
  logic [EXT_W-1:0] pad_h, pad_w;
  logic [PADF_W-1:0] ptop, pleft, pright;
  logic [31:0] seg_sram, seg_len;
  logic [39:0] seg_dram;
  logic seg_pad, row_inside, px_inside, seg_end, seg_last, row_end;
  logic [31:0] chunk;
  // Stepped addresses (no per-cycle multiplies). SRAM addresses are 32-bit like the ports.
  //   mv_sram_row = sram_addr + my * sram_stride_y * ebytes       (every padded row)
  //   mv_dram_row = dram_addr + (my - pad_top) * dram_stride_y * ebytes   (data rows)
  //   px_sram     = mv_sram_row + mx * sram_stride_x * ebytes    (pixel mode, every pixel)
  //   px_dram     = mv_dram_row + (mx - pad_left) * dram_stride_x * ebytes (data pixels)
  // px_dram is exact on data pixels of data rows, the only ones it addresses (rd_en / wr_en).
  logic [31:0] mv_sram_row, px_sram, sram_row_next;
  logic [39:0] mv_dram_row, px_dram, dram_row_next;
  logic [31:0] left_pad_sram_bytes;  // pad_left * sram_stride_x * ebytes
  logic [31:0] grp_pad_sram_bytes;   // kmax_pad * sram pixel step: a full padding group
  logic [31:0] grp_data_sram_bytes;  // kmax_data * sram pixel step: a full data group
  logic [31:0] grp_data_dram_bytes;  // kmax_data * dram pixel step

  assign ptop = f.pad_top;
  assign pleft = f.pad_left;
  assign pright = f.pad_right;
  assign pad_h = EXT_W'(ptop) + EXT_W'(f.y_size) + EXT_W'(f.pad_bottom);
  assign pad_w = EXT_W'(pleft) + EXT_W'(f.x_size) + EXT_W'(pright);
  assign row_inside = my >= EXT_W'(ptop) && my < EXT_W'(ptop) + EXT_W'(f.y_size);
  assign px_inside = mx >= EXT_W'(pleft) && mx < EXT_W'(pleft) + EXT_W'(f.x_size);

  // The first part of a padded row in row mode.
  function automatic logic [1:0] first_part(input logic in_win, input logic [PADF_W-1:0] pl);
    first_part = !in_win ? 2'd3 : (pl != 0 ? 2'd0 : 2'd1);
  endfunction

  // Pixel groups. Byte j of the destination window (SRAM for LOAD, DRAM for STORE) is byte
  // map_b(j) of the group's pixel map_p(j), j = map_p * dst_stride + map_b, and comes from byte
  // map_src(j) = map_p * src_stride + map_b of the source window. A group of k pixels fits when
  // (k - 1) * stride + ce <= DW on the destination side (and, for data, the source side);
  // strides below ce (overlapping or broadcast pixels) or pixels wider than DW move one pixel
  // at a time, DW-byte chunk by chunk, with the identity map.
  localparam int unsigned LW = $clog2(DW);
  localparam int unsigned PW = LW + 1;
  localparam int unsigned SW = LW + 2;  // holds 2 * DW + 2: sums of two values <= DW + 1
  logic [PW-1:0] kmax_pad, kmax_data, kgroup;
  logic [PW-1:0] kmax_cur;  // the group size of the current segment's kind (padding or data)
  logic [DW*PW-1:0] map_p, map_b;
  logic [DW*LW-1:0] map_src;
  logic [EXT_W-1:0] region_end;  // first padded pixel after the current group's region (pixel mode)
  logic [EXT_W-1:0] ndata;       // data pixels from mx on in this row (the rest of a group pads)
  logic [DW*8-1:0] pad_pattern;  // pad_value repeated at element width (registered at start)

  // The maps and group sizes are functions of the instruction alone: they are registered when
  // it starts (from the word itself) instead of being recomputed every cycle from `f`; they are
  // read only while the mover runs, i.e. from the cycle after the start (bench/rtl).
  always_ff @(posedge clk) begin
    if (start) begin : maps
      logic [1:0] sh;
      logic [2:0] eb;
      logic [39:0] pixel_bytes;
      logic rows;
      logic [31:0] dst_stride, src_stride;
      logic [SW-1:0] eff, p, b, base, src_c, dst_c, src_c1, span_d, span_s;
      logic [PW-1:0] kp, kd;
      logic [PADF_W-1:0] pl, pr;
      logic [1:0] jb;
      logic dst_ok, src_ok;
      sh = w.elem == tessel_isa_pkg::ELEM_I8 ? 2'd0 : w.elem == tessel_isa_pkg::ELEM_I16 ? 2'd1
                                                                                   : 2'd2;
      eb = 3'd1 << sh;
      pl = IS_STORE ? '0 : w.pad_left;  // a store word has no padding fields
      pr = IS_STORE ? '0 : w.pad_right;
      pixel_bytes = 40'(w.c_size) << sh;
      rows = 20'(w.dram_stride_x) == 20'(w.c_size) && w.sram_stride_x == w.c_size;
      dst_stride = IS_STORE ? 32'(w.dram_stride_x) << sh : 32'(w.sram_stride_x) << sh;
      src_stride = IS_STORE ? 32'(w.sram_stride_x) << sh : 32'(w.dram_stride_x) << sh;
      ce <= 18'(w.c_size) << sh;
      dram_step_y <= 26'(w.dram_stride_y) << sh;
      dram_step_x <= 22'(w.dram_stride_x) << sh;
      sram_step_y <= 22'(w.sram_stride_y) << sh;
      row_bytes <= 32'(w.x_size) * 32'(w.c_size) << sh;
      left_bytes <= 32'(pl) * 32'(w.c_size) << sh;
      right_bytes <= 32'(pr) * 32'(w.c_size) << sh;
      pad_row_bytes <= (32'(pl) + 32'(w.x_size) + 32'(pr)) * 32'(w.c_size) << sh;
      left_pad_sram_bytes <= 32'(pl) * 32'(w.sram_stride_x) << sh;
      dst_ok = pixel_bytes <= 40'(DW) && 40'(dst_stride) >= pixel_bytes;
      src_ok = 40'(src_stride) >= pixel_bytes;
      // The maps and group sizes only compare against DW, so they are computed in SW bits with
      // strides and sums saturated (at DW and DW + 1: min(x, DW) < DW and min(x, DW + 1) <= DW
      // say what x < DW and x <= DW do); the 32-bit chains they replace were most of the
      // DMA's carry logic in synthesis (docs/fpga.md, session 5).
      eff = dst_ok && !rows ? (dst_stride < 32'(DW) ? SW'(dst_stride) : SW'(DW)) : SW'(DW);
      src_c = src_stride < 32'(DW) ? SW'(src_stride) : SW'(DW);
      p = '0;
      b = '0;
      base = '0;  // min(p * src_stride, DW)
      for (int unsigned j = 0; j < DW; j++) begin
        map_p[j*PW+:PW] <= PW'(p);
        map_b[j*PW+:PW] <= PW'(b);
        map_src[j*LW+:LW] <= base + b < SW'(DW) ? LW'(base + b) : '0;
        if (b + 1'b1 == eff) begin
          b = '0;
          p = p + 1'b1;
          base = base + src_c < SW'(DW) ? base + src_c : SW'(DW);
        end else b = b + 1'b1;
      end
      kp = PW'(1);
      kd = PW'(1);
      // span = min(pixel_bytes + (k - 1) * stride, DW + 1) on each side (pixel_bytes <= DW here)
      dst_c = dst_stride <= 32'(DW) ? SW'(dst_stride) : SW'(DW + 1);
      src_c1 = src_stride <= 32'(DW) ? SW'(src_stride) : SW'(DW + 1);
      span_d = SW'(pixel_bytes);
      span_s = SW'(pixel_bytes);
      if (dst_ok)
        for (int unsigned k = 2; k <= DW; k++) begin
          span_d = span_d + dst_c <= SW'(DW) ? span_d + dst_c : SW'(DW + 1);
          span_s = span_s + src_c1 <= SW'(DW) ? span_s + src_c1 : SW'(DW + 1);
          if (span_d <= SW'(DW)) begin
            kp = PW'(k);
            if (src_ok && span_s <= SW'(DW)) kd = PW'(k);
          end
        end
      kmax_pad <= kp;
      kmax_data <= kd;
      // Address steps of a full group (padding groups exist on the load side only).
      grp_pad_sram_bytes <= 32'(kp) * dst_stride;
      grp_data_sram_bytes <= 32'(kd) * (IS_STORE ? src_stride : dst_stride);
      grp_data_dram_bytes <= 32'(kd) * (IS_STORE ? dst_stride : src_stride);
      // Pad pattern: pad_value repeated at element width (DW is a multiple of 4). Byte j is
      // byte j mod ebytes of an element, a mask since ebytes is a power of two (`j % ebytes`
      // was a 32-bit divider per byte in synthesis: docs/fpga.md, session 5).
      for (int unsigned j = 0; j < DW; j++) begin
        jb = 2'(j) & 2'(eb - 3'd1);
        if (IS_STORE) pad_pattern[8*j+:8] <= '0;
        else if (jb == 2'd0) pad_pattern[8*j+:8] <= w.pad_value[7:0];
        else if (jb == 2'd1) pad_pattern[8*j+:8] <= w.pad_value[15:8];
        else pad_pattern[8*j+:8] <= {8{w.pad_value[15]}};
      end
    end
  end

  always_comb begin
    logic [EXT_W-1:0] left;  // pixels of the region from mx on
    kmax_cur = kmax_pad;
    left = '0;
    ndata = '0;
    region_end = pad_w;
    kgroup = PW'(1);
    seg_dram = '0;
    row_end = 1'b0;
    if (row_mv) begin
      seg_dram = mv_dram_row;  // read only in part 1 (data)
      case (part)
        2'd0: begin
          seg_sram = mv_sram_row;
          seg_len = left_bytes;
          seg_pad = 1'b1;
        end
        2'd1: begin
          seg_sram = mv_sram_row + left_bytes;
          seg_len = row_bytes;
          seg_pad = 1'b0;
        end
        2'd2: begin
          seg_sram = mv_sram_row + left_bytes + row_bytes;
          seg_len = right_bytes;
          seg_pad = 1'b1;
        end
        default: begin
          seg_sram = mv_sram_row;
          seg_len = pad_row_bytes;
          seg_pad = 1'b1;
        end
      endcase
      row_end = part == 2'd3 || part == 2'd2 || (part == 2'd1 && pright == 0);
      seg_last = my == pad_h - 1 && row_end;
    end else begin
      seg_sram = px_sram;
      seg_len = 32'(ce);
      seg_pad = !(row_inside && px_inside);
      seg_dram = px_dram;
      // Groups: the left padding alone, then data pixels with the right padding after them.
      region_end = row_inside && mx < EXT_W'(pleft) ? EXT_W'(pleft) : pad_w;
      ndata = row_inside && px_inside ? EXT_W'(pleft) + EXT_W'(f.x_size) - mx : '0;
      kmax_cur = seg_pad ? kmax_pad : kmax_data;
      left = region_end - mx;
      kgroup = left < EXT_W'(kmax_cur) ? PW'(left) : kmax_cur;
      row_end = mx + EXT_W'(kgroup) == pad_w;
      seg_last = my == pad_h - 1 && row_end;
    end
    chunk = seg_len - off < 32'(DW) ? seg_len - off : 32'(DW);
    seg_end = off + 32'(DW) >= seg_len;
    // The next padded row's addresses (the DRAM row advances past data rows only).
    sram_row_next = mv_sram_row + 32'(sram_step_y);
    dram_row_next = row_inside ? mv_dram_row + 40'(dram_step_y) : mv_dram_row;
  end

  // Destination byte enables: bytes [0, chunk) of each of the group's kgroup pixels.
  // Both masks (and the shuffles below) are only used while the mover runs (st_mask/st_pad one
  // cycle later); they are zero otherwise so that an idle engine costs no per-byte work.
  logic [DW-1:0] chunk_mask;
  always_comb begin
    chunk_mask = '0;
    if (mv_active)
      for (int unsigned j = 0; j < DW; j++)
        chunk_mask[j] = map_p[j*PW+:PW] < kgroup && 32'(map_b[j*PW+:PW]) < chunk;
  end

  // Destination bytes that belong to padding pixels of the group.
  logic [DW-1:0] pad_mask;
  always_comb begin
    pad_mask = '0;
    if (!IS_STORE && mv_active)
      for (int unsigned j = 0; j < DW; j++)
        pad_mask[j] = seg_pad || (!row_mv && EXT_W'(map_p[j*PW+:PW]) >= ndata);
  end

  // The source window shuffled into destination order.
  function automatic logic [DW*8-1:0] shuffle(input logic [DW*8-1:0] src,
                                               input logic [DW*LW-1:0] map);
    for (int unsigned j = 0; j < DW; j++) shuffle[8*j+:8] = src[8*32'(map[j*LW+:LW])+:8];
  endfunction

  // Both sides read with one cycle of latency (load: the DRAM data port; store: the
  // scratchpad, whose reads are synchronous), so the write happens a cycle after the read: the
  // mover's step is registered (st_*) for its write in the next cycle.
  logic st_valid;
  logic [DW-1:0] st_pad;
  logic [31:0] st_addr;
  logic [39:0] st_dram;
  logic [DW-1:0] st_mask;

  // ---------------------------------------------------------------- gather mover
  // Per row: read its id (phase 0), form the row's DRAM address (1), move the row (2).
  logic g_mv;
  logic [1:0] g_ph;
  logic [11:0] g_my;
  logic [39:0] g_id_addr, g_row, g_table;
  logic [31:0] g_sram, g_off, g_chunk;
  logic [19:0] g_rows;  // table_rows
  logic g_move, g_row_end;
  logic [DW-1:0] g_mask;
  always_comb begin
    g_move = g_mv && g_ph == 2'd2;
    g_chunk = 32'(ce) - g_off < 32'(DW) ? 32'(ce) - g_off : 32'(DW);
    g_row_end = g_off + 32'(DW) >= 32'(ce);
    for (int unsigned j = 0; j < DW; j++) g_mask[j] = 32'(j) < g_chunk;
  end

  always_ff @(posedge clk) begin
    if (rst) g_mv <= 1'b0;
    else if (start) begin
      g_mv <= is_gather;
      g_ph <= 2'd0;
      g_my <= '0;
      g_id_addr <= gw.ids_addr;
      g_table <= gw.dram_addr;
      g_rows <= gw.table_rows;
      g_sram <= 32'(gw.sram_addr);
    end else if (g_mv) begin
      case (g_ph)
        2'd0: begin
          g_ph <= 2'd1;
          g_id_addr <= g_id_addr + 40'd4;
        end
        2'd1: begin : form_address
          logic signed [31:0] id;
          logic [31:0] row;
          id = rd_data[31:0];
          row = id < 0 ? 32'(id + 32'(g_rows)) : 32'(id);
          g_row <= g_table + 40'(row) * 40'(dram_step_y);
          g_off <= '0;
          g_ph <= 2'd2;
        end
        default: begin
          if (!g_row_end) g_off <= g_off + 32'(DW);
          else begin
            g_sram <= g_sram + 32'(sram_step_y);
            g_my <= g_my + 1'b1;
            if (g_my == f.y_size - 1) g_mv <= 1'b0;
            else g_ph <= 2'd0;
          end
        end
      endcase
    end
  end

  assign rd_en = !IS_STORE && ((mv_active && !seg_pad) || (g_mv && g_ph != 2'd1));
  assign rd_addr = g_mv ? (g_ph == 2'd0 ? g_id_addr : g_row + 40'(g_off)) : seg_dram + 40'(off);
  assign lw_en = !IS_STORE && st_valid;
  assign lw_sp = f.sp;
  assign lw_addr = st_addr;
  always_comb begin
    logic [DW*8-1:0] shuffled;
    lw_data = '0;
    shuffled = '0;
    if (!IS_STORE && st_valid) begin
      shuffled = shuffle(rd_data, map_src);
      for (int unsigned j = 0; j < DW; j++)
        lw_data[8*j+:8] = st_pad[j] ? pad_pattern[8*j+:8] : shuffled[8*j+:8];
    end
  end
  assign lw_mask = st_mask;
  assign sr_sp = f.sp;
  assign sr_addr = seg_sram + off;
  assign wr_en = IS_STORE && st_valid;
  assign wr_addr = st_dram;
  always_comb begin
    wr_data = '0;
    if (IS_STORE && st_valid) wr_data = shuffle(sr_data, map_src);
  end
  assign wr_strb = IS_STORE ? st_mask : '0;

  always_ff @(posedge clk) begin
    if (rst) begin
      mv_active <= 1'b0;
      st_valid <= 1'b0;
    end else if (start) begin
      mv_active <= insn[7:0] != tessel_isa_pkg::OP_NOP && !is_gather;
      part <= first_part(IS_STORE || w.pad_top == 0, IS_STORE ? '0 : w.pad_left);
      my <= '0;
      mx <= '0;
      off <= '0;
      mv_sram_row <= 32'(w.sram_addr);
      px_sram <= 32'(w.sram_addr);
      mv_dram_row <= w.dram_addr;
      px_dram <= w.dram_addr;
      st_valid <= 1'b0;
    end else begin
      st_valid <= mv_active || g_move;
      st_pad <= g_move ? '0 : pad_mask;
      st_addr <= g_move ? g_sram + g_off : seg_sram + off;
      st_dram <= seg_dram + 40'(off);
      st_mask <= g_move ? g_mask : chunk_mask;
      if (mv_active) begin
        if (!seg_end) off <= off + 32'(DW);
        else begin
          off <= '0;
          if (seg_last) mv_active <= 1'b0;
          else if (row_end) begin  // the next padded row
            my <= my + 1'b1;
            mx <= '0;
            mv_sram_row <= sram_row_next;
            px_sram <= sram_row_next;
            mv_dram_row <= dram_row_next;
            px_dram <= dram_row_next;
            if (row_mv)
              part <= first_part(my + 1'b1 >= EXT_W'(ptop)
                                 && my + 1'b1 < EXT_W'(ptop) + EXT_W'(f.y_size),
                                 pleft);
          end else if (row_mv) begin
            if (part == 2'd0) part <= 2'd1;
            else part <= 2'd2;  // part 1 with right padding
          end else begin
            mx <= mx + EXT_W'(kgroup);
            if (kgroup == kmax_cur) begin
              px_sram <= px_sram + (seg_pad ? grp_pad_sram_bytes : grp_data_sram_bytes);
              if (!seg_pad) px_dram <= px_dram + 40'(grp_data_dram_bytes);
            end else px_sram <= mv_sram_row + left_pad_sram_bytes;  // left padding ends: mx = pad_left
          end
        end
      end
    end
  end

  // ---------------------------------------------------------------- instruction
  always_ff @(posedge clk) begin
    if (rst) running <= 1'b0;
    else if (start) begin
      running <= 1'b1;
      is_nop <= insn[7:0] == tessel_isa_pkg::OP_NOP;
      f <= w;
      if (IS_STORE) begin  // no padding fields
        f.pad_top <= '0;
        f.pad_bottom <= '0;
        f.pad_left <= '0;
        f.pad_right <= '0;
        f.pad_value <= '0;
      end
      row_req <= w.dram_stride_x == 20'(w.c_size);
      row_mv <= w.dram_stride_x == 20'(w.c_size) && w.sram_stride_x == w.c_size;
    end else if (finish_now) running <= 1'b0;
  end

  assign busy = running;
  assign finish_now =
      running && (is_nop || (!gen_busy && !mv_active && !g_mv && !st_valid && dram_done));
endmodule
/* verilator lint_on UNUSEDSIGNAL */
