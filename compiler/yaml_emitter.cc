#include "yaml_emitter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nemoc {
namespace {

using Json = nlohmann::json;

// YAML 1.2 limits an implicit key (one written as `key: value`) to 1024
// characters; a longer one must use the explicit `? key` form. Bytes are
// compared, which is conservative for UTF-8 text.
constexpr size_t kEmitterMaxImplicitKeyBytes = 1024;

// Characters that start something other than a plain scalar when they come
// first. '-' is handled separately because `--flag` is common and plain.
constexpr std::string_view kIndicators = "?:,[]{}#&*!|>'\"%@`";

bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

bool IsAsciiHexDigit(char c) {
  return IsAsciiDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool IsAsciiAlnum(char c) {
  return IsAsciiDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }

bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

// One decoded UTF-8 sequence; `length` is 0 when the byte at the position
// does not start a valid, shortest-form sequence for a scalar value.
struct CodePoint {
  char32_t value = 0;
  size_t length = 0;
};

CodePoint DecodeUtf8(std::string_view s, size_t pos) {
  const auto byte_at = [&](size_t k) {
    return static_cast<unsigned char>(s[k]);
  };
  const unsigned char lead = byte_at(pos);
  if (lead < 0x80) return {lead, 1};
  size_t length = 0;
  char32_t value = 0;
  char32_t smallest = 0;  // Anything below is an overlong encoding.
  if ((lead & 0xE0) == 0xC0) {
    length = 2, value = lead & 0x1F, smallest = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, value = lead & 0x0F, smallest = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, value = lead & 0x07, smallest = 0x10000;
  } else {
    return {};
  }
  if (pos + length > s.size()) return {};
  for (size_t k = 1; k < length; ++k) {
    const unsigned char next = byte_at(pos + k);
    if ((next & 0xC0) != 0x80) return {};
    value = (value << 6) | (next & 0x3F);
  }
  if (value < smallest || value > 0x10FFFF ||
      (value >= 0xD800 && value <= 0xDFFF)) {
    return {};
  }
  return {value, length};
}

// Code points that may not be written raw anywhere: YAML's c-printable
// excludes C0 controls (tab and line feed are handled by callers), DEL, C1
// controls and U+FFFE/U+FFFF. NEL, LS and PS are line breaks to a YAML 1.1
// reader and some readers strip a BOM wherever it is, so those are escaped
// too.
bool MustEscape(char32_t cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF || cp == 0xFFFE ||
         cp == 0xFFFF;
}

// Code points a plain scalar should not hold although YAML allows them:
// Unicode spaces, invisible format characters and specials look like (or
// hide) whitespace, and some tools trim or mangle them. Quoting is harmless.
bool IsRiskyInPlain(char32_t cp) {
  return MustEscape(cp) || cp == 0xA0 || cp == 0x1680 || cp == 0x180E ||
         (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
         (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 ||
         (cp >= 0xFFF0 && cp <= 0xFFFF);
}

// The words YAML 1.1 or 1.2 resolves to a bool, null, merge key or the 1.1
// `!!value` type. Compared case-insensitively: `tRUE` is a string to both
// specs, but quoting it costs nothing.
bool IsReservedWord(std::string_view s) {
  static constexpr std::string_view kWords[] = {"y",    "yes",   "n",  "no",
                                                "true", "false", "on", "off",
                                                "null", "~",     "<<", "="};
  for (std::string_view word : kWords) {
    if (EqualsIgnoreAsciiCase(s, word)) return true;
  }
  return false;
}

// A superset of every YAML 1.1 and 1.2 int and float form (decimal, octal
// `012`/`0o12`, hex, binary, `_` separators, sexagesimal `1:30`, `.5`, `1.`,
// exponents, `.inf`, `.nan`) plus what Go's strconv accepts, since go-yaml v2
// (behind kubectl) tries it on anything that starts like a number: hex floats
// and `inf`/`infinity`/`nan` after a sign.
bool LooksNumeric(std::string_view s) {
  std::string_view rest = s;
  if (!rest.empty() && (rest.front() == '+' || rest.front() == '-')) {
    rest.remove_prefix(1);
  }
  if (rest.empty()) return false;
  std::string_view word = rest;
  if (word.front() == '.') word.remove_prefix(1);
  if (EqualsIgnoreAsciiCase(word, "inf") ||
      EqualsIgnoreAsciiCase(word, "infinity") ||
      EqualsIgnoreAsciiCase(word, "nan")) {
    return true;
  }
  if (rest.size() >= 2 && rest[0] == '0' &&
      std::string_view("xXoObB").find(rest[1]) != std::string_view::npos) {
    return std::all_of(rest.begin() + 2, rest.end(), [](char c) {
      return IsAsciiHexDigit(c) || c == '_' || c == '.' || c == 'p' ||
             c == 'P' || c == '+' || c == '-';
    });
  }
  size_t i = 0;
  bool has_digit_or_dot = false;
  while (i < rest.size() && (IsAsciiDigit(rest[i]) || rest[i] == '_' ||
                             rest[i] == '.' || rest[i] == ':')) {
    if (rest[i] != '_' && rest[i] != ':') has_digit_or_dot = true;
    ++i;
  }
  if (!has_digit_or_dot) return false;
  if (i == rest.size()) return true;
  if (rest[i] != 'e' && rest[i] != 'E') return false;
  ++i;
  if (i < rest.size() && (rest[i] == '+' || rest[i] == '-')) ++i;
  return std::all_of(rest.begin() + i, rest.end(),
                     [](char c) { return IsAsciiDigit(c) || c == '_'; });
}

// YAML 1.1 timestamps all start `YYYY-M`; anything that does is quoted.
bool LooksLikeDate(std::string_view s) {
  return s.size() >= 6 && IsAsciiDigit(s[0]) && IsAsciiDigit(s[1]) &&
         IsAsciiDigit(s[2]) && IsAsciiDigit(s[3]) && s[4] == '-' &&
         IsAsciiDigit(s[5]);
}

void AppendHexEscape(char32_t cp, std::string& out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  int digits = 4;
  if (cp <= 0xFF) {
    out += "\\x";
    digits = 2;
  } else if (cp <= 0xFFFF) {
    out += "\\u";
  } else {
    out += "\\U";
    digits = 8;
  }
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
    out += kHex[(cp >> shift) & 0xF];
  }
}

void AppendDoubleQuoted(std::string_view s, std::string& out) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const CodePoint cp = DecodeUtf8(s, i);
    if (cp.length == 0) {
      // YAML text is Unicode; a stray byte has no exact spelling.
      out += "\\uFFFD";
      ++i;
      continue;
    }
    switch (cp.value) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (MustEscape(cp.value)) {
          AppendHexEscape(cp.value, out);
        } else {
          out.append(s.substr(i, cp.length));
        }
    }
    i += cp.length;
  }
  out += '"';
}

// How a multi-line string is written as a literal block scalar.
struct LiteralBlock {
  bool possible = false;
  // Set when auto-detection would take the text's own leading spaces for
  // indentation, so the header needs an explicit indentation indicator.
  bool needs_indentation_indicator = false;
  size_t trailing_newlines = 0;
};

// Whether `s` survives a literal block exactly. `at_document_end` is set when
// nothing follows the scalar: keep-chomped trailing empty lines would then end
// the document in more than one '\n'. `top_level` scalars get no indentation
// indicator: at column 0 the spec counts it from indentation -1, an edge case
// not worth trusting every reader with (such strings are double-quoted).
LiteralBlock PlanLiteralBlock(std::string_view s, bool top_level,
                              bool at_document_end) {
  LiteralBlock plan;
  if (s.find('\n') == std::string_view::npos) return plan;
  // Only newlines: there is no content line to carry the text.
  const size_t last_content = s.find_last_not_of('\n');
  if (last_content == std::string_view::npos) return plan;
  for (size_t i = 0; i < s.size();) {
    const CodePoint cp = DecodeUtf8(s, i);
    if (cp.length == 0) return plan;
    // Tabs are content inside a block scalar (never indentation, which is
    // always written as spaces); '\r' and other controls would be lost.
    if (cp.value != '\n' && cp.value != '\t' && MustEscape(cp.value)) {
      return plan;
    }
    i += cp.length;
  }
  plan.trailing_newlines = s.size() - 1 - last_content;
  if (plan.trailing_newlines >= 2 && at_document_end) return plan;
  const size_t first_content = s.find_first_not_of('\n');
  plan.needs_indentation_indicator = s[first_content] == ' ';
  if (plan.needs_indentation_indicator && top_level) return plan;
  plan.possible = true;
  return plan;
}

// Writes `s` (which has a plan.possible literal block) after a mapping key's
// ':' or a sequence '-'. `node_column` is the key's or dash's column; the
// content goes two columns further in.
void AppendLiteralBlock(std::string_view s, const LiteralBlock& plan,
                        size_t node_column, std::string& out) {
  out += '|';
  if (plan.needs_indentation_indicator) out += '2';
  if (plan.trailing_newlines == 0) {
    out += '-';
  } else if (plan.trailing_newlines >= 2) {
    out += '+';
  }
  out += '\n';
  const std::string_view body = s.substr(0, s.size() - plan.trailing_newlines);
  size_t start = 0;
  while (true) {
    const size_t end = std::min(body.find('\n', start), body.size());
    const std::string_view line = body.substr(start, end - start);
    // Empty lines get no indentation, so no line ends in stray spaces.
    if (!line.empty()) out.append(node_column + 2, ' ').append(line);
    out += '\n';
    if (end == body.size()) break;
    start = end + 1;
  }
  // Clip keeps the one final line break written above; keep needs the rest
  // as empty lines.
  if (plan.trailing_newlines >= 2) out.append(plan.trailing_newlines - 1, '\n');
}

// Orders of mapping keys (see EmitYaml in the header).
enum class KeyOrder { kSorted, kDocumentTop, kTopMetadata, kNameFirst };

int KeyRank(std::string_view key, KeyOrder order) {
  switch (order) {
    case KeyOrder::kSorted:
      return 0;
    case KeyOrder::kDocumentTop:
      if (key == "apiVersion") return 0;
      if (key == "kind") return 1;
      if (key == "metadata") return 2;
      return 3;
    case KeyOrder::kTopMetadata:
      if (key == "name") return 0;
      if (key == "namespace") return 1;
      if (key == "labels") return 2;
      if (key == "annotations") return 3;
      return 4;
    case KeyOrder::kNameFirst:
      return key == "name" ? 0 : 1;
  }
  return 0;
}

class YamlWriter {
 public:
  std::string Document(const Json& value) {
    if (value.is_binary()) return Document(BinaryAsArray(value));
    out_.clear();
    if (value.is_object() && !value.empty()) {
      WriteMapping(value, 0, KeyOrder::kDocumentTop, false, true);
    } else if (value.is_array() && !value.empty()) {
      WriteSequence(value, 0, false, true);
    } else if (value.is_string()) {
      const std::string& s = value.get_ref<const std::string&>();
      if (!NeedsQuotes(s)) {
        out_ += s;
        out_ += '\n';
      } else if (const LiteralBlock plan = PlanLiteralBlock(s, true, true);
                 plan.possible) {
        AppendLiteralBlock(s, plan, 0, out_);
      } else {
        AppendDoubleQuoted(s, out_);
        out_ += '\n';
      }
    } else {
      out_ += ScalarText(value);
      out_ += '\n';
    }
    return std::move(out_);
  }

 private:
  // JSON has no bytes; write them as the array of numbers they are.
  static Json BinaryAsArray(const Json& value) {
    Json array = Json::array();
    for (const std::uint8_t b : value.get_binary()) array.push_back(b);
    return array;
  }

  // Text of a non-string scalar, or of an empty collection in flow style.
  static std::string ScalarText(const Json& value) {
    switch (value.type()) {
      case Json::value_t::boolean:
        return value.get<bool>() ? "true" : "false";
      case Json::value_t::number_integer:
        return std::to_string(value.get<std::int64_t>());
      case Json::value_t::number_unsigned:
        return std::to_string(value.get<std::uint64_t>());
      case Json::value_t::number_float:
        return FormatNumber(value.get<double>());
      case Json::value_t::object:
        return "{}";
      case Json::value_t::array:
        return "[]";
      default:  // null, discarded
        return "null";
    }
  }

  // Writes the rest of the line after `key:`, `-` or an explicit `:` for a
  // value that is not a non-empty collection. `node_column` is the column of
  // the key or indicator.
  void WriteScalarAfterIndicator(const Json& value, size_t node_column,
                                 bool at_document_end) {
    out_ += ' ';
    if (!value.is_string()) {
      out_ += ScalarText(value);
      out_ += '\n';
      return;
    }
    const std::string& s = value.get_ref<const std::string&>();
    if (!NeedsQuotes(s)) {
      out_ += s;
      out_ += '\n';
      return;
    }
    const LiteralBlock plan = PlanLiteralBlock(s, false, at_document_end);
    if (plan.possible) {
      AppendLiteralBlock(s, plan, node_column, out_);
      return;
    }
    AppendDoubleQuoted(s, out_);
    out_ += '\n';
  }

  // A mapping value: nested collections start on the next line, mappings two
  // columns in, sequences at the key's own column (kubectl style).
  void WriteMappingValue(const Json& value, size_t key_column,
                         KeyOrder child_order, bool at_document_end) {
    if (value.is_binary()) {
      WriteMappingValue(BinaryAsArray(value), key_column, child_order,
                        at_document_end);
    } else if (value.is_object() && !value.empty()) {
      out_ += '\n';
      WriteMapping(value, key_column + 2, child_order, false, at_document_end);
    } else if (value.is_array() && !value.empty()) {
      out_ += '\n';
      WriteSequence(value, key_column, false, at_document_end);
    } else {
      WriteScalarAfterIndicator(value, key_column, at_document_end);
    }
  }

  // A value after `-` or an explicit key's `:`; nested collections start on
  // the same line (compact form), their entries two columns in.
  void WriteCompactValue(const Json& value, size_t indicator_column,
                         KeyOrder child_order, bool at_document_end) {
    if (value.is_binary()) {
      WriteCompactValue(BinaryAsArray(value), indicator_column, child_order,
                        at_document_end);
    } else if (value.is_object() && !value.empty()) {
      out_ += ' ';
      WriteMapping(value, indicator_column + 2, child_order, true,
                   at_document_end);
    } else if (value.is_array() && !value.empty()) {
      out_ += ' ';
      WriteSequence(value, indicator_column + 2, true, at_document_end);
    } else {
      WriteScalarAfterIndicator(value, indicator_column, at_document_end);
    }
  }

  // `first_inline`: the caller already wrote the first entry's indentation
  // (`- ` of a compact sequence entry).
  void WriteMapping(const Json& object, size_t indent, KeyOrder order,
                    bool first_inline, bool at_document_end) {
    using Entry = const Json::object_t::value_type*;
    std::vector<Entry> entries;
    const auto& members = object.get_ref<const Json::object_t&>();
    entries.reserve(members.size());
    for (const auto& member : members) entries.push_back(&member);
    // std::string's ordering compares as unsigned char: byte order.
    std::sort(entries.begin(), entries.end(), [order](Entry a, Entry b) {
      const int rank_a = KeyRank(a->first, order);
      const int rank_b = KeyRank(b->first, order);
      if (rank_a != rank_b) return rank_a < rank_b;
      return a->first < b->first;
    });
    for (size_t i = 0; i < entries.size(); ++i) {
      const auto& [key, value] = *entries[i];
      if (i > 0 || !first_inline) out_.append(indent, ' ');
      const bool last = at_document_end && i + 1 == entries.size();
      const KeyOrder child_order =
          (order == KeyOrder::kDocumentTop && key == "metadata")
              ? KeyOrder::kTopMetadata
              : KeyOrder::kSorted;
      const std::string key_text = FormatYamlKey(key);
      if (key_text.size() <= kEmitterMaxImplicitKeyBytes) {
        out_ += key_text;
        out_ += ':';
        WriteMappingValue(value, indent, child_order, last);
      } else {
        out_ += "? ";
        out_ += key_text;
        out_ += '\n';
        out_.append(indent, ' ');
        out_ += ':';
        WriteCompactValue(value, indent, child_order, last);
      }
    }
  }

  void WriteSequence(const Json& array, size_t indent, bool first_inline,
                     bool at_document_end) {
    const auto& items = array.get_ref<const Json::array_t&>();
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0 || !first_inline) out_.append(indent, ' ');
      out_ += '-';
      WriteCompactValue(items[i], indent, KeyOrder::kNameFirst,
                        at_document_end && i + 1 == items.size());
    }
  }

  std::string out_;
};

}  // namespace

bool NeedsQuotes(std::string_view s) noexcept {
  if (s.empty()) return true;
  // Plain scalars lose leading and trailing whitespace.
  if (s.front() == ' ' || s.back() == ' ') return true;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const CodePoint cp = DecodeUtf8(s, i);
      if (cp.length == 0 || IsRiskyInPlain(cp.value)) return true;
      i += cp.length;
      continue;
    }
    // Controls (tab and newline included) cannot be written plain exactly.
    if (c < 0x20 || c == 0x7F) return true;
    // `: ` (or a final ':') ends a key; ` #` starts a comment.
    if (c == ':' && (i + 1 == s.size() || s[i + 1] == ' ')) return true;
    if (c == '#' && i > 0 && s[i - 1] == ' ') return true;
    ++i;
  }
  const char first = s.front();
  if (first == '-') {
    // `- x` is a sequence entry, `-1` a number, `---` a document marker;
    // only the long-option form `--name` is left plain.
    if (!(s.size() >= 3 && s[1] == '-' && IsAsciiAlnum(s[2]))) return true;
  } else if (kIndicators.find(first) != std::string_view::npos) {
    return true;
  }
  if (s.starts_with("...")) return true;  // Document end marker.
  return IsReservedWord(s) || LooksNumeric(s) || LooksLikeDate(s);
}

std::string FormatNumber(double d) {
  if (std::isnan(d)) return ".nan";
  if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (d == std::trunc(d) && d >= -kTwoTo63 && d < kTwoTo63) {
    // Exact: every integral double in range is an int64 (and -0.0 is 0).
    return std::to_string(static_cast<std::int64_t>(d));
  }
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), d);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) {
    // A huge integral value in fixed notation would read back as an integer
    // that overflows int64; keep it a float.
    result = std::to_chars(buffer, buffer + sizeof(buffer), d,
                           std::chars_format::scientific);
    text.assign(buffer, result.ptr);
  }
  const size_t exponent = text.find('e');
  if (exponent != std::string::npos && text.find('.') == std::string::npos) {
    text.insert(exponent, ".0");
  }
  return text;
}

std::string DoubleQuoteYaml(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  AppendDoubleQuoted(s, out);
  return out;
}

std::string FormatYamlKey(std::string_view key) {
  if (NeedsQuotes(key)) return DoubleQuoteYaml(key);
  return std::string(key);
}

std::string EmitYaml(const nlohmann::json& value) {
  return YamlWriter().Document(value);
}

}  // namespace nemoc
