// The scheduler's view of a network: ops in topological order over C x H x W tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::sched {

/// The op classes the scheduler distinguishes; ordered from "source" to "group terminators".
enum class OpKind {
  Input,       ///< a network input (no compute; its tensor is read from DRAM)
  Conv,        ///< convolution incl. stride, dilation, groups (depthwise: groups == channels)
  MaxPool,     ///< windowed max
  AvgPool,     ///< windowed average (count_include_pad)
  Pad,         ///< explicit spatial zero padding
  Eltwise,     ///< one-input elementwise: ReLU, Clip, BatchNorm, Scale, Requantize
  Add,         ///< elementwise sum of same-shaped inputs (residuals), or of a constant
               ///< (Op::constant_operand: a position embedding) (ISA `add`)
  Concat,      ///< channel concatenation
  GlobalPool,  ///< global average pooling: needs its whole input, ends a group
  Gemm,        ///< fully connected layer: needs its whole input, ends a group
  Softmax,     ///< needs its whole input, ends a group
  Reshape,     ///< Flatten/Reshape: a view of its input in DRAM, costs nothing
  Mul,         ///< elementwise product, the second operand equal-shaped or one value per channel
               ///< (C x 1 x 1: SE-block scaling), broadcast over the pixels, or a constant
               ///< (Op::constant_operand) (ISA `mul`)
  // Transformers (docs/scheduler-transformers.md "Transformers"): a token tensor [S, d] is C = d, H
  // = S, W = 1, stored row-major (channels last), as every tensor is.
  Norm,        ///< LayerNorm / RMSNorm of each pixel's channels (ISA `norm`)
  RowSoftmax,  ///< integer Softmax of each pixel's channels in rows of `row_length` (ISA
               ///< `softmax`); the float classifier Softmax on the host is `Softmax`
  MatMul,      ///< MatMul of two activations, one per head (ISA `matmul`): see HeadMatMul
  Slice,       ///< channels [channel_offset, channel_offset + C) of its input: a DRAM view
  /// Rows of a constant table by run-time token ids (ONNX Gather of a table by an INT64 input;
  /// ISA `gather`, docs/scheduler-transformers.md "Token ids"). Its input is the ids, 4 bytes a
  /// token (C = 4 / activation bytes, H = tokens, W = 1), which the gather reads from DRAM
  /// itself: the load phase fills the output's tile (no compute). Its DRAM weights are the rows
  /// it gathers, `gather_row_bytes` a token, never the whole table; `weight_bytes` is 0.
  Embedding,
};

/// Printable name of a kind ("conv", "maxpool", ...).
const char* to_string(OpKind kind);

/// Per-item tensor shape (batch 1); channels, rows, columns.
struct Shape3 {
  int64_t c = 0;
  int64_t h = 0;
  int64_t w = 0;
  int64_t elements() const { return c * h * w; }
  bool operator==(const Shape3&) const = default;
};

/// Sliding-window geometry shared by Conv and the pools (and Pad, which uses only the pads).
struct Window {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

/// One value flowing between ops.
struct Tensor {
  std::string name;
  Shape3 shape;
  int producer = -1;           ///< op index; -1 never happens after Net::finalize
  std::vector<int> consumers;  ///< op indices, ascending
  bool network_output = false;
  /// The factor f >= 2 of a network input that the stem conv reads space-to-depth
  /// (docs/scheduler.md, "Space-to-depth stem"): `shape` is (f^2 c, h/f, w/f) of the (c, h, w)
  /// tensor stored in DRAM (NHWC), channel (f a + b) c + k of pixel (y, x) being channel k of
  /// stored pixel (f y + a, f x + b). A load of it is one DMA per row phase a. 1 for every other
  /// tensor.
  int64_t space_to_depth = 1;
  /// A rank-4 IR tensor with its channels last ([1, H, W, C]: Swin's and ConvNeXt's NHWC
  /// maps), whose DRAM bytes are already its IR order; any other rank-4 tensor is NCHW, read
  /// back from NHWC (codegen::read_tensor). Set for network outputs (GraphConverter::take).
  bool ir_channels_last = false;
};

/// A conv of stride f rewritten to read a space-to-depth input of factor f
/// (Tensor::space_to_depth): the original kernel, input channels and the shift of its top/left
/// padding to a multiple of f. Weight (o, (f a + b) C + k, y, x) of the rewritten conv is the
/// original's (o, k, f y + a - shift_h, f x + b - shift_w), 0 where that position lies outside
/// the original kernel.
struct SpaceToDepthConv {
  int64_t channels = 0;  ///< the original input channels C; 0: not rewritten
  int64_t kernel_h = 0, kernel_w = 0;
  int64_t shift_h = 0, shift_w = 0;
  int64_t factor = 2;  ///< f: the original stride

  /// The original's weight index (o, k, ky, kx) of the rewritten weight (o, i, y, x), or -1 for
  /// an added zero.
  int64_t original_weight(int64_t o, int64_t i, int64_t y, int64_t x) const {
    const int64_t phase = i / channels, k = i % channels;
    const int64_t ky = factor * y + phase / factor - shift_h;
    const int64_t kx = factor * x + phase % factor - shift_w;
    if (ky < 0 || ky >= kernel_h || kx < 0 || kx >= kernel_w) return -1;
    return ((o * channels + k) * kernel_h + ky) * kernel_w + kx;
  }
};

/// A MatMul of two activations per head (OpKind::MatMul). Head h reads a(m, k) at pixel m,
/// channel a_offset + h * a_head_stride + k of input 0; b(k, n) at pixel k, channel b_offset +
/// h * b_head_stride + n of input 1 (transpose_b: pixel n, channel b_offset + h * b_head_stride
/// + k: K stored as [S][d] rows, read transposed by the matrix unit); it writes pixel m,
/// channels h * n_size + n of the output (heads side by side: the head merge is a view).
/// A batch of `batch` sequences (Swin's windows, an imported model at batch B): sequence s
/// holds rows [s * m_size, (s + 1) * m_size) of a and of the output and rows [s * rows_b, (s +
/// 1) * rows_b) of b (rows_b: k_size, or n_size when transpose_b); the pixels above are then
/// those of the row's own sequence. A tile's rows run in per-sequence portions
/// (unit_portions(rows, m_size), scheduler/weight_loads.hpp).
struct HeadMatMul {
  int64_t heads = 1;
  int64_t m_size = 0, k_size = 0, n_size = 0;  ///< per head and sequence
  int64_t a_offset = 0, a_head_stride = 0;
  int64_t b_offset = 0, b_head_stride = 0;
  bool transpose_b = false;
  /// Grouped-query attention: heads that share one `b` head (head h reads b head h / this).
  int64_t b_head_repeat = 1;
  int64_t batch = 1;  ///< sequences (above)
};

/// One op. `inputs` index Net::tensors; `output` is the single produced tensor.
struct Op {
  std::string name;
  OpKind kind = OpKind::Eltwise;
  std::string type;  ///< the source op type, for reports ("Relu", "BatchNorm", "Scale")
  std::vector<int> inputs;
  int output = -1;
  Window window;             ///< Conv, pools, Pad
  int64_t groups = 1;        ///< Conv channel groups
  int64_t weight_bytes = 0;  ///< weights + int32 bias, compact, as stored in DRAM
  /// Conv/Gemm: the requantization table codegen loads with the weights, 8 B per output
  /// channel (int32 multiplier + int32 shift, docs/isa.md); counted as weight traffic.
  int64_t requant_table_bytes = 0;
  int64_t macs = 0;                     ///< multiply-accumulates (Conv, Gemm)
  int64_t vector_elements = 0;          ///< elements the vector unit processes (everything else)
  std::vector<int64_t> concat_offsets;  ///< Concat: channel offset of each input (row offset
                                        ///< when `concat_rows`)
  /// Concat along the tokens (rows, H) of token tensors: the KV cache append of a decode step
  /// (docs/scheduler-transformers.md "Decode"). Always a DRAM view: input i lies at rows
  /// [concat_offsets[i], ...) of the output's region (a network input written there, the new
  /// rows stored there by a `copy_only` Concat), so the step moves the new rows, never the cache.
  bool concat_rows = false;
  /// A one-input Concat that copies its input into a row slice of a `concat_rows` view (the new
  /// K/V row, a channel slice of c_attn's output, stored into the cache): never a view itself.
  bool copy_only = false;
  SpaceToDepthConv space_to_depth;  ///< Conv: the stem rewrite, if any
  /// Of `weight_bytes`: the zero weights the space-to-depth rewrite adds (moved, stored, but
  /// not the model's: left out of the compulsory bytes).
  int64_t zero_weight_bytes = 0;
  /// Conv, Gemm, Add: the ReLU or Clip folded into this op's output clamp (its source op name;
  /// empty: none). `output` is then the activation's output tensor, and the pre-activation
  /// tensor never exists (docs/scheduler.md, "Activation folding").
  std::string activation;
  /// Eltwise: a unary function of 8-bit codes by table lookup (Sigmoid, HardSigmoid, HardSwish,
  /// Silu, Tanh, Gelu, ...: one mechanism, ISA `lut`). Its 256-entry table is its
  /// `weight_bytes`, needed whole by every tile (weight_bytes_for), not per channel.
  bool lookup_table = false;
  /// GlobalPool over a map wider than the pool instruction's window (15): lowered as depthwise
  /// convs of all-one weights into int32 sums, one per sub-window, then one requantize
  /// (docs/codegen.md, "SE pools wider than the pool window"). Its `weight_bytes` is the one
  /// DRAM pixel of ones (matrix_cols elements) that every load of the ones reads, needed whole
  /// by every tile (weight_bytes_for), as a lookup table.
  bool pool_by_conv = false;
  /// Slice: the first input channel of the view.
  int64_t channel_offset = 0;
  /// Slice: the first input row (token) of the view: one sequence of a batch of token rows.
  int64_t row_offset = 0;
  /// RowSoftmax: elements per softmax row (C is a whole number of rows: heads side by side).
  /// Norm: elements per normalised row where a pixel holds several (each head's channels of a
  /// head view: swin_v2's cosine attention normalises q and k per head); 0: the whole pixel.
  int64_t row_length = 0;
  /// RowSoftmax with a causal mask (ISA `softmax` `causal`; scheduler/causal_mask.hpp): key j
  /// of query i is kept iff j <= i + mask_diagonal.
  bool causal = false;
  int64_t mask_diagonal = 0;
  /// Mul or Add by a constant (a rotary embedding's cos/sin table, a layer scale, ViT's position
  /// embedding): `inputs` holds the activation only; the constant, stored compact as this op's
  /// `weight_bytes`, loads whole like a lookup table, and output element (y, x, c) multiplies
  /// (adds) its element y * constant_stride_y + x * constant_stride_x + c (a stride 0
  /// broadcasts; ISA `mul`'s and `add`'s b strides).
  bool constant_operand = false;
  int64_t constant_stride_y = 0, constant_stride_x = 0;
  /// A constant added to (multiplied into) a heads-first view [B, H, S, n] of a token tensor
  /// (Swin's relative-position bias and shift mask on the scores): the IR constant, [1 or B, H,
  /// S, n] (a 1 along H or n broadcast; S 1: one row for every row, stride 0), is stored
  /// re-laid as the token tensor's rows [(1 or B) S][H n] (`constant_heads` H; 0: stored as the
  /// IR has it), and, where it is one sequence's rows
  /// broadcast over a batch, row y reads the constant's row y mod `constant_row_period` (0:
  /// row y): a tile's rows run in per-period portions, one instruction each.
  int64_t constant_heads = 0;
  int64_t constant_head_dim = 0;  ///< n, with constant_heads (a 1 along n, or S, broadcast)
  int64_t constant_row_period = 0;
  /// Norm: LayerNorm (subtract the mean) or RMSNorm.
  bool centre = true;
  /// Reshape: a pixel gather (scheduler/pixel_gather.hpp; Swin's window partition and its
  /// reverse): output pixel p (row-major) is input pixel pixel_source[p], its channels whole, a
  /// DRAM view that loads in strided boxes. Empty: the pixels keep their order.
  std::vector<int64_t> pixel_source;
  HeadMatMul matmul;  ///< MatMul
  /// Embedding: the table's rows (ids index [-table_rows, table_rows)) and the bytes of one
  /// gathered row (the output's channels).
  int64_t table_rows = 0;
  int64_t gather_row_bytes = 0;
};

/// A network ready to schedule: ops in a topological order, element sizes from the config.
struct Net {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  int64_t activation_bytes = 1;  ///< bytes per activation element (8-bit: 1, 16-bit: 2)

  /// Adds a tensor and returns its index.
  int add_tensor(std::string name, Shape3 shape);
  /// Adds an op (its output tensor must already exist) and returns its index. Ops must be
  /// added in a topological order.
  int add_op(Op op);
  /// Fills consumers/producers and marks tensors without consumers as network outputs.
  void finalize();

  int64_t tensor_bytes(int tensor) const {
    return tensors[static_cast<size_t>(tensor)].shape.elements() * activation_bytes;
  }
  const Tensor& tensor(int index) const { return tensors[static_cast<size_t>(index)]; }
  const Op& op(int index) const { return ops[static_cast<size_t>(index)]; }
  int size() const { return static_cast<int>(ops.size()); }

  int64_t total_macs() const;
  int64_t total_weight_bytes() const;
  /// total_weight_bytes without the zeros a space-to-depth stem adds: the model's weights.
  int64_t model_weight_bytes() const;
  int64_t total_requant_table_bytes() const;
  /// Bytes of the network inputs and outputs, each once.
  int64_t io_bytes() const;
};

/// Whether `tensor` is a graph constant that lies in DRAM as a network input does: the output
/// of an Input op of type "Constant" (ViT's class token, the row a row Concat places before the
/// patch tokens; docs/scheduler-transformers.md "Layout views"). Codegen writes its quantized
/// values into the DRAM image as it writes a weight; no run supplies it. Compulsory bytes count it
/// with the inputs.
inline bool is_dram_constant(const Net& net, int tensor) {
  const Op& producer = net.op(net.tensor(tensor).producer);
  return producer.kind == OpKind::Input && producer.type == "Constant";
}

/// Output shape of a windowed op on `in` (floor division, as ONNX with ceil_mode=0).
/// Bytes of the requant table of a matrix op with `out_channels` outputs (docs/isa.md).
inline constexpr int64_t kRequantEntryBytes = 8;

int64_t window_out_extent(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                          int64_t pad_begin, int64_t pad_end);

/// Small builder for tests and the random DAG generator: adds op + output tensor with the
/// shape computed from its inputs, MACs and weight bytes filled in.
class NetBuilder {
 public:
  explicit NetBuilder(std::string name, int64_t activation_bytes = 1,
                      int64_t weight_element_bytes = 1);
  int input(const std::string& name, Shape3 shape);
  int conv(const std::string& name, int x, int64_t out_channels, int64_t kernel, int64_t stride = 1,
           int64_t pad = 0, int64_t groups = 1, int64_t dilation = 1, bool bias = false);
  int conv(const std::string& name, int x, int64_t out_channels, const Window& window,
           int64_t groups, bool bias);
  int pool(const std::string& name, int x, OpKind kind, int64_t kernel, int64_t stride,
           int64_t pad = 0);
  int pad(const std::string& name, int x, int64_t top, int64_t left, int64_t bottom, int64_t right);
  int eltwise(const std::string& name, int x, const std::string& type = "Relu",
              int64_t weight_elements = 0);
  int add(const std::string& name, int a, int b);
  int concat(const std::string& name, const std::vector<int>& xs);
  int global_pool(const std::string& name, int x);
  int gemm(const std::string& name, int x, int64_t out_features, bool bias = true);
  int softmax(const std::string& name, int x);
  int reshape(const std::string& name, int x, Shape3 shape);
  /// Finalizes and returns the network (the builder is left empty).
  Net build();
  const Net& peek() const { return net_; }

 private:
  int emit(Op op, Shape3 out_shape);
  Net net_;
  int64_t weight_element_bytes_;
};

}  // namespace tessel::sched
