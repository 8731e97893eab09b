#include "spec_loader.h"

#include "file_reader.h"

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

// yaml-cpp drops an implicit key (one written without '? ') that is longer
// than this many bytes from its start to the ':'.
constexpr size_t kMaxImplicitKeyBytes = 1024;

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

bool IsDecimalDigit(char c) { return c >= '0' && c <= '9'; }
bool IsOctDigit(char c) { return c >= '0' && c <= '7'; }
bool IsHexDigit(char c) {
  return IsDecimalDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
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
  return AllOf(s, IsDecimalDigit);
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsCoreFloat(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
  size_t int_digits = 0;
  while (i < n && IsDecimalDigit(s[i])) ++i, ++int_digits;
  if (int_digits == 0) {
    if (i >= n || s[i] != '.') return false;
    ++i;
    size_t frac_digits = 0;
    while (i < n && IsDecimalDigit(s[i])) ++i, ++frac_digits;
    if (frac_digits == 0) return false;
  } else if (i < n && s[i] == '.') {
    ++i;
    while (i < n && IsDecimalDigit(s[i])) ++i;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < n && IsDecimalDigit(s[i])) ++i, ++exp_digits;
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
    int digit = IsDecimalDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
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
// Looking at the text around a node or a syntax error.

bool IsYamlSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Skips the node properties (anchor, tag) that a node's mark may point at.
size_t SkipProperties(const std::string& text, size_t i) {
  const size_t n = text.size();
  while (i < n && (text[i] == '&' || text[i] == '!')) {
    while (i < n && !IsYamlSpace(text[i])) ++i;
    while (i < n && IsYamlSpace(text[i])) ++i;
  }
  return i;
}

// Offset just past the closing quote of the quoted scalar whose opening quote
// is at text[open]; npos if it is never closed.
size_t QuotedScalarEnd(const std::string& text, size_t open) {
  const size_t n = text.size();
  const char quote = text[open];
  for (size_t i = open + 1; i < n; ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;
    } else if (text[i] == quote) {
      if (quote == '\'' && i + 1 < n && text[i + 1] == '\'') {
        ++i;  // '' is an escaped single quote
      } else {
        return i + 1;
      }
    }
  }
  return std::string::npos;
}

bool IsFlowIndicator(char c) {
  return c == ',' || c == '[' || c == ']' || c == '{' || c == '}';
}

// When the node starting at text[start] (inside a flow collection) is a key
// followed by ':', the number of bytes from its start to the ':' (what
// yaml-cpp compares with kMaxImplicitKeyBytes); npos otherwise.
size_t ImplicitKeyBytes(const std::string& text, size_t start) {
  const size_t n = text.size();
  size_t i = SkipProperties(text, start);
  if (i >= n) return std::string::npos;
  if (text[i] == '"' || text[i] == '\'') {
    i = QuotedScalarEnd(text, i);
    if (i == std::string::npos) return i;
  } else {
    // A plain scalar ends at a flow indicator, at ": " and at " #".
    for (; i < n; ++i) {
      const char c = text[i];
      if (IsFlowIndicator(c)) break;
      if (c == ':' && (i + 1 >= n || IsYamlSpace(text[i + 1]) || IsFlowIndicator(text[i + 1]))) {
        break;
      }
      if (c == '#' && i > start && IsYamlSpace(text[i - 1])) break;
    }
  }
  while (i < n && IsYamlSpace(text[i])) ++i;
  if (i >= n || text[i] != ':') return std::string::npos;
  return i - start;
}

// The error for an implicit key of `bytes` bytes starting at text[start].
// yaml-cpp's limit is on bytes, which are characters unless the key has
// non-ASCII text.
std::string LongKeyMessage(const std::string& text, size_t start, size_t bytes) {
  const bool ascii = std::all_of(text.begin() + static_cast<std::ptrdiff_t>(start),
                                 text.begin() + static_cast<std::ptrdiff_t>(start + bytes),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  const std::string unit = ascii ? " characters" : " bytes";
  return "invalid YAML: this key is " + std::to_string(bytes) + unit +
         (ascii ? "" : " (in UTF-8)") + " long, but a key written without '? ' may be at most " +
         std::to_string(kMaxImplicitKeyBytes) + unit + " long";
}

std::string TooDeepMessage(int max_depth) {
  return "the spec nests mappings and sequences more than " + std::to_string(max_depth) +
         " levels deep";
}

std::string UnclosedQuoteMessage(char quote) {
  return std::string("invalid YAML: this quoted string is never closed (the closing ") +
         quote + " is missing)";
}

std::string UnclosedQuoteHint(const std::string& unclosed_flow = {}) {
  if (unclosed_flow.empty()) {
    return "the string runs to the end of the file; add the closing quote";
  }
  return "the string runs to the end of the file, so " + unclosed_flow +
         " is never closed; add the closing quote";
}

size_t Utf8SequenceLength(const std::string& text, size_t i);

// yaml-cpp 0.7.0 (Debian bookworm's libyaml-cpp-dev) decodes the YAML escapes
// "\N" and "\_" of a double-quoted scalar to the single bytes 0x85 and 0xA0
// (jbeder/yaml-cpp yaml-cpp-0.7.0 src/exp.cpp, Escape: `case 'N': return
// "\x85";`; later releases return "\xC2\x85"), which is not UTF-8: JSON
// serialization of the spec then throws (found by fuzz_loader). The file was
// checked to be UTF-8 before parsing and every other escape is encoded as
// UTF-8, so a decoded byte that begins no valid sequence is such a code point
// (U+0080..U+00FF): it is encoded as UTF-8 into *repaired. Returns false
// (and leaves *repaired alone) when `value` is UTF-8 already, as it always is
// with a newer yaml-cpp.
bool RepairDecodedScalar(const std::string& value, std::string* repaired) {
  size_t i = 0;
  while (i < value.size()) {
    size_t len = Utf8SequenceLength(value, i);
    if (len == 0) break;
    i += len;
  }
  if (i == value.size()) return false;
  std::string out = value.substr(0, i);
  while (i < value.size()) {
    size_t len = Utf8SequenceLength(value, i);
    if (len != 0) {
      out.append(value, i, len);
      i += len;
      continue;
    }
    const auto b = static_cast<unsigned char>(value[i++]);
    out += static_cast<char>(0xC0 | (b >> 6));
    out += static_cast<char>(0x80 | (b & 0x3F));
  }
  *repaired = std::move(out);
  return true;
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
  /// The walk stopped early and the tree is incomplete. After the depth or
  /// the error limit, yaml-cpp still reads the rest of the stream (only the
  /// nesting is tracked and the nodes counted), so that a syntax error later
  /// in the file is reported instead of a limit that the misleading events
  /// before it may have crossed. The node limit stops yaml-cpp at once.
  bool fatal() const { return fatal_; }
  /// Where the first collection deeper than max_depth starts; line 0 if none.
  SourcePos depth_error_pos() const { return depth_error_pos_; }
  /// A quoted scalar that runs to the end of the file (yaml-cpp accepts it):
  /// where its opening quote is (line 0 if none) and the quote character.
  SourcePos unclosed_quote_pos() const { return unclosed_quote_pos_; }
  char unclosed_quote() const { return unclosed_quote_; }
  /// Byte offset of the last scalar event and whether it was an item of a flow
  /// sequence (npos if there was none).
  size_t last_scalar_offset() const { return last_scalar_offset_; }
  bool last_scalar_in_flow_sequence() const { return last_scalar_in_flow_seq_; }

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
    CountNode(mark);
    if (fatal_) return;
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
    CountNode(mark);
    if (fatal_) return;
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
                YAML::anchor_t anchor, const std::string& decoded) override {
    std::string repaired;
    const std::string& value = RepairDecodedScalar(decoded, &repaired) ? repaired : decoded;
    // Checked even after a fatal error: an unclosed quote explains a syntax
    // error at the end of the file.
    CountNode(mark);
    if (tag != "?") CheckQuoteClosed(mark);
    last_scalar_offset_ = mark.pos < 0 ? std::string::npos : static_cast<size_t>(mark.pos);
    last_scalar_in_flow_seq_ = !stack_.empty() && stack_.back().flow && !stack_.back().is_map;
    if (fatal_) return;
    SourcePos pos = ToPos(mark);
    Slot slot = Enter(pos, anchor, /*is_null=*/false);
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
    StartCollection(/*is_map=*/false, mark, tag, anchor,
                    style == YAML::EmitterStyle::Flow);
  }
  void OnSequenceEnd() override { EndCollection(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag,
                  YAML::anchor_t anchor, YAML::EmitterStyle::value style) override {
    StartCollection(/*is_map=*/true, mark, tag, anchor,
                    style == YAML::EmitterStyle::Flow);
  }

  /// Where the innermost unfinished flow mapping ('{') or sequence ('[')
  /// starts (line 0 if there is none), and how many more of them enclose it.
  /// Only collections that start with that bracket count: yaml-cpp also
  /// reports a "key: value" pair in a flow sequence as a flow mapping.
  std::pair<SourcePos, size_t> OpenFlow(bool is_map) const {
    const char bracket = is_map ? '{' : '[';
    SourcePos innermost;
    size_t more = 0;
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (!it->flow || it->is_map != is_map) continue;
      size_t i = SkipProperties(text_, it->offset);
      if (i >= text_.size() || text_[i] != bracket) continue;
      if (innermost.line == 0) {
        innermost = PosOfOffsetIn(text_, i);
      } else {
        ++more;
      }
    }
    return {innermost, more};
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
    size_t offset = std::string::npos;  // byte offset of pos in the text
    // Nesting level, counted as written: the top-level collection is 1, and a
    // collection used as the first key of a mapping that starts at the same
    // place (`[a]: b`) shares the mapping's level. yaml-cpp reports every
    // '[' or '{' left open at the end of the file that way, as the key of a
    // mapping that is not in the text.
    int level = 1;
    // Mapping state: alternating key and value events.
    bool want_key = true;
    bool key_ok = false;
    std::string key;
    std::unordered_map<std::string, int> key_lines;  // key -> line first seen
  };

  void Error(const std::string& code, const std::string& message, SourcePos pos,
             const std::string& hint = {}) {
    if (fatal_) return;
    if (walk_errors_ >= kMaxWalkErrors) {
      diags_->Add({Severity::kNote, "yaml.too-many-errors",
                   "too many errors; stopped reading the spec", At(file_, pos), {}});
      fatal_ = true;
      return;
    }
    ++walk_errors_;
    diags_->Error(code, message, At(file_, pos), hint);
  }

  // Common bookkeeping for every node event; decides where the node goes.
  // Counts every node event, also after a fatal error: the node limit is
  // what stops yaml-cpp 0.7 on inputs where it reports nodes forever (for
  // example a line starting with ',' in block context).
  void CountNode(const YAML::Mark& mark) {
    if (++nodes_ <= options_.max_nodes) return;
    if (!fatal_) {
      fatal_ = true;
      diags_->Error("yaml.too-large",
                    "the spec has more than " + std::to_string(options_.max_nodes) +
                        " YAML nodes; nemoc refuses to load it",
                    At(file_, ToPos(mark)));
    }
    throw AbortParse{};
  }

  Slot Enter(SourcePos pos, YAML::anchor_t anchor, bool is_null) {
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
  // In a flow collection the swallowed closing bracket then makes yaml-cpp
  // fail at the end of the file; LoadSpecText reports the quote instead.
  void CheckQuoteClosed(const YAML::Mark& mark) {
    if (mark.pos < 0 || unclosed_quote_ != 0) return;
    const size_t open = SkipProperties(text_, static_cast<size_t>(mark.pos));
    if (open >= text_.size() || (text_[open] != '"' && text_[open] != '\'')) return;
    if (QuotedScalarEnd(text_, open) != std::string::npos) return;
    unclosed_quote_ = text_[open];
    unclosed_quote_pos_ = PosOfOffsetIn(text_, open);
    Error("yaml.syntax", UnclosedQuoteMessage(unclosed_quote_), unclosed_quote_pos_,
          UnclosedQuoteHint());
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

  void StartCollection(bool is_map, const YAML::Mark& mark, const std::string& tag,
                       YAML::anchor_t anchor, bool flow) {
    CountNode(mark);
    const SourcePos pos = ToPos(mark);
    Frame f;
    f.is_map = is_map;
    f.flow = flow;
    f.pos = pos;
    f.offset = mark.pos < 0 ? std::string::npos : static_cast<size_t>(mark.pos);
    if (!stack_.empty()) {
      const Frame& top = stack_.back();
      const bool shares =
          top.is_map && f.offset != std::string::npos && top.offset == f.offset;
      f.level = top.level + (shares ? 0 : 1);
    }
    // Once the walk has stopped, only the nesting is tracked (for the depth
    // error's position and the unclosed-bracket hint).
    Slot slot;
    if (!fatal_) slot = Enter(pos, anchor, /*is_null=*/false);
    if (f.level > options_.max_depth && depth_error_pos_.line == 0) {
      depth_error_pos_ = pos;
      if (!fatal_) {
        fatal_ = true;
        diags_->Error("yaml.too-deep", TooDeepMessage(options_.max_depth),
                      At(file_, pos));
      }
    }
    if (fatal_) {
      stack_.push_back(std::move(f));
      return;
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
    f.value = is_map ? json::object() : json::array();
    f.pointer = std::move(slot.pointer);
    f.keep = slot.keep && slot.role != Role::kKey;
    stack_.push_back(std::move(f));
  }

  void EndCollection() {
    if (stack_.empty()) return;  // unbalanced events; cannot happen
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (!fatal_) Attach(std::move(f.value), f.keep);
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
  SourcePos depth_error_pos_;
  SourcePos unclosed_quote_pos_;
  char unclosed_quote_ = 0;
  size_t last_scalar_offset_ = std::string::npos;
  bool last_scalar_in_flow_seq_ = false;
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

// ---------------------------------------------------------------------------
// Files.

// "input.not-a-file": named pipes, sockets and devices are refused before
// they are opened (reading them can block forever or never end).
void NotARegularFile(const std::string& quoted_path, const std::string& what,
                     const Location& loc, Diagnostics* diags) {
  diags->Error("input.not-a-file",
               "spec file " + quoted_path + " " + what + ", not a regular file", loc,
               "nemoc reads a spec only from a regular file; save the spec to a file "
               "and pass its path");
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
  // the events before it may be misleading (yaml-cpp reports a '[' or '{'
  // still open at the end of the file as the key of a mapping that is not in
  // the text, for example), so only the syntax error counts.
  Diagnostics walk;
  std::set<std::string> yaml11_local;
  SpecBuilder builder(file, doc->text, options, &walk, &doc->map, &yaml11_local);
  bool complete = false;      // the tree was built from the whole stream
  bool syntax_error = false;  // yaml-cpp rejected the text; diags has the error
  try {
    std::istringstream in(doc->text);
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
    complete = !builder.fatal();
  } catch (const AbortParse&) {
    complete = !builder.fatal();
  } catch (const YAML::DeepRecursion& e) {
    // Deeper than yaml-cpp recurses (500 levels), so deeper than max_depth too
    // unless that was raised: the depth is the error, wherever it started.
    syntax_error = true;
    SourcePos deep = builder.depth_error_pos();
    if (deep.line > 0) {
      diags->Error("yaml.too-deep", TooDeepMessage(options.max_depth), At(file, deep));
    } else {
      diags->Error("yaml.too-deep", "the spec nests mappings and sequences too deeply",
                   At(file, ToPos(e.mark)));
    }
  } catch (const YAML::ParserException& e) {
    syntax_error = true;
    SourcePos pos = ToPos(e.mark);
    std::string message = "invalid YAML: " + e.msg;
    std::string hint = SyntaxHint(doc->text, e.msg, pos.line, pos.column);
    const bool is_map = e.msg == YAML::ErrorMsg::END_OF_MAP_FLOW;
    const bool unclosed_flow = is_map || e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW;
    std::string open_text;  // "the '[' on line 3, column 40"
    auto [open, more] = builder.OpenFlow(is_map);
    if (unclosed_flow && open.line > 0) {
      open_text = std::string("the '") + (is_map ? "{" : "[") + "' on line " +
                  std::to_string(open.line) + ", column " + std::to_string(open.column);
      hint = open_text + " is not closed";
      if (more > 0) {
        hint += " (nor " + std::string(more == 1 ? "is the one" : "are the " +
                                                                   std::to_string(more)) +
                " before it)";
      }
    }
    // yaml-cpp drops an implicit key longer than 1024 bytes, and then finds
    // the key where it expected ',' or the closing bracket: in a flow mapping
    // the error is at the key, in a flow sequence at its ':' (after the key
    // was read as an item).
    size_t key_start = std::string::npos;
    size_t key_bytes = std::string::npos;
    if (unclosed_flow && e.mark.pos >= 0 &&
        static_cast<size_t>(e.mark.pos) < doc->text.size()) {
      const size_t at = static_cast<size_t>(e.mark.pos);
      if (is_map && doc->text[at] != ':') {
        key_start = at;
        key_bytes = ImplicitKeyBytes(doc->text, key_start);
      } else if (!is_map && doc->text[at] == ':' && builder.last_scalar_in_flow_sequence() &&
                 builder.last_scalar_offset() < at) {
        key_start = builder.last_scalar_offset();
        key_bytes = ImplicitKeyBytes(doc->text, key_start);
        if (key_bytes != at - key_start) key_bytes = std::string::npos;  // another ':'
      }
    }
    if (builder.unclosed_quote() != 0) {
      // The string swallowed the rest of the file, including whatever yaml-cpp
      // then missed at its end.
      pos = builder.unclosed_quote_pos();
      message = UnclosedQuoteMessage(builder.unclosed_quote());
      hint = UnclosedQuoteHint(open_text);
    } else if (key_bytes != std::string::npos && key_bytes > kMaxImplicitKeyBytes) {
      pos = PosOfOffsetIn(doc->text, key_start);
      message = LongKeyMessage(doc->text, key_start, key_bytes);
      hint = "shorten the key";
    }
    diags->Error("yaml.syntax", message, At(file, pos), hint);
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
    if (complete) {
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
                  std::set<std::string>* yaml11_bool_pointers, FileReader* reader) {
  doc->file = path;
  doc->text.clear();
  doc->root = nullptr;
  doc->map = SourceMap(path);
  const Location loc{path, 0, 0};
  const std::string name = Quoted(path);
  try {
    std::string text;
    FileReader::Failure failure;
    switch ((reader != nullptr ? *reader : RealFiles()).ReadFile(path, options.max_bytes, &text, &failure)) {
      case FileReader::Status::kOkay:
        break;
      case FileReader::Status::kNotFound:
        diags->Error("input.not-found", "spec file " + name + " does not exist", loc);
        return false;
      case FileReader::Status::kIsDirectory:
        diags->Error("input.is-directory", "spec file " + name + " is a directory, not a file", loc,
                     "pass the path of a YAML file inside it");
        return false;
      case FileReader::Status::kNotRegular:
        NotARegularFile(name, failure.reason, loc, diags);
        return false;
      case FileReader::Status::kTooLarge:
        diags->Error("input.too-large",
                     "spec file " + name + " is " +
                         (failure.size > 0 ? std::to_string(failure.size) + " bytes, " : std::string()) +
                         "larger than the limit of " + std::to_string(options.max_bytes) + " bytes",
                     loc);
        return false;
      case FileReader::Status::kError:
        diags->Error("input.unreadable", failure.action + " spec file " + name + ": " + failure.reason, loc);
        return false;
    }
    return LoadSpecText(path, std::move(text), doc, diags, options, yaml11_bool_pointers);
  } catch (const std::exception& e) {
    diags->Error("input.unreadable",
                 "cannot read spec file " + name + ": " + e.what(), loc);
    return false;
  }
}

}  // namespace nemoc
