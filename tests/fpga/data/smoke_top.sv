// A tiny stand-in design for the flow tests: a ROM read by $readmemh, a counter and a multiplier,
// so that one Yosys run maps a RAMB18E1, CARRY4s, a DSP48E1, LUTs and FFs in a few seconds.
module smoke_top #(
    parameter MEM_FILE = "smoke_rom.mem"
) (
    input  logic        clk,
    input  logic        rst,
    input  logic [7:0]  a,
    input  logic [7:0]  b,
    output logic [31:0] q
);
  logic [31:0] rom[0:511];
  initial $readmemh(MEM_FILE, rom);
  logic [8:0] addr;
  logic [31:0] count;
  logic [31:0] rom_q;
  logic [15:0] prod;
  always_ff @(posedge clk) begin
    if (rst) begin
      count <= '0;
      addr  <= '0;
    end else begin
      count <= count + 32'd1;
      addr  <= addr + 9'd1;
    end
    rom_q <= rom[addr];
    prod  <= a * b;
  end
  assign q = count ^ rom_q ^ {16'd0, prod};
endmodule
