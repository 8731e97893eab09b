// The platform bundle, rooted per cluster (field-review.md decision F3).
//
// The libraries emit each target's bundle below gitops/platform/ (so every
// object is verified with its target's); Compiler::Finish takes it out of the
// target's tree and leaves in its place the target's CONTRIBUTION,
// gitops/cluster-bundle.json: the cluster it names, that cluster's API server
// and profile, and the bundle's objects. A build then writes one tree per
// cluster, <out>/_clusters/<cluster>/, merged from the contributions of every
// target in the output root naming that cluster — the ones just compiled and
// the ones already on disk (other specs, other --target selections) — so a
// cluster gets one root per engine whatever number of projects share it, and
// building one project never drops what another one's workloads need.
//
// Merging: objects are united key by key (a component one target needs and
// another does not is installed; a value one target sets and another leaves
// at the chart's default is set); two different values for one field are a
// located error naming both targets, as are targets naming one cluster with
// different API servers or profiles, and one API server under two names.
#ifndef NEMOC_CLUSTER_BUNDLE_H_
#define NEMOC_CLUSTER_BUNDLE_H_

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler.h"
#include "diagnostic.h"
#include "disk_interface.h"
#include "tree_writer.h"

namespace nemoc {

class EngineTable;  // engines.h

/// Below the output root: one directory per cluster.
inline constexpr const char kClustersDir[] = "_clusters";
/// In a target's tree: what the target asks of its cluster's bundle.
inline constexpr const char kContributionFile[] = "gitops/cluster-bundle.json";
/// In a target's expansion: the bundle's objects, moved out by TakeContribution.
inline constexpr const char kPlatformPrefix[] = "gitops/platform/";

/// Moves the gitops/platform/ objects out of `files` and returns the
/// target's contribution ({cluster, server, profile, files: {path below
/// platform/: object}}), or null when the target has no bundle. `cluster`
/// is the libraries' summary fact gitops.cluster ({name, server, profile}).
nlohmann::json TakeContribution(std::map<std::string, nlohmann::json>* files,
                                const nlohmann::json& cluster);

struct ClusterTree {
  std::string name;
  std::string dir;                        // <out>/_clusters/<name>
  FileTree tree;                          // empty when `remove`
  bool remove = false;                    // no target names the cluster any more
  std::vector<std::string> contributors;  // "project/target", sorted
};

/// The cluster trees a build of `compiled` writes (or removes): every
/// cluster a compiled target names, or named before its rebuild. Contributions
/// of targets not rebuilt now are read from their trees on disk (skipping
/// the stale target directories the build removes). False with located
/// errors on any conflict; nothing on disk changes.
/// `engines`: what people read about each engine in the bundle's SUMMARY.md
/// (the Compiler's table, with its --jpath engines; nullptr: the built-in ones).
bool ComputeClusterTrees(Disk& disk, const std::vector<CompiledSpec>& compiled,
                         std::vector<ClusterTree>* clusters, Diagnostics* diags,
                         const EngineTable* engines = nullptr);

/// Unites `add` into `into` (see the file comment). On a conflict returns
/// false with the JSON pointer of the first differing field in `where`.
bool MergeContribution(nlohmann::json* into, const nlohmann::json& add, std::string* where);

}  // namespace nemoc

#endif  // NEMOC_CLUSTER_BUNDLE_H_
