// libFuzzer target: everything `nemoc validate` does before Jsonnet, in the
// same order as Compiler::CompileFile (compiler/compiler.cc): load, validate
// against schemas/project.schema.json, normalize against libsonnet/models.json,
// run the semantic checks, then the fit check against every accelerator in
// libsonnet/accelerators.json.
//
// Any diagnostic is a normal outcome. What counts as a bug: a sanitizer report,
// or an exception escaping a stage (the nemoc binary would turn it into
// "internal error", exit 3, on a spec that is merely invalid).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "checks.h"
#include "diagnostic.h"
#include "fit_check.h"
#include "normalizer.h"
#include "schema_validator.h"
#include "source_map.h"
#include "spec_loader.h"

namespace {

struct Data {
  std::unique_ptr<nemoc::InputSchema> schema;
  nemoc::ModelCatalog catalog;
  nemoc::AcceleratorTable accelerators;
  std::vector<std::pair<std::string, double>> capacities;  // name, memoryGB
};
Data* data = nullptr;  // built once; reachable, so never reported as a leak

[[noreturn]] void InitFailed(const std::string& what) {
  std::fprintf(stderr, "fuzz_validate: %s\n", what.c_str());
  std::exit(1);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const std::string root = NEMOC_SOURCE_DIR;
  data = new Data;
  std::string err;
  data->schema = nemoc::InputSchema::Load(root + "/schemas/project.schema.json", &err);
  if (!data->schema) InitFailed(err);
  if (!nemoc::ModelCatalog::Load(root + "/libsonnet/models.json", &data->catalog, &err)) {
    InitFailed(err);
  }
  const std::string accelerators = root + "/libsonnet/accelerators.json";
  if (!nemoc::AcceleratorTable::Load(accelerators, &data->accelerators, &err)) {
    InitFailed(err);
  }
  std::ifstream in(accelerators);
  const nlohmann::json table = nlohmann::json::parse(in);
  for (const auto& [name, gpu] : table.at("accelerators").items()) {
    data->capacities.emplace_back(name, gpu.at("memoryGB").get<double>());
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  nemoc::Document doc;
  nemoc::Diagnostics diags;
  std::set<std::string> yaml11_bools;
  std::string text(reinterpret_cast<const char*>(bytes), size);
  if (!nemoc::LoadSpecText("fuzz.yaml", std::move(text), &doc, &diags, {}, &yaml11_bools)) {
    return 0;
  }
  if (data->schema->Validate(doc, yaml11_bools, &diags)) {
    nlohmann::json normalized;
    const bool normalized_ok =
        nemoc::Normalize(doc, *data->schema, data->catalog, &normalized, &diags);
    // As in CompileFile: the checks run even when normalization failed.
    const bool checks_ok = nemoc::CheckSpec(doc, normalized, &diags);
    if (normalized_ok && checks_ok) {
      const auto& spec = normalized["spec"];
      if (spec["stages"].contains("train")) {
        const auto& train = spec["stages"]["train"];
        const auto& architecture = spec["model"]["architecture"];
        for (const auto& [accelerator, capacity] : data->capacities) {
          nemoc::CheckFit(doc, train, architecture, "fuzz", accelerator, capacity, &diags);
          (void)nemoc::DescribeFit(nemoc::EstimateMemory(train, architecture), capacity);
        }
      }
    }
  }
  // Quote every diagnostic the way the command line does.
  (void)nemoc::RenderText(diags, {{doc.file, doc.text}}, /*color=*/false);
  return 0;
}
