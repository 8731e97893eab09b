#include "build_stamp.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

#include "content_hash.h"
#include "file_reader.h"
#include "nemoc_source_digest.h"  // generated: NEMOC_SOURCE_DIGEST

#ifndef NEMOC_VERSION
#define NEMOC_VERSION "0.0.0"
#endif

namespace nemoc {

namespace {

constexpr const char kStampLine[] = "#nemoc-stamp ";
constexpr const char kImportLine[] = "#import ";
constexpr const char kKindLine[] = "#kind ";

bool ReadWhole(const std::string& path, std::string* out) {
  FileReader::Failure failure;
  return RealFiles().ReadFile(path, size_t{1} << 30, out, &failure) == FileReader::Status::kOkay;
}

std::string FileDigest(const std::string& path) {
  std::string text;
  return ReadWhole(path, &text) ? Digest128Hex(text) : "unreadable";
}

bool IsHex32(const std::string& s) {
  if (s.size() != 32) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Marker fields are tab-separated on one line: no tabs, newlines or NULs.
bool PlainField(const std::string& s) {
  return s.find_first_of(std::string("\t\n\r\0", 4)) == std::string::npos;
}

bool StartsWith(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

std::string BuildId() { return std::string(NEMOC_VERSION) + "+" + NEMOC_SOURCE_DIGEST; }

std::string StampLines(const Stamp& stamp) {
  if (stamp.inputs.empty()) return "";
  std::string out = std::string(kStampLine) + "inputs=" + stamp.inputs + " tree=" + stamp.tree + "\n";
  for (const auto& [base, rel] : stamp.imports) out += kImportLine + base + "\t" + rel + "\n";
  for (const auto& [api_version, kind] : stamp.kinds) {
    out += kKindLine + api_version + "\t" + kind + "\n";
  }
  return out;
}

bool ParseStamp(const std::string& marker, Stamp* stamp) {
  *stamp = Stamp{};
  std::istringstream lines(marker);
  std::string line;
  bool found = false;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '#') continue;
    auto split = [&](const char* prefix, std::pair<std::string, std::string>* out) {
      const std::string rest = line.substr(std::char_traits<char>::length(prefix));
      const size_t tab = rest.find('\t');
      if (tab == std::string::npos) return false;
      *out = {rest.substr(0, tab), rest.substr(tab + 1)};
      return true;
    };
    if (StartsWith(line, kStampLine)) {
      std::istringstream fields(line.substr(std::char_traits<char>::length(kStampLine)));
      std::string inputs, tree;
      fields >> inputs >> tree;
      if (!StartsWith(inputs, "inputs=") || !StartsWith(tree, "tree=")) return false;
      stamp->inputs = inputs.substr(7);
      stamp->tree = tree.substr(5);
      if (!IsHex32(stamp->inputs) || !IsHex32(stamp->tree)) return false;
      found = true;
    } else if (StartsWith(line, kImportLine)) {
      std::pair<std::string, std::string> entry;
      if (!split(kImportLine, &entry)) return false;
      stamp->imports.push_back(std::move(entry));
    } else if (StartsWith(line, kKindLine)) {
      std::pair<std::string, std::string> entry;
      if (!split(kKindLine, &entry)) return false;
      stamp->kinds.push_back(std::move(entry));
    }
  }
  return found;
}

std::string TreeDigest(const FileTree& tree) {
  // Length-prefixed so no two different trees produce the same record.
  std::string record;
  size_t total = 0;
  for (const auto& [path, bytes] : tree) total += path.size() + bytes.size() + 24;
  record.reserve(total);
  for (const auto& [path, bytes] : tree) {
    record += std::to_string(path.size()) + ":" + path + std::to_string(bytes.size()) + ":";
    record += bytes;
  }
  return Digest128Hex(record);
}

namespace {

struct ResolvedImport {
  std::string base_key, rel, found_key, content_digest;
};

// $NEMOC_STAMP_DIR, else $XDG_CACHE_HOME/nemoc/stamps, else
// $HOME/.cache/nemoc/stamps; "" when none is set.
std::string StampDir() {
  if (const char* d = std::getenv("NEMOC_STAMP_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x == '/') {
    return std::string(x) + "/nemoc/stamps";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h == '/') return std::string(h) + "/.cache/nemoc/stamps";
  return "";
}

// Digests of nemoc's data files (the Kubernetes schema bundle, the project
// schema, the model and accelerator tables): read-only data that every
// process stamps with. Hashed once per process, and remembered across
// processes in <stamp dir>/data-digests by each file's identity (device,
// inode, size, modification and change times): a no-op build read and
// hashed ~5 MB of schemas to stamp-check its targets, half of a one-project
// no-op's time (issue #47). An identity is recorded only when the file's
// last change is over 2 s old, so a file rewritten within one timestamp tick
// of being hashed is never taken for unchanged (git's "racy" rule).
struct DataDigests {
  struct Entry {
    std::string identity, digest;
    bool persist = true;  // false: trusted by this process only (not settled)
  };
  std::mutex mu;
  bool loaded = false, dirty = false;
  std::string file;
  std::map<std::string, Entry> entries;  // path -> entry
};

DataDigests& Data() {
  static DataDigests d;
  return d;
}

constexpr const char kDataDigestsFile[] = "data-digests";
constexpr const char kDataDigestsHeader[] = "#nemoc-data-digests 1\n";

// "dev ino size mtime ctime" of `path`; false when it is not a regular file.
// `settled`: its last change is over 2 s old.
bool Identity(const std::string& path, std::string* identity, bool* settled) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  auto ns = [](const struct timespec& t) {
    return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
  };
  *identity = std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) +
              " " + std::to_string(ns(st.st_mtim)) + " " + std::to_string(ns(st.st_ctim));
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  *settled = ns(st.st_ctim) < ns(now) - 2000000000LL && ns(st.st_mtim) < ns(now) - 2000000000LL;
  return true;
}

void LoadDataDigests(DataDigests* d) {
  d->loaded = true;
  const std::string dir = StampDir();
  if (dir.empty()) return;
  d->file = dir + "/" + kDataDigestsFile;
  std::string text;
  if (!ReadWhole(d->file, &text) || text.rfind(kDataDigestsHeader, 0) != 0) return;
  // "<digest> <dev> <ino> <size> <mtime> <ctime> <path>" per line.
  std::istringstream in(text.substr(sizeof(kDataDigestsHeader) - 1));
  std::string line;
  while (std::getline(in, line)) {
    std::vector<size_t> spaces;
    for (size_t i = 0; i < line.size() && spaces.size() < 6; ++i) {
      if (line[i] == ' ') spaces.push_back(i);
    }
    if (spaces.size() != 6 || !IsHex32(line.substr(0, spaces[0]))) continue;
    d->entries[line.substr(spaces[5] + 1)] = {line.substr(spaces[0] + 1, spaces[5] - spaces[0] - 1),
                                              line.substr(0, spaces[0])};
  }
}

std::string DataDigest(const std::string& path) {
  DataDigests& d = Data();
  std::string identity;
  bool settled = false;
  const bool regular = Identity(path, &identity, &settled);
  {
    std::lock_guard<std::mutex> lock(d.mu);
    if (!d.loaded) LoadDataDigests(&d);
    auto it = d.entries.find(path);
    if (it != d.entries.end() && (regular ? it->second.identity == identity : it->second.identity.empty())) {
      return it->second.digest;
    }
  }
  std::string digest = FileDigest(path);
  std::lock_guard<std::mutex> lock(d.mu);
  // Kept for this process either way; recorded for the next only when settled.
  const bool persist = regular && settled && digest != "unreadable";
  d.entries[path] = {regular ? identity : "", digest, persist};
  d.dirty = d.dirty || persist;
  return digest;
}

}  // namespace

void RememberDataDigests() {
  DataDigests& d = Data();
  std::lock_guard<std::mutex> lock(d.mu);
  if (!d.dirty || d.file.empty()) return;
  std::string text = kDataDigestsHeader;
  for (const auto& [path, entry] : d.entries) {
    if (!entry.persist || path.find('\n') != std::string::npos) continue;
    text += entry.digest + " " + entry.identity + " " + path + "\n";
  }
  RealDisk disk;
  std::string err;
  const std::string tmp = d.file + ".tmp." + std::to_string(::getpid());
  if (!disk.MakeDirs(std::filesystem::path(d.file).parent_path().string(), &err)) return;
  if (!disk.WriteFile(tmp, text, &err)) return;
  std::error_code ec;
  std::filesystem::rename(tmp, d.file, ec);  // atomic: a concurrent reader sees one whole file
  if (ec) std::filesystem::remove(tmp, ec);
  d.dirty = false;
}

namespace {

std::string Record(const std::string& data_part, const SpecInputs& spec, const std::string& target,
                   const std::vector<ResolvedImport>& imports,
                   const std::vector<std::pair<std::string, std::string>>& kinds,
                   KubeSchemas* kube_schemas, bool* ok) {
  std::string record = data_part;
  record += "spec-name " + spec.spec_name + "\n";
  record += "spec " + Digest128Hex(spec.spec_text) + "\n";
  if (!spec.pins_text.empty()) record += "pins " + Digest128Hex(spec.pins_text) + "\n";
  for (const auto& set : spec.sets) record += "set " + std::to_string(set.size()) + ":" + set + "\n";
  record += "target " + target + "\n";
  for (const auto& i : imports) {
    record += "import " + i.base_key + "\t" + i.rel + "\t" + i.found_key + "\t" + i.content_digest + "\n";
  }
  for (const auto& [api_version, kind] : kinds) {
    record += "kind " + api_version + "\t" + kind + "\t";
    if (kube_schemas == nullptr) {
      record += "unvalidated\n";
      continue;
    }
    const std::string file = kube_schemas->SchemaFile(api_version, kind);
    if (file.empty()) {
      *ok = false;
      return "";
    }
    record += DataDigest(file) + "\n";
  }
  return record;
}

}  // namespace

StampCalculator::StampCalculator(const DataDir& data, const std::vector<std::string>& jpaths,
                                 KubeSchemas* kube_schemas)
    : kube_schemas_(kube_schemas) {
  data_part_ = "nemoc " + BuildId() + "\n";
  for (const auto& jpath : jpaths) data_part_ += "jpath " + jpath + "\n";
  data_part_ += "schema " + DataDigest(data.schema()) + "\n";
  data_part_ += "models " + DataDigest(data.models()) + "\n";
  data_part_ += "accelerators " + DataDigest(data.accelerators()) + "\n";
  data_part_ += std::string("kube ") + (kube_schemas ? "validated" : "unvalidated") + "\n";
}

bool StampCalculator::InputsDigest(const SpecInputs& spec, const std::string& target,
                                   const Stamp& recorded, JsonnetExpander* expander,
                                   const std::map<std::string, const std::string*>* seen,
                                   std::string* digest) const {
  std::vector<ResolvedImport> imports;
  size_t index = 0;
  if (seen == nullptr) expander->ClearImports();
  const auto& calls = expander->import_calls();
  for (const auto& [base_key, rel] : recorded.imports) {
    ResolvedImport r{base_key, rel, "", ""};
    std::string found;
    if (seen != nullptr) {
      // What the evaluation saw, call for call.
      if (index >= calls.size()) return false;
      found = calls[index++].found;
      auto it = seen->find(found);
      if (it == seen->end()) return false;
      r.content_digest = Digest128Hex(*it->second);
    } else {
      // Replay the import through the resolver Jsonnet used.
      std::string base, err;
      if (!expander->RootPath(base_key, &base)) return false;
      if (!expander->ImportDigest(base, rel, &found, &r.content_digest, &err)) return false;
    }
    if (!expander->RootKey(found, &r.found_key)) return false;
    imports.push_back(std::move(r));
  }
  bool ok = true;
  const std::string record =
      Record(data_part_, spec, target, imports, recorded.kinds, kube_schemas_, &ok);
  if (!ok) return false;
  *digest = Digest128Hex(record);
  return true;
}

bool MakeStamp(const StampCalculator& calculator, const SpecInputs& spec, const std::string& target,
               JsonnetExpander* expander, const std::map<std::string, nlohmann::json>& objects,
               const FileTree& tree, Stamp* stamp) {
  *stamp = Stamp{};
  for (const auto& call : expander->import_calls()) {
    std::string base_key;
    if (!expander->RootKey(call.base, &base_key)) return false;
    if (!PlainField(base_key) || !PlainField(call.rel)) return false;
    stamp->imports.emplace_back(base_key, call.rel);
  }
  std::set<std::pair<std::string, std::string>> kinds;
  for (const auto& [path, object] : objects) {
    auto api_version = object.find("apiVersion");
    auto kind = object.find("kind");
    if (api_version == object.end() || kind == object.end() || !api_version->is_string() ||
        !kind->is_string()) {
      return false;
    }
    if (!PlainField(api_version->get<std::string>()) || !PlainField(kind->get<std::string>())) {
      return false;
    }
    kinds.emplace(api_version->get<std::string>(), kind->get<std::string>());
  }
  stamp->kinds.assign(kinds.begin(), kinds.end());
  std::map<std::string, const std::string*> seen;
  for (const auto& file : expander->imported()) seen[file.path] = &file.content;
  if (!calculator.InputsDigest(spec, target, *stamp, expander, &seen, &stamp->inputs)) {
    *stamp = Stamp{};
    return false;
  }
  stamp->tree = TreeDigest(tree);
  return true;
}

std::string StampPath(const std::string& target_dir) {
  const std::string base = StampDir();
  if (base.empty()) return "";
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(target_dir, ec).lexically_normal();
  if (ec) return "";
  std::string key = dir.generic_string();
  while (key.size() > 1 && key.back() == '/') key.pop_back();
  return base + "/" + Digest128Hex(key);
}

void SaveStamp(Disk& disk, const std::string& target_dir, const std::string& stamp) {
  const std::string path = StampPath(target_dir);
  if (path.empty()) return;
  std::string err;
  FileKind kind;
  if (stamp.empty()) {
    if (disk.Stat(path, &kind, &err) && kind != FileKind::kMissing) disk.WriteFile(path, "", &err);
    return;
  }
  if (!disk.MakeDirs(std::filesystem::path(path).parent_path().string(), &err)) return;
  disk.WriteFile(path, stamp, &err);
}

bool TargetUpToDate(Disk& disk, const StampCalculator& calculator, const SpecInputs& spec,
                    const std::string& target, const std::string& target_dir,
                    JsonnetExpander* expander) {
  // Leftovers of an interrupted run: the writer's recovery must run first.
  const std::filesystem::path dir = std::filesystem::path(target_dir).lexically_normal();
  const std::string base = dir.filename().string();
  for (const char* suffix : {".nemoc-tmp", ".nemoc-old"}) {
    const std::string sibling = (dir.parent_path() / ("." + base + suffix)).string();
    FileKind kind;
    std::string ignored;
    if (base.empty() || !disk.Stat(sibling, &kind, &ignored) || kind != FileKind::kMissing) return false;
  }
  std::string marker, err, stamp_text;
  if (!disk.ReadFile(target_dir + "/" + kManifestFileName, &marker, &err)) return false;
  const std::string stamp_path = StampPath(target_dir);
  if (stamp_path.empty() || !disk.ReadFile(stamp_path, &stamp_text, &err)) return false;
  Stamp stamp;
  if (!ParseStamp(stamp_text, &stamp)) return false;
  FileTree tree;
  Diagnostics ignored;
  if (!ReadTree(disk, target_dir, &tree, &ignored)) return false;
  if (TreeDigest(tree) != stamp.tree) return false;
  // Only the files the marker lists may be there, and all of them.
  if (ManifestContent(tree) != marker) return false;
  std::string digest;
  if (!calculator.InputsDigest(spec, target, stamp, expander, nullptr, &digest)) return false;
  return digest == stamp.inputs;
}

}  // namespace nemoc
