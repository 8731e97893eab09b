// One function and one help text per subcommand (GN style); main.cc wires
// them to CLI11.
#ifndef NEMOC_COMMANDS_H_
#define NEMOC_COMMANDS_H_

#include "cli_common.h"

namespace nemoc {

extern const char kBuildHelp[];
int RunBuild(const CompileFlags& flags);

extern const char kValidateHelp[];
int RunValidate(const CompileFlags& flags);

}  // namespace nemoc

#endif  // NEMOC_COMMANDS_H_
