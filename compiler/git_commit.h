// `nemoc build --commit`: records generated target trees in Git with libgit2.
// Only the target directories nemoc writes are ever staged or committed; the
// new commit's tree is the parent's tree with exactly those directories
// replaced, so nothing else in the repository (staged or not) is touched.
#ifndef NEMOC_GIT_COMMIT_H_
#define NEMOC_GIT_COMMIT_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "diagnostic.h"
#include "tree_writer.h"

namespace nemoc {

/// One output directory to record: its path on disk (as given to the
/// writer, e.g. "out/proj/tgt") and the tree it must hold (nullptr = the
/// directory is removed, e.g. a target the spec no longer lists).
struct CommitEntry {
  std::string dir;
  const FileTree* tree = nullptr;
  std::string label;  // "proj/tgt", named in the commit message
};

struct CommitOptions {
  std::string repo_dir;      // "" = discover from the working directory
  std::string branch;        // "" = the checked-out branch
  std::string author_name;   // "" = user.name from git config
  std::string author_email;  // "" = user.email from git config
  // libgit2 runs no hooks: a repository with commit hooks is refused unless
  // the user says to commit without them (git commit --no-verify).
  bool no_verify = false;
  // D6: the spec files the trees were built from, committed with them as
  // they are on disk, each with its <dir>/.nemoc/ (the schema copy `nemoc
  // init` writes): the commit then records what produced it. A file outside
  // the work tree is left out (the trees are still committed).
  std::vector<std::string> sources;
  // Files nemoc writes beside the specs in the same build (cost.h's pinned
  // priors in .nemoc/): path -> the bytes it writes, committed as those bytes.
  std::map<std::string, std::string> generated;
};

class GitCommitter {
 public:
  ~GitCommitter();

  /// Opens the repository and resolves every entry's path inside its work
  /// tree. Errors ("git.*") when there is no repository, the branch name is
  /// invalid, or an entry lies outside the work tree.
  static std::unique_ptr<GitCommitter> Open(const CommitOptions& options,
                                            std::vector<CommitEntry> entries,
                                            Diagnostics* diags);

  /// True when the branch is the one checked out in the work tree: then the
  /// trees are written to disk as usual (and the index is updated for them);
  /// otherwise only the branch is advanced and the disk is left alone.
  bool writes_work_tree() const { return checked_out_; }
  /// The repository's git directory (for a lock held around the commit).
  std::string git_dir() const;
  /// The directory every worktree of the repository shares (refs, objects).
  std::string common_dir() const;

  /// "git.uncommitted" for every modified, staged, deleted or untracked file
  /// below the entries' directories (only when writes_work_tree()).
  bool CheckClean(Diagnostics* diags);

  /// Builds the commit's tree (blobs and trees written to the object
  /// database; no reference moves). Called before the work tree is written,
  /// so that a repository that cannot take the commit fails the build early.
  bool Prepare(Diagnostics* diags);

  /// Commits the entries on the branch (Prepare first if not done). `committed` is false when the new
  /// tree equals the parent's (nothing changed); `summary` says what
  /// happened ("committed 1a2b3c4 ..." or "nothing to commit").
  bool Commit(bool* committed, std::string* summary, Diagnostics* diags);

 private:
  GitCommitter() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool checked_out_ = false;
};

}  // namespace nemoc

#endif  // NEMOC_GIT_COMMIT_H_
