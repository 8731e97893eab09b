// What C++ reads of a target, typed: the libraries' summary facts (the
// "summary" of each target in schemas/contracts/expansion.schema.json) and
// what Finish adds from accelerators.json and the fit check. SUMMARY.md
// (summary.cc) and the plan (plan.cc: `nemoc plan`, --output json, `nemoc
// metrics`) are rendered from one TargetFacts and the plan made from it, so
// the two cannot disagree.
#ifndef NEMOC_FACTS_H_
#define NEMOC_FACTS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost.h"
#include "fit_check.h"

namespace nemoc {

/// The libraries' summary facts for one target (libsonnet/nemoc.libsonnet
/// `summary`). Every member is what the libraries said; an absent fact is
/// empty (`present` false for the groups).
struct LibraryFacts {
  std::string profile;      // the profile's name
  struct Train {
    bool present = false;
    std::string runtime;    // "PyTorchJob (Kubeflow Training Operator v1)", ...
    std::string fabric;     // the interconnect sentence (fabrics.libsonnet)
    std::string resources;  // training pods' memory request/limit and QoS
    std::string queue;      // Kueue LocalQueue ("" = none)
    std::vector<std::string> privileges;
  } train;
  std::vector<std::pair<std::string, std::string>> storage;  // volume -> sentence
  struct Gitops {
    bool present = false;
    std::vector<std::string> engines;  // "argocd", "flux"
    std::string source;                // repository @ revision: path
    std::vector<std::string> platform;  // the cluster bundle's components
    nlohmann::json cluster;             // {name, server, profile, explicit} or null
    std::vector<std::string> bootstrap;  // what to apply once, in order
    std::vector<std::string> remove;     // per engine: how the target is removed (F13)
    // Per engine (engine.libsonnet): what it does with a commit that edits a
    // running stage (C24), and the namespace of its objects by directory.
    std::vector<std::string> edit_while_running;
    std::vector<std::pair<std::string, std::string>> namespaces;  // tree directory -> namespace
  } gitops;
  std::vector<std::pair<std::string, std::string>> stages;  // directory -> what it does
  // Stage directory -> the directory on shared storage it writes, named by its
  // state hash (paths.libsonnet, decision F15).
  std::vector<std::pair<std::string, std::string>> state_dirs;
  // Stage key -> its directory (stages/order.libsonnet): object_patches.h
  // finds a patch's objects by it.
  std::vector<std::pair<std::string, std::string>> stage_dirs;
  struct PlatformRow {
    std::string what;
    std::vector<std::string> provides;
    // Name -> the command that checks it, where the profile knows better
    // than summary.cc CheckFor (a GKE network: its own resource kind).
    std::vector<std::pair<std::string, std::string>> checks;
  };
  struct Platform {
    bool present = false;
    std::vector<PlatformRow> installs;     // the platform bundle installs
    std::vector<PlatformRow> cluster_has;  // the cluster must already have
  } platform;
};

/// Reads the libraries' summary; false with `err` naming the member when it
/// holds a fact C++ does not know or one of the wrong type (a library out of
/// step with the contract).
bool ParseLibraryFacts(const nlohmann::json& summary, LibraryFacts* facts, std::string* err);

/// One target's facts: the libraries' and Finish's.
/// One spec.patches entry as applied to a target (object_patches.h), for
/// SUMMARY.md.
struct AppliedPatch {
  std::string name;                // the spec.patches key
  std::string what;                // "merge patch" or "3 JSON Patch operations"
  std::string selects;             // "Job of stage evaluate" (", named x")
  std::vector<std::string> files;  // the target's files it changed
  // "<file> <pointer>" of each security-relevant field it changed (pod and
  // container securityContext, host namespaces, hostPath, service account).
  std::vector<std::string> security;
};

struct TargetFacts {
  LibraryFacts library;
  std::vector<AppliedPatch> patches;  // spec.patches as applied
  /// accelerators.json key of the target's GPU node ("" = the profile does
  /// not know it): the profile's gpuNode data, resolved before expansion
  /// (gpu_node.h).
  std::string accelerator;
  std::string gpu_model;   // accelerators.json "model" ("" = no accelerator)
  double capacity_gb = 0;  // accelerators.json "memoryGB"
  /// The memory estimate of each training stage ("pretrain", "train"), when
  /// the target has an accelerator and a train stage.
  std::map<std::string, MemoryEstimate> memory;
  /// Issue #46 item 3: the accelerator's dense peak per precision
  /// (accelerators.json peakTflops) and each training stage's MFU prior
  /// (cost.h), or why it has none.
  std::map<std::string, double> peak_tflops;
  std::map<std::string, MfuPrior> priors;
  std::map<std::string, std::string> no_prior;
};

}  // namespace nemoc

#endif  // NEMOC_FACTS_H_
