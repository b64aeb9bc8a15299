// Synthesis stand-in for bb_leaf.sv: the same ports, a black box.
(* blackbox *)
module bb_leaf (
    input  logic [7:0]  a,
    input  logic [7:0]  b,
    output logic [15:0] p
);
endmodule
