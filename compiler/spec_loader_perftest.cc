// Speed of the spec loader on hostile YAML. A perftest (see
// secret_scanner_perftest.cc): bench/run --quick runs it; ctest never does.
#include "spec_loader.h"
#include "test_inputs.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace nemoc {
namespace {

// Nine levels of nine aliases each (9^9 nodes if expanded): refused, quickly.
TEST(SpecLoaderPerf, BillionLaughsIsRejectedQuickly) {
  const std::string text = test_inputs::BillionLaughsYaml();
  Document doc;
  Diagnostics diags;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(LoadSpecText("spec.yaml", text, &doc, &diags, {}, nullptr));
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ timing   ] YAML alias bomb (9^9 nodes if expanded): refused in %.2f ms\n", ms);
  EXPECT_LT(ms, 100.0);
}

}  // namespace
}  // namespace nemoc
