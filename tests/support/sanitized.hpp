// Whether a test runs under AddressSanitizer (the asan preset, CI's sanitizer leg), where the same
// code runs about ten times slower. Property tests then sample their cases and a few full-size
// model tests skip (their code paths are the tiny nets', which run under the sanitizer too); the
// default preset runs every case.
#pragma once

namespace tessel::testing {

inline constexpr bool kSanitized =
#if defined(__SANITIZE_ADDRESS__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

}  // namespace tessel::testing
