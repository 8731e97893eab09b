// `nemoc diff` for review: a content-hashed file renamed by a change is one
// change, not a deletion and an addition; line counts (--stat); the changes
// as JSON; a markdown summary for a pull-request comment (targets, changed
// stages, changed facts of SUMMARY.md).
#ifndef NEMOC_REVIEW_DIFF_H_
#define NEMOC_REVIEW_DIFF_H_

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "drift.h"

namespace nemoc {

/// nemoc names workloads, their ConfigMaps and GitOps objects <stem>-<hash>
/// (6 to 16 hex digits, content_hash.h), so a changed spec renames them. A
/// file removed and a file added in the same directory with the same stem
/// become one 'R' change (path: the new file, old_path: the old). A stem
/// with several removals or additions in a directory stays unpaired.
/// Keeps `changes` sorted by path.
void PairRenamedFiles(std::vector<FileChange>* changes);

/// The file-name prefixes of workload files ("job-", "jobset-"): nemoc names
/// files <kind>-<name>.yaml, and `kinds` ("group/Kind", the workload kinds
/// the libraries know: JsonnetExpander::WorkloadKinds) are the run-to-completion
/// objects a GitOps engine deletes and re-creates when their name changes.
std::vector<std::string> WorkloadFilePrefixes(const std::vector<std::string>& kinds);

/// Whether a file of a target tree holds a stage's workload: its name starts
/// with one of `prefixes` (WorkloadFilePrefixes).
bool IsWorkloadFile(const std::string& path, const std::vector<std::string>& prefixes);

struct LineCounts {
  int added = 0;
  int removed = 0;
};
LineCounts CountLines(const FileChange& change);

/// git diff --stat's shape: " <path> | <n> +++--" per change
/// ("dir/{old => new}" for 'R'), then "N files changed, A insertions(+),
/// D deletions(-)" (zero parts left out, singular for one); "" for none.
std::string RenderStat(const std::vector<FileChange>& changes);

/// One change as JSON: {"status", "path", "oldPath" ('R'), "added", "removed"}.
nlohmann::json ChangeJson(const FileChange& change);

/// The changed rows of SUMMARY.md's first table ("| Key | Value |"), as
/// [{"fact", "before", "after"}]; a row only on one side has "" on the other.
/// SUMMARY.md's facts: row name -> value, from its facts table and a
/// target's "Overrides for this target" table.
std::map<std::string, std::string> FactRows(const std::string& summary);

nlohmann::json ChangedFacts(const std::string& old_summary, const std::string& new_summary);

/// A markdown summary of `changes` under the target directories `targets`
/// (<out>/<project>/<target>): per target, its changed stage directories
/// with the objects replaced, added, removed or edited, and the changed
/// facts of its SUMMARY.md. Workloads a change replaces are flagged: the
/// GitOps engine deletes the old one (a running training is stopped).
/// The tree <out>/<project>/<target> (or <out>/_clusters/<cluster>) a
/// changed path lies in.
std::string TreeOf(const std::string& path, const std::string& out_dir);

std::string RenderMarkdown(const std::vector<FileChange>& changes, const std::vector<std::string>& targets,
                           const std::vector<std::string>& workload_prefixes);

}  // namespace nemoc

#endif  // NEMOC_REVIEW_DIFF_H_
