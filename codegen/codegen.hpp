// Code generation: lowers a quantized graph and its Schedule to an ISA program and a DRAM image.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/dram_layout.hpp"
#include "compiler/ir/graph.hpp"
#include "configs/hw_config.hpp"
#include "isa/program.hpp"
#include "scheduler/driver.hpp"
#include "support/result.hpp"

namespace tessel::codegen {

/// DRAM bytes the program's DMAs request, by the scheduler's traffic classes.
struct CodeTraffic {
  std::int64_t weights_read = 0;  ///< conv weights + biases (what the scheduler counts)
  std::int64_t activations_read = 0;
  std::int64_t activations_written = 0;
  /// Requant (M, r) tables, 8 B per output channel per conv, loaded with kind=weights: real
  /// data the scheduler's byte model leaves out (docs/codegen.md).
  std::int64_t requant_table_read = 0;
};

/// Per-group figures of the generated code (compile.json "groups").
struct GroupCode {
  std::vector<std::string> ops;  ///< scheduler op names
  std::int64_t tiles = 0;
  std::map<std::string, std::int64_t> instructions;  ///< by mnemonic
  /// The group's instructions are [first_instruction, end_instruction) of the program.
  std::int64_t first_instruction = 0, end_instruction = 0;
  CodeTraffic traffic;                ///< the bytes this group's DMAs request
  std::int64_t macs = 0;              ///< useful MACs (the scheduler's count)
  std::int64_t predicted_cycles = 0;  ///< the scheduler's cost model
  /// Cross-group weight prefetch: instructions of the NEXT group (its first weight loads) that
  /// lie in this group's range, right after this group's last load.
  std::int64_t prefetch_instructions = 0;
};

/// A network input or output in DRAM and its quantization (for `tessel sim DIR`).
struct IoTensor {
  std::string ir_tensor;  ///< the integer IR tensor the region holds ("fc.q")
  bool is_input = false;
  std::int64_t offset = 0;          ///< DRAM byte offset (NHWC data)
  std::vector<std::int64_t> shape;  ///< the float tensor's IR shape (NCHW, or N x K)
  double scale = 1;                 ///< real = (q - zero_point) * scale
  std::int32_t zero_point = 0;
  /// Token ids (an int32 graph input only an Embedding reads): int32 values, 4 bytes each, as
  /// given (no scale); every other tensor holds NHWC codes of the program's element bytes.
  bool token_ids = false;
};

/// A tensor stored in a channel slice of another tensor's DRAM region: an input of a Concat the
/// schedule treats as a DRAM view (its producer stores into the slice, its readers load from it).
struct ChannelSlice {
  std::string region;               ///< the DRAM region (the outermost concat's output)
  std::int64_t channel_offset = 0;  ///< the tensor's channel 0 within each stored pixel
  std::int64_t pixel_channels = 0;  ///< channels per stored pixel of the region
  std::int64_t row_offset = 0;      ///< the tensor's row 0 within the region (a row Concat)
};

/// An integer tensor the host reads from the final DRAM: a host op's input that the program
/// stores (docs/codegen.md, "Host ops").
struct HostInput {
  std::string name;                 ///< scheduler tensor name ("fc2")
  std::string ir_tensor;            ///< the integer IR tensor ("fc2.q"), the host graph's input
  std::int64_t offset = 0;          ///< DRAM byte offset (NHWC data)
  std::vector<std::int64_t> shape;  ///< the IR tensor's shape (NCHW, or N x K)
  std::int64_t bytes = 0;           ///< what the host reads over the DRAM interface
};

/// Ops the accelerator lacks (Softmax), run after the program by the golden executor on the
/// integer tensors the program stored. The program ends at the last accelerator group.
struct HostPart {
  std::vector<std::string> ops;      ///< scheduler op names, in schedule order
  std::vector<HostInput> inputs;     ///< what crosses the boundary, accelerator -> host
  std::vector<std::string> outputs;  ///< network outputs the host computes (IR tensor names)
  /// The quantized graph's ops from `inputs` to `outputs` (Dequantize, Softmax, ...), with the
  /// inputs as graph inputs: `host.json` in the compile folder.
  ir::Graph graph{"host"};
  std::int64_t transfer_bytes() const {
    std::int64_t n = 0;
    for (const auto& in : inputs) n += in.bytes;
    return n;
  }
  bool empty() const { return ops.empty(); }
};

/// A compiled network: everything `tessel sim` needs, plus the map of where things are.
struct CompiledProgram {
  int element_bytes = 1;  ///< activation element bytes in DRAM (1 or 2)
  /// Network inputs and outputs by scheduler tensor name (= the float IR tensor name).
  std::map<std::string, IoTensor> io;
  isa::Program program;
  std::vector<std::uint8_t> dram;  ///< the initial DRAM image (layout.size_bytes() bytes)
  DramLayout layout{64};
  std::vector<GroupCode> groups;
  CodeTraffic traffic;
  /// Network inputs/outputs: scheduler tensor name -> the integer IR tensor (e.g. "relu.q")
  /// whose values the region holds, NHWC.
  std::map<std::string, std::string> io_tensors;
  /// Reshape outputs that are network outputs: their data is the viewed tensor's region.
  std::map<std::string, std::string> views;
  /// Inputs of aliased Concats, by scheduler tensor name: where their bytes lie.
  std::map<std::string, ChannelSlice> slices;
  /// Host ops after the program (empty when the accelerator runs the whole network).
  HostPart host;
};

/// Lowers `scheduled` (a schedule of the float graph the quantized graph came from) with the
/// integer parameters of `quantized` to a program for `config`. `input_values` holds the
/// quantized network input(s) by integer IR tensor name (e.g. "input.q"), NCHW, as the golden
/// executor computes them; they are written into the DRAM image.
///
/// Supported (docs/codegen.md): groups of Conv (dense or depthwise) and Gemm (a conv over its
/// whole input) with bias and per-channel requantize, Relu/Clip, residual Add, max/avg/global
/// pools, Concat (a DRAM view when alone in its group, an on-chip copy otherwise), Reshape
/// views; row, column and output-channel tiles; recomputed or cached halos;
/// resident or streamed weights; double buffering. Softmax groups at the end of the schedule run
/// on the host (`CompiledProgram::host`). Anything else fails naming the group and op.
Result<CompiledProgram> compile(
    const ir::Graph& quantized, const sched::ScheduledNet& scheduled, const HwConfig& config,
    const std::map<std::string, std::vector<std::int32_t>>& input_values);

/// The DRAM bytes the accelerator reads to fetch `compiled`'s program: each instruction once,
/// isa::kInstructionBytes each (what the simulator counts as TrafficKind::kInstructions). Known
/// only here, after code generation: the layers above write it into the schedule's prediction
/// (sched::Schedule::instruction_fetch_bytes; docs/energy.md, "Instruction fetch").
inline std::int64_t instruction_fetch_bytes(const CompiledProgram& compiled) {
  return static_cast<std::int64_t>(compiled.program.instructions.size()) *
         static_cast<std::int64_t>(isa::kInstructionBytes);
}

/// compile.json: the layout map, per-group instruction counts and the bytes moved.
nlohmann::json compile_json(const CompiledProgram& compiled, const sched::ScheduledNet& scheduled);

/// Reads a network tensor (NHWC in DRAM, `channels` x `rows` x `cols`, `element_bytes` wide)
/// back as NCHW integers.
std::vector<std::int32_t> read_nhwc(const std::vector<std::uint8_t>& dram, std::int64_t offset,
                                    std::int64_t channels, std::int64_t rows, std::int64_t cols,
                                    int element_bytes);

/// Reads a tensor of graph rank `rank` back in its graph order: a 4-D (NCHW) tensor from NHWC,
/// any other rank, or a 4-D one with its channels last (`channels_last`,
/// sched::Tensor::ir_channels_last), as stored (row-major: token tensors [1, S, d], a Gemm's
/// [N, K], an NHWC map [1, H, W, C]).
std::vector<std::int32_t> read_tensor(const std::vector<std::uint8_t>& dram, std::int64_t offset,
                                      const sched::Shape3& shape, std::size_t rank,
                                      int element_bytes, bool channels_last = false);

/// Writes program.bin, program.tasm, dram.bin, schedule.json and compile.json into `folder`
/// (created if missing), host.json (the host part's graph) when there are host ops, and
/// hw.yaml when `hw_yaml_text` is not empty. Fails naming the file that cannot be written.
/// compile.json is the completion marker: an old one is removed first and the new one, listing
/// every sibling's size and FNV-1a hash under "files", is written last, so a folder whose
/// compile was interrupted has no compile.json and a mixed folder fails the hashes
/// (sim/inputs.hpp verify_compile_folder).
Status write_compile_folder(const CompiledProgram& compiled, const sched::ScheduledNet& scheduled,
                            const HwConfig& config, const std::string& folder,
                            const std::string& hw_yaml_text = "");

}  // namespace tessel::codegen
