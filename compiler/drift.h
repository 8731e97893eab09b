// What a build would change on disk, file by file: the basis of
// `nemoc check` (CI drift gate) and `nemoc diff` (review).
#ifndef NEMOC_DRIFT_H_
#define NEMOC_DRIFT_H_

#include <string>
#include <vector>

#include "compiler.h"
#include "diagnostic.h"
#include "disk_interface.h"

namespace nemoc {

class EngineTable;  // engines.h

struct FileChange {
  char status = 'M';     // 'A' a build would add it, 'D' remove it, 'M' change it,
                         // 'R' replace old_path by path (review_diff.h PairRenamedFiles)
  std::string path;      // e.g. out/proj/tgt/30-train/pytorchjob-x.yaml
  std::string old_text;  // on disk ("" for 'A')
  std::string new_text;  // what the build makes ("" for 'D')
  std::string old_path;  // 'R' only: the file on disk this one replaces
};

/// Target directories of a project that nemoc made earlier but that the spec
/// no longer lists (only when the whole spec was compiled).
std::vector<std::string> StaleTargets(Disk& disk, const CompiledSpec& spec);

/// Target directories under `out_dir` (<out>/<project>/<target> holding a
/// manifest nemoc wrote) of projects none of `compiled` is: trees left behind
/// by a renamed or removed project. Cluster bundles (<out>/_clusters) are not
/// listed: ComputeDrift removes a bundle no target names any more.
std::vector<std::string> StaleProjectTargets(Disk& disk, const std::string& out_dir,
                                             const std::vector<CompiledSpec>& compiled);

/// Compares every compiled target (and the project's stale targets) with the
/// disk; sorted by path. A directory nemoc would refuse to write (foreign
/// files) is reported through `diags` with the writer's errors.
/// `engines` as ComputeClusterTrees takes it.
bool ComputeDrift(Disk& disk, const std::vector<CompiledSpec>& compiled,
                  std::vector<FileChange>* changes, Diagnostics* diags, const EngineTable* engines = nullptr);

/// A unified diff of one change (libgit2's git_patch_from_buffers), with
/// "a/<path>" and "b/<path>" headers ("a/<old_path>" for 'R'); ANSI colours
/// when `color`.
std::string UnifiedDiff(const FileChange& change, bool color);

}  // namespace nemoc

#endif  // NEMOC_DRIFT_H_
