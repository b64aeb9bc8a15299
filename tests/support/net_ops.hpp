// Looking up a scheduler net's op by name in tests that check a net by hand.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "scheduler/net.hpp"

namespace tessel::test_support {

/// The op of `net` named `name`; a test failure (and the first op) when there is none.
inline const sched::Op& op_named(const sched::Net& net, const std::string& name) {
  for (const sched::Op& op : net.ops)
    if (op.name == name) return op;
  ADD_FAILURE() << "no op " << name;
  return net.ops.front();
}

}  // namespace tessel::test_support
