// On-chip allocation: lifetime-based sharing (paper Fig. 4) and deep reuse (Fig. 5).
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/net.hpp"
#include "scheduler/shape.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// One buffer to place. Lifetimes are inclusive step ranges [first_step, last_step]; two
/// buffers whose lifetimes intersect may not share a byte, except a deep-reuse pair.
struct AllocRequest {
  int64_t size_bytes = 0;
  int first_step = 0;
  int last_step = 0;
  int scratchpad = 0;
  /// Deep reuse: index of the request whose consumed part this buffer may overwrite. The
  /// reused buffer's last step must be this buffer's first step; the pair is legal when
  /// reused.offset - this.offset >= reuse_gap_bytes (or when they do not overlap at all).
  int reuses = -1;
  int64_t reuse_gap_bytes = 0;
  /// >= 0: the request is pinned at this offset (bytes another group occupies, for a
  /// prefetch); it is placed first, is never moved and does not count towards the peak.
  int64_t fixed_offset = -1;
};

struct AllocResult {
  std::vector<int64_t> offsets;     ///< per request
  std::vector<int64_t> peak_bytes;  ///< per scratchpad: highest end offset used
};

/// The necessary condition allocate checks first: at every step, the requests live in a
/// scratchpad fit its capacity, a deep-reuse pair counted as its larger member (not checked
/// with pinned requests, which may overlap). Fails with the report allocate gives when it does
/// not hold. Reads no reuse gap.
Status check_demand(const std::vector<AllocRequest>& requests,
                    const std::vector<int64_t>& capacities_bytes);

/// Places every request at the lowest legal offset, trying three orders (by first step, by
/// last step descending — which puts a deep-reuse output below its input as in Fig. 5 — and by
/// size) and keeping the one with the smallest total peak. Fails, naming the scratchpad, when
/// none fits the capacities.
Result<AllocResult> allocate(const std::vector<AllocRequest>& requests,
                             const std::vector<int64_t>& capacities_bytes);

/// The order in which an op produces its output: one output row (all columns and channels) per
/// step, or one output point (all channels) per step as in the paper's Fig. 5.
enum class ReuseGranularity { Row, Point };

/// Deep reuse gap for an op whose input tile `in` (HWC, `in_pixel_bytes` per stored pixel) is
/// consumed while its output tile `out` (HWC, `out_pixel_bytes`) is produced step by step, each
/// step reading its input window before writing its output (Row: `rows_per_step` output rows
/// per step; Point: one output pixel per step, as in Fig. 5): the least distance (bytes) the
/// input buffer must start above the output buffer so that no step overwrites input a later
/// step reads. Elementwise ops give 0 (in place); ops that are not sliding windows give the
/// whole output size (no overlap).
int64_t deep_reuse_gap_bytes(const Op& op, const Box& in, const Box& out, int64_t in_pixel_bytes,
                             int64_t out_pixel_bytes, ReuseGranularity granularity,
                             int64_t rows_per_step = 1);

}  // namespace tessel::sched
