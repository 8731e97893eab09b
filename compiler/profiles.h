// The profiles nemoc can build for, as they describe themselves: every
// profiles/<name>.libsonnet and every <name>.libsonnet of a --jpath directory
// that extends libsonnet/profile.libsonnet. `nemoc profiles` lists them,
// `nemoc init` takes its starter from one, the completions ask for their
// names. The C++ core names no profile: what a profile is lives in its file.
#ifndef NEMOC_PROFILES_H_
#define NEMOC_PROFILES_H_

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data_dir.h"
#include "diagnostic.h"

namespace nemoc {

struct ProfileInfo {
  std::string name;
  std::string file;    // where it was found (the first library root that has it)
  bool builtin = false;  // found in nemoc's own profiles/
  // JsonnetExpander::DescribeProfile: name, description, options, starter,
  // defaultRuntime.
  nlohmann::json description;
};

/// Every profile of the --jpath directories (first) and nemoc's profiles/,
/// sorted by name; a name found twice is the first root's (as imports
/// resolve). Files of a --jpath directory that are not profiles (helper
/// libraries) are skipped; a profile that fails to evaluate is reported in
/// `diags` and left out.
std::vector<ProfileInfo> ListProfiles(const DataDir& data, const std::vector<std::string>& jpaths,
                                      Diagnostics* diags);

/// Every profile file of those directories by name (no evaluation), the
/// first directory that has a name winning, as imports resolve.
std::map<std::string, std::string> ProfileFiles(const DataDir& data, const std::vector<std::string>& jpaths);

/// The runtimes (kind "runtimes") or platform components ("components") of
/// your own: <kind>/<name>.libsonnet of the --jpath directories by name (the
/// first directory that has a name winning).
std::map<std::string, std::string> UserLibraryFiles(const std::vector<std::string>& jpaths, const std::string& kind);
inline std::map<std::string, std::string> UserRuntimeFiles(const std::vector<std::string>& jpaths) {
  return UserLibraryFiles(jpaths, "runtimes");
}

}  // namespace nemoc

#endif  // NEMOC_PROFILES_H_
