// `nemoc init`: a commented starter spec that builds as is, with a layout
// (nodes, tensor and pipeline parallelism) sized by the fit check so the
// chosen model fits the profile's GPUs.
#ifndef NEMOC_STARTER_H_
#define NEMOC_STARTER_H_

#include <string>
#include <vector>

#include "fit_check.h"
#include "normalizer.h"

namespace nemoc {

struct StarterOptions {
  std::string name = "my-training";
  std::string profile = "vanilla-k8s";
  std::string model = "llama3.1-8b";
  std::string schema_ref;  // the yaml-language-server modeline's $schema
  // The cluster's Kueue ClusterQueue (gke-a4, whose starter uses the
  // cluster's queue: field review F1; no name is guessed).
  std::string cluster_queue;
};

/// The profiles `init` has a template for.
std::vector<std::string> StarterProfiles();

/// Writes the spec text into *yaml; false with *err for an unknown profile or
/// model, or a model no layout up to 64 nodes fits.
bool StarterSpec(const StarterOptions& options, const ModelCatalog& catalog,
                 const AcceleratorTable& accelerators, std::string* yaml, std::string* err);

}  // namespace nemoc

#endif  // NEMOC_STARTER_H_
