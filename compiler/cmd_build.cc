// nemoc build: compile specs and replace their output trees; with --commit,
// record them in Git.
#include "commands.h"

#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <set>

#include "build_stamp.h"
#include "cost.h"
#include "cluster_bundle.h"
#include "disk_interface.h"
#include "drift.h"
#include "git_commit.h"
#include "tree_writer.h"

namespace nemoc {

const char kBuildHelp[] =
    "Compile specs into out/<project>/<target>/. Every spec is validated and every target\n"
    "expanded before any output tree changes (each new tree is staged beside its target as\n"
    "its spec compiles); on any error nothing on disk changes.\n"
    "Each target directory is replaced atomically; files nemoc no longer generates are\n"
    "removed; a target directory holding files nemoc did not write is refused.\n"
    "--commit records the target directories in Git (libgit2): the commit changes exactly\n"
    "those directories, names the changed targets, and is skipped when nothing changed.\n"
    "It refuses when they hold uncommitted edits. --branch NAME other than the checked-out\n"
    "branch advances NAME only and leaves the work tree alone.";

void CommitFlags::Register(CLI::App* command) {
  command->add_flag("--commit", commit, "Commit the written target directories with libgit2");
  command->add_option("--repo", repo, "Repository to commit to (default: the one holding the "
                                      "working directory)")
      ->type_name("DIR");
  command->add_option("--branch", branch, "Branch to commit to (default: the checked-out one)")
      ->type_name("NAME");
  command->add_option("--author-name", author_name, "Commit author (default: git config user.name)")
      ->type_name("NAME");
  command->add_option("--author-email", author_email,
                      "Commit author e-mail (default: git config user.email)")
      ->type_name("EMAIL");
  command->add_flag("--no-verify", no_verify,
                    "Commit although the repository has pre-commit/commit-msg hooks, which "
                    "libgit2 does not run (as git commit --no-verify)");
}

int RunBuild(const CompileFlags& flags, const CommitFlags& commit) {
  const bool json = flags.output.json();
  nlohmann::json report = nlohmann::json::array();
  nlohmann::json cluster_report = nlohmann::json::array();
  Diagnostics diags;
  std::unique_ptr<Compiler> compiler;
  auto fail = [&](int code) {
    if (json) {
      PrintJsonReport("build", diags, report, cluster_report);
      return code;
    }
    PrintDiagnostics(diags, compiler ? compiler->sources() : SourceTexts{});
    return code;
  };
  if (!MakeCompiler(flags, &compiler, &diags)) return fail(ExitCodeFor(diags));
  if (!commit.commit && (!commit.repo.empty() || !commit.branch.empty() ||
                         !commit.author_name.empty() || !commit.author_email.empty() ||
                         commit.no_verify)) {
    diags.Error("usage.commit", "--repo, --branch, --author-* and --no-verify only apply with --commit");
    return fail(kExitUsage);
  }
  std::vector<CompiledSpec> compiled;
  ProgressLine progress(!json && !flags.quiet && flags.specs.size() > 1 && StderrIsTerminal());

  // One writer per output root from the first write to the last (E1): the
  // preflight, the commit checks and the writes see no other process's
  // half-swapped tree. Taken when the first spec's trees are staged, or
  // after compiling when none was.
  RealDisk disk;
  std::mutex lock_mu;
  std::unique_ptr<OutputLock> output_lock;
  auto take_lock = [&](Diagnostics* into) {
    if (output_lock != nullptr) return true;
    std::string lock_err;
    output_lock = OutputLock::Acquire(
        flags.out_dir, kOutputLockName,
        [&] {
          if (!flags.quiet && !json) {
            std::fprintf(stderr, "nemoc: waiting for another nemoc writing %s\n", ForTerminal(flags.out_dir).c_str());
          }
          TestPause("out-lock-wait");
        },
        &lock_err);
    if (output_lock == nullptr) {
      into->Error("output.io", lock_err);
      return false;
    }
    TestPause("out-locked");
    return true;
  };

  // Issue #47: without --commit (which needs every tree in memory), each
  // spec's new trees are staged beside their targets as soon as the spec has
  // compiled, and only what the rest of the run reads is kept (the cluster
  // bundle's contribution file): 1,000 targets held ~200 MiB of trees until
  // the swap. Staging is what it was -- the same checks, nothing visible
  // until every tree is staged and swapped, everything staged abandoned on
  // any error -- only earlier.
  std::map<std::string, StagedTree> early;  // target dir -> its staged tree
  std::set<std::string> early_projects;
  Diagnostics early_diags;
  bool early_failed = false;
  auto stage_early = [&](CompiledSpec* spec) {
    std::lock_guard<std::mutex> lock(lock_mu);
    // A second spec of one project is refused after compiling; nothing of it is staged.
    if (early_failed || !early_projects.insert(spec->project_dir).second) return;
    if (!take_lock(&early_diags)) {
      early_failed = true;
      return;
    }
    for (auto& target : spec->targets) {
      if (target.up_to_date) continue;
      if (!StageTree(disk, target.dir, target.tree, &early[target.dir], &early_diags)) {
        early_failed = true;
        return;
      }
      FileTree kept;
      if (auto contribution = target.tree.find(kContributionFile); contribution != target.tree.end()) {
        kept.insert(target.tree.extract(contribution));
      }
      target.tree.swap(kept);
    }
  };
  auto abandon_early = [&] {
    std::vector<StagedTree*> all;
    for (auto& [dir, st] : early) all.push_back(&st);
    AbandonAllStaged(disk, all);
    early.clear();
  };
  // An I/O failure is the machine's (3); a refusal of what is on disk, such
  // as a user's directory under a reserved name, is the input's (1).
  auto exit_code = [&] {
    bool io = false;
    for (const auto& d : diags.items()) io = io || (d.severity == Severity::kError && d.code == "output.io");
    return io ? kExitInternal : ExitCodeFor(diags);
  };

  // Incremental: a target whose stamp matches its tree on disk is not
  // expanded again. Not with --commit, which needs every tree in memory.
  const bool compiled_ok = CompileAll(compiler.get(), flags.specs, &compiled, &diags, flags.jobs,
                                      /*skip_up_to_date=*/!commit.commit, progress.Callback(),
                                      commit.commit ? std::function<void(CompiledSpec*)>() : stage_early);
  progress.Clear();
  diags.Append(early_diags);
  if (!compiled_ok || early_failed) {
    abandon_early();
    return fail(early_failed ? exit_code() : ExitCodeFor(diags));
  }
  if (!take_lock(&diags)) return fail(ExitCodeFor(diags));

  // The platform bundle of every cluster the targets name (decision F3),
  // merged with what targets already on disk contribute to it.
  std::vector<ClusterTree> clusters;
  if (!ComputeClusterTrees(disk, compiled, &clusters, &diags, &compiler->engines())) {
    abandon_early();
    return fail(ExitCodeFor(diags));
  }

  // Preflight: refuse before writing anything if any target directory holds
  // files nemoc did not generate (a staged target's was checked by StageTree).
  for (const auto& spec : compiled) {
    for (const auto& target : spec.targets) {
      if (target.up_to_date || early.count(target.dir) != 0) continue;  // already checked
      FileTree existing;
      ReadTree(disk, target.dir, &existing, &diags);
    }
  }
  for (const auto& cluster : clusters) {
    FileTree existing;
    ReadTree(disk, cluster.dir, &existing, &diags);
  }
  if (diags.has_errors()) {
    abandon_early();
    return fail(ExitCodeFor(diags));
  }

  // --commit: the repository, and no uncommitted edits where nemoc writes.
  std::unique_ptr<GitCommitter> committer;
  std::unique_ptr<OutputLock> repo_lock;
  if (commit.commit) {
    std::vector<CommitEntry> entries;
    for (const auto& spec : compiled) {
      for (const auto& target : spec.targets) {
        entries.push_back({target.dir, &target.tree, spec.project + "/" + target.name});
      }
      for (const auto& stale : StaleTargets(disk, spec)) {
        entries.push_back({stale, nullptr, spec.project + "/" + stale.substr(stale.rfind('/') + 1)});
      }
    }
    for (const auto& cluster : clusters) {
      entries.push_back({cluster.dir, cluster.remove ? nullptr : &cluster.tree,
                         std::string(kClustersDir) + "/" + cluster.name});
    }
    std::vector<std::string> sources;  // D6: the specs, committed with what they produced
    std::map<std::string, std::string> generated;  // cost.h: pins this build writes
    for (const auto& spec : compiled) {
      sources.push_back(spec.path);
      if (!spec.pin_write.empty()) generated[spec.pin_path] = spec.pin_write;
    }
    committer = GitCommitter::Open({commit.repo, commit.branch, commit.author_name,
                                    commit.author_email, commit.no_verify, sources, generated},
                                   std::move(entries), &diags);
    if (committer == nullptr) return fail(ExitCodeFor(diags));
    // One nemoc committing per repository (E2): two projects built into
    // different --out roots of one repository would otherwise each write the
    // index from a stale read. Taken after the output lock, always in that
    // order, so two builds cannot deadlock.
    // In the common Git directory, which every worktree shares with its refs.
    std::string lock_err;
    repo_lock = OutputLock::Acquire(
        committer->common_dir(), kRepoLockName,
        [&] {
          if (!flags.quiet && !json) {
            std::fprintf(stderr, "nemoc: waiting for another nemoc committing to %s\n",
                         ForTerminal(committer->common_dir()).c_str());
          }
          TestPause("repo-lock-wait");
        },
        &lock_err);
    if (repo_lock == nullptr) {
      diags.Error("output.io", lock_err);
      return fail(ExitCodeFor(diags));
    }
    TestPause("repo-locked");
    if (!committer->CheckClean(&diags) || !committer->Prepare(&diags)) {
      return fail(ExitCodeFor(diags));
    }
  }

  const bool write_disk = committer == nullptr || committer->writes_work_tree();
  // All or nothing across every target of every spec (E4): stage each new
  // tree completely, then swap all of them in, then drop the previous trees.
  std::vector<std::vector<StagedTree>> staged(compiled.size() + 1);  // + the clusters
  // Each target's and cluster's staged tree: one of `staged`, or of `early`.
  std::vector<std::vector<StagedTree*>> tree_of(compiled.size() + 1);
  if (write_disk) {
    bool ok = true;
    staged[compiled.size()].resize(clusters.size());
    for (size_t c = 0; c < clusters.size(); ++c) tree_of[compiled.size()].push_back(&staged[compiled.size()][c]);
    for (size_t c = 0; c < clusters.size() && ok; ++c) {
      if (clusters[c].remove) continue;
      ok = StageTree(disk, clusters[c].dir, clusters[c].tree, &staged[compiled.size()][c], &diags);
    }
    for (size_t i = 0; i < compiled.size(); ++i) {
      staged[i].resize(compiled[i].targets.size());
      for (size_t t = 0; t < compiled[i].targets.size(); ++t) {
        auto found = early.find(compiled[i].targets[t].dir);
        tree_of[i].push_back(found != early.end() ? &found->second : &staged[i][t]);
      }
    }
    for (size_t i = 0; i < compiled.size() && ok; ++i) {
      for (size_t t = 0; t < compiled[i].targets.size() && ok; ++t) {
        const auto& target = compiled[i].targets[t];
        if (target.up_to_date || tree_of[i][t] != &staged[i][t]) continue;  // current, or staged early
        // The marker holds the file list only; the stamp is kept outside the
        // tree (build_stamp.h StampPath) and saved once the tree is in place: C12, C13.
        ok = StageTree(disk, target.dir, target.tree, &staged[i][t], &diags);
      }
    }
    // The staged files reach the disk before any rename makes them the tree
    // (E14: the swap was two renames without fsync; after a power loss a
    // renamed tree could hold empty files). One syncfs(2) of the output's
    // filesystem instead of an fsync per file.
    bool any_staged = false;
    for (const auto& per_spec : tree_of) {
      for (const StagedTree* st : per_spec) any_staged = any_staged || st->pending();
    }
    if (ok && any_staged) SyncFilesystemOf(flags.out_dir);
    std::vector<StagedTree*> swapped;
    for (size_t i = 0; i < tree_of.size() && ok; ++i) {
      for (StagedTree* st : tree_of[i]) {
        if (!ok) break;
        if (!st->pending()) continue;
        ok = SwapStaged(disk, st, &diags);
        if (ok) swapped.push_back(st);
      }
    }
    if (!ok) {
      for (auto it = swapped.rbegin(); it != swapped.rend(); ++it) UnswapStaged(disk, *it, &diags);
      std::vector<StagedTree*> all;
      for (auto& per_spec : staged) {
        for (auto& st : per_spec) all.push_back(&st);
      }
      for (auto& [dir, st] : early) all.push_back(&st);
      AbandonAllStaged(disk, all);
      return fail(exit_code());
    }
    if (any_staged) SyncFilesystemOf(flags.out_dir);  // the renames, before old trees go
    for (auto& per_spec : tree_of) {
      for (StagedTree* st : per_spec) FinishStaged(disk, st, &diags);
    }
    for (const auto& spec : compiled) {
      for (const auto& target : spec.targets) {
        if (!target.up_to_date) SaveStamp(disk, target.dir, target.stamp);
      }
    }
    // cost.h: the priors this build chose and the spec had not pinned, beside
    // the spec (.nemoc/), once its trees are in place; written whole and
    // renamed in, so a reader sees the old file or the new one.
    for (const auto& spec : compiled) {
      if (spec.pin_write.empty()) continue;
      std::string err;
      if (!WritePins(disk, spec.pin_path, spec.pin_write, &err)) {
        diags.Warning("output.pins", "cannot pin the cost estimate's MFU priors in " + spec.pin_path + ": " + err +
                                         " (SUMMARY.md keeps them; a nemoc upgrade may change them)");
      }
    }
  }
  for (size_t i = 0; i < compiled.size(); ++i) {
    const auto& spec = compiled[i];
    if (!write_disk) break;
    nlohmann::json spec_report = {{"path", spec.path}, {"project", spec.project},
                                  {"targets", nlohmann::json::array()}, {"removed", nlohmann::json::array()}};
    for (size_t t = 0; t < spec.targets.size(); ++t) {
      const auto& target = spec.targets[t];
      if (target.up_to_date) {
        spec_report["targets"].push_back({{"name", target.name}, {"dir", target.dir}, {"written", false},
                                          {"upToDate", true}});
        if (!flags.quiet && !json) std::printf("%s: up to date\n", ForTerminal(target.dir).c_str());
        continue;
      }
      const WriteResult& result = tree_of[i][t]->result;
      spec_report["targets"].push_back({{"name", target.name},
                                        {"dir", target.dir},
                                        {"written", result.wrote},
                                        {"added", result.added},
                                        {"changed", result.changed},
                                        {"removed", result.removed},
                                        {"unchanged", result.unchanged}});
      if (!flags.quiet && !json) {
        std::printf("%s: %s (%d added, %d changed, %d removed, %d unchanged)\n",
                    ForTerminal(target.dir).c_str(), result.wrote ? "written" : "up to date", result.added,
                    result.changed, result.removed, result.unchanged);
      }
    }
    for (const auto& stale : StaleTargets(disk, spec)) {
      FileTree existing;
      if (!ReadTree(disk, stale, &existing, &diags)) continue;  // foreign files: leave it
      std::string err;
      if (disk.RemoveTree(stale, &err)) {
        spec_report["removed"].push_back(stale);
        if (!flags.quiet && !json) std::printf("%s: removed (no longer a target)\n", ForTerminal(stale).c_str());
      } else {
        diags.Error("internal.write", "cannot remove " + stale + ": " + err);
      }
    }
    report.push_back(std::move(spec_report));
  }
  // The cluster trees: written with the targets above; a cluster no target
  // names any more is removed (when nemoc made it: ReadTree vouched for that).
  for (size_t c = 0; c < clusters.size() && write_disk; ++c) {
    const ClusterTree& cluster = clusters[c];
    nlohmann::json entry = {{"name", cluster.name}, {"dir", cluster.dir}, {"contributors", cluster.contributors}};
    if (cluster.remove) {
      std::string err;
      if (!disk.Exists(cluster.dir)) continue;
      if (!disk.RemoveTree(cluster.dir, &err)) {
        diags.Error("internal.write", "cannot remove " + cluster.dir + ": " + err);
        continue;
      }
      entry["deleted"] = true;
      if (!flags.quiet && !json) std::printf("%s: removed (no target names the cluster)\n", ForTerminal(cluster.dir).c_str());
    } else {
      const WriteResult& result = staged[compiled.size()][c].result;
      entry["written"] = result.wrote;
      entry["added"] = result.added;
      entry["changed"] = result.changed;
      entry["removed"] = result.removed;
      entry["unchanged"] = result.unchanged;
      if (!flags.quiet && !json) {
        std::printf("%s: %s (%d added, %d changed, %d removed, %d unchanged)\n",
                    ForTerminal(cluster.dir).c_str(), result.wrote ? "written" : "up to date", result.added,
                    result.changed, result.removed, result.unchanged);
      }
    }
    cluster_report.push_back(std::move(entry));
  }
  if (committer != nullptr && !diags.has_errors()) {
    bool committed = false;
    std::string summary;
    if (committer->Commit(&committed, &summary, &diags) && !flags.quiet) {
      if (json) {
        diags.Add({Severity::kNote, "build.commit", summary, {}, {}});
      } else {
        std::printf("%s\n", summary.c_str());
      }
    }
  }
  if (!diags.has_errors()) RememberDataDigests();
  if (json) {
    if (!compiler->kube_schemas_loaded()) {
      diags.Add({Severity::kNote, "build.unverified",
                 "output not validated against Kubernetes schemas (no --kube-schemas bundle found)",
                 {}, {}});
    }
    return PrintJsonReport("build", diags, report, cluster_report);
  }
  if (!diags.empty()) PrintDiagnostics(diags, compiler->sources());
  if (!compiler->kube_schemas_loaded() && !flags.quiet) {
    std::fprintf(stderr, "note: output not validated against Kubernetes schemas "
                         "(no --kube-schemas bundle found)\n");
  }
  return ExitCodeFor(diags);
}

}  // namespace nemoc
