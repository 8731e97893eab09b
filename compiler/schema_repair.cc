#include "schema_repair.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>

#include "source_map.h"

namespace nemoc {
namespace {

// "did you mean 'X'?" -> X ("" when the hint names none).
std::string Suggested(const std::string& hint) {
  std::string prefix = "did you mean '";
  if (hint.rfind("renamed to '", 0) == 0) prefix = "renamed to '";
  if (hint.rfind(prefix, 0) != 0) return "";
  const size_t end = hint.find('\'', prefix.size());
  return end == std::string::npos ? "" : hint.substr(prefix.size(), end - prefix.size());
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// nlohmann's RFC 6901 pointer does the splitting and unescaping.
std::string Parent(const std::string& pointer) {
  return nlohmann::json::json_pointer(pointer).parent_pointer().to_string();
}

std::string LastToken(const std::string& pointer) { return nlohmann::json::json_pointer(pointer).back(); }

const char kErased[] = "$nemoc.erased";

// Removes the value at `pointer`: an object member at once, an array element
// marked and swept later (SweepErased), so the indices of the other
// pointers stay what the diagnostics said.
void Erase(nlohmann::json* root, const std::string& pointer) {
  const nlohmann::json::json_pointer parent_ptr(Parent(pointer));
  if (!root->contains(parent_ptr)) return;
  nlohmann::json& parent = root->at(parent_ptr);
  const std::string token = LastToken(pointer);
  if (parent.is_object()) {
    parent.erase(token);
  } else if (parent.is_array() && !token.empty() &&
             std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    const size_t index = std::stoul(token);
    if (index < parent.size()) parent[index] = nlohmann::json{{kErased, true}};
  }
}

void SweepErased(nlohmann::json* value) {
  if (value->is_object()) {
    for (auto& [key, child] : value->items()) SweepErased(&child);
  } else if (value->is_array()) {
    nlohmann::json kept = nlohmann::json::array();
    for (auto& child : *value) {
      if (child.is_object() && child.size() == 1 && child.contains(kErased)) continue;
      SweepErased(&child);
      kept.push_back(std::move(child));
    }
    *value = std::move(kept);
  }
}

}  // namespace

bool RepairSchemaErrors(const std::vector<Diagnostic>& found, nlohmann::json* root,
                        std::vector<std::string>* defaulted,
                        const std::function<nlohmann::json(const std::string&)>& placeholder,
                        std::vector<std::pair<std::string, std::string>>* moved_to) {
  std::map<std::string, nlohmann::json> fill;  // missing required field -> stand-in
  std::vector<std::string> erase;
  // pointer -> where it is read: a misspelt or renamed field under its new
  // key, a misplaced one where it belongs (mistake 7).
  std::map<std::string, std::string> move;
  std::map<std::string, std::string> replace;  // pointer -> new string value
  // A required field reported missing is there once a misspelt or renamed
  // one is read as it (`globl` -> global).
  std::set<std::string> renamed_to;
  for (const Diagnostic& d : found) {
    const std::string suggestion = Suggested(d.hint);
    if (d.code == "spec.unknown-field" && !suggestion.empty()) renamed_to.insert(Parent(d.location.pointer) + "/" + suggestion);
    if (d.code == "spec.unknown-field" && !d.location.pointer.empty()) {
      const std::string to = ReindentedPointer(d.location.pointer, d.hint);
      if (!to.empty()) renamed_to.insert(to);
    }
  }
  for (const Diagnostic& d : found) {
    if (d.severity != Severity::kError) continue;
    const std::string& pointer = d.location.pointer;
    if (d.code == "spec.missing-field") {
      const std::string marker = "missing required field '";
      const size_t at = d.message.find(marker);
      const size_t end = at == std::string::npos ? at : d.message.find('\'', at + marker.size());
      if (end == std::string::npos) return false;
      const std::string field = pointer + "/" + d.message.substr(at + marker.size(), end - at - marker.size());
      if (renamed_to.count(field)) continue;
      nlohmann::json stand_in = placeholder ? placeholder(field) : nlohmann::json();
      if (stand_in.is_null() || field.find_first_of("~", pointer.size()) != std::string::npos) return false;
      fill[field] = std::move(stand_in);
      defaulted->push_back(field);
      continue;
    }
    if (pointer.empty()) return false;
    const nlohmann::json::json_pointer ptr(pointer);
    if (!root->contains(ptr)) continue;  // inside something already removed
    const std::string suggestion = Suggested(d.hint);
    if (d.code == "spec.unknown-field") {
      // A misspelt field is read as the field it was meant to be, unless
      // that one is written too; either way nothing is defaulted.
      const std::string sibling = Parent(pointer) + "/" + suggestion;
      const std::string to = ReindentedPointer(pointer, d.hint);
      if (!to.empty() && !root->contains(nlohmann::json::json_pointer(to)) &&
          root->contains(nlohmann::json::json_pointer(Parent(to))) &&
          root->at(nlohmann::json::json_pointer(Parent(to))).is_object()) {
        move[pointer] = to;
      } else if (!suggestion.empty() && !root->contains(nlohmann::json::json_pointer(sibling)) &&
          suggestion.find_first_of("~/") == std::string::npos) {
        move[pointer] = sibling;
      } else {
        erase.push_back(pointer);
      }
      continue;
    }
    if (d.code == "spec.wrong-profile") {  // an option the target's profile ignores
      erase.push_back(pointer);
      continue;
    }
    const nlohmann::json& value = root->at(ptr);
    if (d.code == "spec.not-allowed" && value.is_string() && !suggestion.empty() &&
        Lower(value.get<std::string>()) == Lower(suggestion)) {
      replace[pointer] = suggestion;  // `mode: LoRA` is read as lora
      continue;
    }
    const std::string quote = "quote it: \"";
    if (d.code == "spec.wrong-type" && value.is_number() && d.hint.rfind(quote, 0) == 0) {
      const size_t end = d.hint.find('"', quote.size());
      if (end != std::string::npos) {  // an unquoted 25.10 is read as "25.10"
        replace[pointer] = d.hint.substr(quote.size(), end - quote.size());
        continue;
      }
    }
    erase.push_back(pointer);
    defaulted->push_back(pointer);
  }
  for (const auto& [pointer, value] : replace) root->at(nlohmann::json::json_pointer(pointer)) = value;
  for (const auto& [pointer, value] : fill) {
    const nlohmann::json::json_pointer parent(Parent(pointer));
    if (root->contains(parent) && root->at(parent).is_object()) root->at(parent)[LastToken(pointer)] = value;
  }
  // Each destination was free when chosen; two fields read as one (`globl`
  // and `glob` both as `global`) leave the last.
  for (const auto& [pointer, to] : move) {
    const nlohmann::json::json_pointer ptr(pointer);
    const nlohmann::json::json_pointer dest(to);
    if (!root->contains(ptr) || !root->contains(dest.parent_pointer())) continue;
    nlohmann::json value = std::move(root->at(ptr));
    Erase(root, pointer);
    root->at(dest.parent_pointer())[dest.back()] = std::move(value);
    if (moved_to != nullptr) moved_to->emplace_back(pointer, to);
  }
  // Deepest first: a member inside a removed value is gone with it.
  std::sort(erase.begin(), erase.end(), [](const std::string& a, const std::string& b) { return a > b; });
  for (const auto& pointer : erase) Erase(root, pointer);
  SweepErased(root);
  return true;
}

std::string ReindentedPointer(const std::string& pointer, const std::string& hint) {
  const nlohmann::json::json_pointer ptr(pointer);
  if (ptr.empty()) return "";
  const std::string under = "indent it under '";
  if (hint.rfind(under, 0) == 0) {
    const size_t end = hint.find('\'', under.size());
    if (end == std::string::npos) return "";
    return (ptr.parent_pointer() / hint.substr(under.size(), end - under.size()) / ptr.back()).to_string();
  }
  if (hint.rfind("indent it as far as '", 0) == 0 && !ptr.parent_pointer().empty()) {
    return (ptr.parent_pointer().parent_pointer() / ptr.back()).to_string();
  }
  return "";
}

}  // namespace nemoc
