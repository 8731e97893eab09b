// Every semantic check of a spec registers itself (issue #48 item 3): a name,
// what it covers -- the spec as a whole, one GitOps engine's settings, each
// training stage, or one stage of the pipeline -- and the function, declared
// beside the rule it implements with NEMOC_REGISTER_CHECK. CheckSpec
// (checks.h) runs them all in one place, in Prepare, before any Jsonnet: a
// check of a stage runs only when the spec has that stage, a check of an
// engine only when spec.gitops.engines names it (engines.h: a --jpath
// engine's own rules are its library's diagnostics(ctx)). The checks that need a target's GPU node run right after,
// per target (compiler.cc CheckTargetNodes, gpu_node.h); the profiles' and
// stage libraries' own rules are Jsonnet (`checks`, `diagnostics`).
//
// Order (deterministic whatever the link order): the spec's checks, then each
// engine's (by engine name), then each training stage's (pretrain, then
// train), then each stage's in pipeline order; within one scope, by source
// file, then as declared in the file.
#ifndef NEMOC_CHECK_REGISTRY_H_
#define NEMOC_CHECK_REGISTRY_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnostic.h"
#include "source_map.h"

namespace nemoc {

class StageTable;    // stages.h
struct TypedSpec;    // normalizer.h
struct NemoReleases;  // nemo_releases.h

/// The tables the checks read (Compiler::Init loads them).
struct CheckTables {
  const StageTable& stages;        // the stage descriptions (stages.h)
  const NemoReleases& releases;    // what NeMo runs on, by release (nemo_releases.h)
};

/// What a check reads: the spec as written (locations) and normalized, and
/// the tables.
struct CheckInput {
  const Document& doc;
  const nlohmann::json& normalized;  // {apiVersion, kind, metadata, spec}
  const nlohmann::json& spec;        // normalized["spec"]
  const TypedSpec& typed;            // spec read through its types, once (normalizer.h)
  const CheckTables& tables;
};

struct RegisteredCheck {
  enum class Scope { kSpec, kEngine, kTrainingStage, kStage };
  std::string name;  // unique: "<area>.<rule>", e.g. "train.arithmetic"
  Scope scope = Scope::kSpec;
  std::string key;  // kStage: the stage key (a description's key); kEngine: the engine's name
  /// `key`: the stage or engine the check runs for ("" for the spec's checks).
  void (*run)(const CheckInput& input, const std::string& key, Diagnostics* diags) = nullptr;
  std::string file;  // where it was declared (__FILE__), for the order
  int sequence = 0;  // declaration order within the process
};

/// Adds a check; returns true (for static initialization).
bool RegisterCheck(RegisteredCheck check);
/// Every registered check, in the order above (stage checks by their key's
/// order in `stages`, a key no description has last; engine checks by name).
std::vector<const RegisteredCheck*> RegisteredChecks(const StageTable& stages);

}  // namespace nemoc

#define NEMOC_CHECK_CONCAT2(a, b) a##b
#define NEMOC_CHECK_CONCAT(a, b) NEMOC_CHECK_CONCAT2(a, b)
/// NEMOC_REGISTER_CHECK("train.warmup", kTrainingStage, "", CheckWarmupOf);
#define NEMOC_REGISTER_CHECK(name, scope, key, fn)                                              \
  [[maybe_unused]] static const bool NEMOC_CHECK_CONCAT(nemoc_registered_check_, __LINE__) = \
      ::nemoc::RegisterCheck({name, ::nemoc::RegisteredCheck::Scope::scope, key, fn, __FILE__, 0})

#endif  // NEMOC_CHECK_REGISTRY_H_
