// Test-only: the tables CheckSpec reads (check_registry.h CheckTables),
// loaded from the source tree as Compiler::Init loads them from the data
// directory -- for the unit tests that run CheckSpec without a Compiler.
#ifndef NEMOC_COMPILER_TEST_CHECK_TABLES_H_
#define NEMOC_COMPILER_TEST_CHECK_TABLES_H_

#include <string>

#include <gtest/gtest.h>

#include "check_registry.h"
#include "diagnostic.h"
#include "nemo_releases.h"
#include "stages.h"

namespace nemoc::test_tables {

/// The built-in stage descriptions and versions.json; a table that does not
/// load fails the test that asked for it.
inline const CheckTables& Builtin() {
  static const StageTable stages = [] {
    StageTable t;
    Diagnostics refused;
    if (!t.Load(NEMOC_SOURCE_DIR "/libsonnet", {}, nullptr, &refused)) ADD_FAILURE() << "built-in stages refused";
    return t;
  }();
  static const NemoReleases releases = [] {
    NemoReleases r;
    std::string err;
    if (!NemoReleases::Load(NEMOC_SOURCE_DIR "/libsonnet/nemo/versions.json", &r, &err)) ADD_FAILURE() << err;
    return r;
  }();
  static const CheckTables tables{stages, releases};
  return tables;
}

}  // namespace nemoc::test_tables

#endif  // NEMOC_COMPILER_TEST_CHECK_TABLES_H_
