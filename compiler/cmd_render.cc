// nemoc render: one target's objects as one YAML stream on stdout.
#include "commands.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "render.h"

namespace nemoc {

const char kRenderHelp[] =
    "Compile one spec in memory and print one target's objects as a single YAML stream on\n"
    "stdout, in the order `kubectl kustomize out/<project>/<target>` prints them: for\n"
    "`kubectl apply -f -`, `kubectl diff -f -` or an Argo CD config-management plugin. Writes\n"
    "nothing; diagnostics go to stderr. The stream holds the stage directories' objects, not\n"
    "gitops/ or SUMMARY.md. A spec with several targets needs --target.\n"
    "Applying the stream starts every stage at once; without a GitOps engine, build the tree\n"
    "and apply its stage directories in order, waiting for each (README).\n"
    "Example: nemoc render examples/llama31-8b-lora-nemo2-eks.yaml | kubectl diff -f -";

int RunRender(const CompileFlags& flags) {
  Diagnostics diags;
  std::unique_ptr<Compiler> compiler;
  if (flags.specs.size() != 1 || flags.targets.size() > 1) {
    std::fprintf(stderr, "nemoc render: error: render prints one target of one spec (got %zu specs, %zu --target)\n",
                 flags.specs.size(), flags.targets.size());
    return kExitUsage;
  }
  std::vector<CompiledSpec> compiled;
  const bool ok = MakeCompiler(flags, &compiler, &diags) &&
                  CompileAll(compiler.get(), flags.specs, &compiled, &diags, /*jobs=*/1);
  if (!diags.empty()) PrintDiagnostics(diags, compiler ? compiler->sources() : SourceTexts{});
  if (!ok || compiled.size() != 1) return std::max<int>(ExitCodeFor(diags), kExitInvalid);
  const CompiledSpec& spec = compiled[0];
  if (spec.targets.size() != 1) {
    std::string names;
    for (const auto& t : spec.targets) names += (names.empty() ? "" : ", ") + t.name;
    std::fprintf(stderr, "nemoc render: error: %s has %zu targets (%s); choose one with --target\n",
                 flags.specs[0].c_str(), spec.targets.size(), names.c_str());
    return kExitUsage;
  }
  std::string stream, err;
  if (!RenderTargetStream(spec.targets[0].tree, &stream, &err)) {
    std::fprintf(stderr, "nemoc render: internal error: %s\n", err.c_str());
    return kExitInternal;
  }
  std::fwrite(stream.data(), 1, stream.size(), stdout);
  return ExitCodeFor(diags);
}

}  // namespace nemoc
