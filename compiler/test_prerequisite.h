// Test-only: a test whose prerequisite (../shared, kubectl, lua5.1, an npm
// package...) is missing reports itself as skipped on a developer machine and
// FAILS under CI=true (field-review.md decision F11), so CI can never pass by
// skipping what it was meant to check.
#ifndef NEMOC_COMPILER_TEST_PREREQUISITE_H_
#define NEMOC_COMPILER_TEST_PREREQUISITE_H_

#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

namespace nemoc::testing {
inline bool UnderCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::strcmp(ci, "true") == 0;
}
}  // namespace nemoc::testing

// Usage: if (!present) NEMOC_MISSING_PREREQUISITE("kubectl not installed");
#define NEMOC_MISSING_PREREQUISITE(why)                                                  \
  do {                                                                                   \
    if (::nemoc::testing::UnderCi()) {                                                   \
      GTEST_FAIL() << "CI=true and a prerequisite is missing (a skip would hide it): " << why; \
    }                                                                                    \
    GTEST_SKIP() << why;                                                                 \
  } while (0)

#endif  // NEMOC_COMPILER_TEST_PREREQUISITE_H_
