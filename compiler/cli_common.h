// Shared pieces of the subcommands: flags every compiling command takes,
// diagnostics printing, exit codes.
#ifndef NEMOC_CLI_COMMON_H_
#define NEMOC_CLI_COMMON_H_

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "compiler.h"
#include "diagnostic.h"

namespace nemoc {

enum ExitCode { kExitOk = 0, kExitInvalid = 1, kExitUsage = 2, kExitInternal = 3 };

/// `--output text|json` (build, validate, plan; check can adopt it). JSON goes
/// to stdout as one document: see JsonReport.
struct OutputFlag {
  std::string format = "text";
  void Register(CLI::App* command);
  bool json() const { return format == "json"; }
  bool github() const { return format == "github"; }
};

/// Flags of build/validate (and later check/diff/plan).
struct CompileFlags {
  std::vector<std::string> specs;
  std::vector<std::string> targets;
  std::vector<std::string> sets;
  std::vector<std::string> jpaths;
  std::string out_dir = "out";
  std::string kube_schemas;
  bool quiet = false;
  OutputFlag output;  // registered by the commands that support --output
  std::string dump_entry_dir;  // hidden, for bench/
  std::vector<std::string> expect;  // check --expect: trees under --out no given spec makes, on purpose
  int jobs = 0;  // -j: specs compiled at once; 0 = one per core

  void Register(CLI::App* command, bool with_out_dir);
  CompileOptions ToOptions() const;
};

/// The one JSON shape of every command's machine-readable result:
///   {"command": "build", "ok": true,
///    "diagnostics": [{"severity", "code", "message", "file", "line", "column",
///                     "pointer", "hint"}],
///    "specs": [{"path", "project", "targets": [{"name", "dir", ...}]}]}
/// Fields a diagnostic does not have are omitted; `specs` holds what the
/// command produced per spec (targets carry command-specific fields).
nlohmann::json JsonReport(const std::string& command, const Diagnostics& diags,
                          nlohmann::json specs);
/// Prints JsonReport to stdout and returns the exit code the diagnostics deserve.
/// `clusters` (build): the cluster trees written or removed, under "clusters" when not null.
int PrintJsonReport(const std::string& command, const Diagnostics& diags, nlohmann::json specs,
                    nlohmann::json clusters = nullptr);

/// Colour wanted: only on a terminal, never when NO_COLOR is set (no-color.org).
bool ShouldColor(bool is_terminal, const char* no_color);
/// ShouldColor for stderr.
bool UseColor();
/// True when stderr is a terminal (progress lines go there).
bool StderrIsTerminal();

/// Prints every diagnostic (text with carets) to stderr.
void PrintDiagnostics(const Diagnostics& diags, const SourceTexts& sources);
/// -o github: PrintDiagnostics also writes each diagnostic to stdout as a
/// GitHub Actions annotation (RenderGithub), so a workflow step marks the
/// spec lines in the pull request. Set once, after parsing the command line.
void EnableGithubAnnotations();

/// The exit code a failed run deserves: internal errors are 3, the rest 1.
int ExitCodeFor(const Diagnostics& diags);

/// Builds a Compiler for the flags; false (diagnostics set) when it cannot start.
bool MakeCompiler(const CompileFlags& flags, std::unique_ptr<Compiler>* compiler,
                  Diagnostics* diags);

/// Called before each spec is compiled: (specs started before it, count, path).
using ProgressFn = std::function<void(size_t, size_t, const std::string&)>;

/// Compiles every spec (on `jobs` threads, build_driver.h); all errors of
/// all specs are reported, in the order the specs were given. With
/// `skip_up_to_date`, targets whose stamp matches come back up_to_date.
bool CompileAll(Compiler* compiler, const std::vector<std::string>& specs,
                std::vector<CompiledSpec>* compiled, Diagnostics* diags, int jobs = 1,
                bool skip_up_to_date = false, const ProgressFn& progress = {},
                const std::function<void(CompiledSpec*)>& compiled_hook = {});

/// A progress line on stderr ("[2/7] compiling examples/x.yaml"), redrawn in
/// place; only when stderr is a terminal and there are several specs.
class ProgressLine {
 public:
  ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() { Clear(); }
  void Update(size_t index, size_t count, const std::string& what);
  void Clear();
  ProgressFn Callback();

 private:
  bool enabled_;
  bool shown_ = false;
};

}  // namespace nemoc

#endif  // NEMOC_CLI_COMMON_H_
