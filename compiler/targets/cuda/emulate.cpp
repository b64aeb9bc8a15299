// Host execution of a GpuPlan through the per-element functions the CUDA kernels call.
#include "compiler/targets/cuda/emulate.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cuda/dp4a.cuh"
#include "compiler/targets/cuda/lower.hpp"

namespace tessel::cuda {

cpu::TensorData buffer_tensor(const GpuPlan& plan, int index,
                              const std::vector<std::int64_t>& shape, const void* data) {
  const Buffer& b = plan.buffers[static_cast<std::size_t>(index)];
  DeviceOutput out{b.tensor, PlanView{index, b.n, b.h, b.w, b.c, b.c_stride, 0}, shape, b.type};
  return gather_output(plan, out, data);
}

std::map<std::string, cpu::TensorData> default_inputs(const GpuPlan& plan) {
  std::map<std::string, cpu::TensorData> inputs;
  for (std::size_t i = 0; i < plan.inputs.size(); ++i)
    inputs.emplace(plan.inputs[i].tensor, cpu::default_input(plan.inputs[i].shape, i));
  return inputs;
}

Result<std::map<std::string, cpu::TensorData>> emulate(const GpuPlan& plan,
                                                       const cpu::TensorData& input,
                                                       bool all_buffers) {
  return emulate(plan, {{plan.input_tensor, input}}, all_buffers);
}

Result<std::map<std::string, cpu::TensorData>> emulate(
    const GpuPlan& plan, const std::map<std::string, cpu::TensorData>& inputs, bool all_buffers) {
  std::vector<std::vector<std::uint8_t>> memory;
  for (const auto& b : plan.buffers) memory.emplace_back(static_cast<std::size_t>(b.bytes()), 0);
  for (std::size_t i = 0; i < plan.buffers.size(); ++i)
    if (!plan.buffers[i].contents.empty()) memory[i] = plan.buffers[i].contents;
  for (const PlanInput& in : plan.inputs) {
    const auto it = inputs.find(in.tensor);
    if (it == inputs.end()) return fail("no value given for graph input %" + in.tensor);
    const cpu::TensorData& input = it->second;
    if (input.dtype() != ir::DType::f32 || input.shape() != in.shape)
      return fail("input %" + in.tensor + " must be f32" + ir::shape_string(in.shape) + ", got " +
                  std::string(ir::to_string(input.dtype())) + ir::shape_string(input.shape()));
    std::memcpy(memory[static_cast<std::size_t>(in.buffer)].data(), input.raw(), input.bytes());
  }
  std::vector<void*> pointers;
  for (auto& m : memory) pointers.push_back(m.data());
  const auto view = [&](const PlanView& v) {
    return bind(plan, v,
                v.buffer < 0 ? nullptr : memory[static_cast<std::size_t>(v.buffer)].data());
  };

  for (const Step& s : plan.steps) {
    const TensorView x = view(s.x), y = view(s.y), second = view(s.second);
    const Epilogue e = bind(s.epilogue, s.epilogue.bias.data(), s.epilogue.multiplier.data(),
                            s.epilogue.shift.data());
    const auto for_each = [&](auto&& body) {
      for (std::int64_t n = 0; n < y.n; ++n)
        for (std::int64_t h = 0; h < y.h; ++h)
          for (std::int64_t w = 0; w < y.w; ++w)
            for (std::int64_t c = 0; c < y.c; ++c)
              store_int(y.data, y.type, view_index(y, n, h, w, c), body(n, h, w, c));
    };
    switch (s.kind) {
      case KernelKind::QuantizeInput: {
        QuantizeArgs a{static_cast<const float*>(x.data), y, s.scale, s.zero_point, s.lo, s.hi};
        for_each([&](auto n, auto h, auto w, auto c) { return quantize_element(a, n, h, w, c); });
        break;
      }
      case KernelKind::ConvDp4a: {
        // The kernel's own phases (dp4a.cuh), block by block, thread by thread.
        ConvArgs a{x,       y,        second, s.weights.data(), s.weight_type, s.weight_c_stride,
                   s.group, s.window, e};
        const std::int64_t k_words = dp4a_k_words(a);
        Dp4aTiles tiles{};
        struct ThreadAcc {
          std::int32_t v[4][4];
        };
        std::vector<ThreadAcc> acc(kDp4aBlock);
        for (std::int64_t bx = 0; bx < s.launch.grid[0]; ++bx)
          for (std::int64_t by = 0; by < s.launch.grid[1]; ++by) {
            const std::int64_t m0 = bx * kDp4aM, o0 = by * kDp4aN;
            std::fill(acc.begin(), acc.end(), ThreadAcc{});
            for (std::int64_t k0 = 0; k0 < k_words; k0 += kDp4aWords) {
              for (int tid = 0; tid < kDp4aBlock; ++tid) dp4a_load(a, m0, o0, k0, tid, tiles);
              for (int tid = 0; tid < kDp4aBlock; ++tid)
                dp4a_accumulate(tiles, tid, acc[static_cast<std::size_t>(tid)].v);
            }
            for (int tid = 0; tid < kDp4aBlock; ++tid)
              dp4a_store(a, m0, o0, tid, acc[static_cast<std::size_t>(tid)].v);
          }
        break;
      }
      case KernelKind::ConvDirect: {
        ConvArgs a{x,       y,        second, s.weights.data(), s.weight_type, s.weight_c_stride,
                   s.group, s.window, e};
        for_each([&](auto n, auto h, auto w, auto c) {
          return apply_epilogue(e, conv_sum(a, n, h, w, c), c, residual_at(second, e, n, h, w, c));
        });
        break;
      }
      case KernelKind::Pool: {
        PoolArgs a{x, y, s.window, s.is_max ? 1 : 0, e};
        for_each([&](auto n, auto h, auto w, auto c) {
          const std::int32_t v = pool_value(a, n, h, w, c);
          return s.is_max ? v : apply_epilogue(e, v, c, residual_at(second, e, n, h, w, c));
        });
        break;
      }
      case KernelKind::Eltwise:
        for_each([&](auto n, auto h, auto w, auto c) {
          return apply_epilogue(e, load_int(x.data, x.type, view_index(x, n, h, w, c)), c,
                                residual_at(second, e, n, h, w, c));
        });
        break;
      case KernelKind::Copy:
        for_each([&](auto n, auto h, auto w, auto c) {
          return load_int(x.data, x.type, view_index(x, n, h, w, c));
        });
        break;
      case KernelKind::Workload: {
        const WorkArgs a = bind_work(plan, s, pointers.data(), s.weights.data(), e);
        const std::int64_t threads = work_threads(a);
        for (std::int64_t i = 0; i < threads; ++i) work_thread(a, i);
        break;
      }
    }
  }

  std::map<std::string, cpu::TensorData> result;
  for (const auto& out : plan.outputs)
    result.emplace(
        out.tensor,
        gather_output(plan, out, memory[static_cast<std::size_t>(out.view.buffer)].data()));
  if (all_buffers)
    for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
      const Buffer& b = plan.buffers[i];
      if (b.is_f32_input || b.internal || result.count(b.tensor)) continue;
      const std::vector<std::int64_t> shape = b.h == 1 && b.w == 1
                                                  ? std::vector<std::int64_t>{b.n, b.c, 1, 1}
                                                  : std::vector<std::int64_t>{b.n, b.c, b.h, b.w};
      result.emplace(b.tensor, buffer_tensor(plan, static_cast<int>(i), shape, memory[i].data()));
    }
  return result;
}

}  // namespace tessel::cuda
