// Incremental builds: the stamp a target's marker carries, saying exactly
// what its tree was generated from, and the question "is this target's tree
// still what nemoc would generate?" answered without evaluating anything.
//
// The inputs digest covers everything a target's output depends on: nemoc's
// version and the digest of its own sources, the flags that change output
// (--set, --jpath), the spec's name and bytes, nemoc's data files (input
// schema, model catalog, accelerator table), every import Jsonnet resolved
// (replayed through the same resolver, so a new file that would now shadow an
// old one counts as a change) with its content, and the Kubernetes schema
// file of every kind in the tree. The tree digest covers the generated files,
// so a hand-edited tree is rebuilt (and `check` sees the drift).
#ifndef NEMOC_BUILD_STAMP_H_
#define NEMOC_BUILD_STAMP_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler.h"
#include "jsonnet_expander.h"
#include "kube_schemas.h"
#include "tree_writer.h"

namespace nemoc {

/// The recorded part of a stamp (marker lines starting with '#').
struct Stamp {
  std::string inputs;  // 32 hex digits
  std::string tree;    // 32 hex digits
  /// Imports in evaluation order: (importing directory key, import string);
  /// keys are JsonnetExpander::RootKey names, never absolute paths.
  std::vector<std::pair<std::string, std::string>> imports;
  /// (apiVersion, kind) of every object in the tree, sorted, unique.
  std::vector<std::pair<std::string, std::string>> kinds;
};

/// The stamp as marker lines ("#nemoc-stamp ...\n" ...), appended after the
/// file list. Empty when `stamp.inputs` is empty.
std::string StampLines(const Stamp& stamp);

/// Reads the stamp back from a marker's content; false when it has none or
/// it is malformed (then the target is simply rebuilt).
bool ParseStamp(const std::string& marker, Stamp* stamp);

/// Digest of a generated tree (paths and bytes; the marker is not part of it).
std::string TreeDigest(const FileTree& tree);

/// nemoc's identity for stamps: version + digest of the compiler's sources.
std::string BuildId();

/// What every target of one spec shares in its inputs digest.
struct SpecInputs {
  std::string spec_name;   // base name of the spec file (SUMMARY.md shows it)
  std::string spec_text;   // the bytes nemoc loaded
  std::vector<std::string> sets;
  std::vector<std::string> jpaths;
  /// The spec's pinned priors (cost.h PinPath) as they are on disk after the
  /// build: a changed pin changes the SUMMARY.md it shows in.
  std::string pins_text;
};

/// Computes inputs digests. One per Compiler (or per `check` run); the data
/// files are hashed once. Thread-compatible: use one per thread, or share a
/// const one after construction.
class StampCalculator {
 public:
  StampCalculator(const DataDir& data, const std::vector<std::string>& jpaths,
                  KubeSchemas* kube_schemas);

  /// The inputs digest, with import contents read through `expander`'s
  /// resolver (`Resolve`), or from what an evaluation saw (`seen`, keyed by
  /// canonical path) when given. False when an import no longer resolves or a
  /// kind has no schema: the caller treats the target as changed.
  bool InputsDigest(const SpecInputs& spec, const std::string& target,
                    const Stamp& recorded, JsonnetExpander* expander,
                    const std::map<std::string, const std::string*>* seen,
                    std::string* digest) const;

 private:
  std::string data_part_;  // data files, jpaths, build id
  KubeSchemas* kube_schemas_;  // may be null (output not validated)
};

/// Records for the next nemoc process the digests of data files (schemas,
/// model and accelerator tables) this one hashed, keyed by each file's
/// identity, in <stamp dir>/data-digests. Called when a build or check
/// succeeds (a failed one leaves the disk as it was). Best effort: a cache
/// that cannot be written only costs the next process the hashing.
void RememberDataDigests();

/// The stamp for a target just compiled: imports from the evaluation
/// (`expander` after Expand), kinds from `objects`.
bool MakeStamp(const StampCalculator& calculator, const SpecInputs& spec,
               const std::string& target, JsonnetExpander* expander,
               const std::map<std::string, nlohmann::json>& objects, const FileTree& tree,
               Stamp* stamp);

/// Where the stamp of `target_dir` is kept: outside the generated tree, so a
/// committed tree holds only what its content is made of and upgrading nemoc
/// without a change to the output leaves it byte-identical (field review
/// C13; a stamp in the committed marker also left `git status` dirty after
/// `build --commit`, C12). $NEMOC_STAMP_DIR, else $XDG_CACHE_HOME/nemoc/stamps,
/// else $HOME/.cache/nemoc/stamps; the file is named by a digest of the
/// target directory's absolute path. "" when there is no such directory
/// (then nothing is stamped and every build regenerates).
std::string StampPath(const std::string& target_dir);

/// Records (or, for an empty `stamp`, forgets) the stamp of a target just
/// written. Best effort: a stamp that cannot be written only costs a rebuild.
void SaveStamp(Disk& disk, const std::string& target_dir, const std::string& stamp);

/// True when `target_dir` holds a stamped tree that is exactly what nemoc
/// would generate now for `target` of `spec`: the recorded inputs digest
/// matches the current inputs and the files on disk match the recorded tree
/// digest. Never modifies the disk. `expander` supplies the library roots.
bool TargetUpToDate(Disk& disk, const StampCalculator& calculator, const SpecInputs& spec,
                    const std::string& target, const std::string& target_dir,
                    JsonnetExpander* expander);

}  // namespace nemoc

#endif  // NEMOC_BUILD_STAMP_H_
