// nemoc check: the CI drift gate. Compiles in memory and compares with the
// trees on disk; exit 1 listing every file a build would change.
#include "commands.h"

#include <cstdio>

#include "build_stamp.h"
#include "drift.h"

namespace nemoc {

const char kCheckHelp[] =
    "Compile specs in memory and compare with <out>/<project>/<target>/ on disk; write\n"
    "nothing. Exit 0 when the trees are what build makes; exit 1 listing each differing file\n"
    "(A: build would add it, M: change it, D: remove it), e.g. after a hand edit under out/\n"
    "or a change to a spec or library that was not rebuilt. `nemoc diff` shows the lines.\n"
    "A target tree under --out that no given spec generates (left behind by a renamed or\n"
    "removed project) is an error too, unless --expect names it or a directory above it\n"
    "(trees of projects this run does not check, e.g. another team's).\n"
    "Examples:\n"
    "  nemoc check examples/*.yaml\n"
    "  nemoc check team-a/*.yaml --expect out/team-b-llama";

int RunCheck(const CompileFlags& flags) {
  const bool json = flags.output.json();
  Diagnostics diags;
  std::unique_ptr<Compiler> compiler;
  nlohmann::json report = nlohmann::json::array();
  auto finish = [&](int code) {
    if (json) {
      PrintJsonReport("check", diags, report);
    } else if (!diags.empty()) {
      PrintDiagnostics(diags, compiler ? compiler->sources() : SourceTexts{});
    }
    return code;
  };
  if (!MakeCompiler(flags, &compiler, &diags)) return finish(ExitCodeFor(diags));
  std::vector<CompiledSpec> compiled;
  if (!CompileAll(compiler.get(), flags.specs, &compiled, &diags, flags.jobs,
                  /*skip_up_to_date=*/true)) {
    return finish(ExitCodeFor(diags));
  }
  RealDisk disk;
  std::vector<FileChange> changes;
  const bool readable = ComputeDrift(disk, compiled, &changes, &diags, &compiler->engines());
  if (!readable) return finish(ExitCodeFor(diags) == kExitOk ? kExitInvalid : ExitCodeFor(diags));

  // Per target: the files that differ (a change belongs to the target whose
  // directory holds it; stale target directories are reported per spec).
  for (const auto& spec : compiled) {
    nlohmann::json spec_report = {{"path", spec.path}, {"project", spec.project},
                                  {"targets", nlohmann::json::array()}};
    for (const auto& target : spec.targets) {
      nlohmann::json files = nlohmann::json::array();
      const std::string prefix = target.dir + "/";
      for (const auto& change : changes) {
        if (change.path.compare(0, prefix.size(), prefix) == 0) {
          files.push_back({{"status", std::string(1, change.status)}, {"path", change.path}});
        }
      }
      spec_report["targets"].push_back(
          {{"name", target.name}, {"dir", target.dir}, {"upToDate", files.empty()}, {"files", files}});
    }
    report.push_back(std::move(spec_report));
  }
  if (!json) {
    for (const auto& change : changes) std::printf("%c %s\n", change.status, ForTerminal(change.path).c_str());
  }
  // Trees of projects no given spec is (a renamed project leaves its old tree
  // behind, which Argo CD or Flux would keep applying).
  auto expected = [&](const std::string& dir) {
    for (std::string e : flags.expect) {
      while (e.size() > 1 && e.back() == '/') e.pop_back();
      if (dir == e || dir.compare(0, e.size() + 1, e + "/") == 0) return true;
    }
    return false;
  };
  for (const auto& dir : StaleProjectTargets(disk, flags.out_dir, compiled)) {
    if (expected(dir)) continue;
    diags.Error("check.stale",
                "a tree nemoc made that no spec given to check generates (a renamed or removed "
                "project?); Argo CD or Flux would keep applying it",
                {dir, 0, 0},
                "remove it (git rm -r " + dir + "), give check the spec that makes it, or pass --expect " + dir);
  }
  if (!changes.empty()) {
    diags.Error("check.drift", std::to_string(changes.size()) + " file" +
                                   (changes.size() == 1 ? " differs" : "s differ") +
                                   " from what nemoc build makes; run nemoc build and commit the "
                                   "result");
    return finish(kExitInvalid);
  }
  if (diags.error_count() == 0) RememberDataDigests();
  if (!flags.quiet && !json && diags.error_count() == 0) std::printf("up to date\n");
  return finish(ExitCodeFor(diags));
}

}  // namespace nemoc
