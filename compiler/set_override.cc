#include "set_override.h"

#include <set>
#include <vector>

#include "edit_distance.h"
#include "secret_scanner.h"
#include "spec_loader.h"

namespace nemoc {

bool DottedToPointer(const std::string& dotted, std::string* pointer) {
  pointer->clear();
  std::string token;
  bool expect_token = true;
  auto flush = [&]() -> bool {
    if (token.empty()) return false;
    pointer->append("/").append(EscapePointerToken(token));
    token.clear();
    return true;
  };
  for (size_t i = 0; i < dotted.size(); ++i) {
    char c = dotted[i];
    if (c == '.') {
      if (!expect_token && token.empty()) {
        expect_token = true;  // after "]"
        continue;
      }
      if (!flush()) return false;
      expect_token = true;
    } else if (c == '[') {
      if (!token.empty() && !flush()) return false;
      size_t close = dotted.find(']', i);
      if (close == std::string::npos || close == i + 1) return false;
      std::string index = dotted.substr(i + 1, close - i - 1);
      if (index.find_first_not_of("0123456789") == std::string::npos) {
        if (index.size() > 9) return false;
        pointer->append("/").append(std::to_string(std::stoul(index)));  // canonical: [007] is item 7
      } else {
        // [name]: the item whose name is `name` (targets[eks]), resolved when applied.
        if (index.find_first_of("[].") != std::string::npos) return false;
        pointer->append("/").append(EscapePointerToken(index));
      }
      i = close;
      expect_token = false;
    } else {
      token += c;
      expect_token = false;
    }
  }
  if (!token.empty()) return flush();
  return !pointer->empty() && !expect_token;
}

bool ApplySetOverride(const std::string& assignment, Document* doc, Diagnostics* diags) {
  const Location origin{"--set " + assignment, 0, 0};
  size_t eq = assignment.find('=');
  std::string pointer;
  if (eq == std::string::npos || !DottedToPointer(assignment.substr(0, eq), &pointer)) {
    diags->Error("set.syntax", "expected --set path=value, e.g. spec.stages.train.nodes=4",
                 origin);
    return false;
  }
  const std::string value_text = assignment.substr(eq + 1);
  // A --set value is input like the spec's own text: a credential in it is
  // refused (and every diagnostic channel masks it; field-review.md E6).
  // A flow mapping (env NAME={secretKeyRef: {name: S, key: K}}) is scanned as
  // the spec line it stands for, "NAME: {...}", so a reference under a
  // credential-like name is not taken for the credential itself; its scalars
  // are still scanned for credential shapes.
  const size_t first = value_text.find_first_not_of(" \t");
  const bool mapping = first != std::string::npos && value_text[first] == '{';
  const size_t cut = assignment.find_last_of(".]", eq);
  const size_t name_start = cut == std::string::npos ? 0 : cut + 1;
  const std::string scanned =
      mapping ? assignment.substr(name_start, eq - name_start) + ": " + value_text : assignment;
  if (const auto found = FindSecrets(scanned); !found.empty()) {
    for (const SecretFinding& f : found) {
      diags->Error("set.secret",
                   f.kind + " in a --set value: specs reference Secrets by name, never by value",
                   origin,
                   "put the value in a Kubernetes Secret and reference it by name (in env: "
                   "NAME={secretKeyRef: {name: SECRET, key: KEY}})");
    }
    return false;
  }
  if (value_text.find_first_of("\n\r") != std::string::npos) {
    diags->Error("set.syntax", "a --set value must be on one line", origin);
    return false;
  }
  Document value_doc;
  Diagnostics value_diags;
  std::set<std::string> yaml11;
  if (!LoadSpecText("--set", "value: " + value_text, &value_doc, &value_diags, {}, &yaml11)) {
    for (const auto& d : value_diags.items()) {
      diags->Error("set.value", "cannot read the value: " + d.message, origin);
    }
    return false;
  }
  nlohmann::json value = value_doc.root["value"];

  // Walk to the parent, creating mappings; list items must exist.
  nlohmann::json* node = &doc->root;
  std::string walked;  // the canonical pointer of `node`
  size_t pos = 0;
  while (true) {
    size_t next = pointer.find('/', pos + 1);
    std::string raw = pointer.substr(pos + 1, next == std::string::npos ? next : next - pos - 1);
    std::string key = nlohmann::json::json_pointer("/" + raw).back();
    const bool last = next == std::string::npos;
    if (node->is_array()) {
      size_t index = 0;
      bool numeric = !key.empty() && key.size() <= 9 &&
                     key.find_first_not_of("0123456789") == std::string::npos;
      if (numeric) index = std::stoul(key);
      if (!numeric) {
        // By name: spec.targets[eks] or spec.targets.eks is the target named eks.
        std::vector<std::string> names;
        index = node->size();
        for (size_t i = 0; i < node->size(); ++i) {
          const nlohmann::json& item = (*node)[i];
          if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) continue;
          names.push_back(item["name"].get<std::string>());
          if (names.back() == key && index == node->size()) index = i;
        }
        if (index == node->size()) {
          std::string list;
          for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
          const std::string closest = SuggestClosest(key, names);
          diags->Error("set.path", PointerToDotted(walked) + " has no item named " + key, origin,
                       closest.empty() ? (names.empty() ? "its items have no names: use an index, [0]"
                                                        : "its items are named " + list)
                                       : "did you mean " + closest + "?");
          return false;
        }
      } else if (index >= node->size()) {
        diags->Error("set.path", PointerToDotted(walked) + " has no item " + key, origin);
        return false;
      }
      node = &(*node)[index];
      raw = std::to_string(index);
    } else if (node->is_object() || node->is_null()) {
      if (last) {
        (*node)[key] = value;
        walked += "/" + raw;
        break;
      }
      if (!node->contains(key)) {
        // A mapping --set creates is located at --set too, so an error about
        // it (e.g. an unknown key) never points at an unrelated spec line (E8).
        (*node)[key] = nlohmann::json::object();
        doc->map.SetOverride(walked + "/" + raw, origin);
      }
      node = &(*node)[key];
    } else {
      diags->Error("set.path", PointerToDotted(walked) + " is not a mapping or list", origin);
      return false;
    }
    walked += "/" + raw;
    if (last) {
      *node = value;
      break;
    }
    pos = next;
  }
  doc->map.SetOverride(walked, origin);
  return true;
}

}  // namespace nemoc
