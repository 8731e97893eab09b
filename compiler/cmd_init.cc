// nemoc init: write a commented starter spec that builds as is.
#include "commands.h"

#include <cstdio>
#include <filesystem>

#include "data_dir.h"
#include "disk_interface.h"
#include "starter.h"

namespace nemoc {

const char kInitHelp[] =
    "Write a commented starter spec NAME.yaml (default my-training.yaml) that builds as is:\n"
    "a catalog model pretrained on mock data on one target of the chosen profile, with\n"
    "nodes, tensor and pipeline parallelism sized so the memory estimate fits the GPUs.\n"
    "An existing file is never overwritten. The first line points editors at the schema.\n"
    "One node on vanilla-k8s needs no RDMA (the rdma line comes commented out). gke-a4\n"
    "admits through the cluster's Kueue ClusterQueue: name it with --cluster-queue\n"
    "(kubectl get clusterqueues; Cluster Toolkit clusters have used a4-high and a4).\n"
    "Examples:\n"
    "  nemoc init --profile gke-a4 --cluster-queue a4-high --model llama3.1-70b llama70b\n"
    "  nemoc init --stdout | less";

namespace {

// The $schema of the modeline: the data directory's schema, relative to the
// directory the spec is written to (absolute when they share no root).
std::string SchemaRef(const DataDir& data, const std::string& spec_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::absolute(fs::path(spec_path), ec).parent_path();
  const fs::path schema = fs::weakly_canonical(data.schema(), ec);
  fs::path relative = schema.lexically_relative(fs::weakly_canonical(dir, ec));
  return relative.empty() ? schema.string() : relative.string();
}

}  // namespace

int RunInit(const InitFlags& flags) {
  DataDir data;
  std::string err;
  if (!FindDataDir(&data, &err)) {
    std::fprintf(stderr, "nemoc: error: %s\n", ForTerminal(err).c_str());
    return kExitInternal;
  }
  ModelCatalog catalog;
  AcceleratorTable accelerators;
  if (!ModelCatalog::Load(data.models(), &catalog, &err) ||
      !AcceleratorTable::Load(data.accelerators(), &accelerators, &err)) {
    std::fprintf(stderr, "nemoc: error: %s\n", ForTerminal(err).c_str());
    return kExitInternal;
  }
  StarterOptions options;
  options.name = flags.name;
  options.profile = flags.profile;
  options.model = flags.model;
  options.cluster_queue = flags.cluster_queue;
  const std::string path = flags.name + ".yaml";
  options.schema_ref = SchemaRef(data, path);
  std::string yaml;
  if (!StarterSpec(options, catalog, accelerators, &yaml, &err)) {
    std::fprintf(stderr, "nemoc: error: %s\n", ForTerminal(err).c_str());
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
  RealDisk disk;
  if (!disk.WriteFile(path, yaml, &err)) {
    std::fprintf(stderr, "nemoc: error: cannot write %s: %s\n", ForTerminal(path).c_str(), ForTerminal(err).c_str());
    return kExitInvalid;
  }
  std::printf("wrote %s: `nemoc plan %s` shows what it runs, `nemoc build %s` writes it out\n",
              path.c_str(), path.c_str(), path.c_str());
  return kExitOk;
}

}  // namespace nemoc
