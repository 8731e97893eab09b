// D10: the Argo CD / Flux bootstrap is described once (gitops.libsonnet's
// bootstrap facts), from the repository root, server-side: every target's
// SUMMARY.md "Apply once" row, the cluster bundle's SUMMARY.md and README.md
// (tests/gitops/replay/readme.py copies an example's row; ctest
// gitops.readme_transcripts fails when README differs) say the same commands.
#include <filesystem>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "test_support.h"

namespace nemoc::testing {
namespace {

namespace fs = std::filesystem;

std::string ApplyRow(const std::string& summary, const std::string& name) {
  const std::string start = "| " + name + " | ";
  const size_t at = summary.find(start);
  if (at == std::string::npos) return "";
  return summary.substr(at + start.size(), summary.find(" |\n", at) - at - start.size());
}

TEST(Bootstrap, OneDescriptionFromTheRepositoryRootInEverySummaryAndTheReadme) {
  const std::string source = SourceDir();
  int targets = 0, commands = 0;
  for (const auto& project : fs::directory_iterator(source + "/out")) {
    if (project.path().filename() == "_clusters") continue;
    for (const auto& target : fs::directory_iterator(project.path())) {
      const std::string summary = ReadFile(target.path().string() + "/SUMMARY.md");
      const std::string row = ApplyRow(summary, "Apply once");
      if (row.empty()) continue;
      ++targets;
      SCOPED_TRACE(target.path().string());
      EXPECT_EQ(row.rfind("from the repository root: ", 0), 0u) << row;
      // Every command: a server-side apply of a kustomize root that exists
      // from the repository root, or a wait.
      const std::regex command("`(kubectl [^`]+)`");
      for (std::sregex_iterator it(row.begin(), row.end(), command), end; it != end; ++it) {
        const std::string text = (*it)[1];
        ++commands;
        if (text.rfind("kubectl wait ", 0) == 0 || text.rfind("kubectl delete ", 0) == 0) continue;
        std::smatch m;
        ASSERT_TRUE(std::regex_match(text, m, std::regex(R"(kubectl apply --server-side -k (\S+))"))) << text;
        EXPECT_TRUE(fs::exists(source + "/" + m[1].str() + "/kustomization.yaml")) << text;
      }
      // The cluster bundle's SUMMARY.md names the same cluster step.
      const std::regex cluster_step(R"((`kubectl apply --server-side -k out/_clusters/([^/]+)/platform/(argocd|flux)`[^;]*))");
      for (std::sregex_iterator it(row.begin(), row.end(), cluster_step), end; it != end; ++it) {
        const std::string step = (*it)[1], name = (*it)[2];
        const std::string bundle = ReadFile(source + "/out/_clusters/" + name + "/SUMMARY.md");
        EXPECT_NE(bundle.find(step), std::string::npos) << "cluster " << name << " does not say: " << step;
      }
    }
  }
  EXPECT_GE(targets, 8);
  EXPECT_GE(commands, 20);
  // README shows no other bootstrap than the generated blocks: no client-side
  // apply of a root or a cluster bundle.
  const std::string readme = ReadFile(source + "/README.md");
  EXPECT_EQ(readme.find("kubectl apply -k out/_clusters"), std::string::npos);
  EXPECT_EQ(std::regex_search(readme, std::regex(R"(kubectl apply -k \S*gitops/(argocd|flux)/root)")), false);
  EXPECT_NE(readme.find("<!-- bootstrap:argocd -->\n```sh\n"), std::string::npos);
  EXPECT_NE(readme.find("<!-- bootstrap:flux -->\n```sh\n"), std::string::npos);
}

}  // namespace
}  // namespace nemoc::testing
