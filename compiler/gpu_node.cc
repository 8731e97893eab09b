#include "gpu_node.h"

#include <vector>

#include "normalizer.h"

namespace nemoc {
namespace {

bool ValidNode(const nlohmann::json& node, const std::string& at, std::string* err) {
  if (!node.is_object()) {
    *err = at + " must be an object {accelerator, gpus?, name?}";
    return false;
  }
  for (const auto& [key, value] : node.items()) {
    if (key == "accelerator" || key == "name") {
      if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
        *err = at + "." + key + " must be a non-empty string";
        return false;
      }
    } else if (key == "gpus") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 1024) {
        *err = at + ".gpus must be an integer from 1 to 1024";
        return false;
      }
    } else {
      *err = at + ": unknown member '" + key + "' (a node is {accelerator, gpus?, name?})";
      return false;
    }
  }
  if (!node.contains("accelerator")) {
    *err = at + " lacks accelerator (a key of libsonnet/accelerators.json)";
    return false;
  }
  return true;
}

}  // namespace

bool ValidGpuNodeRule(const nlohmann::json& rule, std::string* err) {
  if (!rule.is_object()) {
    *err = "gpuNode must be an object: {fixed: {...}} or {option, default?, values?}";
    return false;
  }
  for (const auto& [key, _] : rule.items()) {
    if (key != "fixed" && key != "option" && key != "default" && key != "values") {
      *err = "gpuNode: unknown member '" + key + "' (fixed, option, default, values)";
      return false;
    }
  }
  if (rule.contains("fixed")) {
    if (rule.size() != 1) {
      *err = "gpuNode: fixed stands alone (no option, default or values beside it)";
      return false;
    }
    return ValidNode(rule["fixed"], "gpuNode.fixed", err);
  }
  if (!rule.contains("option") || !rule["option"].is_string() || rule["option"].get_ref<const std::string&>().empty()) {
    *err = "gpuNode names the target option that picks the node (option: '<field>'), or is fixed";
    return false;
  }
  if (rule.contains("default") && !rule["default"].is_string()) {
    *err = "gpuNode.default must be a string";
    return false;
  }
  if (rule.contains("values")) {
    if (!rule["values"].is_object() || rule["values"].empty()) {
      *err = "gpuNode.values must be a non-empty object: option value -> {accelerator, gpus?, name?}";
      return false;
    }
    for (const auto& [value, node] : rule["values"].items()) {
      if (!ValidNode(node, "gpuNode.values['" + value + "']", err)) return false;
    }
  }
  return true;
}

bool KnownAccelerators(const nlohmann::json& rule, const AcceleratorTable& table, std::string* err) {
  std::vector<std::string> named;
  if (rule.contains("fixed")) named.push_back(rule["fixed"]["accelerator"].get<std::string>());
  if (rule.contains("values")) {
    for (const auto& [value, node] : rule["values"].items()) named.push_back(node["accelerator"].get<std::string>());
  }
  if (rule.contains("default") && !rule.contains("values")) named.push_back(rule["default"].get<std::string>());
  for (const auto& accelerator : named) {
    if (table.Find(accelerator) == nullptr) {
      *err = "gpuNode names accelerator '" + accelerator + "', which libsonnet/accelerators.json does not list";
      return false;
    }
  }
  return true;
}

bool ResolveGpuNode(const nlohmann::json& rule, const nlohmann::json& target, GpuNode* node) {
  *node = GpuNode();
  const nlohmann::json* chosen = nullptr;
  std::string value;
  if (rule.contains("fixed")) {
    chosen = &rule["fixed"];
  } else {
    const std::string& option = rule["option"].get_ref<const std::string&>();
    if (target.contains(option) && target[option].is_string()) {
      value = target[option].get<std::string>();
    } else if (rule.contains("default")) {
      value = rule["default"].get<std::string>();
    } else {
      return false;
    }
    if (!rule.contains("values")) {  // the value is the accelerator
      node->accelerator = value;
      node->name = value;
      return true;
    }
    if (!rule["values"].contains(value)) return false;
    chosen = &rule["values"][value];
  }
  node->accelerator = (*chosen)["accelerator"].get<std::string>();
  node->gpus = chosen->contains("gpus") ? (*chosen)["gpus"].get<int>() : 0;
  node->name = chosen->contains("name") ? (*chosen)["name"].get<std::string>()
                                        : (value.empty() ? node->accelerator : value);
  return true;
}

void CheckGpusPerNode(const Document& doc, const nlohmann::json& spec, const std::string& target,
                      const GpuNode& node, Diagnostics* diags) {
  if (node.gpus <= 0) return;
  for (const std::string& key : TrainingStages(spec["stages"])) {
    const nlohmann::json& stage = spec["stages"][key];
    if (!stage.contains("gpusPerNode") || !stage["gpusPerNode"].is_number_integer()) continue;
    const int64_t asked = stage["gpusPerNode"].get<int64_t>();
    if (asked <= node.gpus) continue;
    diags->Error("profile.gpus-per-node",
                 "target " + target + ": gpusPerNode " + std::to_string(asked) + " exceeds the " +
                     std::to_string(node.gpus) + " GPUs of " + node.name,
                 doc.map.Locate("/spec/stages/" + key + "/gpusPerNode"));
  }
}

}  // namespace nemoc
