// libFuzzer target: everything `nemoc build` does before Jsonnet, by the same
// code: Compiler::Prepare (compiler/compiler.h: secret scan, schema
// validation, normalization, the semantic checks, the profile check, each
// target's overrides) on a spec loaded from the input bytes, then Finish's
// accelerator checks (CheckTargetOnAccelerator: FP8, releases, every stage's
// fit) on every GPU of libsonnet/accelerators.json. Prepare reads no file,
// so the target runs exactly what the command line runs.
//
// Any diagnostic is a normal outcome. What counts as a bug: a sanitizer report,
// or an exception escaping a stage (the nemoc binary would turn it into
// "internal error", exit 3, on a spec that is merely invalid).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "checks.h"
#include "compiler.h"
#include "diagnostic.h"
#include "file_reader.h"
#include "source_map.h"
#include "spec_loader.h"

namespace {

struct Data {
  std::unique_ptr<nemoc::Compiler> compiler;
  std::vector<std::pair<std::string, nlohmann::json>> accelerators;  // name, accelerators.json row
};
Data* data = nullptr;  // built once; reachable, so never reported as a leak

[[noreturn]] void InitFailed(const std::string& what) {
  std::fprintf(stderr, "fuzz_validate: %s\n", what.c_str());
  std::exit(1);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  nemoc::DataDir dir;
  dir.root = NEMOC_SOURCE_DIR;
  data = new Data;
  data->compiler = std::make_unique<nemoc::Compiler>(dir, nemoc::CompileOptions{});
  nemoc::Diagnostics diags;
  if (!data->compiler->Init(&diags)) InitFailed("Compiler::Init failed");
  std::string text, err;
  if (!nemoc::RealFiles().Read(dir.accelerators(), nemoc::kMaxTableBytes, &text, &err)) InitFailed(err);
  const nlohmann::json table = nlohmann::json::parse(text);
  for (const auto& [name, gpu] : table.at("accelerators").items()) data->accelerators.emplace_back(name, gpu);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  nemoc::LoadedSpec loaded;
  loaded.attempted = true;
  std::string text(reinterpret_cast<const char*>(bytes), size);
  loaded.ok = nemoc::LoadSpecText("fuzz.yaml", std::move(text), &loaded.doc, &loaded.diags, {},
                                  &loaded.yaml11_bools);
  nemoc::CompiledSpec out;
  nemoc::PreparedSpec prepared;
  nemoc::Diagnostics diags;
  nemoc::SourceTexts sources;
  data->compiler->Resolve(loaded);  // no --jpath: nothing to describe
  if (data->compiler->Prepare(&loaded, &out, &prepared, &diags, &sources)) {
    for (const auto& target : prepared.normalized["spec"]["targets"]) {
      const std::string name = target["name"].get<std::string>();
      for (const auto& [accelerator, gpu] : data->accelerators) {
        (void)nemoc::CheckTargetOnAccelerator(prepared.DocFor(name), prepared.SpecFor(name)["spec"],
                                              prepared.TypedFor(name), name,
                                              accelerator, gpu, &diags);
      }
    }
  }
  // Quote every diagnostic the way the command line does.
  (void)nemoc::RenderText(diags, sources, /*color=*/false);
  return 0;
}
