// Test-only: the tables CheckSpec reads (check_registry.h CheckTables),
// loaded from the source tree as Compiler::Init loads them from the data
// directory -- for the unit tests that run CheckSpec without a Compiler --
// and the input schema, the model catalog and the normalizer over them, for
// the unit tests that need a normalized spec or the schema's per-profile rules.
#ifndef NEMOC_COMPILER_TEST_CHECK_TABLES_H_
#define NEMOC_COMPILER_TEST_CHECK_TABLES_H_

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "check_registry.h"
#include "diagnostic.h"
#include "nemo_releases.h"
#include "normalizer.h"
#include "schema_validator.h"
#include "spec_loader.h"
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

/// The built-in profiles: the names of profiles/*.libsonnet.
inline std::set<std::string> BuiltinProfiles() {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(NEMOC_SOURCE_DIR "/profiles")) {
    if (entry.path().extension() == ".libsonnet") names.insert(entry.path().stem().string());
  }
  return names;
}

/// schemas/project.schema.json's value at `pointer` ({} when it has none):
/// where scripts/update-schema-catalogue writes each profile's rules
/// (gpu_node.h kGpuNodesAt, node_fabric.h kNodeFabricsAt).
inline nlohmann::json SchemaValue(const char* pointer) {
  std::ifstream in(NEMOC_SOURCE_DIR "/schemas/project.schema.json");
  const nlohmann::json schema = nlohmann::json::parse(in, nullptr, false);
  const nlohmann::json::json_pointer at(pointer);
  return !schema.is_discarded() && schema.contains(at) ? schema.at(at) : nlohmann::json::object();
}

/// The spec `text` normalized as Prepare normalizes it (the input schema's
/// defaults, the preset, derived sizes), or null when it does not load or
/// normalize; `name` is its file name in messages.
inline nlohmann::json Normalized(const std::string& name, const std::string& text) {
  static const std::unique_ptr<InputSchema> schema = [] {
    std::string err;
    auto s = InputSchema::Load(NEMOC_SOURCE_DIR "/schemas/project.schema.json", &err);
    if (s == nullptr) ADD_FAILURE() << err;
    return s;
  }();
  static const ModelCatalog catalog = [] {
    ModelCatalog c;
    std::string err;
    if (!ModelCatalog::Load(NEMOC_SOURCE_DIR "/libsonnet/models.json", &c, &err)) ADD_FAILURE() << err;
    return c;
  }();
  Document doc;
  Diagnostics diags;
  nlohmann::json normalized;
  if (schema == nullptr || !LoadSpecText(name, text, &doc, &diags) ||
      !Normalize(doc, *schema, catalog, &normalized, &diags)) {
    return nullptr;
  }
  return normalized;
}

}  // namespace nemoc::test_tables

#endif  // NEMOC_COMPILER_TEST_CHECK_TABLES_H_
