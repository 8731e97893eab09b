// What a target will run, as data, made from its TargetFacts (facts.h) and
// normalized spec (sizes from the normalizer, the memory estimate from the fit
// check, the stage directories and objects from the expansion), for `nemoc
// plan`, `--output json` and `nemoc metrics`; SUMMARY.md shows the same
// numbers from it.
#ifndef NEMOC_PLAN_H_
#define NEMOC_PLAN_H_

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "normalizer.h"

#include "fit_check.h"

namespace nemoc {

struct TargetFacts;  // facts.h

/// The memory estimate as numbers (GB, one decimal), with DescribeFit's
/// sentence ("text"): the plan's "memory".
nlohmann::json MemoryFacts(const MemoryEstimate& estimate, double capacity_gb);

/// One target's plan:
///   {"name", "profile", "dir", "accelerator", "gpuModel", "runtime", "fabric",
///    "train": {"mode", "precision", "nodes", "gpusPerNode", "gpus", "seqLength",
///              "maxSteps", "parallelism": {...,"data"}, "batch": {"micro",
///              "global", "microBatchesPerStep"}},
///    "memory": {"totalGB", "capacityGB", ...},
///    "stages": ["00-base", ...], "objects": {"total", "byKind": {...}}, "files"}
/// Fields a target does not have (no train stage, no accelerator) are omitted.
/// `typed`: normalized["spec"] read through its types (ReadTypedSpec).
nlohmann::json PlanTarget(const nlohmann::json& normalized, const TypedSpec& typed, const nlohmann::json& target,
                          const TargetFacts& facts,
                          const std::map<std::string, nlohmann::json>& files,
                          const std::string& dir);

/// The plan of one spec for people: a block per target.
std::string RenderPlanText(const std::string& spec_path, const std::string& project,
                           const nlohmann::json& target_plans);

}  // namespace nemoc

#endif  // NEMOC_PLAN_H_
