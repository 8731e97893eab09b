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
  Diagnostics diags;
  std::unique_ptr<Compiler> compiler;
  if (!MakeCompiler(flags, &compiler, &diags)) {
    PrintDiagnostics(diags, {});
    return ExitCodeFor(diags);
  }
  std::vector<CompiledSpec> compiled;
  if (!CompileAll(compiler.get(), flags.specs, &compiled, &diags)) {
    PrintDiagnostics(diags, compiler->sources());
    return ExitCodeFor(diags);
  }
  RealDisk disk;
  std::vector<FileChange> changes;
  const bool readable = ComputeDrift(disk, compiled, &changes, &diags);
  if (!diags.empty()) PrintDiagnostics(diags, compiler->sources());
  if (!readable) return ExitCodeFor(diags) == kExitOk ? kExitInvalid : ExitCodeFor(diags);
  for (const auto& change : changes) std::printf("%c %s\n", change.status, change.path.c_str());
  if (!changes.empty()) {
    std::fprintf(stderr, "error: %zu file%s differ%s from what nemoc build makes; run nemoc build "
                         "and commit the result\n",
                 changes.size(), changes.size() == 1 ? "" : "s", changes.size() == 1 ? "s" : "");
    return kExitInvalid;
  }
  if (!flags.quiet) std::printf("up to date\n");
  return ExitCodeFor(diags);
}

}  // namespace nemoc
