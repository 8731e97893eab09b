// The GitOps engines as nemoc's data directory describes them for people
// (libsonnet/engines/<name>.json: title, clusterBootstrapNote,
// editWhileRunning, replacedWorkloadNote), beside each engine's library
// (libsonnet/engines/<name>.libsonnet, the contract libsonnet/engine.libsonnet).
// C++ names no engine: what it writes about one comes from here, or from the
// libraries' summary facts (facts.h LibraryFacts::Gitops).
#ifndef NEMOC_ENGINES_H_
#define NEMOC_ENGINES_H_

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace nemoc {

/// Engine name -> its description, read once from the data directory
/// (data_dir.h FindDataDir); empty when none can be read.
const std::map<std::string, nlohmann::json>& EngineDescriptions();

/// One engine's description; {} when there is none (callers show its name).
nlohmann::json EngineDescription(const std::string& engine);

}  // namespace nemoc

#endif  // NEMOC_ENGINES_H_
