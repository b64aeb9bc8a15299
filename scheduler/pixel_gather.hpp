// Pixel gathers: a DRAM view whose pixels are another tensor's in another order (Swin's window
// partition and its reverse), loaded as strided DMA boxes (docs/scheduler-transformers.md "Pixel
// gathers"). One decomposition serves code generation (the loads it emits), the program-size
// prediction (how many) and the cost model (their bursts).
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/net.hpp"
#include "scheduler/shape.hpp"

namespace tessel::sched {

/// One DMA of a gathered box: `rows` runs of `cols` consecutive source pixels each. Run i starts
/// at source pixel `source + i * source_step` and lands at box pixel (y + i * dy, x + i * dx)
/// (box coordinates are the gathered tensor's), its pixels walking along x (`along_x`) or, in a
/// box one pixel wide, along y.
struct GatherDma {
  int64_t y = 0, x = 0;
  int64_t rows = 1, cols = 1;
  int64_t dy = 0, dx = 0;
  bool along_x = true;
  int64_t source = 0, source_step = 0;
};

/// The DMAs that load `box` (its rows and columns; channels are the caller's) of a tensor of
/// `width` columns whose pixel p (row-major) is pixel `source[p]` of the tensor it gathers.
/// Runs of consecutive source pixels along the box's walk (row by row; down the rows of a box
/// one pixel wide) become one DMA's columns; runs of one length whose source and box starts
/// step evenly become its rows. At most `max_rows` rows and `max_cols` columns per DMA (the ISA's
/// fields).
std::vector<GatherDma> gather_dmas(const std::vector<int64_t>& source, int64_t width,
                                   const Box& box, int64_t max_rows = 4095,
                                   int64_t max_cols = 4095);

/// The gather op that makes `tensor` (a Reshape with `Op::pixel_source`), or null.
const Op* gather_of(const Net& net, int tensor);

/// The DMAs one load of `box` of `tensor` takes: its gather's DMAs, one per row phase of a
/// space-to-depth input, one otherwise.
int64_t load_dma_count(const Net& net, int tensor, const Box& box);

}  // namespace tessel::sched
