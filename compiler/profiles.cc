#include "profiles.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "eval_watchdog.h"
#include "jsonnet_expander.h"

namespace nemoc {

namespace {

// name -> (file, built in), the first directory that has the name winning.
std::map<std::string, std::pair<std::string, bool>> ProfileFilesWithOrigin(const DataDir& data,
                                                                 const std::vector<std::string>& jpaths) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, bool>> dirs;
  for (const auto& jpath : jpaths) dirs.emplace_back(jpath, false);
  dirs.emplace_back(data.profiles(), true);
  std::map<std::string, std::pair<std::string, bool>> files;
  for (const auto& [dir, builtin] : dirs) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::error_code file_ec;
      if (entry.path().extension() != ".libsonnet" || !entry.is_regular_file(file_ec)) continue;
      // Only a name a spec's profile field allows is a profile.
      const std::string stem = entry.path().stem().string();
      if (!SafeLibraryName(stem)) continue;
      files.emplace(entry.path().stem().string(), std::make_pair(entry.path().string(), builtin));
    }
  }
  return files;
}

}  // namespace

std::map<std::string, std::string> ProfileFiles(const DataDir& data, const std::vector<std::string>& jpaths) {
  std::map<std::string, std::string> files;
  for (const auto& [name, where] : ProfileFilesWithOrigin(data, jpaths)) files.emplace(name, where.first);
  return files;
}

std::map<std::string, std::string> UserLibraryFiles(const std::vector<std::string>& jpaths, const std::string& kind) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> files;
  for (const auto& jpath : jpaths) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(jpath) / kind, ec)) {
      std::error_code file_ec;
      if (entry.path().extension() != ".libsonnet" || !entry.is_regular_file(file_ec)) continue;
      const std::string stem = entry.path().stem().string();
      if (SafeLibraryName(stem)) files.emplace(stem, entry.path().string());
    }
  }
  return files;
}

std::vector<ProfileInfo> ListProfiles(const DataDir& data, const std::vector<std::string>& jpaths,
                                      Diagnostics* diags) {
  std::vector<std::string> roots = jpaths;
  roots.push_back(data.libsonnet());
  roots.push_back(data.profiles());
  JsonnetExpander expander(roots, jpaths.size());
  std::vector<ProfileInfo> profiles;
  for (const auto& [name, where] : ProfileFilesWithOrigin(data, jpaths)) {
    ProfileInfo info;
    info.name = name;
    info.file = where.first;
    info.builtin = where.second;
    bool is_profile = true;
    EvalWatch watch("profile " + name);
    // A --jpath directory also holds helper libraries; profiles/ only profiles.
    if (expander.DescribeProfile(name, &info.description, diags, info.builtin ? nullptr : &is_profile)) {
      profiles.push_back(std::move(info));
    }
  }
  return profiles;
}

}  // namespace nemoc
