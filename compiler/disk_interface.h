// A filesystem seam in the style of ninja's DiskInterface: the tree writer
// talks to a Disk, production code passes a RealDisk, tests can pass a
// MemoryDisk. Every operation reports failure through its return value and a
// human-readable `err`; no exception escapes (std::filesystem is used through
// its std::error_code overloads, file contents through POSIX calls).
#ifndef NEMOC_DISK_INTERFACE_H_
#define NEMOC_DISK_INTERFACE_H_

#include <map>
#include <set>
#include <string>
#include <vector>

namespace nemoc {

/// What a path names. Symbolic links are not followed: a symlink (even one to
/// a directory) is kOther, like FIFOs, sockets and devices.
enum class FileKind { kMissing, kRegular, kDirectory, kOther };

/// The non-directory entries below a directory, as paths relative to it with
/// '/' separators, each list sorted. Directories are not listed (they are
/// implied by the files) unless they are empty, and symlinks are never
/// followed.
struct TreeListing {
  std::vector<std::string> files;       ///< regular files
  std::vector<std::string> others;      ///< symlinks, FIFOs, sockets, devices
  std::vector<std::string> empty_dirs;  ///< directories with no entry at all
};

class Disk {
 public:
  virtual ~Disk() = default;

  /// Kind of `path` (lstat semantics). Returns false only when the kind cannot
  /// be determined (e.g. permission denied); a missing path is kMissing + true.
  virtual bool Stat(const std::string& path, FileKind* kind,
                    std::string* err) = 0;
  /// Whole contents of the regular file `path`.
  virtual bool ReadFile(const std::string& path, std::string* contents,
                        std::string* err) = 0;
  /// Creates or truncates `path` (mode 0644 regardless of umask) and writes
  /// `contents` exactly. The parent directory must exist; `path` must not be a
  /// symlink.
  virtual bool WriteFile(const std::string& path, const std::string& contents,
                         std::string* err) = 0;
  /// `mkdir -p`: creates `path` and any missing parents with mode 0755
  /// (regardless of umask). Succeeds when `path` already is a directory.
  virtual bool MakeDirs(const std::string& path, std::string* err) = 0;
  /// Recursive listing of `dir` (see TreeListing). Fails when `dir` is not a
  /// directory.
  virtual bool ListTree(const std::string& dir, TreeListing* listing,
                        std::string* err) = 0;
  /// Renames a file or a whole directory. Fails when `to` already exists
  /// (RealDisk checks this just before renaming; it is not atomic).
  virtual bool Rename(const std::string& from, const std::string& to,
                      std::string* err) = 0;
  /// `rm -rf`: removes a file or a directory with everything below it.
  /// Succeeds when `path` does not exist.
  virtual bool RemoveTree(const std::string& path, std::string* err) = 0;

  /// Conveniences over Stat(); an undeterminable kind counts as "no".
  bool Exists(const std::string& path);
  bool IsDir(const std::string& path);
};

/// The real filesystem.
class RealDisk : public Disk {
 public:
  bool Stat(const std::string& path, FileKind* kind, std::string* err) override;
  bool ReadFile(const std::string& path, std::string* contents,
                std::string* err) override;
  bool WriteFile(const std::string& path, const std::string& contents,
                 std::string* err) override;
  bool MakeDirs(const std::string& path, std::string* err) override;
  bool ListTree(const std::string& dir, TreeListing* listing,
                std::string* err) override;
  bool Rename(const std::string& from, const std::string& to,
              std::string* err) override;
  bool RemoveTree(const std::string& path, std::string* err) override;
};

/// An in-memory filesystem for tests: a map path -> contents plus a set of
/// directories. Paths are normalised lexically ("a/./b/" is "a/b"); "" and "."
/// name the (always existing) current directory and "/" the root. It has no
/// symlinks, so listings never contain `others`. Copyable, so a test can
/// snapshot a state and replay from it; subclass and override an operation to
/// inject a specific I/O error.
class MemoryDisk : public Disk {
 public:
  bool Stat(const std::string& path, FileKind* kind, std::string* err) override;
  bool ReadFile(const std::string& path, std::string* contents,
                std::string* err) override;
  bool WriteFile(const std::string& path, const std::string& contents,
                 std::string* err) override;
  bool MakeDirs(const std::string& path, std::string* err) override;
  bool ListTree(const std::string& dir, TreeListing* listing,
                std::string* err) override;
  bool Rename(const std::string& from, const std::string& to,
              std::string* err) override;
  bool RemoveTree(const std::string& path, std::string* err) override;

  // --- Test helpers -------------------------------------------------------

  /// Creates `path` with `contents`, creating parent directories as needed.
  /// Not counted as a mutation and not subject to a simulated crash.
  void AddFile(const std::string& path, const std::string& contents);
  const std::map<std::string, std::string>& files() const { return files_; }
  const std::set<std::string>& dirs() const { return dirs_; }

  /// Number of mutating calls (WriteFile, MakeDirs, Rename, RemoveTree) that
  /// were allowed to run so far.
  int mutations() const { return mutations_; }
  /// Simulates a crash after `n` more mutating calls: from then on every
  /// mutating call fails ("simulated crash") and leaves the state untouched,
  /// which freezes the disk exactly as a killed process would leave it.
  /// A negative `n` disables the simulation.
  void CrashAfter(int n) { crash_at_ = n < 0 ? -1 : mutations_ + n; }

 private:
  bool CheckMutation(const std::string& path, std::string* err);

  std::map<std::string, std::string> files_;
  std::set<std::string> dirs_;
  int mutations_ = 0;
  int crash_at_ = -1;
};

}  // namespace nemoc

#endif  // NEMOC_DISK_INTERFACE_H_
