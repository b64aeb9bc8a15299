// Lowering of scheduled groups to ISA instructions and the DRAM image (docs/codegen.md):
// compile() and the Lowering's driver (checks, DRAM plan, host tail, every group in order). The
// parts live beside it: dram_plan.cpp, matrix_ops.cpp, vector_ops.cpp, group.cpp, sweep.cpp,
// host_part.cpp; compile_folder.cpp writes the result.
#include "codegen/codegen.hpp"

#include "codegen/lowering.hpp"
#include "compiler/quant/realize.hpp"
#include "isa/hw_target.hpp"
#include "support/cancel.hpp"
#include "support/diagnostic.hpp"

namespace tessel::codegen {

namespace detail {

int64_t field_max(std::string_view opcode, std::string_view field) {
  const isa::OpcodeSpec* spec = isa::find_opcode(opcode);
  for (const isa::FieldSpec& f : spec->fields())
    if (f.name == field) return f.max_value;
  return 0;
}

Result<std::string> Lowering::int_tensor(const std::string& name) const {
  if (graph_.has_tensor(name) && graph_.tensor(name).dtype != ir::DType::f32) return name;
  if (graph_.has_tensor(name + ".q") && graph_.tensor(name + ".q").dtype != ir::DType::f32)
    return name + ".q";
  return fail("tensor '" + name + "' has no integer form in the quantized graph");
}

Status Lowering::run(const std::map<std::string, std::vector<std::int32_t>>& input_values) {
  if (config_.matrix.input_bits != config_.matrix.weight_bits)
    return fail("codegen needs matrix.input_bits == matrix.weight_bits");
  for (const auto& [name, tensor] : graph_.tensors()) {
    if (tensor.constant || tensor.dtype == ir::DType::f32 || tensor.dtype == ir::DType::i32)
      continue;
    if (quant::dtype_bits(tensor.dtype) != act_bytes_ * 8)
      return fail("tensor '" + name + "' is " + std::to_string(quant::dtype_bits(tensor.dtype)) +
                  "-bit but '" + config_.name + "' computes on " + std::to_string(act_bytes_ * 8) +
                  "-bit data (quantize with bits: " + std::to_string(act_bytes_ * 8) + ")");
  }
  if (auto s = find_host_groups(); !s.ok()) return s;
  if (auto s = plan_dram(input_values); !s.ok()) return s;
  if (cancel_requested()) return cancelled();  // support/cancel.hpp
  if (auto s = plan_host(); !s.ok()) return s;
  out_.element_bytes = static_cast<int>(act_bytes_);
  for (const auto& [name, ir_name] : out_.io_tensors) {
    const DramRegion* region = region_of(name);
    const ir::Tensor& t = graph_.tensor(ir_name);
    IoTensor io;
    io.ir_tensor = ir_name;
    io.is_input = region->kind == RegionKind::Input;
    io.offset = region->offset;
    io.shape = graph_.has_tensor(name) ? graph_.tensor(name).shape : t.shape;
    io.token_ids = io.is_input && t.dtype == ir::DType::i32;
    if (!io.token_ids && (!t.quant || t.quant->scales.empty()))
      return fail("tensor '" + ir_name + "' has no quantization scale");
    if (!io.token_ids) {
      io.scale = static_cast<double>(t.quant->scales[0]);
      io.zero_point = t.quant->zero_points.empty() ? 0 : t.quant->zero_points[0];
    }
    out_.io[name] = io;
  }
  for (size_t g = 0; g < host_from_; ++g) {
    if (cancel_requested()) return cancelled();  // one group's lowering at most
    if (auto s = lower_group(g, schedule_.groups[g]); !s.ok()) return s;
  }
  // The last barrier's compute->load token has no load left to take it: a load nop does.
  if (work_before_) {
    isa::Nop drain;
    drain.engine = isa::Engine::kLoad;
    drain.pop_next = true;
    if (auto s = emitter_.emit(drain); !s.ok()) return s;
  }
  if (auto s = emitter_.finish(); !s.ok()) return s;
  out_.program = emitter_.take_program();
  return {};
}

}  // namespace detail

Result<CompiledProgram> compile(
    const ir::Graph& quantized, const sched::ScheduledNet& scheduled, const HwConfig& config,
    const std::map<std::string, std::vector<std::int32_t>>& input_values) {
  // The schedule carries the hardware view it was made for; it must be this config's.
  const sched::Machine& m = scheduled.machine;
  if (m.name.empty())
    return fail(
        "the schedule carries no hardware view (sched::ScheduledNet::machine, which "
        "schedule_graph sets)");
  if (m.name != config.name || m.matrix_rows != config.matrix.rows ||
      m.matrix_cols != config.matrix.cols || m.activation_bytes * 8 != config.matrix.input_bits ||
      m.weight_bytes * 8 != config.matrix.weight_bits || m.burst_bytes != config.dram.burst_bytes)
    return fail("the schedule was made for hardware '" + m.name + "' (" +
                std::to_string(m.matrix_rows) + "x" + std::to_string(m.matrix_cols) + ", " +
                std::to_string(m.activation_bytes * 8) + "-bit), not config '" + config.name +
                "' (" + std::to_string(config.matrix.rows) + "x" +
                std::to_string(config.matrix.cols) + ", " +
                std::to_string(config.matrix.input_bits) + "-bit)");
  for (size_t i = 0; i < config.scratchpads.size(); ++i) {
    const auto& pad = config.scratchpads[i];
    if (i >= m.scratchpads.size() || m.scratchpads[i].name != pad.name ||
        m.scratchpads[i].size_bytes != pad.size_bytes)
      return fail("the schedule was made for other scratchpads than config '" + config.name +
                  "' has (its scratchpad '" + pad.name + "': " + std::to_string(pad.size_bytes) +
                  " bytes)");
  }
  if (m.scratchpads.size() != config.scratchpads.size())
    return fail("the schedule was made for other scratchpads than config '" + config.name +
                "' has (" + std::to_string(m.scratchpads.size()) + " against " +
                std::to_string(config.scratchpads.size()) + ")");
  CompiledProgram out;
  out.layout = DramLayout(m.burst_bytes);
  detail::Lowering lowering(quantized, scheduled, config, out);
  if (auto s = lowering.run(input_values); !s.ok()) return s.failure();
  return out;
}

}  // namespace tessel::codegen
