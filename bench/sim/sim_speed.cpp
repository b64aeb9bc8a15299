// Simulation speed: simulated cycles and instructions per wall-second on a large generated
// double-buffered conv program, in full and timing-only mode. A benchmark, not a test.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "sim/simulator.hpp"

namespace {

using tessel::isa::Word;
namespace isa = tessel::isa;

Word encode_word(const isa::Instruction& instruction) {
  auto word = isa::encode(instruction);
  if (!word.ok()) {
    std::fprintf(stderr, "generator bug: %s\n", word.reason().c_str());
    std::exit(1);
  }
  return word.value();
}

/// `tiles` tiles of an 8x8-pixel, 3x3, C-in = rows, C-out = cols conv (padding 1) on a unified
/// buffer, double-buffered: per tile a load, a conv, a requant and a store, synchronised by
/// tokens (load->compute data ready, compute->load buffer free, compute->store result ready,
/// store->compute result buffer free). Input tiles cycle through 64 DRAM slots.
std::vector<Word> generate(const tessel::HwConfig& config, std::uint32_t tiles) {
  const std::uint32_t rows = static_cast<std::uint32_t>(config.matrix.rows);
  const std::uint32_t cols = static_cast<std::uint32_t>(config.matrix.cols);
  const std::uint32_t in_bytes = 8 * 8 * rows, acc_bytes = 8 * 8 * cols * 4,
                      out_bytes = 8 * 8 * cols;
  const std::uint32_t weights = 0, in0 = 16384, acc0 = in0 + 2 * in_bytes,
                      out0 = acc0 + 2 * acc_bytes;
  std::vector<Word> program;
  isa::Load w;
  w.kind = isa::Traffic::kWeights;
  w.sram_addr = weights;
  w.dram_addr = 0;
  w.c_size = 9 * rows * cols;
  program.push_back(encode_word(w));
  isa::Vcfg v;
  v.mult_a = 1u << 30;
  v.shift = 38;
  v.lo = -128;
  v.hi = 127;
  program.push_back(encode_word(v));
  for (std::uint32_t i = 0; i < tiles; ++i) {
    const std::uint32_t b = i % 2;
    isa::Load in;
    in.sram_addr = in0 + b * in_bytes;
    in.dram_addr = 0x100000 + (i % 64) * in_bytes;
    in.c_size = in_bytes;
    in.pop_next = i >= 2;
    in.push_next = true;
    isa::Conv conv;
    conv.in_addr = in0 + b * in_bytes;
    conv.w_addr = weights;
    conv.acc_addr = acc0 + b * acc_bytes;
    conv.out_h = conv.out_w = 8;
    conv.kh = conv.kw = 3;
    conv.pad_top = conv.pad_bottom = conv.pad_left = conv.pad_right = 1;
    conv.in_stride_x = rows;
    conv.in_stride_y = 8 * rows;
    conv.acc_stride_x = cols;
    conv.acc_stride_y = 8 * cols;
    conv.pop_prev = true;
    conv.push_prev = true;
    isa::Requant rq;
    rq.src_addr = acc0 + b * acc_bytes;
    rq.dst_addr = out0 + b * out_bytes;
    rq.y_size = rq.x_size = 8;
    rq.c_size = cols;
    rq.src_stride_x = rq.dst_stride_x = cols;
    rq.src_stride_y = rq.dst_stride_y = 8 * cols;
    rq.pop_next = i >= 2;
    rq.push_next = true;
    isa::Store st;
    st.kind = isa::Traffic::kOutputs;
    st.sram_addr = out0 + b * out_bytes;
    st.dram_addr = 0x200000 + (i % 64) * out_bytes;
    st.c_size = out_bytes;
    st.pop_prev = true;
    st.push_prev = true;
    for (const isa::Instruction& x :
         {isa::Instruction{in}, isa::Instruction{conv}, isa::Instruction{rq}, isa::Instruction{st}})
      program.push_back(encode_word(x));
  }
  program.push_back(encode_word(isa::Finish{}));
  return program;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string hw = argc > 1 ? argv[1] : TESSEL_SOURCE_DIR "/configs/hw/edge-small.yaml";
  const std::uint32_t tiles = argc > 2 ? static_cast<std::uint32_t>(std::atoi(argv[2])) : 25000;
  const tessel::HwConfig config = tessel::load_hw_config(hw);
  const std::vector<Word> program = generate(config, tiles);
  std::printf("{\"config\": \"%s\", \"instructions\": %zu, \"runs\": [\n", config.name.c_str(),
              program.size());
  for (const bool timing_only : {true, false}) {
    tessel::sim::DramImage image;
    image.size_bytes = 4u << 20;
    if (!timing_only) image.bytes.assign(image.size_bytes, 1);
    tessel::sim::SimOptions options;
    options.timing_only = timing_only;
    const auto start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock();
    auto result = tessel::sim::simulate(config, program, std::move(image), options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // CPU seconds too: on a shared machine wall time measures the load, not the simulator.
    const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    if (!result.ok() || !result.value().report.ok()) {
      std::fprintf(
          stderr, "run failed: %s\n",
          result.ok() ? result.value().report.fault->str().c_str() : result.reason().c_str());
      return 1;
    }
    const auto& report = result.value().report;
    std::printf(
        "  {\"mode\": \"%s\", \"cycles\": %llu, \"wall_s\": %.3f, \"cpu_s\": %.3f, "
        "\"cycles_per_wall_s\": %.4g, \"instructions_per_wall_s\": %.4g, "
        "\"cycles_per_cpu_s\": %.4g, \"instructions_per_cpu_s\": %.4g, "
        "\"mac_utilisation\": %.3f}%s\n",
        timing_only ? "timing-only" : "full", static_cast<unsigned long long>(report.cycles),
        seconds, cpu_seconds, static_cast<double>(report.cycles) / seconds,
        static_cast<double>(report.instructions_executed) / seconds,
        static_cast<double>(report.cycles) / cpu_seconds,
        static_cast<double>(report.instructions_executed) / cpu_seconds, report.mac_utilisation,
        timing_only ? "," : "");
  }
  std::printf("]}\n");
  return 0;
}
