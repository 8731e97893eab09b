// nemoc diff: what a build would change, as a unified diff file by file.
#include "commands.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "drift.h"
#include "engines.h"
#include "jsonnet_expander.h"
#include "secret_scanner.h"
#include "review_diff.h"

namespace nemoc {

const char kDiffHelp[] =
    "Compile specs in memory and print, file by file, the unified diff between the trees on\n"
    "disk and what build would write (libgit2). A workload, ConfigMap or GitOps object whose\n"
    "content-hashed name changes is shown as one renamed file with what changed inside.\n"
    "--stat counts lines per file; -o json lists the changes per target; -o markdown is a\n"
    "summary for a pull-request comment (changed stages and objects, changed SUMMARY.md facts).\n"
    "Colour only on a terminal and never with NO_COLOR set. Writes nothing; exit 0 whether or\n"
    "not there are differences.\n"
    "Example: nemoc diff examples/gpt-tp2-trainjob.yaml --set spec.stages.train.maxSteps=200";

namespace {

// The directory SUMMARY.md's "State directories" gives stage `dir`, or "".
std::string StateDirectoryOf(const std::string& summary, const std::string& dir) {
  const size_t section = summary.find("## State directories");
  if (section == std::string::npos) return "";
  const std::string key = "| `" + dir + "` | `";
  const size_t at = summary.find(key, section);
  if (at == std::string::npos) return "";
  const size_t start = at + key.size();
  const size_t end = summary.find('`', start);
  return end == std::string::npos ? "" : summary.substr(start, end - start);
}

// Decision F8: a training workload's content-hashed name changes with its
// spec, so the GitOps engine prunes the old object (a running training is
// killed, a finished one is run again). Said once per training replaced or
// removed (28-pretrain, 30-train), on stderr, whatever the output format.
void NoteReplacedTrainings(const std::vector<FileChange>& changes, const std::vector<std::string>& workload_prefixes,
                           const EngineTable& engine_table) {
  for (const auto& change : changes) {
    if (change.status != 'D' && change.status != 'R') continue;
    const std::string& path = change.status == 'R' ? change.old_path : change.path;
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos || slash < 6) continue;
    const size_t dir_start = path.rfind('/', slash - 1) + 1;
    const std::string dir = path.substr(dir_start, slash - dir_start);
    const auto ends_with = [&](const std::string& suffix) {
      return dir.size() > suffix.size() && dir.compare(dir.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    const bool train_dir = ends_with("-train") || ends_with("-pretrain");
    if (!train_dir || !IsWorkloadFile(path, workload_prefixes)) continue;
    // What each engine the target is delivered by does with it while a
    // stage runs (field review C24), from the target's gitops/ on disk.
    const std::string target = path.substr(0, dir_start);
    std::error_code ec;
    std::string engines;
    for (const Engine& engine : engine_table.engines()) {
      if (!std::filesystem::is_directory(target + "gitops/" + engine.name, ec)) continue;
      engines += " " + engine.title() + ": " + engine.about.value("replacedWorkloadNote", "");
    }
    if (engines.empty()) engines = " Applied by hand: delete this workload and apply the new one.";
    // Where the new run writes (decision F15): the stage's row of SUMMARY.md
    // "State directories" before and after.
    std::string where = " Its log directory is in SUMMARY.md \"State directories\".";
    for (const auto& summary : changes) {
      if (summary.path != target + "SUMMARY.md" || summary.status != 'M') continue;
      const std::string before = StateDirectoryOf(summary.old_text, dir);
      const std::string after = StateDirectoryOf(summary.new_text, dir);
      if (before.empty() || after.empty()) break;
      where = before == after
                  ? " The state is unchanged (a change that only places or schedules the pods): the new run "
                    "resumes from the last checkpoint in " + after + "."
                  : " What determines the run changed: the new run trains afresh in " + after + "; " + before +
                        " keeps the old run's checkpoints (nemoc never deletes it).";
    }
    std::fprintf(stderr, "note: %s: this change replaces a running or finished training.%s%s\n", path.c_str(),
                 engines.c_str(), where.c_str());
  }
}

// Decision F13, field review C21: a Namespace, PersistentVolumeClaim or
// PersistentVolume that leaves the tree (a renamed namespace or storage) is
// never deleted by the engines; say so, with the command that would.
void NoteKeptObjects(const std::vector<FileChange>& changes) {
  static const std::vector<std::pair<std::string, std::string>> kept = {
      {"namespace-", "namespace"}, {"persistentvolumeclaim-", "persistentvolumeclaim"},
      {"persistentvolume-", "persistentvolume"}};
  const auto namespace_of = [](const std::string& text) {
    const size_t at = text.find("\n  namespace: ");
    if (at == std::string::npos) return std::string();
    const size_t start = at + 14;
    return text.substr(start, text.find('\n', start) - start);
  };
  for (const auto& change : changes) {
    // A file kept in place whose object moves to another namespace is a new
    // object there; the old one stays.
    const bool moved = change.status == 'M' && namespace_of(change.old_text) != namespace_of(change.new_text);
    if (change.status != 'D' && change.status != 'R' && !moved) continue;
    const std::string& path = change.status == 'R' ? change.old_path : change.path;
    const std::string base = path.substr(path.rfind('/') + 1);
    for (const auto& [prefix, kind] : kept) {
      if (base.rfind(prefix, 0) != 0 || base.size() < prefix.size() + 6) continue;
      if (prefix == "persistentvolume-" && base.rfind("persistentvolumeclaim-", 0) == 0) continue;
      const std::string name = base.substr(prefix.size(), base.size() - prefix.size() - 5);
      const std::string ns = namespace_of(change.old_text);
      std::fprintf(stderr,
                   "note: %s: %s %s%s leaves the tree, but neither engine deletes it (Argo CD "
                   "Prune=false,Delete=false; Flux prune: disabled; decision F13): it stays on the cluster "
                   "with its data. Delete it by hand once nothing needs it: kubectl delete %s %s%s\n",
                   path.c_str(), kind.c_str(), name.c_str(), ns.empty() ? "" : (" in namespace " + ns).c_str(),
                   kind.c_str(), name.c_str(), ns.empty() ? "" : (" -n " + ns).c_str());
      break;
    }
  }
}

}  // namespace

int RunDiff(const CompileFlags& flags, const DiffFlags& options) {
  Diagnostics diags;
  std::unique_ptr<Compiler> compiler;
  std::vector<CompiledSpec> compiled;
  const bool json = options.format == "json";
  // -o json: one report on stdout in every case, the diagnostics in it.
  auto fail = [&](int code) {
    if (json) {
      PrintJsonReport("diff", diags, nlohmann::json::array());
      return code;
    }
    PrintDiagnostics(diags, compiler ? compiler->sources() : SourceTexts{});
    return code;
  };
  if (options.stat && options.format != "text") {
    // Said rather than ignored: --stat is a form of the text diff.
    diags.Error("usage.diff-stat", "--stat applies to the text diff (-o text); -o json already gives each "
                                   "file's added and removed lines, -o markdown summarises the changes");
    return fail(kExitUsage);
  }
  if (!MakeCompiler(flags, &compiler, &diags)) return fail(ExitCodeFor(diags));
  if (!CompileAll(compiler.get(), flags.specs, &compiled, &diags, flags.jobs,
                  /*skip_up_to_date=*/true)) {
    return fail(std::max<int>(ExitCodeFor(diags), kExitInvalid));
  }
  RealDisk disk;
  std::vector<FileChange> changes;
  const bool readable = ComputeDrift(disk, compiled, &changes, &diags, &compiler->engines());
  // A hand-edited tree may hold anything (E23: a token pasted into out/ was
  // printed by diff): both sides are masked before they are compared and
  // shown, and the text forms escape control bytes (ESC, OSC 52) line by line.
  const bool terminal = !json;
  for (auto& change : changes) {
    for (std::string* text : {&change.old_text, &change.new_text}) {
      *text = MaskSecrets(*text);
      if (!terminal) continue;
      std::string safe;
      size_t start = 0;
      while (start < text->size()) {
        size_t end = text->find('\n', start);
        const bool newline = end != std::string::npos;
        if (!newline) end = text->size();
        safe += ForTerminal(std::string_view(*text).substr(start, end - start));
        if (newline) safe += '\n';
        start = end + 1;
      }
      *text = std::move(safe);
    }
  }
  PairRenamedFiles(&changes);
  // The workload kinds as the libraries know them (gitops.libsonnet's core
  // kinds and every runtime's, those of --jpath directories included).
  std::vector<std::string> workload_kinds;
  std::unique_ptr<JsonnetExpander> kinds_expander;
  if (!changes.empty()) {
    kinds_expander = compiler->MakeExpander();
    kinds_expander->set_watch_label("the workload kinds of every runtime (built-in and --jpath), for nemoc diff");
  }
  if (!changes.empty() && !kinds_expander->WorkloadKinds(&workload_kinds, &diags)) {
    PrintDiagnostics(diags, compiler->sources());
    return kExitInternal;
  }
  const std::vector<std::string> workload_prefixes = WorkloadFilePrefixes(workload_kinds);
  NoteReplacedTrainings(changes, workload_prefixes, compiler->engines());
  NoteKeptObjects(changes);
  if (json) {
    // Per spec and target, the changes under its directory; the rest (cluster
    // trees, trees of targets a spec no longer lists) under "other", per tree.
    nlohmann::json specs = nlohmann::json::array();
    std::vector<bool> placed(changes.size(), false);
    for (const auto& spec : compiled) {
      nlohmann::json targets = nlohmann::json::array();
      for (const auto& target : spec.targets) {
        nlohmann::json list = nlohmann::json::array();
        for (size_t i = 0; i < changes.size(); ++i) {
          if (changes[i].path.rfind(target.dir + "/", 0) == 0) {
            list.push_back(ChangeJson(changes[i]));
            placed[i] = true;
          }
        }
        targets.push_back({{"name", target.name}, {"dir", target.dir}, {"changes", list}});
      }
      specs.push_back({{"path", spec.path}, {"project", spec.project}, {"targets", targets}});
    }
    nlohmann::json other = nlohmann::json::array();
    for (size_t i = 0; i < changes.size(); ++i) {
      if (placed[i]) continue;
      const std::string dir = TreeOf(changes[i].path, flags.out_dir);
      if (other.empty() || other.back()["dir"] != dir) other.push_back({{"dir", dir}, {"changes", nlohmann::json::array()}});
      other.back()["changes"].push_back(ChangeJson(changes[i]));
    }
    nlohmann::json report = JsonReport("diff", diags, std::move(specs));
    report["other"] = std::move(other);
    const std::string text = report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::printf("%s\n", text.c_str());
    return readable ? ExitCodeFor(diags) : std::max<int>(ExitCodeFor(diags), kExitInvalid);
  }
  if (!diags.empty()) PrintDiagnostics(diags, compiler->sources());
  if (!readable) return ExitCodeFor(diags) == kExitOk ? kExitInvalid : ExitCodeFor(diags);
  if (options.format == "markdown") {
    // Every tree a change is under: targets, cluster trees, stale targets.
    std::vector<std::string> dirs;
    for (const auto& change : changes) {
      const std::string dir = TreeOf(change.path, flags.out_dir);
      if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
    }
    const std::string text = RenderMarkdown(changes, dirs, workload_prefixes);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return ExitCodeFor(diags);
  }
  if (options.stat) {
    const std::string text = RenderStat(changes);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return ExitCodeFor(diags);
  }
  const char* no_color = std::getenv("NO_COLOR");
  const bool color = isatty(STDOUT_FILENO) && (no_color == nullptr || *no_color == '\0');
  for (const auto& change : changes) {
    const std::string text = UnifiedDiff(change, color);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return ExitCodeFor(diags);
}

}  // namespace nemoc
