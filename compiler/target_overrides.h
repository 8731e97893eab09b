// spec.targets[i].overrides: a target's own values for the fields every
// target shares (image, model, stages, monitoring), so that environments
// (a 1-node dev cluster, a 28-node production one) differ in the reviewed,
// committed spec instead of in `--set` flags Git never sees.
//
// An override is a JSON merge patch (RFC 7386) of `spec`: mappings merge key
// by key, null removes a key (a stage the target does not run), anything else
// replaces the value. The merged spec is validated, normalized and checked
// like the spec itself; every value it took from the overrides is located at
// the override's own line.
#ifndef NEMOC_TARGET_OVERRIDES_H_
#define NEMOC_TARGET_OVERRIDES_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "source_map.h"

namespace nemoc {

/// The fields of `spec` a target may override (schemas/project.schema.json
/// lists the same keys under definitions.targetOverrides).
inline constexpr const char* kOverridableSpecFields[] = {"namespace", "image", "model", "stages", "monitoring"};

/// True when spec.targets[index] of `base` has overrides or an environment.
bool HasTargetOverrides(const Document& base, size_t index);

/// spec.targets[index].environment, or "".
std::string TargetEnvironment(const Document& base, size_t index);

/// `base` with the target's environment (spec.environments[name]), then
/// spec.targets[index].overrides merged into spec: the document
/// that target is compiled from. Source positions (and --set origins) of the
/// merged values are those of the override; `yaml11_bools` pointers below the
/// override are added at their merged place too.
Document ApplyTargetOverrides(const Document& base, size_t index,
                              std::set<std::string>* yaml11_bools);

/// One line per overridden value, sorted by path: its JSON pointer in the
/// merged spec ("/spec/stages/train/nodes") and the value as compact JSON
/// ("null" for a removed key).
std::vector<std::pair<std::string, std::string>> OverrideLines(const nlohmann::json& overrides);

}  // namespace nemoc

#endif  // NEMOC_TARGET_OVERRIDES_H_
