#include "cli_common.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "build_driver.h"
#include "kube_schemas.h"

#ifndef NEMOC_DEFAULT_KUBE_SCHEMAS
#define NEMOC_DEFAULT_KUBE_SCHEMAS ""
#endif

namespace nemoc {

// `--out ""` (an unset variable) once wrote <project>/<target> at the
// filesystem root, and `--out .git/refs/heads` wrote trees into Git's own
// refs (field-review.md E3, E14): both are usage errors.
static std::string SafeOutDir(const std::string& dir) {
  if (dir.empty()) return "--out is empty (an unset variable?); name the output root, e.g. --out out";
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::weakly_canonical(std::filesystem::absolute(dir, ec), ec);
  if (!ec && abs == abs.root_path()) {
    return "--out " + dir + " is the filesystem root; name a directory for the output trees";
  }
  for (const auto& part : abs) {
    if (part == ".git") return "--out " + dir + " is inside a .git directory; name a directory of the work tree";
  }
  return "";
}

void CompileFlags::Register(CLI::App* command, bool with_out_dir) {
  command->add_option("specs", specs, "Spec files (YAML)")->required()->type_name("SPEC");
  // One value per occurrence (allow_extra_args(false)): CLI11 2.1 otherwise
  // lets a repeatable option swallow the spec paths after it
  // (`build --set a=1 spec.yaml` read spec.yaml as a second --set).
  command->add_option("--target", targets, "Only this target (repeatable)")
      ->type_name("NAME")
      ->allow_extra_args(false);
  command->add_option("--set", sets, "Override a spec value for this run, e.g. "
                                     "spec.stages.train.nodes=4 or spec.targets[eks].efa.awsOfiNccl=1.14.0 "
                                     "(a target by name; repeatable)")
      ->type_name("PATH=VALUE")
      ->allow_extra_args(false);
  command->add_option("--jpath", jpaths, "Extra Jsonnet library root, searched before the "
                                         "built-in ones; user profiles live here (repeatable)")
      ->type_name("DIR")
      ->allow_extra_args(false);
  if (with_out_dir) {
    command->add_option("--out", out_dir, "Output root; trees go to <out>/<project>/<target>/")
        ->type_name("DIR")
        ->capture_default_str()
        ->check(SafeOutDir);
  }
  command->add_option("--kube-schemas", kube_schemas,
                      "Kubernetes/CRD JSON Schema bundle to validate the output against "
                      "(default: $NEMOC_KUBE_SCHEMAS, else ../shared/kube-schemas of the source tree)")
      ->type_name("DIR");
  command->add_flag("-q,--quiet", quiet, "Print errors only");
  command->add_option("-j,--jobs", jobs, "Specs compiled at once (default: one per core)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  // bench/ runs the jsonnet CLI on exactly what nemoc evaluates (the floor).
  command->add_option("--dump-jsonnet-entry", dump_entry_dir,
                      "Write <project>.entry.jsonnet and <project>.spec.json (the top-level "
                      "argument) into DIR")
      ->group("");
}

CompileOptions CompileFlags::ToOptions() const {
  CompileOptions options;
  options.jpaths = jpaths;
  options.sets = sets;
  options.only_targets = targets;
  options.out_dir = out_dir;
  options.kube_schemas_dir = kube_schemas;
  options.dump_entry_dir = dump_entry_dir;
  if (options.kube_schemas_dir.empty()) options.kube_schemas_dir = DefaultKubeSchemasDir();
  if (options.kube_schemas_dir.empty()) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(
            std::filesystem::path(NEMOC_DEFAULT_KUBE_SCHEMAS) / "index.json", ec)) {
      options.kube_schemas_dir = NEMOC_DEFAULT_KUBE_SCHEMAS;
    }
  }
  return options;
}

void OutputFlag::Register(CLI::App* command) {
  command->add_option("-o,--output", format,
                      "Output format: text, json for scripts and CI, or github: text plus GitHub Actions "
                      "annotations (::error file=,line=,col=) on stdout")
      ->check(CLI::IsMember({"text", "json", "github"}))
      ->type_name("FORMAT")
      ->capture_default_str();
}

nlohmann::json JsonReport(const std::string& command, const Diagnostics& diags,
                          nlohmann::json specs) {
  nlohmann::json diagnostics = nlohmann::json::array();
  const Diagnostics shown = CappedPerField(diags);
  for (const auto& d : shown.items()) diagnostics.push_back(ToJson(d));
  return {{"command", command},
          {"ok", !diags.has_errors()},
          {"diagnostics", std::move(diagnostics)},
          {"specs", specs.is_null() ? nlohmann::json::array() : std::move(specs)}};
}

int PrintJsonReport(const std::string& command, const Diagnostics& diags, nlohmann::json specs,
                    nlohmann::json clusters) {
  nlohmann::json report = JsonReport(command, diags, std::move(specs));
  if (!clusters.is_null()) report["clusters"] = std::move(clusters);
  // Invalid UTF-8 from a hostile spec must not throw while dumping.
  const std::string text = report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  std::printf("%s\n", text.c_str());
  return ExitCodeFor(diags);
}

bool ShouldColor(bool is_terminal, const char* no_color) {
  return is_terminal && (no_color == nullptr || *no_color == '\0');
}

bool UseColor() { return ShouldColor(isatty(STDERR_FILENO), std::getenv("NO_COLOR")); }

bool StderrIsTerminal() { return isatty(STDERR_FILENO); }

void ProgressLine::Update(size_t index, size_t count, const std::string& what) {
  if (!enabled_) return;
  // \r and "erase to end of line": the next update or the first message
  // overwrites it instead of scrolling.
  std::string shown = what;  // a file name must not drive the terminal
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  }
  std::fprintf(stderr, "\r\033[K[%zu/%zu] compiling %s", index + 1, count, shown.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void ProgressLine::Clear() {
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

ProgressFn ProgressLine::Callback() {
  return [this](size_t index, size_t count, const std::string& what) { Update(index, count, what); };
}

namespace {
bool github_annotations = false;
}  // namespace

void EnableGithubAnnotations() { github_annotations = true; }

void PrintDiagnostics(const Diagnostics& diags, const SourceTexts& sources) {
  if (github_annotations) {
    const std::string annotations = RenderGithub(CappedPerField(diags));
    std::fwrite(annotations.data(), 1, annotations.size(), stdout);
    std::fflush(stdout);
  }
  std::string text = RenderText(CappedPerField(diags), sources, UseColor());
  std::fwrite(text.data(), 1, text.size(), stderr);  // by length: never cut at a NUL
  size_t errors = diags.error_count();
  if (errors > 0) {
    std::fprintf(stderr, "%zu error%s\n", errors, errors == 1 ? "" : "s");
  }
}

int ExitCodeFor(const Diagnostics& diags) {
  for (const auto& d : diags.items()) {
    if (d.severity == Severity::kError && d.code.rfind("internal.", 0) == 0) return kExitInternal;
  }
  for (const auto& d : diags.items()) {
    if (d.severity == Severity::kError && d.code.rfind("usage.", 0) == 0) return kExitUsage;
  }
  return diags.has_errors() ? kExitInvalid : kExitOk;
}

bool MakeCompiler(const CompileFlags& flags, std::unique_ptr<Compiler>* compiler,
                  Diagnostics* diags) {
  DataDir data;
  std::string err;
  if (!FindDataDir(&data, &err)) {
    diags->Error("internal.data-dir", err);
    return false;
  }
  *compiler = std::make_unique<Compiler>(data, flags.ToOptions());
  return (*compiler)->Init(diags);
}

bool CompileAll(Compiler* compiler, const std::vector<std::string>& specs,
                std::vector<CompiledSpec>* compiled, Diagnostics* diags, int jobs,
                bool skip_up_to_date, const ProgressFn& progress) {
  DriverOptions options;
  options.jobs = jobs;
  options.skip_up_to_date = skip_up_to_date;
  options.progress = progress;
  bool ok = CompileSpecs(*compiler, specs, options, compiled, diags, compiler->mutable_sources());
  // Two specs writing the same project directory would overwrite each other.
  std::map<std::string, std::string> owners;
  for (const auto& c : *compiled) {
    auto [it, inserted] = owners.emplace(c.project_dir, c.path);
    if (!inserted) {
      diags->Error("spec.duplicate-project",
                   "project " + c.project + " is also defined in " + it->second,
                   {c.path, 0, 0});
      ok = false;
    }
  }
  return ok;
}

}  // namespace nemoc
