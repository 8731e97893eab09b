#include "kube_schemas.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "valijson.h"

namespace nemoc {

namespace {

using nlohmann::json;

constexpr size_t kMaxMessagesPerDocument = 10;
constexpr const char* kSchemaCode = "output.schema";
constexpr const char* kUnknownKindCode = "output.unknown-kind";
constexpr const char* kBundleCode = "output.schema-bundle";

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return false;
  *out = std::move(ss).str();
  return true;
}

// ---------------------------------------------------------------------------
// Schema loading. Most of a schema file is "description" text, which
// validators ignore. A quick pass over the raw text removes those keywords
// (and all whitespace) before nlohmann parses the much smaller rest: parsing
// the DOM is what costs, and a parser callback would still build every string.

// What a JSON container inside a schema document is.
enum class NodeKind {
  kSchema,   // a schema object: its "description" key is an annotation
  kNames,    // "properties" and friends: keys are property names
  kSchemas,  // "oneOf"/"anyOf"/"allOf"/tuple "items": elements are schemas
  kLiteral,  // "enum", "default", "x-kubernetes-*", ...: data, kept as is
};

bool IsNamesKeyword(std::string_view k) {
  return k == "properties" || k == "patternProperties" ||
         k == "definitions" || k == "dependencies";
}

bool IsSchemaListKeyword(std::string_view k) {
  return k == "oneOf" || k == "anyOf" || k == "allOf" || k == "items";
}

bool IsSchemaValuedKeyword(std::string_view k) {
  return k == "items" || k == "additionalProperties" ||
         k == "additionalItems" || k == "not";
}

// Kind of a container that is the value of `key` (or an element, for arrays)
// inside a container of kind `parent`.
NodeKind ChildKind(NodeKind parent, std::string_view key, bool is_array) {
  switch (parent) {
    case NodeKind::kLiteral:
      return NodeKind::kLiteral;
    case NodeKind::kNames:    // the value of a property name is a schema
    case NodeKind::kSchemas:  // so is an element of oneOf/anyOf/allOf
      return is_array ? NodeKind::kLiteral : NodeKind::kSchema;
    case NodeKind::kSchema:
      if (is_array) {
        return IsSchemaListKeyword(key) ? NodeKind::kSchemas : NodeKind::kLiteral;
      }
      if (IsNamesKeyword(key)) return NodeKind::kNames;
      if (IsSchemaValuedKeyword(key)) return NodeKind::kSchema;
      // enum, default, example(s), const, x-kubernetes-*, unknown keywords.
      return NodeKind::kLiteral;
  }
  return NodeKind::kLiteral;
}

// Copies the JSON text `in` to `out` without whitespace and without
// "description" members whose value is a string in schema objects. Property
// definitions named "description" (their value is an object) and data inside
// enum/default/x-kubernetes-* values are kept. Returns false when the text is
// not well-formed JSON (the caller then lets nlohmann report the error).
bool StripDescriptions(std::string_view in, std::string* out) {
  struct Frame {
    NodeKind kind;
    bool is_object;
    bool has_member = false;
    std::string_view last_key;
  };
  std::vector<Frame> stack;
  stack.reserve(64);
  out->clear();
  out->reserve(in.size() / 2);
  const size_t n = in.size();
  size_t i = 0;
  auto skip_ws = [&] {
    while (i < n && (in[i] == ' ' || in[i] == '\n' || in[i] == '\r' || in[i] == '\t')) ++i;
  };
  // in[i] is '"'. Advances i past the closing quote; false if unterminated.
  // (memchr: description strings are long.)
  auto scan_string = [&]() -> bool {
    size_t j = i + 1;
    while (j < n) {
      const void* q = std::memchr(in.data() + j, '"', n - j);
      if (q == nullptr) return false;
      const size_t k = static_cast<size_t>(static_cast<const char*>(q) - in.data());
      size_t backslashes = 0;
      while (k - backslashes - 1 > i && in[k - backslashes - 1] == '\\') ++backslashes;
      if (backslashes % 2 == 0) {
        i = k + 1;
        return true;
      }
      j = k + 1;
    }
    return false;
  };
  auto open = [&](bool is_object) {
    NodeKind kind = stack.empty()
                        ? (is_object ? NodeKind::kSchema : NodeKind::kLiteral)
                        : ChildKind(stack.back().kind, stack.back().last_key, !is_object);
    stack.push_back({kind, is_object, false, {}});
    out->push_back(is_object ? '{' : '[');
    ++i;
  };
  enum class State { kValue, kAfterValue, kMember, kFirstMember, kFirstElement };
  State state = State::kValue;
  while (true) {
    skip_ws();
    switch (state) {
      case State::kValue: {
        if (i >= n) return false;
        const char c = in[i];
        if (c == '{') {
          open(true);
          state = State::kFirstMember;
        } else if (c == '[') {
          open(false);
          state = State::kFirstElement;
        } else if (c == '"') {
          const size_t start = i;
          if (!scan_string()) return false;
          out->append(in.substr(start, i - start));
          state = State::kAfterValue;
        } else {
          const size_t start = i;
          while (i < n && in[i] != ',' && in[i] != '}' && in[i] != ']' &&
                 in[i] != ' ' && in[i] != '\n' && in[i] != '\r' && in[i] != '\t') {
            ++i;
          }
          if (i == start) return false;
          out->append(in.substr(start, i - start));
          state = State::kAfterValue;
        }
        break;
      }
      case State::kFirstElement:
        if (i < n && in[i] == ']') {
          stack.pop_back();
          out->push_back(']');
          ++i;
          state = State::kAfterValue;
        } else {
          state = State::kValue;
        }
        break;
      case State::kFirstMember:
        if (i < n && in[i] == '}') {
          stack.pop_back();
          out->push_back('}');
          ++i;
          state = State::kAfterValue;
          break;
        }
        [[fallthrough]];
      case State::kMember: {
        if (i >= n || in[i] != '"') return false;
        const size_t key_start = i;
        if (!scan_string()) return false;
        const size_t key_end = i;
        const std::string_view key = in.substr(key_start + 1, key_end - key_start - 2);
        skip_ws();
        if (i >= n || in[i] != ':') return false;
        ++i;
        skip_ws();
        Frame& f = stack.back();
        f.last_key = key;
        if (f.kind == NodeKind::kSchema && key == "description" && i < n &&
            in[i] == '"') {
          if (!scan_string()) return false;  // dropped
          state = State::kAfterValue;
          break;
        }
        if (f.has_member) out->push_back(',');
        f.has_member = true;
        out->append(in.substr(key_start, key_end - key_start));
        out->push_back(':');
        state = State::kValue;
        break;
      }
      case State::kAfterValue: {
        if (stack.empty()) return i == n;
        if (i >= n) return false;
        const char c = in[i++];
        Frame& f = stack.back();
        if (c == ',') {
          if (f.is_object) {
            state = State::kMember;  // the separator is written with the member
          } else {
            out->push_back(',');
            state = State::kValue;
          }
        } else if (c == (f.is_object ? '}' : ']')) {
          stack.pop_back();
          out->push_back(c);
        } else {
          return false;
        }
        break;
      }
    }
  }
}

// Parses a schema file without its "description" annotations. Returns a
// discarded value on a syntax error.
json ParseSchemaText(const std::string& text) {
  std::string stripped;
  if (StripDescriptions(text, &stripped)) {
    json doc = json::parse(stripped, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_discarded()) return doc;
  }
  return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// ---------------------------------------------------------------------------
// Error rendering helpers.

bool IsSimpleKey(const std::string& k) {
  if (k.empty()) return false;
  bool all_digits = true;
  for (char c : k) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
    if (c < '0' || c > '9') all_digits = false;
  }
  return !all_digits;
}

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
}

// One step of a document path: an object key or an array index.
struct Step {
  bool is_index = false;
  size_t index = 0;
  std::string key;
};

// Turns valijson's context ("<root>", "[spec]", "[0]", ...) into steps,
// resolving key-vs-index by walking the document.
std::vector<Step> ContextToSteps(const std::vector<std::string>& context,
                                 const json& doc) {
  std::vector<Step> steps;
  const json* node = &doc;
  for (const std::string& raw : context) {
    if (raw == "<root>") continue;
    std::string c = raw;
    if (c.size() >= 2 && c.front() == '[' && c.back() == ']') {
      c = c.substr(1, c.size() - 2);
    }
    Step s;
    if (node != nullptr && node->is_array() && AllDigits(c)) {
      s.is_index = true;
      s.index = static_cast<size_t>(std::strtoull(c.c_str(), nullptr, 10));
      node = s.index < node->size() ? &(*node)[s.index] : nullptr;
    } else if (node != nullptr && node->is_object()) {
      s.key = c;
      auto it = node->find(c);
      node = it != node->end() ? &*it : nullptr;
    } else {
      // Lost track of the document: guess.
      s.is_index = AllDigits(c);
      if (s.is_index) {
        s.index = static_cast<size_t>(std::strtoull(c.c_str(), nullptr, 10));
      } else {
        s.key = c;
      }
      node = nullptr;
    }
    steps.push_back(std::move(s));
  }
  return steps;
}

std::string RenderSteps(const std::vector<Step>& steps) {
  std::string out;
  for (const Step& s : steps) {
    if (s.is_index) {
      out += "[" + std::to_string(s.index) + "]";
    } else if (IsSimpleKey(s.key)) {
      if (!out.empty()) out += ".";
      out += s.key;
    } else {
      out += "[" + json(s.key).dump() + "]";
    }
  }
  return out;
}

const json* DocAt(const json& doc, const std::vector<Step>& steps) {
  const json* node = &doc;
  for (const Step& s : steps) {
    if (s.is_index) {
      if (!node->is_array() || s.index >= node->size()) return nullptr;
      node = &(*node)[s.index];
    } else {
      if (!node->is_object()) return nullptr;
      auto it = node->find(s.key);
      if (it == node->end()) return nullptr;
      node = &*it;
    }
  }
  return node;
}

std::string TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    default: return "value";
  }
}

std::string Describe(const json& v) {
  std::string t = TypeName(v);
  if (v.is_object() || v.is_array()) return t;
  std::string text = v.dump();
  constexpr size_t kMax = 60;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return t + " " + text;
}

// Schemas that apply at `steps` below `root`, following properties,
// additionalProperties, items and the oneOf/anyOf/allOf branches.
void ExpandBranches(const json* s, std::vector<const json*>* out, int depth = 0) {
  if (s == nullptr || !s->is_object() || depth > 8) return;
  out->push_back(s);
  for (const char* kw : {"oneOf", "anyOf", "allOf"}) {
    auto it = s->find(kw);
    if (it == s->end() || !it->is_array()) continue;
    for (const json& b : *it) ExpandBranches(&b, out, depth + 1);
  }
}

std::vector<const json*> SchemasAt(const json& root, const std::vector<Step>& steps) {
  std::vector<const json*> current;
  ExpandBranches(&root, &current);
  for (const Step& step : steps) {
    std::vector<const json*> next;
    for (const json* s : current) {
      if (step.is_index) {
        auto it = s->find("items");
        if (it != s->end() && it->is_object()) ExpandBranches(&*it, &next);
        continue;
      }
      auto props = s->find("properties");
      if (props != s->end() && props->is_object()) {
        auto p = props->find(step.key);
        if (p != props->end()) {
          ExpandBranches(&*p, &next);
          continue;
        }
      }
      auto ap = s->find("additionalProperties");
      if (ap != s->end() && ap->is_object()) ExpandBranches(&*ap, &next);
    }
    current = std::move(next);
    if (current.empty()) break;
  }
  return current;
}

std::string JoinOr(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

// "integer", "string or number", ... (null left out unless it is all there is).
std::string ExpectedTypes(const std::vector<const json*>& schemas) {
  std::vector<std::string> types;
  auto add = [&types](const std::string& t) {
    if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
  };
  for (const json* s : schemas) {
    auto it = s->find("type");
    if (it == s->end()) continue;
    if (it->is_string()) add(it->get<std::string>());
    if (it->is_array()) {
      for (const json& t : *it) {
        if (t.is_string()) add(t.get<std::string>());
      }
    }
  }
  if (types.size() > 1) {
    types.erase(std::remove(types.begin(), types.end(), "null"), types.end());
  }
  return JoinOr(types);
}

std::string ExpectedEnum(const std::vector<const json*>& schemas) {
  std::vector<std::string> values;
  for (const json* s : schemas) {
    auto it = s->find("enum");
    if (it == s->end() || !it->is_array()) continue;
    for (const json& v : *it) {
      if (v.is_null()) continue;
      std::string d = v.dump();
      if (std::find(values.begin(), values.end(), d) == values.end()) {
        values.push_back(d);
      }
    }
  }
  constexpr size_t kMaxShown = 8;
  if (values.size() > kMaxShown) {
    values.resize(kMaxShown);
    values.push_back("...");
  }
  return JoinOr(values);
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string Suggest(const std::string& word, const std::set<std::string>& known) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& k : known) {
    size_t d = EditDistance(word, k);
    if (d < best_d && d < word.size() && d < k.size()) {
      best_d = d;
      best = k;
    }
  }
  return best;
}

// A message ready to be reported.
struct Finding {
  std::string path;
  std::string message;
  std::string hint;
};

bool IsWrapper(const std::string& m) {
  static const char* const kPrefixes[] = {
      "Failed to validate against schema associated with property name",
      "Failed to validate against schema associated with pattern",
      "Failed to validate item #",
      "Failed to validate against additional properties schema",
      "Failed to validate against any child schemas allowed by oneOf",
      "Failed to validate against any schemas allowed by anyOf",
      "Failed to validate against child schema #",
      "Failed to validate against dependent schema",
      "Failed to validate against a conditional schema",
      "Cannot validate item #",
  };
  for (const char* p : kPrefixes) {
    if (m.rfind(p, 0) == 0) return true;
  }
  return false;
}

constexpr const char* kTypeMessage = "Value type not permitted by 'type' constraint.";
constexpr const char* kEnumMessage = "Failed to match against any enum values.";
constexpr const char* kUnknownPrefix =
    "Object contains a property that could not be validated using "
    "'properties' or 'additionalProperties' constraints: '";

// Turns raw valijson errors into at most a handful of readable findings.
std::vector<Finding> Explain(const valijson::ValidationResults& results,
                             const json& doc, const json& schema) {
  struct Raw {
    std::vector<Step> steps;
    std::string path;
    std::string message;
    bool wrapper = false;
  };
  std::vector<Raw> raws;
  for (const auto& e : results) {
    Raw r;
    r.steps = ContextToSteps(e.context, doc);
    r.path = RenderSteps(r.steps);
    r.message = e.description;
    r.wrapper = IsWrapper(r.message);
    raws.push_back(std::move(r));
  }
  if (raws.empty()) return {};

  // Keep the specific errors. Drop the generic "Failed to validate ..."
  // wrappers that have a specific error at or below their path (in practice
  // all of them), and exact duplicates (one per rejected oneOf branch).
  std::set<std::string> explained;  // paths at or above a specific error
  for (const Raw& r : raws) {
    if (r.wrapper) continue;
    std::vector<Step> prefix;
    explained.insert(RenderSteps(prefix));
    for (const Step& step : r.steps) {
      prefix.push_back(step);
      explained.insert(RenderSteps(prefix));
    }
  }
  std::vector<const Raw*> kept;
  std::set<std::pair<std::string, std::string>> seen;
  for (const Raw& r : raws) {
    if (r.wrapper && explained.count(r.path) > 0) continue;
    if (!seen.insert({r.path, r.message}).second) continue;
    kept.push_back(&r);
  }
  // A type mismatch next to a more specific error at the same path comes from
  // a rejected oneOf/anyOf branch (usually the "null" one): drop it.
  std::set<std::string> paths_with_specific;
  for (const Raw* r : kept) {
    if (r->message != kTypeMessage) paths_with_specific.insert(r->path);
  }
  kept.erase(std::remove_if(kept.begin(), kept.end(),
                            [&](const Raw* r) {
                              return r->message == kTypeMessage &&
                                     paths_with_specific.count(r->path) > 0;
                            }),
             kept.end());

  std::vector<Finding> out;
  std::set<std::string> unknown_done;  // paths whose unknown fields are listed
  for (const Raw* r : kept) {
    const json* value = DocAt(doc, r->steps);
    if (r->message == kTypeMessage) {
      std::string expected = ExpectedTypes(SchemasAt(schema, r->steps));
      std::string msg = expected.empty() ? "value type not permitted by the schema"
                                         : "expected " + expected;
      if (value != nullptr) msg += ", got " + Describe(*value);
      out.push_back({r->path, msg, {}});
    } else if (r->message == kEnumMessage) {
      std::string allowed = ExpectedEnum(SchemasAt(schema, r->steps));
      std::string msg = "value not allowed";
      if (value != nullptr) msg += ": " + Describe(*value);
      if (!allowed.empty()) msg += "; expected " + allowed;
      out.push_back({r->path, msg, {}});
    } else if (r->message.rfind(kUnknownPrefix, 0) == 0) {
      if (!unknown_done.insert(r->path).second) continue;
      // valijson names only the first unknown field; list all of them when
      // the schema at this path is closed and known.
      std::string first = r->message.substr(std::char_traits<char>::length(kUnknownPrefix));
      if (first.size() >= 2 && first.compare(first.size() - 2, 2, "'.") == 0) {
        first.resize(first.size() - 2);
      }
      std::set<std::string> known;
      bool closed = false;
      for (const json* s : SchemasAt(schema, r->steps)) {
        auto props = s->find("properties");
        if (props == s->end() || !props->is_object()) continue;
        auto ap = s->find("additionalProperties");
        if (ap == s->end() || !ap->is_boolean() || ap->get<bool>()) continue;
        closed = true;
        for (auto it = props->begin(); it != props->end(); ++it) known.insert(it.key());
      }
      std::vector<std::string> unknown;
      if (closed && value != nullptr && value->is_object()) {
        for (auto it = value->begin(); it != value->end(); ++it) {
          if (known.count(it.key()) == 0) unknown.push_back(it.key());
        }
      }
      if (std::find(unknown.begin(), unknown.end(), first) == unknown.end()) {
        unknown.insert(unknown.begin(), first);
      }
      for (const std::string& u : unknown) {
        std::string hint;
        std::string near = Suggest(u, known);
        if (!near.empty()) hint = "did you mean \"" + near + "\"?";
        out.push_back({r->path, "unknown field " + json(u).dump(), hint});
      }
    } else {
      out.push_back({r->path, r->message, {}});
    }
  }
  return out;
}

std::string DocLabel(const json& object) {
  std::string kind = "object";
  if (object.is_object()) {
    auto k = object.find("kind");
    if (k != object.end() && k->is_string() && !k->get<std::string>().empty()) {
      kind = k->get<std::string>();
    }
    auto md = object.find("metadata");
    if (md != object.end() && md->is_object()) {
      auto n = md->find("name");
      if (n != md->end() && n->is_string() && !n->get<std::string>().empty()) {
        return kind + " " + n->get<std::string>();
      }
      auto g = md->find("generateName");
      if (g != md->end() && g->is_string() && !g->get<std::string>().empty()) {
        return kind + " " + g->get<std::string>() + "*";
      }
    }
  }
  return kind;
}

}  // namespace

// ---------------------------------------------------------------------------

struct KubeSchemas::Impl {
  // One schema file of the bundle.
  struct Entry {
    std::string api_version;
    std::string kind;
    std::string dir;  // the bundle it comes from
    std::string file;
    bool namespaced = true;

    std::mutex mu;  // guards everything below
    bool attempted = false;
    json schema_json;  // description-free schema, kept to explain errors
    std::unique_ptr<valijson::Schema> schema;
    std::string error;  // why loading failed
  };

  std::string dir;
  std::vector<std::string> added;  // AddBundle's directories (a --jpath root's kube-schemas/)
  std::map<std::string, std::unique_ptr<Entry>> by_file;  // bundle dir + "/" + file
  std::map<std::pair<std::string, std::string>, Entry*> by_gvk;
  std::map<std::string, std::vector<std::string>> versions_by_kind;
  std::atomic<size_t> loaded{0};

  // Returns the compiled schema, loading it on first use; nullptr on failure
  // (*error says why). The returned pointers stay valid for Impl's lifetime.
  const valijson::Schema* Load(Entry* e, const json** schema_json,
                               std::string* error) {
    std::lock_guard<std::mutex> lock(e->mu);
    if (!e->attempted) {
      e->attempted = true;
      LoadLocked(e);
      loaded.fetch_add(1, std::memory_order_relaxed);
    }
    if (!e->schema) {
      *error = e->error;
      return nullptr;
    }
    *schema_json = &e->schema_json;
    return e->schema.get();
  }

  // Reads bundle directory `bundle`'s index.json into the maps above
  // (Open's bundle, then each AddBundle's).
  bool AddIndex(const std::string& bundle, std::string* err);

  void LoadLocked(Entry* e) {
    const std::string path = e->dir + "/" + e->file;
    std::string text;
    if (!ReadFile(path, &text)) {
      e->error = "cannot read schema file " + path;
      return;
    }
    json doc = ParseSchemaText(text);
    if (doc.is_discarded() || !doc.is_object()) {
      e->error = "schema file " + path + " is not a JSON object";
      return;
    }
    auto schema = std::make_unique<valijson::Schema>();
    try {
      valijson::SchemaParser parser(valijson::SchemaParser::kDraft4);
      valijson::adapters::NlohmannJsonAdapter adapter(doc);
      parser.populateSchema(adapter, *schema);
    } catch (const std::exception& ex) {
      e->error = "cannot compile schema file " + path + ": " + ex.what();
      return;
    }
    e->schema_json = std::move(doc);
    e->schema = std::move(schema);
  }

  bool ValidateOne(const json& object, const std::string& file,
                   Diagnostics* diags, int list_depth);
};

KubeSchemas::KubeSchemas(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KubeSchemas::~KubeSchemas() = default;

std::unique_ptr<KubeSchemas> KubeSchemas::Open(const std::string& dir,
                                               std::string* err) {
  auto fail = [err](std::string msg) -> std::unique_ptr<KubeSchemas> {
    if (err != nullptr) *err = std::move(msg);
    return nullptr;
  };
  if (dir.empty()) return fail("no kube-schemas directory given");
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  std::string why;
  if (!impl->AddIndex(dir, &why)) return fail(why);
  return std::unique_ptr<KubeSchemas>(new KubeSchemas(std::move(impl)));
}

bool KubeSchemas::AddBundle(const std::string& dir, std::string* err) {
  if (!impl_->AddIndex(dir, err)) return false;
  impl_->added.push_back(dir);
  return true;
}

bool KubeSchemas::Impl::AddIndex(const std::string& bundle, std::string* err) {
  auto fail = [err](std::string msg) {
    if (err != nullptr) *err = std::move(msg);
    return false;
  };
  const std::string index_path = bundle + "/index.json";
  std::string text;
  if (!ReadFile(index_path, &text)) {
    return fail("cannot read " + index_path +
                " (is it a kube-schemas bundle directory?)");
  }
  json index = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded()) return fail(index_path + ": malformed JSON");
  if (!index.is_object() || !index.contains("schemas") ||
      !index["schemas"].is_array()) {
    return fail(index_path + ": expected an object with a \"schemas\" array");
  }
  size_t i = 0;
  for (const json& s : index["schemas"]) {
    const std::string where = index_path + ": schemas[" + std::to_string(i++) + "]";
    if (!s.is_object()) return fail(where + " is not an object");
    for (const char* field : {"apiVersion", "kind", "file", "scope"}) {
      auto it = s.find(field);
      if (it == s.end() || !it->is_string() || it->get<std::string>().empty()) {
        return fail(where + ": missing string \"" + field + "\"");
      }
    }
    const std::string scope = s["scope"].get<std::string>();
    if (scope != "Namespaced" && scope != "Cluster") {
      return fail(where + ": scope must be \"Namespaced\" or \"Cluster\", not \"" +
                  scope + "\"");
    }
    const std::string file = s["file"].get<std::string>();
    if (file.front() == '/' || file.find("..") != std::string::npos) {
      return fail(where + ": file \"" + file + "\" must be relative to the bundle");
    }
    auto key = std::make_pair(s["apiVersion"].get<std::string>(),
                              s["kind"].get<std::string>());
    auto known = by_gvk.find(key);
    if (known != by_gvk.end()) {
      return fail(where + ": " + (known->second->dir == bundle ? "duplicate entry for "
                                                             : "the bundle " + known->second->dir + " already has ") +
                  key.first + " " + key.second);
    }
    std::unique_ptr<Entry>& e = by_file[bundle + "/" + file];
    if (!e) {
      e = std::make_unique<Entry>();
      e->api_version = key.first;
      e->kind = key.second;
      e->dir = bundle;
      e->file = file;
      e->namespaced = scope == "Namespaced";
    }
    by_gvk[key] = e.get();
    versions_by_kind[key.second].push_back(key.first);
  }
  return true;
}

bool KubeSchemas::Validate(const nlohmann::json& object, const std::string& file,
                           Diagnostics* diags) {
  return impl_->ValidateOne(object, file, diags, 0);
}

bool KubeSchemas::Impl::ValidateOne(const json& object, const std::string& file,
                                    Diagnostics* diags, int list_depth) {
  Diagnostics local;
  Diagnostics* out = diags != nullptr ? diags : &local;
  const Location loc{file, 0, 0};
  const std::string label = DocLabel(object);

  if (!object.is_object()) {
    out->Error(kSchemaCode, "document is " + TypeName(object) +
                                ", expected a Kubernetes object", loc);
    return false;
  }
  auto av = object.find("apiVersion");
  auto kd = object.find("kind");
  const bool has_av = av != object.end() && av->is_string() &&
                      !av->get<std::string>().empty();
  const bool has_kind = kd != object.end() && kd->is_string() &&
                        !kd->get<std::string>().empty();
  if (!has_av || !has_kind) {
    out->Error(kUnknownKindCode,
               label + ": object has no " +
                   (!has_av && !has_kind ? "apiVersion and kind"
                    : !has_av            ? "apiVersion"
                                         : "kind") +
                   " string; cannot check it against a schema",
               loc);
    return false;
  }
  const std::string api_version = av->get<std::string>();
  const std::string kind = kd->get<std::string>();

  if (api_version == "v1" && kind == "List") {
    auto items = object.find("items");
    if (items == object.end() || !items->is_array()) {
      out->Error(kSchemaCode, label + ": a List needs an \"items\" array", loc);
      return false;
    }
    if (list_depth >= 4) {
      out->Error(kSchemaCode, label + ": Lists nested too deeply", loc);
      return false;
    }
    bool ok = true;
    for (const json& item : *items) {
      ok = ValidateOne(item, file, out, list_depth + 1) && ok;
    }
    return ok;
  }

  auto it = by_gvk.find({api_version, kind});
  if (it == by_gvk.end()) {
    std::string hint;
    auto versions = versions_by_kind.find(kind);
    if (versions != versions_by_kind.end()) {
      std::vector<std::string> quoted;
      for (const std::string& v : versions->second) quoted.push_back("\"" + v + "\"");
      hint = "kind " + kind + " is known with apiVersion " + JoinOr(quoted);
    } else {
      for (const auto& [k, vs] : versions_by_kind) {
        if (k.size() == kind.size() &&
            std::equal(k.begin(), k.end(), kind.begin(), [](char a, char b) {
              return std::tolower(static_cast<unsigned char>(a)) ==
                     std::tolower(static_cast<unsigned char>(b));
            })) {
          hint = "did you mean kind \"" + k + "\"?";
          break;
        }
      }
    }
    out->Error(kUnknownKindCode,
               label + ": no schema for apiVersion \"" + api_version +
                   "\", kind \"" + kind + "\" in the kube-schemas bundle " + dir +
                   (added.empty() ? std::string() : " nor in " + JoinOr(added)),
               loc, hint);
    return false;
  }

  const json* schema_json = nullptr;
  std::string load_error;
  const valijson::Schema* schema = Load(it->second, &schema_json, &load_error);
  if (schema == nullptr) {
    out->Error(kBundleCode, label + ": " + load_error, loc);
    return false;
  }

  valijson::ValidationResults results;
  bool valid = false;
  try {
    // A Validator caches compiled regexes and is not thread-safe: one per thread.
    thread_local valijson::Validator validator(valijson::Validator::kStrongTypes);
    valijson::adapters::NlohmannJsonAdapter target(object);
    valid = validator.validate(*schema, target, &results);
  } catch (const std::exception& ex) {
    out->Error(kSchemaCode,
               label + ": schema validation failed internally: " + ex.what(), loc);
    return false;
  }
  if (valid) return true;

  std::vector<Finding> findings = Explain(results, object, *schema_json);
  if (findings.empty()) {
    findings.push_back({"", "does not match its schema", {}});
  }
  const size_t shown = std::min(findings.size(), kMaxMessagesPerDocument);
  for (size_t i = 0; i < shown; ++i) {
    const Finding& f = findings[i];
    std::string msg = label + ": ";
    if (!f.path.empty()) msg += f.path + ": ";
    msg += f.message;
    out->Error(kSchemaCode, std::move(msg), loc, f.hint);
  }
  if (findings.size() > shown) {
    out->Add({Severity::kNote, kSchemaCode,
              label + ": " + std::to_string(findings.size() - shown) +
                  " more schema error(s) not shown",
              loc, {}});
  }
  return false;
}

std::optional<bool> KubeSchemas::IsNamespaced(const std::string& api_version,
                                              const std::string& kind) const {
  auto it = impl_->by_gvk.find({api_version, kind});
  if (it == impl_->by_gvk.end()) return std::nullopt;
  return it->second->namespaced;
}

std::string KubeSchemas::SchemaFile(const std::string& api_version,
                                    const std::string& kind) const {
  auto it = impl_->by_gvk.find({api_version, kind});
  return it == impl_->by_gvk.end() ? "" : it->second->dir + "/" + it->second->file;
}

const std::string& KubeSchemas::dir() const { return impl_->dir; }

size_t KubeSchemas::loaded_count() const {
  return impl_->loaded.load(std::memory_order_relaxed);
}

std::string DefaultKubeSchemasDir() {
  const char* env = std::getenv("NEMOC_KUBE_SCHEMAS");
  return env != nullptr ? std::string(env) : std::string();
}

}  // namespace nemoc
