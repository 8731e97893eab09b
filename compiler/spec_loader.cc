#include "spec_loader.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nemoc {
namespace {

using nlohmann::json;

// Errors reported while walking one document before the loader gives up.
constexpr size_t kMaxWalkErrors = 100;
// Aliases reported one by one; the rest are summarised in a single note.
constexpr size_t kMaxAliasErrors = 5;

constexpr std::string_view kCoreTagPrefix = "tag:yaml.org,2002:";

// Thrown from inside the event handler to stop yaml-cpp's parser; never
// escapes this file.
struct AbortParse {};

SourcePos ToPos(const YAML::Mark& m) {
  if (m.is_null() || m.line < 0 || m.column < 0) return {0, 0};
  return {m.line + 1, m.column + 1};
}

Location At(const std::string& file, SourcePos pos) {
  return {file, pos.line, pos.column};
}

SourcePos PosOfOffsetIn(const std::string& text, size_t offset) {
  SourcePos pos{1, 1};
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      line_start = i + 1;
    }
  }
  pos.column = static_cast<int>(offset - line_start) + 1;
  return pos;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsOctDigit(char c) { return c >= '0' && c <= '7'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

template <typename Pred>
bool AllOf(std::string_view s, Pred pred) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}

// Cuts `s` to at most `max` bytes without splitting a UTF-8 sequence.
std::string Truncated(const std::string& s, size_t max = 60) {
  if (s.size() <= max) return s;
  size_t cut = max - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

// `s` as a double-quoted string for messages.
std::string Quoted(const std::string& s) {
  return json(Truncated(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

// "tag:yaml.org,2002:int" -> "!!int".
std::string DisplayTag(const std::string& tag) {
  if (tag.compare(0, kCoreTagPrefix.size(), kCoreTagPrefix) == 0) {
    return "!!" + tag.substr(kCoreTagPrefix.size());
  }
  if (!tag.empty() && tag[0] != '!') return "!<" + tag + ">";
  return tag;
}

// ---------------------------------------------------------------------------
// Scalars: the YAML 1.2 core schema.

enum class Kind { kNull, kBool, kInt, kFloat, kString, kNotFinite };

const char* Describe(Kind k) {
  switch (k) {
    case Kind::kNull: return "null";
    case Kind::kBool: return "a boolean";
    case Kind::kInt: return "an integer";
    case Kind::kFloat: return "a number";
    case Kind::kString: return "a string";
    case Kind::kNotFinite: return "a number";
  }
  return "a value";
}

struct Typed {
  Kind kind = Kind::kString;
  json value;
  bool yaml11_bool = false;
  // Set when the scalar cannot be loaded (value is then null).
  std::string error_code;
  std::string error_message;
  std::string error_hint;
};

bool IsCoreNull(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

bool IsCoreTrue(std::string_view s) {
  return s == "true" || s == "True" || s == "TRUE";
}

bool IsCoreFalse(std::string_view s) {
  return s == "false" || s == "False" || s == "FALSE";
}

bool IsDecimalInt(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  return AllOf(s, IsDigit);
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsCoreFloat(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
  size_t int_digits = 0;
  while (i < n && IsDigit(s[i])) ++i, ++int_digits;
  if (int_digits == 0) {
    if (i >= n || s[i] != '.') return false;
    ++i;
    size_t frac_digits = 0;
    while (i < n && IsDigit(s[i])) ++i, ++frac_digits;
    if (frac_digits == 0) return false;
  } else if (i < n && s[i] == '.') {
    ++i;
    while (i < n && IsDigit(s[i])) ++i;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < n && IsDigit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == n;
}

bool IsCoreInf(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  return s == ".inf" || s == ".Inf" || s == ".INF";
}

bool IsCoreNan(std::string_view s) {
  return s == ".nan" || s == ".NaN" || s == ".NAN";
}

// Decimal exponent of the leading significant digit of an unsigned decimal
// float literal ("1234.5" -> 3, "0.001e2" -> -1). Only called after
// from_chars reported out_of_range, so the literal is nonzero.
long long DecimalMagnitude(std::string_view s) {
  size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  long long exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view ex = s.substr(e + 1);
    bool neg = false;
    if (!ex.empty() && (ex[0] == '+' || ex[0] == '-')) {
      neg = ex[0] == '-';
      ex.remove_prefix(1);
    }
    for (char c : ex) {
      exponent = exponent * 10 + (c - '0');
      if (exponent > 1000000000LL) break;  // saturate: far outside double range
    }
    if (neg) exponent = -exponent;
  }
  size_t point = mantissa.find('.');
  if (point == std::string_view::npos) point = mantissa.size();
  size_t first = mantissa.find_first_of("123456789");
  if (first == std::string_view::npos) return std::numeric_limits<long long>::min();
  long long lead = first < point ? static_cast<long long>(point - first - 1)
                                 : -static_cast<long long>(first - point);
  return lead + exponent;
}

// Parses a literal matching IsCoreFloat (or IsDecimalInt). False when the
// value does not fit in a double (it would be infinite).
bool ParseDecimalDouble(std::string_view s, double* out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v,
                           std::chars_format::general);
  if (r.ec == std::errc() && r.ptr == s.data() + s.size()) {
    if (!std::isfinite(v)) return false;
    *out = neg ? -v : v;
    return true;
  }
  if (r.ec == std::errc::result_out_of_range && DecimalMagnitude(s) < 0) {
    *out = neg ? -0.0 : 0.0;  // underflow: rounds to zero
    return true;
  }
  return false;
}

Typed NotFinite(const std::string& text) {
  Typed t;
  t.kind = Kind::kNotFinite;
  t.value = nullptr;
  t.error_code = "yaml.not-finite";
  t.error_message = Quoted(text) +
                    " is not a finite number; JSON and Kubernetes cannot "
                    "represent infinities, NaN or numbers this large";
  t.error_hint = "quote it (" + Quoted(text) + ") if you mean the text";
  return t;
}

Typed Integer(const std::string& text) {
  Typed t;
  t.kind = Kind::kInt;
  std::string_view s = text;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
    base = s[1] == 'o' ? 8 : 16;
    s.remove_prefix(2);
  }
  if (base == 10) {
    if (!s.empty() && s[0] == '+') s.remove_prefix(1);
    int64_t i = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), i);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size()) {
      t.value = i;
      return t;
    }
    if (s[0] != '-') {
      uint64_t u = 0;
      r = std::from_chars(s.data(), s.data() + s.size(), u);
      if (r.ec == std::errc() && r.ptr == s.data() + s.size()) {
        t.value = u;
        return t;
      }
    }
    double d = 0;
    if (!ParseDecimalDouble(s, &d)) return NotFinite(text);
    t.value = d;
    return t;
  }
  uint64_t u = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), u, base);
  if (r.ec == std::errc() && r.ptr == s.data() + s.size()) {
    if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      t.value = static_cast<int64_t>(u);
    } else {
      t.value = u;
    }
    return t;
  }
  double d = 0;
  for (char c : s) {
    int digit = IsDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
    d = d * base + digit;
  }
  if (!std::isfinite(d)) return NotFinite(text);
  t.value = d;
  return t;
}

// Resolves an untagged plain scalar by the YAML 1.2 core schema.
Typed ResolvePlain(const std::string& text) {
  Typed t;
  if (IsCoreNull(text)) {
    t.kind = Kind::kNull;
    t.value = nullptr;
    return t;
  }
  if (IsCoreTrue(text) || IsCoreFalse(text)) {
    t.kind = Kind::kBool;
    t.value = IsCoreTrue(text);
    return t;
  }
  std::string_view s = text;
  if (IsDecimalInt(s) ||
      (s.size() > 2 && s[0] == '0' && s[1] == 'o' && AllOf(s.substr(2), IsOctDigit)) ||
      (s.size() > 2 && s[0] == '0' && s[1] == 'x' && AllOf(s.substr(2), IsHexDigit))) {
    return Integer(text);
  }
  if (IsCoreFloat(s)) {
    double d = 0;
    if (!ParseDecimalDouble(s, &d)) return NotFinite(text);
    t.kind = Kind::kFloat;
    t.value = d;
    return t;
  }
  if (IsCoreInf(s) || IsCoreNan(s)) return NotFinite(text);
  t.kind = Kind::kString;
  t.value = text;
  t.yaml11_bool = IsYaml11Bool(text);
  return t;
}

Typed AsString(const std::string& text) {
  Typed t;
  t.kind = Kind::kString;
  t.value = text;
  return t;
}

Typed TagError(std::string code, std::string message, std::string hint = {}) {
  Typed t;
  t.kind = Kind::kNull;
  t.value = nullptr;
  t.error_code = std::move(code);
  t.error_message = std::move(message);
  t.error_hint = std::move(hint);
  return t;
}

const char* kSupportedTags =
    "nemoc specs support only !!str, !!int, !!float, !!bool, !!null, !!map "
    "and !!seq";

Typed UnknownTag(const std::string& tag) {
  return TagError("yaml.unknown-tag",
                  "unsupported YAML tag " + Quoted(DisplayTag(tag)),
                  std::string(kSupportedTags) + "; remove the tag");
}

// Types a scalar event. `tag` is "?" for plain scalars, "!" for quoted and
// block scalars, otherwise the resolved explicit tag.
Typed TypeScalar(const std::string& tag, const std::string& text) {
  if (tag == "?") return ResolvePlain(text);
  if (tag == "!") return AsString(text);
  if (tag.compare(0, kCoreTagPrefix.size(), kCoreTagPrefix) != 0) {
    return UnknownTag(tag);
  }
  std::string name = tag.substr(kCoreTagPrefix.size());
  if (name == "str") return AsString(text);
  Kind want;
  if (name == "null") {
    want = Kind::kNull;
  } else if (name == "bool") {
    want = Kind::kBool;
  } else if (name == "int") {
    want = Kind::kInt;
  } else if (name == "float") {
    want = Kind::kFloat;
  } else if (name == "map" || name == "seq") {
    return TagError("yaml.tag-mismatch",
                    "a scalar cannot have the tag " + DisplayTag(tag));
  } else {
    return UnknownTag(tag);
  }
  Typed t = ResolvePlain(text);
  t.yaml11_bool = false;
  if (t.kind == want) return t;
  if (t.kind == Kind::kNotFinite && (want == Kind::kFloat || want == Kind::kInt)) {
    return t;
  }
  if (want == Kind::kFloat && t.kind == Kind::kInt) {
    t.kind = Kind::kFloat;
    t.value = t.value.get<double>();
    return t;
  }
  std::string hint;
  if (want == Kind::kBool && IsYaml11Bool(text)) hint = "write true or false";
  return TagError("yaml.tag-mismatch",
                  Quoted(text) + " is not a valid " + DisplayTag(tag), hint);
}

// ---------------------------------------------------------------------------
// The event handler that builds the JSON value.

class SpecBuilder final : public YAML::EventHandler {
 public:
  SpecBuilder(const std::string& file, const std::string& text,
              const LoadOptions& options, Diagnostics* diags, SourceMap* map,
              std::set<std::string>* yaml11)
      : file_(file),
        text_(text),
        options_(options),
        diags_(diags),
        map_(map),
        yaml11_(yaml11) {}

  // Results.
  json& root() { return root_; }
  bool have_root() const { return have_root_; }
  SourcePos root_pos() const { return root_pos_; }
  bool root_error() const { return root_error_; }
  int documents() const { return documents_; }
  /// The walk stopped early and the tree is incomplete.
  bool fatal() const { return fatal_; }

  void Finish() {
    if (aliases_ > kMaxAliasErrors) {
      diags_->Add({Severity::kNote, "yaml.alias",
                   "... and " + std::to_string(aliases_ - kMaxAliasErrors) +
                       " more YAML aliases",
                   At(file_, first_unreported_alias_), {}});
    }
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    ++documents_;
    doc_start_ = ToPos(mark);
  }
  void OnDocumentEnd() override {}

  void OnAnchor(const YAML::Mark& mark, const std::string& name) override {
    pending_anchor_ = {name, ToPos(mark)};
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    SourcePos pos = ToPos(mark);
    Slot slot = Enter(pos, anchor, /*is_null=*/true);
    if (slot.role == Role::kIgnored) return;
    if (slot.role == Role::kKey) {
      Frame& top = stack_.back();
      top.want_key = false;
      top.key_ok = false;
      // The key text (`~`, `null`, or nothing at all) is not in the event.
      std::string word;
      for (size_t i = mark.pos < 0 ? text_.size() : static_cast<size_t>(mark.pos);
           i < text_.size() && word.size() < 8; ++i) {
        char c = text_[i];
        if (c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
            c == ',' || c == '}' || c == '?') {
          break;
        }
        word += c;
      }
      Error("yaml.key-not-string",
            "mapping key is empty (null), but keys must be strings", pos,
            IsCoreNull(word) && !word.empty()
                ? "quote the key (" + Quoted(word) + ") to use it as text"
                : std::string("write a key name before the ':'"));
      return;
    }
    Place(slot, pos, json(nullptr), false);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    SourcePos pos = ToPos(mark);
    Slot slot = Enter(pos, 0, /*is_null=*/false);
    ++aliases_;
    if (aliases_ <= kMaxAliasErrors) {
      std::string hint;
      auto it = anchors_.find(anchor);
      if (it != anchors_.end()) {
        hint = "*" + it->second.first + " refers to the anchor &" +
               it->second.first + " on line " +
               std::to_string(it->second.second.line) +
               "; copy that value here instead";
      }
      Error("yaml.alias",
            "YAML aliases are not supported in nemoc specs; write the value out",
            pos, hint);
    } else if (aliases_ == kMaxAliasErrors + 1) {
      first_unreported_alias_ = pos;
    }
    if (slot.role == Role::kKey) {
      stack_.back().want_key = false;
      stack_.back().key_ok = false;
      return;
    }
    if (slot.role == Role::kRoot) root_error_ = true;
    Place(slot, pos, json(nullptr), false);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag,
                YAML::anchor_t anchor, const std::string& value) override {
    SourcePos pos = ToPos(mark);
    Slot slot = Enter(pos, anchor, /*is_null=*/false);
    if (tag != "?") CheckQuoteClosed(mark);
    Typed t = TypeScalar(tag, value);
    if (slot.role == Role::kKey) {
      ScalarKey(std::move(t), value, tag, pos);
      return;
    }
    if (!t.error_code.empty()) {
      Error(t.error_code, t.error_message, pos, t.error_hint);
      if (slot.role == Role::kRoot) root_error_ = true;
    }
    Place(slot, pos, std::move(t.value), t.yaml11_bool);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag,
                       YAML::anchor_t anchor, YAML::EmitterStyle::value style) override {
    StartCollection(/*is_map=*/false, ToPos(mark), tag, anchor,
                    style == YAML::EmitterStyle::Flow);
  }
  void OnSequenceEnd() override { EndCollection(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag,
                  YAML::anchor_t anchor, YAML::EmitterStyle::value style) override {
    StartCollection(/*is_map=*/true, ToPos(mark), tag, anchor,
                    style == YAML::EmitterStyle::Flow);
  }

  /// Where the innermost unfinished flow mapping ('{') or sequence ('[')
  /// starts; line 0 if there is none.
  SourcePos OpenFlow(bool is_map) const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (it->flow && it->is_map == is_map) return it->pos;
    }
    return {};
  }
  void OnMapEnd() override { EndCollection(); }

 private:
  enum class Role { kRoot, kIgnored, kKey, kValue };

  struct Slot {
    Role role = Role::kValue;
    std::string pointer;
    bool keep = false;  // part of the loaded document (recorded in the map)
  };

  struct Frame {
    bool is_map = false;
    json value;
    std::string pointer;
    bool keep = false;
    bool flow = false;
    SourcePos pos;
    // Mapping state: alternating key and value events.
    bool want_key = true;
    bool key_ok = false;
    std::string key;
    std::unordered_map<std::string, int> key_lines;  // key -> line first seen
  };

  void Error(const std::string& code, const std::string& message, SourcePos pos,
             const std::string& hint = {}) {
    if (walk_errors_ >= kMaxWalkErrors) {
      diags_->Add({Severity::kNote, "yaml.too-many-errors",
                   "too many errors; stopped reading the spec", At(file_, pos), {}});
      fatal_ = true;
      throw AbortParse{};
    }
    ++walk_errors_;
    diags_->Error(code, message, At(file_, pos), hint);
  }

  // Common bookkeeping for every node event; decides where the node goes.
  Slot Enter(SourcePos pos, YAML::anchor_t anchor, bool is_null) {
    if (++nodes_ > options_.max_nodes) {
      fatal_ = true;
      diags_->Error("yaml.too-large",
                    "the spec has more than " + std::to_string(options_.max_nodes) +
                        " YAML nodes; nemoc refuses to load it",
                    At(file_, pos));
      throw AbortParse{};
    }
    if (anchor != 0 && !pending_anchor_.first.empty()) {
      anchors_[anchor] = pending_anchor_;
    }
    pending_anchor_ = {};

    Slot slot;
    if (stack_.empty()) {
      if (documents_ <= 1) {
        slot.role = Role::kRoot;
        slot.keep = true;
        root_pos_ = pos;
        return slot;
      }
      // A later document: an empty one (a trailing "---") is harmless.
      if (is_null) {
        slot.role = Role::kIgnored;
        return slot;
      }
      diags_->Error("yaml.multiple-documents",
                    "the file contains more than one YAML document; a nemoc "
                    "spec is a single document",
                    At(file_, doc_start_),
                    "remove the '---' line, or move each document to its own file");
      throw AbortParse{};
    }
    Frame& top = stack_.back();
    if (top.is_map) {
      if (top.want_key) {
        slot.role = Role::kKey;
        return slot;
      }
      slot.role = Role::kValue;
      slot.keep = top.keep && top.key_ok;
      if (slot.keep) slot.pointer = top.pointer + "/" + EscapePointerToken(top.key);
      return slot;
    }
    slot.role = Role::kValue;
    slot.keep = top.keep;
    if (slot.keep) slot.pointer = top.pointer + "/" + std::to_string(top.value.size());
    return slot;
  }

  // Stores a finished value (scalar, alias placeholder or collection).
  void Place(const Slot& slot, SourcePos pos, json value, bool yaml11_bool) {
    if (slot.role == Role::kIgnored) return;
    if (slot.keep && slot.role != Role::kKey) {
      map_->SetValue(slot.pointer, pos);
      if (yaml11_bool && yaml11_ != nullptr) yaml11_->insert(slot.pointer);
    }
    Attach(std::move(value), slot.keep);
  }

  void Attach(json value, bool keep) {
    if (stack_.empty()) {
      if (documents_ <= 1) {
        root_ = std::move(value);
        have_root_ = true;
      }
      return;
    }
    Frame& top = stack_.back();
    if (top.is_map) {
      if (top.want_key) {  // a mapping or sequence used as a key just ended
        top.want_key = false;
        top.key_ok = false;
        return;
      }
      if (keep) top.value[top.key] = std::move(value);
      top.want_key = true;
      top.key_ok = false;
      return;
    }
    if (keep) top.value.push_back(std::move(value));
  }

  void ScalarKey(Typed t, const std::string& text, const std::string& tag,
                 SourcePos pos) {
    Frame& top = stack_.back();
    top.want_key = false;
    top.key_ok = false;
    if (!t.error_code.empty() && t.kind != Kind::kNotFinite) {
      Error(t.error_code, t.error_message, pos, t.error_hint);
      return;
    }
    if (t.kind != Kind::kString) {
      std::string hint = "quote the key (" + Quoted(text) + ") to use it as text";
      if (t.kind == Kind::kNull) {
        Error("yaml.key-not-string",
              "mapping key is empty (null), but keys must be strings", pos,
              text.empty() ? "write a key name before the ':'" : hint);
      } else {
        Error("yaml.key-not-string",
              "mapping key " + (tag == "?" ? text : Quoted(text)) + " is " +
                  Describe(t.kind) + ", but keys must be strings",
              pos, hint);
      }
      return;
    }
    std::string key = t.value.get<std::string>();
    auto [it, inserted] = top.key_lines.emplace(key, pos.line);
    if (!inserted) {
      Error("yaml.duplicate-key",
            "duplicate key " + Quoted(key) + "; it is already defined on line " +
                std::to_string(it->second),
            pos, "a key may appear only once in a mapping; remove or rename one");
      return;
    }
    top.key = std::move(key);
    top.key_ok = true;
    if (top.keep) map_->SetKey(top.pointer + "/" + EscapePointerToken(top.key), pos);
  }

  // yaml-cpp 0.7 accepts a quoted scalar that runs to the end of the file
  // (`a: "abc` + newline) and silently swallows the rest of the file into it.
  void CheckQuoteClosed(const YAML::Mark& mark) {
    if (mark.pos < 0) return;
    size_t i = static_cast<size_t>(mark.pos);
    const size_t n = text_.size();
    // Skip node properties (anchor, tag) that the mark may point at.
    while (i < n && (text_[i] == '&' || text_[i] == '!')) {
      while (i < n && text_[i] != ' ' && text_[i] != '\t' && text_[i] != '\n' &&
             text_[i] != '\r') {
        ++i;
      }
      while (i < n && (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' ||
                       text_[i] == '\r')) {
        ++i;
      }
    }
    if (i >= n || (text_[i] != '"' && text_[i] != '\'')) return;
    const char quote = text_[i];
    const size_t open = i;
    for (++i; i < n; ++i) {
      if (quote == '"' && text_[i] == '\\') {
        ++i;
      } else if (text_[i] == quote) {
        if (quote == '\'' && i + 1 < n && text_[i + 1] == '\'') {
          ++i;  // '' is an escaped single quote
        } else {
          return;
        }
      }
    }
    SourcePos pos = PosOfOffsetIn(text_, open);
    Error("yaml.syntax",
          std::string("invalid YAML: this quoted string is never closed (the "
                      "closing ") + quote + " is missing)",
          pos, "the string runs to the end of the file; add the closing quote");
  }

  void CheckCollectionTag(bool is_map, const std::string& tag, SourcePos pos) {
    if (tag == "?" || tag == "!") return;
    if (tag.compare(0, kCoreTagPrefix.size(), kCoreTagPrefix) == 0) {
      std::string name = tag.substr(kCoreTagPrefix.size());
      if (name == (is_map ? "map" : "seq")) return;
      if (name == "map" || name == "seq" || name == "str" || name == "int" ||
          name == "float" || name == "bool" || name == "null") {
        Error("yaml.tag-mismatch",
              std::string("a ") + (is_map ? "mapping" : "sequence") +
                  " cannot have the tag " + DisplayTag(tag),
              pos);
        return;
      }
    }
    Typed t = UnknownTag(tag);
    Error(t.error_code, t.error_message, pos, t.error_hint);
  }

  void StartCollection(bool is_map, SourcePos pos, const std::string& tag,
                       YAML::anchor_t anchor, bool flow) {
    Slot slot = Enter(pos, anchor, /*is_null=*/false);
    if (static_cast<long long>(stack_.size()) + 1 > options_.max_depth) {
      fatal_ = true;
      diags_->Error("yaml.too-deep",
                    "the spec nests mappings and sequences more than " +
                        std::to_string(options_.max_depth) + " levels deep",
                    At(file_, pos));
      throw AbortParse{};
    }
    CheckCollectionTag(is_map, tag, pos);
    if (slot.role == Role::kKey) {
      Error("yaml.key-not-string",
            std::string("mapping key is a ") + (is_map ? "mapping" : "sequence") +
                ", but keys must be strings",
            pos, "nemoc specs use only text keys");
    } else if (slot.keep) {
      map_->SetValue(slot.pointer, pos);
    }
    Frame f;
    f.is_map = is_map;
    f.flow = flow;
    f.value = is_map ? json::object() : json::array();
    f.pointer = std::move(slot.pointer);
    f.keep = slot.keep && slot.role != Role::kKey;
    f.pos = pos;
    stack_.push_back(std::move(f));
  }

  void EndCollection() {
    if (stack_.empty()) return;  // unbalanced events; cannot happen
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    Attach(std::move(f.value), f.keep);
  }

  const std::string& file_;
  const std::string& text_;
  const LoadOptions& options_;
  Diagnostics* diags_;
  SourceMap* map_;
  std::set<std::string>* yaml11_;

  std::vector<Frame> stack_;
  json root_;
  bool have_root_ = false;
  bool root_error_ = false;
  SourcePos root_pos_;
  int documents_ = 0;
  SourcePos doc_start_;
  size_t nodes_ = 0;
  size_t walk_errors_ = 0;
  size_t aliases_ = 0;
  SourcePos first_unreported_alias_;
  bool fatal_ = false;
  std::pair<std::string, SourcePos> pending_anchor_;
  std::unordered_map<YAML::anchor_t, std::pair<std::string, SourcePos>> anchors_;
};

// ---------------------------------------------------------------------------
// Encoding.

std::string HexByte(unsigned char b) {
  const char* digits = "0123456789ABCDEF";
  return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

// Length of the valid UTF-8 sequence at text[i], or 0 if it is invalid.
size_t Utf8SequenceLength(const std::string& text, size_t i) {
  auto byte = [&](size_t k) -> int {
    return k < text.size() ? static_cast<unsigned char>(text[k]) : -1;
  };
  auto in = [](int b, int lo, int hi) { return b >= lo && b <= hi; };
  int b0 = byte(i);
  if (b0 < 0x80) return 1;
  if (in(b0, 0xC2, 0xDF)) return in(byte(i + 1), 0x80, 0xBF) ? 2 : 0;
  if (in(b0, 0xE0, 0xEF)) {
    int lo = b0 == 0xE0 ? 0xA0 : 0x80;
    int hi = b0 == 0xED ? 0x9F : 0xBF;  // no UTF-16 surrogates
    return in(byte(i + 1), lo, hi) && in(byte(i + 2), 0x80, 0xBF) ? 3 : 0;
  }
  if (in(b0, 0xF0, 0xF4)) {
    int lo = b0 == 0xF0 ? 0x90 : 0x80;
    int hi = b0 == 0xF4 ? 0x8F : 0xBF;  // nothing above U+10FFFF
    return in(byte(i + 1), lo, hi) && in(byte(i + 2), 0x80, 0xBF) &&
                   in(byte(i + 3), 0x80, 0xBF)
               ? 4
               : 0;
  }
  return 0;
}

// Rejects UTF-16/32, invalid UTF-8, NUL and other control characters; strips
// a UTF-8 byte order mark. Reports the first problem only.
bool CheckEncoding(const std::string& file, std::string* text, Diagnostics* diags) {
  const std::string& t = *text;
  auto starts = [&](std::string_view p) {
    return t.size() >= p.size() && std::string_view(t).substr(0, p.size()) == p;
  };
  const char* wide = nullptr;
  if (starts(std::string_view("\x00\x00\xFE\xFF", 4)) ||
      starts(std::string_view("\xFF\xFE\x00\x00", 4))) {
    wide = "UTF-32";
  } else if (starts("\xFE\xFF") || starts("\xFF\xFE")) {
    wide = "UTF-16";
  }
  if (wide != nullptr) {
    diags->Error("input.encoding",
                 std::string("the file is ") + wide +
                     " encoded (it starts with a byte order mark); nemoc specs "
                     "must be UTF-8",
                 {file, 1, 1}, "save the file as UTF-8");
    return false;
  }
  if (starts("\xEF\xBB\xBF")) text->erase(0, 3);

  for (size_t i = 0; i < t.size();) {
    unsigned char c = static_cast<unsigned char>(t[i]);
    if (c == 0) {
      diags->Error("input.encoding",
                   "the file contains a NUL byte; nemoc specs must be UTF-8 text",
                   At(file, PosOfOffsetIn(t, i)),
                   "is the file UTF-16 encoded or binary? save it as UTF-8 text");
      return false;
    }
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      diags->Error("input.encoding",
                   "the file contains the control character " + HexByte(c) +
                       ", which YAML does not allow",
                   At(file, PosOfOffsetIn(t, i)), "remove the character");
      return false;
    }
    size_t len = Utf8SequenceLength(t, i);
    if (len == 0) {
      diags->Error("input.encoding",
                   "invalid UTF-8 (byte " + HexByte(c) +
                       "); nemoc specs must be UTF-8 text",
                   At(file, PosOfOffsetIn(t, i)),
                   "save the file as UTF-8 (it may be Latin-1 or another legacy "
                   "encoding)");
      return false;
    }
    i += len;
  }
  return true;
}

std::string LineText(const std::string& text, int line) {
  size_t start = 0;
  for (int i = 1; i < line; ++i) {
    start = text.find('\n', start);
    if (start == std::string::npos) return {};
    ++start;
  }
  size_t end = text.find('\n', start);
  return text.substr(start, end == std::string::npos ? end : end - start);
}

std::string SyntaxHint(const std::string& text, const std::string& msg, int line,
                       int column) {
  if (line > 0) {
    std::string l = LineText(text, line);
    size_t indent_end = l.find_first_not_of(" \t");
    if (l.substr(0, indent_end).find('\t') != std::string::npos) {
      return "this line is indented with a tab; YAML indentation must use spaces";
    }
  }
  if (msg == YAML::ErrorMsg::TAB_IN_INDENTATION) {
    return "YAML indentation must use spaces, not tabs";
  }
  if (msg == YAML::ErrorMsg::MAP_VALUE && column > 1024) {
    return "a key without '? ' may be at most 1024 characters long";
  }
  if (msg == YAML::ErrorMsg::MAP_VALUE) {
    return "check the indentation; a plain value cannot contain ': ' (quote it)";
  }
  if (msg == YAML::ErrorMsg::END_OF_MAP_FLOW || msg == YAML::ErrorMsg::END_OF_SEQ_FLOW) {
    return "a '{' or '[' is not closed";
  }
  if (msg == YAML::ErrorMsg::END_OF_MAP || msg == YAML::ErrorMsg::END_OF_SEQ) {
    return "check the indentation of this line and the one before it";
  }
  if (msg == YAML::ErrorMsg::UNKNOWN_ANCHOR) {
    return "YAML aliases are not supported in nemoc specs anyway; write the value out";
  }
  return {};
}

const char* KindName(const json& v) {
  switch (v.type()) {
    case json::value_t::array: return "a sequence";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "a scalar";
  }
}

}  // namespace

bool IsYaml11Bool(const std::string& text) {
  static const char* const kWords[] = {"y",  "Y",  "yes", "Yes", "YES", "n",
                                       "N",  "no", "No",  "NO",  "on",  "On",
                                       "ON", "off", "Off", "OFF"};
  for (const char* w : kWords) {
    if (text == w) return true;
  }
  return false;
}

std::string Yaml11BoolHint(const std::string& text) {
  std::string q = Quoted(text);
  return q + " is a YAML 1.1 boolean; nemoc reads it as the string " + q +
         ". Write true/false for a boolean, or quote it (" + q +
         ") to keep the string.";
}

bool LoadSpecText(const std::string& file, std::string text, Document* doc,
                  Diagnostics* diags, const LoadOptions& options,
                  std::set<std::string>* yaml11_bool_pointers) {
  const size_t errors_before = diags->error_count();
  doc->file = file;
  doc->root = nullptr;
  doc->map = SourceMap(file);

  if (text.size() > options.max_bytes) {
    diags->Error("input.too-large",
                 "the file is " + std::to_string(text.size()) +
                     " bytes, larger than the limit of " +
                     std::to_string(options.max_bytes) + " bytes",
                 {file, 0, 0});
    doc->text = std::move(text);
    return false;
  }
  bool encoding_ok = CheckEncoding(file, &text, diags);
  doc->text = std::move(text);
  if (!encoding_ok) return false;

  // Problems found while walking are collected apart: after a syntax error
  // the events before it may be misleading, so only the syntax error counts.
  Diagnostics walk;
  std::set<std::string> yaml11_local;
  SpecBuilder builder(file, doc->text, options, &walk, &doc->map, &yaml11_local);
  bool parsed = false;       // the whole stream was read (or we stopped by choice)
  bool syntax_error = false;  // yaml-cpp rejected the text
  try {
    std::istringstream in(doc->text);
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
    parsed = true;
  } catch (const AbortParse&) {
    parsed = !builder.fatal();
  } catch (const YAML::DeepRecursion& e) {
    walk.Error("yaml.too-deep", "the spec nests mappings and sequences too deeply",
               At(file, ToPos(e.mark)));
  } catch (const YAML::ParserException& e) {
    syntax_error = true;
    SourcePos pos = ToPos(e.mark);
    std::string hint = SyntaxHint(doc->text, e.msg, pos.line, pos.column);
    bool is_map = e.msg == YAML::ErrorMsg::END_OF_MAP_FLOW;
    if (is_map || e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW) {
      SourcePos open = builder.OpenFlow(is_map);
      if (open.line > 0) {
        hint = std::string("the '") + (is_map ? "{" : "[") + "' on line " +
               std::to_string(open.line) + ", column " + std::to_string(open.column) +
               " is not closed";
      }
    }
    diags->Error("yaml.syntax", "invalid YAML: " + e.msg, At(file, pos), hint);
  } catch (const YAML::Exception& e) {
    syntax_error = true;
    diags->Error("yaml.syntax", "invalid YAML: " + e.msg, At(file, ToPos(e.mark)));
  } catch (const std::bad_alloc&) {
    walk.Error("yaml.too-large", "out of memory while reading the spec", {file, 0, 0});
  } catch (const std::exception& e) {
    walk.Error("yaml.internal",
               std::string("internal error while reading the spec: ") + e.what(),
               {file, 0, 0});
  } catch (...) {
    walk.Error("yaml.internal", "internal error while reading the spec", {file, 0, 0});
  }

  try {
    if (syntax_error) {
      doc->map = SourceMap(file);
      return false;
    }
    builder.Finish();
    diags->Append(walk);
    if (parsed) {
      if (builder.documents() == 0 || !builder.have_root()) {
        diags->Error("yaml.empty",
                     "the spec is empty; expected a mapping of top-level keys",
                     {file, 0, 0});
      } else if (builder.root().is_null()) {
        if (!builder.root_error()) {
          diags->Error("yaml.empty",
                       "the spec is empty (null); expected a mapping of "
                       "top-level keys",
                       At(file, builder.root_pos()));
        }
      } else if (!builder.root().is_object()) {
        diags->Error("spec.not-a-mapping",
                     std::string("the top level of a spec must be a mapping of "
                                 "keys to values, but this is ") +
                         KindName(builder.root()),
                     At(file, builder.root_pos()));
      }
      doc->root = std::move(builder.root());
      if (yaml11_bool_pointers != nullptr) {
        yaml11_bool_pointers->insert(yaml11_local.begin(), yaml11_local.end());
      }
    } else {
      doc->map = SourceMap(file);
    }
  } catch (...) {
    diags->Error("yaml.internal", "internal error while reading the spec",
                 {file, 0, 0});
  }
  return diags->error_count() == errors_before;
}

bool LoadSpecFile(const std::string& path, Document* doc, Diagnostics* diags,
                  const LoadOptions& options,
                  std::set<std::string>* yaml11_bool_pointers) {
  namespace fs = std::filesystem;
  doc->file = path;
  doc->text.clear();
  doc->root = nullptr;
  doc->map = SourceMap(path);
  const Location loc{path, 0, 0};
  const std::string name = Quoted(path);
  try {
    std::error_code ec;
    fs::file_status st = fs::status(path, ec);
    if (st.type() == fs::file_type::not_found) {
      diags->Error("input.not-found", "spec file " + name + " does not exist", loc);
      return false;
    }
    if (ec) {
      diags->Error("input.unreadable",
                   "cannot read spec file " + name + ": " + ec.message(), loc);
      return false;
    }
    if (st.type() == fs::file_type::directory) {
      diags->Error("input.is-directory",
                   "spec file " + name + " is a directory, not a file", loc,
                   "pass the path of a YAML file inside it");
      return false;
    }
    if (st.type() == fs::file_type::regular) {
      uintmax_t size = fs::file_size(path, ec);
      if (!ec && size > options.max_bytes) {
        diags->Error("input.too-large",
                     "spec file " + name + " is " + std::to_string(size) +
                         " bytes, larger than the limit of " +
                         std::to_string(options.max_bytes) + " bytes",
                     loc);
        return false;
      }
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::error_code open_ec(errno, std::generic_category());
      diags->Error("input.unreadable",
                   "cannot open spec file " + name +
                       (open_ec ? ": " + open_ec.message() : std::string()),
                   loc);
      return false;
    }
    // Read at most max_bytes + 1 so that pipes and devices cannot make us
    // read forever.
    std::string text;
    const size_t limit = options.max_bytes + 1;
    char buf[65536];
    while (text.size() < limit) {
      size_t want = std::min(sizeof(buf), limit - text.size());
      in.read(buf, static_cast<std::streamsize>(want));
      std::streamsize got = in.gcount();
      if (got > 0) text.append(buf, static_cast<size_t>(got));
      if (!in) break;
    }
    if (in.bad()) {
      diags->Error("input.unreadable", "error while reading spec file " + name, loc);
      return false;
    }
    if (text.size() > options.max_bytes) {
      diags->Error("input.too-large",
                   "spec file " + name + " is larger than the limit of " +
                       std::to_string(options.max_bytes) + " bytes",
                   loc);
      return false;
    }
    return LoadSpecText(path, std::move(text), doc, diags, options,
                        yaml11_bool_pointers);
  } catch (const std::exception& e) {
    diags->Error("input.unreadable",
                 "cannot read spec file " + name + ": " + e.what(), loc);
    return false;
  }
}

}  // namespace nemoc
