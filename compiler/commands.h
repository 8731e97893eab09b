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
  bool no_verify = false;

  void Register(CLI::App* command);
};

extern const char kBuildHelp[];
int RunBuild(const CompileFlags& flags, const CommitFlags& commit = {});

extern const char kCheckHelp[];
int RunCheck(const CompileFlags& flags);

struct DiffFlags {
  bool stat = false;             // --stat: lines per file, no patch
  std::string format = "text";   // -o text|json|markdown
};
extern const char kDiffHelp[];
int RunDiff(const CompileFlags& flags, const DiffFlags& diff = {});

extern const char kValidateHelp[];
int RunValidate(const CompileFlags& flags);

extern const char kPlanHelp[];
int RunPlan(const CompileFlags& flags);

extern const char kRenderHelp[];
int RunRender(const CompileFlags& flags);

struct InitFlags {
  std::string name = "my-training";
  std::string profile;  // "" = the profile whose starter is the default
  std::string model = "llama3.1-8b";
  std::string cluster_queue;
  std::vector<std::string> jpaths;  // profiles of your own
  bool to_stdout = false;
};
extern const char kInitHelp[];
int RunInit(const InitFlags& flags);

struct ExplainFlags {
  std::string path;
  bool recursive = false;
  std::vector<std::string> jpaths;  // --jpath: the schema with their profiles, runtimes, stages
};
extern const char kExplainHelp[];
int RunExplain(const ExplainFlags& flags);

extern const char kSchemaHelp[];
struct SchemaFlags {
  std::vector<std::string> jpaths;  // --jpath: the schema with their profiles, runtimes, stages
};
int RunSchema(const SchemaFlags& flags);
/// The input schema of this nemoc, composed with what `jpaths` bring
/// (Compiler::ComposedInputSchema); the built-in one without.
bool ReadComposedSchema(const std::vector<std::string>& jpaths, nlohmann::json* schema, Diagnostics* diags);

struct ProfilesFlags {
  std::vector<std::string> jpaths;
  bool names = false;           // --names: one name per line (completion scripts)
  std::string format = "text";  // -o text|json
};
extern const char kProfilesHelp[];
int RunProfiles(const ProfilesFlags& flags);

struct MetricsFlags {
  std::string log;
  std::string spec;
  std::string target;
  std::string steps = "10:30";
  std::string stage = "train";  // the training stage the log is from (pretrain: a chain's first)
  bool pin = false;  // record the measured MFU as the spec's prior (cost.h)
  std::vector<std::string> sets;
  std::vector<std::string> jpaths;
  OutputFlag output;
};
extern const char kMetricsHelp[];
int RunMetrics(const MetricsFlags& flags);

}  // namespace nemoc

#endif  // NEMOC_COMMANDS_H_
