#include "stages.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "schema_validator.h"

namespace nemoc {
namespace {

namespace fs = std::filesystem;

// A --jpath directory of its own, removed at the end of the test.
class StagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nemoc-stages-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "stages");
    std::string err;
    contract_ = InputSchema::Load(NEMOC_SOURCE_DIR "/schemas/contracts/stage.schema.json", &err);
    ASSERT_NE(contract_, nullptr) << err;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  // Loads the built-in stages with dir_ as the --jpath directory.
  bool Load(StageTable* table, std::vector<std::string>* lines) {
    Diagnostics diags;
    const bool ok = table->Load(NEMOC_SOURCE_DIR "/libsonnet", {dir_.string()}, contract_.get(), &diags);
    for (const auto& d : diags.items()) {
      lines->push_back(d.code + "@" + fs::path(d.location.file).filename().string() + ":" +
                       std::to_string(d.location.line) + ":" + std::to_string(d.location.column) + ": " + d.message);
      hints_.push_back(d.hint);
    }
    return ok;
  }
  fs::path dir_;
  std::vector<std::string> hints_;
  std::unique_ptr<InputSchema> contract_;
};

const char kPublish[] = R"({
  "description": "uploads",
  "dir": "55-publish",
  "library": "publish.libsonnet",
  "present": "named",
  "reads": ["convert"],
  "needs": [{"what": "HuggingFace checkpoint to upload", "stages": ["convert"]}],
  "schema": {"description": "p", "type": "object"}
}
)";

TEST_F(StagesTest, TheBuiltInStagesAreInDirectoryOrder) {
  StageTable table;
  Diagnostics diags;
  ASSERT_TRUE(table.Load(NEMOC_SOURCE_DIR "/libsonnet", {}, nullptr, &diags));
  std::vector<std::string> keys;
  for (const auto& s : table.stages()) keys.push_back(s.key + " " + s.dir);
  EXPECT_EQ((std::vector<std::string>{"base 00-base", "monitoring 05-monitoring", "ncclTest 10-nccl-test",
                                      "dataPrep 20-data-prep", "importModel 25-import-model", "pretrain 28-pretrain",
                                      "train 30-train", "mergeLora 35-merge-lora", "evaluate 40-evaluate",
                                      "convert 50-convert", "tensorrtLLM 60-tensorrt-llm", "serve 70-serve"}),
            keys);
  EXPECT_TRUE(table.Find("serve")->serving);
  EXPECT_EQ("nemoc/stages/train.libsonnet", table.Find("pretrain")->library_import());
  Stage own;
  own.builtin = false;
  own.library = "x.libsonnet";
  EXPECT_EQ("stages/x.libsonnet", own.library_import());
}

TEST_F(StagesTest, AStageOfYourOwnJoinsTheTableInItsPlace) {
  Write("stages/publish.stage.json", kPublish);
  Write("stages/publish.libsonnet", "{}\n");
  StageTable table;
  std::vector<std::string> lines;
  ASSERT_TRUE(Load(&table, &lines)) << ::testing::PrintToString(lines);
  EXPECT_TRUE(lines.empty()) << ::testing::PrintToString(lines);
  std::vector<std::string> keys;
  for (const auto& s : table.stages()) keys.push_back(s.key);
  const auto at = std::find(keys.begin(), keys.end(), "publish");
  ASSERT_NE(at, keys.end());
  EXPECT_EQ("convert", *(at - 1));
  EXPECT_EQ("tensorrtLLM", *(at + 1));
  EXPECT_FALSE(table.Find("publish")->builtin);
  EXPECT_EQ("stages/publish.stage.json", table.Find("publish")->description_import());
  // The table the libraries import lists it, in order.
  const std::string source = StageTableSource(table.stages());
  EXPECT_LT(source.find("key: 'convert'"),
            source.find("key: 'publish', libraryPath: 'stages/publish.libsonnet', sharesLibrary: false, description: { "
                        "dir: '55-publish', "
                        "present: 'named', training: false, summaryLine: true, serving: false }, library: import "
                        "'stages/publish.libsonnet' },  // stages/publish.stage.json "));
  // The row names the description's digest: any byte of it changes the
  // table's text, which build stamps record.
  Write("stages/publish.stage.json", std::string(kPublish) + "\n");
  StageTable again;
  ASSERT_TRUE(Load(&again, &lines));
  EXPECT_NE(StageTableSource(again.stages()), source);
  EXPECT_LT(source.find("key: 'publish'"), source.find("key: 'tensorrtLLM'"));
  // train shares pretrain's library (its diagnostics are asked for once).
  EXPECT_NE(source.find("key: 'train', libraryPath: 'nemoc/stages/train.libsonnet', sharesLibrary: true,"), std::string::npos)
      << source;
  EXPECT_NE(source.find("key: 'pretrain', libraryPath: 'nemoc/stages/train.libsonnet', sharesLibrary: false,"),
            std::string::npos);
}

TEST_F(StagesTest, ADescriptionTheContractRefusesIsLocated) {
  Write("stages/publish.stage.json", "{\n  \"description\": \"uploads\",\n  \"dir\": \"55_publish\",\n"
                                     "  \"library\": \"publish.libsonnet\",\n  \"present\": \"named\",\n"
                                     "  \"serve\": true\n}\n");
  Write("stages/publish.libsonnet", "{}\n");
  StageTable table;
  std::vector<std::string> lines;
  EXPECT_FALSE(Load(&table, &lines));
  ASSERT_EQ(2u, lines.size()) << ::testing::PrintToString(lines);
  // In the spec's own words: the field and line, what the contract allows.
  EXPECT_EQ("spec.unknown-field@publish.stage.json:6:3: unknown field 'serve' at the top level", lines[0]);
  EXPECT_NE(hints_[0].find("serving"), std::string::npos) << hints_[0];
  EXPECT_EQ("spec.invalid@publish.stage.json:3:10: dir: \"55_publish\" is not valid", lines[1]);
  EXPECT_NE(hints_[1].find("<NN>-<name>"), std::string::npos) << hints_[1];
}

TEST_F(StagesTest, TheTableAsAWholeIsChecked) {
  // A number another stage has, reading a later stage, a library that is not there.
  Write("stages/publish.stage.json",
        std::string(kPublish).replace(std::string(kPublish).find("55-publish"), 10, "50-publish"));
  Write("stages/publish.libsonnet", "{}\n");
  Write("stages/judge.stage.json",
        R"({"description": "d", "dir": "45-judge", "library": "judge.libsonnet", "present": "named", "reads": ["serve"]})");
  Write("stages/judge.libsonnet", "{}\n");
  Write("stages/lost.stage.json", R"({"description": "d", "dir": "46-lost", "library": "gone.libsonnet", "present": "named"})");
  StageTable table;
  std::vector<std::string> lines;
  EXPECT_FALSE(Load(&table, &lines));
  // Each located at the field of the --jpath description that says it.
  EXPECT_EQ((std::vector<std::string>{
                "stage.library@lost.stage.json:1:51: stage lost: its library gone.libsonnet is not beside its "
                "description",
                "stage.order@judge.stage.json:1:101: stage judge (45-judge): reads names serve (70-serve), which "
                "does not come before it",
                "stage.order@publish.stage.json:3:10: stages convert (50-convert) and publish (50-publish) share "
                "the number 50: the number is a stage's place in the pipeline"}),
            lines);
}

TEST_F(StagesTest, NeedsAreCheckedOnTheSpec) {
  Write("stages/publish.stage.json", kPublish);
  Write("stages/publish.libsonnet", "{}\n");
  StageTable table;
  std::vector<std::string> lines;
  ASSERT_TRUE(Load(&table, &lines));
  Document doc;
  doc.file = "spec.yaml";
  doc.root = nlohmann::json::parse(R"({"spec": {"stages": {"publish": {}, "serve": {"engine": "e"}}}})");
  nlohmann::json normalized = doc.root;
  Diagnostics diags;
  EXPECT_FALSE(CheckStageNeeds(doc, normalized, table, &diags));
  ASSERT_EQ(1u, diags.items().size());
  EXPECT_EQ("spec.stages.publish has no HuggingFace checkpoint to upload: add a convert stage",
            diags.items()[0].message);
  normalized["spec"]["stages"]["convert"] = {{"checkpoint", "c.nemo"}};
  normalized["spec"]["stages"]["serve"] = nlohmann::json::object();
  Diagnostics again;
  EXPECT_FALSE(CheckStageNeeds(doc, normalized, table, &again));
  ASSERT_EQ(1u, again.items().size());
  EXPECT_EQ("spec.stages.serve has no engine to serve: add a tensorrtLLM stage or set spec.stages.serve.engine "
            "(an engine directory on the results volume)",
            again.items()[0].message);
}

}  // namespace
}  // namespace nemoc
