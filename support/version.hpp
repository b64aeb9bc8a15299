// The tool version (git describe at build time), stamped into every report.
#pragma once

namespace tessel {

/// e.g. "v0.1.0-12-gabc1234-dirty"; "0.1.0-unknown" when built outside a git checkout.
const char* version();

}  // namespace tessel
