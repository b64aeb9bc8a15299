// Result<T>: an expected value or a reason, for failures that are part of normal operation.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace tessel {

/// The reason an operation did not succeed; `message` is complete and user-facing.
struct Failure {
  std::string message;
};

/// Either a T or a Failure (a small stand-in for C++23 std::expected, which clang 14 lacks).
/// Callers test `ok()` before `value()`; `value()` on a failure is a programming error.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}            // NOLINT(google-explicit-constructor)
  Result(Failure failure) : state_(std::move(failure)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const std::string& reason() const { return std::get<1>(state_).message; }
  const Failure& failure() const { return std::get<1>(state_); }

 private:
  std::variant<T, Failure> state_;
};

/// Result<void>: success or a reason.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Failure failure) : failure_(std::move(failure)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string& reason() const { return failure_.message; }
  const Failure& failure() const { return failure_; }

 private:
  Failure failure_;
  bool ok_ = true;
};

using Status = Result<void>;

inline Failure fail(std::string message) {
  return Failure{std::move(message)};
}

}  // namespace tessel
