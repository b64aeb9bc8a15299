// The exact int8 matrix product: oneDNN's matmul (VNNI/AMX) or nhwc::gemm_s8.
#include "compiler/targets/cpu/int_gemm.hpp"

#include <omp.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>
#include <vector>

#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/nhwc_kernels.hpp"

namespace tessel::cpu {
namespace {

/// oneDNN's s8 x s8 -> s32 matmul without scales, one primitive per shape.
class DnnlMatmulS8 {
 public:
  static DnnlMatmulS8& instance() {
    static DnnlMatmulS8 self;
    return self;
  }

  void run(const std::int8_t* a, const std::int8_t* b, bool b_is_nk, std::int32_t* y,
           std::int64_t batches, std::int64_t rows, std::int64_t k, std::int64_t n) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::desc a_md({batches, rows, k}, dt::s8, tag::abc);
    const dnnl::memory::desc b_md({batches, k, n}, dt::s8, b_is_nk ? tag::acb : tag::abc);
    const dnnl::memory::desc y_md({batches, rows, n}, dt::s32, tag::abc);
    dnnl::matmul* primitive = nullptr;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      const auto key = std::make_tuple(batches, rows, k, n, b_is_nk);
      auto it = primitives_.find(key);
      if (it == primitives_.end()) {
        const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, y_md), engine_);
        it = primitives_.emplace(key, dnnl::matmul(pd)).first;
      }
      primitive = &it->second;
    }
    dnnl::stream stream(engine_);
    dnnl::memory am(a_md, engine_, const_cast<std::int8_t*>(a));
    dnnl::memory bm(b_md, engine_, const_cast<std::int8_t*>(b));
    dnnl::memory ym(y_md, engine_, y);
    primitive->execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, ym}});
    stream.wait();
  }

 private:
  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  std::mutex mutex_;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool>, dnnl::matmul>
      primitives_;
};

}  // namespace

void gemm_s8_exact(const std::int8_t* a, const std::int8_t* b, bool b_is_nk, std::int32_t* y,
                   std::int64_t batches, std::int64_t rows, std::int64_t k, std::int64_t n) {
  if (onednn_int8_conv_exact()) {
    DnnlMatmulS8::instance().run(a, b, b_is_nk, y, batches, rows, k, n);
    return;
  }
  std::vector<std::int8_t> transposed(b_is_nk ? 0 : static_cast<std::size_t>(k * n));
  for (std::int64_t t = 0; t < batches; ++t) {
    const std::int8_t* bt = b + t * k * n;
    if (!b_is_nk) {  // [k, n] -> [n, k], the rows gemm_s8 dots with
      for (std::int64_t i = 0; i < k; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          transposed[static_cast<std::size_t>(j * k + i)] = bt[i * n + j];
      bt = transposed.data();
    }
    const std::int64_t threads =
        std::clamp<std::int64_t>(rows * n * k / (1 << 20), 1, omp_get_max_threads());
#pragma omp parallel for num_threads(static_cast <int>(threads)) schedule(static)
    for (std::int64_t p = 0; p < threads; ++p) {
      const std::int64_t r0 = rows * p / threads, r1 = rows * (p + 1) / threads;
      nhwc::gemm_s8(a + (t * rows + r0) * k, bt, nullptr, y + (t * rows + r0) * n, r1 - r0, n, k);
    }
  }
}

}  // namespace tessel::cpu
