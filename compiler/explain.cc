#include "explain.h"

#include <cctype>
#include <vector>

#include "edit_distance.h"

namespace nemoc {

namespace {

constexpr size_t kWidth = 80;
constexpr int kMaxDepth = 16;  // recursive view: deeper than any real spec

// A schema node with its $ref chain followed. A description written beside a
// $ref ("Image for training. Default: spec.image.") wins over the target's.
struct Node {
  const nlohmann::json* schema = nullptr;
  std::string description;
};

Node Resolve(const nlohmann::json& root, const nlohmann::json& schema) {
  Node node{&schema, schema.value("description", "")};
  for (int hops = 0; node.schema->contains("$ref") && hops < 32; ++hops) {
    const std::string ref = (*node.schema)["$ref"].get<std::string>();
    const std::string prefix = "#/definitions/";
    if (ref.rfind(prefix, 0) != 0 || !root["definitions"].contains(ref.substr(prefix.size()))) break;
    node.schema = &root["definitions"][ref.substr(prefix.size())];
    if (node.description.empty()) node.description = node.schema->value("description", "");
  }
  return node;
}

// Arrays are entered transparently, as kubectl does.
const nlohmann::json& ElementOf(const nlohmann::json& root, const nlohmann::json& schema) {
  const Node node = Resolve(root, schema);
  if (node.schema->contains("items") && (*node.schema)["items"].is_object()) {
    return *Resolve(root, (*node.schema)["items"]).schema;
  }
  return *node.schema;
}

std::string TypeName(const nlohmann::json& root, const nlohmann::json& schema) {
  const Node node = Resolve(root, schema);
  const nlohmann::json& s = *node.schema;
  std::string type = s.contains("type") && s["type"].is_string() ? s["type"].get<std::string>() : "";
  if (s.contains("type") && s["type"].is_array()) {  // e.g. ["string", "object"]: string|object
    for (const auto& t : s["type"]) {
      if (t.is_string()) type += (type.empty() ? "" : "|") + t.get<std::string>();
    }
    return type;
  }
  if (type == "array" && s.contains("items") && s["items"].is_object()) {
    return "[]" + TypeName(root, s["items"]);
  }
  if (type == "object" && !s.contains("properties") && s.contains("additionalProperties") &&
      s["additionalProperties"].is_object()) {
    return "map[string]" + TypeName(root, s["additionalProperties"]);
  }
  return type.empty() ? "any" : type;
}

std::string Scalar(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Facts that fit on one line each: default, allowed values, bounds, pattern.
std::vector<std::pair<std::string, std::string>> Facts(const nlohmann::json& s) {
  std::vector<std::pair<std::string, std::string>> facts;
  if (s.contains("default")) facts.push_back({"DEFAULT", Scalar(s["default"])});
  if (s.contains("enum")) {
    std::string values;
    for (const auto& v : s["enum"]) values += (values.empty() ? "" : ", ") + Scalar(v);
    facts.push_back({"ALLOWED", values});
  }
  // A list of enumerated strings (spec.stages.evaluate.tasks): its items' values.
  if (s.contains("items") && s["items"].is_object() && s["items"].contains("enum")) {
    std::string values;
    for (const auto& v : s["items"]["enum"]) values += (values.empty() ? "" : ", ") + Scalar(v);
    facts.push_back({"ALLOWED ITEMS", values});
  }
  if (s.contains("minimum") || s.contains("maximum")) {
    facts.push_back({"RANGE", (s.contains("minimum") ? Scalar(s["minimum"]) : "") + ".." +
                                  (s.contains("maximum") ? Scalar(s["maximum"]) : "")});
  }
  if (s.contains("minItems") || s.contains("maxItems")) {
    facts.push_back({"ITEMS", (s.contains("minItems") ? Scalar(s["minItems"]) : "0") + ".." +
                                  (s.contains("maxItems") ? Scalar(s["maxItems"]) : "")});
  }
  if (s.contains("maxLength")) facts.push_back({"MAX LENGTH", Scalar(s["maxLength"])});
  if (s.contains("pattern")) facts.push_back({"PATTERN", Scalar(s["pattern"])});
  if (s.contains("examples") && s["examples"].is_array()) {
    std::string values;
    for (const auto& v : s["examples"]) values += (values.empty() ? "" : ", ") + Scalar(v);
    facts.push_back({"EXAMPLES", values});
  }
  return facts;
}

// Word-wraps `text` to kWidth with every line indented by `indent`.
std::string Wrap(const std::string& text, size_t indent) {
  const std::string pad(indent, ' ');
  std::string out;
  std::string line;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find(' ', i);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(i, end - i);
    if (!line.empty() && pad.size() + line.size() + 1 + word.size() > kWidth) {
      out += pad + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    i = end + 1;
  }
  if (!line.empty()) out += pad + line + "\n";
  return out;
}

bool IsRequired(const nlohmann::json& parent, const std::string& name) {
  if (!parent.contains("required")) return false;
  for (const auto& r : parent["required"]) {
    if (r == name) return true;
  }
  return false;
}

// One line per field, then its description and facts (the FIELDS section).
std::string FieldList(const nlohmann::json& root, const nlohmann::json& object) {
  std::string out;
  for (const auto& [name, child] : object["properties"].items()) {
    out += "    " + name + "\t<" + TypeName(root, child) + ">" +
           (IsRequired(object, name) ? " -required-" : "") + "\n";
    const Node node = Resolve(root, child);
    std::string text = node.description;
    for (const auto& [label, value] : Facts(*node.schema)) {
      if (label == "PATTERN" || label == "MAX LENGTH") continue;  // shown for the field itself
      std::string word = label;
      for (auto& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
      text += (text.empty() ? "" : " ") + word + ": " + value + ".";
    }
    out += Wrap(text, 6) + "\n";
  }
  return out;
}

// Names and types only, nested (the --recursive view).
void FieldTree(const nlohmann::json& root, const nlohmann::json& object, int depth, std::string* out) {
  if (depth > kMaxDepth || !object.contains("properties")) return;
  for (const auto& [name, child] : object["properties"].items()) {
    *out += std::string(4 + 2 * depth, ' ') + name + "\t<" + TypeName(root, child) + ">" +
            (IsRequired(object, name) ? " -required-" : "") + "\n";
    FieldTree(root, ElementOf(root, child), depth + 1, out);
  }
}

// "trian" for "train": swapped letters cost two edits, more than
// SuggestClosest allows a short word, yet they are the commonest typo.
std::string Transposed(const std::string& word, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (name.size() != word.size()) continue;
    size_t first = 0;
    while (first < word.size() && word[first] == name[first]) ++first;
    if (first + 1 < word.size() && word[first] == name[first + 1] && word[first + 1] == name[first] &&
        word.compare(first + 2, std::string::npos, name, first + 2, std::string::npos) == 0) {
      return name;
    }
  }
  return "";
}

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t dot = path.find('.', i);
    if (dot == std::string::npos) dot = path.size();
    parts.push_back(path.substr(i, dot - i));
    i = dot + 1;
  }
  return parts;
}

}  // namespace

bool Explain(const nlohmann::json& schema, const std::string& raw_path, bool recursive,
             std::string* out, Diagnostics* diags) {
  std::string path = raw_path;
  if (!path.empty() && path.front() == '.') path.erase(0, 1);
  Node node{&schema, schema.value("description", "")};
  std::string walked;
  const nlohmann::json* owner = nullptr;  // the object the field belongs to
  std::string field;
  if (!path.empty()) {
    for (const auto& part : Split(path)) {
      const nlohmann::json& parent = ElementOf(schema, *node.schema);
      owner = &parent;
      field = part;
      const std::string where = walked.empty() ? "the spec" : walked;
      std::vector<std::string> names;
      if (parent.contains("properties")) {
        for (const auto& [name, _] : parent["properties"].items()) names.push_back(name);
      }
      if (part.empty()) {
        diags->Error("explain.path", "'" + raw_path + "': empty field name after " + where, {},
                     "write fields separated by single dots, e.g. spec.stages.train.parallelism");
        return false;
      }
      if (parent.contains("properties") && parent["properties"].contains(part)) {
        node = Resolve(schema, parent["properties"][part]);
      } else if (parent.contains("additionalProperties") && parent["additionalProperties"].is_object()) {
        node = Resolve(schema, parent["additionalProperties"]);  // a map: any key
      } else {
        std::string hint;
        std::string suggestion = SuggestClosest(part, names);
        if (suggestion.empty()) suggestion = Transposed(part, names);
        if (!suggestion.empty()) {
          hint = "did you mean '" + (walked.empty() ? "" : walked + ".") + suggestion + "'?";
        } else if (!names.empty()) {
          std::string list;
          for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
          hint = "fields of " + where + ": " + list;
        } else {
          hint = where + " has no fields below it";
        }
        diags->Error("explain.unknown-field", "no field '" + part + "' in " + where, {}, hint);
        return false;
      }
      walked += (walked.empty() ? "" : ".") + part;
    }
  }
  const nlohmann::json& self = *node.schema;
  out->clear();
  if (walked.empty()) {
    auto first = [&](const char* field) {
      const auto& p = schema["properties"];
      return p.contains(field) && p[field].contains("enum") ? Scalar(p[field]["enum"][0]) : std::string();
    };
    *out += "KIND:     " + first("kind") + "\n";
    *out += "VERSION:  " + first("apiVersion") + "\n\n";
  } else {
    *out += "FIELD:    " + walked + " <" + TypeName(schema, self) + ">\n\n";
  }
  if (!node.description.empty()) *out += "DESCRIPTION:\n" + Wrap(node.description, 4) + "\n";
  const auto facts = Facts(self);
  for (const auto& [label, value] : facts) {
    if (label == "ALLOWED" && self.contains("enumDescriptions")) continue;  // VALUES below lists them
    // "ALLOWED:  a, b, c" with long lists wrapped under the first value.
    std::string head = label + ": ";
    while (head.size() < 10) head += ' ';
    std::string lines = Wrap(value, head.size());
    if (lines.empty()) lines = std::string(head.size(), ' ') + "\n";
    *out += head + lines.substr(head.size());
  }
  if (!facts.empty()) *out += "\n";
  // Enumerated values with their descriptions (scripts/update-schema-catalogue),
  // and values a profile's rule allows (instance types of eks-efa).
  auto values = [&](const nlohmann::json& s, const std::string& heading) {
    if (!s.contains("enum") || !s.contains("enumDescriptions") ||
        s["enum"].size() != s["enumDescriptions"].size()) {
      return;
    }
    *out += heading + ":\n";
    for (size_t i = 0; i < s["enum"].size(); ++i) {
      *out += "    " + Scalar(s["enum"][i]) + "\n" + Wrap(Scalar(s["enumDescriptions"][i]), 6);
    }
    *out += "\n";
  };
  values(self, "VALUES");
  if (owner != nullptr && owner->contains("allOf") && (*owner)["allOf"].is_array()) {
    for (const auto& rule : (*owner)["allOf"]) {
      const nlohmann::json profile = rule.value("if", nlohmann::json::object())
                                         .value("properties", nlohmann::json::object())
                                         .value("profile", nlohmann::json::object());
      const nlohmann::json then = rule.value("then", nlohmann::json::object()).value("properties", nlohmann::json::object());
      if (profile.contains("const") && then.contains(field) && then[field].is_object()) {
        values(then[field], "VALUES (profile " + Scalar(profile["const"]) + ")");
      }
    }
  }
  const nlohmann::json& element = ElementOf(schema, self);
  if (element.contains("properties")) {
    *out += "FIELDS:\n";
    if (recursive) {
      FieldTree(schema, element, 0, out);
    } else {
      *out += FieldList(schema, element);
    }
  }
  while (out->size() >= 2 && out->substr(out->size() - 2) == "\n\n") out->pop_back();
  return true;
}

}  // namespace nemoc
