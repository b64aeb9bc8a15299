#include "support/cancel.hpp"

namespace tessel {
namespace {
thread_local const CancelToken* t_token = nullptr;
}  // namespace

CancelScope::CancelScope(const CancelToken& token) : previous_(t_token) {
  t_token = &token;
}

CancelScope::~CancelScope() {
  t_token = previous_;
}

bool cancel_requested() {
  return t_token != nullptr && t_token->requested();
}

}  // namespace tessel
