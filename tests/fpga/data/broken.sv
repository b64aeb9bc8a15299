// A module with a syntax error on line 4, for the located-error test of the Yosys step.
module broken (input logic clk, output logic q);
  always_ff @(posedge clk)
    q <= ;
endmodule
