#include "schema_validator.h"

#include "schema_repair.h"
#include "file_reader.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "valijson.h"

#include "edit_distance.h"
#include "spec_loader.h"

namespace nemoc {

namespace {

// Whether `object` (validated by `schema`) has a field the schema's
// x-nemoc-renamed says is now `field`.
bool RenamedFrom(const nlohmann::json* schema, const nlohmann::json* object, const std::string& field) {
  if (schema == nullptr || object == nullptr || !object->is_object() || !schema->contains("x-nemoc-renamed")) return false;
  for (const auto& [old_name, renamed] : (*schema)["x-nemoc-renamed"].items()) {
    if (renamed.value("to", "") == field && object->contains(old_name)) return true;
  }
  return false;
}

// The plain scalar written at `loc` in the document's text ("" when none).
std::string WrittenScalar(const Document& doc, const Location& loc) {
  if (!loc.known()) return "";
  size_t offset = 0;
  for (int line = 1; line < loc.line && offset != std::string::npos; ++line) {
    offset = doc.text.find('\n', offset);
    if (offset != std::string::npos) ++offset;
  }
  if (offset == std::string::npos) return "";
  offset += static_cast<size_t>(loc.column - 1);
  size_t end = offset;
  while (end < doc.text.size() && end - offset < 64 &&
         (std::isalnum(static_cast<unsigned char>(doc.text[end])) || doc.text[end] == '.' || doc.text[end] == '-' ||
          doc.text[end] == '+' || doc.text[end] == '_')) {
    ++end;
  }
  return offset < doc.text.size() ? doc.text.substr(offset, end - offset) : "";
}

// Longer strings are refused before pattern matching: libstdc++'s std::regex
// recurses per character and would overflow the stack on megabyte strings.
constexpr size_t kMaxStringLength = 4096;

const char* JsonKind(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return "boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "integer";
    case nlohmann::json::value_t::number_float: return "number";
    case nlohmann::json::value_t::string: return "string";
    case nlohmann::json::value_t::array: return "array";
    case nlohmann::json::value_t::object: return "mapping";
    default: return "value";
  }
}

std::string SchemaTypeName(const nlohmann::json& schema) {
  if (!schema.contains("type")) return "a value";
  auto one = [](const std::string& t) -> std::string {
    if (t == "object") return "a mapping";
    if (t == "array") return "a list";
    if (t == "integer") return "an integer";
    if (t == "number") return "a number";
    if (t == "boolean") return "a boolean (true or false)";
    if (t == "string") return "a string";
    return t;
  };
  const auto& type = schema["type"];
  if (type.is_string()) return one(type.get<std::string>());
  std::string out;
  for (const auto& t : type) {
    if (!out.empty()) out += " or ";
    out += one(t.get<std::string>());
  }
  return out;
}

}  // namespace

// valijson context ["<root>", "[spec]", "[targets]", "[0]"] -> "/spec/targets/0".
std::string ContextToPointer(const std::vector<std::string>& context) {
  std::string pointer;
  for (const auto& part : context) {
    if (part == "<root>") continue;
    std::string token = part;
    if (token.size() >= 2 && token.front() == '[' && token.back() == ']') {
      token = token.substr(1, token.size() - 2);
    }
    pointer += "/" + EscapePointerToken(token);
  }
  return pointer;
}

namespace {

std::string Subject(const std::string& pointer) {
  std::string dotted = PointerToDotted(pointer);
  return dotted.empty() ? std::string("the spec") : dotted;
}

bool StartsWith(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// valijson 1.0 fails propertyNames on valid keys without saying why (seen
// with env maps); WalkKeys enforces propertyNames itself, with locations.
void StripPropertyNames(nlohmann::json* schema) {
  if (schema->is_object()) {
    schema->erase("propertyNames");
    // valijson reports every duplicate pair (n² errors, gigabytes for a
    // 180 KB list); WalkKeys reports each duplicate once instead.
    schema->erase("uniqueItems");
    for (auto& [_, child] : schema->items()) StripPropertyNames(&child);
  } else if (schema->is_array()) {
    for (auto& child : *schema) StripPropertyNames(&child);
  }
}

// The first control character in `s` (C0 other than tab and newline, DEL,
// C1), as "U+0000", or "" when there is none. Such characters cannot be
// passed to a process (NUL) or reviewed safely in a manifest.
std::string ControlCharacter(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char b = static_cast<unsigned char>(s[i]);
    unsigned code = 0x110000;
    if ((b < 0x20 && b != '\t' && b != '\n') || b == 0x7F) code = b;
    if (b == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      code = static_cast<unsigned char>(s[i + 1]);
    }
    if (code != 0x110000) {
      return std::string("U+00") + kHex[code >> 4] + kHex[code & 15];
    }
  }
  return {};
}

// Keys are quoted in messages; a megabyte key must not become a megabyte message.
std::string ShortKey(const std::string& key) {
  if (key.size() <= 60) return key;
  size_t cut = 57;
  while (cut > 0 && (static_cast<unsigned char>(key[cut]) & 0xC0) == 0x80) --cut;
  return key.substr(0, cut) + "...";
}

// Integers beyond 2^53 do not survive the Jsonnet step (it computes in doubles).
constexpr double kMaxExactInteger = 9007199254740992.0;

std::string ExtractQuoted(const std::string& s) {
  size_t a = s.find('\'');
  size_t b = a == std::string::npos ? a : s.find('\'', a + 1);
  if (b == std::string::npos) return {};
  return s.substr(a + 1, b - a - 1);
}

std::string JoinKeys(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

}  // namespace

std::string Excerpt(const nlohmann::json& value) {
  std::string text = value.is_string() ? "\"" + value.get<std::string>() + "\""
                                       : value.dump();
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = ' ';
  }
  if (text.size() > 60) {
    size_t cut = 57;
    // Never split a UTF-8 sequence: back off over continuation bytes.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  return text;
}

// Rules marked "x-nemoc-editor-only" (scripts/update-schema-catalogue: what a
// target of each profile may set) are for editors: nemoc checks the same facts
// itself with located messages (spec.wrong-profile from the options' x-nemoc-profiles, the profiles'
// diagnostics), so valijson does not see them.
static void StripEditorOnly(nlohmann::json* schema) {
  if (schema->is_array()) {
    for (auto& item : *schema) StripEditorOnly(&item);
    return;
  }
  if (!schema->is_object()) return;
  auto all_of = schema->find("allOf");
  if (all_of != schema->end() && all_of->is_array()) {
    nlohmann::json kept = nlohmann::json::array();
    for (auto& part : *all_of) {
      if (!(part.is_object() && part.value("x-nemoc-editor-only", false))) kept.push_back(std::move(part));
    }
    if (kept.empty()) {
      schema->erase("allOf");
    } else {
      *all_of = std::move(kept);
    }
  }
  for (auto& [key, value] : schema->items()) StripEditorOnly(&value);
}

struct InputSchema::Compiled {
  valijson::Schema schema;
};

InputSchema::~InputSchema() = default;

std::unique_ptr<InputSchema> InputSchema::Load(const std::string& path, std::string* err,
                                               FileReader* reader) {
  std::string text, read_err;
  if (!(reader != nullptr ? *reader : RealFiles()).Read(path, kMaxTableBytes, &text, &read_err)) {
    *err = "cannot read input schema: " + read_err;
    return nullptr;
  }
  nlohmann::json schema = nlohmann::json::parse(text, nullptr, false);
  if (schema.is_discarded() || !schema.is_object()) {
    *err = "input schema " + path + " is not valid JSON";
    return nullptr;
  }
  return FromJson(std::move(schema), path, err);
}

namespace {

const nlohmann::json::json_pointer kTargetProperties("/definitions/target/properties");
// A target option two profiles declare with schemas of their own: profile ->
// its schema (ComposeProfileOptions).
const char kPerProfile[] = "x-nemoc-per-profile";

// `property` as a target of `profile` reads it: its own schema of an option
// two profiles declare alike, else `property` itself.
const nlohmann::json& ForProfile(const nlohmann::json& property, const std::string& profile) {
  if (!property.is_object()) return property;
  const auto variants = property.find(kPerProfile);
  if (variants == property.end()) return property;
  const auto own = variants->find(profile);
  return own != variants->end() ? *own : property;
}

// The profile a target object names ("" for any other value).
std::string ProfileOf(const nlohmann::json& object) {
  const auto profile = object.is_object() ? object.find("profile") : object.end();
  return object.is_object() && profile != object.end() && profile->is_string() ? profile->get<std::string>() : "";
}
const nlohmann::json::json_pointer kBuiltinProfiles(
    "/definitions/target/properties/profile/x-nemoc-builtin-profiles");

}  // namespace

std::unique_ptr<InputSchema> InputSchema::FromJson(nlohmann::json schema, const std::string& name,
                                                   std::string* err) {
  std::unique_ptr<InputSchema> result(new InputSchema());
  result->schema_ = std::move(schema);
  if (result->schema_.contains(kBuiltinProfiles) && result->schema_.at(kBuiltinProfiles).is_array()) {
    for (const auto& profile : result->schema_.at(kBuiltinProfiles)) {
      if (profile.is_string()) result->profiles_.insert(profile.get<std::string>());
    }
  }
  if (result->schema_.contains(kTargetProperties) && result->schema_.at(kTargetProperties).is_object()) {
    for (const auto& [field, property] : result->schema_.at(kTargetProperties).items()) {
      if (!property.is_object() || !property.contains("x-nemoc-profiles")) continue;
      auto& readers = result->option_readers_[field];
      for (const auto& profile : property["x-nemoc-profiles"]) {
        if (profile.is_string()) readers.push_back(profile.get<std::string>());
      }
    }
  }
  // $id would make valijson resolve "#/definitions/..." against a remote URI.
  nlohmann::json for_valijson = result->schema_;
  for_valijson.erase("$id");
  StripPropertyNames(&for_valijson);
  StripEditorOnly(&for_valijson);
  result->compiled_ = std::make_unique<Compiled>();
  try {
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(for_valijson);
    parser.populateSchema(adapter, result->compiled_->schema);
  } catch (const std::exception& e) {
    *err = "input schema " + name + " does not compile: " + e.what();
    return nullptr;
  }
  return result;
}

bool ComposeProfileOptions(const std::string& profile, const nlohmann::json& options,
                           nlohmann::json* schema, std::string* err) {
  if (!options.is_object()) {
    *err = "options must be an object (target field -> its JSON Schema)";
    return false;
  }
  if (!schema->contains(kTargetProperties) || !schema->at(kTargetProperties).is_object()) {
    *err = "the input schema has no definitions.target.properties";
    return false;
  }
  nlohmann::json& properties = schema->at(kTargetProperties);
  for (const auto& [field, option] : options.items()) {
    if (!option.is_object() || !option.contains("description") || !option["description"].is_string()) {
      *err = "option " + field + " must be a JSON Schema with a description";
      return false;
    }
    auto existing = properties.find(field);
    if (existing == properties.end()) {
      properties[field] = option;
      properties[field]["x-nemoc-profiles"] = nlohmann::json::array({profile});
      continue;
    }
    if (!existing->is_object() || !existing->contains("x-nemoc-profiles")) {
      *err = "option " + field + " is a field every target has (spec.targets[]." + field + ")";
      return false;
    }
    nlohmann::json declared = *existing;
    nlohmann::json readers = declared["x-nemoc-profiles"];
    declared.erase("x-nemoc-profiles");
    if (declared.contains(kPerProfile) || declared != option) {
      // #48: options are namespaced per profile. Two profiles may name an
      // option alike with schemas of their own (an AKS profile's `rdma` is
      // not vanilla-k8s's): the common property then only describes the
      // field, and each reader's schema applies to its own targets through
      // an if/then on the target's profile (valijson ConditionalConstraint;
      // WalkKeys and SchemaAt pick the variant the same way).
      nlohmann::json& target = schema->at(kTargetProperties.parent_pointer());
      const std::string name = field;  // clang cannot capture a structured binding
      auto add_rule = [&target, &name](const std::string& reader, const nlohmann::json& own) {
        if (!target.contains("allOf")) target["allOf"] = nlohmann::json::array();
        target["allOf"].push_back({{"if", {{"properties", {{"profile", {{"const", reader}}}}}, {"required", {"profile"}}}},
                                   {"then", {{"properties", {{name, own}}}}}});
      };
      if (!declared.contains(kPerProfile)) {
        nlohmann::json per_profile = nlohmann::json::object();
        for (const auto& reader : readers) {
          per_profile[reader.get<std::string>()] = declared;
          add_rule(reader.get<std::string>(), declared);
        }
        *existing = {{"description", declared.value("description", "")},
                     {"x-nemoc-profiles", readers},
                     {kPerProfile, std::move(per_profile)}};
      }
      (*existing)[kPerProfile][profile] = option;
      add_rule(profile, option);
    }
    (*existing)["x-nemoc-profiles"].push_back(profile);
  }
  if (!schema->contains(kBuiltinProfiles)) (*schema)[kBuiltinProfiles] = nlohmann::json::array();
  (*schema)[kBuiltinProfiles].push_back(profile);
  return true;
}

const nlohmann::json& InputSchema::Resolve(const nlohmann::json& node) const {
  const nlohmann::json* current = &node;
  for (int depth = 0; depth < 16 && current->is_object() && current->contains("$ref");
       ++depth) {
    const std::string ref = (*current)["$ref"].get<std::string>();
    if (!StartsWith(ref, "#/")) break;
    nlohmann::json::json_pointer ptr(ref.substr(1));
    if (!schema_.contains(ptr)) break;
    current = &schema_.at(ptr);
  }
  return *current;
}

nlohmann::json InputSchema::PlaceholderAt(const std::string& pointer) const {
  const nlohmann::json* schema = SchemaAt(pointer);
  if (schema == nullptr) return nullptr;
  if (schema->contains("default")) return (*schema)["default"];
  if (schema->contains("enum") && (*schema)["enum"].is_array() && !(*schema)["enum"].empty()) return (*schema)["enum"][0];
  const std::string type = schema->contains("type") && (*schema)["type"].is_string() ? (*schema)["type"].get<std::string>() : "";
  if (type == "string") return "missing";
  if (type == "integer" || type == "number") return schema->contains("minimum") ? (*schema)["minimum"] : nlohmann::json(1);
  if (type == "boolean") return false;
  if (type == "object" && !schema->contains("required")) return nlohmann::json::object();
  return nullptr;
}

const nlohmann::json* InputSchema::SchemaAt(const std::string& pointer, const nlohmann::json* root) const {
  const nlohmann::json* schema = &Resolve(schema_);
  size_t i = 0;
  while (i < pointer.size()) {
    size_t next = pointer.find('/', i + 1);
    std::string token = pointer.substr(i + 1, next == std::string::npos ? next : next - i - 1);
    std::string key;
    for (size_t j = 0; j < token.size(); ++j) {
      if (token[j] == '~' && j + 1 < token.size()) {
        key += token[j + 1] == '1' ? '/' : '~';
        ++j;
      } else {
        key += token[j];
      }
    }
    const nlohmann::json* child = nullptr;
    if (schema->contains("properties") && (*schema)["properties"].contains(key)) {
      child = &(*schema)["properties"][key];
    } else if (schema->contains("items") && (*schema)["items"].is_object()) {
      child = &(*schema)["items"];
    } else if (schema->contains("additionalProperties") &&
               (*schema)["additionalProperties"].is_object()) {
      child = &(*schema)["additionalProperties"];
    }
    if (child == nullptr) return nullptr;
    if (root != nullptr && child->is_object() && child->contains(kPerProfile)) {
      const nlohmann::json::json_pointer holder(pointer.substr(0, i));
      if (root->contains(holder)) child = &ForProfile(*child, ProfileOf(root->at(holder)));
    }
    schema = &Resolve(*child);
    if (next == std::string::npos) break;
    i = next;
  }
  return schema;
}

void InputSchema::WalkKeys(const nlohmann::json& instance,
                           const nlohmann::json& raw_schema,
                           const std::string& pointer, const Document& doc,
                           const std::set<std::string>& yaml11_bools,
                           Diagnostics* diags,
                           std::set<std::string>* reported,
                           const nlohmann::json* parent_instance,
                           const nlohmann::json* parent_schema) const {
  const nlohmann::json& schema = Resolve(raw_schema);
  if (instance.is_number()) {
    // Compare integers as integers: 2^53 + 1 rounds to 2^53 as a double.
    const bool too_large =
        instance.is_number_unsigned()  ? instance.get<uint64_t>() > (uint64_t{1} << 53)
        : instance.is_number_integer() ? (instance.get<int64_t>() > (int64_t{1} << 53) ||
                                          instance.get<int64_t>() < -(int64_t{1} << 53))
                                       : (instance.get<double>() > kMaxExactInteger ||
                                          instance.get<double>() < -kMaxExactInteger);
    if (too_large) {
      diags->Error("spec.number-too-large",
                   Subject(pointer) + ": " + instance.dump() + " is beyond 2^53 and would change "
                   "value on the way to the manifests",
                   doc.map.Locate(pointer));
      reported->insert(pointer);
    }
    return;
  }
  if (instance.is_string()) {
    const auto& text = instance.get_ref<const std::string&>();
    if (const std::string control = ControlCharacter(text); !control.empty() &&
                                                          text.size() <= kMaxStringLength) {
      diags->Error("spec.control-character",
                   Subject(pointer) + ": contains the control character " + control,
                   doc.map.Locate(pointer),
                   "write the text without it; a NUL, escape or other control character cannot "
                   "reach a container or a reviewer intact");
      reported->insert(pointer);
      return;
    }
    if (text.size() > kMaxStringLength) {
      diags->Error("spec.too-long",
                   Subject(pointer) + ": string of " + std::to_string(text.size()) +
                       " characters is too long (at most " +
                       std::to_string(kMaxStringLength) + ")",
                   doc.map.Locate(pointer));
      reported->insert(pointer);
    } else if (yaml11_bools.count(pointer) && schema.value("type", "") == "string") {
      diags->Warning("yaml.yaml11-boolean",
                     Subject(pointer) + ": " + text +
                         " is a boolean to YAML 1.1 readers; nemoc reads it as the "
                         "string \"" + text + "\"",
                     doc.map.Locate(pointer),
                     "quote it (\"" + text + "\") to make the string explicit");
    }
    return;
  }
  if (instance.is_array()) {
    if (schema.value("uniqueItems", false)) {
      // One error per repeated value, at its second occurrence.
      struct Seen { size_t first; size_t second; size_t count; };
      std::map<std::string, Seen> seen;
      std::vector<std::string> order;
      for (size_t i = 0; i < instance.size(); ++i) {
        auto [it, inserted] = seen.emplace(instance[i].dump(), Seen{i, 0, 0});
        if (++it->second.count == 2) {
          it->second.second = i;
          order.push_back(it->first);
        }
      }
      for (const auto& key : order) {
        const Seen& s = seen[key];
        const std::string item = pointer + "/" + std::to_string(s.second);
        diags->Error("spec.duplicate-item",
                     Subject(pointer) + ": " + Excerpt(instance[s.first]) +
                         (s.count == 2 ? std::string(" is listed twice")
                                       : " is listed " + std::to_string(s.count) + " times") +
                         " (first as item " + std::to_string(s.first) + ")",
                     doc.map.Locate(item));
        reported->insert(item);
      }
    }
    if (schema.contains("items") && schema["items"].is_object()) {
      for (size_t i = 0; i < instance.size(); ++i) {
        WalkKeys(instance[i], schema["items"], pointer + "/" + std::to_string(i),
                 doc, yaml11_bools, diags, reported);
      }
    }
    return;
  }
  if (!instance.is_object()) return;
  const bool has_properties = schema.contains("properties");
  const bool closed = schema.contains("additionalProperties") &&
                      schema["additionalProperties"].is_boolean() &&
                      !schema["additionalProperties"].get<bool>();
  std::vector<std::string> allowed;
  // A target's allowed fields: the common ones and its own profile's options.
  const std::string profile = has_properties ? ProfileOf(instance) : std::string();
  if (has_properties) {
    for (const auto& [key, property] : schema["properties"].items()) {
      if (profiles_.count(profile) != 0 && property.is_object() && property.contains("x-nemoc-profiles")) {
        const auto& readers = property["x-nemoc-profiles"];
        if (std::find(readers.begin(), readers.end(), profile) == readers.end()) continue;
      }
      allowed.push_back(key);
    }
  }
  const nlohmann::json* name_schema = nullptr;
  std::regex name_pattern;
  if (schema.contains("propertyNames")) {
    name_schema = &Resolve(schema["propertyNames"]);
    if (name_schema->contains("pattern")) {
      name_pattern = std::regex((*name_schema)["pattern"].get<std::string>(),
                                std::regex::ECMAScript);
    }
  }
  for (const auto& [key, value] : instance.items()) {
    const std::string child = pointer + "/" + EscapePointerToken(key);
    if (const std::string control = ControlCharacter(key); !control.empty()) {
      diags->Error("spec.control-character",
                   Subject(pointer) + ": a key contains the control character " + control,
                   doc.map.Locate(child, /*prefer_key=*/true));
      reported->insert(child);
      continue;
    }
    if (has_properties && schema["properties"].contains(key)) {
      // #48: an option two profiles declare alike is walked in the schema of this target's profile.
      WalkKeys(value, ForProfile(schema["properties"][key], profile), child, doc, yaml11_bools, diags,
               reported, &instance, &schema);
      continue;
    }
    if (closed) {
      std::string where = pointer.empty() ? std::string("at the top level")
                                          : "in " + Subject(pointer);
      std::string suggestion = SuggestClosest(key, allowed);
      std::string hint = IndentationHint(key, instance, schema, pointer, doc, parent_instance, parent_schema);
      if (hint.empty()) {
        hint = !suggestion.empty() ? "did you mean '" + suggestion + "'?" : "allowed fields: " + JoinKeys(allowed);
      }
      // D9: a field an earlier nemoc had under another name says its new one
      // (x-nemoc-renamed: old -> {to, since}).
      if (schema.contains("x-nemoc-renamed") && schema["x-nemoc-renamed"].contains(key)) {
        const auto& renamed = schema["x-nemoc-renamed"][key];
        hint = "renamed to '" + renamed.value("to", "") + "'" +
               (renamed.contains("note") ? ": " + renamed["note"].get<std::string>() : std::string());
      }
      diags->Error("spec.unknown-field", "unknown field '" + ShortKey(key) + "' " + where,
                   doc.map.Locate(child, /*prefer_key=*/true), hint);
      reported->insert(child);
      continue;
    }
    if (name_schema != nullptr) {
      size_t max_length = name_schema->value("maxLength", size_t{1024});
      bool bad = key.size() > max_length ||
                 (name_schema->contains("pattern") &&
                  (key.size() > kMaxStringLength || !std::regex_match(key, name_pattern)));
      if (bad) {
        diags->Error("spec.invalid-key",
                     Subject(pointer) + ": key '" + ShortKey(key) + "' is not valid",
                     doc.map.Locate(child, /*prefer_key=*/true),
                     name_schema->value("description", ""));
        reported->insert(child);
        continue;
      }
      // A closed set of names (clusterHas: the platform components, a
      // --jpath directory's included): a misspelt one would otherwise be a
      // component nemoc installs anyway, silently.
      if (name_schema->contains("enum") && (*name_schema)["enum"].is_array()) {
        std::vector<std::string> names;
        for (const auto& n : (*name_schema)["enum"]) {
          if (n.is_string()) names.push_back(n.get<std::string>());
        }
        if (std::find(names.begin(), names.end(), key) == names.end()) {
          const std::string suggestion = SuggestClosest(key, names);
          diags->Error("spec.unknown-field", "unknown name '" + ShortKey(key) + "' in " + Subject(pointer),
                       doc.map.Locate(child, /*prefer_key=*/true),
                       !suggestion.empty() ? "did you mean '" + suggestion + "'?" : "allowed names: " + JoinKeys(names));
          reported->insert(child);
          continue;
        }
      }
    }
    if (schema.contains("additionalProperties") &&
        schema["additionalProperties"].is_object()) {
      WalkKeys(value, schema["additionalProperties"], child, doc, yaml11_bools,
               diags, reported);
    }
  }
}

std::string InputSchema::IndentationHint(const std::string& key, const nlohmann::json& instance,
                                         const nlohmann::json& schema, const std::string& pointer,
                                         const Document& doc, const nlohmann::json* parent_instance,
                                         const nlohmann::json* parent_schema) const {
  auto takes = [&](const nlohmann::json& object_schema) {
    const nlohmann::json& resolved = Resolve(object_schema);
    return resolved.is_object() && resolved.contains("properties") && resolved["properties"].contains(key);
  };
  const std::string child = pointer + "/" + EscapePointerToken(key);
  const int line = doc.map.Locate(child, /*prefer_key=*/true).line;
  // Dedented: the nearest object member written above it takes the field.
  if (schema.contains("properties") && line > 0) {
    std::string best;
    int best_line = 0;
    for (const auto& [sibling, value] : instance.items()) {
      if (!value.is_object() || value.contains(key) || !schema["properties"].contains(sibling) ||
          !takes(schema["properties"][sibling])) {
        continue;
      }
      const int at = doc.map.Locate(pointer + "/" + EscapePointerToken(sibling), /*prefer_key=*/true).line;
      if (at > 0 && at < line && at > best_line) {
        best = sibling;
        best_line = at;
      }
    }
    if (!best.empty()) {
      return "indent it under '" + ShortKey(best) + "' (line " + std::to_string(best_line) + "): '" + ShortKey(key) +
             "' is a field of " + Subject(pointer + "/" + EscapePointerToken(best));
    }
  }
  // Indented too far: the object it is written in is a member of one that
  // takes the field.
  if (parent_instance != nullptr && parent_schema != nullptr && parent_instance->is_object() &&
      !parent_instance->contains(key) && takes(*parent_schema) && !pointer.empty()) {
    const std::string parent_pointer = nlohmann::json::json_pointer(pointer).parent_pointer().to_string();
    const std::string holder = nlohmann::json::json_pointer(pointer).back();
    return "indent it as far as '" + ShortKey(holder) + "' (line " +
           std::to_string(doc.map.Locate(pointer, /*prefer_key=*/true).line) + "): '" + ShortKey(key) +
           "' is a field of " + Subject(parent_pointer);
  }
  return "";
}

void InputSchema::CheckProfileOptions(const Document& doc, Diagnostics* diags,
                                      std::set<std::string>* reported) const {
  // A profile's option on a target of a profile that does not read it would
  // be ignored. Reported at the key, and the value is not validated further.
  const nlohmann::json::json_pointer targets_ptr("/spec/targets");
  if (!doc.root.contains(targets_ptr) || !doc.root.at(targets_ptr).is_array()) return;
  const auto& targets = doc.root.at(targets_ptr);
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto& target = targets[i];
    if (!target.is_object() || !target.contains("profile") || !target["profile"].is_string()) continue;
    const std::string profile = target["profile"].get<std::string>();
    if (profiles_.count(profile) == 0) continue;
    for (const auto& [field, readers] : option_readers_) {
      if (!target.contains(field) || std::find(readers.begin(), readers.end(), profile) != readers.end()) {
        continue;
      }
      std::string names;
      for (const auto& reader : readers) names += (names.empty() ? "" : ", ") + reader;
      const std::string pointer = "/spec/targets/" + std::to_string(i) + "/" + field;
      if (!reported->insert(pointer).second) continue;
      diags->Error("spec.wrong-profile",
                   "spec.targets[" + std::to_string(i) + "]." + field + " applies to profile" +
                       (readers.size() == 1 ? " " : "s ") + names + ", not " + profile,
                   doc.map.Locate(pointer, /*prefer_key=*/true));
    }
  }
}

bool InputSchema::Validate(const Document& doc,
                           const std::set<std::string>& yaml11_bools,
                           Diagnostics* diags) const {
  const size_t errors_before = diags->error_count();
  std::set<std::string> reported;
  const size_t walked_from = diags->items().size();
  WalkKeys(doc.root, schema_, "", doc, yaml11_bools, diags, &reported);
  CheckProfileOptions(doc, diags, &reported);

  // Validate a copy in which over-long strings are blanked (see kMaxStringLength)
  // and the unknown fields, reported already, are left out: one in an object
  // under oneOf would fail every branch ("set exactly one of") although the
  // object's own fields choose one. Where a misplaced field belongs
  // (mistake 7) is kept, so that its required-field error is not repeated.
  nlohmann::json instance = doc.root;
  std::set<std::string> unknown_fields;
  std::set<std::string> reindented_to;
  for (size_t i = walked_from; i < diags->items().size(); ++i) {
    const Diagnostic& d = diags->items()[i];
    if (d.code != "spec.unknown-field" || d.location.pointer.empty()) continue;
    unknown_fields.insert(d.location.pointer);
    if (std::string to = ReindentedPointer(d.location.pointer, d.hint); !to.empty()) reindented_to.insert(to);
  }
  for (auto it = unknown_fields.rbegin(); it != unknown_fields.rend(); ++it) {
    const nlohmann::json::json_pointer ptr(*it);
    if (!instance.contains(ptr)) continue;
    nlohmann::json& parent = instance.at(ptr.parent_pointer());
    if (parent.is_object()) parent.erase(ptr.back());
  }
  for (const auto& pointer : reported) {
    nlohmann::json::json_pointer ptr(pointer);
    if (instance.contains(ptr) && instance.at(ptr).is_string() &&
        instance.at(ptr).get_ref<const std::string&>().size() > kMaxStringLength) {
      instance.at(ptr) = "";
    }
  }

  valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(instance);
  bool ok = false;
  try {
    ok = validator.validate(compiled_->schema, adapter, &results);
  } catch (const std::exception& e) {
    diags->Error("internal.validator", std::string("schema validation failed: ") + e.what(),
                 {doc.file, 0, 0});
    return false;
  }
  if (ok) return diags->error_count() == errors_before;

  std::set<std::pair<std::string, std::string>> seen;
  std::string deepest_wrapper;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) {
    const std::string pointer = ContextToPointer(error.context);
    const std::string& text = error.description;
    if (StartsWith(text, "Failed to validate against schema associated with") ||
        StartsWith(text, "Failed to validate item #") ||
        StartsWith(text, "Failed to validate against child schema") ||
        StartsWith(text, "Failed to validate against a conditional schema") ||
        StartsWith(text, "Failed to validate against additional properties") ||
        StartsWith(text, "Object contains a property that could not be validated")) {
      if (pointer.size() >= deepest_wrapper.size()) deepest_wrapper = pointer;
      continue;
    }
    // A problem inside something already reported (unknown key, bad key) is noise.
    // Each prefix of the pointer is looked up (E20: a scan of every reported
    // pointer per error was quadratic: 30,000 unknown keys took seconds).
    bool inside_reported = reported.count(pointer) != 0;
    for (size_t slash = pointer.find('/', 1); !inside_reported && slash != std::string::npos;
         slash = pointer.find('/', slash + 1)) {
      inside_reported = reported.count(pointer.substr(0, slash)) != 0;
    }
    if (inside_reported) continue;

    nlohmann::json::json_pointer ptr(pointer);
    const nlohmann::json* value = doc.root.contains(ptr) ? &doc.root.at(ptr) : nullptr;
    const nlohmann::json* sub = SchemaAt(pointer, &doc.root);
    const std::string description = sub ? sub->value("description", "") : "";
    std::string message;
    std::string hint;
    std::string code = "spec.invalid";
    bool at_key = false;
    if (StartsWith(text, "Missing required property") &&
        (RenamedFrom(sub, value, ExtractQuoted(text)) ||
         reindented_to.count(pointer + "/" + EscapePointerToken(ExtractQuoted(text))) != 0)) {
      continue;  // the unknown old name, or the misplaced field, says where this field went
    } else if (StartsWith(text, "Missing required property")) {
      code = "spec.missing-field";
      message = Subject(pointer) + ": missing required field '" + ExtractQuoted(text) + "'";
      at_key = true;
      const std::string field = ExtractQuoted(text);
      const nlohmann::json* missing = SchemaAt(pointer + "/" + EscapePointerToken(field), &doc.root);
      if (missing) hint = missing->value("description", "");
      // The field's own description first (D9: "train: Training file."), then
      // what its type says.
      if (sub && sub->contains("properties") && (*sub)["properties"].contains(field)) {
        const std::string own = (*sub)["properties"][field].value("description", "");
        if (!own.empty() && own != hint) hint = field + ": " + own + (hint.empty() ? "" : " " + hint);
      }
    } else if (StartsWith(text, "Value type not permitted")) {
      code = "spec.wrong-type";
      message = Subject(pointer) + ": expected " + (sub ? SchemaTypeName(*sub) : "another type") +
                ", got " + (value ? std::string(JsonKind(*value)) + " " + Excerpt(*value) : "something else");
      if (yaml11_bools.count(pointer) && sub && sub->contains("type") && (*sub)["type"] == "boolean") {
        const std::string word = value->get<std::string>();
        hint = word + " is a YAML 1.1 boolean; nemoc reads YAML 1.2, where it is a string. "
               "Write true or false.";
      } else if (value && value->is_number() && sub && sub->contains("type") && (*sub)["type"].is_string() &&
                 (*sub)["type"].get<std::string>() == "string" && !sub->contains("enum")) {
        // D8: an unquoted 25.10 is the number 25.1 to YAML.
        const std::string written = WrittenScalar(doc, doc.map.Locate(pointer));
        const std::string text = written.empty() ? value->dump() : written;
        hint = "quote it: \"" + text + "\"" +
               (text != value->dump() ? " (YAML reads " + text + " as the number " + value->dump() + ")" : "");
      }
    } else if (StartsWith(text, "Failed to match against any enum values")) {
      code = "spec.not-allowed";
      std::vector<std::string> options;
      if (sub && sub->contains("enum")) {
        for (const auto& option : (*sub)["enum"]) {
          options.push_back(option.is_string() ? option.get<std::string>() : option.dump());
        }
      }
      message = Subject(pointer) + ": " + (value ? Excerpt(*value) : "value") +
                " is not one of: " + JoinKeys(options);
      if (value && value->is_string()) {
        std::string suggestion = SuggestClosest(value->get<std::string>(), options);
        if (!suggestion.empty()) hint = "did you mean '" + suggestion + "'?";
      }
    } else if (StartsWith(text, "Failed to match regex") ||
               StartsWith(text, "Target should not validate against schema specified in 'not'")) {
      message = Subject(pointer) + ": " + (value ? Excerpt(*value) : "value") + " is not valid";
      hint = description;
    } else if (StartsWith(text, "Expected number")) {
      code = "spec.out-of-range";
      std::string bound;
      if (sub && sub->contains("minimum") && value && value->is_number() &&
          value->get<double>() < (*sub)["minimum"].get<double>()) {
        bound = "at least " + (*sub)["minimum"].dump();
      } else if (sub && sub->contains("exclusiveMinimum") && value && value->is_number() &&
                 value->get<double>() <= (*sub)["exclusiveMinimum"].get<double>()) {
        bound = "greater than " + (*sub)["exclusiveMinimum"].dump();
      } else if (sub && sub->contains("maximum")) {
        bound = "at most " + (*sub)["maximum"].dump();
      } else {
        bound = "within range";
      }
      message = Subject(pointer) + ": " + (value ? Excerpt(*value) : "value") + " must be " + bound;
      hint = description;
    } else if (StartsWith(text, "Object should have no more than") ||
               StartsWith(text, "Object should have no fewer than")) {
      std::vector<std::string> options;
      if (sub && sub->contains("properties")) {
        for (const auto& [key, _] : (*sub)["properties"].items()) options.push_back(key);
      }
      if (sub && sub->value("maxProperties", 0) == 1) {
        message = Subject(pointer) + ": set exactly one of: " + JoinKeys(options);
      } else {
        message = Subject(pointer) + ": " + text;
        if (!options.empty()) hint = "fields: " + JoinKeys(options);
      }
    } else if (StartsWith(text, "Elements at indexes")) {
      message = Subject(pointer) + ": duplicate entries (" + text + ")";
    } else {
      message = Subject(pointer) + ": " + text;
      hint = description;
    }
    if (!seen.insert({pointer, message}).second) continue;
    diags->Error(code, message, doc.map.Locate(pointer, at_key), hint);
  }
  if (diags->error_count() == errors_before) {
    // valijson rejected the document but every message was a wrapper
    // (propertyNames reports none of its own): never drop the verdict.
    diags->Error("spec.invalid", Subject(deepest_wrapper) + ": value is not valid",
                 doc.map.Locate(deepest_wrapper));
  }
  return false;
}

void InputSchema::FillDefaultsAt(nlohmann::json* instance,
                                 const nlohmann::json& raw_schema) const {
  const nlohmann::json& schema = Resolve(raw_schema);
  // A definition that refines another ({"allOf": [{"$ref": ...}], "default": ...})
  // gets the defaults of what it refines.
  if (schema.contains("allOf") && schema["allOf"].is_array()) {
    for (const auto& part : schema["allOf"]) FillDefaultsAt(instance, part);
  }
  if (instance->is_object() && schema.contains("properties")) {
    // #48: an option two profiles declare alike has the defaults of this target's profile's schema.
    const std::string profile = ProfileOf(*instance);
    for (const auto& [key, declared] : schema["properties"].items()) {
      const nlohmann::json& property = ForProfile(declared, profile);
      const nlohmann::json& resolved = Resolve(property);
      if (!instance->contains(key)) {
        if (property.contains("default")) {
          (*instance)[key] = property["default"];
        } else if (resolved.contains("default")) {
          (*instance)[key] = resolved["default"];
        }
      }
      if (instance->contains(key)) FillDefaultsAt(&(*instance)[key], property);
    }
    if (schema.contains("additionalProperties") && schema["additionalProperties"].is_object()) {
      for (auto& [key, value] : instance->items()) {
        if (!schema["properties"].contains(key)) {
          FillDefaultsAt(&value, schema["additionalProperties"]);
        }
      }
    }
  } else if (instance->is_array() && schema.contains("items") && schema["items"].is_object()) {
    for (auto& item : *instance) FillDefaultsAt(&item, schema["items"]);
  }
}

void InputSchema::FillDefaults(nlohmann::json* instance) const {
  FillDefaultsAt(instance, schema_);
}

bool LoadDescription(const std::string& file, const InputSchema* contract, Document* doc, Diagnostics* diags) {
  std::set<std::string> yaml11;
  if (!LoadSpecFile(file, doc, diags, {}, &yaml11)) return false;
  return contract == nullptr || contract->Validate(*doc, yaml11, diags);
}

}  // namespace nemoc
