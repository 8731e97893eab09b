// nemoc diff: what a build would change, as a unified diff file by file.
#include "commands.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "drift.h"

namespace nemoc {

const char kDiffHelp[] =
    "Compile specs in memory and print, file by file, the unified diff between the trees on\n"
    "disk and what build would write (libgit2). Colour only on a terminal and never with\n"
    "NO_COLOR set. Writes nothing; exit 0 whether or not there are differences.";

int RunDiff(const CompileFlags& flags) {
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
  if (!diags.empty()) PrintDiagnostics(diags, compiler->sources());
  if (!readable) return ExitCodeFor(diags) == kExitOk ? kExitInvalid : ExitCodeFor(diags);
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
    if (change.status != 'D') continue;
    const std::string& path = change.path;
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
