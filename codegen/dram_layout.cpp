// DRAM layout planner: burst-aligned, named regions placed in order.
#include "codegen/dram_layout.hpp"

namespace tessel::codegen {

const char* to_string(RegionKind kind) {
  switch (kind) {
    case RegionKind::Weights:
      return "weights";
    case RegionKind::Input:
      return "input";
    case RegionKind::Output:
      return "output";
    case RegionKind::Activations:
      return "activations";
  }
  return "?";
}

DramLayout::DramLayout(std::int64_t alignment_bytes)
    : alignment_(alignment_bytes > 0 ? alignment_bytes : 1) {}

Result<std::int64_t> DramLayout::add(const std::string& name, RegionKind kind,
                                     std::int64_t size_bytes) {
  if (size_bytes < 1) {
    return fail("DRAM region '" + name + "': size " + std::to_string(size_bytes) +
                " bytes (must be at least 1)");
  }
  if (find(name) != nullptr) return fail("DRAM region '" + name + "' is placed twice");
  const std::int64_t offset = end_;
  regions_.push_back({name, kind, offset, size_bytes});
  end_ = (offset + size_bytes + alignment_ - 1) / alignment_ * alignment_;
  return offset;
}

Result<std::int64_t> DramLayout::add_within(const std::string& name, RegionKind kind,
                                            const std::string& parent, std::int64_t offset_bytes,
                                            std::int64_t size_bytes) {
  if (find(name) != nullptr) return fail("DRAM region '" + name + "' is placed twice");
  const DramRegion* outer = find(parent);
  if (outer == nullptr)
    return fail("DRAM region '" + name + "': no region '" + parent + "' to place it in");
  if (size_bytes < 1 || offset_bytes < 0 || offset_bytes + size_bytes > outer->size_bytes)
    return fail("DRAM region '" + name + "': bytes [" + std::to_string(offset_bytes) + ", " +
                std::to_string(offset_bytes + size_bytes) + ") do not lie in region '" + parent +
                "' (" + std::to_string(outer->size_bytes) + " bytes)");
  const std::int64_t offset = outer->offset + offset_bytes;
  regions_.push_back({name, kind, offset, size_bytes});
  return offset;
}

const DramRegion* DramLayout::find(const std::string& name) const {
  for (const DramRegion& region : regions_) {
    if (region.name == name) return &region;
  }
  return nullptr;
}

}  // namespace tessel::codegen
