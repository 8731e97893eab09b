// Every Python module nemoc generated into the golden trees (out/ and
// tests/golden/): NeMo 2 recipe modules, the NCCL preflight and the
// TensorRT-LLM engine build script, is valid Python: extracted from its ConfigMap and compiled
// with `python3 -m py_compile`. Skipped, never passed, without python3.
#include "test_prerequisite.h"
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "test_support.h"

namespace nemoc::testing {
namespace {

namespace fs = std::filesystem;

struct Module {
  std::string where;  // file:key
  std::string text;
};

// The .py entries of every ConfigMap below `root`.
std::vector<Module> FindModules(const fs::path& root) {
  std::vector<Module> modules;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return modules;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.rfind("configmap-", 0) != 0) continue;
    const YAML::Node doc = YAML::LoadFile(entry.path().string());
    if (!doc["data"]) continue;
    for (const auto& item : doc["data"]) {
      const std::string key = item.first.as<std::string>();
      if (key.size() > 3 && key.compare(key.size() - 3, 3, ".py") == 0) {
        modules.push_back({entry.path().string() + ":" + key, item.second.as<std::string>()});
      }
    }
  }
  return modules;
}

TEST(PythonRecipesTest, EveryGeneratedPythonModuleCompiles) {
  if (std::system("python3 --version >/dev/null 2>&1") != 0) NEMOC_MISSING_PREREQUISITE("python3 not installed");
  std::vector<Module> modules = FindModules(fs::path(SourceDir()) / "out");
  for (auto& m : FindModules(fs::path(SourceDir()) / "tests" / "golden")) modules.push_back(std::move(m));
  // The examples and test specs hold NeMo 2 targets (EKS LoRA, A4 405B, the
  // runtime matrix); finding none means the search is broken, not that all is well.
  size_t recipes = 0;
  for (const auto& m : modules) recipes += m.where.size() > 10 && m.where.substr(m.where.size() - 10) == ":recipe.py";
  ASSERT_GE(recipes, 6u);
  ScratchDir scratch;
  for (size_t i = 0; i < modules.size(); ++i) {
    SCOPED_TRACE(modules[i].where);
    const std::string file = scratch.Write("m" + std::to_string(i) + "/module.py", modules[i].text);
    const std::string command = "python3 -m py_compile '" + file + "' 2>&1";
    EXPECT_EQ(0, std::system(command.c_str())) << modules[i].text;
    // A recipe module is runnable: it ends with NeMo-Run's entry point.
    if (modules[i].where.substr(modules[i].where.size() - 10) == ":recipe.py") {
      EXPECT_NE(std::string::npos, modules[i].text.find("run.cli.main(llm."));
    }
  }
}

TEST(PythonRecipesTest, CompileCheckCatchesBrokenPython) {
  // The check above can fail: py_compile rejects what the emitter must never write.
  if (std::system("python3 --version >/dev/null 2>&1") != 0) NEMOC_MISSING_PREREQUISITE("python3 not installed");
  ScratchDir scratch;
  const std::string file = scratch.Write("bad.py", "x = 'unterminated\n");
  EXPECT_NE(0, std::system(("python3 -m py_compile '" + file + "' 2>/dev/null").c_str()));
}

}  // namespace
}  // namespace nemoc::testing
