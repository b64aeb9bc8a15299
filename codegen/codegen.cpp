// Lowering of scheduled groups to ISA instructions and the DRAM image (docs/codegen.md).
#include "codegen/codegen.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <variant>

#include "codegen/emitter.hpp"
#include "compiler/ir/json.hpp"
#include "compiler/quant/realize.hpp"
#include "isa/assembler.hpp"
#include "isa/hw_target.hpp"
#include "scheduler/machine.hpp"
#include "scheduler/schedule_json.hpp"
#include "scheduler/shape.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/int_ops.hpp"
#include "support/json_text.hpp"

namespace tessel::codegen {

namespace {

using sched::Box;
using std::int64_t;

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// Where an activation tile lives on chip: buffer offset, the box it holds, HWC strides.
struct TileView {
  int sp = 0;
  int64_t offset = 0;
  Box box;
  int64_t pixel_elems = 0;  ///< x stride in elements
  int64_t element_bytes = 1;
  int64_t stride_y() const { return box.w.size() * pixel_elems; }
  /// Byte address of element (y, x, c) in absolute tensor coordinates.
  int64_t addr(int64_t y, int64_t x, int64_t c) const {
    return offset + ((y - box.h.b) * stride_y() + (x - box.w.b) * pixel_elems + (c - box.c.b)) *
                        element_bytes;
  }
};

/// A one-operand vector `add` (a = b; the `vcfg` before it sets the map): the box of `rows x
/// cols x channels` elements at (y, x, in_c) of `in` to (y, x, out_c) of `out`. Copies (halo
/// rows, concat slices) and ReLU/Clip are this instruction.
isa::Add unary_add(const TileView& in, const TileView& out, isa::Elem elem, int64_t y, int64_t x,
                   int64_t in_c, int64_t out_c, int64_t rows, int64_t cols, int64_t channels) {
  isa::Add a;
  a.a_sp = a.b_sp = static_cast<std::uint32_t>(in.sp);
  a.dst_sp = static_cast<std::uint32_t>(out.sp);
  a.elem = elem;
  a.a_addr = a.b_addr = static_cast<std::uint32_t>(in.addr(y, x, in_c));
  a.dst_addr = static_cast<std::uint32_t>(out.addr(y, x, out_c));
  a.y_size = static_cast<std::uint32_t>(rows);
  a.x_size = static_cast<std::uint32_t>(cols);
  a.c_size = static_cast<std::uint32_t>(channels);
  a.a_stride_y = a.b_stride_y = static_cast<std::uint32_t>(in.stride_y());
  a.a_stride_x = a.b_stride_x = static_cast<std::uint32_t>(in.pixel_elems);
  a.dst_stride_y = static_cast<std::uint32_t>(out.stride_y());
  a.dst_stride_x = static_cast<std::uint32_t>(out.pixel_elems);
  return a;
}

/// The largest value field `field` of opcode `opcode` takes, from the generated ISA table
/// (isa/isa_table.yaml), so limits follow the table rather than literals here.
int64_t field_max(std::string_view opcode, std::string_view field) {
  const isa::OpcodeSpec* spec = isa::find_opcode(opcode);
  for (const isa::FieldSpec& f : spec->fields())
    if (f.name == field) return f.max_value;
  return 0;
}

/// A Conv or Gemm as the matrix unit sees it. A Gemm is a 1x1 conv of one output pixel over
/// its input as stored: the whole `C x H x W` input is one pixel of `K = C*H*W` channels in
/// HWC order (the bytes of the NHWC tensor in DRAM), so reduction index `k = (y*W + x)*C + c`
/// maps to ONNX's NCHW flatten index `c*H*W + y*W + x` (docs/codegen.md, "Gemm").
struct MatrixOp {
  const ir::Op* op = nullptr;            ///< the integer IR Conv or Gemm
  int64_t co = 0, ci = 0;                ///< output channels, input channels (per group; Gemm: K)
  int64_t kh = 1, kw = 1;                ///< kernel (Gemm: 1 x 1)
  int64_t in_c = 1, in_h = 1, in_w = 1;  ///< Gemm: the stored input's shape (K = product)
  bool depthwise = false;
  bool gemm = false;
  bool trans_b = false;
  const ir::Tensor* weights = nullptr;
  const ir::Tensor* bias = nullptr;  ///< nullptr without one
  /// A conv over a space-to-depth input (sched::SpaceToDepthConv; channels 0: none): ci, kh
  /// and kw are the rewritten conv's, `weights` the original's.
  sched::SpaceToDepthConv s2d;
  /// Weights as stored and loaded: co x ci x kh x kw (Gemm: K x N).
  int64_t weight_count() const { return co * ci * kh * kw; }
  /// Integer weight of output channel o, input channel i, kernel position (y, x).
  std::int32_t weight(int64_t o, int64_t i, int64_t y, int64_t x) const {
    if (s2d.channels > 0) {  // channel (2a + b) C + k at (y, x): original k at (2y + a, 2x + b)
      const int64_t parity = i / s2d.channels, k = i % s2d.channels;
      const int64_t oy = 2 * y + parity / 2 - s2d.shift_h, ox = 2 * x + parity % 2 - s2d.shift_w;
      if (oy < 0 || oy >= s2d.kernel_h || ox < 0 || ox >= s2d.kernel_w) return 0;
      return weights->int_values[static_cast<size_t>(
          ((o * s2d.channels + k) * s2d.kernel_h + oy) * s2d.kernel_w + ox)];
    }
    if (!gemm) return weights->int_values[static_cast<size_t>(((o * ci + i) * kh + y) * kw + x)];
    const int64_t pixel = i / in_c, c = i % in_c;                       // HWC order on chip
    const int64_t k = (c * in_h + pixel / in_w) * in_w + pixel % in_w;  // NCHW flatten order
    return weights->int_values[static_cast<size_t>(trans_b ? o * ci + k : k * co + o)];
  }
};

/// Where one output-channel slice of a matrix op's packed weights, bias and requant table live
/// on chip. A channel-tiled op has one slice per channel tile, each packed on its own (whole
/// R x C blocks from the slice's first channel), so a tile's conv needs no column offset.
struct SliceParams {
  sched::Interval channels;
  int64_t dram_weights = 0;  ///< DRAM offset of the slice's compact weights
  int64_t w_addr = 0, bias_addr = 0, table_addr = 0;
};

/// A matrix op's on-chip parameters: the scratchpad and every slice.
struct ConvParams {
  int sp = 0;
  bool has_bias = false;
  std::vector<SliceParams> slices;
  /// Double-buffered streamed weights: the second copy's byte distance from the first (0 when
  /// the weights have one copy).
  int64_t copy1_delta = 0;
  /// Input blocks per reduction chunk (docs/codegen.md, "Gemm reduction chunks"): all of the
  /// op's input blocks, unless a streamed Gemm's slice exceeds its weight buffer. Then each
  /// slice's blocks go through the buffer one chunk at a time, accumulated in place.
  int64_t chunk_blocks = 1;
  int64_t chunks = 1;  ///< reduction chunks per slice
};

/// One load-then-compute step of a tile. A tile is one phase, or, with Gemm reduction chunks,
/// one phase per chunk: chunk k's weights load once chunk k-1's conv has read the buffer.
struct Phase {
  std::vector<isa::Instruction> loads, compute;
};

class Lowering {
 public:
  Lowering(const ir::Graph& graph, const sched::ScheduledNet& scheduled, const HwConfig& config,
           CompiledProgram& out)
      : graph_(graph),
        net_(scheduled.net),
        schedule_(scheduled.schedule),
        config_(config),
        machine_(sched::machine_from_config(config)),
        out_(out),
        emitter_(config.queues.token_fifo_depth) {
    rows_ = config.matrix.rows;
    cols_ = config.matrix.cols;
    act_bytes_ = config.matrix.input_bits / 8;
    weight_bytes_ = config.matrix.weight_bits / 8;
    act_elem_ = act_bytes_ == 1 ? isa::Elem::kI8 : isa::Elem::kI16;
    weight_elem_ = weight_bytes_ == 1 ? isa::Elem::kI8 : isa::Elem::kI16;
  }

  Status run(const std::map<std::string, std::vector<std::int32_t>>& input_values);

 private:
  Result<std::string> int_tensor(const std::string& sched_name) const;
  /// Finds the host tail: the groups from the first Softmax group on, which must all be
  /// Softmax-only (docs/codegen.md, "Host ops"). Sets host_from_.
  Status find_host_groups();
  /// Fills out_.host: the boundary tensors (regions planned) and the host graph.
  Status plan_host();
  Status plan_dram(const std::map<std::string, std::vector<std::int32_t>>& input_values);
  /// The Conv or Gemm `op` with its integer weights; fails naming what is unsupported.
  Result<MatrixOp> matrix_op(const sched::Op& op) const;
  /// Output-channel slices of a matrix op: its group's channel tiles (1 when not tiled).
  std::vector<sched::Interval> slices_of(int op_index) const;
  /// Input blocks per reduction chunk of matrix op `op` in group `gs` (ConvParams::chunk_blocks).
  int64_t chunk_blocks_of(const sched::GroupSchedule& gs, const sched::Op& op,
                          const MatrixOp& m) const;
  Status place_conv(const sched::GroupSchedule& gs, const sched::Op& op);
  Status lower_group(size_t index, const sched::GroupSchedule& gs);
  /// A weight sweep (GroupSchedule::weight_sweep, docs/codegen.md "Weight sweeps"): one tile;
  /// each conv's slices in turn through the ping-pong pair `w:sweep`/`w:sweep#1`, the block's
  /// elementwise ops per slice, stores at the end.
  Status lower_sweep_group(size_t index, const sched::GroupSchedule& gs);
  /// Slice addresses of a sweep conv: every slice at the pair's first copy (copy1_delta to the
  /// second).
  Status place_sweep_conv(const sched::GroupSchedule& gs, const sched::Op& op);
  /// Appends the per-group figures (instruction counts, bytes moved) of the instructions
  /// emitted since `before` / `traffic_before`.
  void record_group(const sched::GroupSchedule& gs, size_t before,
                    const CodeTraffic& traffic_before);
  Result<TileView> view_of(const sched::GroupSchedule& gs, int tensor, const Box& box) const;
  /// Loads of `op`'s weights, bias and requant table: slice `slice`, or all slices when -1.
  /// With reduction chunks, reduction chunk `chunk` of the slice's blocks only, and the bias and
  /// table with chunk 0.
  Status emit_conv_loads(const sched::Op& op, int slice, std::vector<isa::Instruction>& loads,
                         int64_t chunk = 0);
  /// The conv and requant instructions of `op`, appended to the tile's last phase; each further
  /// reduction chunk opens a phase (its weight loads, then its conv).
  Status emit_conv(const sched::GroupSchedule& gs, size_t pos, const sched::Op& op,
                   const std::vector<Box>& need, std::vector<Phase>& phases);
  Status emit_eltwise(const sched::GroupSchedule& gs, const sched::Op& op,
                      const std::vector<Box>& need, std::vector<isa::Instruction>& code);
  /// The integer clamp of the Relu or Clip op `ir_op` ([0, qmax] or clip_bounds).
  intops::ClampRange activation_clamp(const ir::Op& ir_op) const;
  /// `cfg`'s clamp composed with the activation folded into `op` (sched::Op::activation;
  /// docs/scheduler.md "Activation folding"), if any: the output is the activation's.
  Status fold_activation(const sched::Op& op, isa::Vcfg& cfg) const;
  Status emit_add(const sched::GroupSchedule& gs, const sched::Op& op, const std::vector<Box>& need,
                  std::vector<isa::Instruction>& code);
  Status emit_pool(const sched::GroupSchedule& gs, const sched::Op& op,
                   const std::vector<Box>& need, std::vector<isa::Instruction>& code);
  /// A Concat inside a group: one exact copy per input into its channels of the output buffer.
  Status emit_concat(const sched::GroupSchedule& gs, const sched::Op& op,
                     const std::vector<Box>& need, std::vector<isa::Instruction>& code);
  /// The DRAM region holding scheduler tensor `name` (a Reshape's output is its input's).
  const DramRegion* region_of(const std::string& name) const;
  /// Where tensor `tensor`'s NHWC data lies in DRAM: in its own region, or (an aliased Concat's
  /// input, docs/codegen.md "Concat") in a channel slice of the concat output's region.
  struct DramPlace {
    const DramRegion* region = nullptr;
    int64_t channel_offset = 0;  ///< of the tensor's channel 0 within each stored pixel
    int64_t pixel_channels = 0;  ///< channels per stored pixel (the DMA's x stride)
  };
  DramPlace place_of(int tensor) const;
  /// The tensor whose region holds `tensor` (itself unless it is a concat slice) and the
  /// channel offset there.
  std::pair<int, int64_t> root_of(int tensor) const;
  /// A DMA of `box` of `tensor` between DRAM and `view`: addresses and strides of both sides.
  template <class Dma>
  void set_dma_box(Dma& dma, int tensor, const Box& box, const TileView& view) const;
  /// The loads of `box` of activation tensor `tensor` into `view`: one, or for a space-to-depth
  /// input (sched::Tensor::space_to_depth) one per row parity, each row of stored pixels one
  /// DRAM run (docs/codegen.md, "Space-to-depth stem").
  Status append_activation_loads(std::vector<isa::Instruction>& loads, int tensor, const Box& box,
                                 const TileView& view) const;
  /// The STORE of `box` of a group output `tensor` from `view` (network output bytes when its
  /// region is the network output's), counted in the program's written activation bytes.
  isa::Store store_of(int tensor, const Box& box, const TileView& view);
  void write_bytes(int64_t offset, int64_t value, int bytes);
  /// Writes weights (o0 + c, i, y, x) for c < count, each weight_bytes_ little-endian, from `at`:
  /// one row r of a weight block.
  void write_weight_row(int64_t at, const MatrixOp& m, int64_t o0, int64_t count, int64_t i,
                        int64_t y, int64_t x);

  const ir::Graph& graph_;
  const sched::Net& net_;
  const sched::Schedule& schedule_;
  const HwConfig& config_;
  sched::Machine machine_;
  CompiledProgram& out_;
  Emitter emitter_;
  int64_t rows_ = 16, cols_ = 16, act_bytes_ = 1, weight_bytes_ = 1;
  isa::Elem act_elem_ = isa::Elem::kI8, weight_elem_ = isa::Elem::kI8;
  std::map<int, ConvParams> conv_params_;     // by scheduler op index, for the current group
  std::map<std::string, std::string> alias_;  // Reshape output -> the tensor it views
  // Input of an aliased (DRAM view) Concat -> (the concat's output tensor, channel offset).
  std::map<int, std::pair<int, int64_t>> slice_of_;
  size_t host_from_ = 0;                     // groups [host_from_, end) run on the host
  std::map<std::string, int> tensor_index_;  // scheduler tensor name -> index
  std::map<int, int64_t> channel_tiles_;     // matrix op index -> its group's channel tiles
  std::map<int, int64_t> extra_top_;         // per scratchpad: codegen-owned bytes above the peak
  bool work_before_ = false;                 // a tile has been emitted (the next one waits on it)
  // Cross-group weight prefetch (GroupSchedule::prefetched): the group's first weight loads,
  // taken out of its first tile and inserted after the previous group's last load, at
  // prefetch_point_ (-1: no group emitted yet).
  std::vector<isa::Instruction> prefetch_;
  std::int64_t prefetch_point_ = -1;
  Status place_prefetch(const std::string& where, size_t& before);
  void mark_prefetch_point(size_t before);
  int copy_ = 0;         // the ping-pong copy the current tile uses (double buffering)
  int weight_copy_ = 0;  // the copy of streamed weight slices the current tile uses
  // A double-buffered Gemm with reduction chunks ping-pongs every chunk (docs/codegen.md "Gemm
  // reduction chunks"): `weight_copy_` is then the copy of the tile's first chunk, chunk k
  // lands in copy (weight_copy_ + k) % 2, and the bias vector and table stay in copy
  // `table_copy_` (the tile's parity). -1: no chunk ping-pong (the table goes with the blocks).
  int table_copy_ = -1;
  bool chunk_pingpong_ = false;
  std::vector<Box> layout_;  // per tensor: the window its buffer holds in the current tile
  static bool has_copy(const sched::GroupSchedule& gs, int tensor, int copy) {
    for (const auto& b : gs.buffers)
      if (b.tensor == tensor && b.copy == copy) return true;
    return false;
  }
};

Result<std::string> Lowering::int_tensor(const std::string& name) const {
  if (graph_.has_tensor(name) && graph_.tensor(name).dtype != ir::DType::f32) return name;
  if (graph_.has_tensor(name + ".q") && graph_.tensor(name + ".q").dtype != ir::DType::f32)
    return name + ".q";
  return fail("tensor '" + name + "' has no integer form in the quantized graph");
}

void Lowering::write_weight_row(int64_t at, const MatrixOp& m, int64_t o0, int64_t count, int64_t i,
                                int64_t y, int64_t x) {
  const int bytes = static_cast<int>(weight_bytes_);
  if (m.s2d.channels > 0 || m.gemm) {
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

Status Lowering::find_host_groups() {
  const auto& groups = schedule_.groups;
  host_from_ = groups.size();
  for (size_t g = 0; g < groups.size(); ++g) {
    size_t host_ops = 0;
    for (int o : groups[g].ops) host_ops += net_.op(o).kind == sched::OpKind::Softmax;
    if (host_ops == 0) {
      if (host_from_ < g)
        return fail("group " + std::to_string(g) + ": op '" + net_.op(groups[g].ops.front()).name +
                    "' runs on the accelerator after host op '" +
                    net_.op(groups[host_from_].ops.front()).name +
                    "' (host ops must end the network)");
      continue;
    }
    if (host_ops != groups[g].ops.size()) {
      std::string softmax;
      for (int o : groups[g].ops)
        if (net_.op(o).kind == sched::OpKind::Softmax) softmax = net_.op(o).name;
      return fail("group " + std::to_string(g) + ": op '" + softmax +
                  "' (softmax) runs on the host and cannot share a group with accelerator ops");
    }
    host_from_ = std::min(host_from_, g);
  }
  return {};
}

Status Lowering::plan_host() {
  HostPart& host = out_.host;
  std::set<std::string> boundary;  // integer IR tensors the host reads
  for (size_t g = host_from_; g < schedule_.groups.size(); ++g) {
    for (int o : schedule_.groups[g].ops) {
      const sched::Op& op = net_.op(o);
      host.ops.push_back(op.name);
      for (int t : op.inputs) {
        const sched::Tensor& tensor = net_.tensor(t);
        if (net_.op(tensor.producer).kind == sched::OpKind::Softmax) continue;
        auto ir_name = int_tensor(tensor.name);
        if (!ir_name.ok()) return fail("host op '" + op.name + "': " + ir_name.reason());
        if (!boundary.insert(ir_name.value()).second) continue;
        if (slice_of_.count(t))
          return fail("host op '" + op.name + "': its input '" + tensor.name +
                      "' lies in a concat's channel slice");
        HostInput in;
        in.name = tensor.name;
        in.ir_tensor = ir_name.value();
        in.offset = region_of(tensor.name)->offset;
        in.shape = graph_.tensor(in.ir_tensor).shape;
        in.bytes = tensor.shape.elements() * act_bytes_;
        host.inputs.push_back(std::move(in));
      }
    }
  }
  if (host.empty()) return {};
  // The host graph: every op of the quantized graph downstream of the boundary, in an order
  // whose inputs are ready (the boundary tensors become graph inputs).
  ir::Graph& hg = host.graph;
  hg.set_name(graph_.name() + ".host");
  std::set<std::string> ready;
  for (const HostInput& in : host.inputs) {
    const ir::Tensor& t = graph_.tensor(in.ir_tensor);
    if (auto r = hg.add_input(in.ir_tensor, t.shape, t.dtype); !r) return fail(r.reason());
    hg.tensor_mut(in.ir_tensor).quant = t.quant;
    ready.insert(in.ir_tensor);
  }
  std::set<ir::OpId> taken;
  for (bool grew = true; grew;) {
    grew = false;
    for (ir::OpId id = 0; id < graph_.num_ops(); ++id) {
      const ir::Op& op = graph_.op(id);
      if (taken.count(id) || op.kind == ir::OpKind::Input) continue;
      bool reads_host = false, all_ready = true;
      for (const auto& x : op.inputs) {
        if (x.empty()) continue;
        const ir::Tensor& t = graph_.tensor(x);
        if (ready.count(x)) {
          reads_host = true;
        } else if (!t.constant) {
          all_ready = false;
        }
      }
      if (!reads_host || !all_ready) continue;
      for (const auto& x : op.inputs) {
        if (x.empty() || ready.count(x) || hg.has_tensor(x)) continue;
        if (auto r = hg.add_constant(graph_.tensor(x)); !r) return fail(r.reason());
      }
      for (const auto& y : op.outputs) {
        if (auto r = hg.declare_tensor(graph_.tensor(y)); !r) return fail(r.reason());
        ready.insert(y);
      }
      if (auto r = hg.add_op(op); !r) return fail(r.reason());
      taken.insert(id);
      grew = true;
    }
  }
  for (const auto& y : graph_.outputs())
    if (ready.count(y) && !boundary.count(y)) host.outputs.push_back(y);
  if (host.outputs.empty()) return fail("host ops '" + host.ops.front() + "': no network output");
  if (auto r = hg.set_outputs(host.outputs); !r) return fail(r.reason());
  return {};
}

Status Lowering::plan_dram(const std::map<std::string, std::vector<std::int32_t>>& input_values) {
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
        if (auto it = slice_of_.find(x); it != slice_of_.end())
          return refuse("is already a slice of concat '" +
                        net_.op(net_.tensor(it->second.first).producer).name +
                        "'; a tensor can be stored into one concat slice only");
        slice_of_[x] = {concat.output, concat.concat_offsets[i]};
      }
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
  for (const auto& [view, source] : alias_) {
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
  for (const auto& [tensor, unused] : slice_of_) {
    const DramPlace place = place_of(tensor);
    out_.slices[net_.tensor(tensor).name] = {place.region->name, place.channel_offset,
                                             place.pixel_channels};
  }
  // Weight regions, compact (no block padding; the DMA pads to the matrix layout), one after
  // another per output-channel slice (docs/codegen.md, "DRAM layout").
  for (size_t g = 0; g < host_from_; ++g) {
    const sched::GroupSchedule& gs = schedule_.groups[g];
    for (int index : gs.ops) {
      const sched::Op& op = net_.op(index);
      if (op.kind != sched::OpKind::Conv && op.kind != sched::OpKind::Gemm) continue;
      channel_tiles_[index] = gs.channel_tiles;
      if (gs.weight_sweep) {  // each conv its own slice count
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
  out_.dram.assign(static_cast<size_t>(out_.layout.size_bytes()), 0);

  // Contents: inputs NHWC, weights in the block order the loads walk, biases, tables.
  for (const auto& [sched_name, ir_name] : out_.io_tensors) {
    const DramRegion* region = region_of(sched_name);
    if (region->kind != RegionKind::Input) continue;
    auto it = input_values.find(ir_name);
    if (it == input_values.end()) return fail("no value given for network input '" + ir_name + "'");
    const auto& shape = graph_.tensor(ir_name).shape;  // NCHW
    const int64_t c = shape[1], h = shape[2], wd = shape[3];
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
  for (size_t g = 0; g < host_from_; ++g) {
    for (int index : schedule_.groups[g].ops) {
      const sched::Op& op = net_.op(index);
      if (op.kind != sched::OpKind::Conv && op.kind != sched::OpKind::Gemm) continue;
      const MatrixOp m = matrix_op(op).value();
      const int64_t chunk = chunk_blocks_of(schedule_.groups[g], op, m);
      int64_t at = out_.layout.find("w:" + op.name)->offset;
      for (const sched::Interval slice : slices_of(index)) {
        const int64_t oc_blocks = ceil_div(slice.size(), cols_);
        for (int64_t ob = 0; ob < oc_blocks; ++ob) {
          const int64_t c0 = slice.b + ob * cols_;
          const int64_t cn = std::min(cols_, slice.e - c0);
          if (!m.depthwise) continue;
          for (int64_t y = 0; y < m.kh; ++y)  // [cb][ky][kx][c < cn]
            for (int64_t x = 0; x < m.kw; ++x)
              for (int64_t c = 0; c < cn; ++c, at += weight_bytes_)
                write_bytes(at, m.weight(c0 + c, 0, y, x), static_cast<int>(weight_bytes_));
        }
        if (m.depthwise) continue;
        // [chunk][ocb][icb of the chunk][ky][kx][r < rn][c < cn]: a reduction chunk is one
        // contiguous run (one chunk, the whole reduction, unless the schedule chunks a Gemm).
        const int64_t ic_blocks = ceil_div(m.ci, rows_);
        for (int64_t b0 = 0; b0 < ic_blocks; b0 += chunk) {
          for (int64_t ob = 0; ob < oc_blocks; ++ob) {
            const int64_t c0 = slice.b + ob * cols_;
            const int64_t cn = std::min(cols_, slice.e - c0);
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

std::vector<sched::Interval> Lowering::slices_of(int op_index) const {
  const auto it = channel_tiles_.find(op_index);
  const int64_t n = it == channel_tiles_.end() ? 1 : it->second;
  const int64_t channels = net_.tensor(net_.op(op_index).output).shape.c;
  std::vector<sched::Interval> slices;
  for (int64_t k = 0; k < n; ++k) slices.push_back({channels * k / n, channels * (k + 1) / n});
  return slices;
}

Result<MatrixOp> Lowering::matrix_op(const sched::Op& op) const {
  const auto id = graph_.find_op(op.name);
  if (!id) return fail("op '" + op.name + "' is not in the quantized graph");
  MatrixOp m;
  m.op = &graph_.op(*id);
  if (m.op->inputs.size() < 2) return fail("op '" + op.name + "' has no weights");
  m.weights = &graph_.tensor(m.op->inputs[1]);
  if (m.op->inputs.size() > 2 && !m.op->inputs[2].empty()) m.bias = &graph_.tensor(m.op->inputs[2]);
  const auto& ws = m.weights->shape;
  if (m.op->kind == ir::OpKind::Conv) {
    if (ws.size() != 4) return fail("conv '" + op.name + "': weights are not 4-D");
    m.co = ws[0];
    m.ci = ws[1];
    m.kh = ws[2];
    m.kw = ws[3];
    m.depthwise = op.groups > 1;
    if (op.groups > 1 && !(op.groups == m.co && m.ci == 1))
      return fail("conv '" + op.name + "': grouped convolution (groups " +
                  std::to_string(op.groups) + ") is not supported by codegen yet");
    if (op.space_to_depth.channels > 0) {
      const sched::SpaceToDepthConv& s2d = op.space_to_depth;
      if (s2d.channels != m.ci || s2d.kernel_h != m.kh || s2d.kernel_w != m.kw)
        return fail("conv '" + op.name + "': the space-to-depth rewrite does not match its " +
                    "weights '" + m.weights->name + "'");
      m.s2d = s2d;
      m.ci = 4 * s2d.channels;
      m.kh = op.window.kernel_h;
      m.kw = op.window.kernel_w;
    }
  } else if (m.op->kind == ir::OpKind::Gemm) {
    m.gemm = true;
    m.trans_b = m.op->get_int("transB") != 0;
    // The input as stored: a Flatten/Reshape output is a view of an NHWC (C, H, W) tensor.
    std::string source = net_.tensor(op.inputs[0]).name;
    if (auto it = alias_.find(source); it != alias_.end()) source = it->second;
    const sched::Shape3 in = net_.tensor(tensor_index_.at(source)).shape;
    m.ci = in.elements();
    m.in_c = in.c;
    m.in_h = in.h;
    m.in_w = in.w;
    m.co = net_.tensor(op.output).shape.c;
    if (ws.size() != 2 || ws[0] * ws[1] != m.co * in.elements())
      return fail("gemm '" + op.name + "': weights do not match a " +
                  std::to_string(in.elements()) + " -> " + std::to_string(m.co) + " layer");
  } else {
    return fail("op '" + op.name + "' is not a Conv or Gemm in the quantized graph");
  }
  const size_t expected = static_cast<size_t>(ir::element_count(ws));
  if (m.weights->int_values.size() != expected)
    return fail("op '" + op.name + "': weights '" + m.weights->name + "' carry no integer values");
  if (m.bias != nullptr && m.bias->int_values.size() != static_cast<size_t>(m.co))
    return fail("op '" + op.name + "': bias '" + m.bias->name + "' carries no integer values");
  return m;
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
  place.region = region_of(net_.tensor(root).name);
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
      ((box.h.b * width + box.w.b) * place.pixel_channels + place.channel_offset + box.c.b) *
          act_bytes_);
  dma.y_size = static_cast<std::uint32_t>(box.h.size());
  dma.x_size = static_cast<std::uint32_t>(box.w.size());
  dma.c_size = static_cast<std::uint32_t>(box.c.size());
  dma.dram_stride_y = static_cast<std::uint32_t>(width * place.pixel_channels);
  dma.dram_stride_x = static_cast<std::uint32_t>(place.pixel_channels);
  dma.sram_stride_y = static_cast<std::uint32_t>(view.stride_y());
  dma.sram_stride_x = static_cast<std::uint32_t>(view.pixel_elems);
}

Status Lowering::append_activation_loads(std::vector<isa::Instruction>& loads, int tensor,
                                         const Box& box, const TileView& view) const {
  isa::Load l;
  l.kind = isa::Traffic::kActivations;
  set_dma_box(l, tensor, box, view);
  const sched::Tensor& t = net_.tensor(tensor);
  if (t.space_to_depth != 2) {
    loads.push_back(l);
    return {};
  }
  // Channel (2a + b) C + k of pixel (y, x) is channel k of stored pixel (2y + a, 2x + b): for
  // each a, stored row 2y + a from column 2x is the pixels' channels [2aC, 2aC + 2C), in order.
  const int64_t c = t.shape.c / 4, stored_w = 2 * t.shape.w;
  if (box.c.b != 0 || box.c.e != t.shape.c)
    return fail("tensor '" + t.name + "' (space-to-depth) is loaded without all its channels");
  const DramPlace place = place_of(tensor);
  for (int64_t a = 0; a < 2; ++a) {
    isa::Load g = l;
    g.sram_addr = static_cast<std::uint32_t>(view.addr(box.h.b, box.w.b, 2 * a * c));
    g.dram_addr = static_cast<std::uint64_t>(
        place.region->offset + ((2 * box.h.b + a) * stored_w + 2 * box.w.b) * c * act_bytes_);
    g.c_size = static_cast<std::uint32_t>(2 * c);
    g.dram_stride_y = static_cast<std::uint32_t>(2 * stored_w * c);
    g.dram_stride_x = static_cast<std::uint32_t>(2 * c);
    loads.push_back(g);
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

Result<TileView> Lowering::view_of(const sched::GroupSchedule& gs, int tensor,
                                   const Box& box) const {
  for (const auto& b : gs.buffers) {
    if (b.tensor == tensor && b.role != sched::BufferRole::Weights &&
        b.role != sched::BufferRole::Accumulator &&
        (b.copy == copy_ || (b.copy == 0 && !has_copy(gs, tensor, copy_)))) {
      TileView v;
      v.sp = b.scratchpad;
      v.offset = b.offset;
      // The buffer holds the tile's whole window (layout_); `box` may be a part of it.
      v.box = static_cast<size_t>(tensor) < layout_.size() &&
                      !layout_[static_cast<size_t>(tensor)].empty()
                  ? layout_[static_cast<size_t>(tensor)]
                  : box;
      v.element_bytes = act_bytes_;
      v.pixel_elems = b.pixel_bytes / act_bytes_;
      if (box.h.size() * box.w.size() * b.pixel_bytes > b.size_bytes)
        return fail("tensor '" + net_.tensor(tensor).name + "': tile of " +
                    std::to_string(box.h.size() * box.w.size() * b.pixel_bytes) +
                    " bytes exceeds its buffer (" + std::to_string(b.size_bytes) + " bytes)");
      return v;
    }
  }
  return fail("tensor '" + net_.tensor(tensor).name + "' has no on-chip buffer in its group");
}

namespace {
// The largest `y_size` of a DMA instruction (docs/isa.md: u12).
constexpr std::uint32_t kMaxDmaRows = 4095;

const sched::BufferAlloc* wbuf_of(const sched::GroupSchedule& gs, const sched::Op& op) {
  for (const auto& b : gs.buffers)
    if (b.role == sched::BufferRole::Weights && b.name == "w:" + op.name) return &b;
  return nullptr;
}
}  // namespace

int64_t Lowering::chunk_blocks_of(const sched::GroupSchedule& gs, const sched::Op& op,
                                  const MatrixOp& m) const {
  const int64_t ic_blocks = m.depthwise ? 1 : ceil_div(m.ci, rows_);
  const sched::BufferAlloc* wbuf = wbuf_of(gs, op);
  if (!m.gemm || gs.weights_resident || wbuf == nullptr) return ic_blocks;
  // The widest slice's packed blocks, bias vector (whole blocks, reserved with or without a
  // bias, as the scheduler sizes it) and table: when they fit the buffer, no chunks.
  int64_t widest = 0;
  for (const sched::Interval c : slices_of(static_cast<int>(&op - net_.ops.data())))
    widest = std::max(widest, c.size());
  const int64_t oc_blocks = ceil_div(widest, cols_);
  const int64_t block_row = oc_blocks * rows_ * cols_ * weight_bytes_;  // one input block
  const int64_t fixed = oc_blocks * cols_ * 4 + widest * 8;
  if (ceil_div(ic_blocks * block_row + fixed, 8) * 8 <= wbuf->size_bytes) return ic_blocks;
  // As many input blocks as the buffer holds: the scheduler's chunk (kGemmChunkBlocks), read
  // back from the size it reserved. A buffer too small for one block is place_conv's error.
  const int64_t fit = (wbuf->size_bytes - fixed) / block_row;
  return fit >= 1 ? std::min(fit, ic_blocks) : ic_blocks;
}

Status Lowering::place_conv(const sched::GroupSchedule& gs, const sched::Op& op) {
  const int index = static_cast<int>(&op - net_.ops.data());
  auto matrix = matrix_op(op);
  if (!matrix.ok()) return matrix.failure();
  const MatrixOp& m = matrix.value();
  ConvParams p;
  p.has_bias = m.bias != nullptr;
  const int64_t ic_blocks = m.depthwise ? 1 : ceil_div(m.ci, rows_);
  p.chunk_blocks = chunk_blocks_of(gs, op, m);
  p.chunks = ceil_div(ic_blocks, p.chunk_blocks);
  const int64_t max_ic_blocks = field_max("conv", "ic_blocks");
  if (p.chunk_blocks > max_ic_blocks)
    return fail("op '" + op.name + "': " + std::to_string(p.chunk_blocks) +
                " input blocks in one conv instruction (ic_blocks takes at most " +
                std::to_string(max_ic_blocks) + ")");
  if (p.chunks > 1 && gs.keeps_weight_slices())
    return fail("gemm '" + op.name + "': its reduction is chunked (" + std::to_string(p.chunks) +
                " chunks of " + std::to_string(p.chunk_blocks) +
                " input blocks) in a slice-keeping schedule, which codegen does not emit");
  // Per slice: packed blocks, the bias vector (whole blocks of C), the (M, r) table.
  struct SliceBytes {
    int64_t packed = 0, bias = 0, table = 0;
    int64_t total() const { return ceil_div(packed + bias + table, 8) * 8; }
  };
  const auto slices = slices_of(index);
  std::vector<SliceBytes> bytes;
  int64_t dram = out_.layout.find("w:" + op.name)->offset;
  for (const sched::Interval c : slices) {
    const int64_t oc_blocks = ceil_div(c.size(), cols_);
    SliceBytes b;
    // With reduction chunks the buffer holds one chunk of every output block.
    b.packed = m.depthwise
                   ? oc_blocks * m.kh * m.kw * cols_ * weight_bytes_
                   : oc_blocks * p.chunk_blocks * m.kh * m.kw * rows_ * cols_ * weight_bytes_;
    b.bias = p.has_bias ? oc_blocks * cols_ * 4 : 0;
    b.table = c.size() * 8;
    bytes.push_back(b);
    SliceParams sp;
    sp.channels = c;
    sp.dram_weights = dram;
    dram += c.size() * (m.depthwise ? 1 : m.ci) * m.kh * m.kw * weight_bytes_;
    p.slices.push_back(sp);
  }
  // Resident weights keep every slice on chip; streamed ones reuse one slice's room per tile.
  int64_t need = 0;
  for (const SliceBytes& b : bytes)
    need = gs.weights_resident ? need + b.total() : std::max(need, b.total());
  const sched::BufferAlloc* wbuf = nullptr;
  for (const auto& b : gs.buffers)
    if (b.role == sched::BufferRole::Weights && b.name == "w:" + op.name) wbuf = &b;
  if (wbuf == nullptr) return fail("op '" + op.name + "': the schedule has no weight buffer");
  p.sp = wbuf->scratchpad;
  int64_t base = wbuf->offset;
  // The load engine fills a streamed slice before the tile's first op. The scheduler's slices
  // live from that load (step 0), so none shares bytes with a buffer of an earlier step; a
  // schedule that says otherwise (read from JSON, say) gets its slice placed above the peak.
  bool shared_lifetime = false;
  if (!gs.weights_resident && wbuf_of(gs, op) != nullptr) {
    const sched::BufferAlloc& w = *wbuf_of(gs, op);
    for (const auto& b : gs.buffers) {
      if (&b == &w || b.scratchpad != w.scratchpad || b.first_step >= w.first_step) continue;
      if (b.offset < w.offset + w.size_bytes && w.offset < b.offset + b.size_bytes)
        shared_lifetime = true;  // written or read before this op's step, in these bytes
    }
  }
  // Double-buffered streamed weights have a second copy of the slice buffer.
  const sched::BufferAlloc* wbuf1 = nullptr;
  if (!gs.weights_resident && gs.double_buffered) {
    for (const auto& b : gs.buffers)
      if (b.role == sched::BufferRole::Weights && b.name == "w:" + op.name + "#1") wbuf1 = &b;
    if (wbuf1 == nullptr)
      return fail("op '" + op.name +
                  "': the schedule double-buffers its streamed weights "
                  "but has no second weight buffer");
    if (wbuf1->scratchpad != wbuf->scratchpad)
      return fail("op '" + op.name + "': its two weight buffers lie in different scratchpads");
    p.copy1_delta = wbuf1->offset - wbuf->offset;
    shared_lifetime |= need > wbuf1->size_bytes;
  }
  if (need > wbuf->size_bytes || shared_lifetime) {
    // The scheduler sizes weight buffers in compact bytes; the matrix unit wants whole R x C
    // blocks plus the bias vector and requant table. Place them above the schedule's peak.
    const int64_t peak = gs.peak_bytes.size() > static_cast<size_t>(p.sp)
                             ? gs.peak_bytes[static_cast<size_t>(p.sp)]
                             : 0;
    int64_t& top = extra_top_[p.sp];
    top = std::max(top, ceil_div(peak, 64) * 64);
    base = top;
    top += ceil_div(need, 64) * 64;
    if (wbuf1 != nullptr) {  // and the second copy right above
      p.copy1_delta = ceil_div(need, 64) * 64;
      top += p.copy1_delta;
    }
    const int64_t size = config_.scratchpads[static_cast<size_t>(p.sp)].size_bytes;
    const int64_t copies = wbuf1 != nullptr ? 2 : 1;
    if (top > size)
      return fail("op '" + op.name + "': packed weights, bias and requant table need " +
                  std::to_string(copies) + " x " + std::to_string(need) +
                  " bytes; the schedule reserved " + std::to_string(wbuf->size_bytes) +
                  " and scratchpad '" + config_.scratchpads[static_cast<size_t>(p.sp)].name +
                  "' has " + std::to_string(size - (top - copies * ceil_div(need, 64) * 64)) +
                  " bytes free above the schedule's peak");
  }
  int64_t at = base;
  for (size_t k = 0; k < slices.size(); ++k) {
    SliceParams& sp = p.slices[k];
    sp.w_addr = at;
    sp.bias_addr = at + bytes[k].packed;
    sp.table_addr = sp.bias_addr + bytes[k].bias;
    if (gs.weights_resident) at += bytes[k].total();
  }
  conv_params_[index] = p;
  return {};
}

Status Lowering::emit_conv_loads(const sched::Op& op, int slice,
                                 std::vector<isa::Instruction>& loads, int64_t chunk) {
  const MatrixOp m = matrix_op(op).value();
  const ConvParams& p = conv_params_.at(static_cast<int>(&op - net_.ops.data()));
  for (size_t k = 0; k < p.slices.size(); ++k) {
    if (slice >= 0 && static_cast<size_t>(slice) != k) continue;
    SliceParams sp = p.slices[k];
    if (weight_copy_ == 1) sp.w_addr += p.copy1_delta;  // the second copy of a ping-pong slice
    if ((table_copy_ < 0 ? weight_copy_ : table_copy_) == 1) {
      sp.bias_addr += p.copy1_delta;
      sp.table_addr += p.copy1_delta;
    }
    // Reduction chunk `chunk`: input blocks [b0, b1), channels [b0 * R, min(b1 * R, ci)). The
    // slice's chunks lie one after another in DRAM (plan_dram); one chunk, all blocks, without
    // chunks.
    const int64_t ic_blocks = m.depthwise ? 1 : ceil_div(m.ci, rows_);
    const int64_t b0 = chunk * p.chunk_blocks, b1 = std::min(ic_blocks, b0 + p.chunk_blocks);
    int64_t dram = sp.dram_weights +
                   sp.channels.size() * std::min(m.ci, b0 * rows_) * m.kh * m.kw * weight_bytes_;
    auto weights_load = [&](int64_t sram, int64_t y, int64_t x, int64_t c, int64_t sy, int64_t sx,
                            int64_t pad_right) {
      isa::Load l;
      l.sp = static_cast<std::uint32_t>(p.sp);
      l.elem = weight_elem_;
      l.kind = isa::Traffic::kWeights;
      l.sram_addr = static_cast<std::uint32_t>(sram);
      l.dram_addr = static_cast<std::uint64_t>(dram);
      l.y_size = static_cast<std::uint32_t>(y);
      l.x_size = static_cast<std::uint32_t>(x);
      l.c_size = static_cast<std::uint32_t>(c);
      l.dram_stride_y = static_cast<std::uint32_t>(x * c);
      l.dram_stride_x = static_cast<std::uint32_t>(c);
      l.sram_stride_y = static_cast<std::uint32_t>(sy);
      l.sram_stride_x = static_cast<std::uint32_t>(sx);
      l.pad_right = static_cast<std::uint32_t>(pad_right);
      dram += y * x * c * weight_bytes_;
      out_.traffic.weights_read += y * x * c * weight_bytes_;
      // A block that continues the previous load in DRAM and in SRAM with the same row shape
      // (the next input-channel block of a full-height output block, say) extends that load's
      // rows: one DMA instruction per contiguous run, not one per block. The bytes moved and
      // where they land are the same; the DRAM latency is paid once per run (docs/codegen.md).
      if (!loads.empty()) {
        auto* prev = std::get_if<isa::Load>(&loads.back());
        if (prev != nullptr && prev->kind == l.kind && prev->sp == l.sp && prev->elem == l.elem &&
            prev->x_size == l.x_size && prev->c_size == l.c_size &&
            prev->dram_stride_y == l.dram_stride_y && prev->dram_stride_x == l.dram_stride_x &&
            prev->sram_stride_y == l.sram_stride_y && prev->sram_stride_x == l.sram_stride_x &&
            prev->pad_top == 0 && prev->pad_bottom == 0 && prev->pad_left == 0 &&
            prev->pad_right == l.pad_right &&
            prev->sram_addr + static_cast<std::uint64_t>(prev->y_size) * prev->sram_stride_y *
                                  static_cast<std::uint64_t>(weight_bytes_) ==
                l.sram_addr &&
            prev->dram_addr + static_cast<std::uint64_t>(prev->y_size) * prev->dram_stride_y *
                                  static_cast<std::uint64_t>(weight_bytes_) ==
                l.dram_addr &&
            prev->y_size + l.y_size <= kMaxDmaRows) {
          prev->y_size += l.y_size;
          return;
        }
      }
      loads.push_back(l);
    };
    const int64_t oc_blocks = ceil_div(sp.channels.size(), cols_);
    // The zero rows of a block's padded input channels are the load's right padding.
    const int64_t max_pad_rows = field_max("load", "pad_right");
    for (int64_t ob = 0; ob < oc_blocks; ++ob) {
      const int64_t cn = std::min(cols_, sp.channels.e - (sp.channels.b + ob * cols_));
      if (m.depthwise) {
        weights_load(sp.w_addr + ob * m.kh * m.kw * cols_ * weight_bytes_, m.kh * m.kw, 1, cn,
                     cols_, cols_, 0);
        continue;
      }
      for (int64_t ib = b0; ib < b1; ++ib) {
        const int64_t rn = std::min(rows_, m.ci - ib * rows_);
        if (rows_ - rn > max_pad_rows)
          return fail("conv '" + op.name + "': " + std::to_string(rows_ - rn) +
                      " zero weight rows to pad in one block (the DMA pads at most " +
                      std::to_string(max_pad_rows) + ")");
        // Rows r >= rn of the block are the padded input channels: zero weights (DMA padding).
        // On chip the chunk's blocks are [ocb][icb of the chunk], what a conv with
        // ic_blocks = b1 - b0 reads.
        const int64_t block =
            ((ob * (b1 - b0) + ib - b0) * m.kh * m.kw) * rows_ * cols_ * weight_bytes_;
        weights_load(sp.w_addr + block, m.kh * m.kw, rn, cn, rows_ * cols_, cols_, rows_ - rn);
      }
    }
    if (chunk > 0) continue;  // the bias and table came with chunk 0
    auto table_load = [&](const std::string& region, int64_t first_word, int64_t sram,
                          int64_t words) {
      isa::Load l;
      l.sp = static_cast<std::uint32_t>(p.sp);
      l.elem = isa::Elem::kI32;
      l.kind = isa::Traffic::kWeights;
      l.sram_addr = static_cast<std::uint32_t>(sram);
      l.dram_addr = static_cast<std::uint64_t>(out_.layout.find(region)->offset + first_word * 4);
      l.c_size = static_cast<std::uint32_t>(words);
      l.dram_stride_x = l.c_size;
      l.sram_stride_x = l.c_size;
      loads.push_back(l);
    };
    if (p.has_bias) {
      table_load("b:" + op.name, sp.channels.b, sp.bias_addr, sp.channels.size());
      out_.traffic.weights_read += sp.channels.size() * 4;
    }
    table_load("rq:" + op.name, 2 * sp.channels.b, sp.table_addr, 2 * sp.channels.size());
    out_.traffic.requant_table_read += sp.channels.size() * 8;
  }
  return {};
}

Status Lowering::emit_conv(const sched::GroupSchedule& gs, size_t pos, const sched::Op& op,
                           const std::vector<Box>& need, std::vector<Phase>& phases) {
  const MatrixOp m = matrix_op(op).value();
  const ConvParams& p = conv_params_.at(static_cast<int>(&op - net_.ops.data()));
  const int in_t = op.inputs[0];
  const Box& out_box = need[static_cast<size_t>(op.output)];
  if (out_box.empty()) return {};
  int slice_index = -1;
  for (size_t k = 0; k < p.slices.size(); ++k)
    if (p.slices[k].channels == out_box.c) slice_index = static_cast<int>(k);
  if (slice_index < 0)
    return fail("op '" + op.name + "': output channels [" + std::to_string(out_box.c.b) + ", " +
                std::to_string(out_box.c.e) + ") are not one of its weight slices");
  const SliceParams* slice = &p.slices[static_cast<size_t>(slice_index)];
  SliceParams in_copy = *slice;  // where this tile's copy of the slice lies
  const int64_t w_addr_copy0 = slice->w_addr;
  if (weight_copy_ == 1) in_copy.w_addr += p.copy1_delta;
  if ((table_copy_ < 0 ? weight_copy_ : table_copy_) == 1) {
    in_copy.bias_addr += p.copy1_delta;
    in_copy.table_addr += p.copy1_delta;
  }
  slice = &in_copy;
  auto in_view = view_of(gs, in_t, need[static_cast<size_t>(in_t)]);
  if (!in_view.ok()) return in_view.failure();
  auto out_view = view_of(gs, op.output, out_box);
  if (!out_view.ok()) return out_view.failure();
  const sched::BufferAlloc* acc = nullptr;
  for (const auto& b : gs.buffers)
    if (b.role == sched::BufferRole::Accumulator && b.name == "acc:" + op.name) acc = &b;
  if (acc == nullptr) return fail("op '" + op.name + "': the schedule has no accumulator");
  // A Gemm is a 1x1 conv of one pixel over its input as stored, one pixel of K channels (HWC
  // order): the strides never step.
  sched::Window win = op.window;
  sched::Shape3 in_shape = net_.tensor(in_t).shape;
  int64_t in_stride_x = in_view.value().pixel_elems, in_stride_y = in_view.value().stride_y();
  const int64_t in_addr_base = in_view.value().offset;
  if (m.gemm) {
    win = sched::Window{};
    in_shape = {m.ci, 1, 1};
    in_stride_x = in_stride_y = 0;
  }
  const int64_t oc_blocks = ceil_div(slice->channels.size(), cols_);
  const int64_t acc_px = oc_blocks * cols_;
  const int64_t out_w = out_box.w.size();
  // Columns of the window, clamped to the stored input; the rest is the conv's own padding.
  const int64_t xa = out_box.w.b * win.stride_w - win.pad_left;
  const int64_t xb =
      (out_box.w.e - 1) * win.stride_w + (win.kernel_w - 1) * win.dilation_w + 1 - win.pad_left;
  const int64_t x0 = std::max<int64_t>(xa, 0), x1 = std::min(xb, in_shape.w);
  const auto rq_uses = graph_.consumers(m.op->outputs[0]);
  const ir::Op& rq = graph_.op(rq_uses[0].op);
  const auto params =
      quant::requantize_params(graph_.tensor(m.op->outputs[0]), graph_.tensor(rq.outputs[0]));
  isa::Vcfg cfg;
  cfg.zp = params[0].zero_point;
  cfg.lo = params[0].lo;
  cfg.hi = params[0].hi;
  if (Status s = fold_activation(op, cfg); !s) return s;
  phases.back().compute.push_back(cfg);
  int64_t step = pos < gs.rows_per_step.size() ? gs.rows_per_step[pos] : out_box.h.size();
  if (step < 1) step = out_box.h.size();
  if (p.chunks > 1 && out_box.h.size() > step)
    return fail("op '" + op.name + "': reduction chunks with more than one conv step per tile");
  const int64_t ic_blocks = m.depthwise ? 1 : ceil_div(m.ci, rows_);
  const int64_t in_c0 = need[static_cast<size_t>(in_t)].c.b;
  const int64_t max_conv_pad = field_max("conv", "pad_top");  // every side's field is as wide
  for (int64_t r = out_box.h.b; r < out_box.h.e; r += step) {
    const int64_t rows = std::min(step, out_box.h.e - r);
    const int64_t ya = r * win.stride_h - win.pad_top;
    const int64_t yb =
        (r + rows - 1) * win.stride_h + (win.kernel_h - 1) * win.dilation_h + 1 - win.pad_top;
    const int64_t y0 = std::max<int64_t>(ya, 0), y1 = std::min(yb, in_shape.h);
    const int64_t pads[4] = {y0 - ya, yb - y1, x0 - xa, xb - x1};
    for (int64_t pad : pads)
      if (pad > max_conv_pad)
        return fail("conv '" + op.name + "': padding of " + std::to_string(pad) +
                    " at a tile edge (the conv instruction pads at most " +
                    std::to_string(max_conv_pad) + ")");
    isa::Conv c;
    c.in_sp = static_cast<std::uint32_t>(in_view.value().sp);
    c.w_sp = static_cast<std::uint32_t>(p.sp);
    c.acc_sp = static_cast<std::uint32_t>(acc->scratchpad);
    c.elem = act_elem_;
    c.init = p.has_bias ? isa::Init::kBias : isa::Init::kZero;
    c.depthwise = m.depthwise;
    c.in_addr = static_cast<std::uint32_t>(
        m.gemm ? in_addr_base : in_view.value().addr(y0, x0, m.depthwise ? in_c0 : 0));
    c.w_addr = static_cast<std::uint32_t>(slice->w_addr);
    c.acc_addr = static_cast<std::uint32_t>(acc->offset);
    c.bias_addr = static_cast<std::uint32_t>(slice->bias_addr);
    c.out_h = static_cast<std::uint32_t>(rows);
    c.out_w = static_cast<std::uint32_t>(out_w);
    c.ic_blocks = static_cast<std::uint32_t>(std::min(ic_blocks, p.chunk_blocks));
    c.oc_blocks = static_cast<std::uint32_t>(oc_blocks);
    c.kh = static_cast<std::uint32_t>(win.kernel_h);
    c.kw = static_cast<std::uint32_t>(win.kernel_w);
    c.stride_h = static_cast<std::uint32_t>(win.stride_h);
    c.stride_w = static_cast<std::uint32_t>(win.stride_w);
    c.dil_h = static_cast<std::uint32_t>(win.dilation_h);
    c.dil_w = static_cast<std::uint32_t>(win.dilation_w);
    c.pad_top = static_cast<std::uint32_t>(pads[0]);
    c.pad_bottom = static_cast<std::uint32_t>(pads[1]);
    c.pad_left = static_cast<std::uint32_t>(pads[2]);
    c.pad_right = static_cast<std::uint32_t>(pads[3]);
    c.in_stride_y = static_cast<std::uint32_t>(in_stride_y);
    c.in_stride_x = static_cast<std::uint32_t>(in_stride_x);
    c.acc_stride_y = static_cast<std::uint32_t>(out_w * acc_px);
    c.acc_stride_x = static_cast<std::uint32_t>(acc_px);
    phases.back().compute.push_back(c);
    // Reduction chunks (a streamed Gemm): chunk k loads into the buffer chunk k-1's conv read,
    // or, double-buffered, into the other copy, then accumulates onto the accumulator
    // (docs/codegen.md, "Gemm reduction chunks").
    const int first_copy = weight_copy_;
    for (int64_t k = 1; k < p.chunks; ++k) {
      phases.emplace_back();
      if (chunk_pingpong_) weight_copy_ = static_cast<int>((first_copy + k) % 2);
      const Status loaded = emit_conv_loads(op, slice_index, phases.back().loads, k);
      isa::Conv more = c;
      more.w_addr =
          static_cast<std::uint32_t>(w_addr_copy0 + (weight_copy_ == 1 ? p.copy1_delta : 0));
      weight_copy_ = first_copy;
      if (!loaded.ok()) return loaded;
      more.init = isa::Init::kAcc;
      more.in_addr =
          static_cast<std::uint32_t>(in_addr_base + k * p.chunk_blocks * rows_ * act_bytes_);
      more.ic_blocks =
          static_cast<std::uint32_t>(std::min(ic_blocks - k * p.chunk_blocks, p.chunk_blocks));
      phases.back().compute.push_back(more);
    }
    isa::Requant q;
    q.src_sp = c.acc_sp;
    q.dst_sp = static_cast<std::uint32_t>(out_view.value().sp);
    q.param_sp = static_cast<std::uint32_t>(p.sp);
    q.dst_elem = act_elem_;
    q.per_channel = true;
    q.src_addr = c.acc_addr;
    q.dst_addr =
        static_cast<std::uint32_t>(out_view.value().addr(r, out_box.w.b, slice->channels.b));
    q.param_addr = static_cast<std::uint32_t>(slice->table_addr);
    q.y_size = static_cast<std::uint32_t>(rows);
    q.x_size = static_cast<std::uint32_t>(out_w);
    q.c_size = static_cast<std::uint32_t>(slice->channels.size());
    q.src_stride_y = c.acc_stride_y;
    q.src_stride_x = c.acc_stride_x;
    q.dst_stride_y = static_cast<std::uint32_t>(out_view.value().stride_y());
    q.dst_stride_x = static_cast<std::uint32_t>(out_view.value().pixel_elems);
    phases.back().compute.push_back(q);
  }
  return {};
}

Status Lowering::emit_eltwise(const sched::GroupSchedule& gs, const sched::Op& op,
                              const std::vector<Box>& need, std::vector<isa::Instruction>& code) {
  const auto id = graph_.find_op(op.name);
  if (!id) return fail("op '" + op.name + "' is not in the quantized graph");
  const ir::Op& ir_op = graph_.op(*id);
  if (ir_op.kind != ir::OpKind::Relu && ir_op.kind != ir::OpKind::Clip)
    return fail("op '" + op.name + "' (" + op.type + ") is not supported by codegen yet");
  const Box& box = need[static_cast<size_t>(op.output)];
  if (box.empty()) return {};
  auto in = view_of(gs, op.inputs[0], need[static_cast<size_t>(op.inputs[0])]);
  if (!in.ok()) return in.failure();
  auto out = view_of(gs, op.output, box);
  if (!out.ok()) return out.failure();
  const intops::ClampRange range = activation_clamp(ir_op);
  // clamp(x) as add: round_half_away(x * 1 + x * 0, 0) clamped to [lo, hi].
  isa::Vcfg cfg;
  cfg.mult_a = 1;
  cfg.mult_b = 0;
  cfg.shift = 0;
  cfg.lo = range.lo;
  cfg.hi = range.hi;
  code.push_back(cfg);
  code.push_back(unary_add(in.value(), out.value(), act_elem_, box.h.b, box.w.b, box.c.b, box.c.b,
                           box.h.size(), box.w.size(), box.c.size()));
  return {};
}

intops::ClampRange Lowering::activation_clamp(const ir::Op& ir_op) const {
  if (ir_op.kind == ir::OpKind::Clip) {
    const auto b = quant::clip_bounds(graph_.tensor(ir_op.inputs[0]), ir_op.get_float("min"),
                                      ir_op.get_float("max"));
    return {b.first, b.second};
  }
  return {0, intops::qmax(static_cast<int>(act_bytes_ * 8))};  // Relu: max(q, 0)
}

Status Lowering::fold_activation(const sched::Op& op, isa::Vcfg& cfg) const {
  if (op.activation.empty()) return {};
  const auto id = graph_.find_op(op.activation);
  if (!id || (graph_.op(*id).kind != ir::OpKind::Relu && graph_.op(*id).kind != ir::OpKind::Clip))
    return fail("op '" + op.name + "': its folded activation '" + op.activation +
                "' is not a Relu or Clip of the quantized graph");
  const auto range = intops::compose_clamps({cfg.lo, cfg.hi}, activation_clamp(graph_.op(*id)));
  cfg.lo = range.lo;
  cfg.hi = range.hi;
  return {};
}

Status Lowering::emit_add(const sched::GroupSchedule& gs, const sched::Op& op,
                          const std::vector<Box>& need, std::vector<isa::Instruction>& code) {
  const auto id = graph_.find_op(op.name);
  if (!id) return fail("op '" + op.name + "' is not in the quantized graph");
  const ir::Op& ir_op = graph_.op(*id);
  if (op.inputs.size() != 2) return fail("add '" + op.name + "' with other than two inputs");
  const Box& box = need[static_cast<size_t>(op.output)];
  if (box.empty()) return {};
  auto a = view_of(gs, op.inputs[0], need[static_cast<size_t>(op.inputs[0])]);
  if (!a.ok()) return a.failure();
  auto b = view_of(gs, op.inputs[1], need[static_cast<size_t>(op.inputs[1])]);
  if (!b.ok()) return b.failure();
  auto y = view_of(gs, op.output, box);
  if (!y.ok()) return y.failure();
  const auto p = quant::add_params(graph_.tensor(ir_op.inputs[0]), graph_.tensor(ir_op.inputs[1]),
                                   graph_.tensor(ir_op.outputs[0]));
  isa::Vcfg cfg;
  cfg.mult_a = static_cast<std::uint32_t>(p.multiplier_a);
  cfg.mult_b = static_cast<std::uint32_t>(p.multiplier_b);
  cfg.shift = static_cast<std::uint32_t>(p.shift);
  cfg.zp = p.zero_point;
  cfg.lo = p.lo;
  cfg.hi = p.hi;
  if (Status s = fold_activation(op, cfg); !s) return s;
  code.push_back(cfg);
  isa::Add add;
  add.a_sp = static_cast<std::uint32_t>(a.value().sp);
  add.b_sp = static_cast<std::uint32_t>(b.value().sp);
  add.dst_sp = static_cast<std::uint32_t>(y.value().sp);
  add.elem = act_elem_;
  add.a_addr = static_cast<std::uint32_t>(a.value().addr(box.h.b, box.w.b, box.c.b));
  add.b_addr = static_cast<std::uint32_t>(b.value().addr(box.h.b, box.w.b, box.c.b));
  add.dst_addr = static_cast<std::uint32_t>(y.value().addr(box.h.b, box.w.b, box.c.b));
  add.y_size = static_cast<std::uint32_t>(box.h.size());
  add.x_size = static_cast<std::uint32_t>(box.w.size());
  add.c_size = static_cast<std::uint32_t>(box.c.size());
  add.a_stride_y = static_cast<std::uint32_t>(a.value().stride_y());
  add.a_stride_x = static_cast<std::uint32_t>(a.value().pixel_elems);
  add.b_stride_y = static_cast<std::uint32_t>(b.value().stride_y());
  add.b_stride_x = static_cast<std::uint32_t>(b.value().pixel_elems);
  add.dst_stride_y = static_cast<std::uint32_t>(y.value().stride_y());
  add.dst_stride_x = static_cast<std::uint32_t>(y.value().pixel_elems);
  code.push_back(add);
  return {};
}

Status Lowering::emit_pool(const sched::GroupSchedule& gs, const sched::Op& op,
                           const std::vector<Box>& need, std::vector<isa::Instruction>& code) {
  const auto id = graph_.find_op(op.name);
  if (!id) return fail("op '" + op.name + "' is not in the quantized graph");
  const ir::Op& ir_op = graph_.op(*id);
  const Box& out_box = need[static_cast<size_t>(op.output)];
  if (out_box.empty()) return {};
  const int in_t = op.inputs[0];
  const sched::Shape3 in_shape = net_.tensor(in_t).shape;
  auto in = view_of(gs, in_t, need[static_cast<size_t>(in_t)]);
  if (!in.ok()) return in.failure();
  auto out = view_of(gs, op.output, out_box);
  if (!out.ok()) return out.failure();
  sched::Window win = op.window;
  const bool global = op.kind == sched::OpKind::GlobalPool;
  if (global) {
    win = sched::Window{};
    win.kernel_h = in_shape.h;
    win.kernel_w = in_shape.w;
  }
  const int64_t max_window = field_max("pool", "kh"), max_pad = field_max("pool", "pad_top");
  if (win.kernel_h > max_window || win.kernel_w > max_window)
    return fail("pool '" + op.name + "': a " + std::to_string(win.kernel_h) + "x" +
                std::to_string(win.kernel_w) + " window (the pool instruction takes at most " +
                std::to_string(max_window) + ")");
  if (win.dilation_h != 1 || win.dilation_w != 1)
    return fail("pool '" + op.name + "': dilated pooling is not supported");
  const bool average = op.kind != sched::OpKind::MaxPool;
  if (average) {
    if (ir_op.kind == ir::OpKind::AveragePool && ir_op.get_int("count_include_pad") == 0 &&
        (win.pad_top || win.pad_left || win.pad_bottom || win.pad_right))
      return fail("pool '" + op.name + "': count_include_pad = 0 with padding");
    const auto p =
        quant::average_params(graph_.tensor(ir_op.inputs[0]), graph_.tensor(ir_op.outputs[0]),
                              win.kernel_h * win.kernel_w);
    isa::Vcfg cfg;
    cfg.mult_a = static_cast<std::uint32_t>(p.multiplier);
    cfg.shift = static_cast<std::uint32_t>(p.shift);
    cfg.zp = p.zero_point;
    cfg.lo = p.lo;
    cfg.hi = p.hi;
    code.push_back(cfg);
  }
  const int64_t ya = out_box.h.b * win.stride_h - win.pad_top;
  const int64_t yb = (out_box.h.e - 1) * win.stride_h + win.kernel_h - win.pad_top;
  const int64_t xa = out_box.w.b * win.stride_w - win.pad_left;
  const int64_t xb = (out_box.w.e - 1) * win.stride_w + win.kernel_w - win.pad_left;
  const int64_t y0 = std::max<int64_t>(ya, 0), y1 = std::min(yb, in_shape.h);
  const int64_t x0 = std::max<int64_t>(xa, 0), x1 = std::min(xb, in_shape.w);
  const int64_t pads[4] = {y0 - ya, yb - y1, x0 - xa, xb - x1};
  for (int64_t pad : pads)
    if (pad > max_pad)
      return fail("pool '" + op.name + "': padding of " + std::to_string(pad) +
                  " at a tile edge (the pool instruction pads at most " + std::to_string(max_pad) +
                  ")");
  isa::Pool pool;
  pool.src_sp = static_cast<std::uint32_t>(in.value().sp);
  pool.dst_sp = static_cast<std::uint32_t>(out.value().sp);
  pool.elem = act_elem_;
  pool.mode = average ? isa::PoolMode::kAvg : isa::PoolMode::kMax;
  pool.src_addr = static_cast<std::uint32_t>(in.value().addr(y0, x0, out_box.c.b));
  pool.dst_addr =
      static_cast<std::uint32_t>(out.value().addr(out_box.h.b, out_box.w.b, out_box.c.b));
  pool.out_h = static_cast<std::uint32_t>(out_box.h.size());
  pool.out_w = static_cast<std::uint32_t>(out_box.w.size());
  pool.c_size = static_cast<std::uint32_t>(out_box.c.size());
  pool.kh = static_cast<std::uint32_t>(win.kernel_h);
  pool.kw = static_cast<std::uint32_t>(win.kernel_w);
  pool.stride_h = static_cast<std::uint32_t>(win.stride_h);
  pool.stride_w = static_cast<std::uint32_t>(win.stride_w);
  pool.pad_top = static_cast<std::uint32_t>(pads[0]);
  pool.pad_bottom = static_cast<std::uint32_t>(pads[1]);
  pool.pad_left = static_cast<std::uint32_t>(pads[2]);
  pool.pad_right = static_cast<std::uint32_t>(pads[3]);
  pool.src_stride_y = static_cast<std::uint32_t>(in.value().stride_y());
  pool.src_stride_x = static_cast<std::uint32_t>(in.value().pixel_elems);
  pool.dst_stride_y = static_cast<std::uint32_t>(out.value().stride_y());
  pool.dst_stride_x = static_cast<std::uint32_t>(out.value().pixel_elems);
  code.push_back(pool);
  return {};
}

Status Lowering::emit_concat(const sched::GroupSchedule& gs, const sched::Op& op,
                             const std::vector<Box>& need, std::vector<isa::Instruction>& code) {
  const Box& out_box = need[static_cast<size_t>(op.output)];
  if (out_box.empty()) return {};
  auto out = view_of(gs, op.output, out_box);
  if (!out.ok()) return out.failure();
  // The quantizer gives every input the concat's scale (docs/quantization.md, "Concat"): the
  // copy is add(x * 1 + x * 0) with no shift and the full clamp, which is exact.
  const int bits = static_cast<int>(act_bytes_ * 8);
  isa::Vcfg cfg;
  cfg.mult_a = 1;
  cfg.mult_b = 0;
  cfg.shift = 0;
  cfg.lo = intops::qmin(bits);
  cfg.hi = intops::qmax(bits);
  code.push_back(cfg);
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const int x = op.inputs[i];
    const int64_t offset = op.concat_offsets[i];
    const int64_t first = std::max(out_box.c.b, offset);
    const int64_t end = std::min(out_box.c.e, offset + net_.tensor(x).shape.c);
    if (first >= end) continue;  // no channel of this input in the tile
    auto in = view_of(gs, x, need[static_cast<size_t>(x)]);
    if (!in.ok()) return in.failure();
    code.push_back(unary_add(in.value(), out.value(), act_elem_, out_box.h.b, out_box.w.b,
                             first - offset, first, out_box.h.size(), out_box.w.size(),
                             end - first));
  }
  return {};
}

template <class F>
void set_flag(isa::Instruction& instruction, F f) {
  std::visit([&](auto& x) { f(x); }, instruction);
}

Status Lowering::lower_group(size_t index, const sched::GroupSchedule& gs) {
  const std::string where = "group " + std::to_string(index);
  if (gs.dram_view) return {};  // a view costs nothing and moves nothing
  if (gs.weight_sweep) return lower_sweep_group(index, gs);
  conv_params_.clear();
  extra_top_.clear();
  for (int o : gs.ops) {
    const sched::Op& op = net_.op(o);
    if (op.kind == sched::OpKind::Conv || op.kind == sched::OpKind::Gemm) {
      if (auto s = place_conv(gs, op); !s.ok()) return fail(where + ": " + s.reason());
    } else if (op.kind != sched::OpKind::Eltwise && op.kind != sched::OpKind::Add &&
               op.kind != sched::OpKind::MaxPool && op.kind != sched::OpKind::AvgPool &&
               op.kind != sched::OpKind::GlobalPool && op.kind != sched::OpKind::Concat) {
      return fail(where + ": op '" + op.name + "' (" + sched::to_string(op.kind) +
                  ") is not supported by codegen yet");
    }
  }
  size_t before = emitter_.size();
  const CodeTraffic traffic_before = out_.traffic;
  // Tiles in the scheduler's order (GroupSchedule::channel_part): channel parts outermost, then
  // rows, then columns.
  // Double buffering uses the schedule's ping-pong copies: of inputs and stored outputs, and
  // of streamed weight slices (the next slice loads into the other copy under the running conv).
  bool streamed = false;
  for (int o : gs.ops)
    streamed |= !gs.weights_resident &&
                (net_.op(o).kind == sched::OpKind::Conv || net_.op(o).kind == sched::OpKind::Gemm);
  // Halo caching (row tiles only): every buffer keeps the rows it shares with the next tile's
  // window; before that tile's loads, a compute-engine copy moves them to the top of the
  // buffer, then only fresh input rows are loaded and fresh output rows computed.
  const bool cache = gs.halo == sched::HaloMode::Cache;
  const bool pipelined = gs.double_buffered && !cache;
  struct TileCode {
    std::vector<isa::Instruction> prelude;
    std::vector<Phase> phases;  // one, or one per Gemm reduction chunk
    std::vector<isa::Instruction> stores;
  };
  std::vector<TileCode> tiles;
  std::vector<Box> previous(net_.tensors.size());
  // The tile's requested box of every stored output (the scheduler's tiling rule).
  auto requested_boxes = [&](int64_t tile) {
    const int64_t kt = gs.channel_part(tile), rt = gs.row_part(tile), ct = gs.col_part(tile);
    std::vector<Box> requested(net_.tensors.size());
    for (int t : gs.outputs) {
      const sched::Shape3 s = net_.tensor(t).shape;
      requested[static_cast<size_t>(t)] =
          Box{{s.c * kt / gs.channel_tiles, s.c * (kt + 1) / gs.channel_tiles},
              {s.h * rt / gs.row_tiles, s.h * (rt + 1) / gs.row_tiles},
              {s.w * ct / gs.col_tiles, s.w * (ct + 1) / gs.col_tiles}};
    }
    return requested;
  };
  // Kept inputs (GroupSchedule::keeps_inputs): the same box in every tile, loaded once.
  std::vector<char> kept(net_.tensors.size(), 0);
  if (gs.keeps_inputs()) {
    std::vector<std::vector<Box>> boxes;
    for (int64_t tile = 0; tile < gs.tiles(); ++tile)
      boxes.push_back(sched::transfer(net_, gs.ops, requested_boxes(tile)).need);
    for (int t : gs.inputs) {
      kept[static_cast<size_t>(t)] = 1;
      for (const auto& b : boxes)
        kept[static_cast<size_t>(t)] =
            kept[static_cast<size_t>(t)] &&
            b[static_cast<size_t>(t)] == boxes.front()[static_cast<size_t>(t)];
    }
  }
  // A double-buffered Gemm with reduction chunks ping-pongs chunk by chunk: phase q of the
  // group (a tile's chunk) loads into copy q % 2, the tile's bias and table into copy tile % 2.
  bool chunked = false;
  for (int o : gs.ops) {
    const auto params = conv_params_.find(o);
    chunked = chunked || (params != conv_params_.end() && params->second.chunks > 1);
  }
  chunk_pingpong_ = pipelined && streamed && chunked;
  int64_t weight_phase = 0;  // phases emitted so far (chunk ping-pong)
  for (int64_t tile = 0; tile < gs.tiles(); ++tile) {
    copy_ = pipelined ? static_cast<int>(tile % 2) : 0;
    // Streamed slices ping-pong per load: every tile, or every channel part when kept.
    weight_copy_ =
        pipelined && streamed
            ? static_cast<int>((gs.keeps_weight_slices() ? gs.channel_part(tile) : tile) % 2)
            : 0;
    table_copy_ = chunk_pingpong_ ? static_cast<int>(tile % 2) : -1;
    if (chunk_pingpong_) weight_copy_ = static_cast<int>(weight_phase % 2);
    const int64_t kt = gs.channel_part(tile);
    {
      const std::vector<Box> requested = requested_boxes(tile);
      const sched::TileRanges ranges = sched::transfer(net_, gs.ops, requested);
      const auto& window = ranges.need;
      std::vector<Box> need = window;  // what this tile loads and computes
      std::vector<isa::Instruction> prelude, stores;
      std::vector<Phase> phases(1);
      std::vector<isa::Instruction>& loads = phases.front().loads;  // (emit_conv adds phases)
      layout_.clear();
      if (cache) {
        for (size_t t = 0; t < need.size(); ++t) {
          const Box& prev = previous[t];
          if (prev.empty() || need[t].empty()) continue;
          need[t].h.b = std::max(need[t].h.b, prev.h.e);
          if (need[t].h.e < need[t].h.b) need[t].h.e = need[t].h.b;
          if (window[t].h.b <= prev.h.b || window[t].h.b >= prev.h.e) continue;
          // Rows [window.b, prev.e) are on chip at prev's positions: copy them up, row by row
          // (each destination lies above every later source).
          auto src = view_of(gs, static_cast<int>(t), prev);
          auto dst = view_of(gs, static_cast<int>(t), window[t]);
          if (!src.ok() || !dst.ok()) continue;  // not buffered in this group
          if (prelude.empty()) {
            isa::Vcfg cfg;
            cfg.mult_a = 1;
            cfg.mult_b = 0;
            cfg.shift = 0;
            cfg.lo = intops::qmin(static_cast<int>(act_bytes_ * 8));
            cfg.hi = intops::qmax(static_cast<int>(act_bytes_ * 8));
            prelude.push_back(cfg);
          }
          for (int64_t y = window[t].h.b; y < prev.h.e; ++y) {
            prelude.push_back(unary_add(src.value(), dst.value(), act_elem_, y, window[t].w.b,
                                        window[t].c.b, window[t].c.b, 1, window[t].w.size(),
                                        window[t].c.size()));
          }
        }
        for (size_t t = 0; t < window.size(); ++t)
          if (!window[t].empty()) previous[t] = window[t];
      }
      layout_ = window;
      const bool first_tile = tile == 0;
      for (int o : gs.ops) {
        const sched::Op& op = net_.op(o);
        const bool matrix = op.kind == sched::OpKind::Conv || op.kind == sched::OpKind::Gemm;
        // Resident: every slice once, before the first tile; streamed: the tile's slice, once
        // per channel part when the part's row/column tiles keep it.
        const bool new_part = gs.row_part(tile) == 0 && gs.col_part(tile) == 0;
        const bool load_slice =
            gs.weights_resident ? first_tile : !gs.keeps_weight_slices() || new_part;
        if (matrix && load_slice) {
          const int slice = gs.weights_resident ? -1 : static_cast<int>(kt);
          if (auto s = emit_conv_loads(op, slice, phases.front().loads); !s.ok())
            return fail(where + ": " + s.reason());
        }
      }
      if (first_tile && gs.prefetched) {
        // The first tile's weight loads run in the previous group's tail (into bytes the
        // scheduler proved free there); the tile's own loads start with its activations.
        prefetch_ = std::move(phases.front().loads);
        phases.front().loads.clear();
        if (prefetch_.empty())
          return fail(where + ": prefetched but the first tile loads no weights");
      }
      for (int t : gs.inputs) {
        const Box& box = need[static_cast<size_t>(t)];
        if (box.empty()) continue;
        if (kept[static_cast<size_t>(t)] && !first_tile) continue;  // on chip from the first tile
        auto view = view_of(gs, t, box);
        if (!view.ok()) return fail(where + ": " + view.reason());
        if (auto s = append_activation_loads(loads, t, box, view.value()); !s.ok())
          return fail(where + ": " + s.reason());
        out_.traffic.activations_read += box.elements() * act_bytes_;
      }
      for (size_t pos = 0; pos < gs.ops.size(); ++pos) {
        const sched::Op& op = net_.op(gs.ops[pos]);
        const bool matrix = op.kind == sched::OpKind::Conv || op.kind == sched::OpKind::Gemm;
        if (matrix) {
          if (auto s = emit_conv(gs, pos, op, need, phases); !s.ok())
            return fail(where + ": " + s.reason());
          continue;
        }
        std::vector<isa::Instruction>& compute = phases.back().compute;
        Status s = op.kind == sched::OpKind::Add       ? emit_add(gs, op, need, compute)
                   : op.kind == sched::OpKind::Eltwise ? emit_eltwise(gs, op, need, compute)
                   : op.kind == sched::OpKind::Concat  ? emit_concat(gs, op, need, compute)
                                                       : emit_pool(gs, op, need, compute);
        if (!s.ok()) return fail(where + ": " + s.reason());
      }
      for (int t : gs.outputs) {
        const Box& box = requested[static_cast<size_t>(t)];
        if (box.empty()) continue;  // more tiles than rows: this tile stores nothing
        auto view = view_of(gs, t, need[static_cast<size_t>(t)]);
        if (!view.ok()) return fail(where + ": " + view.reason());
        stores.push_back(store_of(t, box, view.value()));
      }
      // A tile with nothing to load (all rows cached), compute or store keeps its place in
      // the token protocol with a nop on that engine.
      for (auto [list, engine] : {std::pair{&phases.front().loads, isa::Engine::kLoad},
                                  std::pair{&phases.back().compute, isa::Engine::kCompute},
                                  std::pair{&stores, isa::Engine::kStore}}) {
        if (!list->empty()) continue;
        isa::Nop nop;
        nop.engine = engine;
        list->push_back(nop);
      }
      if (pipelined && phases.size() > 1 && !chunk_pingpong_)
        return fail(where + ": reduction chunks in a double-buffered group");
      weight_phase += static_cast<int64_t>(phases.size());
      tiles.push_back({std::move(prelude), std::move(phases), std::move(stores)});
    }
  }
  copy_ = 0;
  weight_copy_ = 0;
  table_copy_ = -1;
  chunk_pingpong_ = false;
  layout_.clear();
  if (auto s = place_prefetch(where, before); !s.ok()) return s;
  auto emit_all = [&](std::vector<isa::Instruction>& list) -> Status {
    for (auto& instruction : list)
      if (auto s = emitter_.emit(instruction); !s.ok()) return fail(where + ": " + s.reason());
    return {};
  };
  isa::Nop barrier;  // waits for a store, frees the next load
  barrier.engine = isa::Engine::kCompute;
  barrier.pop_next = true;
  barrier.push_prev = true;
  if (!pipelined) {
    // Serialised tile protocol: the tile's loads wait for the previous tile's stores (via a
    // compute nop), compute waits for the loads, stores wait for compute.
    // With reduction chunks a tile has several load-then-compute phases: each phase's compute
    // frees the weight buffer for the next phase's loads (compute->load), the last one hands
    // the tile to the stores.
    for (size_t i = 0; i < tiles.size(); ++i) {
      TileCode& t = tiles[i];
      for (size_t j = 0; j < t.phases.size(); ++j) {
        Phase& phase = t.phases[j];
        const bool last = j + 1 == t.phases.size();
        set_flag(phase.loads.front(), [&](auto& x) { x.pop_next = j == 0 ? work_before_ : true; });
        set_flag(phase.loads.back(), [](auto& x) { x.push_next = true; });
        set_flag(phase.compute.front(), [](auto& x) { x.pop_prev = true; });
        set_flag(phase.compute.back(), [&](auto& x) {
          if (last)
            x.push_next = true;
          else
            x.push_prev = true;
        });
      }
      set_flag(t.stores.front(), [](auto& x) { x.pop_prev = true; });
      set_flag(t.stores.back(), [](auto& x) { x.push_prev = true; });
      for (Phase& phase : t.phases)
        for (auto* list : {&phase.loads, &phase.compute})
          if (auto s = emit_all(*list); !s.ok()) return s;
      if (auto s = emit_all(t.stores); !s.ok()) return s;
      // The barrier; with halo caching, the next tile's row copies are the barrier.
      std::vector<isa::Instruction>* next_prelude =
          i + 1 < tiles.size() && !tiles[i + 1].prelude.empty() ? &tiles[i + 1].prelude : nullptr;
      if (next_prelude != nullptr) {
        set_flag(next_prelude->front(), [](auto& x) { x.pop_next = true; });
        set_flag(next_prelude->back(), [](auto& x) { x.push_prev = true; });
        if (auto s = emit_all(*next_prelude); !s.ok()) return s;
      } else if (auto s = emitter_.emit(barrier); !s.ok()) {
        return fail(where + ": " + s.reason());
      }
      work_before_ = true;
    }
  } else {
    // Double buffering (docs/codegen.md): tile t uses copy t % 2 of every input and stored
    // output. A tile is one phase (loads, compute), or one per Gemm reduction chunk; phase q
    // of the group uses copy q % 2 of the weights. Program order loads(0), then per phase:
    // loads(q+1), compute(q), and after a tile's last phase its stores, so the next phase's
    // loads are queued before this phase's compute. Tokens:
    //   load->compute   each phase's loads -> its compute;
    //   compute->store  each tile's last compute -> its stores;
    //   compute->load   compute(q) -> loads(q+2) (copy q % 2 of the inputs and weights is free
    //                   again; a chunk's tile table, in copy t % 2, is read by then: tile t+2's
    //                   first phase comes at least two phases after tile t's last);
    //   store->compute  stores(t) -> tile t+2's first compute (copy t % 2 of the outputs is
    //                   free again).
    // Two compute nops at the end take the last stores' tokens; the second frees the next
    // group's loads, as the serialised barrier does.
    const size_t n = tiles.size();
    std::vector<std::pair<size_t, size_t>> order;  // (tile, phase) of every phase, in order
    for (size_t t = 0; t < n; ++t)
      for (size_t j = 0; j < tiles[t].phases.size(); ++j) order.emplace_back(t, j);
    const size_t phases = order.size();
    for (size_t q = 0; q < phases; ++q) {
      const auto [t, j] = order[q];
      Phase& ph = tiles[t].phases[j];
      const bool first = j == 0, last = j + 1 == tiles[t].phases.size();
      set_flag(ph.loads.front(), [&](auto& x) { x.pop_next = q == 0 ? work_before_ : q >= 2; });
      set_flag(ph.loads.back(), [](auto& x) { x.push_next = true; });
      set_flag(ph.compute.front(), [&](auto& x) {
        x.pop_prev = true;
        x.pop_next = first && t >= 2;
      });
      set_flag(ph.compute.back(), [&](auto& x) {
        x.push_next = last;
        x.push_prev = q + 2 < phases;
      });
    }
    for (size_t t = 0; t < n; ++t) {
      set_flag(tiles[t].stores.front(), [](auto& x) { x.pop_prev = true; });
      set_flag(tiles[t].stores.back(), [](auto& x) { x.push_prev = true; });
    }
    if (auto s = emit_all(tiles[0].phases.front().loads); !s.ok()) return s;
    for (size_t q = 0; q < phases; ++q) {
      const auto [t, j] = order[q];
      if (q + 1 < phases) {
        const auto [tn, jn] = order[q + 1];
        if (auto s = emit_all(tiles[tn].phases[jn].loads); !s.ok()) return s;
      }
      if (auto s = emit_all(tiles[t].phases[j].compute); !s.ok()) return s;
      if (j + 1 == tiles[t].phases.size())
        if (auto s = emit_all(tiles[t].stores); !s.ok()) return s;
    }
    if (n >= 2) {
      isa::Nop drain;
      drain.engine = isa::Engine::kCompute;
      drain.pop_next = true;
      if (auto s = emitter_.emit(drain); !s.ok()) return fail(where + ": " + s.reason());
    }
    if (auto s = emitter_.emit(barrier); !s.ok()) return fail(where + ": " + s.reason());
    work_before_ = true;
  }
  record_group(gs, before, traffic_before);
  mark_prefetch_point(before);
  return {};
}

Status Lowering::place_prefetch(const std::string& where, size_t& before) {
  if (prefetch_.empty()) return {};
  if (prefetch_point_ < 0 || out_.groups.empty())
    return fail(where + ": prefetched, but no group runs before it");
  auto at = static_cast<size_t>(prefetch_point_);
  for (auto& instruction : prefetch_) {
    if (auto s = emitter_.insert(at++, std::move(instruction)); !s.ok())
      return fail(where + ": " + s.reason());
  }
  const auto n = static_cast<std::int64_t>(prefetch_.size());
  GroupCode& previous = out_.groups.back();
  previous.end_instruction += n;
  previous.prefetch_instructions += n;
  for (auto i = static_cast<size_t>(prefetch_point_); i < at; ++i)
    ++previous.instructions[std::string(isa::mnemonic(emitter_.program().instructions[i]))];
  before += prefetch_.size();
  prefetch_.clear();
  return {};
}

void Lowering::mark_prefetch_point(size_t before) {
  prefetch_point_ = -1;
  for (size_t i = emitter_.size(); i > before; --i) {
    if (isa::engine_of(emitter_.program().instructions[i - 1]) == isa::Engine::kLoad) {
      prefetch_point_ = static_cast<std::int64_t>(i);
      return;
    }
  }
}

void Lowering::record_group(const sched::GroupSchedule& gs, size_t before,
                            const CodeTraffic& traffic_before) {
  GroupCode group;
  for (int o : gs.ops) group.ops.push_back(net_.op(o).name);
  group.tiles = gs.tiles();
  for (size_t i = before; i < emitter_.size(); ++i)
    ++group.instructions[std::string(isa::mnemonic(emitter_.program().instructions[i]))];
  group.first_instruction = static_cast<int64_t>(before);
  group.end_instruction = static_cast<int64_t>(emitter_.size());
  group.traffic.weights_read = out_.traffic.weights_read - traffic_before.weights_read;
  group.traffic.activations_read = out_.traffic.activations_read - traffic_before.activations_read;
  group.traffic.activations_written =
      out_.traffic.activations_written - traffic_before.activations_written;
  group.traffic.requant_table_read =
      out_.traffic.requant_table_read - traffic_before.requant_table_read;
  group.macs = gs.macs;
  group.predicted_cycles = gs.cycles;
  out_.groups.push_back(std::move(group));
}

Status Lowering::place_sweep_conv(const sched::GroupSchedule& gs, const sched::Op& op) {
  const int index = static_cast<int>(&op - net_.ops.data());
  auto matrix = matrix_op(op);
  if (!matrix.ok()) return matrix.failure();
  const MatrixOp& m = matrix.value();
  if (m.gemm || m.depthwise)
    return fail("op '" + op.name + "' in a weight sweep is not a dense conv");
  const sched::BufferAlloc* copies[2] = {nullptr, nullptr};
  for (const auto& b : gs.buffers)
    if (b.role == sched::BufferRole::Weights && (b.name == "w:sweep" || b.name == "w:sweep#1"))
      copies[b.copy == 1 ? 1 : 0] = &b;
  if (copies[0] == nullptr || copies[1] == nullptr)
    return fail("the weight sweep has no pair of slice buffers (w:sweep, w:sweep#1)");
  if (copies[0]->scratchpad != copies[1]->scratchpad)
    return fail("the weight sweep's slice buffers lie in different scratchpads");
  ConvParams p;
  p.sp = copies[0]->scratchpad;
  p.has_bias = m.bias != nullptr;
  p.chunk_blocks = ceil_div(m.ci, rows_);
  p.chunks = 1;
  p.copy1_delta = copies[1]->offset - copies[0]->offset;
  const int64_t max_ic_blocks = field_max("conv", "ic_blocks");
  if (p.chunk_blocks > max_ic_blocks)
    return fail("op '" + op.name + "': " + std::to_string(p.chunk_blocks) +
                " input blocks in one conv instruction (ic_blocks takes at most " +
                std::to_string(max_ic_blocks) + ")");
  int64_t dram = out_.layout.find("w:" + op.name)->offset;
  for (const sched::Interval c : slices_of(index)) {
    const int64_t oc_blocks = ceil_div(c.size(), cols_);
    const int64_t packed = oc_blocks * p.chunk_blocks * m.kh * m.kw * rows_ * cols_ * weight_bytes_;
    const int64_t bias = p.has_bias ? oc_blocks * cols_ * 4 : 0;
    const int64_t need = ceil_div(packed + bias + c.size() * 8, 8) * 8;
    for (const sched::BufferAlloc* w : copies)
      if (need > w->size_bytes)
        return fail("op '" + op.name + "': a slice of " + std::to_string(c.size()) +
                    " channels needs " + std::to_string(need) + " bytes; '" + w->name + "' has " +
                    std::to_string(w->size_bytes));
    SliceParams sp;
    sp.channels = c;
    sp.dram_weights = dram;
    dram += c.size() * m.ci * m.kh * m.kw * weight_bytes_;
    sp.w_addr = copies[0]->offset;
    sp.bias_addr = sp.w_addr + packed;
    sp.table_addr = sp.bias_addr + bias;
    p.slices.push_back(sp);
  }
  conv_params_[index] = p;
  return {};
}

Status Lowering::lower_sweep_group(size_t index, const sched::GroupSchedule& gs) {
  const std::string where = "group " + std::to_string(index) + " (weight sweep)";
  conv_params_.clear();
  extra_top_.clear();
  auto is_conv = [&](int o) { return net_.op(o).kind == sched::OpKind::Conv; };
  if (gs.ops.empty() || !is_conv(gs.ops.front()) || gs.op_slices.size() != gs.ops.size())
    return fail(where + ": malformed (a conv first, one slice count per op)");
  auto is_whole = [&](int o) { return sched::runs_whole_in_sweep(net_.op(o)); };
  for (int o : gs.ops) {
    const sched::Op& op = net_.op(o);
    if (is_conv(o)) {
      if (auto s = place_sweep_conv(gs, op); !s.ok()) return fail(where + ": " + s.reason());
    } else if (!is_whole(o) && op.kind != sched::OpKind::Eltwise && op.kind != sched::OpKind::Add) {
      return fail(where + ": op '" + op.name + "' (" + sched::to_string(op.kind) +
                  ") cannot run per slice");
    }
  }
  size_t before = emitter_.size();
  const CodeTraffic traffic_before = out_.traffic;
  // One tile: every stored output whole, shape transfer for the rest.
  std::vector<Box> requested(net_.tensors.size());
  for (int t : gs.outputs)
    requested[static_cast<size_t>(t)] = sched::full_box(net_.tensor(t).shape);
  const std::vector<Box> whole = sched::transfer(net_, gs.ops, requested).need;
  // A buffer holds its tensor's whole box when its pixel has every channel, else the slice
  // being computed (docs/scheduler.md, "Weight sweeps").
  std::vector<char> holds_slice(net_.tensors.size(), 0);
  for (const auto& b : gs.buffers) {
    if (b.tensor < 0) continue;
    const Box& box = whole[static_cast<size_t>(b.tensor)];
    holds_slice[static_cast<size_t>(b.tensor)] = b.pixel_bytes < box.c.size() * act_bytes_;
  }
  copy_ = 0;
  layout_ = whole;
  std::vector<isa::Instruction> activation_loads;
  for (int t : gs.inputs) {
    const Box& box = whole[static_cast<size_t>(t)];
    if (box.empty()) continue;
    auto view = view_of(gs, t, box);
    if (!view.ok()) return fail(where + ": " + view.reason());
    if (auto s = append_activation_loads(activation_loads, t, box, view.value()); !s.ok())
      return fail(where + ": " + s.reason());
    out_.traffic.activations_read += box.elements() * act_bytes_;
  }
  // Weight phases: slice k of a conv and its block's elementwise ops on those channels. A pool
  // or Concat runs whole, over every channel, at the end of the phase before it (the blocks
  // before it are complete then).
  std::vector<Phase> phases;
  std::map<int, size_t> ready_phase;  // per tensor made here: the phase that completes it
  for (size_t pos = 0; pos < gs.ops.size(); ++pos) {
    if (is_whole(gs.ops[pos])) {
      const sched::Op& op = net_.op(gs.ops[pos]);
      if (phases.empty()) return fail(where + ": '" + op.name + "' before the first conv");
      ready_phase[op.output] = phases.size() - 1;
      layout_ = whole;
      std::vector<isa::Instruction>& compute = phases.back().compute;
      Status s = op.kind == sched::OpKind::Concat ? emit_concat(gs, op, whole, compute)
                                                  : emit_pool(gs, op, whole, compute);
      if (!s.ok()) return fail(where + ": " + s.reason());
      continue;
    }
    if (!is_conv(gs.ops[pos])) continue;
    const sched::Op& conv = net_.op(gs.ops[pos]);
    size_t block_end = pos + 1;
    while (block_end < gs.ops.size() && !is_conv(gs.ops[block_end]) && !is_whole(gs.ops[block_end]))
      ++block_end;
    const auto slices = slices_of(gs.ops[pos]);
    for (size_t k = 0; k < slices.size(); ++k) {
      weight_copy_ = static_cast<int>(phases.size() % 2);
      std::vector<Phase> phase(1);
      if (auto s = emit_conv_loads(conv, static_cast<int>(k), phase.front().loads); !s.ok())
        return fail(where + ": " + s.reason());
      std::vector<Box> need = whole;
      layout_ = whole;
      auto slice_of = [&](int t) {
        Box box = whole[static_cast<size_t>(t)];
        box.c = slices[k];
        need[static_cast<size_t>(t)] = box;
        if (holds_slice[static_cast<size_t>(t)]) layout_[static_cast<size_t>(t)] = box;
      };
      for (size_t q = pos; q < block_end; ++q) {
        const sched::Op& op = net_.op(gs.ops[q]);
        slice_of(op.output);
        if (q > pos)
          for (int t : op.inputs) slice_of(t);
      }
      if (auto s = emit_conv(gs, pos, conv, need, phase); !s.ok())
        return fail(where + ": " + s.reason());
      if (phase.size() != 1) return fail(where + ": reduction chunks in a weight sweep");
      std::vector<isa::Instruction>& compute = phase.front().compute;
      for (size_t q = pos + 1; q < block_end; ++q) {
        const sched::Op& op = net_.op(gs.ops[q]);
        Status s = op.kind == sched::OpKind::Add ? emit_add(gs, op, need, compute)
                                                 : emit_eltwise(gs, op, need, compute);
        if (!s.ok()) return fail(where + ": " + s.reason());
      }
      phases.push_back(std::move(phase.front()));
    }
    for (size_t q = pos; q < block_end; ++q)
      ready_phase[net_.op(gs.ops[q]).output] = phases.size() - 1;
  }
  weight_copy_ = 0;
  layout_ = whole;
  // Early stores (docs/codegen.md, "Weight sweeps"): each output after the phase that
  // completes it.
  std::vector<std::vector<isa::Instruction>> stores(phases.size());
  for (int t : gs.outputs) {
    const Box& box = requested[static_cast<size_t>(t)];
    auto view = view_of(gs, t, whole[static_cast<size_t>(t)]);
    if (!view.ok()) return fail(where + ": " + view.reason());
    const auto ready = ready_phase.find(t);
    if (ready == ready_phase.end())
      return fail(where + ": output '" + net_.tensor(t).name + "' is made by no op of the group");
    stores[ready->second].push_back(store_of(t, box, view.value()));
  }
  layout_.clear();
  if (phases.empty() || gs.outputs.empty()) return fail(where + ": nothing to compute or store");
  if (gs.prefetched) {
    // Slice 0 (copy 0) loads in the previous group's tail; phase 0 waits for the activations.
    prefetch_ = std::move(phases.front().loads);
    phases.front().loads.clear();
    if (activation_loads.empty()) {
      isa::Nop nop;
      nop.engine = isa::Engine::kLoad;
      activation_loads.push_back(nop);
    }
  }
  phases.front().loads.insert(phases.front().loads.begin(), activation_loads.begin(),
                              activation_loads.end());
  if (auto s = place_prefetch(where, before); !s.ok()) return s;
  // Tokens (docs/codegen.md, "Weight sweeps"): phase w's loads -> its compute (load->compute);
  // compute of phase w frees its slice copy for phase w + 2's loads (compute->load); the
  // compute of phase w -> the stores it completed (compute->store); those stores -> the compute
  // of phase w + 2 (store->compute: their bytes may be overwritten from then on), or, for the
  // last two phases' stores, -> the end of the group, whose barrier frees the next group's
  // loads.
  const size_t n = phases.size();
  for (size_t w = 0; w < n; ++w) {
    set_flag(phases[w].loads.front(),
             [&](auto& x) { x.pop_next = w == 0 ? work_before_ : w >= 2; });
    set_flag(phases[w].loads.back(), [](auto& x) { x.push_next = true; });
    set_flag(phases[w].compute.front(), [&](auto& x) {
      x.pop_prev = true;
      if (w >= 2 && !stores[w - 2].empty()) x.pop_next = true;
    });
    set_flag(phases[w].compute.back(), [&](auto& x) {
      if (w + 2 < n) x.push_prev = true;
      if (!stores[w].empty()) x.push_next = true;
    });
    if (!stores[w].empty()) {
      set_flag(stores[w].front(), [](auto& x) { x.pop_prev = true; });
      set_flag(stores[w].back(), [](auto& x) { x.push_prev = true; });
    }
  }
  size_t pending = 0;  // store->compute tokens the end of the group takes
  for (size_t w = n >= 2 ? n - 2 : 0; w < n; ++w) pending += stores[w].empty() ? 0 : 1;
  auto emit_all = [&](std::vector<isa::Instruction>& list) -> Status {
    for (auto& instruction : list)
      if (auto s = emitter_.emit(instruction); !s.ok()) return fail(where + ": " + s.reason());
    return {};
  };
  // Program order: loads of phase w + 1 before the compute of phase w (the prefetch), the
  // stores of phase w after its compute.
  if (auto s = emit_all(phases[0].loads); !s.ok()) return s;
  for (size_t w = 0; w < n; ++w) {
    if (w + 1 < n)
      if (auto s = emit_all(phases[w + 1].loads); !s.ok()) return s;
    if (auto s = emit_all(phases[w].compute); !s.ok()) return s;
    if (auto s = emit_all(stores[w]); !s.ok()) return s;
  }
  for (size_t k = 0; k + 1 < pending; ++k) {
    isa::Nop wait;  // takes one more of the last two phases' store tokens
    wait.engine = isa::Engine::kCompute;
    wait.pop_next = true;
    if (auto s = emitter_.emit(wait); !s.ok()) return fail(where + ": " + s.reason());
  }
  isa::Nop barrier;
  barrier.engine = isa::Engine::kCompute;
  barrier.pop_next = pending > 0;
  barrier.push_prev = true;
  if (auto s = emitter_.emit(barrier); !s.ok()) return fail(where + ": " + s.reason());
  work_before_ = true;
  record_group(gs, before, traffic_before);
  mark_prefetch_point(before);
  return {};
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
    if (!t.quant || t.quant->scales.empty())
      return fail("tensor '" + ir_name + "' has no quantization scale");
    io.scale = static_cast<double>(t.quant->scales[0]);
    io.zero_point = t.quant->zero_points.empty() ? 0 : t.quant->zero_points[0];
    out_.io[name] = io;
  }
  for (size_t g = 0; g < host_from_; ++g)
    if (auto s = lower_group(g, schedule_.groups[g]); !s.ok()) return s;
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

}  // namespace

Result<CompiledProgram> compile(
    const ir::Graph& quantized, const sched::ScheduledNet& scheduled, const HwConfig& config,
    const std::map<std::string, std::vector<std::int32_t>>& input_values) {
  CompiledProgram out;
  out.layout = DramLayout(config.dram.burst_bytes);
  Lowering lowering(quantized, scheduled, config, out);
  if (auto s = lowering.run(input_values); !s.ok()) return s.failure();
  return out;
}

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
                           {"pixel_channels", slice.pixel_channels}});
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
                       {"zero_point", io.zero_point}});
  }
  const auto& t = compiled.traffic;
  const auto& p = scheduled.schedule.traffic;
  j["dram_bytes"] = {{"weights_read", t.weights_read},
                     {"activations_read", t.activations_read},
                     {"activations_written", t.activations_written},
                     {"requant_tables_read", t.requant_table_read}};
  j["predicted_dram_bytes"] = {{"weights_read", p.weights_read},
                               {"activations_read", p.activations_read},
                               {"activations_written", p.activations_written}};
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
  if (auto s = write_text("schedule.json",
                          json_text(sched::to_json(scheduled.schedule, scheduled.net), 2) + "\n");
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
