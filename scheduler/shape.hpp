// Shape deduction (per op: output range -> input range) and shape transfer over a fused group.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/net.hpp"

namespace tessel::sched {

/// Half-open interval [b, e) of indices on one axis.
struct Interval {
  int64_t b = 0;
  int64_t e = 0;
  int64_t size() const { return e > b ? e - b : 0; }
  bool empty() const { return e <= b; }
  bool operator==(const Interval&) const = default;
};

/// Smallest interval holding both (an empty side is ignored).
Interval hull(Interval a, Interval b);
/// Intersection (may be empty).
Interval intersect(Interval a, Interval b);

/// A box of a C x H x W tensor.
struct Box {
  Interval c, h, w;
  int64_t elements() const { return c.size() * h.size() * w.size(); }
  bool empty() const { return c.empty() || h.empty() || w.empty(); }
  bool operator==(const Box&) const = default;
};

Box hull(const Box& a, const Box& b);
Box full_box(const Shape3& shape);

/// What an op needs of one input to produce an output box.
struct InputNeed {
  Box box;  ///< the needed part of the real input, clamped to its extent
  /// Rows/columns of the unclamped window that fall outside the input (zero padding the DMA
  /// or the compute engine supplies); 0 for ops without padding.
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
};

/// Shape deduction: the part of input `input_index` of `op` needed to compute `out` (a box of
/// the op's output). Conv/pool rows: [o.b*s - pad, (o.e-1)*s + (k-1)*d + 1 - pad) clamped to
/// the input; Pad: shifted by the pad and clamped; elementwise/Add: identity; Concat: the
/// channel slice of that input; Gemm/GlobalPool/Softmax/Reshape: the whole input.
InputNeed deduce_input(const Net& net, const Op& op, int input_index, const Box& out);

/// Result of shape transfer over one tile of a group.
struct TileRanges {
  /// Per tensor index (size net.tensors.size()): the box of it this tile touches: for tensors
  /// produced in the group, the part computed; for group inputs, the part read. Empty = none.
  std::vector<Box> need;
};

/// Shape transfer: walks `group_ops` (ascending op indices forming a sub-DAG) from the last op
/// back to the first, starting from `requested` boxes of the group's output tensors (by tensor
/// index; the others empty), and returns every tensor's needed box. Where a tensor feeds
/// several consumers in the group the boxes are united (bounding box).
TileRanges transfer(const Net& net, const std::vector<int>& group_ops,
                    const std::vector<Box>& requested);

}  // namespace tessel::sched
