// Lowest-offset placement under lifetime conflicts, with deep-reuse exemptions.
#include "scheduler/alloc.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>

namespace tessel::sched {

namespace {

bool lifetimes_intersect(const AllocRequest& a, const AllocRequest& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

struct Forbidden {
  int64_t lo;  // first forbidden offset
  int64_t hi;  // one past the last forbidden offset
};

// Places requests in `order`; returns false when one does not fit.
bool place_in_order(const std::vector<AllocRequest>& requests, const std::vector<int>& order,
                    const std::vector<int64_t>& capacities, std::vector<int64_t>& offsets,
                    std::vector<int64_t>& peaks) {
  offsets.assign(requests.size(), -1);
  peaks.assign(capacities.size(), 0);
  std::vector<int> placed;
  std::vector<Forbidden> forbidden;
  for (int index : order) {
    const AllocRequest& r = requests[static_cast<size_t>(index)];
    if (r.fixed_offset >= 0) {
      offsets[static_cast<size_t>(index)] = r.fixed_offset;
      placed.push_back(index);
      continue;
    }
    forbidden.clear();
    for (int other_index : placed) {
      const AllocRequest& p = requests[static_cast<size_t>(other_index)];
      if (p.scratchpad != r.scratchpad || !lifetimes_intersect(r, p)) continue;
      const int64_t p_offset = offsets[static_cast<size_t>(other_index)];
      const int64_t p_end = p_offset + p.size_bytes;
      if (r.reuses == other_index) {
        // r overwrites the consumed part of p: r.offset <= p.offset - gap, or above p.
        forbidden.push_back({p_offset - r.reuse_gap_bytes + 1, p_end});
      } else if (p.reuses == index) {
        // p overwrites the consumed part of r: r.offset >= p.offset + gap, or r below p.
        forbidden.push_back({p_offset - r.size_bytes + 1, p_offset + p.reuse_gap_bytes});
      } else {
        forbidden.push_back({p_offset - r.size_bytes + 1, p_end});
      }
    }
    std::sort(forbidden.begin(), forbidden.end(),
              [](const Forbidden& a, const Forbidden& b) { return a.lo < b.lo; });
    int64_t candidate = 0;
    for (const Forbidden& f : forbidden) {
      if (f.hi <= f.lo) continue;
      if (candidate < f.lo) break;  // sorted by lo: the gap below f is free
      candidate = std::max(candidate, f.hi);
    }
    if (candidate + r.size_bytes > capacities[static_cast<size_t>(r.scratchpad)]) return false;
    offsets[static_cast<size_t>(index)] = candidate;
    auto& peak = peaks[static_cast<size_t>(r.scratchpad)];
    peak = std::max(peak, candidate + r.size_bytes);
    placed.push_back(index);
  }
  return true;
}

// Live bytes at one step, per scratchpad, the most over the steps: `plain` counts every live
// request; `linked` counts each reuse-linked set of live requests as its largest member, a
// necessary condition for any placement (requests live at one step occupy disjoint bytes of
// their scratchpad unless linked by deep reuse). Pinned requests may overlap each other, so
// with any, `linked` is not computed (left 0).
struct Demand {
  std::vector<int64_t> plain, linked;
};

Demand live_demand(const std::vector<AllocRequest>& requests, size_t pads) {
  Demand d{std::vector<int64_t>(pads, 0), std::vector<int64_t>(pads, 0)};
  bool pinned = false;
  int first = 0, last = 0;
  for (const auto& r : requests) {
    pinned |= r.fixed_offset >= 0;
    first = std::min(first, r.first_step);
    last = std::max(last, r.last_step);
  }
  // Step 0 onwards for `plain` (the report's figure, as before prefetch pins existed).
  const int lo = pinned ? 0 : first;
  const auto steps = static_cast<size_t>(last - lo + 1);
  auto live = [](const AllocRequest& r, int step) {
    return r.first_step <= step && step <= r.last_step;
  };
  // Live bytes per (step, scratchpad).
  std::vector<int64_t> total(steps * pads, 0);
  for (const auto& r : requests) {
    for (int step = std::max(r.first_step, lo); step <= r.last_step; ++step)
      total[static_cast<size_t>(step - lo) * pads + static_cast<size_t>(r.scratchpad)] +=
          r.size_bytes;
  }
  for (size_t s = 0; s < steps; ++s) {
    if (static_cast<int>(s) + lo < 0) continue;
    for (size_t pad = 0; pad < pads; ++pad)
      d.plain[pad] = std::max(d.plain[pad], total[s * pads + pad]);
  }
  if (pinned) return d;
  // `linked`: at each step, each set of live requests joined by reuse links counts as its
  // largest member, so the step saves (sum - largest) per set. Only requests in a link live at
  // the step take part; they are few. Requests in different scratchpads share no byte whatever
  // links them.
  std::vector<int> links;
  for (size_t i = 0; i < requests.size(); ++i) {
    const AllocRequest& r = requests[i];
    if (r.reuses >= 0 && requests[static_cast<size_t>(r.reuses)].scratchpad == r.scratchpad)
      links.push_back(static_cast<int>(i));
  }
  std::vector<int> root(requests.size());
  std::vector<int64_t> sum(requests.size()), largest(requests.size());
  std::vector<int> members;
  auto find = [&](int i) {
    while (root[static_cast<size_t>(i)] != i) i = root[static_cast<size_t>(i)];
    return i;
  };
  std::vector<int64_t> linked(pads);
  for (size_t s = 0; s < steps; ++s) {
    const int step = static_cast<int>(s) + lo;
    members.clear();
    auto join = [&](int i) {
      if (std::find(members.begin(), members.end(), i) != members.end()) return;
      members.push_back(i);
      root[static_cast<size_t>(i)] = i;
      sum[static_cast<size_t>(i)] = largest[static_cast<size_t>(i)] =
          requests[static_cast<size_t>(i)].size_bytes;
    };
    for (int i : links) {
      const AllocRequest& r = requests[static_cast<size_t>(i)];
      if (!live(r, step) || !live(requests[static_cast<size_t>(r.reuses)], step)) continue;
      join(i);
      join(r.reuses);
      const int a = find(i), b = find(r.reuses);
      if (a == b) continue;
      root[static_cast<size_t>(a)] = b;
      sum[static_cast<size_t>(b)] += sum[static_cast<size_t>(a)];
      largest[static_cast<size_t>(b)] =
          std::max(largest[static_cast<size_t>(b)], largest[static_cast<size_t>(a)]);
    }
    for (size_t pad = 0; pad < pads; ++pad) linked[pad] = total[s * pads + pad];
    for (int i : members) {
      if (find(i) != i) continue;
      const auto pad = static_cast<size_t>(requests[static_cast<size_t>(i)].scratchpad);
      linked[pad] -= sum[static_cast<size_t>(i)] - largest[static_cast<size_t>(i)];
    }
    for (size_t pad = 0; pad < pads; ++pad) d.linked[pad] = std::max(d.linked[pad], linked[pad]);
  }
  return d;
}

// The failure report: names the scratchpad with the largest lower bound on demand (live bytes
// at one step).
Failure too_large(const Demand& demand, const std::vector<int64_t>& capacities_bytes) {
  const std::vector<int64_t>& worst = demand.plain;
  size_t pad = 0;
  for (size_t s = 1; s < worst.size(); ++s) {
    if (worst[s] * capacities_bytes[pad] > worst[pad] * capacities_bytes[s]) pad = s;
  }
  return fail("allocation failed: scratchpad " + std::to_string(pad) + " needs up to " +
              std::to_string(worst.empty() ? 0 : worst[pad]) + " live bytes at one step, has " +
              std::to_string(capacities_bytes.empty() ? 0 : capacities_bytes[pad]));
}

// The demand check of `requests` (check_demand), and the demand for allocate's report.
Status check_demand(const std::vector<AllocRequest>& requests,
                    const std::vector<int64_t>& capacities_bytes, Demand& demand) {
  demand = live_demand(requests, capacities_bytes.size());
  for (size_t pad = 0; pad < capacities_bytes.size(); ++pad) {
    if (demand.linked[pad] > capacities_bytes[pad]) return too_large(demand, capacities_bytes);
  }
  return {};
}

}  // namespace

Status check_demand(const std::vector<AllocRequest>& requests,
                    const std::vector<int64_t>& capacities_bytes) {
  Demand demand;
  return check_demand(requests, capacities_bytes, demand);
}

Result<AllocResult> allocate(const std::vector<AllocRequest>& requests,
                             const std::vector<int64_t>& capacities_bytes) {
  // Every order would fail (most mappings a search tries): straight to the report.
  Demand demand;
  if (auto s = check_demand(requests, capacities_bytes, demand); !s.ok()) return s.failure();
  std::vector<int> base(requests.size());
  std::iota(base.begin(), base.end(), 0);
  auto by_first = base;
  std::stable_sort(by_first.begin(), by_first.end(), [&](int a, int b) {
    const auto& ra = requests[static_cast<size_t>(a)];
    const auto& rb = requests[static_cast<size_t>(b)];
    if (ra.first_step != rb.first_step) return ra.first_step < rb.first_step;
    return ra.size_bytes > rb.size_bytes;
  });
  auto by_last_desc = base;
  std::stable_sort(by_last_desc.begin(), by_last_desc.end(), [&](int a, int b) {
    const auto& ra = requests[static_cast<size_t>(a)];
    const auto& rb = requests[static_cast<size_t>(b)];
    if (ra.last_step != rb.last_step) return ra.last_step > rb.last_step;
    return ra.size_bytes > rb.size_bytes;
  });
  auto by_size = base;
  std::stable_sort(by_size.begin(), by_size.end(), [&](int a, int b) {
    return requests[static_cast<size_t>(a)].size_bytes >
           requests[static_cast<size_t>(b)].size_bytes;
  });

  // Pinned requests go first in every order (stable: the others keep their order).
  for (auto* order : {&by_first, &by_last_desc, &by_size}) {
    std::stable_partition(order->begin(), order->end(), [&](int i) {
      return requests[static_cast<size_t>(i)].fixed_offset >= 0;
    });
  }
  bool found = false;
  AllocResult best;
  int64_t best_total = 0;
  std::vector<int64_t> offsets, peaks;
  for (const auto* order : {&by_first, &by_last_desc, &by_size}) {
    if (!place_in_order(requests, *order, capacities_bytes, offsets, peaks)) continue;
    const int64_t total = std::accumulate(peaks.begin(), peaks.end(), int64_t{0});
    if (!found || total < best_total) {
      found = true;
      best_total = total;
      best.offsets = offsets;
      best.peak_bytes = peaks;
    }
  }
  if (!found) return too_large(demand, capacities_bytes);
  return best;
}

namespace {

// The input rows [b, e) (or columns) one output index reads on a window axis, clamped.
Interval window_rows(int64_t out_index, int64_t kernel, int64_t stride, int64_t dilation,
                     int64_t pad_begin, Interval limit) {
  const int64_t b = out_index * stride - pad_begin;
  const int64_t e = out_index * stride + (kernel - 1) * dilation + 1 - pad_begin;
  return intersect({b, e}, limit);
}

}  // namespace

int64_t deep_reuse_gap_bytes(const Op& op, const Box& in, const Box& out, int64_t in_pixel_bytes,
                             int64_t out_pixel_bytes, ReuseGranularity granularity,
                             int64_t rows_per_step) {
  // Window geometry (Pad behaves as a 1x1 window shifted by its pad; elementwise ops as a 1x1
  // window, so they run in place when the output pixel is no wider than the input pixel).
  Window win = op.window;
  if (op.kind == OpKind::Eltwise || op.kind == OpKind::Add) win = Window{};
  if (op.kind == OpKind::Pad) {
    win.kernel_h = win.kernel_w = 1;
    win.stride_h = win.stride_w = 1;
    win.dilation_h = win.dilation_w = 1;
  }
  const bool windowed = op.kind == OpKind::Conv || op.kind == OpKind::MaxPool ||
                        op.kind == OpKind::AvgPool || op.kind == OpKind::Pad ||
                        op.kind == OpKind::Eltwise || op.kind == OpKind::Add;
  const int64_t out_row_bytes = out.w.size() * out_pixel_bytes;
  // Not a sliding window: the output must sit wholly below the input (no overlap).
  if (!windowed) return out.h.size() * out_row_bytes;
  const int64_t in_row_bytes = in.w.size() * in_pixel_bytes;
  if (granularity == ReuseGranularity::Point &&
      (op.kind == OpKind::Eltwise || op.kind == OpKind::Add) && in.h == out.h && in.w == out.w) {
    // Closed form of the point walk below for a 1x1 window over the same box: pixel p writes
    // up to (p + 1) * out_pixel_bytes while pixel p + 1 still reads from (p + 1) * in_pixel_bytes.
    const int64_t pixels = out.h.size() * out.w.size();
    return std::max<int64_t>(0, (pixels - 1) * (out_pixel_bytes - in_pixel_bytes));
  }

  // Walk steps from last to first, keeping the lowest input byte any later step reads.
  constexpr int64_t no_read = INT64_MAX / 4;  // nothing read later: any write is safe
  int64_t lowest_later = no_read;
  int64_t gap = 0;
  auto first_byte = [&](int64_t oh, int64_t ow_begin) {
    const Interval rows =
        window_rows(oh, win.kernel_h, win.stride_h, win.dilation_h, win.pad_top, in.h);
    const Interval cols =
        window_rows(ow_begin, win.kernel_w, win.stride_w, win.dilation_w, win.pad_left, in.w);
    if (rows.empty() || cols.empty()) return no_read;
    return (rows.b - in.h.b) * in_row_bytes + (cols.b - in.w.b) * in_pixel_bytes;
  };
  if (granularity == ReuseGranularity::Row) {
    const int64_t step_rows = std::max<int64_t>(1, rows_per_step);
    const int64_t steps = (out.h.size() + step_rows - 1) / step_rows;
    for (int64_t step = steps - 1; step >= 0; --step) {
      const int64_t first_row = out.h.b + step * step_rows;
      const int64_t written_end = std::min(out.h.size(), (step + 1) * step_rows) * out_row_bytes;
      gap = std::max(gap, written_end - lowest_later);
      // The step reads the windows of all its rows; the first row's window starts lowest.
      lowest_later = std::min(lowest_later, first_byte(first_row, out.w.b));
    }
    return gap;
  }
  for (int64_t oh = out.h.e - 1; oh >= out.h.b; --oh) {
    const int64_t row_index = oh - out.h.b;
    for (int64_t ow = out.w.e - 1; ow >= out.w.b; --ow) {
      const int64_t written_end = row_index * out_row_bytes + (ow - out.w.b + 1) * out_pixel_bytes;
      gap = std::max(gap, written_end - lowest_later);
      lowest_later = std::min(lowest_later, first_byte(oh, ow));
    }
  }
  return gap;
}

}  // namespace tessel::sched
