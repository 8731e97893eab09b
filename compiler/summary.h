// SUMMARY.md for pull-request review: what a target will run, in one page.
#ifndef NEMOC_SUMMARY_H_
#define NEMOC_SUMMARY_H_

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "normalizer.h"

namespace nemoc {

struct TargetFacts;  // facts.h

/// Where a target's tree departs from its spec file alone.
struct SummaryProvenance {
  std::string target;  // "spec.targets[1]"
  struct Override {
    std::string path;    // "spec.stages.train.nodes"
    std::string value;   // compact JSON; "null" = removed
    std::string shared;  // the spec's own value (compact JSON), "" when it sets none
    std::string environment;  // the environment it comes from, "" for the target's own
  };
  std::string environment;          // spec.targets[i].environment, "" when none
  std::vector<Override> overrides;  // the environment's, then spec.targets[i].overrides, flattened
  std::vector<std::string> sets;    // this build's --set assignments
};

/// `normalized` is the normalized spec the target compiles from (merged with
/// its overrides) and `typed` its spec read through its types, `target` one of its targets, `facts` its facts and `plan`
/// the plan PlanTarget made from them (the training chain's sizes),
/// `files` the target's objects.
std::string RenderSummary(const nlohmann::json& normalized, const TypedSpec& typed, const nlohmann::json& target,
                          const TargetFacts& facts, const nlohmann::json& plan,
                          const std::map<std::string, nlohmann::json>& files,
                          const std::string& spec_name,
                          const SummaryProvenance& provenance = {});

/// Stage directories in pipeline order (directory names sort in that order),
/// as the libraries emitted them: new stages appear without changes here.
std::vector<std::string> StageDirs(const std::map<std::string, nlohmann::json>& files);

}  // namespace nemoc

#endif  // NEMOC_SUMMARY_H_
