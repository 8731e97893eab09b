// The written contracts (schemas/contracts/) hold for every example on both
// sides of the boundary, refuse a break on either side, and agree with what
// the C++ side reads (facts.h).
#include "contracts.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "compiler.h"
#include "data_dir.h"
#include "facts.h"
#include "file_reader.h"
#include "jsonnet_expander.h"

namespace nemoc {
namespace {

std::string ContractsDir() { return std::string(NEMOC_SOURCE_DIR) + "/schemas/contracts"; }

nlohmann::json ReadJson(const std::string& path) {
  std::string text, err;
  EXPECT_TRUE(RealFiles().Read(path, kMaxTableBytes, &text, &err)) << err;
  return nlohmann::json::parse(text);
}

class ContractsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    contracts_ = Contracts::Open(ContractsDir(), &err);
    ASSERT_NE(nullptr, contracts_) << err;
  }
  // The normalized spec of examples/<name> (through the real Prepare).
  nlohmann::json Normalized(const std::string& name) {
    DataDir data;
    data.root = NEMOC_SOURCE_DIR;
    Compiler compiler(data, CompileOptions{});
    Diagnostics diags;
    EXPECT_TRUE(compiler.Init(&diags));
    LoadedSpec loaded;
    EXPECT_TRUE(compiler.Load(std::string(NEMOC_SOURCE_DIR) + "/examples/" + name, &loaded));
    PreparedSpec prepared;
    CompiledSpec out;
    SourceTexts sources;
    compiler.Resolve(loaded);
    EXPECT_TRUE(compiler.Prepare(&loaded, &out, &prepared, &diags, &sources));
    return prepared.normalized;
  }
  std::unique_ptr<Contracts> contracts_;
};

TEST_F(ContractsTest, ANormalizedSpecKeepsItsContract) {
  // A chain with per-target overrides (targetSpecs) and a NeMo 2 spec.
  for (const char* name : {"llama31-8b-environments-gke-a4.yaml", "llama31-8b-lora-nemo2-eks.yaml"}) {
    std::string err;
    EXPECT_TRUE(contracts_->CheckNormalizedSpec(Normalized(name), &err)) << name << ": " << err;
  }
}

TEST_F(ContractsTest, ABrokenNormalizedSpecIsRefusedWhereItBreaks) {
  nlohmann::json normalized = Normalized("gpt-tp2-trainjob.yaml");
  normalized["spec"].erase("namespace");
  std::string err;
  EXPECT_FALSE(contracts_->CheckNormalizedSpec(normalized, &err));
  EXPECT_NE(err.find("normalized-spec.schema.json"), std::string::npos) << err;
  normalized = Normalized("gpt-tp2-trainjob.yaml");
  normalized["spec"]["targets"][0]["profile"] = 7;
  EXPECT_FALSE(contracts_->CheckNormalizedSpec(normalized, &err));
  EXPECT_NE(err.find("/spec/targets/0/profile"), std::string::npos) << err;
}

TEST_F(ContractsTest, TheExpansionOfEverySpecKeepsItsContract) {
  // Every example, expanded by the libraries; the expander checks both sides.
  DataDir data;
  data.root = NEMOC_SOURCE_DIR;
  Compiler compiler(data, CompileOptions{});
  Diagnostics diags;
  ASSERT_TRUE(compiler.Init(&diags));
  std::unique_ptr<JsonnetExpander> expander = compiler.MakeExpander();
  expander->CheckContracts(contracts_.get());
  for (const auto& entry : std::filesystem::directory_iterator(std::string(NEMOC_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    LoadedSpec loaded;
    ASSERT_TRUE(compiler.Load(entry.path().string(), &loaded));
    PreparedSpec prepared;
    CompiledSpec out;
    SourceTexts sources;
    Diagnostics spec_diags;
    compiler.Resolve(loaded);
    ASSERT_TRUE(compiler.Prepare(&loaded, &out, &prepared, &spec_diags, &sources));
    std::map<std::string, TargetExpansion> expansions;
    EXPECT_TRUE(expander->Expand(prepared.normalized, prepared.doc, &expansions, &spec_diags,
                                 &prepared.target_docs));
    for (const auto& d : spec_diags.items()) EXPECT_NE("internal.contract", d.code) << d.message;
  }
}

TEST_F(ContractsTest, ABrokenExpansionIsRefused) {
  const nlohmann::json target = {
      {"diagnostics", nlohmann::json::array()},
      {"files", {{"30-train/job-x.yaml", {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", "x"}}}}}}},
      {"kustomizations", nlohmann::json::object()},
      {"podNameSuffixes", nlohmann::json::object()},
      {"summary",
       {{"profile", "vanilla-k8s"},
        {"platform", {{"installs", nlohmann::json::array()}, {"clusterHas", nlohmann::json::array()}}},
        {"stages", nlohmann::json::object()},
        {"storage", {{"results", "NFS"}}}}}};
  std::string err;
  ASSERT_TRUE(contracts_->CheckExpansion({{"targets", {{"lab", target}}}}, &err)) << err;
  nlohmann::json broken = target;
  broken["summary"]["gpuModel"] = "H100";  // C++ adds it; the libraries must not
  EXPECT_FALSE(contracts_->CheckExpansion({{"targets", {{"lab", broken}}}}, &err));
  broken = target;
  broken["files"]["30-train/job-x.yaml"].erase("kind");
  EXPECT_FALSE(contracts_->CheckExpansion({{"targets", {{"lab", broken}}}}, &err));
  EXPECT_NE(err.find("expansion.schema.json"), std::string::npos) << err;
}

TEST_F(ContractsTest, TheFactsTheContractAllowsAreTheFactsCppReads) {
  // Every summary member the schema allows, with a value of its type, is read
  // by ParseLibraryFacts; a member the schema does not list is refused by both.
  const nlohmann::json schema = ReadJson(ContractsDir() + "/expansion.schema.json");
  const nlohmann::json* summary = nullptr;
  for (const auto& [name, definition] : schema["definitions"].items()) {
    if (definition.contains("properties") && definition["properties"].contains("profile") &&
        definition["properties"].contains("gitops")) {
      summary = &definition;
    }
  }
  ASSERT_NE(nullptr, summary) << "no summary definition in expansion.schema.json";
  EXPECT_EQ(false, (*summary).value("additionalProperties", true)) << "the summary must be closed";
  for (const auto& [fact, _] : (*summary)["properties"].items()) {
    LibraryFacts facts;
    std::string err;
    // An empty value of any type: ParseLibraryFacts refuses unknown members by name first.
    ParseLibraryFacts({{fact, nullptr}}, &facts, &err);
    EXPECT_EQ(err.find("is not a fact nemoc reads"), std::string::npos) << fact << ": " << err;
  }
}

TEST(ContractsEnvironment, WhenAskedOrInADebugBuild) {
  std::string err;
  unsetenv("NEMOC_CHECK_CONTRACTS");
  // Unset: checked in a Debug build, not in a release build.
  EXPECT_EQ(Contracts::kCheckedByDefault, Contracts::FromEnvironment(ContractsDir(), &err) != nullptr);
  EXPECT_TRUE(err.empty());
  setenv("NEMOC_CHECK_CONTRACTS", "0", 1);
  EXPECT_EQ(nullptr, Contracts::FromEnvironment(ContractsDir(), &err));
  setenv("NEMOC_CHECK_CONTRACTS", "1", 1);
  EXPECT_NE(nullptr, Contracts::FromEnvironment(ContractsDir(), &err)) << err;
  EXPECT_EQ(nullptr, Contracts::FromEnvironment("/nonexistent", &err));
  EXPECT_FALSE(err.empty());
  unsetenv("NEMOC_CHECK_CONTRACTS");
}

}  // namespace
}  // namespace nemoc
