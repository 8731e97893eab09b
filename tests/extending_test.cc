// Issue #20's acceptance: a profile and a runtime that exist only under a
// --jpath directory (tests/extending/jpath, the worked example of
// docs/extending.md) build a pipeline, and every member of each contract
// (libsonnet/profile.libsonnet, libsonnet/runtime.libsonnet) has its effect:
// options with their schema, checks, starter, placement, platform needs;
// the runtime's objects, base objects, health, platform components, Kueue
// integration, pod sets, capabilities and pod-name suffix.
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_prerequisite.h"
#include "test_support.h"

namespace nemoc::testing {
namespace {

namespace fs = std::filesystem;

std::string Jpath() { return SourceDir() + "/tests/extending/jpath"; }
std::string Spec() { return SourceDir() + "/tests/extending/my-cloud.yaml"; }

class ExtendingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (KubeSchemasDir().empty()) NEMOC_MISSING_PREREQUISITE("../shared/kube-schemas not found");
  }
  ScratchDir scratch_;
  std::string Out() const { return scratch_.path() + "/out"; }
  // Builds `spec_text` (a variant of the worked example) with the --jpath
  // directory; `extra` are further arguments.
  RunResult Build(const std::string& spec_text, const std::vector<std::string>& extra = {}) const {
    const std::string path = scratch_.Write("my-cloud.yaml", spec_text);
    std::vector<std::string> args = {"build", "--out", Out(), "--jpath", Jpath()};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(path);
    return RunNemoc(args);
  }
  // The one file below `dir` whose name starts with `prefix`.
  static std::string FileStartingWith(const std::string& dir, const std::string& prefix) {
    std::string found;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().filename().string().rfind(prefix, 0) == 0) found = ReadFile(entry.path().string());
    }
    return found;
  }
};

TEST_F(ExtendingTest, AProfileAndARuntimeOnlyUnderJpathUseEveryMemberOfTheirContracts) {
  const std::string spec = ReadFile(Spec());
  RunResult r = Build(spec);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string lab = Out() + "/my-cloud-demo/lab";
  const std::string lab2 = Out() + "/my-cloud-demo/lab2";
  const std::string cluster = Out() + "/_clusters/in-cluster";

  // Profile checks: located at the spec's own line (checks).
  EXPECT_NE(r.err.find("my-cloud.yaml:" + PositionOf(spec, "b\n    - name: lab2") +
                       ": warning: target lab: multi-node training in zone b crosses its two racks over TCP"),
            std::string::npos)
      << r.err;

  // Options: zone b where set, the schema's default a where not.
  const std::string jobset = FileStartingWith(lab + "/30-train", "jobset-");
  const std::string jobset2 = FileStartingWith(lab2 + "/30-train", "jobset-");
  EXPECT_NE(jobset.find("example.com/zone: b"), std::string::npos) << jobset;
  EXPECT_NE(jobset2.find("example.com/zone: a"), std::string::npos) << jobset2;

  // Placement: the taint, the GPU resource, the fabric env, the runtime's pod
  // sets as the profile's placement reads them (placement(ctx, runtime)).
  EXPECT_NE(jobset.find("key: example.com/gpu"), std::string::npos);
  EXPECT_NE(jobset.find("example.com/gpu: 8"), std::string::npos) << jobset;  // gpuResource
  EXPECT_NE(jobset.find("name: NCCL_SOCKET_IFNAME"), std::string::npos);
  EXPECT_NE(jobset.find("example.com/pod-sets: several"), std::string::npos);   // my-runtime
  // The placement's pod labels reach the pods of every runtime (podLabels).
  EXPECT_NE(jobset.find("example.com/workload-identity: \"true\""), std::string::npos) << jobset;
  EXPECT_NE(jobset2.find("example.com/workload-identity: \"true\""), std::string::npos) << jobset2;
  EXPECT_NE(jobset2.find("example.com/pod-sets: one"), std::string::npos);      // the default runtime, jobset
  const std::string account = FileStartingWith(lab + "/00-base", "serviceaccount-");
  EXPECT_NE(account.find("example.com/zone: b"), std::string::npos) << account;  // serviceAccountAnnotations

  // The runtime: its objects (replicated job "rank"), its base objects, its
  // describe; lab2 runs the profile's default runtime.
  EXPECT_NE(jobset.find("- name: rank\n"), std::string::npos) << jobset;
  EXPECT_NE(jobset.find("-rank-0-0."), std::string::npos);  // rendezvous on the rank job's first pod
  EXPECT_NE(jobset2.find("- name: node\n"), std::string::npos);
  const std::string launch = FileStartingWith(lab + "/00-base", "configmap-my-cloud-demo-train-");
  EXPECT_NE(ReadFile(lab + "/00-base/kustomization.yaml").find("-launch.yaml"), std::string::npos);
  const std::string summary = ReadFile(lab + "/SUMMARY.md");
  EXPECT_NE(summary.find("JobSet of replicated job rank, launch settings in a ConfigMap"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("NVIDIA A100 80GB"), std::string::npos) << summary;              // accelerator
  EXPECT_NE(summary.find("TCP sockets on eth0 in zone b"), std::string::npos);            // fabric
  EXPECT_NE(summary.find("GPU nodes labelled example.com/zone=b"), std::string::npos);    // prerequisites

  // Platform needs: the profile's component (the GPU Operator without its
  // driver), the runtime's (JobSet), the profile's objects (a flavor per
  // zone, which need Kueue), and Argo CD judging the runtime's kind.
  EXPECT_TRUE(fs::exists(cluster + "/platform/apps/argocd/application-platform-in-cluster-gpu-operator.yaml"));
  EXPECT_TRUE(fs::exists(cluster + "/platform/apps/argocd/application-platform-in-cluster-jobset.yaml"));
  EXPECT_TRUE(fs::exists(cluster + "/platform/apps/argocd/application-platform-in-cluster-kueue.yaml"));
  EXPECT_TRUE(fs::exists(cluster + "/platform/objects/kueue/resourceflavor-my-cloud-zone-a.yaml"));
  EXPECT_TRUE(fs::exists(cluster + "/platform/objects/kueue/resourceflavor-my-cloud-zone-b.yaml"));
  const std::string operator_app =
      ReadFile(cluster + "/platform/apps/argocd/application-platform-in-cluster-gpu-operator.yaml");
  EXPECT_NE(operator_app.find("driver:\n"), std::string::npos) << operator_app;
  EXPECT_NE(operator_app.find("enabled: false"), std::string::npos) << operator_app;  // shipsGpuDriver
  EXPECT_NE(operator_app.find("defaultRuntime: containerd"), std::string::npos) << operator_app;  // componentValues
  const std::string argocd_cm = ReadFile(cluster + "/platform/argocd/configmap-argocd-cm.yaml");
  EXPECT_NE(argocd_cm.find("resource.customizations.health.jobset.x-k8s.io_JobSet"), std::string::npos);

  // Every root builds with kubectl kustomize (the build itself validated
  // every document against ../shared/kube-schemas).
  if (Shell("command -v kubectl").empty()) NEMOC_MISSING_PREREQUISITE("kubectl not installed");
  for (const std::string& root : {lab, lab2, cluster + "/platform/argocd", lab + "/gitops/argocd"}) {
    int code = -1;
    const std::string out = Shell("kubectl kustomize " + root + " 2>&1", &code);
    EXPECT_EQ(code, 0) << root << ":\n" << out;
  }

  // The same build again: nothing changes (deterministic, up to date).
  RunResult again = Build(spec);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE((again.out + again.err).find("lab: up to date (0 added, 0 changed, 0 removed, 15 unchanged)"),
            std::string::npos)
      << again.out << again.err;
}

TEST_F(ExtendingTest, TheContractsRulesAreLocatedErrors) {
  const std::string spec = ReadFile(Spec());
  const std::string before = TreeFingerprint(Out());
  struct Case {
    const char* name;
    std::string spec;
    std::string expected;
  };
  const std::string bad_zone = Replace(spec, "zone: b", "zone: c");
  const std::string efa = Replace(spec, "zone: b", "zone: b\n      efa: {image: {repository: r, tag: t}, awsOfiNccl: 1.13.2}");
  const std::string host_path = Replace(spec, "nfs: {server: nfs.lab.internal, path: /export/nemo}",
                                        "hostPath: {path: /mnt/nemo}");
  const std::string long_suffix = Replace(spec, "runtime: my-runtime", "runtime: long-suffix");
  const std::string relabel = Replace(spec, "  gitops:\n",
                                      "  scheduling:\n    labels: {example.com/workload-identity: \"false\"}\n  gitops:\n");
  for (const Case& c : std::vector<Case>{
           // options: the profile's schema (enum), every problem in one run
           {"zone", bad_zone, "my-cloud.yaml:" + PositionOf(bad_zone, "c\n") + ": error: spec.targets[0].zone: \"c\" is not one of: a, b"},
           // another profile's option on a my-cloud target
           {"efa", efa, "my-cloud.yaml:" + PositionOf(efa, "efa:") + ": error: spec.targets[0].efa applies to profile eks-efa, not my-cloud"},
           // storageBackends: the shared storage check
           {"storage", host_path, "hostPath"},
           // the runtime's pod-name suffix reaches the output check
           {"suffix", long_suffix, "JobSet my-cloud-demo-train-"},
           // a pod label of the profile's placement is not the spec's to change
           {"pod label", relabel, "my-cloud.yaml:" + PositionOf(relabel, "example.com/workload-identity:") +
                                      ": error: target lab: pod label example.com/workload-identity is set by profile my-cloud"},
       }) {
    RunResult r = Build(c.spec);
    EXPECT_EQ(r.exit_code, 1) << c.name << ":\n" << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << c.name << ":\n" << r.err;
    EXPECT_EQ(TreeFingerprint(Out()), before) << c.name << ": something was written";
  }
  // The suffix is the runtime's: the name would fit 63 on its own.
  RunResult r = Build(long_suffix);
  EXPECT_NE(r.err.find("name is not a valid DNS-1123 label of at most 3 characters"), std::string::npos) << r.err;

  // zone on a built-in profile's target: no profile there reads it.
  const std::string on_vanilla = Replace(Replace(spec, "profile: my-cloud\n      runtime: my-runtime", "profile: vanilla-k8s"),
                                         "    - name: lab2\n      profile: my-cloud\n", "");
  r = Build(on_vanilla);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("my-cloud.yaml:" + PositionOf(on_vanilla, "zone:") + ": error: unknown field 'zone' in spec.targets[0]"),
            std::string::npos)
      << r.err;
}

// Issue #48 item 3: a profile's GPU node is data (profile.libsonnet gpuNode),
// read before any Jsonnet builds objects, so that the checks that need the
// accelerator -- gpusPerNode, the memory fit -- run with the spec's other
// rules: for a target the profile's own checks reject too, in one run. A rule
// naming a GPU nemoc does not know is refused at the profile's file.
TEST_F(ExtendingTest, AProfilesGpuNodeIsDataCheckedBeforeExpansion) {
  ScratchDir jpath;
  const std::string rule =
      "gpuNode:: { option: 'zone', values: { a: { accelerator: 'a100-40gb', gpus: 4, name: 'a zone-a node' },\n"
      "                                      b: { accelerator: 'h100-80gb', gpus: 8 } } },\n";
  jpath.Write("zoned-cloud.libsonnet",
              "(import 'my-cloud.libsonnet') + { name: 'zoned-cloud',\n" + rule +
              "  checks(ctx):: [{ code: 'profile.zone-a', pointer: ctx.targetPointer, message: 'zone a is closed' }\n"
              "                 for z in [ctx.target.zone] if z == 'a'] }\n");
  const std::string spec =
      Replace(Replace(Replace(ReadFile(Spec()), "profile: my-cloud", "profile: zoned-cloud"), "profile: my-cloud",
                      "profile: zoned-cloud"),
              "nodes: 2\n", "nodes: 2\n      gpusPerNode: 8\n");
  const std::string path = scratch_.Write("zoned.yaml", spec);
  const std::string before = TreeFingerprint(Out());
  RunResult r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), "--jpath", Jpath(), path});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // lab2 (zone a by default): 4 GPUs a node, and its profile rejects it.
  EXPECT_NE(r.err.find("zoned.yaml:" + PositionOf(spec, "8\n      parallelism") +
                       ": error: target lab2: gpusPerNode 8 exceeds the 4 GPUs of a zone-a node"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("error: target lab2: zone a is closed"), std::string::npos) << r.err;
  // lab (zone b): H100 nodes of 8 GPUs fit it; no error about it (the TCP warning of my-cloud's fabric aside).
  EXPECT_EQ(r.err.find("error: target lab:"), std::string::npos) << r.err;
  EXPECT_EQ(TreeFingerprint(Out()), before) << "something was written";

  // Zone b for both: it builds, and SUMMARY.md names the node's GPU.
  const std::string zone_b = Replace(spec, "overrides: {namespace: lab2}", "zone: b\n      overrides: {namespace: lab2}");
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), "--jpath", Jpath(), scratch_.Write("zoned.yaml", zone_b)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadFile(Out() + "/my-cloud-demo/lab2/SUMMARY.md").find("H100"), std::string::npos);

  // A GPU nemoc does not know: refused where the rule is, nothing written.
  fs::remove_all(Out());
  jpath.Write("zoned-cloud.libsonnet", "(import 'my-cloud.libsonnet') + { name: 'zoned-cloud',\n" +
                                           Replace(rule, "'a100-40gb'", "'x100-1gb'") + "}\n");
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), "--jpath", Jpath(), path});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(jpath.path() + "/zoned-cloud.libsonnet:2:1: error: profile zoned-cloud: gpuNode names "
                                      "accelerator 'x100-1gb', which libsonnet/accelerators.json does not list"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(Out()));
}

// Issue #48 item 3: the fabric between a profile's nodes is data too
// (profile.libsonnet nodeFabric, compiler/node_fabric.h): multi-node training
// over 'tcp' is nemoc's own warning for every profile, located at each target
// it concerns; a rule of the wrong shape is refused where it is declared.
TEST_F(ExtendingTest, AProfilesNodeFabricIsDataAndTcpWarnsForEveryProfile) {
  ScratchDir jpath;
  auto profile = [&](const std::string& rule) {
    jpath.Write("tcp-cloud.libsonnet",
                "(import 'my-cloud.libsonnet') + { name: 'tcp-cloud',\n  nodeFabric:: " + rule + ",\n}\n");
  };
  const std::string spec = Replace(Replace(ReadFile(Spec()), "profile: my-cloud", "profile: tcp-cloud"),
                                   "profile: my-cloud", "profile: tcp-cloud");
  const std::string path = scratch_.Write("tcp.yaml", spec);
  const std::vector<std::string> build = {"build", "--out", Out(), "--jpath", jpath.path(), "--jpath", Jpath(), path};

  profile("{ fixed: 'tcp' }");
  RunResult r = RunNemoc(build);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string target : {"lab", "lab2"}) {
    EXPECT_NE(r.err.find("tcp.yaml:" + PositionOf(spec, "name: " + target + "\n") +
                         ": warning: target " + target +
                         ": multi-node training (train, up to 2 nodes) without RDMA devices: NCCL will use TCP "
                         "sockets between the nodes"),
              std::string::npos)
        << r.err;
  }
  // An RDMA fabric of the cloud's own name: nothing to say.
  profile("{ fixed: 'roce' }");
  r = RunNemoc(build);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("TCP sockets"), std::string::npos) << r.err;
  // Chosen by whether a target sets a field: lab sets runtime, lab2 does not
  // (its profile's default applies), so only lab2 warns.
  profile("{ option: 'runtime', set: 'roce', unset: 'tcp' }");
  r = RunNemoc(build);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("target lab: multi-node training ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tcp.yaml:" + PositionOf(spec, "name: lab2\n") + ": warning: target lab2: multi-node training"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("hint: request the RDMA devices with the target's runtime (nemoc explain spec.targets.runtime)"),
            std::string::npos)
      << r.err;
  // The schema shows the rule (nemoc schema --jpath).
  r = RunNemoc({"schema", "--jpath", jpath.path(), "--jpath", Jpath()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json schema = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_EQ("tcp", schema["definitions"]["target"]["properties"]["profile"]["x-nemoc-node-fabrics"]["tcp-cloud"]["unset"])
      << r.out.substr(0, 200);

  // A malformed rule: refused at its declaration, nothing written.
  fs::remove_all(Out());
  profile("{ fixed: 'RoCE' }");
  r = RunNemoc(build);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(jpath.path() + "/tcp-cloud.libsonnet:2:3: error: profile tcp-cloud: nodeFabric.fixed 'RoCE' "
                                      "must be lower-case letters, digits and '-', starting with a letter"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(Out()));
}

// `nemoc schema --jpath` and `nemoc explain --jpath`: editors and the terminal
// see what a --jpath directory brings -- its profile's options and GPU node,
// its runtimes, its stages -- as `nemoc build --jpath` checks them; without
// --jpath, the schema as committed, byte for byte.
TEST_F(ExtendingTest, SchemaAndExplainSeeWhatAJpathDirectoryBrings) {
  RunResult r = RunNemoc({"schema"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(SourceDir() + "/schemas/project.schema.json"), r.out);

  r = RunNemoc({"schema", "--jpath", Jpath(), "--jpath", SourceDir() + "/tests/extending/publish"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json schema = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(schema.is_object()) << r.out.substr(0, 200);
  const nlohmann::json& target = schema["definitions"]["target"]["properties"];
  EXPECT_EQ(nlohmann::json::array({"a", "b"}), target["zone"]["enum"]);  // my-cloud's option
  EXPECT_EQ("a100-80gb", target["profile"]["x-nemoc-gpu-nodes"]["my-cloud"]["fixed"]["accelerator"]);
  const nlohmann::json& runtimes = target["runtime"]["enum"];
  EXPECT_NE(std::find(runtimes.begin(), runtimes.end(), "my-runtime"), runtimes.end()) << runtimes;
  EXPECT_TRUE(schema["definitions"]["stages"]["properties"].contains("publish"));

  r = RunNemoc({"explain", "--jpath", Jpath(), "spec.targets.zone"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("The zone of the GPU nodes (my-cloud): a or b."), std::string::npos) << r.out;
  r = RunNemoc({"explain", "--jpath", SourceDir() + "/tests/extending/publish", "spec.stages.publish"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("huggingface_hub"), std::string::npos) << r.out;
  // Without the directory the field is unknown, with the fields there are.
  r = RunNemoc({"explain", "spec.targets.zone"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no field 'zone' in spec.targets"), std::string::npos) << r.err;
}

// Issue #48: a platform component is one file (libsonnet/component.libsonnet),
// and one of your own is components/<name>.libsonnet under --jpath
// (tests/extending/jpath/components/my-scheduler.libsonnet, which my-runtime's
// kind needs). The unchanged binary installs it with both engines, after the
// component it needs, with its release's values; a cluster that already runs
// it names it in clusterHas; a --jpath file replaces a built-in component (and
// the build says so); a component lacking a member is refused, naming it.
TEST_F(ExtendingTest, APlatformComponentOfYourOwnIsOneFileUnderJpath) {
  const std::string spec = ReadFile(Spec());
  const std::string cluster = Out() + "/_clusters/in-cluster";
  RunResult r = Build(spec);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string app = ReadFile(cluster + "/platform/apps/argocd/application-platform-in-cluster-my-scheduler.yaml");
  EXPECT_NE(app.find("argocd.argoproj.io/sync-wave: \"1\""), std::string::npos) << app;  // after JobSet (wave 0)
  EXPECT_NE(app.find("repoURL: https://github.com/example/my-scheduler.git"), std::string::npos) << app;
  EXPECT_NE(app.find("targetRevision: v0.3.0"), std::string::npos) << app;
  EXPECT_NE(app.find("path: charts/my-scheduler"), std::string::npos) << app;
  EXPECT_NE(app.find("valuesObject:\n        image:\n          tag: v0.3.0"), std::string::npos) << app;  // release pins
  EXPECT_NE(app.find("namespace: my-scheduler-system"), std::string::npos) << app;
  const std::string summary = ReadFile(Out() + "/my-cloud-demo/lab/SUMMARY.md");
  EXPECT_NE(summary.find("| my-scheduler v0.3.0 (Helm chart from git example/my-scheduler@v0.3.0:charts/my-scheduler "
                         "with the values of its release, oci://ghcr.io/example/charts/my-scheduler:0.3.0) | "
                         "`example.com/gang` |"),
            std::string::npos)
      << summary;

  // Flux: its GitRepository at the tag, its HelmRelease, after JobSet.
  RunResult flux = Build(Replace(spec, "engines: [argocd]", "engines: [flux]"));
  ASSERT_EQ(flux.exit_code, 0) << flux.err;
  const std::string source = ReadFile(cluster + "/platform/flux/gitrepository-platform-my-scheduler.yaml");
  EXPECT_NE(source.find("tag: v0.3.0"), std::string::npos) << source;
  EXPECT_NE(source.find("url: https://github.com/example/my-scheduler.git"), std::string::npos) << source;
  const std::string wrapper = ReadFile(cluster + "/platform/flux/kustomization-platform-my-scheduler.yaml");
  EXPECT_NE(wrapper.find("dependsOn:\n  - name: platform-jobset\n"), std::string::npos) << wrapper;
  EXPECT_TRUE(fs::exists(cluster + "/platform/flux/components/my-scheduler/helmrelease-platform-my-scheduler.yaml"));

  // Already on the cluster: named in clusterHas (the input schema takes the
  // name of a --jpath component), nothing installed for it.
  const std::string has = Replace(Replace(spec, "      zone: b\n", "      zone: b\n      clusterHas: {my-scheduler: v0.3.1}\n"),
                                  "      overrides: {namespace: lab2}", "      overrides: {namespace: lab2}\n      clusterHas: {my-scheduler: v0.3.1}");
  r = Build(has);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(cluster + "/platform/apps/argocd/application-platform-in-cluster-my-scheduler.yaml"));
  EXPECT_NE(ReadFile(Out() + "/my-cloud-demo/lab/SUMMARY.md").find("my-scheduler v0.3.1 (already on the cluster"),
            std::string::npos);
  // A name no library root has is still unknown.
  r = Build(Replace(Replace(has, "my-scheduler: v0.3.1", "their-scheduler: v1.0.0"), "my-scheduler: v0.3.1",
                    "their-scheduler: v1.0.0"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("their-scheduler"), std::string::npos) << r.err;
  // ... and a misspelt built-in one is located, with the name meant (it used
  // to be accepted, and nemoc installed the component the cluster runs).
  const std::string typo = Replace(Replace(has, "my-scheduler: v0.3.1", "kueu: v0.19.2"), "my-scheduler: v0.3.1",
                                   "kueu: v0.19.2");
  r = Build(typo);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("my-cloud.yaml:" + PositionOf(typo, "kueu:") +
                       ": error: unknown name 'kueu' in spec.targets[0].clusterHas"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("did you mean 'kueue'?"), std::string::npos) << r.err;

  // A --jpath file replaces the built-in component of its name.
  ScratchDir jpath;
  for (const auto& [rel, text] : ReadAll(Jpath())) jpath.Write(rel, text);
  jpath.Write("components/jobset.libsonnet",
              "(import 'nemoc/components/jobset.libsonnet') + { tag: 'v0.12.1', version: 'v0.12.1' }\n");
  const std::string path = scratch_.Write("my-cloud.yaml", spec);
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("components/jobset.libsonnet replaces nemoc's built-in"), std::string::npos) << r.err;
  EXPECT_NE(ReadFile(cluster + "/platform/apps/argocd/application-platform-in-cluster-jobset.yaml").find("targetRevision: v0.12.1"),
            std::string::npos);

  // What a component declares about itself (component.libsonnet): nemoc's
  // values for its chart reach the HelmRelease/Application, and its minimum
  // version refuses an older install the cluster declares, located there.
  jpath.Write("components/my-scheduler.libsonnet",
              "(import 'my-scheduler-base.libsonnet') + { values(ctx):: { gang: { timeoutSeconds: 600 } },\n"
              "  minimumVersion:: { version: 'v0.4.0', why: 'the gang API nemoc writes is v0.4.0\\'s' } }\n");
  jpath.Write("my-scheduler-base.libsonnet", ReadFile(Jpath() + "/components/my-scheduler.libsonnet"));
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string own_values = ReadFile(cluster + "/platform/apps/argocd/application-platform-in-cluster-my-scheduler.yaml");
  EXPECT_NE(own_values.find("timeoutSeconds: 600"), std::string::npos) << own_values;
  const std::string older = scratch_.Write("my-cloud.yaml", has);
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), older});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("my-cloud.yaml:" + PositionOf(has, "v0.3.1") +
                       ": error: target lab: the cluster runs my-scheduler v0.3.1, older than v0.4.0: the gang API"),
            std::string::npos)
      << r.err;
  scratch_.Write("my-cloud.yaml", spec);

  // Needed by an API group (the JobSets my-runtime writes) or an object label
  // (groups, labels: how Kueue is found; platform.libsonnet names no
  // component), and its note where the cluster already runs it (existingNote).
  const std::string named = "repo: 'https://github.com/example/x.git', tag: 'v1.0.0', version: 'v1.0.0', path: 'chart', "
                            "kind: 'helm', namespace: 'x-system', release:: { release: 'x', pins: {} } }\n";
  jpath.Write("components/job-auditor.libsonnet",
              "(import 'nemoc/component.libsonnet') + { name: 'job-auditor', groups:: ['jobset.x-k8s.io'], " + named);
  jpath.Write("components/target-labeller.libsonnet",
              "(import 'nemoc/component.libsonnet') + { name: 'target-labeller', labels:: ['nemoc.dev/target'], "
              "existingNote(ctx):: '; it must label namespace ' + ctx.spec.namespace, " + named);
  jpath.Write("components/unused.libsonnet",
              "(import 'nemoc/component.libsonnet') + { name: 'unused', groups:: ['example.com'], labels:: ['example.com/x'], " +
                  named);
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(cluster + "/platform/apps/argocd/application-platform-in-cluster-job-auditor.yaml"));
  EXPECT_TRUE(fs::exists(cluster + "/platform/apps/argocd/application-platform-in-cluster-target-labeller.yaml"));
  EXPECT_FALSE(fs::exists(cluster + "/platform/apps/argocd/application-platform-in-cluster-unused.yaml"));
  const std::string labelled = Replace(Replace(spec, "      zone: b\n", "      zone: b\n      clusterHas: {target-labeller: v1.0.0}\n"),
                                       "      overrides: {namespace: lab2}", "      overrides: {namespace: lab2}\n      clusterHas: {target-labeller: v1.0.0}");
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), scratch_.Write("my-cloud.yaml", labelled)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(cluster + "/platform/apps/argocd/application-platform-in-cluster-target-labeller.yaml"));
  const std::string noted = ReadFile(Out() + "/my-cloud-demo/lab/SUMMARY.md");
  EXPECT_NE(noted.find("target-labeller v1.0.0 (already on the cluster, "), std::string::npos) << noted;
  EXPECT_NE(noted.find("; it must label namespace "), std::string::npos) << noted;
  for (const char* file : {"components/job-auditor.libsonnet", "components/target-labeller.libsonnet", "components/unused.libsonnet"}) {
    fs::remove(jpath.path() + "/" + file);
  }
  scratch_.Write("my-cloud.yaml", spec);

  // A component lacking a member: refused, each missing member named.
  const std::string before = TreeFingerprint(Out());
  jpath.Write("components/my-scheduler.libsonnet",
              "(import 'nemoc/component.libsonnet') + { name: 'my-scheduler', tag: 'v1', version: 'v1', kind: 'helm', "
              "namespace: 'x' }\n");
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("component my-scheduler lacks path: the chart or kustomization directory at that tag; "
                       "repo: the Git repository it is installed from"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(TreeFingerprint(Out()), before);
}

// Issue #48's acceptance: a fourth cloud and a runtime of your own under
// --jpath (tests/extending/azure), committed after the nemoc change they
// need and built with that binary unchanged: AKS ND H100 v5 with its own
// `ib` and `identity` options (Workload Identity's pod label and service
// account annotation), a Volcano Job runtime whose health is code (a phase,
// not conditions), Volcano as a platform component, and the Volcano Job's
// schema from the directory's kube-schemas/. gitops.replay runs both engines
// over the same tree (cluster.py V1): each stage waits on the Volcano Job.
TEST_F(ExtendingTest, AnAksProfileAndAVolcanoRuntimeOfYourOwnBuildWithTheUnchangedBinary) {
  const std::string azure = SourceDir() + "/tests/extending/azure";
  const std::string spec = ReadFile(SourceDir() + "/tests/extending/aks-volcano.yaml");
  const std::string path = scratch_.Write("aks-volcano.yaml", spec);
  RunResult r = RunNemoc({"build", "--out", Out(), "--jpath", azure, path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string aks = Out() + "/aks-volcano/aks";
  const std::string cluster = Out() + "/_clusters/in-cluster";

  // The workload: a gang-scheduled Volcano Job whose pods carry the identity
  // label, the InfiniBand devices and the node pool's taint.
  const std::string job = FileStartingWith(aks + "/30-train", "job-aks-volcano-train-");
  for (const char* expected : {"apiVersion: batch.volcano.sh/v1alpha1", "schedulerName: volcano", "minAvailable: 2",
                               "- name: worker\n    replicas: 2", "azure.workload.identity/use: \"true\"",
                               "rdma/shared_ib: 1", "- IPC_LOCK", "key: sku", "value: gpu",
                               "fieldPath: metadata.annotations['volcano.sh/task-index']",
                               "node.kubernetes.io/instance-type: Standard_ND96isr_H100_v5"}) {
    EXPECT_NE(job.find(expected), std::string::npos) << expected << " not in\n" << job;
  }
  EXPECT_NE(job.find("-worker-0.aks-volcano-train-"), std::string::npos) << job;  // rendezvous on worker 0
  // Single-node stages carry the label too (localPlacement), not the devices.
  const std::string prep = FileStartingWith(aks + "/20-data-prep", "job-");
  EXPECT_NE(prep.find("azure.workload.identity/use: \"true\""), std::string::npos) << prep;
  EXPECT_EQ(prep.find("rdma/shared_ib"), std::string::npos) << prep;
  EXPECT_NE(ReadFile(aks + "/00-base/serviceaccount-aks-volcano-workload.yaml")
                .find("azure.workload.identity/client-id: 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"),
            std::string::npos);

  // The platform: GPU Operator with GPUDirect RDMA, the Network Operator and
  // its NicClusterPolicy for rdma/shared_ib, Volcano (both engines), and the
  // engines judging the Volcano Job by its phase.
  for (const char* app : {"gpu-operator", "network-operator", "volcano"}) {
    EXPECT_TRUE(fs::exists(cluster + "/platform/apps/argocd/application-platform-in-cluster-" + app + ".yaml")) << app;
  }
  EXPECT_TRUE(fs::exists(cluster + "/platform/flux/components/volcano/helmrelease-platform-volcano.yaml"));
  const std::string nic = FileStartingWith(cluster + "/platform/objects/network-operator", "nicclusterpolicy-");
  EXPECT_NE(nic.find("\\\"resourceName\\\": \\\"shared_ib\\\""), std::string::npos) << nic;
  const std::string argocd_cm = ReadFile(cluster + "/platform/argocd/configmap-argocd-cm.yaml");
  EXPECT_NE(argocd_cm.find("resource.customizations.health.batch.volcano.sh_Job: |\n"), std::string::npos);
  EXPECT_NE(argocd_cm.find("obj.status.state.phase"), std::string::npos);
  bool cel = false;
  for (const auto& entry : fs::directory_iterator(aks + "/gitops/flux")) {
    const std::string text = ReadFile(entry.path().string());
    cel = cel || text.find("status.state.phase in ['Failed', 'Aborted', 'Terminated']") != std::string::npos;
  }
  EXPECT_TRUE(cel) << "the Flux Kustomization of 30-train judges the Volcano Job by its phase";
  // Nothing suspends a Volcano Job: Argo CD ignores no field of it.
  for (const auto& entry : fs::directory_iterator(aks + "/gitops/argocd")) {
    EXPECT_EQ(ReadFile(entry.path().string()).find("group: batch.volcano.sh"), std::string::npos) << entry.path();
  }
  const std::string summary = ReadFile(aks + "/SUMMARY.md");
  EXPECT_NE(summary.find("Volcano Job (batch.volcano.sh/v1alpha1), gang-scheduled"), std::string::npos) << summary;
  EXPECT_NE(summary.find("volcano v1.15.1 (Helm chart from git volcano-sh/volcano@v1.15.1"), std::string::npos) << summary;
  EXPECT_NE(summary.find("InfiniBand (NDR): 1 × rdma/shared_ib"), std::string::npos) << summary;

  if (Shell("command -v kubectl").empty()) NEMOC_MISSING_PREREQUISITE("kubectl not installed");
  for (const std::string& root : {aks, cluster + "/platform/argocd", cluster + "/platform/flux", aks + "/gitops/flux"}) {
    int code = -1;
    const std::string out = Shell("kubectl kustomize " + root + " 2>&1", &code);
    EXPECT_EQ(code, 0) << root << ":\n" << out;
  }

  // The profile's options have its own schemas; the Volcano Job its CRD's.
  const std::string before = TreeFingerprint(Out());
  const std::string many = Replace(spec, "ib: {devices: 1}", "ib: {devices: 9}");
  r = RunNemoc({"build", "--out", Out(), "--jpath", azure, scratch_.Write("many.yaml", many)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("many.yaml:" + PositionOf(many, "9}") + ": error: spec.targets[0].ib.devices"), std::string::npos) << r.err;
  const std::string bad_id = Replace(spec, "clientId: 0f1e2d3c", "clientId: nope-0f1e2d3c");
  r = RunNemoc({"build", "--out", Out(), "--jpath", azure, scratch_.Write("bad-id.yaml", bad_id)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("spec.targets[0].identity.clientId"), std::string::npos) << r.err;
  // Without ib, two nodes train over TCP: nemoc's own warning from the
  // profile's nodeFabric, at the target, naming its option.
  const std::string no_ib = Replace(spec, "      ib: {devices: 1}\n", "");
  r = RunNemoc({"build", "--out", scratch_.path() + "/no-ib", "--jpath", azure, scratch_.Write("no-ib.yaml", no_ib)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("no-ib.yaml:" + PositionOf(no_ib, "name: aks\n") + ": warning: target aks: multi-node training "
                       "(train, up to 2 nodes) without RDMA devices: NCCL will use TCP sockets between the nodes"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("hint: request the RDMA devices with the target's ib (nemoc explain spec.targets.ib)"),
            std::string::npos)
      << r.err;
  ScratchDir jpath;
  for (const auto& [rel, text] : ReadAll(azure)) jpath.Write(rel, text);
  const std::string runtime = ReadFile(azure + "/runtimes/volcano-job.libsonnet");
  jpath.Write("runtimes/volcano-job.libsonnet", Replace(runtime, "maxRetry: w.restarts", "maxRetries: w.restarts"));
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("maxRetries"), std::string::npos) << r.err;
  EXPECT_EQ(TreeFingerprint(Out()), before);
}

// Issue #48, a stage as data: 55-publish is one description and one library
// under --jpath (tests/extending/publish/stages, docs/stages.md), built with
// the binary unchanged. Its number places it between 50-convert and
// 60-tensorrt-llm for kustomize, Argo CD's waves and Flux's dependsOn; its
// schema joins spec.stages; its `needs` is a located error; its state is
// content-addressed like every built-in stage's; it changes nothing for a
// spec that does not name it.
TEST_F(ExtendingTest, AStageOfYourOwnIsADescriptionAndALibraryUnderJpath) {
  const std::string jpath = SourceDir() + "/tests/extending/publish";
  const std::string spec = ReadFile(SourceDir() + "/tests/extending/publish.yaml");
  const std::string path = scratch_.Write("publish.yaml", spec);
  RunResult r = RunNemoc({"build", "--out", Out(), "--jpath", jpath, path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  const std::string onprem = Out() + "/llama31-8b/onprem";
  const std::string job = FileStartingWith(onprem + "/55-publish", "job-llama31-8b-publish-");
  const std::string hf = "/results/llama31-8b/onprem/huggingface/";
  for (const std::string& expected :
       {std::string("argocd.argoproj.io/sync-wave: \"55\""), "- huggingface-cli\n        - upload\n        - acme/llama31-8b-web\n        - " + hf,
        std::string("- --private\n"), std::string("name: HF_TOKEN\n          valueFrom:\n            secretKeyRef:\n              key: token\n              name: hf-publish-token"),
        std::string("image: nvcr.io/nvidia/nemo:25.02"), std::string("/results/llama31-8b/onprem/publish/")}) {
    EXPECT_NE(job.find(expected), std::string::npos) << expected << " not in\n" << job;
  }
  // In order for both engines: after 50-convert, before 60-tensorrt-llm.
  const std::string pipeline = ReadFile(onprem + "/gitops/argocd/pipeline/kustomization.yaml");
  EXPECT_NE(pipeline.find("- ../../../50-convert\n- ../../../55-publish\n- ../../../60-tensorrt-llm\n"), std::string::npos)
      << pipeline;
  const std::string flux = FileStartingWith(onprem + "/gitops/flux", "kustomization-llama31-8b-onprem-publish-");
  EXPECT_NE(flux.find("dependsOn:\n  - name: llama31-8b-onprem-convert-"), std::string::npos) << flux;
  EXPECT_NE(flux.find("kind: Job"), std::string::npos) << flux;  // the engine waits on the Job itself
  EXPECT_NE(FileStartingWith(onprem + "/gitops/flux", "kustomization-llama31-8b-onprem-tensorrt-llm-")
                .find("dependsOn:\n  - name: llama31-8b-onprem-publish-"),
            std::string::npos);
  const std::string summary = ReadFile(onprem + "/SUMMARY.md");
  EXPECT_NE(summary.find("| `55-publish` | " + hf), std::string::npos) << summary;
  EXPECT_NE(summary.find("-> https://huggingface.co/acme/llama31-8b-web (private) |"), std::string::npos) << summary;
  EXPECT_NE(summary.find("| `55-publish` | `/results/llama31-8b/onprem/publish/"), std::string::npos) << summary;

  // Content-addressed (F15): a new checkpoint is a new upload Job and record;
  // the same one keeps both.
  const std::string job_name = job.substr(job.find("name: ") + 6, job.find('\n', job.find("name: ")) - job.find("name: ") - 6);
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath, scratch_.Write("publish.yaml", Replace(spec, "maxSteps: 5000", "maxSteps: 6000"))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string retrained = FileStartingWith(onprem + "/55-publish", "job-llama31-8b-publish-");
  EXPECT_EQ(retrained.find("name: " + job_name + "\n"), std::string::npos) << retrained;
  EXPECT_EQ(retrained.find(job.substr(job.find(hf), hf.size() + 12)), std::string::npos);  // another checkpoint

  // It changes nothing for a spec that does not name it: the example builds
  // to its committed tree with the stage's directory on the path.
  ScratchDir plain;
  r = RunNemoc({"build", "--quiet", "--out", plain.path(), "--jpath", jpath,
                scratch_.Write("llama31-8b-pipeline.yaml", ReadFile(SourceDir() + "/examples/llama31-8b-pipeline.yaml"))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadAll(plain.path() + "/llama31-8b/onprem"), ReadAll(SourceDir() + "/out/llama31-8b/onprem"));

  // Without the directory the key is unknown; without a convert stage its
  // `needs` says what is missing; a public upload is a located warning.
  const std::string before = TreeFingerprint(Out());
  r = RunNemoc({"build", "--out", Out(), scratch_.Write("publish.yaml", spec)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("publish.yaml:" + PositionOf(spec, "publish:") + ": error: unknown field 'publish' in spec.stages"),
            std::string::npos)
      << r.err;
  const std::string no_convert = Replace(spec, "    convert:\n      to: huggingface\n", "");
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath, scratch_.Write("publish.yaml", no_convert)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("publish.yaml:" + PositionOf(no_convert, "publish:") +
                       ": error: spec.stages.publish has no HuggingFace checkpoint to upload: add a convert stage\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(TreeFingerprint(Out()), before);
  const std::string public_upload = Replace(spec, "tokenSecret: hf-publish-token\n", "tokenSecret: hf-publish-token\n      private: false\n");
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath, scratch_.Write("publish.yaml", public_upload)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("publish.yaml:" + PositionOf(public_upload, "false\n") +
                       ": warning: target onprem: spec.stages.publish.private is false: if the upload creates "
                       "huggingface.co/acme/llama31-8b-web, the weights of llama31-8b are public"),
            std::string::npos)
      << r.err;

  // A description its contract refuses: located in the description, nothing written.
  ScratchDir broken;
  for (const auto& [rel, text] : ReadAll(jpath)) broken.Write(rel, text);
  const std::string described = Replace(ReadFile(jpath + "/stages/publish.stage.json"), "\"dir\": \"55-publish\"",
                                        "\"dir\": \"50-publish\"");
  broken.Write("stages/publish.stage.json", described);
  const std::string settled = TreeFingerprint(Out());
  r = RunNemoc({"build", "--out", Out(), "--jpath", broken.path(), scratch_.Write("publish.yaml", spec)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("publish.stage.json:" + PositionOf(described, "\"50-publish\"") +
                       ": error: stages convert (50-convert) and publish (50-publish) share the number 50"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(TreeFingerprint(Out()), settled);
  // A library lacking what its description implies: named, nothing written.
  broken.Write("stages/publish.stage.json", ReadFile(jpath + "/stages/publish.stage.json"));
  broken.Write("stages/publish.libsonnet",
               Replace(ReadFile(jpath + "/stages/publish.libsonnet"), "\n  summary(ctx)::", "\n  summry(ctx)::"));
  r = RunNemoc({"build", "--out", Out(), "--jpath", broken.path(), scratch_.Write("publish.yaml", spec)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("stage publish: its library stages/publish.libsonnet lacks summary(ctx)"), std::string::npos)
      << r.err;
  EXPECT_EQ(TreeFingerprint(Out()), settled);
}

// Issue #48 item 2: a GitOps engine of your own is two files of a --jpath
// directory's engines/ -- its library (libsonnet/engine.libsonnet) and its
// description (schemas/contracts/engine.schema.json), the schema of its
// settings included -- built with the unchanged binary: tests/extending/fleet
// (Rancher Fleet, a GitRepo per target, and its kind's schema).
TEST_F(ExtendingTest, AGitOpsEngineOfYourOwnIsTwoFilesUnderJpath) {
  const std::string jpath = SourceDir() + "/tests/extending/fleet";
  const std::string lora = ReadFile(SourceDir() + "/examples/llama2-7b-lora-eks.yaml");
  const std::string spec = Replace(Replace(lora, "    engines: [flux]\n", "    engines: [fleet]\n    platform: false\n"),
                                   "    flux: {secretRef: ml-infra-deploy-key}\n",
                                   "    fleet: {clientSecretName: ml-infra-deploy-key}\n");
  ASSERT_NE(spec, lora);
  RunResult r = RunNemoc({"build", "--out", Out(), "--jpath", jpath, scratch_.Write("fleet.yaml", spec)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  const std::string eks = Out() + "/llama2-7b-lora/eks";
  // Its objects, validated with the kind's schema the directory brings; no other engine's.
  const std::string repo = FileStartingWith(eks + "/gitops/fleet", "gitrepo-llama2-7b-lora-eks-");
  for (const std::string& expected :
       {std::string("apiVersion: fleet.cattle.io/v1alpha1\nkind: GitRepo\n"), std::string("namespace: fleet-local\n"),
        std::string("clientSecretName: ml-infra-deploy-key\n"), std::string("pollingInterval: 15s\n"),
        std::string("paths:\n  - out/llama2-7b-lora/eks/00-base\n  - out/llama2-7b-lora/eks/30-train\n")}) {
    EXPECT_NE(repo.find(expected), std::string::npos) << expected << " not in\n" << repo;
  }
  EXPECT_FALSE(fs::exists(eks + "/gitops/flux"));
  EXPECT_FALSE(fs::exists(eks + "/gitops/argocd"));
  // Its kept-kind annotation on the claims holding data (F13), its notes in SUMMARY.md.
  EXPECT_NE(FileStartingWith(eks + "/00-base", "persistentvolumeclaim-").find("helm.sh/resource-policy: keep"),
            std::string::npos);
  const std::string summary = ReadFile(eks + "/SUMMARY.md");
  for (const std::string& expected :
       {std::string("| GitOps | fleet from `ssh://git@github.com/acme/ml-infra.git @ main"),
        std::string("`kubectl apply --server-side -k out/llama2-7b-lora/eks/gitops/fleet` (the GitRepo;"),
        std::string("| Edit while a stage runs | Fleet: the stage's bundle is upgraded at the next poll"),
        std::string("Fleet: `kubectl delete gitrepo llama2-7b-lora-eks-")}) {
    EXPECT_NE(summary.find(expected), std::string::npos) << expected << " not in\n" << summary;
  }

  // Its settings are the spec's schema: nemoc schema and explain show them, a
  // bad value is a located error; without the directory the name is unknown.
  r = RunNemoc({"schema", "--jpath", jpath});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json schema = nlohmann::json::parse(r.out);
  const nlohmann::json& gitops = schema["definitions"]["gitops"]["properties"];
  EXPECT_EQ(gitops["engines"]["items"]["enum"], (nlohmann::json{"argocd", "flux", "fleet"}));
  EXPECT_EQ(gitops["engines"]["maxItems"], 3);
  EXPECT_EQ(gitops["fleet"]["properties"]["pollingInterval"]["default"], "15s");
  r = RunNemoc({"explain", "--jpath", jpath, "spec.gitops.fleet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pollingInterval"), std::string::npos) << r.out;
  const std::string before = TreeFingerprint(Out());
  const std::string bad = Replace(spec, "{clientSecretName: ml-infra-deploy-key}", "{clientSecretName: ml-infra-deploy-key, interval: 1m}");
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath, scratch_.Write("fleet.yaml", bad)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("fleet.yaml:" + PositionOf(bad, "interval: 1m") + ": error: unknown field 'interval' in spec.gitops.fleet"),
            std::string::npos)
      << r.err;
  r = RunNemoc({"build", "--out", Out(), scratch_.Write("fleet.yaml", spec)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("fleet.yaml:" + PositionOf(spec, "fleet]")), std::string::npos) << r.err;
  EXPECT_EQ(TreeFingerprint(Out()), before);

  // Its own rules (diagnostics(ctx)), located: an engine without a part in the
  // platform bundle cannot be asked for one, and Fleet warns that it does not
  // order a pipeline's stages.
  const std::string bundled = Replace(spec, "    platform: false\n", "");
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath, scratch_.Write("fleet.yaml", bundled)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("error: target eks: spec.gitops.platform: no engine the spec names applies the cluster's "
                       "platform bundle (Fleet has no part in it)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(TreeFingerprint(Out()), before);
  const std::string staged = Replace(spec, "      timeout: 12h\n", "      timeout: 12h\n    ncclTest: {}\n");
  ASSERT_NE(staged, spec);
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath, scratch_.Write("fleet.yaml", staged)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("fleet.yaml:" + PositionOf(staged, "[fleet]") + ": warning: target eks: Fleet deploys each of "
                       "the 2 stages as a bundle of its own, all at once"),
            std::string::npos)
      << r.err;
  // Beside a built-in engine that applies the bundle, the cluster's SUMMARY.md
  // names who applies it.
  const std::string both = Replace(Replace(bundled, "[fleet]", "[fleet, flux]"), "    fleet: {", "    flux: {secretRef: ml-infra-deploy-key}\n    fleet: {");
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath, scratch_.Write("fleet.yaml", both)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadFile(Out() + "/_clusters/ml-eks-p4d/SUMMARY.md").find("| API server | the one Flux runs in |"),
            std::string::npos);

  // A description without its library, a library without its description:
  // each refused by name, nothing written.
  ScratchDir broken;
  broken.Write("engines/fleet.json", ReadFile(jpath + "/engines/fleet.json"));
  broken.Write("engines/gitea.libsonnet", "(import 'nemoc/engine.libsonnet') + { name:: 'gitea' }\n");
  const std::string settled = TreeFingerprint(Out());
  r = RunNemoc({"build", "--out", Out(), "--jpath", broken.path(), scratch_.Write("fleet.yaml", spec)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("error: engine gitea: " + broken.path() + "/engines/gitea.libsonnet has no description beside it"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("error: engine fleet: its library fleet.libsonnet is not beside"), std::string::npos) << r.err;
  // A description its contract refuses: located in it.
  ScratchDir refused;
  for (const auto& [rel, text] : ReadAll(jpath)) refused.Write(rel, text);
  const std::string untitled = Replace(ReadFile(jpath + "/engines/fleet.json"), "\"title\": \"Fleet\",\n", "");
  refused.Write("engines/fleet.json", untitled);
  r = RunNemoc({"build", "--out", Out(), "--jpath", refused.path(), scratch_.Write("fleet.yaml", spec)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("fleet.json:1:1: error:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("title"), std::string::npos) << r.err;
  EXPECT_EQ(TreeFingerprint(Out()), settled);
}

TEST_F(ExtendingTest, AMissingMemberIsNamedAtTheFileThatLacksIt) {
  ScratchDir jpath;
  jpath.Write("half-cloud.libsonnet",
              "local profile = import 'profile.libsonnet';\n"
              "profile + { name: 'half-cloud', description:: 'x', defaults: { runtime: 'jobset' }, storageBackends: ['nfs'] }\n");
  jpath.Write("runtimes/half-runtime.libsonnet",
              "(import 'runtime.libsonnet') + { name: 'half-runtime', describe:: 'x' }\n");
  const std::string spec = ReadFile(Spec());
  const std::string path = scratch_.Write("half.yaml", Replace(spec, "profile: my-cloud\n      runtime: my-runtime\n      zone: b",
                                                               "profile: half-cloud"));
  RunResult r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), "--jpath", Jpath(), path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(jpath.path() + "/half-cloud.libsonnet:1:1: error: profile half-cloud lacks gpuNode:: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("localPlacement(ctx)::"), std::string::npos);
  EXPECT_NE(r.err.find("placement(ctx, runtime)::"), std::string::npos);
  EXPECT_FALSE(fs::exists(Out()));

  const std::string runtime_spec = scratch_.Write("half-runtime.yaml", Replace(spec, "runtime: my-runtime", "runtime: half-runtime"));
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), "--jpath", Jpath(), runtime_spec});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("runtime half-runtime lacks objects(ctx, w):: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("workload:: "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Out()));
}

// A profile of your own may run a runtime of your own by default: a target
// without a runtime brings it into the evaluation (JsonnetExpander::
// AddProfiles asks the profile's description). A default no library root
// has is a located error at the profile's file, before any expansion.
TEST_F(ExtendingTest, AJpathProfileMayRunAJpathRuntimeByDefault) {
  ScratchDir jpath;
  for (const auto& [rel, text] : ReadAll(Jpath())) jpath.Write(rel, text);
  const std::string profile = ReadFile(Jpath() + "/my-cloud.libsonnet");
  ASSERT_NE(profile.find("defaults: { runtime: 'jobset' }"), std::string::npos);
  jpath.Write("my-cloud.libsonnet", Replace(profile, "defaults: { runtime: 'jobset' }", "defaults: { runtime: 'my-runtime' }"));
  const std::string spec = Replace(ReadFile(Spec()), "      runtime: my-runtime\n", "");
  ASSERT_EQ(spec.find("runtime:"), std::string::npos) << spec;
  const std::string path = scratch_.Write("my-cloud.yaml", spec);
  RunResult r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string target : {"lab", "lab2"}) {
    const std::string jobset = FileStartingWith(Out() + "/my-cloud-demo/" + target + "/30-train", "jobset-");
    EXPECT_NE(jobset.find("- name: rank\n"), std::string::npos) << target << ":\n" << jobset;  // my-runtime's
    EXPECT_NE(jobset.find("example.com/pod-sets: several"), std::string::npos) << target;
  }

  jpath.Write("my-cloud.libsonnet", Replace(profile, "defaults: { runtime: 'jobset' }", "defaults: { runtime: 'my-runtme' }"));
  fs::remove_all(Out());
  r = RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(jpath.path() + "/my-cloud.libsonnet: error: profile my-cloud: defaults.runtime \"my-runtme\" is "
                       "neither a built-in runtime nor runtimes/<name>.libsonnet of a --jpath directory"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(Out()));
}

// #48: a --jpath directory brings the schemas of the kinds it emits (a
// Volcano Job, a CRD of its own) in kube-schemas/, the layout of the shipped
// bundle; nemoc validates those objects as it does Kubernetes' own, refuses a
// bundle that would replace one of Kubernetes' kinds, and without the bundle
// the kind is unknown.
TEST_F(ExtendingTest, AJpathDirectoryBringsTheSchemasOfItsKinds) {
  ScratchDir jpath;
  for (const auto& [rel, text] : ReadAll(Jpath())) jpath.Write(rel, text);
  const std::string profile = ReadFile(Jpath() + "/my-cloud.libsonnet");
  const std::string objects = "  platformObjects(ctx):: [{";
  ASSERT_NE(profile.find(objects), std::string::npos);
  auto with_widget = [&](const std::string& size) {
    return Replace(profile, objects,
                   "  platformObjects(ctx):: [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', "
                   "labels: { 'app.kubernetes.io/managed-by': 'nemoc', 'app.kubernetes.io/part-of': 'nemoc-platform' } }, "
                   "spec: { size: " + size + " } }, {");
  };
  jpath.Write("my-cloud.libsonnet", with_widget("3"));
  const std::string path = scratch_.Write("my-cloud.yaml", ReadFile(Spec()));
  auto build = [&]() { return RunNemoc({"build", "--out", Out(), "--jpath", jpath.path(), path}); };

  // No bundle: the kind is unknown.
  RunResult r = build();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no schema for apiVersion \"example.com/v1\", kind \"Widget\""), std::string::npos) << r.err;

  jpath.Write("kube-schemas/index.json",
              R"({"schemas": [{"apiVersion": "example.com/v1", "kind": "Widget", "file": "widget-example-v1.json", "scope": "Cluster"}]})");
  jpath.Write("kube-schemas/widget-example-v1.json",
              R"({"type": "object", "additionalProperties": false, "required": ["apiVersion", "kind", "metadata", "spec"],
                  "properties": {"apiVersion": {"type": "string", "enum": ["example.com/v1"]},
                                 "kind": {"type": "string", "enum": ["Widget"]}, "metadata": {"type": "object"},
                                 "spec": {"type": "object", "additionalProperties": false, "required": ["size"],
                                          "properties": {"size": {"type": "integer", "minimum": 1}}}}})");
  r = build();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool found = false;
  for (const auto& entry : fs::recursive_directory_iterator(Out() + "/_clusters")) {
    if (entry.path().filename() == "widget-w.yaml") found = ReadFile(entry.path().string()).find("size: 3") != std::string::npos;
  }
  EXPECT_TRUE(found) << "widget-w.yaml with size: 3 in the cluster bundle";

  // Validated against the --jpath schema: nothing is written.
  const std::string before = TreeFingerprint(Out());
  jpath.Write("my-cloud.libsonnet", with_widget("'big'"));
  r = build();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Widget w: spec.size"), std::string::npos) << r.err;
  EXPECT_EQ(TreeFingerprint(Out()), before);

  // A kind no bundle has: the message names every bundle looked in.
  jpath.Write("my-cloud.libsonnet", Replace(with_widget("3"), "kind: 'Widget'", "kind: 'Gadget'"));
  r = build();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no schema for apiVersion \"example.com/v1\", kind \"Gadget\" in the kube-schemas bundle "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("/kube-schemas\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" nor in "), std::string::npos) << r.err;
  EXPECT_EQ(TreeFingerprint(Out()), before);

  // A bundle may add kinds, not replace Kubernetes' own.
  jpath.Write("my-cloud.libsonnet", with_widget("3"));
  jpath.Write("kube-schemas/index.json",
              R"({"schemas": [{"apiVersion": "v1", "kind": "ConfigMap", "file": "widget-example-v1.json", "scope": "Namespaced"}]})");
  r = build();
  EXPECT_EQ(r.exit_code, 2);  // as every other unusable --jpath directory
  EXPECT_NE(r.err.find("kube-schemas/index.json: schemas[0]: the bundle "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" already has v1 ConfigMap"), std::string::npos) << r.err;
  EXPECT_EQ(TreeFingerprint(Out()), before);
}

TEST_F(ExtendingTest, InitAndProfilesKnowTheProfileOfYourOwn) {
  RunResult listed = RunNemoc({"profiles", "--jpath", Jpath()});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("my-cloud (" + Jpath() + "/my-cloud.libsonnet)\n"
                            "  A cloud of GPU nodes in two zones (zone), NFS storage and a Kueue flavor per zone.\n"
                            "  runtime jobset by default; target options: zone; nemoc init: a starter\n"),
            std::string::npos)
      << listed.out;
  RunResult names = RunNemoc({"profiles", "--names", "--jpath", Jpath()});
  std::set<std::string> expected = {"my-cloud"};  // and the built-in profiles/*.libsonnet, sorted
  for (const auto& entry : fs::directory_iterator(SourceDir() + "/profiles")) {
    if (entry.path().extension() == ".libsonnet") expected.insert(entry.path().stem().string());
  }
  std::string joined;
  for (const auto& name : expected) joined += name + "\n";
  EXPECT_EQ(names.out, joined);

  // The starter builds as is, with the same --jpath.
  RunResult init = RunNemoc({"init", "--jpath", Jpath(), "--profile", "my-cloud", "lab"}, scratch_.path());
  ASSERT_EQ(init.exit_code, 0) << init.err;
  const std::string starter = ReadFile(scratch_.path() + "/lab.yaml");
  EXPECT_NE(starter.find("      profile: my-cloud\n      zone: b"), std::string::npos) << starter;
  EXPECT_NE(starter.find("NVIDIA A100 80GB"), std::string::npos) << starter;
  RunResult built = RunNemoc({"build", "--quiet", "--jpath", Jpath(), "lab.yaml"}, scratch_.path());
  EXPECT_EQ(built.exit_code, 0) << built.err << "\n" << starter;
  EXPECT_TRUE(fs::exists(scratch_.path() + "/out/lab/lab/SUMMARY.md"));
}

}  // namespace
}  // namespace nemoc::testing
