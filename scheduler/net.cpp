// Net construction helpers: topological bookkeeping, shapes, MACs and weight bytes.
#include "scheduler/net.hpp"

#include <utility>

namespace tessel::sched {

namespace {
constexpr int64_t kBiasBytes = 4;  // int32 bias, as the quantization contract stores it
}

const char* to_string(OpKind kind) {
  switch (kind) {
    case OpKind::Input:
      return "input";
    case OpKind::Conv:
      return "conv";
    case OpKind::MaxPool:
      return "maxpool";
    case OpKind::AvgPool:
      return "avgpool";
    case OpKind::Pad:
      return "pad";
    case OpKind::Eltwise:
      return "eltwise";
    case OpKind::Add:
      return "add";
    case OpKind::Concat:
      return "concat";
    case OpKind::GlobalPool:
      return "globalpool";
    case OpKind::Gemm:
      return "gemm";
    case OpKind::Softmax:
      return "softmax";
    case OpKind::Reshape:
      return "reshape";
    case OpKind::Mul:
      return "mul";
    case OpKind::Norm:
      return "norm";
    case OpKind::RowSoftmax:
      return "rowsoftmax";
    case OpKind::MatMul:
      return "matmul";
    case OpKind::Slice:
      return "slice";
    case OpKind::Embedding:
      return "embedding";
  }
  return "?";
}

int Net::add_tensor(std::string tensor_name, Shape3 shape) {
  Tensor tensor;
  tensor.name = std::move(tensor_name);
  tensor.shape = shape;
  tensors.push_back(std::move(tensor));
  return static_cast<int>(tensors.size()) - 1;
}

int Net::add_op(Op op) {
  const int index = static_cast<int>(ops.size());
  tensors[static_cast<size_t>(op.output)].producer = index;
  ops.push_back(std::move(op));
  return index;
}

void Net::finalize() {
  for (auto& tensor : tensors) tensor.consumers.clear();
  for (size_t i = 0; i < ops.size(); ++i) {
    for (int input : ops[i].inputs) {
      auto& consumers = tensors[static_cast<size_t>(input)].consumers;
      if (consumers.empty() || consumers.back() != static_cast<int>(i)) {
        consumers.push_back(static_cast<int>(i));
      }
    }
  }
  for (auto& tensor : tensors) {
    if (tensor.consumers.empty()) tensor.network_output = true;
  }
}

namespace {

// The sum of `per_op(op)` over every op of the net.
template <class PerOp>
int64_t sum_over(const std::vector<Op>& ops, PerOp per_op) {
  int64_t total = 0;
  for (const auto& op : ops) total += per_op(op);
  return total;
}

}  // namespace

int64_t Net::total_macs() const {
  return sum_over(ops, [](const Op& op) { return op.macs; });
}

int64_t Net::total_weight_bytes() const {
  return sum_over(ops, [](const Op& op) { return op.weight_bytes; });
}

int64_t Net::model_weight_bytes() const {
  // An Embedding's weights are the rows it gathers, one a token (never the whole table).
  return sum_over(ops, [this](const Op& op) {
    return op.weight_bytes - op.zero_weight_bytes +
           (op.kind == OpKind::Embedding ? tensor(op.output).shape.h * op.gather_row_bytes : 0);
  });
}

int64_t Net::total_requant_table_bytes() const {
  return sum_over(ops, [](const Op& op) { return op.requant_table_bytes; });
}

int64_t Net::io_bytes() const {
  int64_t total = 0;
  for (size_t t = 0; t < tensors.size(); ++t) {
    const auto& tensor = tensors[t];
    const bool is_input =
        tensor.producer >= 0 && ops[static_cast<size_t>(tensor.producer)].kind == OpKind::Input;
    if (is_input || tensor.network_output) total += tensor_bytes(static_cast<int>(t));
  }
  return total;
}

int64_t window_out_extent(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                          int64_t pad_begin, int64_t pad_end) {
  const int64_t span = (kernel - 1) * dilation + 1;
  return (in + pad_begin + pad_end - span) / stride + 1;
}

NetBuilder::NetBuilder(std::string name, int64_t activation_bytes, int64_t weight_element_bytes)
    : weight_element_bytes_(weight_element_bytes) {
  net_.name = std::move(name);
  net_.activation_bytes = activation_bytes;
}

int NetBuilder::emit(Op op, Shape3 out_shape) {
  op.output = net_.add_tensor(op.name, out_shape);
  net_.add_op(std::move(op));
  return net_.ops.back().output;
}

int NetBuilder::input(const std::string& name, Shape3 shape) {
  Op op;
  op.name = name;
  op.kind = OpKind::Input;
  op.type = "Input";
  return emit(std::move(op), shape);
}

int NetBuilder::conv(const std::string& name, int x, int64_t out_channels, int64_t kernel,
                     int64_t stride, int64_t pad, int64_t groups, int64_t dilation, bool bias) {
  Window window;
  window.kernel_h = window.kernel_w = kernel;
  window.stride_h = window.stride_w = stride;
  window.dilation_h = window.dilation_w = dilation;
  window.pad_top = window.pad_left = window.pad_bottom = window.pad_right = pad;
  return conv(name, x, out_channels, window, groups, bias);
}

int NetBuilder::conv(const std::string& name, int x, int64_t out_channels, const Window& window,
                     int64_t groups, bool bias) {
  const Shape3 in = net_.tensor(x).shape;
  Op op;
  op.name = name;
  op.kind = OpKind::Conv;
  op.type = "Conv";
  op.inputs = {x};
  op.window = window;
  op.groups = groups;
  const Shape3 out{out_channels,
                   window_out_extent(in.h, window.kernel_h, window.stride_h, window.dilation_h,
                                     window.pad_top, window.pad_bottom),
                   window_out_extent(in.w, window.kernel_w, window.stride_w, window.dilation_w,
                                     window.pad_left, window.pad_right)};
  const int64_t weights_per_output = (in.c / groups) * window.kernel_h * window.kernel_w;
  op.macs = out.elements() * weights_per_output;
  op.weight_bytes = out_channels * weights_per_output * weight_element_bytes_ +
                    (bias ? out_channels * kBiasBytes : 0);
  op.requant_table_bytes = out_channels * kRequantEntryBytes;
  return emit(std::move(op), out);
}

int NetBuilder::pool(const std::string& name, int x, OpKind kind, int64_t kernel, int64_t stride,
                     int64_t pad) {
  const Shape3 in = net_.tensor(x).shape;
  Op op;
  op.name = name;
  op.kind = kind;
  op.type = kind == OpKind::MaxPool ? "MaxPool" : "AveragePool";
  op.inputs = {x};
  op.window.kernel_h = op.window.kernel_w = kernel;
  op.window.stride_h = op.window.stride_w = stride;
  op.window.pad_top = op.window.pad_left = op.window.pad_bottom = op.window.pad_right = pad;
  const Shape3 out{in.c, window_out_extent(in.h, kernel, stride, 1, pad, pad),
                   window_out_extent(in.w, kernel, stride, 1, pad, pad)};
  op.vector_elements = out.elements() * kernel * kernel;
  return emit(std::move(op), out);
}

int NetBuilder::pad(const std::string& name, int x, int64_t top, int64_t left, int64_t bottom,
                    int64_t right) {
  const Shape3 in = net_.tensor(x).shape;
  Op op;
  op.name = name;
  op.kind = OpKind::Pad;
  op.type = "Pad";
  op.inputs = {x};
  op.window.pad_top = top;
  op.window.pad_left = left;
  op.window.pad_bottom = bottom;
  op.window.pad_right = right;
  const Shape3 out{in.c, in.h + top + bottom, in.w + left + right};
  op.vector_elements = out.elements();
  return emit(std::move(op), out);
}

int NetBuilder::eltwise(const std::string& name, int x, const std::string& type,
                        int64_t weight_elements) {
  const Shape3 in = net_.tensor(x).shape;
  Op op;
  op.name = name;
  op.kind = OpKind::Eltwise;
  op.type = type;
  op.inputs = {x};
  op.vector_elements = in.elements();
  op.weight_bytes = weight_elements * weight_element_bytes_;
  return emit(std::move(op), in);
}

int NetBuilder::add(const std::string& name, int a, int b) {
  const Shape3 in = net_.tensor(a).shape;
  Op op;
  op.name = name;
  op.kind = OpKind::Add;
  op.type = "Add";
  op.inputs = {a, b};
  op.vector_elements = in.elements();
  return emit(std::move(op), in);
}

int NetBuilder::concat(const std::string& name, const std::vector<int>& xs) {
  Op op;
  op.name = name;
  op.kind = OpKind::Concat;
  op.type = "Concat";
  op.inputs = xs;
  Shape3 out = net_.tensor(xs.front()).shape;
  out.c = 0;
  for (int x : xs) {
    op.concat_offsets.push_back(out.c);
    out.c += net_.tensor(x).shape.c;
  }
  op.vector_elements = out.elements();
  return emit(std::move(op), out);
}

int NetBuilder::global_pool(const std::string& name, int x) {
  const Shape3 in = net_.tensor(x).shape;
  Op op;
  op.name = name;
  op.kind = OpKind::GlobalPool;
  op.type = "GlobalAveragePool";
  op.inputs = {x};
  op.vector_elements = in.elements();
  return emit(std::move(op), Shape3{in.c, 1, 1});
}

int NetBuilder::gemm(const std::string& name, int x, int64_t out_features, bool bias) {
  const Shape3 in = net_.tensor(x).shape;
  Op op;
  op.name = name;
  op.kind = OpKind::Gemm;
  op.type = "Gemm";
  op.inputs = {x};
  op.macs = in.elements() * out_features;
  op.weight_bytes =
      in.elements() * out_features * weight_element_bytes_ + (bias ? out_features * kBiasBytes : 0);
  op.requant_table_bytes = out_features * kRequantEntryBytes;
  return emit(std::move(op), Shape3{out_features, 1, 1});
}

int NetBuilder::softmax(const std::string& name, int x) {
  const Shape3 in = net_.tensor(x).shape;
  Op op;
  op.name = name;
  op.kind = OpKind::Softmax;
  op.type = "Softmax";
  op.inputs = {x};
  op.vector_elements = in.elements();
  return emit(std::move(op), in);
}

int NetBuilder::reshape(const std::string& name, int x, Shape3 shape) {
  Op op;
  op.name = name;
  op.kind = OpKind::Reshape;
  op.type = "Flatten";
  op.inputs = {x};
  return emit(std::move(op), shape);
}

Net NetBuilder::build() {
  net_.finalize();
  Net out = std::move(net_);
  net_ = Net{};
  return out;
}

}  // namespace tessel::sched
