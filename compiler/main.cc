// nemoc: compiles one NeMo pipeline spec into reviewable Kubernetes manifests.
#include <cerrno>
#include <cstdio>
#include <streambuf>
#include <iostream>
#include <mutex>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "diagnostic.h"
#include "secret_scanner.h"
#include "data_dir.h"
#include "edit_distance.h"

// jemalloc (linked in by CMakeLists.txt's NEMOC_JEMALLOC) reads this at
// start-up; MALLOC_CONF in the environment still overrides it. Transparent
// huge pages for its heap and metadata: the Jsonnet evaluations allocate
// and free a few hundred MB per worker, and with 4 KiB pages a fifth of a
// build's CPU was the kernel's page faults (issue #47: 250 synthetic targets
// -j2, system time 4.5 -> 1.2-1.7 s, minor faults of a no-op rebuild of the
// examples -55 %; bench/RESULTS.md). A kernel without THP ignores the advice;
// glibc's malloc (the sanitizer builds) ignores the symbol.
extern "C" {
__attribute__((used)) const char* malloc_conf = "thp:always,metadata_thp:always";
}

namespace {

// nemoc's version, where its data is, and which Kubernetes schemas an
// ordinary build validates its output against (D10, F19: where the bundle
// comes from).
std::string VersionText() {
  using namespace nemoc;
  std::string text = std::string("nemoc ") + NemocVersion();
  CompileFlags none;
  const std::string kube = none.ToOptions().kube_schemas_dir;
  DataDir data;
  std::string err;
  text += "\ndata: " + (FindDataDir(&data, &err) ? data.root : "not found (" + err + ")");
  text += "\nKubernetes schemas: " + (kube.empty() ? std::string("none (output is not schema-validated)") : kube);
  return text;
}

int RunMain(int argc, char** argv) {
  using namespace nemoc;
  try {
    CLI::App app{"nemoc: compiles a NeMo LLM pipeline spec into Kubernetes manifests, one "
                 "reviewable tree per target cluster.\n",
                 "nemoc"};
    app.require_subcommand(1);
    app.set_help_all_flag("--help-all", "Help for every subcommand");
    // A function: the directories are looked up only when --version is asked for.
    app.set_version_flag("--version", std::function<std::string()>(VersionText),
                         "Print nemoc's version, its data and Kubernetes schemas directories");
    app.footer("Exit codes: 0 ok, 1 invalid input (or drift for check), 2 usage error, 3 internal error.");

    CompileFlags build_flags;
    CLI::App* build = app.add_subcommand("build", "Compile specs into out/<project>/<target>/");
    build->footer(kBuildHelp);
    build_flags.Register(build, /*with_out_dir=*/true);
    build_flags.output.Register(build);
    CommitFlags commit_flags;
    commit_flags.Register(build);

    CompileFlags validate_flags;
    CLI::App* validate = app.add_subcommand("validate", "Check specs; write nothing");
    validate->footer(kValidateHelp);
    validate_flags.Register(validate, /*with_out_dir=*/true);  // read: its clusters (D7)
    validate_flags.output.Register(validate);

    CompileFlags plan_flags;
    CLI::App* plan = app.add_subcommand("plan", "Show per target what build would produce; write nothing");
    plan->footer(kPlanHelp);
    plan_flags.Register(plan, /*with_out_dir=*/true);
    plan_flags.output.Register(plan);

    CompileFlags render_flags;
    CLI::App* render = app.add_subcommand("render", "Print the objects of one target as one YAML stream; write nothing");
    render->footer(kRenderHelp);
    render_flags.Register(render, /*with_out_dir=*/false);

    InitFlags init_flags;
    CLI::App* init = app.add_subcommand("init", "Write a commented starter spec that builds as is");
    init->footer(kInitHelp);
    init->add_option("name", init_flags.name, "Project name; the spec is written to NAME.yaml")
        ->type_name("NAME")
        ->capture_default_str();
    init->add_option("--profile", init_flags.profile,
                     "Cloud profile of the target (nemoc profiles lists them; default: the one whose "
                     "starter is marked default)")
        ->type_name("PROFILE");
    init->add_option("--model", init_flags.model, "Model preset from libsonnet/models.json")
        ->type_name("MODEL")
        ->capture_default_str();
    init->add_option("--cluster-queue", init_flags.cluster_queue,
                     "The cluster's Kueue ClusterQueue, for a starter that admits through it "
                     "(kubectl get clusterqueues)")
        ->type_name("NAME");
    init->add_option("--jpath", init_flags.jpaths, "Extra Jsonnet library root, searched before the "
                                                   "built-in ones; user profiles live here (repeatable)")
        ->type_name("DIR")
        ->allow_extra_args(false);
    init->add_flag("--stdout", init_flags.to_stdout, "Print the spec instead of writing NAME.yaml");

    ExplainFlags explain_flags;
    CLI::App* explain = app.add_subcommand("explain", "Document a spec field: type, default, allowed values");
    explain->footer(kExplainHelp);
    explain->add_option("path", explain_flags.path, "Dotted field path, e.g. spec.stages.train (default: the whole spec)")
        ->type_name("PATH");
    explain->add_flag("-r,--recursive", explain_flags.recursive, "Show every field below PATH as a tree");
    explain->add_option("--jpath", explain_flags.jpaths, "Extra Jsonnet library root: its profiles' options, "
                                                         "runtimes, components and stages are documented too (repeatable)")
        ->type_name("DIR")
        ->allow_extra_args(false);

    SchemaFlags schema_flags;
    CLI::App* schema = app.add_subcommand("schema", "Print the input JSON Schema (for editors)");
    schema->footer(kSchemaHelp);
    schema->add_option("--jpath", schema_flags.jpaths, "Extra Jsonnet library root: the schema then holds its "
                                                       "profiles' options, runtimes, components and stages (repeatable)")
        ->type_name("DIR")
        ->allow_extra_args(false);

    ProfilesFlags profiles_flags;
    CLI::App* profiles = app.add_subcommand("profiles", "List the cloud profiles: built in and under --jpath");
    profiles->footer(kProfilesHelp);
    profiles->add_option("--jpath", profiles_flags.jpaths, "Extra Jsonnet library root, searched before the "
                                                           "built-in ones; user profiles live here (repeatable)")
        ->type_name("DIR")
        ->allow_extra_args(false);
    profiles->add_flag("--names", profiles_flags.names, "Print the names only, one per line");
    profiles->add_option("-o,--output", profiles_flags.format,
                         "Output format: text, or json (each profile's description, options and starter)")
        ->check(CLI::IsMember({"text", "json"}))
        ->type_name("FORMAT")
        ->capture_default_str();

    MetricsFlags metrics_flags;
    CLI::App* metrics = app.add_subcommand("metrics", "Step time, tokens/s, TFLOPS per GPU and MFU from dllogger.json");
    metrics->footer(kMetricsHelp);
    metrics->add_option("dllogger", metrics_flags.log, "DLLogger log (dllogger.json of rank 0)")
        ->required()
        ->type_name("DLLOGGER_JSON");
    metrics->add_option("--spec", metrics_flags.spec, "The spec the run was built from")
        ->required()
        ->type_name("SPEC");
    metrics->add_option("--target", metrics_flags.target, "The target it ran on (needed when the spec has several)")
        ->type_name("NAME");
    metrics->add_option("--steps", metrics_flags.steps, "Inclusive step window FIRST:LAST (FIRST: = to the end)")
        ->type_name("A:B")
        ->capture_default_str();
    metrics->add_option("--stage", metrics_flags.stage,
                        "The training stage the log is from: train, or pretrain (a training chain's first stage)")
        ->check(CLI::IsMember({"pretrain", "train"}))
        ->capture_default_str();
    metrics->add_flag("--pin", metrics_flags.pin,
                      "Record the measured MFU as the spec's prior for its cost estimate (.nemoc/<spec>.priors.json)");
    metrics->add_option("--set", metrics_flags.sets, "Override a spec value, as for build (repeatable)")
        ->type_name("PATH=VALUE")
        ->allow_extra_args(false);
    metrics->add_option("--jpath", metrics_flags.jpaths, "Extra Jsonnet library root (repeatable)")
        ->type_name("DIR")
        ->allow_extra_args(false);
    metrics_flags.output.Register(metrics);

    CompileFlags check_flags;
    CLI::App* check = app.add_subcommand("check", "Fail when out/ differs from what build makes");
    check->footer(kCheckHelp);
    check_flags.Register(check, /*with_out_dir=*/true);
    check_flags.output.Register(check);
    check->add_option("--expect", check_flags.expect,
                      "A tree under --out no given spec makes, kept on purpose (repeatable; a directory covers its trees)")
        ->type_name("DIR")
        ->allow_extra_args(false);

    CompileFlags diff_flags;
    CLI::App* diff = app.add_subcommand("diff", "Show what build would change, as a unified diff");
    diff->footer(kDiffHelp);
    diff_flags.Register(diff, /*with_out_dir=*/true);
    DiffFlags diff_options;
    diff->add_flag("--stat", diff_options.stat, "Lines added and removed per file instead of the patch (text output only)");
    diff->add_option("-o,--output", diff_options.format,
                     "Output format: text (a unified diff), json (the changes, for scripts), or markdown "
                     "(a summary for a pull-request comment: stages, objects, changed facts)")
        ->check(CLI::IsMember({"text", "json", "markdown"}))
        ->type_name("FORMAT")
        ->capture_default_str();

    CLI::App* version = app.add_subcommand("version", "Print nemoc's version");

    std::string help_topic;
    CLI::App* help = app.add_subcommand("help", "Show the help of nemoc, or of one subcommand");
    help->add_option("command", help_topic, "The subcommand (default: nemoc itself)")->type_name("COMMAND");
    help->footer(
        "Examples:\n"
        "  nemoc help              the subcommands, as nemoc --help\n"
        "  nemoc help build        build's options and examples, as nemoc build --help\n"
        "  nemoc --help-all        every subcommand's options at once\n"
        "  nemoc --version         nemoc's version, as nemoc version\n"
        "A misspelt subcommand (nemoc biuld) is a usage error naming the closest one.");

    // A word where the subcommand belongs that names none: say which one
    // was probably meant, instead of CLI11's complaint about a missing one.
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    auto find = [&](const std::string& name) -> CLI::App* {
      for (CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_name() == name) return sub;
      }
      return nullptr;
    };
    auto unknown = [&](const std::string& word) {
      // Subcommand names are short: two edits (a swapped pair) still say
      // which one was meant, once the word is longer than that.
      const std::string closest = SuggestClosest(word, names, word.size() > 2 ? 2 : 1);
      std::fprintf(stderr, "nemoc: unknown command '%s'%s; 'nemoc --help' lists them\n", word.c_str(),
                   closest.empty() ? "" : (" (did you mean '" + closest + "'?)").c_str());
      return kExitUsage;
    };
    if (argc > 1 && argv[1][0] != '-' && find(argv[1]) == nullptr) return unknown(argv[1]);

    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      app.exit(e);
      return kExitUsage;
    }
    for (const OutputFlag* output : {&build_flags.output, &validate_flags.output, &plan_flags.output,
                                     &check_flags.output, &metrics_flags.output}) {
      if (output->github()) EnableGithubAnnotations();
    }
    if (build->parsed()) return RunBuild(build_flags, commit_flags);
    if (check->parsed()) return RunCheck(check_flags);
    if (diff->parsed()) return RunDiff(diff_flags, diff_options);
    if (validate->parsed()) return RunValidate(validate_flags);
    if (plan->parsed()) return RunPlan(plan_flags);
    if (render->parsed()) return RunRender(render_flags);
    if (init->parsed()) return RunInit(init_flags);
    if (explain->parsed()) return RunExplain(explain_flags);
    if (schema->parsed()) return RunSchema(schema_flags);
    if (profiles->parsed()) return RunProfiles(profiles_flags);
    if (metrics->parsed()) return RunMetrics(metrics_flags);
    if (help->parsed()) {
      if (help_topic.empty()) {
        // app.help() would show the selected subcommand's (help's own) page.
        std::fputs(app.get_formatter()->make_help(&app, "nemoc", CLI::AppFormatMode::Normal).c_str(), stdout);
        return kExitOk;
      }
      const CLI::App* topic = find(help_topic);
      if (topic == nullptr) return unknown(help_topic);
      std::fputs(topic->help("nemoc").c_str(), stdout);
      return kExitOk;
    }
    if (version->parsed()) {
      std::printf("%s\n", VersionText().c_str());
      return kExitOk;
    }
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nemoc: internal error: %s\n", e.what());
    return kExitInternal;
  } catch (...) {
    std::fprintf(stderr, "nemoc: internal error\n");
    return kExitInternal;
  }
}

}  // namespace

// A failed write to standard output (a full disk, `> /dev/full`, an I/O
// error) is an error, not a silently truncated result (field review E27):
// stdio buffers, so the last write's failure shows only at the flush.
namespace {

// std::cerr as libjsonnet writes std.trace to it ("TRACE: file:line msg"):
// a --jpath library's trace reached the terminal raw -- escape sequences such
// as OSC 52 (clipboard writes), credentials -- E23. Each line goes out
// escaped and masked, like every diagnostic.
class SafeErrBuf : public std::streambuf {
 protected:
  int_type overflow(int_type ch) override {
    if (ch == traits_type::eof()) return traits_type::not_eof(ch);
    std::lock_guard<std::mutex> lock(mu_);  // evaluations run on several threads
    line_ += static_cast<char>(ch);
    if (ch == '\n' || line_.size() >= 65536) Flush();
    return ch;
  }
  int sync() override {
    std::lock_guard<std::mutex> lock(mu_);
    Flush();
    return 0;
  }

 private:
  void Flush() {
    if (line_.empty()) return;
    const bool newline = line_.back() == '\n';
    if (newline) line_.pop_back();
    std::string out = nemoc::ForTerminal(nemoc::MaskSecrets(line_));
    if (newline) out += '\n';
    std::fwrite(out.data(), 1, out.size(), stderr);
    line_.clear();
  }
  std::mutex mu_;
  std::string line_;
};

}  // namespace

int main(int argc, char** argv) {
  static SafeErrBuf safe_err;
  std::cerr.rdbuf(&safe_err);
  std::clog.rdbuf(&safe_err);
  const int code = RunMain(argc, argv);
  std::cerr.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int err = errno;
    std::fprintf(stderr, "nemoc: error: cannot write to standard output: %s\n",
                 err != 0 ? std::strerror(err) : "write error");
    return code == nemoc::kExitOk ? nemoc::kExitInternal : code;
  }
  return code;
}
