// One function and one help text per subcommand (GN style); main.cc wires
// them to CLI11.
#ifndef NEMOC_COMMANDS_H_
#define NEMOC_COMMANDS_H_

#include "cli_common.h"

namespace nemoc {

/// build --commit and its options (git_commit.h).
struct CommitFlags {
  bool commit = false;
  std::string repo;
  std::string branch;
  std::string author_name;
  std::string author_email;

  void Register(CLI::App* command);
};

extern const char kBuildHelp[];
int RunBuild(const CompileFlags& flags, const CommitFlags& commit = {});

extern const char kCheckHelp[];
int RunCheck(const CompileFlags& flags);

extern const char kDiffHelp[];
int RunDiff(const CompileFlags& flags);

extern const char kValidateHelp[];
int RunValidate(const CompileFlags& flags);

}  // namespace nemoc

#endif  // NEMOC_COMMANDS_H_
