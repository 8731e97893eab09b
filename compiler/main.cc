// nemoc: compiles one NeMo pipeline spec into reviewable Kubernetes manifests.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "data_dir.h"

int main(int argc, char** argv) {
  using namespace nemoc;
  try {
    CLI::App app{"nemoc: compiles a NeMo LLM pipeline spec into Kubernetes manifests, one "
                 "reviewable tree per target cluster.\n",
                 "nemoc"};
    app.require_subcommand(1);
    app.set_help_all_flag("--help-all", "Help for every subcommand");
    app.footer("Exit codes: 0 ok, 1 invalid input (or drift for check), 2 usage error, 3 internal error.");

    CompileFlags build_flags;
    CLI::App* build = app.add_subcommand("build", "Compile specs into out/<project>/<target>/");
    build->footer(kBuildHelp);
    build_flags.Register(build, /*with_out_dir=*/true);
    CommitFlags commit_flags;
    commit_flags.Register(build);

    CompileFlags validate_flags;
    CLI::App* validate = app.add_subcommand("validate", "Check specs; write nothing");
    validate->footer(kValidateHelp);
    validate_flags.Register(validate, /*with_out_dir=*/false);

    CompileFlags check_flags;
    CLI::App* check = app.add_subcommand("check", "Fail when out/ differs from what build makes");
    check->footer(kCheckHelp);
    check_flags.Register(check, /*with_out_dir=*/true);

    CompileFlags diff_flags;
    CLI::App* diff = app.add_subcommand("diff", "Show what build would change, as a unified diff");
    diff->footer(kDiffHelp);
    diff_flags.Register(diff, /*with_out_dir=*/true);

    CLI::App* version = app.add_subcommand("version", "Print nemoc's version");

    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      app.exit(e);
      return kExitUsage;
    }
    if (build->parsed()) return RunBuild(build_flags, commit_flags);
    if (check->parsed()) return RunCheck(check_flags);
    if (diff->parsed()) return RunDiff(diff_flags);
    if (validate->parsed()) return RunValidate(validate_flags);
    if (version->parsed()) {
      std::printf("nemoc %s\n", NemocVersion());
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
