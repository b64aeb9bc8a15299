// Looking up a scheduler net's op by name in tests that check a net by hand, and building a
// small net by hand (network inputs, ops of a kind reading given tensors).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "scheduler/net.hpp"

namespace tessel::test_support {

/// The op of `net` named `name`; a test failure (and the first op) when there is none.
inline const sched::Op& op_named(const sched::Net& net, const std::string& name) {
  for (const sched::Op& op : net.ops)
    if (op.name == name) return op;
  ADD_FAILURE() << "no op " << name;
  return net.ops.front();
}

/// A network input of `shape` named `name` (its Input op and tensor); the tensor.
inline int add_input(sched::Net& net, const std::string& name, sched::Shape3 shape) {
  sched::Op in;
  in.name = name;
  in.kind = sched::OpKind::Input;
  in.output = net.add_tensor(name, shape);
  net.add_op(std::move(in));
  return net.ops.back().output;
}

/// An op `name` of `kind` reading `inputs`, its output of `shape` (no other field set: for the
/// rules that read only kinds, inputs and outputs); its output tensor.
inline int add_row_op(sched::Net& net, const std::string& name, sched::OpKind kind,
                      std::vector<int> inputs, sched::Shape3 shape) {
  sched::Op op;
  op.name = name;
  op.kind = kind;
  op.inputs = std::move(inputs);
  op.output = net.add_tensor(name, shape);
  net.add_op(std::move(op));
  return net.ops.back().output;
}

}  // namespace tessel::test_support
