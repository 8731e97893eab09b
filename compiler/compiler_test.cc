// The pipeline's stages (compiler.h): Load reads through the FileReader,
// Prepare and Finish read nothing, and SUMMARY.md and the plan come from one
// set of facts.
#include "compiler.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "file_reader.h"
#include "jsonnet_expander.h"

namespace nemoc {
namespace {

// The real files, each read recorded; paths in `memory` are served from there.
class RecordingReader : public FileReader {
 public:
  Status ReadFile(const std::string& path, size_t max_bytes, std::string* contents,
                  Failure* failure) override {
    paths.push_back(path);
    auto it = memory.find(path);
    if (it != memory.end()) {
      *contents = it->second;
      return Status::kOkay;
    }
    return RealFiles().ReadFile(path, max_bytes, contents, failure);
  }
  std::vector<std::string> paths;
  std::map<std::string, std::string> memory;
};

DataDir SourceData() {
  DataDir data;
  data.root = NEMOC_SOURCE_DIR;
  return data;
}

std::vector<std::string> Examples() {
  std::vector<std::string> specs;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(NEMOC_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() == ".yaml") specs.push_back(entry.path().string());
  }
  std::sort(specs.begin(), specs.end());
  return specs;
}

TEST(CompilerStages, InitReadsTheDataDirectoryThroughTheReader) {
  RecordingReader reader;
  Compiler compiler(SourceData(), CompileOptions{}, &reader);
  Diagnostics diags;
  ASSERT_TRUE(compiler.Init(&diags)) << diags.items().size();
  const DataDir data = SourceData();
  for (const std::string& table : {data.schema(), data.models(), data.accelerators(),
                                   data.libsonnet() + "/nemo/versions.json"}) {
    EXPECT_NE(std::find(reader.paths.begin(), reader.paths.end(), table), reader.paths.end()) << table;
  }
}

TEST(CompilerStages, PrepareAndFinishReadNoFile) {
  RecordingReader reader;
  // With the schema bundle: a spec's patches (an example has one) are only
  // applied when they can be verified (object_patches.h).
  CompileOptions options;
  options.kube_schemas_dir = NEMOC_KUBE_SCHEMAS;
  Compiler compiler(SourceData(), options, &reader);
  Diagnostics init_diags;
  ASSERT_TRUE(compiler.Init(&init_diags));
  std::unique_ptr<JsonnetExpander> expander = compiler.MakeExpander();
  size_t targets = 0;
  for (const std::string& path : Examples()) {
    SCOPED_TRACE(path);
    Diagnostics diags;
    SourceTexts sources;
    reader.paths.clear();
    LoadedSpec loaded;
    ASSERT_TRUE(compiler.Load(path, &loaded));
    // The spec, then the schema copy its modeline names (../schemas/project.schema.json).
    ASSERT_FALSE(reader.paths.empty());
    EXPECT_EQ(path, reader.paths[0]);
    compiler.Resolve(loaded);
    reader.paths.clear();
    PreparedSpec prepared;
    CompiledSpec out;
    ASSERT_TRUE(compiler.Prepare(&loaded, &out, &prepared, &diags, &sources));
    EXPECT_TRUE(reader.paths.empty()) << "Prepare read " << reader.paths.front();
    std::map<std::string, TargetExpansion> expansions;
    ASSERT_TRUE(expander->Expand(prepared.normalized, prepared.doc, &expansions, &diags, &prepared.target_docs));
    reader.paths.clear();
    ASSERT_TRUE(compiler.Finish(&prepared, &expansions, &out, &diags));
    EXPECT_TRUE(reader.paths.empty()) << "Finish read " << reader.paths.front();
    for (const auto& target : out.targets) {
      EXPECT_EQ(1u, target.tree.count("SUMMARY.md")) << target.name;
      EXPECT_TRUE(target.stamp.empty()) << "Finish does not stamp; Stamp does";
      ++targets;
    }
  }
  EXPECT_GT(targets, 10u);
}

TEST(CompilerStages, AJpathProfileIsDescribedByResolveNotPrepare) {
  // tests/extending: a profile and a runtime that exist only under --jpath.
  RecordingReader reader;
  CompileOptions options;
  options.jpaths = {std::string(NEMOC_SOURCE_DIR) + "/tests/extending/jpath"};
  Compiler compiler(SourceData(), options, &reader);
  Diagnostics diags;
  ASSERT_TRUE(compiler.Init(&diags));
  LoadedSpec loaded;
  ASSERT_TRUE(compiler.Load(std::string(NEMOC_SOURCE_DIR) + "/tests/extending/my-cloud.yaml", &loaded));
  reader.paths.clear();
  compiler.Resolve(loaded);
  EXPECT_FALSE(reader.paths.empty()) << "Resolve reads the profile's libraries";
  reader.paths.clear();
  PreparedSpec prepared;
  CompiledSpec out;
  SourceTexts sources;
  ASSERT_TRUE(compiler.Prepare(&loaded, &out, &prepared, &diags, &sources));
  EXPECT_TRUE(reader.paths.empty()) << "Prepare read " << reader.paths.front();
}

TEST(CompilerStages, ASpecReadThroughTheReaderNeedNotBeOnDisk) {
  // The seam is the only way in: a spec that exists only in the reader compiles.
  const std::string real = std::string(NEMOC_SOURCE_DIR) + "/examples/gpt-tp2-trainjob.yaml";
  std::string text, err;
  ASSERT_TRUE(RealFiles().Read(real, 1 << 20, &text, &err)) << err;
  RecordingReader reader;
  const std::string virtual_path = "/nonexistent/nemoc-test/spec.yaml";
  reader.memory[virtual_path] = text;
  Compiler compiler(SourceData(), CompileOptions{}, &reader);
  Diagnostics diags;
  ASSERT_TRUE(compiler.Init(&diags));
  CompiledSpec in_memory;
  ASSERT_TRUE(compiler.CompileFile(virtual_path, &in_memory, &diags)) << diags.items().size();
  CompiledSpec on_disk;
  ASSERT_TRUE(compiler.CompileFile(real, &on_disk, &diags));
  ASSERT_EQ(on_disk.targets.size(), in_memory.targets.size());
  for (size_t i = 0; i < on_disk.targets.size(); ++i) {
    EXPECT_EQ(on_disk.targets[i].tree.size(), in_memory.targets[i].tree.size());
    // Identical apart from the spec's name (SUMMARY.md names it).
    for (const auto& [file, bytes] : on_disk.targets[i].tree) {
      if (file != "SUMMARY.md") {
        EXPECT_EQ(bytes, in_memory.targets[i].tree[file]) << file;
      }
    }
  }
  // A spec the reader lacks is located at its path.
  CompiledSpec missing;
  Diagnostics missing_diags;
  EXPECT_FALSE(compiler.CompileFile("/nonexistent/nemoc-test/other.yaml", &missing, &missing_diags));
  ASSERT_FALSE(missing_diags.items().empty());
  EXPECT_EQ("input.not-found", missing_diags.items()[0].code);
}

TEST(CompilerStages, SummaryAndPlanShowTheSameTrainingNumbers) {
  // One TargetFacts: the plan's sizes are the ones SUMMARY.md prints.
  Compiler compiler(SourceData(), CompileOptions{});
  Diagnostics diags;
  ASSERT_TRUE(compiler.Init(&diags));
  CompiledSpec spec;
  ASSERT_TRUE(compiler.CompileFile(std::string(NEMOC_SOURCE_DIR) + "/examples/gpt-5b-pretrain-sft-vanilla.yaml",
                                   &spec, &diags));
  for (const auto& target : spec.targets) {
    const std::string& summary = target.tree.at("SUMMARY.md");
    for (const char* key : {"pretrain", "train"}) {
      ASSERT_TRUE(target.plan.contains(key)) << key;
      const auto& stage = target.plan[key];
      const std::string gpus = stage["nodes"].dump() + " × " + stage["gpusPerNode"].dump() + " = **" +
                               stage["gpus"].dump() + " GPUs**";
      EXPECT_NE(summary.find(gpus), std::string::npos) << key << ": " << gpus;
      const auto& p = stage["parallelism"];
      const std::string parallel = "TP " + p["tensor"].dump() + " · PP " + p["pipeline"].dump() + " · CP " +
                                   p["context"].dump() + " · DP " + p["data"].dump();
      EXPECT_NE(summary.find(parallel), std::string::npos) << key << ": " << parallel;
    }
    ASSERT_TRUE(target.plan.contains("memory"));
    EXPECT_NE(summary.find(target.plan["memory"]["text"].get<std::string>()), std::string::npos);
  }
}

}  // namespace
}  // namespace nemoc
