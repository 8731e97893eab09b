// nemoc diff: what a build would change, as a unified diff file by file.
#include "commands.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "drift.h"
#include "review_diff.h"

namespace nemoc {

const char kDiffHelp[] =
    "Compile specs in memory and print, file by file, the unified diff between the trees on\n"
    "disk and what build would write (libgit2). A workload, ConfigMap or GitOps object whose\n"
    "content-hashed name changes is shown as one renamed file with what changed inside.\n"
    "--stat counts lines per file; -o json lists the changes per target; -o markdown is a\n"
    "summary for a pull-request comment (changed stages and objects, changed SUMMARY.md facts).\n"
    "Colour only on a terminal and never with NO_COLOR set. Writes nothing; exit 0 whether or\n"
    "not there are differences.\n"
    "Example: nemoc diff examples/gpt-tp2-trainjob.yaml --set spec.stages.train.maxSteps=200";

int RunDiff(const CompileFlags& flags, const DiffFlags& options) {
  Diagnostics diags;
  std::unique_ptr<Compiler> compiler;
  if (!MakeCompiler(flags, &compiler, &diags)) {
    PrintDiagnostics(diags, {});
    return ExitCodeFor(diags);
  }
  std::vector<CompiledSpec> compiled;
  if (!CompileAll(compiler.get(), flags.specs, &compiled, &diags, flags.jobs,
                  /*skip_up_to_date=*/true)) {
    PrintDiagnostics(diags, compiler->sources());
    return ExitCodeFor(diags);
  }
  RealDisk disk;
  std::vector<FileChange> changes;
  const bool readable = ComputeDrift(disk, compiled, &changes, &diags);
  PairRenamedFiles(&changes);
  if (options.format == "json") {
    // Per spec and target, the changes under its directory; the rest (cluster
    // trees, stale trees) under "clusters".
    nlohmann::json specs = nlohmann::json::array();
    std::vector<bool> placed(changes.size(), false);
    for (const auto& spec : compiled) {
      nlohmann::json targets = nlohmann::json::array();
      for (const auto& target : spec.targets) {
        nlohmann::json list = nlohmann::json::array();
        for (size_t i = 0; i < changes.size(); ++i) {
          if (changes[i].path.rfind(target.dir + "/", 0) == 0) {
            list.push_back(ChangeJson(changes[i]));
            placed[i] = true;
          }
        }
        targets.push_back({{"name", target.name}, {"dir", target.dir}, {"changes", list}});
      }
      specs.push_back({{"path", spec.path}, {"project", spec.project}, {"targets", targets}});
    }
    nlohmann::json rest = nlohmann::json::array();
    for (size_t i = 0; i < changes.size(); ++i) {
      if (!placed[i]) rest.push_back(ChangeJson(changes[i]));
    }
    const int code = PrintJsonReport("diff", diags, specs, rest);
    return readable ? code : std::max<int>(code, kExitInvalid);
  }
  if (!diags.empty()) PrintDiagnostics(diags, compiler->sources());
  if (!readable) return ExitCodeFor(diags) == kExitOk ? kExitInvalid : ExitCodeFor(diags);
  if (options.format == "markdown") {
    // Every directory <out>/<a>/<b> a change is under: targets and cluster trees.
    std::vector<std::string> dirs;
    for (const auto& change : changes) {
      const std::string& path = change.path;
      size_t at = path.rfind(flags.out_dir + "/", 0) == 0 ? flags.out_dir.size() + 1 : 0;
      at = path.find('/', at);
      at = at == std::string::npos ? at : path.find('/', at + 1);
      const std::string dir = path.substr(0, at == std::string::npos ? path.rfind('/') : at);
      if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
    }
    const std::string text = RenderMarkdown(changes, dirs);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return ExitCodeFor(diags);
  }
  if (options.stat) {
    const std::string text = RenderStat(changes);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return ExitCodeFor(diags);
  }
  const char* no_color = std::getenv("NO_COLOR");
  const bool color = isatty(STDOUT_FILENO) && (no_color == nullptr || *no_color == '\0');
  for (const auto& change : changes) {
    const std::string text = UnifiedDiff(change, color);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  // Decision F8: a training workload's content-hashed name changes with its
  // spec, so the GitOps engine prunes the old object (a running training is
  // killed, a finished one is run again). Say so, once per training removed.
  for (const auto& change : changes) {
    if (change.status != 'D' && change.status != 'R') continue;
    const std::string& path = change.status == 'R' ? change.old_path : change.path;
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos || slash < 6) continue;
    const size_t dir_start = path.rfind('/', slash - 1) + 1;
    const std::string dir = path.substr(dir_start, slash - dir_start);
    const std::string file = path.substr(slash + 1);
    const bool train_dir = dir.size() > 6 && dir.compare(dir.size() - 6, 6, "-train") == 0;
    const bool workload = file.rfind("pytorchjob-", 0) == 0 || file.rfind("mpijob-", 0) == 0 ||
                          file.rfind("trainjob-", 0) == 0 || file.rfind("jobset-", 0) == 0 ||
                          file.rfind("job-", 0) == 0;
    if (!train_dir || !workload) continue;
    std::fprintf(stderr,
                 "note: %s: this change replaces a running or finished training: the GitOps "
                 "engine deletes this workload and starts the new one (resuming from the last "
                 "checkpoint only where the run's resume settings allow)\n",
                 path.c_str());
  }
  return ExitCodeFor(diags);
}

}  // namespace nemoc
