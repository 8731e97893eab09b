// nemoc init: write a commented starter spec that builds as is.
#include "commands.h"


#include <cstdio>
#include <filesystem>

#include "data_dir.h"
#include "diagnostic.h"
#include "disk_interface.h"
#include "profiles.h"
#include "secret_scanner.h"
#include "starter.h"

namespace nemoc {

const char kInitHelp[] =
    "Write a commented starter spec NAME.yaml (default my-training.yaml) that builds as is:\n"
    "a catalog model pretrained on mock data on one target of the chosen profile, with\n"
    "nodes, tensor and pipeline parallelism sized so the memory estimate fits the GPUs.\n"
    "An existing file is never overwritten. The first line points editors at the schema.\n"
    "The starter is the profile's own (its starter member; nemoc profiles lists them,\n"
    "--jpath adds yours). One node needs no inter-node fabric (its lines come commented\n"
    "out). A starter that admits through the cluster's Kueue ClusterQueue needs its name:\n"
    "--cluster-queue (kubectl get clusterqueues; Cluster Toolkit clusters have used\n"
    "a4-high and a4).\n"
    "Examples:\n"
    "  nemoc init --profile gke-a4 --cluster-queue a4-high --model llama3.1-70b llama70b\n"
    "  nemoc init --stdout | less";

namespace {

// The schema editors read, as a file of the repository the spec is committed
// to: the modeline survives a clone (a path to where nemoc is installed does
// not), and the schema matches the nemoc the team builds with.
constexpr char kSchemaCopy[] = ".nemoc/project.schema.json";

// Writes (or refreshes) <spec dir>/.nemoc/project.schema.json; "" when it
// already held the schema, else what happened. *made lists what it created
// (the file, then its directory when new), for an undo.
bool WriteSchemaCopy(const DataDir& data, const std::string& spec_path, std::string* what,
                     std::vector<std::string>* made, std::string* err) {
  namespace fs = std::filesystem;
  RealDisk disk;
  std::string schema;
  if (!disk.ReadFile(data.schema(), &schema, err)) return false;
  const fs::path copy = fs::path(spec_path).parent_path() / kSchemaCopy;
  std::string existing;
  std::string ignored;
  const bool present = disk.ReadFile(copy.string(), &existing, &ignored);
  if (present && existing == schema) {
    what->clear();
    return true;
  }
  *what = (present ? "refreshed " : "wrote ") + copy.string();
  std::error_code ec;
  const bool dir_existed = fs::is_directory(copy.parent_path(), ec);
  if (!dir_existed && !fs::create_directory(copy.parent_path(), ec)) {
    *err = "cannot create " + copy.parent_path().string() + ": " + ec.message();
    return false;
  }
  if (!dir_existed) made->push_back(copy.parent_path().string());
  if (!disk.WriteFile(copy.string(), schema, err)) return false;
  if (!present) made->insert(made->begin(), copy.string());
  return true;
}

}  // namespace

int RunInit(const InitFlags& flags) {
  DataDir data;
  std::string err;
  if (!FindDataDir(&data, &err)) {
    std::fprintf(stderr, "nemoc: error: %s\n", ForTerminal(MaskSecrets(err)).c_str());
    return kExitInternal;
  }
  ModelCatalog catalog;
  AcceleratorTable accelerators;
  if (!ModelCatalog::Load(data.models(), &catalog, &err) ||
      !AcceleratorTable::Load(data.accelerators(), &accelerators, &err)) {
    std::fprintf(stderr, "nemoc: error: %s\n", ForTerminal(MaskSecrets(err)).c_str());
    return kExitInternal;
  }
  Diagnostics diags;
  const std::vector<ProfileInfo> profiles = ListProfiles(data, flags.jpaths, &diags);
  if (!diags.items().empty()) {
    const std::string text = RenderText(diags, {});
    std::fwrite(text.data(), 1, text.size(), stderr);
    return kExitInvalid;
  }
  const ProfileInfo* profile = ChooseStarterProfile(profiles, flags.profile, &err);
  if (profile == nullptr) {
    std::fprintf(stderr, "nemoc: error: %s\n", ForTerminal(MaskSecrets(err)).c_str());
    return kExitUsage;
  }
  StarterOptions options;
  options.name = flags.name;
  options.profile = profile->name;
  options.model = flags.model;
  options.cluster_queue = flags.cluster_queue;
  const std::string path = flags.name + ".yaml";
  options.schema_ref = kSchemaCopy;
  std::string yaml;
  if (!StarterSpec(options, profile->description["starter"], catalog, accelerators, &yaml, &err)) {
    std::fprintf(stderr, "nemoc: error: %s\n", ForTerminal(MaskSecrets(err)).c_str());
    return kExitUsage;
  }
  if (flags.to_stdout) {
    std::fwrite(yaml.data(), 1, yaml.size(), stdout);
    return kExitOk;
  }
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
    std::fprintf(stderr, "nemoc: error: %s already exists; nemoc init never overwrites a file\n",
                 path.c_str());
    return kExitInvalid;
  }
  // The schema copy first, then the spec: a failure leaves neither new file
  // (E27: a failed schema copy left NAME.yaml behind, so the next init
  // refused to overwrite it).
  std::string schema_note;
  std::vector<std::string> made;
  auto undo = [&] {
    for (const std::string& m : made) {
      std::error_code ignored;
      std::filesystem::remove(m, ignored);  // a directory only when empty
    }
  };
  if (!WriteSchemaCopy(data, path, &schema_note, &made, &err)) {
    undo();
    std::fprintf(stderr, "nemoc: error: %s\n", ForTerminal(MaskSecrets(err)).c_str());
    return kExitInvalid;
  }
  RealDisk disk;
  if (!disk.WriteFile(path, yaml, &err)) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    undo();
    std::fprintf(stderr, "nemoc: error: cannot write %s: %s\n", ForTerminal(MaskSecrets(path)).c_str(), ForTerminal(MaskSecrets(err)).c_str());
    return kExitInvalid;
  }
  std::printf("wrote %s: `nemoc plan %s` shows what it runs, `nemoc build %s` writes it out\n",
              path.c_str(), path.c_str(), path.c_str());
  if (!schema_note.empty()) {
    std::printf("%s: the schema the spec's modeline names, for editors; commit it with the spec\n",
                schema_note.c_str());
  }
  return kExitOk;
}

}  // namespace nemoc
