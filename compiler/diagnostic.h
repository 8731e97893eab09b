// Diagnostics are values. Every stage returns them instead of throwing; they
// are rendered once, at the command-line boundary (text with a caret, or JSON).
#ifndef NEMOC_DIAGNOSTIC_H_
#define NEMOC_DIAGNOSTIC_H_

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace nemoc {

/// A place in an input file. Lines and columns are 1-based; line 0 means the
/// position is unknown (the file alone is named).
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
  /// The JSON pointer into the spec the location was found for ("" when none).
  std::string pointer = {};

  bool known() const { return line > 0; }
};

enum class Severity { kError, kWarning, kNote };

struct Diagnostic {
  Severity severity = Severity::kError;
  /// Stable, greppable identifier such as "yaml.duplicate-key".
  std::string code;
  std::string message;
  Location location;
  /// Optional advice shown after the source excerpt ("did you mean ...").
  std::string hint;
};

/// An ordered collection: stages append, callers decide whether to continue.
class Diagnostics {
 public:
  Diagnostic& Add(Diagnostic d);
  Diagnostic& Error(std::string code, std::string message, Location loc = {},
                    std::string hint = {});
  Diagnostic& Warning(std::string code, std::string message, Location loc = {},
                      std::string hint = {});
  void Append(const Diagnostics& other);

  bool has_errors() const;
  size_t error_count() const;
  bool empty() const { return items_.empty(); }
  const std::vector<Diagnostic>& items() const { return items_; }

  /// Sorts by file, line, column (stable), so a report reads top to bottom.
  void SortByLocation();

  /// Removes the diagnostics from index `from` on that `drop` selects (D9: a
  /// spec checked on after errors drops what only those errors caused).
  template <typename Pred>
  void EraseFrom(size_t from, Pred drop) {
    if (from >= items_.size()) return;
    items_.erase(std::remove_if(items_.begin() + static_cast<long>(from), items_.end(), drop), items_.end());
  }

 private:
  std::vector<Diagnostic> items_;
};

/// `ds` with at most `limit` diagnostics per field (E20: 20,000 invalid list
/// items printed 10 MB of errors in 20 s): diagnostics group by code and JSON
/// pointer with list indices as `*` (for an unknown field, by the object it
/// is in). Past the limit a group is one note, "N more ... not shown", at the
/// file. Diagnostics without a pointer are never grouped.
Diagnostics CappedPerField(const Diagnostics& ds, size_t limit = 10);

/// Source texts by file name, used to quote the offending line.
using SourceTexts = std::map<std::string, std::string>;

/// `file:line:col: error: message`, the source line, a caret, then the hint.
/// `text` with control bytes, C1 controls and invalid UTF-8 shown as \xNN
/// escapes: for every path or name printed outside a diagnostic (E14).
std::string ForTerminal(std::string_view text);

std::string RenderText(const Diagnostic& d, const SourceTexts& sources,
                       bool color = false);
std::string RenderText(const Diagnostics& ds, const SourceTexts& sources,
                       bool color = false);
nlohmann::json ToJson(const Diagnostic& d);
/// GitHub Actions workflow commands, one line per diagnostic:
///   ::error file=F,line=L,col=C,title=CODE::MESSAGE (hint)
/// (warning, notice), masked like the text form; '%', CR, LF escaped in the
/// message, and ':' and ',' too in properties (actions/toolkit command.ts).
std::string RenderGithub(const Diagnostics& ds);

const char* SeverityName(Severity s);

}  // namespace nemoc

#endif  // NEMOC_DIAGNOSTIC_H_
