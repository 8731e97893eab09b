#include "data_dir.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#ifndef NEMOC_VERSION
#define NEMOC_VERSION "0.0.0"
#endif
#ifndef NEMOC_SOURCE_DIR
#define NEMOC_SOURCE_DIR "."
#endif

namespace nemoc {

namespace fs = std::filesystem;

const char* NemocVersion() { return NEMOC_VERSION; }

bool FindDataDir(DataDir* dir, std::string* err) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("NEMOC_DATA_DIR"); env != nullptr && *env != '\0') {
    candidates.push_back(env);
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back((exe.parent_path() / ".." / "share" / "nemoc").string());
  candidates.push_back(NEMOC_SOURCE_DIR);
  for (const auto& candidate : candidates) {
    if (fs::is_regular_file(fs::path(candidate) / "schemas" / "project.schema.json", ec)) {
      dir->root = fs::weakly_canonical(candidate, ec).string();
      return true;
    }
  }
  *err = "cannot find nemoc's data (schemas/, libsonnet/, profiles/); set NEMOC_DATA_DIR";
  return false;
}

}  // namespace nemoc
