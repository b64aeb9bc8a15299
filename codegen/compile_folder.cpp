// The compile folder (docs/codegen.md): compile.json (the layout map, per-group instruction
// counts and bytes moved), the files `tessel sim DIR` reads, and read_nhwc for reading tensors
// back from a DRAM image.
#include <filesystem>

#include "codegen/codegen.hpp"
#include "compiler/ir/json.hpp"
#include "isa/assembler.hpp"
#include "isa/hw_target.hpp"
#include "scheduler/schedule_json.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/json_text.hpp"

namespace tessel::codegen {

using std::int64_t;

std::vector<std::int32_t> read_nhwc(const std::vector<std::uint8_t>& dram, std::int64_t offset,
                                    std::int64_t channels, std::int64_t rows, std::int64_t cols,
                                    int element_bytes) {
  std::vector<std::int32_t> values(static_cast<size_t>(channels * rows * cols));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t y = 0; y < rows; ++y)
      for (int64_t x = 0; x < cols; ++x) {
        const int64_t at = offset + ((y * cols + x) * channels + c) * element_bytes;
        std::uint32_t v = 0;
        for (int i = 0; i < element_bytes; ++i)
          v |= static_cast<std::uint32_t>(dram[static_cast<size_t>(at + i)]) << (8 * i);
        std::int32_t signed_value = 0;
        if (element_bytes == 1)
          signed_value = static_cast<std::int8_t>(v);
        else if (element_bytes == 2)
          signed_value = static_cast<std::int16_t>(v);
        else
          signed_value = static_cast<std::int32_t>(v);
        values[static_cast<size_t>((c * rows + y) * cols + x)] = signed_value;
      }
  return values;
}

std::vector<std::int32_t> read_tensor(const std::vector<std::uint8_t>& dram, std::int64_t offset,
                                      const sched::Shape3& shape, std::size_t rank,
                                      int element_bytes, bool channels_last) {
  if (rank == 4 && !channels_last)
    return read_nhwc(dram, offset, shape.c, shape.h, shape.w, element_bytes);
  return read_nhwc(dram, offset, 1, shape.elements(), 1, element_bytes);
}

nlohmann::json compile_json(const CompiledProgram& compiled, const sched::ScheduledNet& scheduled) {
  nlohmann::json j;
  j["model"] = scheduled.schedule.model;
  j["config"] = scheduled.schedule.config;
  j["policy"] = scheduled.schedule.policy;
  j["objective"] = scheduled.schedule.objective;
  j["instructions"] = compiled.program.instructions.size();
  j["dram_image_bytes"] = compiled.layout.size_bytes();
  for (const DramRegion& r : compiled.layout.regions()) {
    nlohmann::json region = {{"name", r.name},
                             {"kind", to_string(r.kind)},
                             {"offset", r.offset},
                             {"size_bytes", r.size_bytes}};
    if (auto it = compiled.io_tensors.find(r.name); it != compiled.io_tensors.end())
      region["ir_tensor"] = it->second;
    j["layout"].push_back(region);
  }
  // Aliased concat inputs: the channel slice of a region each is stored in and loaded from.
  j["slices"] = nlohmann::json::array();
  for (const auto& [name, slice] : compiled.slices)
    j["slices"].push_back({{"tensor", name},
                           {"region", slice.region},
                           {"channel_offset", slice.channel_offset},
                           {"pixel_channels", slice.pixel_channels},
                           {"row_offset", slice.row_offset}});
  for (const GroupCode& g : compiled.groups) {
    j["groups"].push_back({{"ops", g.ops},
                           {"tiles", g.tiles},
                           {"instructions", g.instructions},
                           {"first_instruction", g.first_instruction},
                           {"end_instruction", g.end_instruction},
                           {"macs", g.macs},
                           {"predicted_cycles", g.predicted_cycles},
                           {"dram_bytes",
                            {{"weights_read", g.traffic.weights_read},
                             {"activations_read", g.traffic.activations_read},
                             {"activations_written", g.traffic.activations_written},
                             {"requant_tables_read", g.traffic.requant_table_read}}}});
    if (g.prefetch_instructions > 0)  // absent without prefetch: compile.json as before
      j["groups"].back()["prefetch_instructions"] = g.prefetch_instructions;
  }
  if (!compiled.host.empty()) {
    // The boundary: after the program, the host reads these integer tensors and runs the host
    // graph (host.json) on the golden executor (`tessel host DIR`, run by `tessel sim DIR`).
    nlohmann::json host;
    host["ops"] = compiled.host.ops;
    host["outputs"] = compiled.host.outputs;
    host["graph"] = "host.json";
    host["inputs"] = nlohmann::json::array();
    for (const HostInput& in : compiled.host.inputs)
      host["inputs"].push_back({{"name", in.name},
                                {"ir_tensor", in.ir_tensor},
                                {"offset", in.offset},
                                {"shape", in.shape},
                                {"bytes", in.bytes}});
    host["transfer_bytes"] = {{"to_host", compiled.host.transfer_bytes()}, {"from_host", 0}};
    // The schedule counts the host groups' loads and stores as DRAM traffic; the program does
    // not make them (its bytes are the schedule's minus these).
    sched::Traffic host_groups;
    for (const auto& gs : scheduled.schedule.groups) {
      bool host_group = !gs.ops.empty();
      for (int o : gs.ops) host_group &= scheduled.net.op(o).kind == sched::OpKind::Softmax;
      if (host_group) host_groups += gs.traffic;
    }
    host["schedule_bytes"] = {{"activations_read", host_groups.activations_read},
                              {"activations_written", host_groups.activations_written}};
    j["host"] = host;
  }
  j["compulsory_bytes"] = scheduled.schedule.compulsory_bytes;
  j["roofline_cycles"] = scheduled.schedule.roofline_cycles;
  j["lower_bound_cycles"] = scheduled.schedule.lower_bound_cycles;
  j["predicted_cycles"] = scheduled.schedule.cycles;
  j["macs"] = scheduled.schedule.macs;
  j["element_bytes"] = compiled.element_bytes;
  // Network inputs and outputs: where they are and how to (de)quantize them (tessel sim DIR).
  for (const auto& [name, io] : compiled.io) {
    j["io"].push_back({{"name", name},
                       {"ir_tensor", io.ir_tensor},
                       {"kind", io.is_input ? "input" : "output"},
                       {"offset", io.offset},
                       {"shape", io.shape},
                       {"scale", io.scale},
                       {"zero_point", io.zero_point},
                       {"token_ids", io.token_ids}});
  }
  const auto& t = compiled.traffic;
  const auto& p = scheduled.schedule.traffic;
  j["dram_bytes"] = {{"weights_read", t.weights_read},
                     {"activations_read", t.activations_read},
                     {"activations_written", t.activations_written},
                     {"requant_tables_read", t.requant_table_read},
                     {"instructions_read", instruction_fetch_bytes(compiled)}};
  j["predicted_dram_bytes"] = {{"weights_read", p.weights_read},
                               {"activations_read", p.activations_read},
                               {"activations_written", p.activations_written}};
  // The pipeline fills the schedule's instruction fetch in from the program (codegen.hpp).
  if (scheduled.schedule.instruction_fetch_bytes)
    j["predicted_dram_bytes"]["instructions_read"] = *scheduled.schedule.instruction_fetch_bytes;
  return j;
}

Status write_compile_folder(const CompiledProgram& compiled, const sched::ScheduledNet& scheduled,
                            const HwConfig& config, const std::string& folder,
                            const std::string& hw_yaml_text) {
  std::error_code ec;
  if (std::filesystem::exists(folder, ec) && !std::filesystem::is_directory(folder, ec))
    return fail(folder + ": is not a folder; refusing to write a compile folder there");
  std::filesystem::create_directories(folder, ec);
  if (ec) return fail(folder + ": cannot create the folder: " + ec.message());
  const std::filesystem::path dir(folder);
  // compile.json marks a complete folder: remove the old one before anything else changes.
  std::filesystem::remove(dir / "compile.json", ec);
  if (ec) return fail((dir / "compile.json").string() + ": cannot remove: " + ec.message());
  // Each file is written beside its final name and renamed over it once complete
  // (support/files.hpp), so an interrupted compile never leaves a truncated file behind.
  nlohmann::json manifest = nlohmann::json::object();
  auto write_text = [&](const std::string& name, std::string_view text) -> Status {
    try {
      files::write_file((dir / name).string(), text);
    } catch (const InputError& e) {
      return fail(e.diagnostics().front().str());
    }
    manifest[name] = {{"bytes", text.size()}, {"fnv1a64", files::content_hash(text)}};
    return {};
  };
  auto binary = isa::to_binary(compiled.program);
  if (!binary.ok()) return fail((dir / "program.bin").string() + ": " + binary.reason());
  const auto& bin = binary.value();
  const auto as_text = [](const auto& bytes) {
    return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  };
  if (auto s = write_text("program.bin", as_text(bin)); !s.ok()) return s;
  if (auto s = write_text("program.tasm",
                          isa::disassemble(compiled.program, isa::scratchpad_names(config)));
      !s.ok())
    return s;
  if (auto s = write_text("dram.bin", as_text(compiled.dram)); !s.ok()) return s;
  if (auto s = write_text(
          "schedule.json",
          json_text(sched::to_json(scheduled.schedule, scheduled.net, scheduled.machine), 2) +
              "\n");
      !s.ok())
    return s;
  if (!compiled.host.empty())
    if (auto s = write_text("host.json", json_text(ir::to_json(compiled.host.graph), 1) + "\n");
        !s.ok())
      return s;
  if (!hw_yaml_text.empty())
    if (auto s = write_text("hw.yaml", hw_yaml_text); !s.ok()) return s;
  nlohmann::json j = compile_json(compiled, scheduled);
  j["files"] = manifest;
  return write_text("compile.json", json_text(j, 2) + "\n");
}

}  // namespace tessel::codegen
