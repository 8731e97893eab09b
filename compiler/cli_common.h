// Shared pieces of the subcommands: flags every compiling command takes,
// diagnostics printing, exit codes.
#ifndef NEMOC_CLI_COMMON_H_
#define NEMOC_CLI_COMMON_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "compiler.h"
#include "diagnostic.h"

namespace nemoc {

enum ExitCode { kExitOk = 0, kExitInvalid = 1, kExitUsage = 2, kExitInternal = 3 };

/// Flags of build/validate (and later check/diff/plan).
struct CompileFlags {
  std::vector<std::string> specs;
  std::vector<std::string> targets;
  std::vector<std::string> sets;
  std::vector<std::string> jpaths;
  std::string out_dir = "out";
  std::string kube_schemas;
  bool quiet = false;
  std::string dump_entry_dir;  // hidden, for bench/
  int jobs = 0;  // -j: specs compiled at once; 0 = one per core

  void Register(CLI::App* command, bool with_out_dir);
  CompileOptions ToOptions() const;
};

/// True when stderr is a terminal and NO_COLOR is unset.
bool UseColor();

/// Prints every diagnostic (text with carets) to stderr.
void PrintDiagnostics(const Diagnostics& diags, const SourceTexts& sources);

/// The exit code a failed run deserves: internal errors are 3, the rest 1.
int ExitCodeFor(const Diagnostics& diags);

/// Builds a Compiler for the flags; false (diagnostics set) when it cannot start.
bool MakeCompiler(const CompileFlags& flags, std::unique_ptr<Compiler>* compiler,
                  Diagnostics* diags);

/// Compiles every spec (on `jobs` threads, build_driver.h); all errors of
/// all specs are reported, in the order the specs were given. With
/// `skip_up_to_date`, targets whose stamp matches come back up_to_date.
bool CompileAll(Compiler* compiler, const std::vector<std::string>& specs,
                std::vector<CompiledSpec>* compiled, Diagnostics* diags, int jobs = 1,
                bool skip_up_to_date = false);

}  // namespace nemoc

#endif  // NEMOC_CLI_COMMON_H_
