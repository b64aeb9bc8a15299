// A group as the map space, the cost model and the search see it, whatever its mapping: local
// tensor ids, steps, and the op predicates they share. Internal to scheduler/.
#pragma once

#include <vector>

#include "scheduler/map_space.hpp"
#include "scheduler/net.hpp"
#include "scheduler/shape.hpp"
#include "support/int_ops.hpp"

namespace tessel::sched {

using intops::ceil_div;

/// Part i of `parts` near-equal parts of [0, extent).
Interval part(int64_t extent, int64_t parts, int64_t i);

/// Reshape never moves data; a lone Concat (when aliased) lets its producers write into its
/// channel slices in DRAM. A Concat inside a larger group is an on-chip copy.
bool is_view(const Op& op, const PlanOptions& options);

/// Conv or Gemm: the matrix unit's ops.
bool has_matrix_work(const Op& op);

/// The pool instruction's widest window (its 4-bit kh, kw fields; docs/isa.md).
inline constexpr int64_t kPoolWindowMax = 15;
/// Sub-windows a pool-by-conv splits an extent into (each at most kPoolWindowMax; the extent
/// split evenly, as `part`).
int64_t pool_sub_windows(int64_t extent);

/// A conv of one group (the convs a weight sweep slices).
bool is_dense_conv(const Op& op);

/// A conv with one group per channel, as many output as input channels.
bool is_depthwise(const Net& net, const Op& op);

/// Whether an op of `ops` has a window whose extent is below its stride (a strided 1x1 conv or
/// pool): consecutive tiles' reads of its input then leave rows or columns out, so a tiled group
/// can read less of an input than one tile (which reads its hull).
bool skips_rows_or_columns(const Net& net, const std::vector<int>& ops);

/// Everything about a group that does not depend on the mapping; tensors get local ids.
struct GroupInfo {
  std::vector<int> ops;
  std::vector<int> tensors;                // local id -> net tensor
  std::vector<int> out_local;              // per op position
  std::vector<std::vector<int>> in_local;  // per op position
  std::vector<char> is_input;              // loaded from DRAM
  std::vector<char> stored;                // written to DRAM
  std::vector<int> produced_step;          // 0 for inputs
  std::vector<int> last_use_step;          // last in-group consumer step, 0 if none
  std::vector<char> internal_use;          // read by an op of the group
  std::vector<char> gathered;  // an Embedding's output: the tile's load phase writes it (gather)
};

GroupInfo describe(const Net& net, const std::vector<int>& ops);

/// Shape transfer for one tile on local ids (the same rule as sched::transfer): widens
/// `need[l]` of every local l an op reads to the hull of what the op's output box needs.
void transfer_local(const Net& net, const GroupInfo& g, Box* need);

}  // namespace tessel::sched
