#include "diagnostic.h"

#include "secret_scanner.h"

#include <algorithm>
#include <tuple>

namespace nemoc {

Diagnostic& Diagnostics::Add(Diagnostic d) {
  items_.push_back(std::move(d));
  return items_.back();
}

Diagnostic& Diagnostics::Error(std::string code, std::string message,
                               Location loc, std::string hint) {
  return Add({Severity::kError, std::move(code), std::move(message),
              std::move(loc), std::move(hint)});
}

Diagnostic& Diagnostics::Warning(std::string code, std::string message,
                                 Location loc, std::string hint) {
  return Add({Severity::kWarning, std::move(code), std::move(message),
              std::move(loc), std::move(hint)});
}

void Diagnostics::Append(const Diagnostics& other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

bool Diagnostics::has_errors() const { return error_count() > 0; }

size_t Diagnostics::error_count() const {
  return std::count_if(items_.begin(), items_.end(), [](const Diagnostic& d) {
    return d.severity == Severity::kError;
  });
}

void Diagnostics::SortByLocation() {
  std::stable_sort(items_.begin(), items_.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return std::tie(a.location.file, a.location.line,
                                     a.location.column) <
                            std::tie(b.location.file, b.location.line,
                                     b.location.column);
                   });
}

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "error";
}

namespace {

std::string LineOf(const std::string& text, int line) {
  size_t start = 0;
  for (int i = 1; i < line; ++i) {
    start = text.find('\n', start);
    if (start == std::string::npos) return {};
    ++start;
  }
  size_t end = text.find('\n', start);
  std::string out = text.substr(start, end == std::string::npos ? end : end - start);
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return out;
}

// Bytes a terminal must never receive raw: C0 controls (a tab is kept when
// `keep_tab`), DEL, C1 controls and invalid UTF-8 become visible escapes, so
// hostile input can neither truncate nor drive the terminal.
std::string Printable(std::string_view in, bool keep_tab) {
  static const char kHex[] = "0123456789ABCDEF";
  auto escape = [](std::string* out, unsigned char b) {
    *out += "\\x";
    *out += kHex[b >> 4];
    *out += kHex[b & 15];
  };
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size();) {
    const unsigned char b = static_cast<unsigned char>(in[i]);
    if (b < 0x80) {
      if ((b < 0x20 && !(keep_tab && b == '\t')) || b == 0x7F) {
        escape(&out, b);
      } else {
        out += static_cast<char>(b);
      }
      ++i;
      continue;
    }
    size_t length = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b < 0xE0 ? 2 : 0;
    bool valid = length > 0 && i + length <= in.size();
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(in[i + k]) & 0xC0) == 0x80;
    }
    if (!valid) {
      escape(&out, b);
      ++i;
      continue;
    }
    if (length == 2 && b == 0xC2 && static_cast<unsigned char>(in[i + 1]) < 0xA0) {
      escape(&out, b);  // C1 control U+0080..U+009F
      escape(&out, static_cast<unsigned char>(in[i + 1]));
    } else {
      out.append(in.substr(i, length));
    }
    i += length;
  }
  return out;
}

}  // namespace

std::string ForTerminal(std::string_view text) { return Printable(text, /*keep_tab=*/false); }

std::string RenderText(const Diagnostic& d, const SourceTexts& sources,
                       bool color) {
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  const char* sev_color = "";
  if (color) {
    sev_color = d.severity == Severity::kError     ? "\033[1;31m"
                : d.severity == Severity::kWarning ? "\033[1;35m"
                                                   : "\033[1;36m";
  }
  std::string out;
  out += bold;
  if (!d.location.file.empty()) {
    out += Printable(MaskSecrets(d.location.file), false);
    if (d.location.known()) {
      out += ":" + std::to_string(d.location.line) + ":" +
             std::to_string(d.location.column);
    }
    out += ": ";
  } else {
    out += "nemoc: ";
  }
  out += reset;
  out += sev_color;
  out += SeverityName(d.severity);
  out += ":";
  out += reset;
  out += " ";
  out += bold;
  out += Printable(MaskSecrets(d.message), /*keep_tab=*/false);
  out += reset;
  out += "\n";
  if (d.location.known()) {
    auto it = sources.find(d.location.file);
    if (it != sources.end()) {
      // Masked in context (a value under HF_TOKEN is found through its key);
      // the caller's sources are masked once per file by the Diagnostics form.
      const std::string raw = MaskSecrets(LineOf(it->second, d.location.line));
      if (!raw.empty()) {
        constexpr size_t kMaxShown = 120;
        const size_t col = static_cast<size_t>(std::max(1, d.location.column));
        // The caret sits under the escaped form of everything before the column.
        const std::string before = Printable(raw.substr(0, std::min(col - 1, raw.size())), true);
        std::string line = Printable(raw, /*keep_tab=*/true);
        if (line.size() > kMaxShown) line = line.substr(0, kMaxShown) + "...";
        out += "  " + line + "\n";
        std::string pad;
        for (size_t i = 0; i < before.size() && i < kMaxShown; ++i) {
          pad += before[i] == '\t' ? '\t' : ' ';
        }
        out += "  " + pad + (color ? "\033[1;32m^\033[0m" : "^") + "\n";
      }
    }
  }
  if (!d.hint.empty()) out += "  hint: " + Printable(MaskSecrets(d.hint), false) + "\n";
  return out;
}

Diagnostics CappedPerField(const Diagnostics& ds, size_t limit) {
  auto group_of = [](const Diagnostic& d) -> std::string {
    const std::string& p = d.location.pointer;
    if (p.empty()) return {};
    std::string key;
    size_t start = 1;
    while (start <= p.size()) {
      size_t end = p.find('/', start);
      if (end == std::string::npos) end = p.size();
      const std::string_view seg(p.data() + start, end - start);
      const bool index = !seg.empty() && seg.find_first_not_of("0123456789") == std::string_view::npos;
      key += "/";
      key += index ? std::string_view("*") : seg;
      start = end + 1;
    }
    const std::string suffix = "unknown-field";
    if (d.code.size() >= suffix.size() &&
        d.code.compare(d.code.size() - suffix.size(), suffix.size(), suffix) == 0) {
      key = key.substr(0, key.rfind('/'));  // the object holding the unknown fields
    }
    return d.code + " " + d.location.file + " " + key;
  };
  // Each diagnostic's group, computed once for both passes.
  std::vector<std::string> groups;
  groups.reserve(ds.items().size());
  std::map<std::string, size_t> seen;
  for (const auto& d : ds.items()) {
    groups.push_back(group_of(d));
    if (!groups.back().empty()) ++seen[groups.back()];
  }
  Diagnostics out;
  std::map<std::string, size_t> shown;
  for (size_t k = 0; k < ds.items().size(); ++k) {
    const Diagnostic& d = ds.items()[k];
    const std::string& g = groups[k];
    if (g.empty()) {
      out.Add(d);
      continue;
    }
    const size_t n = ++shown[g];
    if (n <= limit) out.Add(d);
    if (n == limit && seen[g] > limit) {
      // "/spec/stages/train/peft/targetModules/*" -> spec.stages.train.peft.targetModules[*]
      std::string field;
      const std::string key = g.substr(g.rfind(' ') + 1);
      for (size_t i = 1; i <= key.size() && !key.empty();) {
        size_t end = key.find('/', i);
        if (end == std::string::npos) end = key.size();
        const std::string seg = key.substr(i, end - i);
        field += seg == "*" ? "[*]" : (field.empty() ? "" : ".") + seg;
        i = end + 1;
      }
      Location at;
      at.file = d.location.file;
      out.Add(Diagnostic{Severity::kNote, d.code,
                         std::to_string(seen[g] - limit) + " more " + SeverityName(d.severity) +
                             (seen[g] - limit == 1 ? "" : "s") + " like the " + std::to_string(limit) +
                             " above at " + (field.empty() ? std::string("the document") : field) +
                             " not shown",
                         at, {}});
    }
  }
  return out;
}

std::string RenderText(const Diagnostics& ds, const SourceTexts& sources,
                       bool color) {
  // Every quoted line comes from a masked copy of its whole file, so shapes
  // found through context (a `value:` under `name: HF_TOKEN` on the line
  // before) are masked too.
  SourceTexts masked;
  for (const auto& d : ds.items()) {
    if (!d.location.known() || masked.count(d.location.file) != 0) continue;
    auto it = sources.find(d.location.file);
    if (it != sources.end()) masked.emplace(it->first, MaskSecrets(it->second));
  }
  std::string out;
  for (const auto& d : ds.items()) out += RenderText(d, masked, color);
  return out;
}

namespace {

std::string EscapeGithubData(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string EscapeGithubProperty(const std::string& s) {
  std::string out;
  for (char c : EscapeGithubData(s)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

}  // namespace

std::string RenderGithub(const Diagnostics& ds) {
  std::string out;
  for (const auto& d : ds.items()) {
    const char* kind = d.severity == Severity::kError ? "error" : d.severity == Severity::kWarning ? "warning" : "notice";
    std::vector<std::string> props;
    if (!d.location.file.empty()) props.push_back("file=" + EscapeGithubProperty(Printable(MaskSecrets(d.location.file), false)));
    if (d.location.known()) {
      props.push_back("line=" + std::to_string(d.location.line));
      props.push_back("col=" + std::to_string(d.location.column));
    }
    props.push_back("title=" + EscapeGithubProperty("nemoc " + d.code));
    std::string line = std::string("::") + kind + " ";
    for (size_t i = 0; i < props.size(); ++i) line += (i ? "," : "") + props[i];
    std::string message = Printable(MaskSecrets(d.message), /*keep_tab=*/false);
    if (!d.hint.empty()) message += "\nhint: " + Printable(MaskSecrets(d.hint), /*keep_tab=*/false);
    out += line + "::" + EscapeGithubData(message) + "\n";
  }
  return out;
}

nlohmann::json ToJson(const Diagnostic& d) {
  nlohmann::json j = {{"severity", SeverityName(d.severity)},
                      {"code", d.code},
                      {"message", MaskSecrets(d.message)}};
  if (!d.location.file.empty()) j["file"] = MaskSecrets(d.location.file);
  if (d.location.known()) {
    j["line"] = d.location.line;
    j["column"] = d.location.column;
  }
  if (!d.location.pointer.empty()) j["pointer"] = d.location.pointer;
  if (!d.hint.empty()) j["hint"] = MaskSecrets(d.hint);
  return j;
}

}  // namespace nemoc
