// `nemoc init`: a commented starter spec that builds as is, with a layout
// (nodes, tensor and pipeline parallelism) sized by the fit check so the
// chosen model fits the profile's GPUs.
#ifndef NEMOC_STARTER_H_
#define NEMOC_STARTER_H_

#include <string>
#include <vector>

#include "fit_check.h"
#include "normalizer.h"
#include "profiles.h"

namespace nemoc {

struct StarterOptions {
  std::string name = "my-training";
  std::string profile;  // the profile whose starter this is
  std::string model = "llama3.1-8b";
  std::string schema_ref;  // the yaml-language-server modeline's $schema
  // The cluster's Kueue ClusterQueue, for a starter that admits through it
  // (starter.clusterQueue; field review F1: no name is guessed).
  std::string cluster_queue;
};

/// The profile `nemoc init --profile wanted` takes its starter from: the
/// one named, or with `wanted` empty the one whose starter says
/// `default: true`. nullptr with *err for an unknown profile (did you mean),
/// one without a starter, or no default.
const ProfileInfo* ChooseStarterProfile(const std::vector<ProfileInfo>& profiles, const std::string& wanted,
                                        std::string* err);

/// Writes the spec text into *yaml from the profile's `starter` member
/// (libsonnet/profile.libsonnet); false with *err for an unknown model, a
/// model no layout up to 64 nodes fits, a bad name or queue, or a starter
/// lacking a member.
bool StarterSpec(const StarterOptions& options, const nlohmann::json& starter, const ModelCatalog& catalog,
                 const AcceleratorTable& accelerators, std::string* yaml, std::string* err);

}  // namespace nemoc

#endif  // NEMOC_STARTER_H_
