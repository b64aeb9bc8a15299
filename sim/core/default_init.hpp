// The construct() pair that makes an allocator default-initialise what a vector value-initialises.
#pragma once

#include <new>
#include <utility>

namespace tessel::sim {

/// Base of an allocator whose `vector(n)` and `resize(n)` leave each new element as the
/// allocation has it (default-initialisation: for a byte or an int16, nothing is written),
/// for buffers that are written in full before they are read or that start zeroed by their
/// allocation. Elements constructed with a value are written as usual.
struct DefaultInitConstruct {
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace tessel::sim
