// Large blocks straight from the kernel, on transparent huge pages where the system allows them.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace tessel::sim {

/// A huge page (x86-64 Linux's transparent huge pages are 2 MiB).
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
/// Blocks of at least this many bytes are mapped in whole huge pages.
inline constexpr std::size_t kHugeBlockBytes = std::size_t{1} << 20;

/// The length map_fresh_pages maps for a block of `bytes`: whole huge pages from
/// kHugeBlockBytes on, else `bytes`.
inline std::size_t fresh_pages_length(std::size_t bytes) {
  if (bytes < kHugeBlockBytes) return bytes;
  if (bytes > SIZE_MAX - kHugePageBytes) throw std::bad_alloc();
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

/// `bytes` (> 0) of fresh zeroed memory, a private anonymous mapping. From kHugeBlockBytes on it
/// starts on a huge page boundary and spans whole huge pages marked MADV_HUGEPAGE: on a VM
/// where a first touch of a 4 KiB page costs ~13 us (a paravirtualised fault; session 37), one
/// fault then maps 2 MiB, for ~0.1 ms (session 40: a BERT layer's 14 MB of packed weights in
/// 1 ms instead of 40). Where the system has transparent huge pages off (or only for the whole
/// system), the advice changes nothing but which addresses are used. Released by
/// unmap_fresh_pages with the same `bytes`.
inline void* map_fresh_pages(std::size_t bytes) {
  const std::size_t length = fresh_pages_length(bytes);
  const bool huge = bytes >= kHugeBlockBytes;
  // A huge block maps one huge page more and trims the ends so that it starts on a boundary.
  const std::size_t mapped = huge ? length + kHugePageBytes : length;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  if (!huge) return p;
  auto* start = static_cast<std::uint8_t*>(p);
  const std::size_t head =
      (kHugePageBytes - reinterpret_cast<std::uintptr_t>(start) % kHugePageBytes) % kHugePageBytes;
  if (head != 0) munmap(start, head);
  munmap(start + head + length, kHugePageBytes - head);
  madvise(start + head, length, MADV_HUGEPAGE);  // advice: its failure changes no result
  return start + head;
}

/// Releases a block of map_fresh_pages(`bytes`).
inline void unmap_fresh_pages(void* p, std::size_t bytes) noexcept {
  munmap(p, fresh_pages_length(bytes));
}

}  // namespace tessel::sim
