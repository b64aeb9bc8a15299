// DRAM planning (docs/codegen.md, "DRAM layout"): the regions of activations, concat slices,
// views and weights, the initial image (inputs NHWC, weights in the order the loads walk,
// biases, requant tables), and the DMA addressing of a tensor's box in its region.
#include <algorithm>

#include "codegen/lowering.hpp"
#include "compiler/quant/realize.hpp"
#include "scheduler/pixel_gather.hpp"
#include "support/diagnostic.hpp"

namespace tessel::codegen::detail {

Status Lowering::plan_dram(const std::map<std::string, std::vector<std::int32_t>>& input_values) {
  if (auto s = plan_activation_regions(); !s.ok()) return s;
  if (auto s = plan_weight_regions(); !s.ok()) return s;
  if (auto s = plan_table_regions(); !s.ok()) return s;
  if (auto s = plan_embedding_regions(); !s.ok()) return s;
  out_.dram.assign(static_cast<size_t>(out_.layout.size_bytes()), 0);
  if (auto s = write_input_values(input_values); !s.ok()) return s;
  if (auto s = write_dram_constants(); !s.ok()) return s;
  if (auto s = write_weight_values(); !s.ok()) return s;
  if (auto s = write_embedding_values(); !s.ok()) return s;
  return write_table_values();
}

Status Lowering::plan_activation_regions() {
  for (size_t t = 0; t < net_.tensors.size(); ++t)
    tensor_index_[net_.tensors[t].name] = static_cast<int>(t);
  // Activation regions: every tensor some group loads or stores, in tensor order; the inputs
  // of an aliased Concat live in channel slices of its output's region.
  std::vector<bool> in_dram(net_.tensors.size(), false);
  for (size_t g = host_from_; g < schedule_.groups.size(); ++g) {
    for (int t : schedule_.groups[g].inputs)
      if (net_.op(net_.tensor(t).producer).kind != sched::OpKind::Softmax)
        in_dram[static_cast<size_t>(t)] = true;  // the program stores it; the host reads it
  }
  for (size_t g = 0; g < host_from_; ++g) {
    const sched::GroupSchedule& gs = schedule_.groups[g];
    if (gs.dram_view && net_.op(gs.ops.front()).concat_rows) {
      if (auto s = place_row_concat(net_.op(gs.ops.front())); !s.ok()) return s;
      continue;
    }
    if (gs.dram_view && net_.op(gs.ops.front()).kind == sched::OpKind::Concat) {
      const sched::Op& concat = net_.op(gs.ops.front());
      for (size_t i = 0; i < concat.inputs.size(); ++i) {
        const int x = concat.inputs[i];
        const sched::Tensor& xt = net_.tensor(x);
        auto refuse = [&](const std::string& why) {
          return fail("concat '" + concat.name + "': input '" + xt.name + "' " + why +
                      " (the schedule treats the concat as a DRAM view)");
        };
        if (net_.op(xt.producer).kind == sched::OpKind::Input)
          return refuse("is a network input; it cannot be stored into the concat's slice");
        if (xt.network_output)
          return refuse("is a network output; it cannot live in the concat's slice");
        if (sched::gather_of(net_, x) != nullptr)
          return refuse("is a pixel gather (a DRAM view of '" +
                        net_.tensor(net_.op(xt.producer).inputs[0]).name +
                        "'); it cannot be stored into the concat's slice");
        if (auto it = slice_of_.find(x); it != slice_of_.end())
          return refuse("is already a slice of concat '" +
                        net_.op(net_.tensor(it->second.first).producer).name +
                        "'; a tensor can be stored into one concat slice only");
        slice_of_[x] = {concat.output, concat.concat_offsets[i]};
      }
      continue;
    }
    if (gs.dram_view && net_.op(gs.ops.front()).kind != sched::OpKind::Concat &&
        sched::gather_of(net_, net_.op(gs.ops.front()).inputs[0]) != nullptr)
      return fail("op '" + net_.op(gs.ops.front()).name + "' (" +
                  sched::to_string(net_.op(gs.ops.front()).kind) + ") is a DRAM view of '" +
                  net_.tensor(net_.op(gs.ops.front()).inputs[0]).name +
                  "', a pixel gather: a view of a gather is not supported by codegen yet");
    if (gs.dram_view && net_.op(gs.ops.front()).kind == sched::OpKind::Slice) {
      // A channel slice lies in its input's region, as a concat's input in the concat's.
      const sched::Op& slice = net_.op(gs.ops.front());
      slice_of_[slice.output] = {slice.inputs[0], slice.channel_offset};
      if (slice.row_offset != 0) row_of_[slice.output] = slice.row_offset;
      continue;
    }
    if (gs.dram_view) {
      const sched::Op& view = net_.op(gs.ops.front());
      if (view.kind != sched::OpKind::Reshape)
        return fail("op '" + view.name + "' (" + sched::to_string(view.kind) +
                    " as a DRAM view) is not supported by codegen yet");
      std::string source = net_.tensor(view.inputs[0]).name;
      if (auto it = alias_.find(source); it != alias_.end()) source = it->second;
      alias_[net_.tensor(view.output).name] = source;
      continue;
    }
    for (int t : gs.inputs) in_dram[static_cast<size_t>(t)] = true;
    for (int t : gs.outputs) in_dram[static_cast<size_t>(t)] = true;
  }
  for (const auto& [view, source] : alias_) {
    const int t = tensor_index_.at(source);
    if (slice_of_.count(t))
      return fail("reshape '" + net_.op(net_.tensor(tensor_index_.at(view)).producer).name +
                  "': its input '" + source +
                  "' lies in a concat's channel slice (a view of a view is not supported)");
  }
  for (const auto& [view, source] : alias_) {  // a view read or stored: its source's bytes
    if (!in_dram[static_cast<size_t>(tensor_index_.at(view))]) continue;
    in_dram[static_cast<size_t>(tensor_index_.at(source))] = true;
  }
  for (size_t t = 0; t < net_.tensors.size(); ++t) {
    if (!in_dram[t] || !slice_of_.count(static_cast<int>(t))) continue;
    in_dram[t] = false;  // its bytes are in the region of the concat it is a slice of
    in_dram[static_cast<size_t>(root_of(static_cast<int>(t)).first)] = true;
  }
  for (size_t t = 0; t < net_.tensors.size(); ++t) {
    if (alias_.count(net_.tensors[t].name)) continue;
    if (!in_dram[t]) continue;
    const sched::Tensor& tensor = net_.tensors[t];
    const bool is_input = net_.op(tensor.producer).kind == sched::OpKind::Input;
    const RegionKind kind = is_input                ? RegionKind::Input
                            : tensor.network_output ? RegionKind::Output
                                                    : RegionKind::Activations;
    auto placed = out_.layout.add(tensor.name, kind, tensor.shape.elements() * act_bytes_);
    if (!placed.ok()) return placed.failure();
    if (kind == RegionKind::Input || kind == RegionKind::Output) {
      auto name = int_tensor(tensor.name);
      if (!name.ok()) return name.failure();
      out_.io_tensors[tensor.name] = name.value();
    }
  }
  for (const auto& alias : alias_) {
    const std::string& view = alias.first;
    const auto& source = alias.second;
    const int t = [&] {
      for (size_t i = 0; i < net_.tensors.size(); ++i)
        if (net_.tensors[i].name == view) return static_cast<int>(i);
      return -1;
    }();
    if (t >= 0 && net_.tensor(t).network_output) {
      auto name = int_tensor(view);
      if (!name.ok()) return name.failure();
      out_.io_tensors[view] = name.value();
      out_.views[view] = source;
    }
  }
  if (auto s = place_row_slice_regions(); !s.ok()) return s;
  for (const auto& [tensor, unused] : slice_of_) {
    const DramPlace place = place_of(tensor);
    out_.slices[net_.tensor(tensor).name] = {place.region->name, place.channel_offset,
                                             place.pixel_channels, place.row_offset};
  }
  return {};
}

Status Lowering::place_row_concat(const sched::Op& concat) {
  // A row Concat (the KV cache append, docs/codegen.md "KV cache"; ViT's class token): input i
  // lies at rows [concat_offsets[i], ...) of the output's region; a network input or a constant
  // is written there, any other input stored there by the group that makes it.
  for (size_t i = 0; i < concat.inputs.size(); ++i) {
    const int x = concat.inputs[i];
    if (slice_of_.count(x))
      return fail("concat '" + concat.name + "': input '" + net_.tensor(x).name +
                  "' is already a slice of another concat (a tensor lies in one place only)");
    slice_of_[x] = {concat.output, 0};
    row_of_[x] = concat.concat_offsets[i];
  }
  return {};
}

Status Lowering::place_row_slice_regions() {
  // A network input or output that is a row slice is a region within its concat's region, so
  // that the image writes it and the run reads it where it lies.
  for (const auto& [tensor, row] : row_of_) {
    const sched::Tensor& t = net_.tensor(tensor);
    const bool constant = sched::is_dram_constant(net_, tensor);
    const bool is_input = net_.op(t.producer).kind == sched::OpKind::Input && !constant;
    if (!is_input && !t.network_output && !constant) continue;
    const DramPlace place = place_of(tensor);
    if (place.region == nullptr)
      return fail("tensor '" + t.name + "': the concat it lies in has no DRAM region");
    const std::string what = constant ? "constant" : is_input ? "network input" : "network output";
    if (place.channel_offset != 0 || place.pixel_channels != t.shape.c)
      return fail(what + " '" + t.name +
                  "' is a part of its rows in DRAM (a channel slice); it cannot be read or " +
                  "written there");
    const int64_t offset = place.first_pixel() * place.pixel_channels * act_bytes_;
    // A constant is written by the DRAM image as a weight is (write_dram_constants).
    const RegionKind kind = constant   ? RegionKind::Weights
                            : is_input ? RegionKind::Input
                                       : RegionKind::Output;
    auto placed = out_.layout.add_within(t.name, kind, place.region->name, offset,
                                         t.shape.elements() * act_bytes_);
    if (!placed.ok()) return placed.failure();
    if (constant) continue;
    auto name = int_tensor(t.name);
    if (!name.ok()) return name.failure();
    out_.io_tensors[t.name] = name.value();
  }
  return {};
}

Status Lowering::plan_weight_regions() {
  // Weight regions, compact (no block padding; the DMA pads to the matrix layout), one after
  // another per output-channel slice (docs/codegen.md, "DRAM layout").
  for (size_t g = 0; g < host_from_; ++g) {
    const sched::GroupSchedule& gs = schedule_.groups[g];
    for (int index : gs.ops) {
      const sched::Op& op = net_.op(index);
      if (op.kind != sched::OpKind::Conv && op.kind != sched::OpKind::Gemm) continue;
      channel_tiles_[index] = gs.channel_tiles;
      if (hidden_reducer(gs) == index) channel_tiles_[index] = 1;  // its chunks split the inputs
      if (idle_in_tile(gs, index, 1)) channel_tiles_[index] = 1;   // a prefix op: whole, once
      if (gs.weight_sweep) {                                       // each conv its own slice count
        const auto pos =
            static_cast<size_t>(std::find(gs.ops.begin(), gs.ops.end(), index) - gs.ops.begin());
        if (pos < gs.op_slices.size()) channel_tiles_[index] = gs.op_slices[pos];
      }
      auto m = matrix_op(op);
      if (!m.ok()) return m.failure();
      if (auto r = out_.layout.add("w:" + op.name, RegionKind::Weights,
                                   m.value().weight_count() * weight_bytes_);
          !r.ok())
        return r.failure();
      if (m.value().bias != nullptr) {
        if (auto r = out_.layout.add("b:" + op.name, RegionKind::Weights, m.value().co * 4);
            !r.ok())
          return r.failure();
      }
      if (auto r = out_.layout.add("rq:" + op.name, RegionKind::Weights, m.value().co * 8); !r.ok())
        return r.failure();
    }
  }
  return {};
}

Status Lowering::write_input_values(
    const std::map<std::string, std::vector<std::int32_t>>& input_values) {
  // Contents: inputs NHWC, weights in the block order the loads walk, biases, tables.
  for (const auto& [sched_name, ir_name] : out_.io_tensors) {
    const DramRegion* region = region_of(sched_name);
    if (region->kind != RegionKind::Input) continue;
    auto it = input_values.find(ir_name);
    if (it == input_values.end()) return fail("no value given for network input '" + ir_name + "'");
    const auto& shape = graph_.tensor(ir_name).shape;      // NCHW; other ranks row-major
    if (graph_.tensor(ir_name).dtype == ir::DType::i32) {  // token ids: int32, as the gather reads
      if (static_cast<int64_t>(it->second.size()) != ir::element_count(shape))
        return fail("network input '" + ir_name + "': " + std::to_string(it->second.size()) +
                    " ids for " + std::to_string(ir::element_count(shape)) + " tokens");
      for (size_t i = 0; i < it->second.size(); ++i)
        write_bytes(region->offset + 4 * static_cast<int64_t>(i), it->second[i], 4);
      continue;
    }
    const bool nchw = shape.size() == 4;
    const int64_t c = nchw ? shape[1] : 1, wd = nchw ? shape[3] : 1;
    const int64_t h = nchw ? shape[2] : ir::element_count(shape);
    if (static_cast<int64_t>(it->second.size()) != c * h * wd)
      return fail("network input '" + ir_name + "': " + std::to_string(it->second.size()) +
                  " values for " + std::to_string(c * h * wd) + " elements");
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < wd; ++x)
          write_bytes(region->offset + ((y * wd + x) * c + ci) * act_bytes_,
                      it->second[static_cast<size_t>((ci * h + y) * wd + x)],
                      static_cast<int>(act_bytes_));
  }
  return {};
}

Status Lowering::write_dram_constants() {
  // The quantized graph's row Concat input (at the Concat's scale), row-major as the IR holds
  // it: a token tensor's [S][d] is its rows of channels (NHWC).
  for (size_t g = 0; g < host_from_; ++g) {
    const sched::GroupSchedule& gs = schedule_.groups[g];
    const sched::Op& concat = net_.op(gs.ops.front());
    if (!gs.dram_view || !concat.concat_rows) continue;
    for (size_t i = 0; i < concat.inputs.size(); ++i) {
      if (!sched::is_dram_constant(net_, concat.inputs[i])) continue;
      const sched::Tensor& t = net_.tensor(concat.inputs[i]);
      auto q = quantized_op(concat);
      if (!q.ok()) return q.failure();
      if (q.value()->inputs.size() != concat.inputs.size())
        return fail("concat '" + concat.name + "': its quantized form has other inputs");
      const ir::Tensor& c = graph_.tensor(q.value()->inputs[i]);
      if (static_cast<int64_t>(c.int_values.size()) != t.shape.elements())
        return fail("constant '" + t.name + "' ('" + c.name +
                    "' in the quantized graph): " + std::to_string(c.int_values.size()) +
                    " integer values for " + std::to_string(t.shape.elements()) + " elements");
      const DramRegion* region = out_.layout.find(t.name);
      if (region == nullptr) return fail("constant '" + t.name + "' has no DRAM region");
      for (size_t k = 0; k < c.int_values.size(); ++k)
        write_bytes(region->offset + static_cast<int64_t>(k) * act_bytes_, c.int_values[k],
                    static_cast<int>(act_bytes_));
    }
  }
  return {};
}

Status Lowering::write_weight_values() {
  for (size_t g = 0; g < host_from_; ++g) {
    for (int index : schedule_.groups[g].ops) {
      const sched::Op& op = net_.op(index);
      if (op.kind != sched::OpKind::Conv && op.kind != sched::OpKind::Gemm) continue;
      const MatrixOp m = matrix_op(op).value();
      const int64_t chunk = chunk_blocks_of(schedule_.groups[g], op, m);
      int64_t at = out_.layout.find("w:" + op.name)->offset;
      for (const sched::Interval slice : slices_of(index)) {
        // The slice's column blocks (a grouped conv's units each from a block of their own).
        const std::vector<sched::ColumnBlock> blocks = sched::column_blocks(slice, m.unit(), cols_);
        if (m.depthwise) {
          for (const sched::ColumnBlock& block : blocks)
            for (int64_t y = 0; y < m.kh; ++y)  // [cb][ky][kx][c < cn]
              for (int64_t x = 0; x < m.kw; ++x)
                for (int64_t c = 0; c < block.count; ++c, at += weight_bytes_)
                  write_bytes(at, m.weight(block.first + c, 0, y, x),
                              static_cast<int>(weight_bytes_));
          continue;
        }
        if (m.block_diagonal) {  // [ocb][group of the block][ky][kx][r < in_pg][c < out_pg]
          const int64_t out_pg = m.co / m.groups;
          for (const sched::ColumnBlock& block : blocks) {
            const int64_t c0 = block.first, cn = block.count;
            for (int64_t j = 0; j * out_pg < cn; ++j)
              for (int64_t y = 0; y < m.kh; ++y)
                for (int64_t x = 0; x < m.kw; ++x)
                  for (int64_t r = 0; r < m.ci; ++r, at += out_pg * weight_bytes_)
                    write_weight_row(at, m, c0 + j * out_pg, out_pg, r, y, x);
          }
          continue;
        }
        // [chunk][ocb][icb of the chunk][ky][kx][r < rn][c < cn]: a reduction chunk is one
        // contiguous run (one chunk, the whole reduction, unless the schedule chunks a Gemm).
        const int64_t ic_blocks = ceil_div(m.ci, rows_);
        for (int64_t b0 = 0; b0 < ic_blocks; b0 += chunk) {
          for (const sched::ColumnBlock& block : blocks) {
            const int64_t c0 = block.first, cn = block.count;
            for (int64_t ib = b0; ib < std::min(ic_blocks, b0 + chunk); ++ib) {
              const int64_t rn = std::min(rows_, m.ci - ib * rows_);
              for (int64_t y = 0; y < m.kh; ++y)
                for (int64_t x = 0; x < m.kw; ++x)
                  for (int64_t r = 0; r < rn; ++r, at += cn * weight_bytes_)
                    write_weight_row(at, m, c0, cn, ib * rows_ + r, y, x);
            }
          }
        }
      }
      if (const DramRegion* b = out_.layout.find("b:" + op.name)) {
        for (int64_t o = 0; o < m.co; ++o)
          write_bytes(b->offset + o * 4, m.bias->int_values[static_cast<size_t>(o)], 4);
      }
      const auto uses = graph_.consumers(m.op->outputs[0]);
      if (uses.size() != 1 || graph_.op(uses[0].op).kind != ir::OpKind::Requantize)
        return fail("op '" + op.name + "': its accumulator is not read by one Requantize");
      const ir::Op& rq = graph_.op(uses[0].op);
      const auto params =
          quant::requantize_params(graph_.tensor(m.op->outputs[0]), graph_.tensor(rq.outputs[0]));
      const int64_t table = out_.layout.find("rq:" + op.name)->offset;
      for (int64_t o = 0; o < m.co; ++o) {
        const auto& p = params[params.size() == 1 ? 0 : static_cast<size_t>(o)];
        write_bytes(table + o * 8, p.multiplier, 4);
        write_bytes(table + o * 8 + 4, p.shift, 4);
      }
    }
  }
  return {};
}

void Lowering::write_weight_row(int64_t at, const MatrixOp& m, int64_t o0, int64_t count, int64_t i,
                                int64_t y, int64_t x) {
  const int bytes = static_cast<int>(weight_bytes_);
  // A token-wise Linear without transB stores its weights [ci][co] (a MatMul by a constant, HF
  // GPT-2's Conv1D), not the conv's [co][ci]: the general MatrixOp::weight.
  if (m.s2d.channels > 0 || m.gemm || (m.token_linear && !m.trans_b)) {
    for (int64_t c = 0; c < count; ++c)
      write_bytes(at + c * weight_bytes_, m.weight(o0 + c, i, y, x), bytes);
    return;
  }
  // A plain conv's [co][ci][kh][kw] values: output channel o0 + c lies `stride` values after o0
  // (MatrixOp::weight, without its per-value branches: 25 M weights for ResNet-50).
  const int64_t stride = m.ci * m.kh * m.kw;
  const std::int32_t* src = m.weights->int_values.data() + ((o0 * m.ci + i) * m.kh + y) * m.kw + x;
  for (int64_t c = 0; c < count; ++c, src += stride)
    write_bytes(at + c * weight_bytes_, *src, bytes);
}

void Lowering::write_bytes(int64_t offset, int64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out_.dram[static_cast<size_t>(offset + i)] =
        static_cast<std::uint8_t>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
  }
}

const DramRegion* Lowering::region_of(const std::string& name) const {
  auto it = alias_.find(name);
  return out_.layout.find(it == alias_.end() ? name : it->second);
}

std::pair<int, int64_t> Lowering::root_of(int tensor) const {
  int64_t offset = 0;
  for (auto it = slice_of_.find(tensor); it != slice_of_.end(); it = slice_of_.find(tensor)) {
    offset += it->second.second;  // nested concats: the offsets add up
    tensor = it->second.first;
  }
  return {tensor, offset};
}

Lowering::DramPlace Lowering::place_of(int tensor) const {
  const auto [root, offset] = root_of(tensor);
  DramPlace place;
  for (int t = tensor; slice_of_.count(t); t = slice_of_.at(t).first)
    if (auto it = row_of_.find(t); it != row_of_.end()) place.row_offset += it->second;
  place.region = region_of(net_.tensor(root).name);
  place.row_pixels = net_.tensor(root).shape.w;
  place.channel_offset = offset;
  // A Reshape output keeps its own shape over its source's bytes (a whole-tensor view).
  place.pixel_channels = net_.tensor(root).shape.c;
  return place;
}

template <class Dma>
void Lowering::set_dma_box(Dma& dma, int tensor, const Box& box, const TileView& view) const {
  const DramPlace place = place_of(tensor);
  const int64_t width = net_.tensor(tensor).shape.w;  // a slice has its concat's rows and columns
  dma.sp = static_cast<std::uint32_t>(view.sp);
  dma.elem = act_elem_;
  dma.sram_addr = static_cast<std::uint32_t>(view.addr(box.h.b, box.w.b, box.c.b));
  dma.dram_addr = static_cast<std::uint64_t>(
      place.region->offset +
      ((place.first_pixel() + box.h.b * width + box.w.b) * place.pixel_channels +
       place.channel_offset + box.c.b) *
          act_bytes_);
  dma.y_size = static_cast<std::uint32_t>(box.h.size());
  dma.x_size = static_cast<std::uint32_t>(box.w.size());
  dma.c_size = static_cast<std::uint32_t>(box.c.size());
  dma.dram_stride_y = static_cast<std::uint32_t>(width * place.pixel_channels);
  dma.dram_stride_x = static_cast<std::uint32_t>(place.pixel_channels);
  dma.sram_stride_y = static_cast<std::uint32_t>(view.stride_y());
  dma.sram_stride_x = static_cast<std::uint32_t>(view.pixel_elems);
  // More rows of one column than a DMA's y_size holds (swin_v2's 4,096 tokens): the same rows as
  // y_size blocks of x_size rows each (x steps one row, y one block), the same bytes and runs.
  const int64_t rows = box.h.size(), max_y = field_max("load", "y_size");
  if (rows > max_y && box.w.size() == 1) {
    int64_t block = ceil_div(rows, max_y);
    while (block <= field_max("load", "x_size") && rows % block != 0) ++block;
    if (rows % block == 0 && block <= field_max("load", "x_size")) {
      dma.y_size = static_cast<std::uint32_t>(rows / block);
      dma.x_size = static_cast<std::uint32_t>(block);
      dma.dram_stride_x = static_cast<std::uint32_t>(width * place.pixel_channels);
      dma.dram_stride_y = static_cast<std::uint32_t>(block * width * place.pixel_channels);
      dma.sram_stride_x = static_cast<std::uint32_t>(view.stride_y());
      dma.sram_stride_y = static_cast<std::uint32_t>(block * view.stride_y());
    }
  }
}

Status Lowering::append_activation_loads(std::vector<isa::Instruction>& loads, int tensor,
                                         const Box& box, const TileView& view) const {
  if (const sched::Op* gather = sched::gather_of(net_, tensor))
    return append_gather_loads(loads, *gather, tensor, box, view);
  isa::Load l;
  l.kind = isa::Traffic::kActivations;
  set_dma_box(l, tensor, box, view);
  const sched::Tensor& t = net_.tensor(tensor);
  const int64_t f = t.space_to_depth;
  if (f == 1) {
    loads.push_back(l);
    return {};
  }
  // Channel (f a + b) C + k of pixel (y, x) is channel k of stored pixel (f y + a, f x + b): for
  // each a, stored row f y + a from column f x is the pixels' channels [f a C, f (a + 1) C), in
  // order.
  const int64_t c = t.shape.c / (f * f), stored_w = f * t.shape.w;
  if (box.c.b != 0 || box.c.e != t.shape.c)
    return fail("tensor '" + t.name + "' (space-to-depth) is loaded without all its channels");
  const DramPlace place = place_of(tensor);
  for (int64_t a = 0; a < f; ++a) {
    isa::Load g = l;
    g.sram_addr = static_cast<std::uint32_t>(view.addr(box.h.b, box.w.b, f * a * c));
    g.dram_addr = static_cast<std::uint64_t>(
        place.region->offset + ((f * box.h.b + a) * stored_w + f * box.w.b) * c * act_bytes_);
    g.c_size = static_cast<std::uint32_t>(f * c);
    g.dram_stride_y = static_cast<std::uint32_t>(f * stored_w * c);
    g.dram_stride_x = static_cast<std::uint32_t>(f * c);
    loads.push_back(g);
  }
  return {};
}

// A gather's output lies in its input's region, pixel p at the input's pixel_source[p]: each of
// the decomposition's DMAs reads `rows` runs of `cols` consecutive input pixels into the tile's
// pixels along x (or, in a tile one pixel wide, down its rows).
Status Lowering::append_gather_loads(std::vector<isa::Instruction>& loads, const sched::Op& gather,
                                     int tensor, const Box& box, const TileView& view) const {
  const DramPlace place = place_of(gather.inputs[0]);
  const int64_t width = net_.tensor(tensor).shape.w;
  for (const sched::GatherDma& d : sched::gather_dmas(gather.pixel_source, width, box)) {
    const int64_t x_step = d.along_x ? view.pixel_elems : view.stride_y();
    const int64_t y_step = d.dy * view.stride_y() + d.dx * view.pixel_elems;
    const int64_t source_step = d.source_step * place.pixel_channels;
    if (x_step >= (int64_t{1} << 16) || y_step >= (int64_t{1} << 20) ||
        source_step >= (int64_t{1} << 24))
      return fail("gather '" + gather.name + "': a load of tensor '" + net_.tensor(tensor).name +
                  "' steps " + std::to_string(x_step) + " / " + std::to_string(y_step) +
                  " scratchpad and " + std::to_string(source_step) +
                  " DRAM elements, beyond the load's stride fields (16, 20 and 24 bits)");
    isa::Load l;
    l.kind = isa::Traffic::kActivations;
    l.sp = static_cast<std::uint32_t>(view.sp);
    l.elem = act_elem_;
    l.sram_addr = static_cast<std::uint32_t>(view.addr(d.y, d.x, box.c.b));
    l.dram_addr = static_cast<std::uint64_t>(
        place.region->offset +
        ((place.first_pixel() + d.source) * place.pixel_channels + place.channel_offset + box.c.b) *
            act_bytes_);
    l.y_size = static_cast<std::uint32_t>(d.rows);
    l.x_size = static_cast<std::uint32_t>(d.cols);
    l.c_size = static_cast<std::uint32_t>(box.c.size());
    l.dram_stride_y = static_cast<std::uint32_t>(d.rows > 1 ? source_step : 0);
    l.dram_stride_x = static_cast<std::uint32_t>(place.pixel_channels);
    l.sram_stride_y = static_cast<std::uint32_t>(d.rows > 1 ? y_step : 0);
    l.sram_stride_x = static_cast<std::uint32_t>(x_step);
    loads.push_back(l);
  }
  return {};
}

isa::Store Lowering::store_of(int tensor, const Box& box, const TileView& view) {
  isa::Store st;
  // A slice of a network output's region is network output bytes too.
  st.kind = place_of(tensor).region->kind == RegionKind::Output ? isa::Traffic::kOutputs
                                                                : isa::Traffic::kActivations;
  set_dma_box(st, tensor, box, view);
  out_.traffic.activations_written += box.elements() * act_bytes_;
  return st;
}

}  // namespace tessel::codegen::detail
