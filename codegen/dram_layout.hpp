// DRAM layout planner: named, burst-aligned regions of the DRAM image a compiled program uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/result.hpp"

namespace tessel::codegen {

/// What a DRAM region holds (drives the load/store `kind` and the compile.json map).
enum class RegionKind {
  Weights,      ///< packed conv weights, int32 biases, requant (M, r) tables
  Input,        ///< the network input, quantized, NHWC
  Output,       ///< a network output, NHWC
  Activations,  ///< an intermediate tensor spilled between groups, NHWC
};
const char* to_string(RegionKind kind);

/// One region: [offset, offset + size_bytes) of the DRAM image.
struct DramRegion {
  std::string name;  ///< tensor name, or "w:<op>", "b:<op>", "rq:<op>"
  RegionKind kind = RegionKind::Activations;
  std::int64_t offset = 0;
  std::int64_t size_bytes = 0;
};

/// Places regions one after another, each starting at a multiple of `alignment_bytes` (the
/// DRAM burst, so that no region shares a burst with another). Names are unique.
class DramLayout {
 public:
  explicit DramLayout(std::int64_t alignment_bytes);

  /// Adds a region and returns its offset. Fails on a duplicate name or a size below 1.
  Result<std::int64_t> add(const std::string& name, RegionKind kind, std::int64_t size_bytes);
  /// Adds a region that lies `offset_bytes` into the region `parent` (its bytes are the
  /// parent's: a decode step's past cache and new row inside the KV cache, docs/codegen.md
  /// "KV cache"). Fails on a duplicate name, an unknown parent or a region that leaves it.
  Result<std::int64_t> add_within(const std::string& name, RegionKind kind,
                                  const std::string& parent, std::int64_t offset_bytes,
                                  std::int64_t size_bytes);
  /// The region called `name`, or nullptr.
  const DramRegion* find(const std::string& name) const;
  const std::vector<DramRegion>& regions() const { return regions_; }
  /// Bytes of the whole image: the end of the last region, rounded up to the alignment.
  std::int64_t size_bytes() const { return end_; }
  std::int64_t alignment_bytes() const { return alignment_; }

 private:
  std::int64_t alignment_;
  std::int64_t end_ = 0;
  std::vector<DramRegion> regions_;
};

}  // namespace tessel::codegen
