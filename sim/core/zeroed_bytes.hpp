// Scratchpad memory that starts zeroed without the simulator writing a byte of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#include "sim/core/default_init.hpp"
#include "sim/core/fresh_pages.hpp"

namespace tessel::sim {

/// An allocator whose storage starts zeroed without a write: a block of kMapBytes or more is a
/// fresh anonymous mapping, whose pages the kernel zeroes on first touch, so a 24 MiB
/// scratchpad the program uses a tenth of costs a tenth of the page faults and no memset
/// (session 37: the zero fill of cloud-large's scratchpads was ~12% of simulating one BERT
/// layer; calloc does not help, as glibc serves it from the heap and clears it once large
/// blocks have been freed). A smaller block comes from calloc. Elements constructed without a
/// value are left as allocated (zero); with a value they are written.
/// Only for buffers sized once and never resized: a vector that shrinks and grows again in
/// place would keep the old bytes in its new tail instead of zeroes.
template <class T>
struct ZeroedAllocator : DefaultInitConstruct {  // a new byte keeps the allocation's zero
  using value_type = T;
  static constexpr std::size_t kMapBytes = std::size_t{1} << 16;
  ZeroedAllocator() = default;
  template <class U>
  ZeroedAllocator(const ZeroedAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kMapBytes) {
      void* p = std::calloc(n, sizeof(T));
      if (p == nullptr) throw std::bad_alloc();
      return static_cast<T*>(p);
    }
    return static_cast<T*>(map_fresh_pages(bytes));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kMapBytes)
      std::free(p);
    else
      unmap_fresh_pages(p, n * sizeof(T));
  }
  friend bool operator==(const ZeroedAllocator&, const ZeroedAllocator&) { return true; }
};

/// One scratchpad's bytes: `ScratchpadBytes(size)` is `size` zero bytes, none written.
using ScratchpadBytes = std::vector<std::uint8_t, ZeroedAllocator<std::uint8_t>>;

}  // namespace tessel::sim
