// nemoc plan: what build would produce, per target, without writing.
#include "commands.h"

#include <algorithm>
#include <cstdio>

#include "cost.h"
#include "disk_interface.h"
#include "plan.h"
#include "review_diff.h"

namespace nemoc {

const char kPlanHelp[] =
    "Show per target what `build` would produce, without writing anything: nodes and\n"
    "GPUs, parallelism, batch, the memory estimate per GPU against its capacity, runtime,\n"
    "fabric, stages and object counts. The facts are the ones SUMMARY.md is rendered from.\n"
    "The spec is compiled and verified completely, as `validate` does.\n"
    "Example: nemoc plan examples/llama31-405b-gke-a4.yaml --set spec.stages.train.nodes=56";

int RunPlan(const CompileFlags& flags) {
  Diagnostics diags;
  std::unique_ptr<Compiler> compiler;
  std::vector<CompiledSpec> compiled;
  const bool ok = MakeCompiler(flags, &compiler, &diags) &&
                  CompileAll(compiler.get(), flags.specs, &compiled, &diags, flags.jobs);
  nlohmann::json specs = nlohmann::json::array();
  for (const auto& spec : compiled) {
    nlohmann::json targets = nlohmann::json::array();
    for (const auto& t : spec.targets) {
      nlohmann::json plan = t.plan;
      // Issue #46 item 3: the committed tree's cost rows, so the plan shows
      // what the change costs against it.
      RealDisk disk;
      std::string summary, err;
      if (disk.ReadFile(t.dir + "/SUMMARY.md", &summary, &err)) {
        const auto rows = FactRows(summary);
        for (const char* key : {"pretrain", "train"}) {
          auto row = rows.find(CostRowName(key));
          if (plan.contains(key) && row != rows.end()) plan["committed"][key] = row->second;
        }
      }
      targets.push_back(plan);
    }
    specs.push_back({{"path", spec.path}, {"project", spec.project}, {"targets", targets}});
  }
  if (flags.output.json()) {
    const int code = PrintJsonReport("plan", diags, specs);
    return ok ? code : std::max<int>(code, kExitInvalid);
  }
  if (!diags.empty()) PrintDiagnostics(diags, compiler ? compiler->sources() : SourceTexts{});
  if (!ok) return std::max<int>(ExitCodeFor(diags), kExitInvalid);
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i > 0) std::printf("\n");
    const std::string text = RenderPlanText(specs[i]["path"].get<std::string>(),
                                             specs[i]["project"].get<std::string>(), specs[i]["targets"]);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return ExitCodeFor(diags);
}

}  // namespace nemoc
