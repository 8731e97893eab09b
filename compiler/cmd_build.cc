// nemoc build: compile specs and replace their output trees.
#include "commands.h"

#include <cstdio>

#include <set>

#include "disk_interface.h"
#include "tree_writer.h"

namespace nemoc {

const char kBuildHelp[] =
    "Compile specs into out/<project>/<target>/. Every spec is validated and every target\n"
    "expanded before anything is written; on any error nothing on disk changes.\n"
    "Each target directory is replaced atomically; files nemoc no longer generates are\n"
    "removed; a target directory holding files nemoc did not write is refused.";

namespace {

// Target directories of a project that nemoc made earlier but that the spec
// no longer lists (only pruned when the whole spec was built).
std::vector<std::string> StaleTargets(Disk& disk, const CompiledSpec& spec) {
  std::vector<std::string> stale;
  TreeListing listing;
  std::string err;
  if (!spec.all_targets || !disk.IsDir(spec.project_dir) ||
      !disk.ListTree(spec.project_dir, &listing, &err)) {
    return stale;
  }
  std::set<std::string> current;
  for (const auto& t : spec.targets) current.insert(t.name);
  for (const auto& file : listing.files) {
    size_t slash = file.find('/');
    if (slash == std::string::npos) continue;
    std::string dir = file.substr(0, slash);
    if (file.substr(slash + 1) == kManifestFileName && !current.count(dir)) {
      stale.push_back(spec.project_dir + "/" + dir);
    }
  }
  return stale;
}

}  // namespace

int RunBuild(const CompileFlags& flags) {
  const bool json = flags.output.json();
  nlohmann::json report = nlohmann::json::array();
  Diagnostics diags;
  std::unique_ptr<Compiler> compiler;
  auto fail = [&](int code) {
    if (json) {
      PrintJsonReport("build", diags, report);
      return code;
    }
    PrintDiagnostics(diags, compiler ? compiler->sources() : SourceTexts{});
    return code;
  };
  if (!MakeCompiler(flags, &compiler, &diags)) return fail(ExitCodeFor(diags));
  std::vector<CompiledSpec> compiled;
  ProgressLine progress(!json && !flags.quiet && flags.specs.size() > 1 && StderrIsTerminal());
  const bool compiled_ok = CompileAll(compiler.get(), flags.specs, &compiled, &diags,
                                      progress.Callback());
  progress.Clear();
  if (!compiled_ok) return fail(ExitCodeFor(diags));

  // Preflight: refuse before writing anything if any target directory holds
  // files nemoc did not generate.
  RealDisk disk;
  for (const auto& spec : compiled) {
    for (const auto& target : spec.targets) {
      FileTree existing;
      ReadTree(disk, target.dir, &existing, &diags);
    }
  }
  if (diags.has_errors()) return fail(ExitCodeFor(diags));

  for (const auto& spec : compiled) {
    nlohmann::json spec_report = {{"path", spec.path}, {"project", spec.project},
                                  {"targets", nlohmann::json::array()}, {"removed", nlohmann::json::array()}};
    for (const auto& target : spec.targets) {
      WriteResult result;
      if (!WriteTree(disk, target.dir, target.tree, &result, &diags)) return fail(kExitInternal);
      spec_report["targets"].push_back({{"name", target.name},
                                        {"dir", target.dir},
                                        {"written", result.wrote},
                                        {"added", result.added},
                                        {"changed", result.changed},
                                        {"removed", result.removed},
                                        {"unchanged", result.unchanged}});
      if (!flags.quiet && !json) {
        std::printf("%s: %s (%d added, %d changed, %d removed, %d unchanged)\n",
                    target.dir.c_str(), result.wrote ? "written" : "up to date", result.added,
                    result.changed, result.removed, result.unchanged);
      }
    }
    for (const auto& stale : StaleTargets(disk, spec)) {
      FileTree existing;
      if (!ReadTree(disk, stale, &existing, &diags)) continue;  // foreign files: leave it
      std::string err;
      if (disk.RemoveTree(stale, &err)) {
        spec_report["removed"].push_back(stale);
        if (!flags.quiet && !json) std::printf("%s: removed (no longer a target)\n", stale.c_str());
      } else {
        diags.Error("internal.write", "cannot remove " + stale + ": " + err);
      }
    }
    report.push_back(std::move(spec_report));
  }
  if (json) {
    if (!compiler->kube_schemas_loaded()) {
      diags.Add({Severity::kNote, "build.unverified",
                 "output not validated against Kubernetes schemas (no --kube-schemas bundle found)",
                 {}, {}});
    }
    return PrintJsonReport("build", diags, report);
  }
  if (!diags.empty()) PrintDiagnostics(diags, compiler->sources());
  if (!compiler->kube_schemas_loaded() && !flags.quiet) {
    std::fprintf(stderr, "note: output not validated against Kubernetes schemas "
                         "(no --kube-schemas bundle found)\n");
  }
  return ExitCodeFor(diags);
}

}  // namespace nemoc
