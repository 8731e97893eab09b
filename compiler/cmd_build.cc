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

  // Preflight: refuse before writing anything if any target directory holds
  // files nemoc did not generate.
  RealDisk disk;
  for (const auto& spec : compiled) {
    for (const auto& target : spec.targets) {
      if (target.up_to_date) continue;  // already checked against its stamp
      FileTree existing;
      ReadTree(disk, target.dir, &existing, &diags);
    }
  }
  if (diags.has_errors()) {
    PrintDiagnostics(diags, compiler->sources());
    return ExitCodeFor(diags);
  }

  for (const auto& spec : compiled) {
    for (const auto& target : spec.targets) {
      if (target.up_to_date) {
        if (!flags.quiet) std::printf("%s: up to date\n", target.dir.c_str());
        continue;
      }
      WriteResult result;
      if (!WriteTree(disk, target.dir, target.tree, &result, &diags, target.stamp)) {
        PrintDiagnostics(diags, compiler->sources());
        return kExitInternal;
      }
      if (!flags.quiet) {
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
        if (!flags.quiet) std::printf("%s: removed (no longer a target)\n", stale.c_str());
      } else {
        diags.Error("internal.write", "cannot remove " + stale + ": " + err);
      }
    }
  }
  if (!diags.empty()) PrintDiagnostics(diags, compiler->sources());
  if (!compiler->kube_schemas_loaded() && !flags.quiet) {
    std::fprintf(stderr, "note: output not validated against Kubernetes schemas "
                         "(no --kube-schemas bundle found)\n");
  }
  return ExitCodeFor(diags);
}

}  // namespace nemoc
