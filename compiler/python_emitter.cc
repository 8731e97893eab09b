#include "python_emitter.h"

#include <cstdint>
#include <set>
#include <vector>

#include "yaml_emitter.h"

namespace nemoc {

namespace {

constexpr size_t kLineWidth = 100;
constexpr const char kIndent[] = "    ";

// Decodes one UTF-8 code point at s[*i]; returns U+FFFD and advances one
// byte for an invalid sequence.
uint32_t NextCodePoint(std::string_view s, size_t* i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(*i);
  int length = 0;
  uint32_t cp = 0;
  if (c < 0x80) {
    ++*i;
    return c;
  } else if ((c & 0xE0) == 0xC0) {
    length = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    length = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    length = 4;
    cp = c & 0x07;
  } else {
    ++*i;
    return 0xFFFD;
  }
  if (*i + length > s.size()) {
    ++*i;
    return 0xFFFD;
  }
  for (int k = 1; k < length; ++k) {
    if ((byte(*i + k) & 0xC0) != 0x80) {
      ++*i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (byte(*i + k) & 0x3F);
  }
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++*i;
    return 0xFFFD;
  }
  *i += length;
  return cp;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string Hex(uint32_t value, int digits) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(digits, '0');
  for (int k = digits - 1; k >= 0; --k, value >>= 4) s[k] = kDigits[value & 0xF];
  return s;
}

// Printable in source as is: no controls, no line or paragraph separators,
// no bidirectional overrides (which could make code read differently from
// what it does).
bool PrintableAsIs(uint32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) return false;
  if (cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF || cp == 0xFFFD) return false;
  if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)) return false;
  return true;
}

// A comment line: printable text only (anything else becomes '?').
std::string CommentText(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const uint32_t cp = NextCodePoint(s, &i);
    if (PrintableAsIs(cp)) {
      AppendUtf8(cp, &out);
    } else {
      out.push_back('?');
    }
  }
  return out;
}

std::string Lines(const std::string& text, const std::string& indent, const std::string& prefix) {
  std::string out;
  size_t start = 0;
  while (true) {
    const size_t nl = text.find('\n', start);
    const std::string line = CommentText(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    out += indent + prefix + line;
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

// A docstring as a triple-quoted block when the text allows it verbatim,
// otherwise as an escaped one-line literal.
std::string Docstring(const std::string& text, const std::string& indent) {
  bool verbatim = text.find("\"\"\"") == std::string::npos && text.find('\\') == std::string::npos &&
                  (text.empty() || (text.back() != '"' && text.back() != '\n'));
  for (size_t i = 0; verbatim && i < text.size();) {
    const uint32_t cp = NextCodePoint(text, &i);
    if (cp != '\n' && !PrintableAsIs(cp)) verbatim = false;
  }
  if (!verbatim) return indent + PythonStringLiteral(text) + "\n";
  std::string out = indent + "\"\"\"";
  size_t start = 0;
  bool first = true;
  while (true) {
    const size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += (first || line.empty() ? "" : indent) + line;
    first = false;
    if (nl == std::string::npos) break;
    out += "\n";
    start = nl + 1;
  }
  return out + "\"\"\"\n";
}

class Renderer {
 public:
  explicit Renderer(std::string* err) : err_(err) {}

  bool ok() const { return err_->empty(); }

  void Fail(const std::string& message) {
    if (err_->empty()) *err_ = message;
  }

  // Flat, one-line text of an expression.
  std::string Flat(const nlohmann::json& e) {
    if (e.is_null()) return "None";
    if (e.is_boolean()) return e.get<bool>() ? "True" : "False";
    if (e.is_number_integer() || e.is_number_unsigned()) return e.dump();
    if (e.is_number_float()) return Float(e.get<double>());
    if (e.is_string()) return PythonStringLiteral(e.get<std::string>());
    if (e.is_array()) {
      std::string s = "[";
      for (size_t k = 0; k < e.size(); ++k) s += (k ? ", " : "") + Flat(e[k]);
      return s + "]";
    }
    if (e.size() == 1 && e.contains("$name")) return Name(e["$name"]);
    if (e.size() == 1 && e.contains("$concat") && e["$concat"].is_array() && e["$concat"].size() > 1) {
      std::string s;
      for (size_t k = 0; k < e["$concat"].size(); ++k) s += (k ? " + " : "") + Flat(e["$concat"][k]);
      return s;
    }
    if (e.size() == 1 && e.contains("$dict") && e["$dict"].is_object()) {
      std::string s = "{";
      bool first = true;
      for (const auto& [key, value] : e["$dict"].items()) {
        s += (first ? "" : ", ") + PythonStringLiteral(key) + ": " + Flat(value);
        first = false;
      }
      return s + "}";
    }
    if (e.contains("$call")) {
      std::vector<std::string> parts;
      for (const auto& part : CallParts(e)) parts.push_back(part.first + Flat(*part.second));
      std::string s = Name(e["$call"]) + "(";
      for (size_t k = 0; k < parts.size(); ++k) s += (k ? ", " : "") + parts[k];
      return s + ")";
    }
    Fail("not a Python expression: " + e.dump());
    return "None";
  }

  // The expression starting at `column` on a line indented by `indent`:
  // flat when it fits, otherwise calls, lists and dicts open one item per line.
  std::string Render(const nlohmann::json& e, const std::string& indent, size_t column) {
    const std::string flat = Flat(e);
    if (column + flat.size() <= kLineWidth || !(e.is_array() || e.is_object()) || e.empty()) {
      return flat;
    }
    const std::string inner = indent + kIndent;
    std::string open, close;
    std::vector<std::pair<std::string, const nlohmann::json*>> items;
    if (e.is_array()) {
      open = "[";
      close = "]";
      for (const auto& item : e) items.emplace_back("", &item);
    } else if (e.contains("$dict")) {
      open = "{";
      close = "}";
      for (const auto& [key, value] : e["$dict"].items()) {
        items.emplace_back(PythonStringLiteral(key) + ": ", &value);
      }
    } else if (e.contains("$call")) {
      open = Name(e["$call"]) + "(";
      close = ")";
      items = CallParts(e);
    } else {
      return flat;
    }
    if (items.empty()) return flat;
    std::string s = open + "\n";
    for (const auto& [prefix, value] : items) {
      s += inner + prefix + Render(*value, inner, inner.size() + prefix.size()) + ",\n";
    }
    return s + indent + close;
  }

  std::string Name(const nlohmann::json& name) {
    if (!name.is_string() || !IsDottedPythonName(name.get<std::string>())) {
      Fail("not a dotted Python name: " + name.dump());
      return "None";
    }
    return name.get<std::string>();
  }

  std::string Statement(const nlohmann::json& st, const std::string& indent) {
    if (!st.is_object()) {
      Fail("not a statement: " + st.dump());
      return "";
    }
    if (st.contains("blank")) return "\n";
    std::string out;
    if (st.contains("comment") && st["comment"].is_string()) {
      out += Lines(st["comment"].get<std::string>(), indent, "# ");
    } else if (st.contains("comment")) {
      Fail("comment must be a string: " + st.dump());
    }
    if (st.contains("assign")) {
      const std::string target = Name(st["assign"]);
      if (!st.contains("value")) Fail("assignment without a value: " + st.dump());
      const std::string head = indent + target + " = ";
      out += head + Render(st.value("value", nlohmann::json()), indent, head.size()) + "\n";
    } else if (st.contains("call")) {
      out += indent + Render(st["call"], indent, indent.size()) + "\n";
    } else if (!st.contains("comment")) {
      Fail("not a statement: " + st.dump());
    }
    return out;
  }

 private:
  static std::string Float(double d) {
    std::string s = FormatNumber(d);  // shortest round-trip text; Python reads it as is
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
  }

  std::vector<std::pair<std::string, const nlohmann::json*>> CallParts(const nlohmann::json& call) {
    std::vector<std::pair<std::string, const nlohmann::json*>> parts;
    for (const auto& key : call.items()) {
      if (key.key() != "$call" && key.key() != "args" && key.key() != "kwargs") {
        Fail("unknown key '" + key.key() + "' in call " + call.dump());
      }
    }
    if (call.contains("args")) {
      if (!call["args"].is_array()) Fail("call args must be a list: " + call.dump());
      else for (const auto& arg : call["args"]) parts.emplace_back("", &arg);
    }
    if (call.contains("kwargs")) {
      if (!call["kwargs"].is_object()) {
        Fail("call kwargs must be an object: " + call.dump());
      } else {
        for (const auto& [key, value] : call["kwargs"].items()) {
          if (!IsPythonIdentifier(key)) Fail("not a keyword argument name: " + key);
          parts.emplace_back(key + "=", &value);
        }
      }
    }
    return parts;
  }

  std::string* err_;
};

}  // namespace

std::string PythonStringLiteral(std::string_view s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size();) {
    const uint32_t cp = NextCodePoint(s, &i);
    switch (cp) {
      case '\\': out += "\\\\"; continue;
      case '\'': out += "\\'"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      default: break;
    }
    if (PrintableAsIs(cp)) {
      AppendUtf8(cp, &out);
    } else if (cp < 0x100) {
      out += "\\x" + Hex(cp, 2);
    } else if (cp < 0x10000) {
      out += "\\u" + Hex(cp, 4);
    } else {
      out += "\\U" + Hex(cp, 8);
    }
  }
  return out + "'";
}

bool IsPythonIdentifier(std::string_view s) {
  static const std::set<std::string, std::less<>> kKeywords = {
      "False", "None",   "True",    "and",      "as",     "assert", "async",  "await",
      "break", "class",  "continue", "def",     "del",    "elif",   "else",   "except",
      "finally", "for",  "from",    "global",   "if",     "import", "in",     "is",
      "lambda", "nonlocal", "not",  "or",       "pass",   "raise",  "return", "try",
      "while", "with",   "yield"};
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return kKeywords.find(s) == kKeywords.end();
}

bool IsDottedPythonName(std::string_view s) {
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    if (!IsPythonIdentifier(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

namespace {

bool EmitPythonUnchecked(const nlohmann::json& module, std::string* out, std::string* err) {
  out->clear();
  Renderer r(err);
  if (!module.is_object()) {
    *err = "a Python module must be an object";
    return false;
  }
  for (const auto& key : module.items()) {
    if (key.key() != "docstring" && key.key() != "imports" && key.key() != "functions" &&
        key.key() != "main") {
      r.Fail("unknown key '" + key.key() + "' in a Python module");
    }
  }
  std::string text;
  if (module.contains("docstring")) text += Docstring(module["docstring"].get<std::string>(), "") + "\n";
  for (const auto& imp : module.value("imports", nlohmann::json::array())) {
    if (imp.contains("from") && imp.contains("import") && imp["import"].is_array()) {
      std::string names;
      for (const auto& n : imp["import"]) {
        if (!n.is_string() || !IsPythonIdentifier(n.get<std::string>())) r.Fail("bad import name: " + n.dump());
        else names += (names.empty() ? "" : ", ") + n.get<std::string>();
      }
      text += "from " + r.Name(imp["from"]) + " import " + names + "\n";
    } else if (imp.contains("module")) {
      text += "import " + r.Name(imp["module"]);
      if (imp.contains("as")) {
        if (!imp["as"].is_string() || !IsPythonIdentifier(imp["as"].get<std::string>())) {
          r.Fail("bad import alias: " + imp.dump());
        } else {
          text += " as " + imp["as"].get<std::string>();
        }
      }
      text += "\n";
    } else {
      r.Fail("not an import: " + imp.dump());
    }
  }
  for (const auto& fn : module.value("functions", nlohmann::json::array())) {
    const std::string name = fn.value("name", "");
    if (!IsPythonIdentifier(name)) r.Fail("bad function name: " + fn.value("name", nlohmann::json()).dump());
    text += "\n\ndef " + name + "():\n";
    if (fn.contains("docstring")) text += Docstring(fn["docstring"].get<std::string>(), kIndent);
    for (const auto& st : fn.value("body", nlohmann::json::array())) text += r.Statement(st, kIndent);
    if (fn.contains("returns")) {
      const std::string head = std::string(kIndent) + "return ";
      text += head + r.Render(fn["returns"], kIndent, head.size()) + "\n";
    }
  }
  if (module.contains("main")) {
    text += "\n\nif __name__ == '__main__':\n";
    text += std::string(kIndent) + r.Render(module["main"], kIndent, sizeof(kIndent) - 1) + "\n";
  }
  if (!r.ok()) return false;
  *out = std::move(text);
  return true;
}

}  // namespace

bool EmitPython(const nlohmann::json& module, std::string* out, std::string* err) {
  err->clear();
  out->clear();
  try {
    return EmitPythonUnchecked(module, out, err);
  } catch (const nlohmann::json::exception& e) {
    // A field of the wrong type (docstring not a string, ...).
    *err = std::string("malformed Python module description: ") + e.what();
    out->clear();
    return false;
  }
}

}  // namespace nemoc
