// The one diagnostic format every input error uses.
#include "support/diagnostic.hpp"

#include <gtest/gtest.h>

namespace tessel {
namespace {

TEST(Diagnostic, FormatsFileLineColumnKeyAndMessage) {
  const Diagnostic d{{"cfg.yaml", 12, 3}, "dram.bandwidth", "must be positive"};
  EXPECT_EQ(d.str(), "cfg.yaml:12:3: error: dram.bandwidth: must be positive");
}

TEST(Diagnostic, OmitsUnknownLineAndEmptyKey) {
  EXPECT_EQ((Diagnostic{{"m.onnx", 0, 0}, "", "truncated at byte 40"}).str(),
            "m.onnx: error: truncated at byte 40");
}

TEST(Diagnostic, InputErrorCarriesEveryDiagnostic) {
  const InputError e({Diagnostic{{"a", 1, 1}, "x", "bad"}, Diagnostic{{"a", 2, 1}, "y", "worse"}});
  ASSERT_EQ(e.diagnostics().size(), 2u);
  EXPECT_STREQ(e.what(), "a:1:1: error: x: bad\na:2:1: error: y: worse");
}

}  // namespace
}  // namespace tessel
