// Writes one target's generated tree to out/<project>/<target>/ and reads it
// back. nemoc owns such a directory completely: every write replaces it with
// exactly the new tree (built in a temporary sibling, then swapped in), and it
// refuses to touch a directory holding anything it did not generate.
#ifndef NEMOC_TREE_WRITER_H_
#define NEMOC_TREE_WRITER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diagnostic.h"
#include "disk_interface.h"

namespace nemoc {

/// A complete generated tree for one target: relative path
/// ("30-train/pytorchjob-x.yaml") -> bytes.
using FileTree = std::map<std::string, std::string>;

/// The marker file nemoc writes into every target directory it owns; its
/// content lists every generated file (one relative path per line, sorted,
/// each line ending in '\n'; the marker does not list itself), which is how
/// nemoc knows which files it made. Lines starting with '#' follow the list:
/// the build stamp (build_stamp.h) that lets the next build skip the target.
inline constexpr const char kManifestFileName[] = ".nemoc-manifest";

/// Name of the fault-injection environment variable and of the one point the
/// writer checks: abort after half of the files are in the temporary dir.
inline constexpr const char kFaultInjectEnv[] = "NEMOC_FAULT_INJECT";
inline constexpr const char kFaultWriterMidTree[] = "writer-mid-tree";
/// --commit: abort between the index write and the branch update (E17).
inline constexpr const char kFaultBetweenIndexAndRef[] = "commit-between-index-and-ref";

struct WriteResult {
  int added = 0, changed = 0, removed = 0, unchanged = 0;
  bool wrote = false;
};

/// Replaces `dest_dir` (e.g. "out/proj/tgt") with exactly `tree` plus the
/// marker file.
///  - Every path is checked first (IsValidTreePath, and no path may be both a
///    file and a directory): "output.bad-path", nothing touched.
///  - Leftovers of an interrupted run (".<base>.nemoc-tmp" / ".<base>.nemoc-old"
///    next to dest_dir) are cleaned up; when dest_dir is missing but the old
///    one exists it is restored first. Reported as notes ("output.recovered").
///  - Refuses with one "output.foreign-file" error per file (location.file is
///    that file's path) when dest_dir holds a regular file neither listed in
///    its marker nor the marker itself, or anything that is not a regular file
///    (symlink, FIFO, ...); with "output.not-nemoc-dir" when dest_dir is
///    non-empty and has no marker; with "output.not-a-directory" when dest_dir
///    exists but is not a plain directory (a file, a symlink, ...).
///  - When the tree and marker on disk are byte-identical to the new ones,
///    writes nothing (wrote=false), so mtimes stay.
///  - Otherwise builds ".<base>.nemoc-tmp" (files 0644, dirs 0755), renames
///    dest_dir -> ".<base>.nemoc-old", tmp -> dest_dir, removes the old one.
///    I/O failures are "output.io"; the previous tree stays in place.
///  - With NEMOC_FAULT_INJECT=writer-mid-tree, calls std::abort() after half of
///    the files are written into the temporary directory.
/// `result` (may be null) counts against the previous tree (files listed in
/// the old marker). Returns false iff an error was added to `diags`.
/// `stamp` (marker lines starting with '#', see build_stamp.h) is appended
/// to the marker (a changed stamp alone is a change like any other).
bool WriteTree(Disk& disk, const std::string& dest_dir, const FileTree& tree,
               WriteResult* result, Diagnostics* diags, const std::string& stamp = "");

/// All-or-nothing across targets (field-review.md E4): `build` stages every
/// changed target's complete new tree next to it (StageTree: validation,
/// recovery, foreign-file check, every file written), and only when all are
/// staged swaps them in (SwapStaged), then removes the previous trees
/// (FinishStaged). An error while staging abandons every staged tree
/// (AbandonStaged, which also removes project directories it created); an
/// error while swapping puts the already swapped ones back (UnswapStaged).
/// WriteTree is the one-target form of the same steps.
class StagedTree {
 public:
  StagedTree();
  ~StagedTree();
  StagedTree(StagedTree&&) noexcept;
  StagedTree& operator=(StagedTree&&) noexcept;
  /// Counts against the previous tree; `wrote` once swapped in.
  WriteResult result;
  /// A new tree is staged (false when the target was already up to date).
  bool pending() const;
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  friend bool StageTree(Disk&, const std::string&, const FileTree&, StagedTree*, Diagnostics*,
                        const std::string&);
  friend bool SwapStaged(Disk&, StagedTree*, Diagnostics*);
  friend bool UnswapStaged(Disk&, StagedTree*, Diagnostics*);
  friend void AbandonStaged(Disk&, StagedTree*);
  friend void AbandonAllStaged(Disk&, const std::vector<StagedTree*>&);
  friend void FinishStaged(Disk&, StagedTree*, Diagnostics*);
};
bool StageTree(Disk& disk, const std::string& dest_dir, const FileTree& tree, StagedTree* staged,
               Diagnostics* diags, const std::string& stamp = "");
bool SwapStaged(Disk& disk, StagedTree* staged, Diagnostics* diags);
bool UnswapStaged(Disk& disk, StagedTree* staged, Diagnostics* diags);
void AbandonStaged(Disk& disk, StagedTree* staged);
/// AbandonStaged for several trees at once, in an order that also removes
/// a directory made by one of them that held the others' temporary trees.
/// Removes only temporary trees and directories this process created.
void AbandonAllStaged(Disk& disk, const std::vector<StagedTree*>& trees);
void FinishStaged(Disk& disk, StagedTree* staged, Diagnostics* diags);

/// syncfs(2) of the filesystem holding `dir` (or its nearest existing
/// ancestor); best effort.
void SyncFilesystemOf(const std::string& dir);

/// An exclusive lock on one directory nemoc writes (the output root, or a
/// repository's common Git directory), held until destroyed.
/// Two nemoc processes writing one output root once shared the fixed
/// .<target>.nemoc-tmp/.nemoc-old siblings, and one's recovery deleted the
/// other's live temporary tree (field-review.md E1: partial and mixed trees
/// with exit 0). `build` holds this lock from its foreign-file preflight to
/// its last write, so the siblings belong to the holder and recovery only
/// ever sees what a dead process left.
///
/// It is a flock(2) on `<dir>/<file_name>`, beside what it protects (E15: in
/// $TMPDIR, two builds with different TMPDIRs -- sudo, systemd PrivateTmp,
/// two CI containers on one workspace -- each took a lock of its own and
/// mixed the tree). `dir` is created when missing and removed again on
/// release when it is still empty. The holder unlinks the file while it still
/// holds it, so nothing stays behind; a file left by a killed holder is
/// locked and reused (the kernel dropped its flock), never unlinked by anyone
/// but a holder, so recovery never removes a live lock. `waiting` runs once
/// when another process holds it.
class OutputLock {
 public:
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  static std::unique_ptr<OutputLock> Acquire(const std::string& dir, const std::string& file_name,
                                             const std::function<void()>& waiting,
                                             std::string* err);

 private:
  OutputLock(int fd, std::string path, std::vector<std::string> made)
      : fd_(fd), path_(std::move(path)), made_(std::move(made)) {}
  int fd_;
  std::string path_;
  std::vector<std::string> made_;  // directories Acquire created, deepest first
};

/// The output root's lock file: `<out>/.nemoc.lock` (a name no project can
/// take, since project names are DNS labels).
inline constexpr const char kOutputLockName[] = ".nemoc.lock";
/// The repository's: `<common git dir>/nemoc.lock`.
inline constexpr const char kRepoLockName[] = "nemoc.lock";

/// Reads back what nemoc generated in dest_dir (the files its marker lists
/// that exist; the marker itself is not part of the tree) — used by
/// `nemoc check` to compare. Returns false with a diagnostic if the dir has
/// foreign files or no marker (same rules as WriteTree), and true with an
/// empty tree if dest_dir does not exist. Never modifies the disk.
bool ReadTree(Disk& disk, const std::string& dest_dir, FileTree* tree,
              Diagnostics* diags);

/// Compares two trees; returns the relative paths that differ, sorted by path,
/// with a one-char status: 'A' only in `want`, 'D' only in `have`, 'M'
/// different bytes.
std::vector<std::pair<char, std::string>> DiffTrees(const FileTree& have,
                                                    const FileTree& want);

/// Whether `path` may be a key of a FileTree: relative, non-empty, '/'
/// separated, no empty / "." / ".." segments, no segment starting with '.',
/// no backslash, NUL or other control character, not starting with '#'
/// (marker comment lines), and not the marker's name.
/// On false, `why` (if given) says what is wrong.
bool IsValidTreePath(const std::string& path, std::string* why);

/// The marker file's content for `tree`, followed by the `stamp` lines.
std::string ManifestContent(const FileTree& tree, const std::string& stamp = "");

/// True when the NEMOC_FAULT_INJECT environment variable (a comma-separated
/// list) names `point`, e.g. FaultInjectionEnabled(kFaultWriterMidTree).
bool FaultInjectionEnabled(std::string_view point);

/// A deterministic seam for concurrency tests. When NEMOC_TEST_PAUSE (a
/// comma-separated list of POINT=PATH) names `point`, creates PATH.reached
/// and waits until PATH exists (at most 120 s), so a test can hold a process
/// at a known step while it starts another one.
void TestPause(std::string_view point);

}  // namespace nemoc

#endif  // NEMOC_TREE_WRITER_H_
