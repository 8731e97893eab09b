// nemoc check: the CI drift gate. Compiles in memory and compares with the
// trees on disk; exit 1 listing every file a build would change.
#include "commands.h"

#include <cstdio>

#include "drift.h"

namespace nemoc {

const char kCheckHelp[] =
    "Compile specs in memory and compare with <out>/<project>/<target>/ on disk; write\n"
    "nothing. Exit 0 when the trees are what build makes; exit 1 listing each differing file\n"
    "(A: build would add it, M: change it, D: remove it), e.g. after a hand edit under out/\n"
    "or a change to a spec or library that was not rebuilt. `nemoc diff` shows the lines.";

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
  const bool readable = ComputeDrift(disk, compiled, &changes, &diags);
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
  if (!changes.empty()) {
    diags.Error("check.drift", std::to_string(changes.size()) + " file" +
                                   (changes.size() == 1 ? " differs" : "s differ") +
                                   " from what nemoc build makes; run nemoc build and commit the "
                                   "result");
    return finish(kExitInvalid);
  }
  if (!flags.quiet && !json) std::printf("up to date\n");
  return finish(ExitCodeFor(diags));
}

}  // namespace nemoc
