// Where each value of a loaded spec came from: JSON pointer -> line:column.
#ifndef NEMOC_SOURCE_MAP_H_
#define NEMOC_SOURCE_MAP_H_

#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "diagnostic.h"

namespace nemoc {

/// 1-based position in a source file.
struct SourcePos {
  int line = 0;
  int column = 0;
};

class SourceMap {
 public:
  explicit SourceMap(std::string file = {}) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }

  /// Position of the value at `pointer` (e.g. "/spec/stages/train/nodes").
  void SetValue(const std::string& pointer, SourcePos pos);
  /// Position of the mapping key that introduces the value at `pointer`.
  void SetKey(const std::string& pointer, SourcePos pos);

  /// The location of `pointer`; when the pointer itself is not recorded (a
  /// default, a missing field) the nearest recorded ancestor is used.
  /// `prefer_key` points at the key ("replcas:") rather than its value.
  Location Locate(const std::string& pointer, bool prefer_key = false) const;

  /// The pointer of the value written at (line, column) or, failing that,
  /// of the last value that starts before it (a comment's enclosing value);
  /// "" when nothing starts before it. For diagnostics found in the text.
  std::string PointerAt(int line, int column) const;

  bool Has(const std::string& pointer) const {
    return values_.count(pointer) > 0 || overrides_.count(pointer) > 0;
  }

  /// Marks the value at `pointer` (and everything below it) as coming from
  /// somewhere else, e.g. a `--set` flag; Locate then returns `origin`.
  void SetOverride(const std::string& pointer, Location origin);

  /// Forgets every position at `pointer` and below it (a value replaced
  /// wholesale, e.g. by a target's overrides).
  void Erase(const std::string& pointer);
  /// Positions recorded at `from` and below it are also recorded at the
  /// same places under `to`: a value copied from `from` to `to` is located
  /// where it was written.
  void Graft(const std::string& from, const std::string& to);

 private:
  Location LocateUnlabelled(const std::string& pointer, bool prefer_key) const;

  std::string file_;
  std::unordered_map<std::string, SourcePos> values_;
  std::unordered_map<std::string, SourcePos> keys_;
  std::unordered_map<std::string, Location> overrides_;
};

/// A loaded spec: the JSON value, its source text and where every value came from.
struct Document {
  std::string file;
  std::string text;
  nlohmann::json root;
  SourceMap map;
};

/// Escapes one reference token per RFC 6901 ('~' -> "~0", '/' -> "~1").
std::string EscapePointerToken(const std::string& token);
/// True when `pointer` is `root` or below it ("/a/b" is below "/a", "/ab" is not).
bool PointerAtOrBelow(const std::string& pointer, const std::string& root);
/// "/spec/stages/train" -> "spec.stages.train" (for messages).
std::string PointerToDotted(const std::string& pointer);

}  // namespace nemoc

#endif  // NEMOC_SOURCE_MAP_H_
