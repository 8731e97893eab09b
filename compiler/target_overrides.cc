#include "target_overrides.h"

namespace nemoc {

namespace {

// RFC 7386 MergePatch for a value with no counterpart: nulls inside it are
// removals of nothing, so they go.
nlohmann::json WithoutNulls(const nlohmann::json& patch) {
  if (!patch.is_object()) return patch;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : patch.items()) {
    if (!value.is_null()) out[key] = WithoutNulls(value);
  }
  return out;
}

void Merge(nlohmann::json* target, const nlohmann::json& patch, const std::string& to,
           const std::string& from, SourceMap* map, std::set<std::string>* yaml11_bools) {
  for (const auto& [key, value] : patch.items()) {
    const std::string token = EscapePointerToken(key);
    const std::string to_key = to + "/" + token;
    const std::string from_key = from + "/" + token;
    if (value.is_null()) {
      target->erase(key);
      map->Erase(to_key);
      continue;
    }
    auto existing = target->find(key);
    if (value.is_object() && existing != target->end() && existing->is_object()) {
      Merge(&*existing, value, to_key, from_key, map, yaml11_bools);
      continue;
    }
    (*target)[key] = WithoutNulls(value);
    map->Erase(to_key);
    map->Graft(from_key, to_key);
    if (yaml11_bools != nullptr) {
      std::vector<std::string> moved;
      for (const auto& pointer : *yaml11_bools) {
        if (PointerAtOrBelow(pointer, from_key)) {
          moved.push_back(to_key + pointer.substr(from_key.size()));
        }
      }
      yaml11_bools->insert(moved.begin(), moved.end());
    }
  }
}

void Flatten(const nlohmann::json& value, const std::string& pointer,
             std::vector<std::pair<std::string, std::string>>* lines) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [key, child] : value.items()) Flatten(child, pointer + "/" + EscapePointerToken(key), lines);
    return;
  }
  lines->emplace_back(pointer, value.dump());
}

}  // namespace

bool HasTargetOverrides(const Document& base, size_t index) {
  const nlohmann::json& root = base.root;
  if (!root.is_object() || !root.contains("spec") || !root["spec"].is_object()) return false;
  const nlohmann::json& spec = root["spec"];
  if (!spec.contains("targets") || !spec["targets"].is_array() || index >= spec["targets"].size()) {
    return false;
  }
  const nlohmann::json& target = spec["targets"][index];
  return target.is_object() && ((target.contains("overrides") && target["overrides"].is_object()) ||
                                !TargetEnvironment(base, index).empty());
}

std::string TargetEnvironment(const Document& base, size_t index) {
  const nlohmann::json& root = base.root;
  if (!root.is_object() || !root.contains("spec") || !root["spec"].is_object()) return "";
  const nlohmann::json& spec = root["spec"];
  if (!spec.contains("targets") || !spec["targets"].is_array() || index >= spec["targets"].size()) return "";
  const nlohmann::json& target = spec["targets"][index];
  if (!target.is_object() || !target.contains("environment") || !target["environment"].is_string()) return "";
  return target["environment"].get<std::string>();
}

Document ApplyTargetOverrides(const Document& base, size_t index,
                              std::set<std::string>* yaml11_bools) {
  Document variant = base;
  if (!HasTargetOverrides(base, index)) return variant;
  // The environment's patch first, then the target's own over it; each
  // merged value located where it was written.
  const std::string environment = TargetEnvironment(base, index);
  const nlohmann::json& spec = base.root["spec"];
  if (!environment.empty() && spec.contains("environments") && spec["environments"].is_object() &&
      spec["environments"].contains(environment) && spec["environments"][environment].is_object()) {
    Merge(&variant.root["spec"], spec["environments"][environment], "/spec",
          "/spec/environments/" + EscapePointerToken(environment), &variant.map, yaml11_bools);
  }
  const nlohmann::json& target = spec["targets"][index];
  if (target.contains("overrides") && target["overrides"].is_object()) {
    Merge(&variant.root["spec"], target["overrides"], "/spec", "/spec/targets/" + std::to_string(index) + "/overrides",
          &variant.map, yaml11_bools);
  }
  // The merged spec is the target's own: it does not carry the others'
  // environments (they are no field of what the libraries read).
  variant.root["spec"].erase("environments");
  return variant;
}

std::vector<std::pair<std::string, std::string>> OverrideLines(const nlohmann::json& overrides) {
  std::vector<std::pair<std::string, std::string>> lines;
  if (!overrides.is_object()) return lines;
  Flatten(overrides, "/spec", &lines);
  return lines;
}

}  // namespace nemoc
