// The Embedding (docs/codegen.md "Token ids"): its table's DRAM region, rows padded to whole
// bursts so that ISA `gather` can take any row (docs/isa.md), and the gathers that fill the
// output's tile in the tile's load phase from the ids in DRAM.
#include "codegen/lowering.hpp"
#include "scheduler/weight_loads.hpp"

namespace tessel::codegen::detail {

namespace {

std::string embedding_region(const sched::Op& op) {
  return "emb:" + op.name;
}

}  // namespace

int64_t Lowering::embedding_row_stride_bytes(const sched::Op& op) const {
  return ceil_div(op.gather_row_bytes, machine_.burst_bytes) * machine_.burst_bytes;
}

Result<const ir::Tensor*> Lowering::embedding_table_of(const sched::Op& op) const {
  const auto id = graph_.find_op(op.name);
  if (!id) return fail("op '" + op.name + "' is not in the quantized graph");
  const ir::Op& ir_op = graph_.op(*id);
  if (ir_op.kind != ir::OpKind::Embedding || ir_op.inputs.size() != 2)
    return fail("op '" + op.name + "' is not an Embedding in the quantized graph");
  const ir::Tensor& table = graph_.tensor(ir_op.inputs[1]);
  const int64_t d = op.gather_row_bytes / act_bytes_;
  if (table.shape.size() != 2 || table.shape[0] != op.table_rows || table.shape[1] != d ||
      static_cast<int64_t>(table.int_values.size()) != op.table_rows * d)
    return fail("op '" + op.name + "': its table '" + table.name + "' is not the quantized [" +
                std::to_string(op.table_rows) + ", " + std::to_string(d) +
                "] the schedule gathers from (quantize the model first)");
  return &table;
}

Status Lowering::plan_embedding_regions() {
  for (size_t g = 0; g < host_from_; ++g)
    for (int index : schedule_.groups[g].ops) {
      const sched::Op& op = net_.op(index);
      if (op.kind != sched::OpKind::Embedding) continue;
      if (auto table = embedding_table_of(op); !table.ok()) return table.failure();
      if (auto r = out_.layout.add(embedding_region(op), RegionKind::Weights,
                                   op.table_rows * embedding_row_stride_bytes(op));
          !r.ok())
        return r.failure();
    }
  return {};
}

Status Lowering::write_embedding_values() {
  for (size_t g = 0; g < host_from_; ++g)
    for (int index : schedule_.groups[g].ops) {
      const sched::Op& op = net_.op(index);
      if (op.kind != sched::OpKind::Embedding) continue;
      const ir::Tensor* table = embedding_table_of(op).value();  // checked when planned
      const int64_t at = out_.layout.find(embedding_region(op))->offset;
      const int64_t d = op.gather_row_bytes / act_bytes_, stride = embedding_row_stride_bytes(op);
      for (int64_t v = 0; v < op.table_rows; ++v)
        for (int64_t k = 0; k < d; ++k)
          write_bytes(at + v * stride + k * act_bytes_,
                      table->int_values[static_cast<size_t>(v * d + k)],
                      static_cast<int>(act_bytes_));
    }
  return {};
}

Status Lowering::append_embedding_gathers(const sched::GroupSchedule& gs, int ids,
                                          const std::vector<Box>& need,
                                          std::vector<isa::Instruction>& loads) {
  for (int index : gs.ops) {
    const sched::Op& op = net_.op(index);
    if (op.kind != sched::OpKind::Embedding || op.inputs[0] != ids) continue;
    const Box& box = need[static_cast<size_t>(op.output)];
    if (box.empty()) continue;
    const int64_t d = op.gather_row_bytes / act_bytes_;
    if (box.c.b != 0 || box.c.e != d || box.w.size() != 1)
      return fail("embedding '" + op.name + "': a tile with part of its rows (channels [" +
                  std::to_string(box.c.b) + ", " + std::to_string(box.c.e) + ") of " +
                  std::to_string(d) + ")");
    auto view = view_of(gs, op.output, box);
    if (!view.ok()) return view.failure();
    const DramRegion* ids_region = region_of(net_.tensor(ids).name);
    if (ids_region == nullptr)
      return fail("embedding '" + op.name + "': its ids have no DRAM region");
    const int64_t table = out_.layout.find(embedding_region(op))->offset;
    for (int64_t y = box.h.b; y < box.h.e; y += sched::kGatherRows) {
      const int64_t rows = std::min(sched::kGatherRows, box.h.e - y);
      isa::Gather g;
      g.sp = static_cast<std::uint32_t>(view.value().sp);
      g.elem = act_elem_;
      g.kind = isa::Traffic::kWeights;
      g.sram_addr = static_cast<std::uint32_t>(view.value().addr(y, box.w.b, 0));
      g.dram_addr = static_cast<std::uint64_t>(table);
      g.y_size = static_cast<std::uint32_t>(rows);
      g.c_size = static_cast<std::uint32_t>(d);
      g.dram_stride_y = static_cast<std::uint32_t>(embedding_row_stride_bytes(op) / act_bytes_);
      g.sram_stride_y = static_cast<std::uint32_t>(view.value().stride_y());
      g.table_rows = static_cast<std::uint32_t>(op.table_rows);
      g.ids_addr = static_cast<std::uint64_t>(ids_region->offset + 4 * y);
      loads.push_back(g);
      out_.traffic.activations_read += 4 * rows;
      out_.traffic.weights_read += rows * op.gather_row_bytes;
    }
  }
  return {};
}

Status Lowering::emit_embedding(const sched::GroupSchedule&, const sched::Op&,
                                const std::vector<Box>&, std::vector<isa::Instruction>&) {
  return {};  // the tile's gathers filled the output in its load phase
}

}  // namespace tessel::codegen::detail
