#include "scheduler/pixel_gather.hpp"

#include <algorithm>

namespace tessel::sched {

namespace {

// A run of consecutive source pixels along the box's walk.
struct Run {
  int64_t y = 0, x = 0, length = 0, source = 0;
};

std::vector<Run> source_runs(const std::vector<int64_t>& source, int64_t width, const Box& box,
                             bool along_x, int64_t max_cols) {
  std::vector<Run> runs;
  auto start = [&](int64_t y, int64_t x) {
    runs.push_back({y, x, 1, source[static_cast<size_t>(y * width + x)]});
  };
  if (along_x) {
    for (int64_t y = box.h.b; y < box.h.e; ++y)
      for (int64_t x = box.w.b; x < box.w.e; ++x) {
        Run* last = runs.empty() ? nullptr : &runs.back();
        const int64_t s = source[static_cast<size_t>(y * width + x)];
        if (last != nullptr && last->y == y && last->length < max_cols &&
            last->source + last->length == s)
          ++last->length;
        else
          start(y, x);
      }
    return runs;
  }
  const int64_t x = box.w.b;
  for (int64_t y = box.h.b; y < box.h.e; ++y) {
    Run* last = runs.empty() ? nullptr : &runs.back();
    const int64_t s = source[static_cast<size_t>(y * width + x)];
    if (last != nullptr && last->length < max_cols && last->source + last->length == s)
      ++last->length;
    else
      start(y, x);
  }
  return runs;
}

}  // namespace

std::vector<GatherDma> gather_dmas(const std::vector<int64_t>& source, int64_t width,
                                   const Box& box, int64_t max_rows, int64_t max_cols) {
  std::vector<GatherDma> dmas;
  if (box.h.empty() || box.w.empty()) return dmas;
  const bool along_x = box.w.size() > 1;
  for (Run run : source_runs(source, width, box, along_x, max_cols)) {
    while (run.length > 0) {
      // Another row of the last DMA: a run of its length, its box and source starts one step
      // on (the step set by its second row, and forward: the ISA's strides are unsigned). Past
      // the second row, a longer run's first `cols` pixels (contiguous source pixels running on
      // into the next window) and the rest as a run of its own.
      if (!dmas.empty()) {
        GatherDma& d = dmas.back();
        const int64_t dy = run.y - d.y, dx = run.x - d.x, ds = run.source - d.source;
        const bool fits = run.length >= d.cols && d.rows < max_rows;
        const bool second = run.length == d.cols && d.rows == 1 && d.rows < max_rows && ds > 0 &&
                            (dy > 0 || (dy == 0 && dx > 0));
        const bool next = fits && d.rows > 1 && dy == d.rows * d.dy && dx == d.rows * d.dx &&
                          ds == d.rows * d.source_step;
        if (second) d.dy = dy, d.dx = dx, d.source_step = ds;
        if (second || next) {
          ++d.rows;
          (along_x ? run.x : run.y) += d.cols;
          run.source += d.cols;
          run.length -= d.cols;
          continue;
        }
      }
      dmas.push_back({run.y, run.x, 1, run.length, 0, 0, along_x, run.source, 0});
      run.length = 0;
    }
  }
  return dmas;
}

const Op* gather_of(const Net& net, int tensor) {
  const int producer = net.tensor(tensor).producer;
  if (producer < 0) return nullptr;
  const Op& op = net.op(producer);
  return op.kind == OpKind::Reshape && !op.pixel_source.empty() ? &op : nullptr;
}

int64_t load_dma_count(const Net& net, int tensor, const Box& box) {
  if (const Op* gather = gather_of(net, tensor))
    return static_cast<int64_t>(
        gather_dmas(gather->pixel_source, net.tensor(tensor).shape.w, box).size());
  return net.tensor(tensor).space_to_depth;
}

}  // namespace tessel::sched
