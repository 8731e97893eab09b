#include "node_fabric.h"

#include <vector>

#include "normalizer.h"

namespace nemoc {
namespace {

bool ValidName(const nlohmann::json& value, const std::string& at, std::string* err) {
  if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
    *err = at + " must be a fabric name (e.g. 'infiniband', 'tcp')";
    return false;
  }
  const std::string& name = value.get_ref<const std::string&>();
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (i > 0 && ((c >= '0' && c <= '9') || c == '-'));
    if (!ok) {
      *err = at + " '" + name + "' must be lower-case letters, digits and '-', starting with a letter";
      return false;
    }
  }
  return true;
}

}  // namespace

bool ValidNodeFabricRule(const nlohmann::json& rule, std::string* err) {
  if (!rule.is_object()) {
    *err = "nodeFabric must be an object: {fixed: NAME} or {option, set, unset}";
    return false;
  }
  for (const auto& [key, _] : rule.items()) {
    if (key != "fixed" && key != "option" && key != "set" && key != "unset") {
      *err = "nodeFabric: unknown member '" + key + "' (fixed, option, set, unset)";
      return false;
    }
  }
  if (rule.contains("fixed")) {
    if (rule.size() != 1) {
      *err = "nodeFabric: fixed stands alone (no option, set or unset beside it)";
      return false;
    }
    return ValidName(rule["fixed"], "nodeFabric.fixed", err);
  }
  if (!rule.contains("option") || !rule["option"].is_string() || rule["option"].get_ref<const std::string&>().empty()) {
    *err = "nodeFabric names the target option that chooses the fabric (option: '<field>'), or is fixed";
    return false;
  }
  for (const char* member : {"set", "unset"}) {
    if (!rule.contains(member)) {
      *err = std::string("nodeFabric lacks ") + member + ": the fabric when a target " +
             (std::string(member) == "set" ? "sets" : "does not set") + " its " +
             rule["option"].get<std::string>();
      return false;
    }
    if (!ValidName(rule[member], std::string("nodeFabric.") + member, err)) return false;
  }
  return true;
}

std::string ResolveNodeFabric(const nlohmann::json& rule, const nlohmann::json& target) {
  if (rule.contains("fixed")) return rule["fixed"].get<std::string>();
  const std::string& option = rule["option"].get_ref<const std::string&>();
  const bool set = target.contains(option) && !target[option].is_null();
  return rule[set ? "set" : "unset"].get<std::string>();
}

void CheckNodeFabric(const Document& doc, const TypedSpec& typed, const std::string& target,
                     const std::string& target_pointer, const nlohmann::json& rule,
                     const std::string& fabric, Diagnostics* diags) {
  if (fabric != kTcpFabric) return;
  std::vector<std::string> stages;
  int64_t nodes = 0;
  for (const std::string& key : typed.TrainingKeys()) {
    const int64_t stage_nodes = typed.Training(key)->nodes;
    if (stage_nodes <= 1) continue;
    stages.push_back(key);
    nodes = std::max(nodes, stage_nodes);
  }
  if (stages.empty()) return;
  std::string named;
  for (size_t i = 0; i < stages.size(); ++i) {
    named += (i == 0 ? "" : i + 1 == stages.size() ? " and " : ", ") + stages[i];
  }
  const std::string option = rule.is_object() ? rule.value("option", "") : "";
  diags->Warning("profile.tcp-fabric",
                 "target " + target + ": multi-node training (" + named + ", up to " + std::to_string(nodes) +
                     " nodes) without RDMA devices: NCCL will use TCP sockets between the nodes",
                 doc.map.Locate(target_pointer),
                 option.empty() ? "the target's profile has no RDMA fabric; train on one node or on a profile that has one"
                                : "request the RDMA devices with the target's " + option + " (nemoc explain spec.targets." +
                                      option + ")");
}

}  // namespace nemoc
