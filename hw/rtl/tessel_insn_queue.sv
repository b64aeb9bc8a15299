// One engine's instruction queue (docs/timing.md "Fetch and dispatch"): a registered FIFO of
// DEPTH dispatched-but-not-started instructions with their program index. An entry pushed in
// cycle d is at the head from d + 1 (the decode cycle); a pop at the engine's start frees its
// slot for a push in the same cycle (the top checks room as count - pop < DEPTH).
module tessel_insn_queue #(
    parameter int unsigned DEPTH = tessel_cfg_pkg::INSN_QUEUE_DEPTH
) (
    input  logic         clk,
    input  logic         rst,
    input  logic         push,
    input  logic [255:0] push_word,
    input  logic [31:0]  push_index,
    input  logic         pop,
    output logic         head_valid,
    output logic [255:0] head_word,
    output logic [31:0]  head_index,
    output logic [16:0]  count
);
  localparam int unsigned PW = DEPTH > 1 ? $clog2(DEPTH) : 1;
  logic [255:0] words[DEPTH];
  logic [31:0] indices[DEPTH];
  logic [PW-1:0] rd, wr;

  function automatic logic [PW-1:0] bump(input logic [PW-1:0] p);
    bump = (32'(p) == DEPTH - 1) ? '0 : p + 1'b1;
  endfunction

  assign head_valid = count != 0;
  assign head_word = words[rd];
  assign head_index = indices[rd];

  always_ff @(posedge clk) begin
    if (rst) begin
      rd <= '0;
      wr <= '0;
      count <= '0;
    end else begin
      if (push) begin
        words[wr] <= push_word;
        indices[wr] <= push_index;
        wr <= bump(wr);
      end
      if (pop) rd <= bump(rd);
      count <= count + 17'(push) - 17'(pop);
    end
  end
endmodule
