#include "tree_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace nemoc {

namespace fs = std::filesystem;

namespace {

/// How many per-file errors one refusal reports before summarising the rest.
constexpr size_t kMaxReportedFiles = 20;

Location At(const std::string& file) {
  Location loc;
  loc.file = file;
  return loc;
}

void Note(Diagnostics* diags, std::string code, std::string message,
          const std::string& file) {
  diags->Add(Diagnostic{Severity::kNote, std::move(code), std::move(message),
                        At(file), {}});
}

/// "a\nb" -> "\"a\\x0ab\"": paths in messages are shown unambiguously.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string Join(const std::string& dir, const std::string& rel) {
  return dir + "/" + rel;
}

/// dest_dir and its reserved siblings.
struct Paths {
  std::string dest;    // normalised, no trailing '/'
  std::string parent;  // "" when dest is a bare name
  std::string tmp;     // <parent>/.<base>.nemoc-tmp
  std::string old;     // <parent>/.<base>.nemoc-old
  std::string marker;  // <dest>/.nemoc-manifest
};

bool ResolveDest(const std::string& dest_dir, Paths* p, Diagnostics* diags) {
  fs::path d = fs::path(dest_dir).lexically_normal();
  if (!d.has_filename() && d.has_relative_path()) d = d.parent_path();
  const std::string base = d.filename().string();
  if (dest_dir.empty() || base.empty() || base == "." || base == "..") {
    diags->Error("output.bad-dest",
                 "cannot use " + Quote(dest_dir) + " as an output directory",
                 At(dest_dir),
                 "the output directory must name a directory nemoc can "
                 "replace, e.g. out/<project>/<target>");
    return false;
  }
  const fs::path parent = d.parent_path();
  p->dest = d.generic_string();
  p->parent = parent.generic_string();
  p->tmp = (parent / ("." + base + ".nemoc-tmp")).generic_string();
  p->old = (parent / ("." + base + ".nemoc-old")).generic_string();
  p->marker = Join(p->dest, kManifestFileName);
  return true;
}

/// Every path valid, and no path is also a directory of another one.
bool ValidateTree(const FileTree& tree, const Paths& p, Diagnostics* diags) {
  std::vector<std::string> problems;
  for (const auto& [path, bytes] : tree) {
    std::string why;
    if (!IsValidTreePath(path, &why)) {
      problems.push_back("invalid output path " + Quote(path) + " for " +
                         p.dest + ": " + why);
      continue;
    }
    for (size_t i = path.find('/'); i != std::string::npos;
         i = path.find('/', i + 1)) {
      const std::string dir = path.substr(0, i);
      if (tree.count(dir)) {
        problems.push_back("output path " + Quote(dir) + " for " + p.dest +
                           " is both a file and a directory (of " +
                           Quote(path) + ")");
        break;
      }
    }
  }
  for (size_t i = 0; i < problems.size() && i < kMaxReportedFiles; ++i) {
    diags->Error("output.bad-path", problems[i], {},
                 "generated paths must be relative and '/'-separated, "
                 "without empty, '.' or '.'-prefixed segments");
  }
  if (problems.size() > kMaxReportedFiles) {
    diags->Error("output.bad-path",
                 "... and " + std::to_string(problems.size() - kMaxReportedFiles) +
                     " more invalid output paths for " + p.dest);
  }
  return problems.empty();
}

void IoError(Diagnostics* diags, const Paths& p, const std::string& err) {
  diags->Error("output.io", "cannot write " + p.dest + ": " + err, At(p.dest));
}

/// Whether `dir`, a leftover .nemoc-tmp or .nemoc-old sibling of kind `kind`,
/// is nemoc's own (E14): a directory holding the marker nemoc writes first
/// into every tree it stages, or holding nothing at all (a crash right after
/// the mkdir, or an empty target swapped out). Anything else -- a file, a
/// symlink, a directory of someone else's files -- is refused, not removed.
bool OwnLeftover(Disk& disk, const std::string& dir, FileKind kind, const Paths& p,
                 Diagnostics* diags) {
  std::string err;
  if (kind == FileKind::kDirectory) {
    // The marker alone says so; only a marker-less directory is listed.
    FileKind marker;
    TreeListing listing;
    if (!disk.Stat(Join(dir, kManifestFileName), &marker, &err) ||
        (marker != FileKind::kRegular && !disk.ListTree(dir, &listing, &err))) {
      diags->Error("output.io", "cannot read " + dir + ": " + err, At(dir));
      return false;
    }
    if (marker == FileKind::kRegular ||
        (listing.files.empty() && listing.others.empty() && listing.empty_dirs.empty())) {
      return true;
    }
  }
  diags->Error("output.foreign-leftover",
               dir + (kind == FileKind::kDirectory
                          ? " has no " + std::string(kManifestFileName) +
                                " marker, so nemoc did not create it"
                          : " is not a directory, so nemoc did not create it") +
                   "; refusing to remove it or to replace " + p.dest,
               At(dir),
               "nemoc swaps each target through the siblings .<target>.nemoc-tmp and "
               ".<target>.nemoc-old; rename or move this one away");
  return false;
}

/// Cleans up after a run that crashed between creating the temporary tree
/// and removing the old one. Afterwards neither sibling exists. A sibling
/// nemoc did not create is an error and stays untouched.
bool Recover(Disk& disk, const Paths& p, Diagnostics* diags) {
  std::string err;
  FileKind dest_kind, old_kind, tmp_kind;
  if (!disk.Stat(p.dest, &dest_kind, &err) ||
      !disk.Stat(p.old, &old_kind, &err) || !disk.Stat(p.tmp, &tmp_kind, &err)) {
    IoError(diags, p, err);
    return false;
  }
  bool own = true;
  if (old_kind != FileKind::kMissing) own = OwnLeftover(disk, p.old, old_kind, p, diags) && own;
  if (tmp_kind != FileKind::kMissing) own = OwnLeftover(disk, p.tmp, tmp_kind, p, diags) && own;
  if (!own) return false;
  if (old_kind != FileKind::kMissing) {
    if (dest_kind == FileKind::kMissing && old_kind == FileKind::kDirectory) {
      // Crashed between "dest -> old" and "tmp -> dest": old is the last
      // complete tree.
      if (!disk.Rename(p.old, p.dest, &err)) {
        IoError(diags, p, err);
        return false;
      }
      Note(diags, "output.recovered",
           "restored " + p.dest + " from " + p.old +
               ", left by an interrupted nemoc run",
           p.dest);
    } else {
      if (!disk.RemoveTree(p.old, &err)) {
        IoError(diags, p, err);
        return false;
      }
      Note(diags, "output.recovered",
           "removed " + p.old + ", left by an interrupted nemoc run", p.old);
    }
  }
  if (tmp_kind != FileKind::kMissing) {
    if (!disk.RemoveTree(p.tmp, &err)) {
      IoError(diags, p, err);
      return false;
    }
    Note(diags, "output.recovered",
         "removed " + p.tmp + ", left by an interrupted nemoc run", p.tmp);
  }
  return true;
}

std::set<std::string> ParseManifest(const std::string& text) {
  std::set<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line[0] == '#') continue;  // the build stamp
    // A tampered marker must not make nemoc claim (and later delete) paths it
    // could never have generated.
    if (IsValidTreePath(line, nullptr)) out.insert(std::move(line));
  }
  return out;
}

/// What a previous run left in dest_dir.
struct Existing {
  bool exists = false;      // dest_dir is a directory
  bool has_marker = false;  // ... with a marker file
  std::string marker;       // the marker's content
  FileTree tree;            // listed files that exist, with their bytes
};

/// Loads dest_dir, which must be a directory, refusing foreign content.
bool LoadExisting(Disk& disk, const Paths& p, Existing* ex,
                  Diagnostics* diags) {
  std::string err;
  TreeListing listing;
  if (!disk.ListTree(p.dest, &listing, &err)) {
    diags->Error("output.io", "cannot read " + p.dest + ": " + err, At(p.dest));
    return false;
  }
  ex->exists = true;
  ex->has_marker = std::binary_search(listing.files.begin(),
                                      listing.files.end(), kManifestFileName);
  if (!ex->has_marker) {
    const size_t count =
        listing.files.size() + listing.others.size() + listing.empty_dirs.size();
    if (count == 0) return true;  // empty: nothing to protect
    const std::string& sample = !listing.files.empty()    ? listing.files.front()
                                : !listing.others.empty() ? listing.others.front()
                                                          : listing.empty_dirs.front();
    diags->Error(
        "output.not-nemoc-dir",
        p.dest + " is not empty and has no " + kManifestFileName +
            " marker, so nemoc did not create it (it contains " +
            Quote(sample) +
            (count > 1 ? " and " + std::to_string(count - 1) + " more" : "") +
            ")",
        At(p.dest),
        "nemoc replaces its output directories wholesale; choose another "
        "output directory, or move this one away");
    return false;
  }
  if (!disk.ReadFile(p.marker, &ex->marker, &err)) {
    diags->Error("output.io", "cannot read " + p.marker + ": " + err,
                 At(p.marker));
    return false;
  }
  const std::set<std::string> listed = ParseManifest(ex->marker);

  std::vector<std::pair<std::string, std::string>> foreign;  // path, why
  for (const std::string& f : listing.others) {
    foreign.emplace_back(f, "is not a regular file, so nemoc did not create it");
  }
  // nemoc writes files only; an empty directory is someone else's (E14: the
  // swap used to delete it without a word).
  for (const std::string& d : listing.empty_dirs) {
    foreign.emplace_back(d, "is an empty directory, so nemoc did not create it");
  }
  for (const std::string& f : listing.files) {
    if (f == kManifestFileName || listed.count(f)) continue;
    foreign.emplace_back(f, "was not generated by nemoc (it is not listed in " +
                                p.marker + ")");
  }
  if (!foreign.empty()) {
    std::sort(foreign.begin(), foreign.end());
    for (size_t i = 0; i < foreign.size() && i < kMaxReportedFiles; ++i) {
      const std::string path = Join(p.dest, foreign[i].first);
      diags->Error("output.foreign-file",
                   path + " " + foreign[i].second + "; refusing to replace " +
                       p.dest,
                   At(path),
                   "nemoc owns " + p.dest +
                       " and replaces it on every build; move the file "
                       "elsewhere or delete it");
    }
    if (foreign.size() > kMaxReportedFiles) {
      diags->Error("output.foreign-file",
                   "... and " +
                       std::to_string(foreign.size() - kMaxReportedFiles) +
                       " more files in " + p.dest + " not generated by nemoc",
                   At(p.dest));
    }
    return false;
  }

  for (const std::string& f : listing.files) {
    if (f == kManifestFileName) continue;
    std::string bytes;
    if (!disk.ReadFile(Join(p.dest, f), &bytes, &err)) {
      diags->Error("output.io", "cannot read " + Join(p.dest, f) + ": " + err,
                   At(Join(p.dest, f)));
      return false;
    }
    ex->tree.emplace(f, std::move(bytes));
  }
  return true;
}

/// Stats dest_dir and loads it when it is a directory.
bool InspectDest(Disk& disk, const Paths& p, Existing* ex, Diagnostics* diags) {
  std::string err;
  FileKind kind;
  // dest's own directory (out/<project>, out/_clusters) is nemoc's too: a
  // symlink there led every write, swap and removal outside --out (E27).
  if (!p.parent.empty()) {
    if (!disk.Stat(p.parent, &kind, &err)) {
      diags->Error("output.io", "cannot access " + p.parent + ": " + err, At(p.parent));
      return false;
    }
    if (kind == FileKind::kOther || kind == FileKind::kRegular) {
      diags->Error("output.not-a-directory",
                   p.parent + " is " +
                       (kind == FileKind::kOther ? "a symlink or special file" : "a file") +
                       ", not a directory; nemoc writes " + p.dest + " only inside the output root",
                   At(p.parent),
                   "replace it with a plain directory (or remove it), or choose another --out");
      return false;
    }
  }
  if (!disk.Stat(p.dest, &kind, &err)) {
    diags->Error("output.io", "cannot access " + p.dest + ": " + err, At(p.dest));
    return false;
  }
  switch (kind) {
    case FileKind::kMissing: return true;
    case FileKind::kDirectory: return LoadExisting(disk, p, ex, diags);
    case FileKind::kRegular:
    case FileKind::kOther: break;
  }
  diags->Error("output.not-a-directory",
               p.dest + " exists but is not a directory" +
                   (kind == FileKind::kOther ? " (a symlink or special file)"
                                             : ""),
               At(p.dest),
               "nemoc writes each target into a plain directory it owns; "
               "remove it or choose another output directory");
  return false;
}

}  // namespace

bool IsValidTreePath(const std::string& path, std::string* why) {
  auto fail = [&](const char* reason) {
    if (why) *why = reason;
    return false;
  };
  if (path.empty()) return fail("is empty");
  for (unsigned char c : path) {
    if (c == 0) return fail("contains a NUL byte");
    if (c == '\\') return fail("contains a backslash");
    if (c < 0x20 || c == 0x7f) return fail("contains a control character");
  }
  if (path[0] == '/') return fail("is absolute");
  if (path[0] == '#') return fail("starts with '#' (reserved for the marker's stamp lines)");
  if (path == kManifestFileName) return fail("is reserved for nemoc's marker file");
  size_t start = 0;
  for (;;) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string_view seg(path.data() + start, end - start);
    if (seg.empty()) return fail("has an empty segment");
    if (seg == "..") return fail("has a \"..\" segment");
    if (seg == ".") return fail("has a \".\" segment");
    if (seg[0] == '.') return fail("has a segment starting with '.'");
    if (end == path.size()) break;
    start = end + 1;
  }
  return true;
}

std::string ManifestContent(const FileTree& tree, const std::string& stamp) {
  std::string out;
  for (const auto& [path, bytes] : tree) {
    out += path;
    out += '\n';
  }
  return out + stamp;
}

bool FaultInjectionEnabled(std::string_view point) {
  const char* env = std::getenv(kFaultInjectEnv);
  if (!env || point.empty()) return false;
  std::string_view list(env);
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == point) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

struct StagedTree::Impl {
  Paths p;
  bool exists = false;     // dest held a previous tree
  bool staged = false;     // the new tree is complete in p.tmp
  bool swapped = false;    // p.tmp is now dest; the previous tree is in p.old
  bool made_tmp = false;   // this process created p.tmp (E16: only then is it removed)
  std::string made_parent; // the highest directory this stage created, or ""
};

StagedTree::StagedTree() : impl_(std::make_unique<Impl>()) {}
StagedTree::~StagedTree() = default;
StagedTree::StagedTree(StagedTree&&) noexcept = default;
StagedTree& StagedTree::operator=(StagedTree&&) noexcept = default;
bool StagedTree::pending() const { return impl_->staged; }

bool StageTree(Disk& disk, const std::string& dest_dir, const FileTree& tree, StagedTree* staged,
               Diagnostics* diags, const std::string& stamp) {
  StagedTree::Impl& st = *staged->impl_;
  WriteResult& r = staged->result;
  r = WriteResult{};
  Paths& p = st.p;
  if (!ResolveDest(dest_dir, &p, diags)) return false;
  if (!ValidateTree(tree, p, diags)) return false;
  const bool fault_mid_tree = FaultInjectionEnabled(kFaultWriterMidTree);
  if (!Recover(disk, p, diags)) return false;
  Existing ex;
  if (!InspectDest(disk, p, &ex, diags)) return false;
  st.exists = ex.exists;

  const std::string manifest = ManifestContent(tree, stamp);
  for (const auto& [path, bytes] : tree) {
    auto it = ex.tree.find(path);
    if (it == ex.tree.end()) {
      ++r.added;
    } else if (it->second == bytes) {
      ++r.unchanged;
    } else {
      ++r.changed;
    }
  }
  for (const auto& [path, bytes] : ex.tree) {
    if (!tree.count(path)) ++r.removed;
  }
  // The foreign-file check guarantees dest holds nothing but listed files and
  // the marker; equal markers mean the same file set, equal trees the bytes.
  if (ex.has_marker && ex.marker == manifest && ex.tree == tree) return true;

  // Build the complete new tree next to dest_dir.
  std::string err;
  auto abandon = [&](const std::string& what) {
    IoError(diags, p, what);
    AbandonStaged(disk, staged);
    return false;
  };
  if (!p.parent.empty() && !disk.IsDir(p.parent)) {
    // Remember the highest directory created, so abandoning removes it again
    // (E4: a failed build left an empty project directory behind).
    fs::path highest = fs::path(p.parent);
    while (highest.has_parent_path() && !highest.parent_path().empty() &&
           !disk.IsDir(highest.parent_path().generic_string())) {
      highest = highest.parent_path();
    }
    st.made_parent = highest.generic_string();
    if (!disk.MakeDirs(p.parent, &err)) return abandon(err);
  }
  if (!disk.MakeDirs(p.tmp, &err)) return abandon(err);
  st.made_tmp = true;  // Recover() proved p.tmp absent, and the lock keeps it ours
  const size_t total = tree.size() + 1;  // + the marker
  const size_t abort_at = total / 2;
  size_t index = 0;
  std::set<std::string> made;
  auto write_one = [&](const std::string& rel, const std::string& bytes) {
    if (fault_mid_tree && index == abort_at) std::abort();
    ++index;
    size_t slash = rel.rfind('/');
    if (slash != std::string::npos) {
      std::string dir = rel.substr(0, slash);
      if (!made.count(dir)) {
        if (!disk.MakeDirs(Join(p.tmp, dir), &err)) return false;
        made.insert(std::move(dir));
      }
    }
    return disk.WriteFile(Join(p.tmp, rel), bytes, &err);
  };
  // The marker first: a temporary tree left by a crash is then recognisably
  // nemoc's (Recover removes only such trees).
  if (!write_one(kManifestFileName, manifest)) return abandon(err);
  for (const auto& [path, bytes] : tree) {
    if (!write_one(path, bytes)) return abandon(err);
  }
  st.staged = true;
  return true;
}

bool SwapStaged(Disk& disk, StagedTree* staged, Diagnostics* diags) {
  StagedTree::Impl& st = *staged->impl_;
  if (!st.staged || st.swapped) return true;
  const Paths& p = st.p;
  std::string err, ignored;
  // Recover() undoes any crash between these steps.
  if (st.exists && !disk.Rename(p.dest, p.old, &err)) {
    IoError(diags, p, err);
    return false;
  }
  if (!disk.Rename(p.tmp, p.dest, &err)) {
    IoError(diags, p, err);
    if (st.exists && !disk.Rename(p.old, p.dest, &err)) {
      diags->Error("output.io",
                   "cannot move the previous tree back to " + p.dest + ": " + err + "; it is in " +
                       p.old + " and the next nemoc run restores it",
                   At(p.old));
    }
    return false;
  }
  st.swapped = true;
  staged->result.wrote = true;
  return true;
}

bool UnswapStaged(Disk& disk, StagedTree* staged, Diagnostics* diags) {
  StagedTree::Impl& st = *staged->impl_;
  if (!st.swapped) return true;
  const Paths& p = st.p;
  std::string err;
  // dest -> tmp (removed by AbandonStaged), old -> dest.
  if (!disk.Rename(p.dest, p.tmp, &err) || (st.exists && !disk.Rename(p.old, p.dest, &err))) {
    diags->Error("output.io",
                 "cannot restore the previous tree of " + p.dest + ": " + err +
                     "; the next nemoc run restores it from " + p.old,
                 At(p.dest));
    return false;
  }
  st.swapped = false;
  staged->result.wrote = false;
  return true;
}

namespace {

void RemoveMadeTmp(Disk& disk, StagedTree::Impl& st) {
  std::string ignored;
  // Only a temporary tree this process made (E16: a stage whose Recover()
  // refused a user's .<target>.nemoc-tmp used to remove it here).
  if (st.made_tmp && !st.p.tmp.empty()) disk.RemoveTree(st.p.tmp, &ignored);
  st.made_tmp = false;
  st.staged = false;
}

void RemoveMadeParent(Disk& disk, StagedTree::Impl& st) {
  std::string ignored;
  if (st.made_parent.empty()) return;
  TreeListing listing;
  if (disk.ListTree(st.made_parent, &listing, &ignored) && listing.files.empty() &&
      listing.others.empty()) {
    disk.RemoveTree(st.made_parent, &ignored);
  }
  st.made_parent.clear();
}

}  // namespace

void AbandonStaged(Disk& disk, StagedTree* staged) {
  StagedTree::Impl& st = *staged->impl_;
  if (st.swapped) return;  // UnswapStaged first
  RemoveMadeTmp(disk, st);
  RemoveMadeParent(disk, st);
}

void AbandonAllStaged(Disk& disk, const std::vector<StagedTree*>& trees) {
  // Every temporary tree first, then the directories made for them: a project
  // directory made by its first target holds the other targets' temporary
  // trees until they are gone (E27: a disk-full build left an empty
  // out/<project>/).
  for (StagedTree* t : trees) {
    if (!t->impl_->swapped) RemoveMadeTmp(disk, *t->impl_);
  }
  for (StagedTree* t : trees) {
    if (!t->impl_->swapped) RemoveMadeParent(disk, *t->impl_);
  }
}

void FinishStaged(Disk& disk, StagedTree* staged, Diagnostics* diags) {
  StagedTree::Impl& st = *staged->impl_;
  if (!st.swapped) return;
  std::string err;
  if (st.exists && !disk.RemoveTree(st.p.old, &err)) {
    diags->Warning("output.cleanup",
                   "wrote " + st.p.dest + " but cannot remove the previous tree " + st.p.old +
                       ": " + err + "; the next nemoc run removes it",
                   At(st.p.old));
  }
  st.staged = false;
  st.swapped = false;
  st.made_tmp = false;  // it is dest now
}

bool WriteTree(Disk& disk, const std::string& dest_dir, const FileTree& tree,
               WriteResult* result, Diagnostics* diags, const std::string& stamp) {
  Diagnostics sink;
  if (!diags) diags = &sink;
  StagedTree staged;
  bool ok = StageTree(disk, dest_dir, tree, &staged, diags, stamp);
  if (ok && !SwapStaged(disk, &staged, diags)) {
    AbandonStaged(disk, &staged);
    ok = false;
  }
  if (ok) FinishStaged(disk, &staged, diags);
  if (result) *result = staged.result;
  return ok;
}

void SyncFilesystemOf(const std::string& dir) {
  std::error_code ec;
  fs::path at = fs::absolute(dir, ec);
  while (!at.empty() && !fs::is_directory(at, ec) && at.has_parent_path() && at != at.parent_path()) {
    at = at.parent_path();
  }
  const int fd = ::open(at.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::syncfs(fd);
  ::close(fd);
}

OutputLock::~OutputLock() {
  ::unlink(path_.c_str());  // while still held: see Acquire
  ::close(fd_);             // closing drops the flock
  for (const std::string& dir : made_) {
    if (::rmdir(dir.c_str()) != 0) break;  // not empty (a build wrote into it): kept
  }
}

std::unique_ptr<OutputLock> OutputLock::Acquire(const std::string& dir, const std::string& file_name,
                                                const std::function<void()>& waiting,
                                                std::string* err) {
  std::error_code ec;
  const fs::path root = fs::absolute(dir.empty() ? "." : dir, ec).lexically_normal();
  // mkdir -p, remembering what was created (deepest first) for the release.
  std::vector<std::string> made;
  {
    std::vector<fs::path> missing;
    for (fs::path at = root; !at.empty(); at = at.parent_path()) {
      struct stat st {};
      if (::stat(at.c_str(), &st) == 0) break;
      missing.push_back(at);
      if (at == at.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      if (::mkdir(it->c_str(), 0755) != 0 && errno != EEXIST) {
        *err = "cannot create " + it->string() + " for its lock: " + std::strerror(errno);
        for (const std::string& d : made) ::rmdir(d.c_str());
        return nullptr;
      }
      made.insert(made.begin(), it->string());
    }
  }
  const fs::path path = root / file_name;
  // The holder unlinks the file before it unlocks, so a lock taken on a file
  // that is no longer at `path` is retried.
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
      *err = "cannot open the lock file " + path.string() + ": " + std::strerror(errno);
      for (const std::string& d : made) ::rmdir(d.c_str());
      return nullptr;
    }
    int rc = ::flock(fd, LOCK_EX | LOCK_NB);
    if (rc != 0 && errno == EWOULDBLOCK) {
      if (waiting) waiting();
      do {
        rc = ::flock(fd, LOCK_EX);
      } while (rc != 0 && errno == EINTR);
    }
    if (rc != 0) {
      *err = "cannot lock " + path.string() + ": " + std::strerror(errno);
      ::close(fd);
      for (const std::string& d : made) ::rmdir(d.c_str());
      return nullptr;
    }
    struct stat held {}, now {};
    if (::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev) {
      return std::unique_ptr<OutputLock>(new OutputLock(fd, path.string(), std::move(made)));
    }
    ::close(fd);  // the previous holder removed it: take the new one
  }
}

void TestPause(std::string_view point) {
  const char* env = std::getenv("NEMOC_TEST_PAUSE");
  if (env == nullptr || point.empty()) return;
  std::string_view list(env);
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos && item.substr(0, eq) == point) {
      const std::string gate(item.substr(eq + 1));
      const int fd = ::open((gate + ".reached").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      if (fd >= 0) ::close(fd);
      struct stat st {};
      for (int i = 0; i < 24000 && ::stat(gate.c_str(), &st) != 0; ++i) ::usleep(5000);
      return;
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

bool ReadTree(Disk& disk, const std::string& dest_dir, FileTree* tree,
              Diagnostics* diags) {
  tree->clear();
  Diagnostics sink;
  if (!diags) diags = &sink;
  Paths p;
  if (!ResolveDest(dest_dir, &p, diags)) return false;
  Existing ex;
  if (!InspectDest(disk, p, &ex, diags)) return false;
  *tree = std::move(ex.tree);
  return true;
}

std::vector<std::pair<char, std::string>> DiffTrees(const FileTree& have,
                                                    const FileTree& want) {
  std::vector<std::pair<char, std::string>> out;
  auto h = have.begin();
  auto w = want.begin();
  while (h != have.end() || w != want.end()) {
    if (w == want.end() || (h != have.end() && h->first < w->first)) {
      out.emplace_back('D', h->first);
      ++h;
    } else if (h == have.end() || w->first < h->first) {
      out.emplace_back('A', w->first);
      ++w;
    } else {
      if (h->second != w->second) out.emplace_back('M', h->first);
      ++h;
      ++w;
    }
  }
  return out;
}

}  // namespace nemoc
