// nemoc validate: everything build does except writing.
#include "commands.h"

#include <cstdio>

namespace nemoc {

const char kValidateHelp[] =
    "Check specs without writing anything: input schema, semantic rules, Jsonnet\n"
    "expansion and output verification, exactly as build would run them.";

int RunValidate(const CompileFlags& flags) {
  Diagnostics diags;
  std::unique_ptr<Compiler> compiler;
  if (!MakeCompiler(flags, &compiler, &diags)) {
    PrintDiagnostics(diags, {});
    return ExitCodeFor(diags);
  }
  std::vector<CompiledSpec> compiled;
  const bool ok = CompileAll(compiler.get(), flags.specs, &compiled, &diags, flags.jobs);
  if (!diags.empty()) PrintDiagnostics(diags, compiler->sources());
  if (ok && !flags.quiet) {
    for (const auto& spec : compiled) {
      std::printf("%s: ok (%zu target%s)\n", spec.path.c_str(), spec.targets.size(),
                  spec.targets.size() == 1 ? "" : "s");
    }
  }
  return ok ? ExitCodeFor(diags) : std::max<int>(ExitCodeFor(diags), kExitInvalid);
}

}  // namespace nemoc
