// nemoc validate: everything build does except writing.
#include "commands.h"

#include <cstdio>

#include "cluster_bundle.h"
#include "disk_interface.h"

namespace nemoc {

const char kValidateHelp[] =
    "Check specs without writing anything: input schema, semantic rules, Jsonnet\n"
    "expansion and output verification, exactly as build would run them.";

int RunValidate(const CompileFlags& flags) {
  Diagnostics diags;
  std::unique_ptr<Compiler> compiler;
  if (!MakeCompiler(flags, &compiler, &diags)) {
    if (flags.output.json()) return PrintJsonReport("validate", diags, nullptr);
    PrintDiagnostics(diags, {});
    return ExitCodeFor(diags);
  }
  std::vector<CompiledSpec> compiled;
  bool ok = CompileAll(compiler.get(), flags.specs, &compiled, &diags, flags.jobs);
  // D7: what build refuses across specs -- clusters whose platform bundles
  // disagree with each other or with what the output root already holds --
  // validate refuses too (read-only: nothing is written).
  if (ok) {
    RealDisk disk;
    std::vector<ClusterTree> clusters;
    ok = ComputeClusterTrees(disk, compiled, &clusters, &diags, &compiler->engines());
  }
  if (flags.output.json()) {
    nlohmann::json specs = nlohmann::json::array();
    for (const auto& spec : compiled) {
      nlohmann::json targets = nlohmann::json::array();
      for (const auto& t : spec.targets) targets.push_back({{"name", t.name}, {"dir", t.dir}});
      specs.push_back({{"path", spec.path}, {"project", spec.project}, {"targets", targets}});
    }
    const int code = PrintJsonReport("validate", diags, specs);
    return ok ? code : std::max<int>(code, kExitInvalid);
  }
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
