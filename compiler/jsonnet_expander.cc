#include "jsonnet_expander.h"

#include <algorithm>

#include "content_hash.h"
#include "contracts.h"
#include "eval_watchdog.h"
#include "file_reader.h"
#include "stages.h"

#include <cstring>
#include <functional>
#include <optional>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>

extern "C" {
#include <libjsonnet.h>
}

namespace nemoc {

namespace fs = std::filesystem;

// Profile and runtime names are spliced into generated entry snippets: only
// names the schema allows (lowercase, digits, '-') ever get there.
bool SafeLibraryName(const std::string& name) {
  static const std::regex pattern("^[a-z][a-z0-9-]{0,62}$");
  return std::regex_match(name, pattern);
}

namespace {

constexpr size_t kMaxLibraryFileBytes = 4 << 20;
constexpr const char kEntryFile[] = "<nemoc-entry>";
// The prefix of nemoc's own libraries in imports (ResolveImport).
constexpr const char kNamespace[] = "nemoc/";
// The generated stage table (StagesSource), and the name of the file it
// stands for at the first library root; a plug-in table's is
// .nemoc-<dir>.libsonnet (PluginTablePath).
constexpr const char kStagesImport[] = "nemoc/stages.libsonnet";
constexpr const char kStagesFile[] = ".nemoc-stages.libsonnet";

char* CopyToJsonnet(JsonnetVm* vm, const std::string& s) {
  char* out = jsonnet_realloc(vm, nullptr, s.size() + 1);
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

struct CallbackContext {
  JsonnetExpander* expander;
  JsonnetVm* vm;
};

char* ImportCallback(void* ctx, const char* base, const char* rel, char** found_here,
                     int* success);

// The runtimes of a library root: the files of its runtimes/ directory
// (runtime.libsonnet: a runtime is one file there).
// The <name>.libsonnet files of `dir` whose names a spec may use.
std::set<std::string> LibraryNames(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code file_ec;
    const std::string name = entry.path().stem().string();
    if (entry.path().extension() == ".libsonnet" && entry.is_regular_file(file_ec) && SafeLibraryName(name)) {
      names.insert(name);
    }
  }
  return names;
}

std::set<std::string> RuntimeNames(const fs::path& root) { return LibraryNames(root / "runtimes"); }

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

std::string JsonnetExpander::ShownPath(const std::string& path) const {
  for (size_t i = 0; i < roots_.size(); ++i) {
    if (StartsWith(path, roots_[i])) return shown_roots_[i] + path.substr(roots_[i].size());
    // The root itself (an import error lists the roots searched).
    if (path + "/" == roots_[i]) return shown_roots_[i];
  }
  return path;
}

// The platform component table (libsonnet/platform.libsonnet imports it as
// nemoc/components.libsonnet): generated from the files of
// libsonnet/components/ and of each --jpath directory's components/ (issue
// #48: a component is one file, libsonnet/component.libsonnet). It "is" a
// file at the first root, so that a component of your own, imported as
// components/<name>.libsonnet, is found by root order like any import, and
// so that build stamps record it (its text changes with the set of files).
std::string JsonnetExpander::PluginTablePath(const PluginTable& table) const {
  return roots_.empty() ? std::string() : roots_.front() + ".nemoc-" + table.dir + ".libsonnet";
}

const std::string& JsonnetExpander::PluginTableSource(const PluginTable& table) const {
  auto memo = plugin_sources_.find(table.dir);
  if (memo != plugin_sources_.end()) return memo->second;
  std::string text = table.header + "{\n";
  for (const auto& [name, entry] : table.entries) {
    const std::string imported = "import '" + entry.import + "'";
    std::string members;
    if (!table.described.empty()) {
      // A description that cannot be read or lacks a member: the library's
      // own (Compiler::Init has refused a --jpath description its contract
      // refuses, engines.h).
      std::string json_text;
      FileReader::Failure failure;
      const nlohmann::json about =
          reader_->ReadFile(entry.description, kMaxLibraryFileBytes, &json_text, &failure) == FileReader::Status::kOkay
              ? nlohmann::json::parse(json_text, nullptr, false)
              : nlohmann::json();
      for (const auto& member : table.described) {
        // A JSON string is a Jsonnet string literal.
        if (about.is_object() && about.contains(member) && about[member].is_string()) {
          members += " " + member + ":: " + about[member].dump() + ",";
        }
      }
    }
    text += "  '" + name + "': " + (members.empty() ? imported : "(" + imported + ") + {" + members + " }") + ",\n";
  }
  // The names of the --jpath directories' files (hidden, under a name no
  // file can have): what the libraries check against the contract
  // (platform.libsonnet: a component's lacking).
  std::string own;
  for (const auto& [name, entry] : table.entries) {
    if (entry.user) own += (own.empty() ? "" : ", ") + std::string("'") + name + "'";
  }
  if (!own.empty()) text += "  '$own':: [" + own + "],\n";
  return plugin_sources_.emplace(table.dir, text + "}\n").first->second;
}

std::string JsonnetExpander::StagesPath() const {
  return roots_.empty() ? std::string() : roots_.front() + kStagesFile;
}

const std::string& JsonnetExpander::StagesSource() const {
  if (!stages_source_.empty()) return stages_source_;
  // An expander the compiler did not hand its table (UseStageTable): the
  // same reading of the same roots (StageTable::Load); Compiler::Init has
  // reported any description it refuses.
  std::vector<std::string> jpaths(roots_.begin(), roots_.begin() + std::min(user_roots_, roots_.size()));
  StageTable table;
  Diagnostics reported;
  if (user_roots_ < roots_.size()) table.Load(roots_[user_roots_], jpaths, nullptr, &reported);
  stages_source_ = StageTableSource(table.stages());
  return stages_source_;
}

JsonnetExpander::JsonnetExpander(std::vector<std::string> library_roots, size_t user_roots,
                                 FileReader* reader)
    : reader_(reader != nullptr ? reader : &RealFiles()) {
  plugin_tables_ = {
      {"components",
       "// Generated by nemoc: the platform components of libsonnet/components/ and of\n"
       "// each --jpath directory's components/ (libsonnet/component.libsonnet).\n",
       {},
       {}},
      {"engines",
       "// Generated by nemoc: the GitOps engines of libsonnet/engines/ and of each\n"
       "// --jpath directory's engines/ (libsonnet/engine.libsonnet, compiler/engines.h),\n"
       "// with what people read about each from its description, <name>.json.\n",
       {"title", "clusterBootstrapNote", "editWhileRunning"},
       {}},
  };
  for (size_t i = 0; i < library_roots.size(); ++i) {
    std::error_code ec;
    fs::path canonical = fs::canonical(library_roots[i], ec);
    if (ec || !fs::is_directory(canonical, ec)) continue;
    std::string s = canonical.string();
    if (s.back() != '/') s += '/';
    roots_.push_back(s);
    std::string shown = fs::path(library_roots[i]).lexically_normal().string();
    if (shown.empty() || shown.back() != '/') shown += '/';
    shown_roots_.push_back(shown);
    // The built-in runtimes: those of the built-in roots; the runtimes of
    // your own: those of the --jpath ones.
    if (i < user_roots) {
      ++user_roots_;
      for (const auto& name : RuntimeNames(canonical)) user_runtimes_.insert(name);
      for (const auto& name : LibraryNames(canonical)) user_profiles_.insert(name);
      // A component or engine of your own, found from the generated table by
      // root order like any import (PluginTableSource); it replaces a
      // built-in one.
      for (auto& table : plugin_tables_) {
        for (const auto& name : LibraryNames(canonical / table.dir)) {
          PluginEntry& entry = table.entries[name];
          if (entry.user) continue;  // an earlier --jpath directory has it: imports find that one
          entry = {table.dir + "/" + name + ".libsonnet", (canonical / table.dir / (name + ".json")).string(), true};
        }
      }
      continue;
    }
    for (const auto& name : RuntimeNames(canonical)) builtin_runtimes_.insert(name);
    for (auto& table : plugin_tables_) {
      for (const auto& name : LibraryNames(canonical / table.dir)) {
        table.entries.emplace(name, PluginEntry{"nemoc/" + table.dir + "/" + name + ".libsonnet",
                                                (canonical / table.dir / (name + ".json")).string(), false});
      }
    }
    if (canonical.filename() == "profiles") profile_root_ = true;
  }
  vm_ = jsonnet_make();
  jsonnet_max_trace(vm_, 30);
  // Generous GC thresholds: one evaluation per spec, short-lived process.
  jsonnet_gc_min_objects(vm_, 100000);
}

JsonnetExpander::~JsonnetExpander() {
  if (vm_ != nullptr) jsonnet_destroy(vm_);
}

// Where nemoc/<below> is in the built-in roots: <below> in the first one
// (libsonnet/), <path> in a later one called <dir> for below = <dir>/<path>
// (profiles/).
std::vector<std::string> JsonnetExpander::BuiltinCandidates(const std::string& below) const {
  std::vector<std::string> candidates;
  if (user_roots_ < roots_.size()) candidates.push_back((fs::path(roots_[user_roots_]) / below).string());
  for (size_t i = user_roots_ + 1; i < roots_.size(); ++i) {
    const std::string dir = fs::path(roots_[i]).parent_path().filename().string() + "/";
    if (StartsWith(below, dir)) candidates.push_back((fs::path(roots_[i]) / below.substr(dir.size())).string());
  }
  return candidates;
}

std::string JsonnetExpander::BuiltinReplacedBy(const std::string& rel) const {
  // What the same import finds when no --jpath directory has the file.
  std::string below;
  const fs::path path(rel);
  const std::string stem = path.stem().string();
  if (StartsWith(rel, kNamespace)) {
    below = rel.substr(std::string(kNamespace).size());  // nemoc/<path>: always namespaced
  } else if (path.extension() == ".libsonnet" && SafeLibraryName(stem) &&
             (path.parent_path() == "runtimes" || path.parent_path() == "components" ||
              path.parent_path() == "engines")) {
    // RuntimeImport: runtimes/<name>.libsonnet of a --jpath directory first;
    // a component or engine of your own replaces the built-in one
    // (PluginTableSource).
    below = rel;
  } else if (path.extension() == ".libsonnet" && SafeLibraryName(stem) && !path.has_parent_path() &&
             profile_root_) {
    below = "profiles/" + rel;  // ProfileImport: <name>.libsonnet of a --jpath directory first
  } else {
    return "";  // any other file is found only by imports of your own
  }
  for (const auto& candidate : BuiltinCandidates(below)) {
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return candidate;
  }
  return "";
}

bool JsonnetExpander::ResolveImport(const std::string& base, const std::string& rel,
                                    std::string* found, std::string* content,
                                    std::string* err) {
  if (!FindImport(base, rel, found, err) || !ReadImport(rel, *found, content, err)) return false;
  bool seen = false;
  for (const auto& f : imported_) seen = seen || f.path == *found;
  if (!seen) imported_.push_back({*found, *content});
  import_calls_.push_back({base, rel, *found});
  return true;
}

bool JsonnetExpander::ImportDigest(const std::string& base, const std::string& rel, std::string* found,
                                   std::string* digest, std::string* err) {
  if (!FindImport(base, rel, found, err)) return false;
  auto memo = digest_memo_.find(*found);
  if (memo == digest_memo_.end()) {
    std::string content;
    if (!ReadImport(rel, *found, &content, err)) return false;
    memo = digest_memo_.emplace(*found, Digest128Hex(content)).first;
  }
  *digest = memo->second;
  return true;
}

bool JsonnetExpander::ReadImport(const std::string& rel, const std::string& found, std::string* content,
                                 std::string* err) {
  for (const auto& table : plugin_tables_) {
    if (found == PluginTablePath(table)) {
      *content = PluginTableSource(table);
      return true;
    }
  }
  if (found == StagesPath()) {
    *content = StagesSource();
    return true;
  }
  FileReader::Failure failure;
  const FileReader::Status status = reader_->ReadFile(found, kMaxLibraryFileBytes, content, &failure);
  if (status == FileReader::Status::kTooLarge) {
    *err = "import '" + rel + "' is too large or unreadable";
    return false;
  }
  if (status != FileReader::Status::kOkay) {
    *err = "cannot read " + found + (failure.reason.empty() ? "" : ": " + failure.reason);
    return false;
  }
  if (content->find('\0') != std::string::npos) {
    *err = "import '" + rel + "' contains a NUL byte";
    return false;
  }
  return true;
}

bool JsonnetExpander::FindImport(const std::string& base, const std::string& rel, std::string* found,
                                 std::string* err) {
  for (const auto& table : plugin_tables_) {
    if (rel == table.import() && !roots_.empty()) {
      *found = PluginTablePath(table);
      return true;
    }
  }
  if (rel == kStagesImport && !roots_.empty()) {
    *found = StagesPath();
    return true;
  }
  if (rel.empty()) {
    *err = "empty import path";
    return false;
  }
  if (rel.front() == '/') {
    *err = "import '" + rel + "' is an absolute path; imports are confined to the library roots";
    return false;
  }
  if (rel.find('\\') != std::string::npos) {
    *err = "import '" + rel + "' contains a backslash";
    return false;
  }
  for (const auto& segment : fs::path(rel)) {
    if (segment == "..") {
      *err = "import '" + rel + "' uses '..'; imports are confined to the library roots "
             "(import by name from a root instead)";
      return false;
    }
  }
  std::vector<std::string> candidates;
  if (StartsWith(rel, kNamespace)) {
    // nemoc's own libraries: nemoc/<path> is <path> below the first built-in
    // root (libsonnet/), nemoc/<dir>/<path> <path> below a later built-in root
    // called <dir> (nemoc/profiles/...). A --jpath directory replaces one only
    // with a file at the same nemoc/ path (Compiler warns): a library of your
    // own never shadows the ones the built-in libraries import.
    for (size_t i = 0; i < user_roots_ && i < roots_.size(); ++i) {
      candidates.push_back((fs::path(roots_[i]) / rel).string());
    }
    const std::vector<std::string> builtin = BuiltinCandidates(rel.substr(std::string(kNamespace).size()));
    candidates.insert(candidates.end(), builtin.begin(), builtin.end());
  } else {
    // Any other name: the importing file's directory first (when it is inside
    // a root), then the roots in order, --jpath ones first.
    if (!base.empty()) {
      for (const auto& root : roots_) {
        if (StartsWith(base, root)) {
          candidates.push_back((fs::path(base) / rel).lexically_normal().string());
          break;
        }
      }
    }
    for (const auto& root : roots_) candidates.push_back((fs::path(root) / rel).string());
  }
  for (const auto& candidate : candidates) {
    std::error_code ec;
    // Resolved once per path and thread: a no-op build replays every spec's
    // imports, and fs::canonical is a readlink per path component.
    auto memo = canonical_memo_.find(candidate);
    if (memo == canonical_memo_.end()) {
      std::string resolved;
      if (fs::is_regular_file(candidate, ec)) {
        fs::path path = fs::canonical(candidate, ec);
        if (!ec) resolved = path.string();
      }
      memo = canonical_memo_.emplace(candidate, std::move(resolved)).first;
    }
    if (memo->second.empty()) continue;
    const fs::path canonical = memo->second;
    bool inside = false;
    for (const auto& root : roots_) inside = inside || StartsWith(canonical.string(), root);
    if (!inside) {
      *err = "import '" + rel + "' resolves to " + canonical.string() +
             ", outside the library roots (a symbolic link?)";
      return false;
    }
    *found = canonical.string();
    return true;
  }
  std::string searched;
  for (const auto& root : roots_) searched += (searched.empty() ? "" : ", ") + ShownPath(root);
  *err = "import '" + rel + "' not found in the library roots (" + searched + ")";
  return false;
}

namespace {

char* ImportCallback(void* ctx, const char* base, const char* rel, char** found_here,
                     int* success) {
  auto* context = static_cast<CallbackContext*>(ctx);
  std::string found, content, err;
  JsonnetVm* vm = context->vm;
  if (context->expander->ResolveImport(base ? base : "", rel ? rel : "", &found, &content,
                                       &err)) {
    *found_here = CopyToJsonnet(vm, found);
    *success = 1;
    return CopyToJsonnet(vm, content);
  }
  *success = 0;
  return CopyToJsonnet(vm, err);
}

}  // namespace

namespace {

// An `import '<path>'` expression in a library file: its byte range and path.
struct ImportSite {
  size_t begin = 0, end = 0;
  std::string path;
  bool text = false;  // importstr: the file's content as a string
};

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }

// Skips whitespace and comments from `i`; returns the next position.
size_t SkipSpace(const std::string& s, size_t i) {
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '#' || (c == '/' && i + 1 < s.size() && s[i + 1] == '/')) {
      i = s.find('\n', i);
      if (i == std::string::npos) return s.size();
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      i = s.find("*/", i + 2);
      if (i == std::string::npos) return s.size();
      i += 2;
    } else {
      break;
    }
  }
  return i;
}

// Finds every `import "..."` / `import '...'` (and `importstr`) in Jsonnet
// source, skipping comments and string literals. False when the source uses
// something this small scanner does not handle (importbin, a path with an escape
// or in a verbatim/text-block string, an unterminated literal): the caller
// then lets libjsonnet import files itself.
bool FindImports(const std::string& s, std::vector<ImportSite>* sites) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t next = SkipSpace(s, i);
    if (next != i) {
      i = next;
      continue;
    }
    const char c = s[i];
    if (c == '\'' || c == '"') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != c) j += (s[j] == '\\') ? 2 : 1;
      if (j >= s.size()) return false;
      i = j + 1;
    } else if (c == '@' && i + 1 < s.size() && (s[i + 1] == '\'' || s[i + 1] == '"')) {
      const char q = s[i + 1];
      size_t j = i + 2;
      for (;;) {
        j = s.find(q, j);
        if (j == std::string::npos) return false;
        if (j + 1 < s.size() && s[j + 1] == q) {
          j += 2;  // a doubled quote is a literal quote
          continue;
        }
        break;
      }
      i = j + 1;
    } else if (s.compare(i, 3, "|||") == 0) {
      // A text block ends at a line whose first non-blank characters are |||.
      size_t j = i + 3;
      for (;;) {
        j = s.find('\n', j);
        if (j == std::string::npos) return false;
        size_t k = j + 1;
        while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
        if (s.compare(k, 3, "|||") == 0) {
          i = k + 3;
          break;
        }
        j = k;
      }
    } else if (IsIdentStart(c)) {
      size_t j = i;
      while (j < s.size() && IsIdentChar(s[j])) ++j;
      const std::string_view word(s.data() + i, j - i);
      if (word == "importbin") return false;
      if (word == "import" || word == "importstr") {
        const size_t k = SkipSpace(s, j);
        if (k >= s.size() || (s[k] != '\'' && s[k] != '"')) return false;
        const size_t close = s.find(s[k], k + 1);
        if (close == std::string::npos) return false;
        std::string path = s.substr(k + 1, close - k - 1);
        if (path.find_first_of("\\\n") != std::string::npos) return false;
        sites->push_back({i, close + 1, std::move(path), word == "importstr"});
        j = close + 1;
      }
      i = j;
    } else {
      ++i;
    }
  }
  return true;
}

// `content` as a Jsonnet string literal whose value is `content` as
// libjsonnet's own importstr gives it. A verbatim string @'...' (google/jsonnet
// v0.18.0 core/lexer.cpp:578-605: every byte up to the closing quote is kept,
// a doubled quote is one quote) needs no escapes and no unescaping: the
// desugarer unescapes only the other kinds (core/desugarer.cpp:845-849). Its
// bytes reach the program through decode_utf8 (core/parser.cpp:693-695,
// Token::data32), as importstr's do (core/vm.cpp:2070), so invalid UTF-8 turns
// out the same. The lexer stops at a NUL byte (lexer.cpp:588), which
// ResolveImport refuses in any imported file. The JSON form this replaces
// (escaped by nlohmann, unescaped by libjsonnet) cost ~17 M instructions, 1.4 %
// of one A4 target, for the 250 KB of tables a build imports.
std::string TextLiteral(const std::string& content) {
  std::string out;
  out.reserve(content.size() + content.size() / 64 + 3);
  out += "@'";
  size_t from = 0;
  for (size_t quote = content.find('\''); quote != std::string::npos; quote = content.find('\'', from)) {
    out.append(content, from, quote + 1 - from);
    out += '\'';
    from = quote + 1;
  }
  out.append(content, from, std::string::npos);
  out += '\'';
  return out;
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

}  // namespace

// libjsonnet 0.18 desugars `a == b` and `a != b` to `std.equals(a, b)`
// through the variable `std` (google/jsonnet v0.18.0 core/desugarer.cpp:138,
// :204, :731), and std.equals is Jsonnet code (stdlib/std.jsonnet:1518-1552:
// two std.type calls, four primitiveEquals) -- 28 % of the evaluation steps of
// a synthetic spec (issue #47's profile). std.isString and its siblings are
// `std.type(v) == '...'` (std.jsonnet:28-33), so each costs a std.equals too.
// The bundle shadows `std` with the standard library extended by the same
// functions written with natives: for primitive operands `==` is one
// primitiveEquals (false across types, as std.equals's first test), arrays
// and objects still go to std.equals, whose recursion keeps using these. Same
// results, errors included (functions: "cannot test equality of functions").
// std.jsonnet's own functions call these too (its `std` is `self`,
// std.jsonnet:25). startsWith compares with one primitiveEquals (std.jsonnet:45-49
// takes strings only); flattenArrays is the native join with an empty array
// separator (one pass, not std.jsonnet:853's foldl of `+`; it skips a null
// element where the foldl would fail); split is the native splitLimit after
// std.jsonnet:112-116's length assert (splitLimit checks the types itself).
constexpr std::string_view kFasterStd =
    "local __nemocStd = std; local std = __nemocStd + {"
    " equals(a, b):: local t = __nemocStd.type(a);"
    " if __nemocStd.primitiveEquals(t, 'object') || __nemocStd.primitiveEquals(t, 'array')"
    " then __nemocStd.equals(a, b) else __nemocStd.primitiveEquals(a, b),"
    " isString(v):: __nemocStd.primitiveEquals(__nemocStd.type(v), 'string'),"
    " isNumber(v):: __nemocStd.primitiveEquals(__nemocStd.type(v), 'number'),"
    " isBoolean(v):: __nemocStd.primitiveEquals(__nemocStd.type(v), 'boolean'),"
    " isObject(v):: __nemocStd.primitiveEquals(__nemocStd.type(v), 'object'),"
    " isArray(v):: __nemocStd.primitiveEquals(__nemocStd.type(v), 'array'),"
    " isFunction(v):: __nemocStd.primitiveEquals(__nemocStd.type(v), 'function'),"
    " startsWith(a, b):: if __nemocStd.length(a) < __nemocStd.length(b) then false"
    " else __nemocStd.primitiveEquals(__nemocStd.substr(a, 0, __nemocStd.length(b)), b),"
    " flattenArrays(arrs):: __nemocStd.join([], arrs),"
    " split(str, c):: assert __nemocStd.primitiveEquals(__nemocStd.length(c), 1) :"
    " 'std.split second parameter should have length 1, got ' + __nemocStd.length(c);"
    " __nemocStd.splitLimit(str, c, -1),"
    " };";

// libjsonnet 0.18 lexes, parses, desugars and analyses its whole standard
// library again for every file an evaluation imports (~20 ms each: nine
// tenths of expanding a spec). So the expander first tries ONE program: every
// library file the entry reaches is bound to a local of a generated program,
// each `import '<path>'` replaced by the name of that local (padded to the
// same length, so lines and columns inside each file stay as written). Files
// are resolved by the same ResolveImport, so imports are still confined to the
// roots and recorded for build stamps. Locals are lazy like imports; an import
// that does not resolve becomes an error raised only if it is used.
bool JsonnetExpander::Bundle(const std::string& entry, std::string* program) {
  struct File {
    std::string path;     // canonical
    std::string content;  // imports rewritten
  };
  std::vector<File> files;
  std::map<std::string, size_t> index_of;               // canonical path -> local
  std::map<std::pair<std::string, std::string>, std::string> resolved;  // (dir, rel) -> local name
  std::vector<std::string> failures;                    // error locals, in order
  std::vector<std::string> texts;                       // importstr contents, as string literals
  std::map<std::string, size_t> text_of;                // canonical path -> text local
  // Rewrites `text` (found in directory `dir`), visiting newly reached files
  // depth first in source order, the order libjsonnet would first import
  // them in if it forced every import.
  std::function<bool(const std::string&, std::string*)> rewrite =
      [&](const std::string& dir, std::string* text) {
        std::vector<ImportSite> sites;
        if (!FindImports(*text, &sites)) return false;
        std::vector<std::string> names;
        for (const ImportSite& site : sites) {
          std::string& name = resolved[{dir, (site.text ? "str:" : "") + site.path}];
          if (name.empty()) {
            std::string found, content, err;
            if (!ResolveImport(dir, site.path, &found, &content, &err)) {
              name = "__nemocE" + std::to_string(failures.size());
              failures.push_back(std::string(site.text ? "importstr '" : "import '") + site.path + "': " + err);
            } else if (site.text) {
              // importstr: the content as a string literal; never parsed as
              // Jsonnet.
              auto [it, added] = text_of.emplace(found, texts.size());
              if (added) texts.push_back(TextLiteral(content));
              name = "__nemocS" + std::to_string(it->second);
            } else if (auto known = index_of.find(found); known != index_of.end()) {
              name = "__nemoc" + std::to_string(known->second);
            } else {
              const size_t index = files.size();
              index_of.emplace(found, index);
              name = "__nemoc" + std::to_string(index);
              files.push_back({found, std::move(content)});
              std::string body = files[index].content;
              if (!rewrite(DirOf(found), &body)) return false;
              files[index].content = std::move(body);
            }
          }
          names.push_back(name);
        }
        // Back to front, so the offsets of earlier sites stay valid.
        for (size_t i = sites.size(); i-- > 0;) {
          const size_t length = sites[i].end - sites[i].begin;
          if (names[i].size() > length) return false;
          text->replace(sites[i].begin, length, names[i] + std::string(length - names[i].size(), ' '));
        }
        return true;
      };
  std::string body = entry;
  if (!rewrite("", &body)) return false;
  if (files.empty()) return false;
  // Line 1 also shadows `std` for every bundled file (kFasterStd); the
  // files' own lines follow unchanged.
  std::string out = std::string(kFasterStd) + " local\n";
  for (size_t i = 0; i < files.size(); ++i) {
    out += "  __nemoc" + std::to_string(i) + " = (\n" + files[i].content + "\n),\n";
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    out += "  __nemocS" + std::to_string(i) + " = " + texts[i] + ",\n";
  }
  for (size_t i = 0; i < failures.size(); ++i) {
    out += "  __nemocE" + std::to_string(i) + " = error " + nlohmann::json(failures[i]).dump() + ",\n";
  }
  out.resize(out.size() - 2);  // the last ",\n"
  *program = out + ";\n" + body;
  return true;
}

void JsonnetExpander::AddProfiles(const nlohmann::json& normalized, std::set<std::string>* profiles,
                                  std::set<std::string>* runtimes) const {
  for (const auto& target : normalized["spec"]["targets"]) {
    const std::string profile = target["profile"].get<std::string>();
    profiles->insert(profile);
    if (target.contains("runtime") && target["runtime"].is_string()) {
      runtimes->insert(target["runtime"].get<std::string>());
    } else if (user_profiles_.count(profile) != 0 && default_runtime_) {
      // A built-in profile runs a built-in runtime, which every evaluation has.
      const std::string runtime = default_runtime_(profile);
      if (user_runtimes_.count(runtime) != 0) runtimes->insert(runtime);
    }
  }
}

// How an entry imports runtime `name`: a --jpath directory's
// runtimes/<name>.libsonnet when one has it (first, like profiles), else the
// built-in one.
std::string JsonnetExpander::RuntimeImport(const std::string& name) const {
  return (user_runtimes_.count(name) != 0 ? "runtimes/" : "nemoc/runtimes/") + name + ".libsonnet";
}

// How an entry imports profile `name`: a --jpath directory's <name>.libsonnet
// when one has it, else the built-in one in nemoc's profiles/ (never a
// library of libsonnet/ that happens to have the name); by plain name when
// the roots have no built-in profiles/ (a single library root, as in tests).
std::string JsonnetExpander::ProfileImport(const std::string& name) const {
  const bool plain = user_profiles_.count(name) != 0 || !profile_root_;
  return (plain ? "" : "nemoc/profiles/") + name + ".libsonnet";
}

// The entry point: imports exactly the profiles named and the runtimes (the
// built-in ones and those named), by name, and ends in `call` (the
// top-level function).
bool JsonnetExpander::EntrySnippet(const std::set<std::string>& profiles, const std::set<std::string>& runtimes,
                                   const std::string& call, std::string* snippet, std::string* error) const {
  *snippet = "local nemoc = import 'nemoc/nemoc.libsonnet';\nlocal profiles = {\n";
  for (const auto& profile : profiles) {
    if (!SafeLibraryName(profile)) {
      *error = "invalid profile name '" + profile + "'";
      return false;
    }
    *snippet += "  '" + profile + "': import '" + ProfileImport(profile) + "',\n";
  }
  *snippet += "};\nlocal runtimes = {\n";
  for (const auto& runtime : runtimes) {
    if (!SafeLibraryName(runtime)) {
      *error = "invalid runtime name '" + runtime + "'";
      return false;
    }
    *snippet += "  '" + runtime + "': import '" + RuntimeImport(runtime) + "',\n";
  }
  *snippet += "};\n" + call + "\n";
  return true;
}

namespace {

// One spec (`spec`, `only_target`) or a batch (`specs`: every target of
// each). libjsonnet keeps a VM's top-level arguments from one evaluation to
// the next, so every evaluation sets all three. Specs arrive as JSON text:
// std.parseJson (native) makes plain data whose fields cost nothing to read
// again, where a Jsonnet object literal (a code argument) rebuilds its nested
// objects on every access (-12 % of a whole-pipeline evaluation).
constexpr char kCall[] =
    "function(spec=null, only_target='', specs=null)\n"
    "  if specs == null then nemoc.build(std.parseJson(spec), profiles, runtimes, only_target)\n"
    "  else [nemoc.build(s, profiles, runtimes, '') for s in std.parseJson(specs)]";

}  // namespace

bool JsonnetExpander::RunEntry(const std::string& program, const std::string* spec,
                               const std::string& only_target, const std::string* specs,
                               std::string* text) {
  // libjsonnet keeps top-level arguments between evaluations: set all three.
  auto json_or_null = [&](const char* name, const std::string* value) {
    if (value != nullptr) {
      jsonnet_tla_var(vm_, name, value->c_str());
    } else {
      jsonnet_tla_code(vm_, name, "null");
    }
  };
  json_or_null("spec", spec);
  jsonnet_tla_var(vm_, "only_target", only_target.c_str());
  json_or_null("specs", specs);
  return EvaluateSnippet(program, text);
}

bool JsonnetExpander::EvaluateSnippet(const std::string& program, std::string* text) {
  std::optional<EvalWatch> watch;
  if (!EvalWatch::ActiveOnThisThread()) watch.emplace(watch_label_);
  CallbackContext context{this, vm_};
  jsonnet_import_callback(vm_, &ImportCallback, &context);
  int failed = 0;
  char* output = jsonnet_evaluate_snippet(vm_, kEntryFile, program.c_str(), &failed);
  *text = output != nullptr ? output : "";
  jsonnet_realloc(vm_, output, 0);
  return failed == 0;
}

bool JsonnetExpander::RecordImports(const nlohmann::json& normalized) {
  imported_.clear();
  import_calls_.clear();
  std::set<std::string> profiles;
  std::set<std::string> runtimes = builtin_runtimes_;
  AddProfiles(normalized, &profiles, &runtimes);
  std::string snippet, program, error;
  bundled_ = EntrySnippet(profiles, runtimes, kCall, &snippet, &error) && Bundle(snippet, &program);
  return bundled_;
}

bool JsonnetExpander::ExpandBatch(const std::vector<BatchSpec>& specs,
                                  std::vector<std::map<std::string, TargetExpansion>>* outs,
                                  std::vector<Diagnostics>* diags, std::vector<bool>* ok) {
  // The dump for bench/ is per spec: leave it to Expand.
  if (!dump_dir_.empty() || specs.empty()) return false;
  std::set<std::string> profiles;
  std::set<std::string> runtimes = builtin_runtimes_;
  std::string params = "[";
  for (const auto& spec : specs) {
    AddProfiles(*spec.normalized, &profiles, &runtimes);
    if (params.size() > 1) params += ",\n";
    params += spec.normalized->dump();
  }
  params += "]";
  // Every spec sees the runtimes its own build would (the built-in ones and
  // those it names): a batch naming a --jpath runtime is expanded spec by spec.
  if (runtimes != builtin_runtimes_) return false;
  std::string snippet, program, error;
  imported_.clear();
  import_calls_.clear();
  if (!EntrySnippet(profiles, runtimes, kCall, &snippet, &error) || !Bundle(snippet, &program)) {
    return false;
  }
  std::string text;
  // Nothing of a failed batch is used: Expand, one spec at a time, reports it.
  nlohmann::json result = RunEntry(program, nullptr, "", &params, &text)
                              ? nlohmann::json::parse(text, nullptr, false)
                              : nlohmann::json();
  if (!result.is_array() || result.size() != specs.size()) return false;
  outs->assign(specs.size(), {});
  diags->assign(specs.size(), Diagnostics());
  ok->assign(specs.size(), false);
  for (size_t i = 0; i < specs.size(); ++i) {
    (*ok)[i] = KeepsContracts(*specs[i].normalized, result[i], &(*diags)[i]) &&
               Collect(&result[i], *specs[i].doc, specs[i].target_docs, &(*outs)[i], &(*diags)[i]);
  }
  return true;
}

bool JsonnetExpander::Evaluate(const std::string& params_json, const std::string& only_target,
                               bool bundled, nlohmann::json* result, std::string* error) {
  nlohmann::json params = nlohmann::json::parse(params_json);
  std::set<std::string> profiles;
  std::set<std::string> runtimes = builtin_runtimes_;
  AddProfiles(params, &profiles, &runtimes);
  std::string snippet;
  if (!EntrySnippet(profiles, runtimes, kCall, &snippet, error)) return false;

  std::string program;
  if (bundled && !Bundle(snippet, &program)) {
    *error = "cannot bundle the libraries";
    return false;
  }
  if (!dump_dir_.empty() && only_target.empty()) {
    const std::string base = dump_dir_ + "/" + params["metadata"].value("name", "spec");
    std::ofstream(base + ".entry.jsonnet", std::ios::binary) << snippet;
    if (bundled) std::ofstream(base + ".bundle.jsonnet", std::ios::binary) << program;
    std::ofstream(base + ".spec.json", std::ios::binary) << params_json;
  }
  if (bundled) snippet = std::move(program);
  std::string text;
  if (!RunEntry(snippet, &params_json, only_target, nullptr, &text)) {
    *error = text;
    return false;
  }
  *result = nlohmann::json::parse(text, nullptr, false);
  if (result->is_discarded()) {
    *error = "the libraries produced output that is not JSON";
    return false;
  }
  return true;
}

void JsonnetExpander::ReportJsonnetError(const std::string& error, const std::string& prefix,
                                         Diagnostics* diags) const {
  // "RUNTIME ERROR: msg\n\tfile:line:col-col\tframe\n..." or
  // "STATIC ERROR: file:line:col: msg". The first frame inside a library
  // root is where a reader should look.
  static const std::regex frame(R"(^\s*(.+?):\(?(\d+):(\d+)(?:\)?-\(?[\d:]+\)?)?\s*(?:\t.*)?$)");
  static const std::regex static_error(R"(^STATIC ERROR: (.+?):(\d+):(\d+)(?:-\d+)?: (.*)$)");
  std::istringstream lines(error);
  std::string first;
  std::getline(lines, first);
  // A library's `error` may be megabytes (field-review.md E10: 1.8 MB printed
  // whole); std::regex must not see it either (it recurses per character).
  constexpr size_t kMaxShown = 2000;
  const size_t full_size = first.size();
  if (first.size() > kMaxShown) first.resize(kMaxShown);
  Location location;
  std::string message = first;
  std::smatch m;
  if (std::regex_match(first, m, static_error)) {
    location = {ShownPath(m[1]), std::stoi(m[2]), std::stoi(m[3])};
    message = m[4];
  } else {
    if (StartsWith(message, "RUNTIME ERROR: ")) message = message.substr(15);
    std::string line;
    while (std::getline(lines, line)) {
      if (!std::regex_match(line, m, frame)) continue;
      std::string file = m[1];
      bool in_root = false;
      for (const auto& root : roots_) in_root = in_root || StartsWith(file, root);
      if (!in_root) continue;
      location = {ShownPath(file), std::stoi(m[2]), std::stoi(m[3])};
      break;
    }
  }
  if (full_size > kMaxShown) {
    message += "... (" + std::to_string(full_size - kMaxShown) + " more bytes not shown)";
  }
  diags->Error("library.error", prefix + message, location,
               "raised while expanding the Jsonnet libraries");
}

bool JsonnetExpander::DescribeProfile(const std::string& name, nlohmann::json* out,
                                      Diagnostics* diags, bool* is_profile) {
  if (is_profile != nullptr) *is_profile = true;
  if (!SafeLibraryName(name)) {
    diags->Error("library.profile", "invalid profile name '" + name + "'");
    return false;
  }
  const std::string snippet =
      "local p = import '" + ProfileImport(name) + "';\n"
      "if !std.isObject(p) || !std.objectHasEx(p, 'isProfile', true) then null\n"
      "else {name: p.name, description: p.description, options: p.options, starter: p.starter,\n"
      "      defaultRuntime: p.defaults.runtime, gpuNode: p.gpuNode, nodeFabric: p.nodeFabric}\n";
  std::string text;
  const bool evaluated = EvaluateSnippet(snippet, &text);
  // The profile's file, as the entry snippet's import found it.
  Location file;
  for (const auto& call : import_calls_) {
    if (file.file.empty() && call.rel == name + ".libsonnet") file = {ShownPath(call.found), 1, 1};
  }
  if (!evaluated) {
    Diagnostics raised;
    ReportJsonnetError(text, "", &raised);
    // The contract's assert (a member missing) names the profile; point at
    // the profile's file rather than at the assert.
    Diagnostic reported = raised.items().back();
    if (!file.file.empty() && reported.location.file.size() >= 17 &&
        reported.location.file.compare(reported.location.file.size() - 17, 17, "profile.libsonnet") == 0) {
      reported.location = file;
      reported.hint = "libsonnet/profile.libsonnet documents every member of a profile";
    }
    diags->Add(reported);
    return false;
  }
  *out = nlohmann::json::parse(text, nullptr, false);
  if (out->is_null()) {
    if (is_profile != nullptr) {
      *is_profile = false;
    } else {
      diags->Error("library.profile", name + ".libsonnet is not a profile: a profile extends "
                                             "profile.libsonnet (local profile = import "
                                             "'nemoc/profile.libsonnet'; profile + { ... })");
    }
    return false;
  }
  if (out->is_discarded() || !out->is_object() || (*out)["name"] != name) {
    diags->Error("library.profile", "profile " + name + ": its name member must be '" + name +
                                        "', the file name without .libsonnet",
                 file, "a profile extending another one sets its own name: base + { name: '" + name + "', ... }");
    return false;
  }
  return true;
}

bool JsonnetExpander::WorkloadKinds(std::vector<std::string>* kinds, Diagnostics* diags) {
  std::set<std::string> runtimes = builtin_runtimes_;
  runtimes.insert(user_runtimes_.begin(), user_runtimes_.end());
  std::string snippet =
      "local gitops = import 'nemoc/gitops.libsonnet';\nstd.set(std.objectFields(gitops.coreWorkloads) + [\n";
  for (const auto& runtime : runtimes) {
    snippet += "  (import '" + RuntimeImport(runtime) + "').workload.kind,\n";
  }
  snippet += "])\n";
  std::string text;
  if (!EvaluateSnippet(snippet, &text)) {
    ReportJsonnetError(text, "", diags);
    return false;
  }
  const nlohmann::json list = nlohmann::json::parse(text, nullptr, false);
  if (!list.is_array()) return false;
  for (const auto& kind : list) {
    if (kind.is_string()) kinds->push_back(kind.get<std::string>());
  }
  return true;
}

bool JsonnetExpander::Expand(const nlohmann::json& normalized, const Document& doc,
                             std::map<std::string, TargetExpansion>* out, Diagnostics* diags,
                             const std::map<std::string, Document>* target_docs) {
  imported_.clear();
  import_calls_.clear();
  // Profile names are spliced into the entry snippet: refuse unsafe ones per
  // target, before anything is evaluated.
  bool names_ok = true;
  for (const auto& t : normalized["spec"]["targets"]) {
    const std::string profile = t.value("profile", "");
    if (!SafeLibraryName(profile)) {
      diags->Error("library.profile", "target " + t.value("name", "") + ": invalid profile name '" +
                                          profile + "'");
      names_ok = false;
    }
  }
  if (!names_ok) return false;
  const std::string params = normalized.dump();
  nlohmann::json result;
  std::string error;
  std::vector<std::string> target_names;
  for (const auto& t : normalized["spec"]["targets"]) target_names.push_back(t["name"]);
  // The bundled program is the fast path. Anything it cannot do, and every
  // failure, goes through libjsonnet's own imports, whose errors name the
  // library file and line, and blame only the targets that fail.
  if (Evaluate(params, "", /*bundled=*/true, &result, &error)) {
    bundled_ = true;
  } else {
    bundled_ = false;
    imported_.clear();
    import_calls_.clear();
  }
  if (!bundled_ && !Evaluate(params, "", /*bundled=*/false, &result, &error)) {
    // The single evaluation failed: find which targets fail by evaluating
    // them one by one (the error path only; success costs one evaluation).
    bool attributed = false;
    if (target_names.size() > 1) {
      for (const auto& name : target_names) {
        nlohmann::json ignored;
        std::string target_error;
        if (!Evaluate(params, name, /*bundled=*/false, &ignored, &target_error)) {
          ReportJsonnetError(target_error, "target " + name + ": ", diags);
          attributed = true;
        }
      }
    }
    if (!attributed) {
      ReportJsonnetError(error, target_names.size() == 1 ? "target " + target_names[0] + ": " : "", diags);
    }
    return false;
  }
  return KeepsContracts(normalized, result, diags) && Collect(&result, doc, target_docs, out, diags);
}

bool JsonnetExpander::KeepsContracts(const nlohmann::json& normalized, const nlohmann::json& result,
                                     Diagnostics* diags) const {
  if (contracts_ == nullptr) return true;
  std::string err;
  if (!contracts_->CheckNormalizedSpec(normalized, &err) || !contracts_->CheckExpansion(result, &err)) {
    diags->Error("internal.contract", err);
    return false;
  }
  return true;
}

bool JsonnetExpander::Collect(nlohmann::json* evaluated, const Document& spec_doc,
                              const std::map<std::string, Document>* target_docs,
                              std::map<std::string, TargetExpansion>* out,
                              Diagnostics* diags) const {
  nlohmann::json& result = *evaluated;
  if (!result.is_object() || !result.contains("targets") || !result["targets"].is_object()) {
    diags->Error("library.output", "nemoc.libsonnet must return {targets: {...}}", {});
    return false;
  }
  // The libraries may be a user's (--jpath): check the shape instead of
  // trusting it, so a mistake there is a diagnostic, never an exception.
  auto text = [](const nlohmann::json& d, const char* key, const char* fallback) {
    auto it = d.find(key);
    return it != d.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
  };
  bool ok = true;
  // Objects are moved out of the evaluation's result, never copied: they are
  // most of the memory a build holds.
  for (auto& [name, expansion] : result["targets"].items()) {
    // D7: --target builds, checks and warns about the targets it names only.
    if (!selected_.empty() && std::find(selected_.begin(), selected_.end(), name) == selected_.end()) continue;
    const std::string prefix = "target " + name + ": ";
    // A target with overrides is located in its merged document.
    const Document& doc = target_docs != nullptr && target_docs->count(name) ? target_docs->at(name) : spec_doc;
    if (!expansion.is_object()) {
      diags->Error("library.output", prefix + "the libraries returned a " +
                                         std::string(expansion.type_name()) + ", not an object");
      ok = false;
      continue;
    }
    const nlohmann::json diagnostics = expansion.value("diagnostics", nlohmann::json::array());
    for (const auto& d : diagnostics.is_array() ? diagnostics : nlohmann::json::array({diagnostics})) {
      if (!d.is_object() || !d.contains("message") || !d["message"].is_string()) {
        diags->Error("library.output", prefix + "malformed profile diagnostic " + d.dump(),
                     {}, "a diagnostic is {message, pointer?, code?, hint?, severity?}");
        ok = false;
        continue;
      }
      const auto at_key = d.find("atKey");
      Location loc = doc.map.Locate(text(d, "pointer", ""),
                                    at_key != d.end() && at_key->is_boolean() && at_key->get<bool>());
      std::string message = prefix + d["message"].get<std::string>();
      if (text(d, "severity", "error") == "warning") {
        diags->Warning(text(d, "code", "profile.warning"), message, loc, text(d, "hint", ""));
      } else {
        diags->Error(text(d, "code", "profile.error"), message, loc, text(d, "hint", ""));
        ok = false;
      }
    }
    TargetExpansion& target = (*out)[name];
    auto summary = expansion.find("summary");
    target.summary = summary != expansion.end() && summary->is_object() ? std::move(*summary)
                                                                         : nlohmann::json::object();
    auto kustomizations = expansion.find("kustomizations");
    if (kustomizations != expansion.end()) {
      bool well_formed = kustomizations->is_object();
      for (auto k = kustomizations->begin(); well_formed && k != kustomizations->end(); ++k) {
        well_formed = k.value().is_array();
        std::vector<std::string> resources;
        for (const auto& r : k.value()) {
          if (!(well_formed = well_formed && r.is_string())) break;
          resources.push_back(r.get<std::string>());
        }
        if (well_formed) target.kustomizations.emplace(k.key(), std::move(resources));
      }
      if (!well_formed) {
        diags->Error("library.output",
                     prefix + "kustomizations must be an object of directory -> list of resources");
        ok = false;
        continue;
      }
    }
    auto suffixes = expansion.find("podNameSuffixes");
    if (suffixes != expansion.end()) {
      bool well_formed = suffixes->is_object();
      for (auto k = suffixes->begin(); well_formed && k != suffixes->end(); ++k) {
        well_formed = k.value().is_number_integer() && k.value().get<int64_t>() >= 0 &&
                      k.value().get<int64_t>() <= 63;
        if (well_formed) target.pod_name_suffixes.emplace(k.key(), k.value().get<int>());
      }
      if (!well_formed) {
        diags->Error("library.output", prefix + "podNameSuffixes must be an object of path -> 0..63 "
                                                "(runtime.libsonnet podNameSuffix)");
        ok = false;
        continue;
      }
    }
    auto files = expansion.find("files");
    if (files == expansion.end()) continue;
    if (!files->is_object()) {
      diags->Error("library.output", prefix + "files must be an object of path -> object");
      ok = false;
      continue;
    }
    for (auto file = files->begin(); file != files->end(); ++file) {
      target.files.emplace(file.key(), std::move(file.value()));
    }
  }
  return ok;
}

bool JsonnetExpander::RootKey(const std::string& path, std::string* key) const {
  if (path.empty()) {
    *key = "-";
    return true;
  }
  for (size_t i = 0; i < roots_.size(); ++i) {
    const std::string& root = roots_[i];
    // A root directory itself may come without its trailing '/'.
    if (path + "/" == root) {
      *key = std::to_string(i) + ":";
      return true;
    }
    if (StartsWith(path, root)) {
      *key = std::to_string(i) + ":" + path.substr(root.size());
      return true;
    }
  }
  return false;
}

bool JsonnetExpander::RootPath(const std::string& key, std::string* path) const {
  if (key == "-") {
    path->clear();
    return true;
  }
  const size_t colon = key.find(':');
  if (colon == std::string::npos || colon == 0 || colon > 3) return false;
  size_t index = 0;
  for (size_t i = 0; i < colon; ++i) {
    if (key[i] < '0' || key[i] > '9') return false;
    index = index * 10 + static_cast<size_t>(key[i] - '0');
  }
  if (index >= roots_.size()) return false;
  const std::string rest = key.substr(colon + 1);
  for (const auto& segment : fs::path(rest)) {
    if (segment == "..") return false;
  }
  *path = roots_[index] + rest;
  return true;
}

SourceTexts JsonnetExpander::LibrarySources() const {
  SourceTexts sources;
  for (const auto& f : imported_) sources[ShownPath(f.path)] = f.content;
  return sources;
}

}  // namespace nemoc
