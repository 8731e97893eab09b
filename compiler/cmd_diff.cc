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
  return ExitCodeFor(diags);
}

}  // namespace nemoc
