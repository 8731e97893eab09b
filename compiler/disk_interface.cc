#include "disk_interface.h"

#include "file_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace nemoc {

namespace fs = std::filesystem;

bool Disk::Exists(const std::string& path) {
  FileKind kind;
  std::string err;
  return Stat(path, &kind, &err) && kind != FileKind::kMissing;
}

bool Disk::IsDir(const std::string& path) {
  FileKind kind;
  std::string err;
  return Stat(path, &kind, &err) && kind == FileKind::kDirectory;
}

namespace {

void SetErr(std::string* err, const std::string& path, const std::string& what) {
  if (err) *err = path + ": " + what;
}

void SetErrno(std::string* err, const std::string& path, const char* op,
              int errnum) {
  SetErr(err, path, std::string(op) + ": " + std::strerror(errnum));
}

// "a/./b/" -> "a/b"; keeps "/" and ""; "." stays ".".
fs::path NormalPath(const std::string& p) {
  if (p.empty()) return fs::path(".");
  fs::path n = fs::path(p).lexically_normal();
  if (!n.has_filename() && n.has_relative_path()) n = n.parent_path();
  if (n.empty()) n = ".";
  return n;
}

}  // namespace

// --- RealDisk ----------------------------------------------------------------

bool RealDisk::Stat(const std::string& path, FileKind* kind, std::string* err) {
  std::error_code ec;
  fs::file_status st = fs::symlink_status(path, ec);
  if (st.type() == fs::file_type::not_found) {
    *kind = FileKind::kMissing;
    return true;
  }
  if (ec) {
    SetErr(err, path, ec.message());
    return false;
  }
  switch (st.type()) {
    case fs::file_type::regular: *kind = FileKind::kRegular; break;
    case fs::file_type::directory: *kind = FileKind::kDirectory; break;
    default: *kind = FileKind::kOther; break;
  }
  return true;
}

bool RealDisk::ReadFile(const std::string& path, std::string* contents,
                        std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    SetErrno(err, path, "open", errno);
    return false;
  }
  std::string out;
  struct stat st;
  const size_t expected = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0;
  if (const int error = ReadToEnd(fd, expected, std::string().max_size(), &out); error != 0) {
    ::close(fd);
    SetErrno(err, path, "read", error);
    return false;
  }
  ::close(fd);
  *contents = std::move(out);
  return true;
}

bool RealDisk::WriteFile(const std::string& path, const std::string& contents,
                         std::string* err) {
  int fd = ::open(path.c_str(),
                  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    SetErrno(err, path, "open", errno);
    return false;
  }
  // The umask may have stripped bits at creation; an existing file may have
  // had other bits. The contract is exactly 0644.
  if (::fchmod(fd, 0644) != 0) {
    int saved = errno;
    ::close(fd);
    SetErrno(err, path, "chmod", saved);
    return false;
  }
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      SetErrno(err, path, "write", saved);
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    SetErrno(err, path, "close", errno);
    return false;
  }
  return true;
}

bool RealDisk::MakeDirs(const std::string& path, std::string* err) {
  fs::path target = NormalPath(path);
  fs::path prefix;
  for (const fs::path& part : target) {
    prefix /= part;
    std::error_code ec;
    fs::file_status st = fs::status(prefix, ec);  // follows symlinks
    if (fs::is_directory(st)) continue;
    if (st.type() != fs::file_type::not_found) {
      SetErr(err, prefix.string(),
             ec ? ec.message() : std::string("exists and is not a directory"));
      return false;
    }
    if (!fs::create_directory(prefix, ec)) {
      if (ec) {
        SetErr(err, prefix.string(), "mkdir: " + ec.message());
        return false;
      }
      continue;  // created concurrently by someone else
    }
    fs::permissions(prefix, static_cast<fs::perms>(0755),
                    fs::perm_options::replace, ec);
    if (ec) {
      SetErr(err, prefix.string(), "chmod: " + ec.message());
      return false;
    }
  }
  return true;
}

namespace {

// One directory of RealDisk::ListTree, and those below it. readdir's d_type
// names the kind, so a listing costs no stat per entry (a no-op build lists
// every target's tree: the std::filesystem walk's lstat per entry and open
// per directory were a tenth of its time, issue #47); lstat only where the
// file system does not say. Symbolic links are never followed.
bool WalkTree(const std::string& abs, const std::string& rel, TreeListing* listing, std::string* what) {
  DIR* dir = ::opendir(abs.c_str());
  if (dir == nullptr) {
    *what = std::string(rel.empty() ? "" : rel + ": ") + std::strerror(errno);
    return false;
  }
  std::vector<std::string> below;
  bool any = false;
  for (;;) {
    errno = 0;
    const struct dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) {
        *what = std::string(rel.empty() ? "" : rel + ": ") + std::strerror(errno);
        ::closedir(dir);
        return false;
      }
      break;
    }
    const char* name = entry->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
    any = true;
    std::string child = rel.empty() ? std::string(name) : rel + "/" + name;
    unsigned char type = entry->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (::lstat((abs + "/" + name).c_str(), &st) != 0) {
        *what = child + ": " + std::strerror(errno);
        ::closedir(dir);
        return false;
      }
      type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
    }
    if (type == DT_DIR) {
      below.push_back(std::move(child));
    } else if (type == DT_REG) {
      listing->files.push_back(std::move(child));
    } else {
      listing->others.push_back(std::move(child));
    }
  }
  ::closedir(dir);
  if (!any && !rel.empty()) listing->empty_dirs.push_back(rel);
  // Descended after closing: one open directory at a time, however deep.
  const std::string base = abs == "/" ? "" : abs;
  for (const std::string& sub : below) {
    if (!WalkTree(base + "/" + sub.substr(rel.empty() ? 0 : rel.size() + 1), sub, listing, what)) return false;
  }
  return true;
}

}  // namespace

bool RealDisk::ListTree(const std::string& dir, TreeListing* listing,
                        std::string* err) {
  listing->files.clear();
  listing->others.clear();
  listing->empty_dirs.clear();
  const fs::path root = NormalPath(dir);
  struct stat st;
  if (::stat(root.c_str(), &st) != 0) {
    SetErr(err, dir, std::strerror(errno));
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    SetErr(err, dir, "not a directory");
    return false;
  }
  std::string what;
  if (!WalkTree(root.string(), "", listing, &what)) {
    SetErr(err, dir, "listing: " + what);
    return false;
  }
  std::sort(listing->files.begin(), listing->files.end());
  std::sort(listing->others.begin(), listing->others.end());
  std::sort(listing->empty_dirs.begin(), listing->empty_dirs.end());
  return true;
}

bool RealDisk::Rename(const std::string& from, const std::string& to,
                      std::string* err) {
  FileKind kind;
  if (!Stat(to, &kind, err)) return false;
  if (kind != FileKind::kMissing) {
    SetErr(err, to, "rename target already exists");
    return false;
  }
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) {
    SetErr(err, from, "rename to " + to + ": " + ec.message());
    return false;
  }
  return true;
}

bool RealDisk::RemoveTree(const std::string& path, std::string* err) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) {
    SetErr(err, path, "remove: " + ec.message());
    return false;
  }
  return true;
}

// --- MemoryDisk --------------------------------------------------------------

namespace {

// Canonical key: "" for the current directory, no trailing '/', "/" for root.
std::string Key(const std::string& path) {
  std::string n = NormalPath(path).generic_string();
  if (n == ".") return {};
  return n;
}

std::string ParentKey(const std::string& key) {
  size_t pos = key.rfind('/');
  if (pos == std::string::npos) return {};
  if (pos == 0) return "/";
  return key.substr(0, pos);
}

// Every proper ancestor of `key` plus `key` itself, shortest first, without
// the implicit roots "" and "/".
std::vector<std::string> SelfAndAncestors(const std::string& key) {
  std::vector<std::string> out;
  for (size_t i = 1; i < key.size(); ++i) {
    if (key[i] == '/') out.push_back(key.substr(0, i));
  }
  if (!key.empty() && key != "/") out.push_back(key);
  return out;
}

bool IsUnder(const std::string& key, const std::string& dir) {
  return key.size() > dir.size() && key.compare(0, dir.size(), dir) == 0 &&
         key[dir.size()] == '/';
}

}  // namespace

bool MemoryDisk::CheckMutation(const std::string& path, std::string* err) {
  if (crash_at_ >= 0 && mutations_ >= crash_at_) {
    SetErr(err, path, "simulated crash");
    return false;
  }
  ++mutations_;
  return true;
}

bool MemoryDisk::Stat(const std::string& path, FileKind* kind,
                      std::string* /*err*/) {
  std::string k = Key(path);
  if (k.empty() || k == "/" || dirs_.count(k)) {
    *kind = FileKind::kDirectory;
  } else if (files_.count(k)) {
    *kind = FileKind::kRegular;
  } else {
    *kind = FileKind::kMissing;
  }
  return true;
}

bool MemoryDisk::ReadFile(const std::string& path, std::string* contents,
                          std::string* err) {
  std::string k = Key(path);
  auto it = files_.find(k);
  if (it != files_.end()) {
    *contents = it->second;
    return true;
  }
  FileKind kind;
  Stat(path, &kind, err);
  SetErr(err, path, kind == FileKind::kDirectory ? "read: Is a directory"
                                                  : "open: No such file or directory");
  return false;
}

bool MemoryDisk::WriteFile(const std::string& path, const std::string& contents,
                           std::string* err) {
  if (!CheckMutation(path, err)) return false;
  std::string k = Key(path);
  if (k.empty() || k == "/" || dirs_.count(k)) {
    SetErr(err, path, "open: Is a directory");
    return false;
  }
  std::string parent = ParentKey(k);
  if (!(parent.empty() || parent == "/" || dirs_.count(parent))) {
    SetErr(err, path, files_.count(parent) ? "open: Not a directory"
                                           : "open: No such file or directory");
    return false;
  }
  files_[k] = contents;
  return true;
}

bool MemoryDisk::MakeDirs(const std::string& path, std::string* err) {
  if (!CheckMutation(path, err)) return false;
  std::vector<std::string> chain = SelfAndAncestors(Key(path));
  for (const std::string& d : chain) {
    if (files_.count(d)) {
      SetErr(err, d, "exists and is not a directory");
      return false;
    }
  }
  dirs_.insert(chain.begin(), chain.end());
  return true;
}

bool MemoryDisk::ListTree(const std::string& dir, TreeListing* listing,
                          std::string* err) {
  listing->files.clear();
  listing->others.clear();
  listing->empty_dirs.clear();
  std::string k = Key(dir);
  FileKind kind;
  Stat(dir, &kind, err);
  if (kind != FileKind::kDirectory) {
    SetErr(err, dir, kind == FileKind::kMissing ? "No such file or directory"
                                                : "not a directory");
    return false;
  }
  std::string prefix = k.empty() ? std::string() : k == "/" ? k : k + "/";
  for (auto it = files_.lower_bound(prefix);
       it != files_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
       ++it) {
    if (k.empty() && !it->first.empty() && it->first[0] == '/') continue;
    listing->files.push_back(it->first.substr(prefix.size()));
  }
  for (const std::string& d : dirs_) {
    if (d == k || (!prefix.empty() && d.compare(0, prefix.size(), prefix) != 0)) continue;
    if (k.empty() && !d.empty() && d[0] == '/') continue;
    const bool has_entry =
        std::any_of(files_.begin(), files_.end(), [&](const auto& f) { return IsUnder(f.first, d); }) ||
        std::any_of(dirs_.begin(), dirs_.end(), [&](const std::string& e) { return IsUnder(e, d); });
    if (!has_entry) listing->empty_dirs.push_back(d.substr(prefix.size()));
  }
  return true;  // map and set order are already sorted order
}

bool MemoryDisk::Rename(const std::string& from, const std::string& to,
                        std::string* err) {
  if (!CheckMutation(from, err)) return false;
  std::string f = Key(from), t = Key(to);
  FileKind from_kind, to_kind;
  Stat(from, &from_kind, err);
  Stat(to, &to_kind, err);
  if (f.empty() || f == "/" || t.empty() || t == "/") {
    SetErr(err, from, "rename: Device or resource busy");
    return false;
  }
  if (from_kind == FileKind::kMissing) {
    SetErr(err, from, "rename: No such file or directory");
    return false;
  }
  if (to_kind != FileKind::kMissing) {
    SetErr(err, to, "rename target already exists");
    return false;
  }
  std::string parent = ParentKey(t);
  if (!(parent.empty() || parent == "/" || dirs_.count(parent))) {
    SetErr(err, to, "rename: No such file or directory");
    return false;
  }
  if (from_kind == FileKind::kRegular) {
    auto node = files_.extract(f);
    node.key() = t;
    files_.insert(std::move(node));
    return true;
  }
  if (IsUnder(t, f)) {
    SetErr(err, from, "rename: Invalid argument (into itself)");
    return false;
  }
  std::vector<std::string> moved_dirs;
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (*it == f || IsUnder(*it, f)) {
      moved_dirs.push_back(t + it->substr(f.size()));
      it = dirs_.erase(it);
    } else {
      ++it;
    }
  }
  dirs_.insert(moved_dirs.begin(), moved_dirs.end());
  std::map<std::string, std::string> moved_files;
  for (auto it = files_.begin(); it != files_.end();) {
    if (IsUnder(it->first, f)) {
      moved_files.emplace(t + it->first.substr(f.size()), std::move(it->second));
      it = files_.erase(it);
    } else {
      ++it;
    }
  }
  files_.merge(moved_files);
  return true;
}

bool MemoryDisk::RemoveTree(const std::string& path, std::string* err) {
  if (!CheckMutation(path, err)) return false;
  std::string k = Key(path);
  if (k.empty() || k == "/") {
    SetErr(err, path, "refusing to remove the current or root directory");
    return false;
  }
  files_.erase(k);
  std::erase_if(files_, [&](const auto& kv) { return IsUnder(kv.first, k); });
  std::erase_if(dirs_, [&](const std::string& d) { return d == k || IsUnder(d, k); });
  return true;
}

void MemoryDisk::AddFile(const std::string& path, const std::string& contents) {
  std::string k = Key(path);
  std::vector<std::string> chain = SelfAndAncestors(ParentKey(k));
  dirs_.insert(chain.begin(), chain.end());
  files_[k] = contents;
}

}  // namespace nemoc
