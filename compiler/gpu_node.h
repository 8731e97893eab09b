// The GPU node a target runs on, as data before expansion (issue #48 item 3).
// A profile declares it (libsonnet/profile.libsonnet `gpuNode`): the GPU
// model -- a key of libsonnet/accelerators.json -- and, where the cloud fixes
// it, the GPUs of one node. nemoc reads it from the input schema for the
// built-in profiles (scripts/update-schema-catalogue copies it to
// spec.targets[].profile "x-nemoc-gpu-nodes") and from the profile's
// description for a --jpath one (JsonnetExpander::DescribeProfile), so that
// every check that needs the accelerator -- the memory fit, FP8 and the
// release's GPU support (fit_check.h), gpusPerNode -- runs in Prepare with
// the spec's other checks, before Jsonnet builds any object.
#ifndef NEMOC_GPU_NODE_H_
#define NEMOC_GPU_NODE_H_

#include <string>

#include <nlohmann/json.hpp>

#include "diagnostic.h"
#include "fit_check.h"
#include "source_map.h"

namespace nemoc {

struct GpuNode {
  std::string accelerator;  // accelerators.json key
  int gpus = 0;             // GPUs of one node; 0 = the profile does not say
  std::string name;         // how messages name the node: "an a4-highgpu-8g node", "p5.48xlarge"
};

/// Checks the shape of a profile's gpuNode (see profile.libsonnet): one of
/// {fixed: {accelerator, gpus?, name?}} or {option, default?, values?}.
/// false with `err` naming the member at fault.
bool ValidGpuNodeRule(const nlohmann::json& rule, std::string* err);

/// Every accelerator the rule names is a key of the table; false with `err`
/// naming the first that is not.
bool KnownAccelerators(const nlohmann::json& rule, const AcceleratorTable& table, std::string* err);

/// Where the input schema holds each profile's rule (profile name -> its
/// gpuNode): the built-ins' from scripts/update-schema-catalogue, a --jpath
/// profile's composed in at run time (compiler.cc InputSchemaForSpec).
inline constexpr char kGpuNodesAt[] = "/definitions/target/properties/profile/x-nemoc-gpu-nodes";

/// The node of one normalized target under a valid rule. false when the rule
/// does not name one: the option unset without a default, or a value the
/// rule does not list (the profile's own checks report that).
bool ResolveGpuNode(const nlohmann::json& rule, const nlohmann::json& target, GpuNode* node);

/// profile.gpus-per-node: a training stage asking for more GPUs per node
/// than the node has, located at spec.stages.<key>.gpusPerNode, naming the
/// target. Nothing when the node's size is unknown.
void CheckGpusPerNode(const Document& doc, const nlohmann::json& spec, const std::string& target,
                      const GpuNode& node, Diagnostics* diags);

}  // namespace nemoc

#endif  // NEMOC_GPU_NODE_H_
