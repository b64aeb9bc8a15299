// What the channels-last kernels share: layout conversion, a sample's values in either layout,
// activation bounds.
#include "compiler/targets/cpu/ops/channels_last.hpp"

#include <limits>

#include "compiler/quant/realize.hpp"

namespace tessel::cpu {

bool layouts_differ(const ir::Shape& shape) {
  return shape.size() == 4 && shape[1] > 1 && shape[2] * shape[3] > 1;
}

TensorData relayout(const TensorData& t, bool to_nhwc) {
  if (!layouts_differ(t.shape())) return t;
  TensorData out(t.dtype(), t.shape());
  const auto& s = t.shape();
  const int bytes = ir::dtype_bytes(t.dtype());
  if (to_nhwc)
    nhwc::nchw_to_nhwc(t.raw(), out.raw(), s[0], s[1], s[2] * s[3], bytes);
  else
    nhwc::nhwc_to_nchw(t.raw(), out.raw(), s[0], s[1], s[2] * s[3], bytes);
  return out;
}

std::pair<std::int32_t, std::int32_t> activation_bounds(const ir::Graph& graph, const ir::Op& op) {
  if (op.kind == ir::OpKind::Relu) return {0, std::numeric_limits<std::int32_t>::max()};
  return quant::clip_bounds(graph.tensor(op.inputs[0]), op.get_float("min"), op.get_float("max"));
}

const TensorData& SampleValues::nchw(const std::string& name) {
  if (auto it = values.find(name); it != values.end()) {
    Value& v = it->second;
    if (v.nhwc && layouts_differ(v.data.shape())) v.data = relayout(v.data, false);
    v.nhwc = false;
    return v.data;
  }
  return constants_->at(name);
}

const TensorData& SampleValues::channels_last(const std::string& name) {
  if (auto it = values.find(name); it != values.end()) {
    Value& v = it->second;
    if (v.data.shape().size() != 4) return v.data;
    if (!v.nhwc && layouts_differ(v.data.shape())) v.data = relayout(v.data, true);
    v.nhwc = true;
    return v.data;
  }
  const TensorData& c = constants_->at(name);
  if (c.shape().size() != 4) return c;
  auto cached = constants_nhwc_->find(name);
  if (cached == constants_nhwc_->end())
    cached = constants_nhwc_->emplace(name, relayout(c, true)).first;
  return cached->second;
}

std::pair<const TensorData*, bool> SampleValues::as_is(const std::string& name) {
  if (auto it = values.find(name); it != values.end())
    return {&it->second.data, it->second.nhwc && layouts_differ(it->second.data.shape())};
  return {&constants_->at(name), false};
}

std::string ChannelsLastArgs::where() const {
  return ir::where(op);
}

}  // namespace tessel::cpu
