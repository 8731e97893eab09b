#include "diagnostic.h"

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

}  // namespace

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
    out += d.location.file;
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
  out += d.message;
  out += reset;
  out += "\n";
  if (d.location.known()) {
    auto it = sources.find(d.location.file);
    if (it != sources.end()) {
      std::string line = LineOf(it->second, d.location.line);
      if (!line.empty()) {
        constexpr size_t kMaxShown = 120;
        if (line.size() > kMaxShown) line = line.substr(0, kMaxShown) + "...";
        out += "  " + line + "\n";
        int col = std::max(1, d.location.column);
        std::string pad;
        for (int i = 1; i < col && static_cast<size_t>(i - 1) < line.size(); ++i) {
          pad += line[i - 1] == '\t' ? '\t' : ' ';
        }
        out += "  " + pad + (color ? "\033[1;32m^\033[0m" : "^") + "\n";
      }
    }
  }
  if (!d.hint.empty()) out += "  hint: " + d.hint + "\n";
  return out;
}

std::string RenderText(const Diagnostics& ds, const SourceTexts& sources,
                       bool color) {
  std::string out;
  for (const auto& d : ds.items()) out += RenderText(d, sources, color);
  return out;
}

nlohmann::json ToJson(const Diagnostic& d) {
  nlohmann::json j = {{"severity", SeverityName(d.severity)},
                      {"code", d.code},
                      {"message", d.message}};
  if (!d.location.file.empty()) j["file"] = d.location.file;
  if (d.location.known()) {
    j["line"] = d.location.line;
    j["column"] = d.location.column;
  }
  if (!d.hint.empty()) j["hint"] = d.hint;
  return j;
}

}  // namespace nemoc
