// The fabric between a target's nodes, as data before expansion (issue #48
// item 3, beside gpu_node.h). A profile declares it (libsonnet/profile.libsonnet
// `nodeFabric`): the name of the fabric NCCL uses between nodes -- a key of
// libsonnet/fabrics.libsonnet for the built-in profiles ('infiniband', 'efa',
// 'gib', 'tcp') -- fixed for the profile or chosen by whether a target sets
// one of its options. nemoc reads it like gpuNode: from the input schema for
// the built-in profiles (scripts/update-schema-catalogue copies it to
// spec.targets[].profile "x-nemoc-node-fabrics") and from the profile's
// description for a --jpath one, so that the check that needs it runs in
// Prepare with the spec's others, before Jsonnet builds any object, and the
// same for every profile: multi-node training over 'tcp' (sockets on the pod
// network, no RDMA device) is a located warning, profile.tcp-fabric.
#ifndef NEMOC_NODE_FABRIC_H_
#define NEMOC_NODE_FABRIC_H_

#include <string>

#include <nlohmann/json.hpp>

#include "diagnostic.h"
#include "normalizer.h"
#include "source_map.h"

namespace nemoc {

/// The fabric name meaning "no RDMA device: NCCL uses TCP sockets".
inline constexpr char kTcpFabric[] = "tcp";

/// Where the input schema holds each profile's rule (profile name -> its
/// nodeFabric), like kGpuNodesAt.
inline constexpr char kNodeFabricsAt[] = "/definitions/target/properties/profile/x-nemoc-node-fabrics";

/// Checks the shape of a profile's nodeFabric: {fixed: NAME} or
/// {option: FIELD, set: NAME, unset: NAME}, a NAME lower-case letters,
/// digits and '-'. false with `err` naming the member at fault.
bool ValidNodeFabricRule(const nlohmann::json& rule, std::string* err);

/// The fabric of one normalized target under a valid rule.
std::string ResolveNodeFabric(const nlohmann::json& rule, const nlohmann::json& target);

/// profile.tcp-fabric: training stages on more than one node of a target
/// whose fabric is 'tcp', one warning located at the target (spec pointer
/// `target_pointer`), naming the stages; the hint names the rule's option
/// when a target option chooses the fabric.
/// `typed`: the target's normalized spec read through its types.
void CheckNodeFabric(const Document& doc, const TypedSpec& typed, const std::string& target,
                     const std::string& target_pointer, const nlohmann::json& rule,
                     const std::string& fabric, Diagnostics* diags);

}  // namespace nemoc

#endif  // NEMOC_NODE_FABRIC_H_
