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
  return target.is_object() && target.contains("overrides") && target["overrides"].is_object();
}

Document ApplyTargetOverrides(const Document& base, size_t index,
                              std::set<std::string>* yaml11_bools) {
  Document variant = base;
  if (!HasTargetOverrides(base, index)) return variant;
  const std::string from = "/spec/targets/" + std::to_string(index) + "/overrides";
  const nlohmann::json& patch = base.root["spec"]["targets"][index]["overrides"];
  Merge(&variant.root["spec"], patch, "/spec", from, &variant.map, yaml11_bools);
  return variant;
}

std::vector<std::pair<std::string, std::string>> OverrideLines(const nlohmann::json& overrides) {
  std::vector<std::pair<std::string, std::string>> lines;
  if (!overrides.is_object()) return lines;
  Flatten(overrides, "/spec", &lines);
  return lines;
}

}  // namespace nemoc
