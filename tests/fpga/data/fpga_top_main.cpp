// Verilator driver for tessel_fpga_top: reset, run until `pass` or `fault` (or a cycle bound),
// print one line "cycles N done D fault F pass P", exit 0 only when pass is 1.
// Run it in the `tessel fpga --out` folder: the $readmemh paths are relative to it.
#include <cstdio>
#include <memory>

#include "Vtessel_fpga_top.h"
#include "verilated.h"

int main(int argc, char** argv) {
  auto context = std::make_unique<VerilatedContext>();
  context->commandArgs(argc, argv);
  auto top = std::make_unique<Vtessel_fpga_top>(context.get());
  constexpr long kMaxCycles = 100000;
  top->clk = 0;
  top->clk2x = 0;
  top->rst_n = 0;
  long cycles = 0;
  // clk2x runs at twice clk's rate and rises with it (the scratchpads' block RAMs): per cycle,
  // the edge of both, clk2x low, clk2x's edge alone in the middle, clk2x low again.
  for (; cycles < kMaxCycles && !top->pass && !top->fault; ++cycles) {
    if (cycles == 4) top->rst_n = 1;
    top->clk = 1;
    top->clk2x = 1;
    top->eval();
    top->clk2x = 0;
    top->eval();
    top->clk = 0;
    top->clk2x = 1;
    top->eval();
    top->clk2x = 0;
    top->eval();
  }
  std::printf("cycles %ld done %d fault %d pass %d\n", cycles, top->done, top->fault, top->pass);
  top->final();
  return top->pass ? 0 : 1;
}
