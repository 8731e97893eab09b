#!/usr/bin/python3
"""A replay of both GitOps engines over nemoc's trees (issue #40, build item 1).

Usage:
  replay_test.py SOURCE_DIR                      the test (ctest gitops.replay)
  replay_test.py SOURCE_DIR --transcript NAME [--example DIR] [--engine argocd|flux]
                                                 prints one scenario's transcript (default: the
                                                 d2b6ef1 llama31-8b fixture, or the fixture the
                                                 scenario needs; both engines)
  replay_test.py SOURCE_DIR --list               the scenarios

The test has three parts:
  1. unit cases: the model against upstream's own tests at the modelled tags (argo-cd v3.5.1
     controller/health_test.go, gitops-engine sync_context_test.go, appcontroller_test.go;
     kustomize-controller v1.9.4 kustomization_dependson_test.go, kustomization_wait_test.go,
     api/v1 GetTimeout); they must pass;
  2. fixture scenarios: the trees of main at d2b6ef1 (fixtures/d2b6ef1) and one generated
     TrainJob + Kueue tree (fixtures/generated, see fixtures/README.md); every defect of
     EXPECTED_ON_FIXTURES must be flagged by its named scenario there;
  3. current trees: every scenario over every out/<project>/<target> that has a GitOps tree; the
     set of flagged (defect, example, engine) must equal KNOWN_DEFECTS: a new flag fails, and so
     does a listed one that is no longer flagged (remove it from the list when a fix lands).

Exit 77 when a prerequisite is missing (python3-yaml, lua5.1, node, tests/gitops/node_modules
from scripts/gitops-test-deps); under CI=true that is exit 1 (tests/lib/nemoc_specs.py missing).
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "lib"))
from nemoc_specs import missing, require_yaml  # noqa: E402

FIXTURES = os.path.join(HERE, "fixtures")
LLAMA = "d2b6ef1/llama31-8b/onprem"
SFT = "d2b6ef1/llama2-70b-sft/onprem"
TRAINJOB = "generated/gpt-tp2-kueue/lab"

# Part 2: each defect, flagged by the scenario named after it, on these fixtures and engines.
EXPECTED_ON_FIXTURES = {
    "C14": [(LLAMA, "argocd"), (SFT, "argocd")],
    "C15": [(LLAMA, "argocd")],
    "C18": [(LLAMA, "flux")],
    "C19": [(LLAMA, "flux")],
    "C24": [(LLAMA, "argocd")],
    "C25": [(LLAMA, "argocd")],
    "B21": [(TRAINJOB, "argocd")],
    "F14": [(LLAMA, "argocd")],
    "C23": [(LLAMA, "argocd")],
    "C21": [(LLAMA, "flux")],
    # the fixture's edit under Argo CD: SUMMARY.md names no prune, the old and the new training
    # run at once in the one log directory the fixture's trees have (no state hash)
    "C17": [(LLAMA, "argocd")],
    # the fixture's Flux bundle applies the NicClusterPolicy with the Namespaces, before the
    # Network Operator's HelmRelease installed its CRD (no dependsOn can name a HelmRelease)
    "B25": [(LLAMA, "flux")],
}
# a defect whose fixture scenario is another one's (C21-rename-namespace needs a rebuilt tree:
# the committed out/ trees only)
SCENARIO_OF = {"C21": "C23-remove-target", "C17": "C24-edit-while-training", "B25": "F14-bootstrap-order"}

# Part 3: what the replay flags on the committed out/ trees today, as (defect, example, engine).
# A fix in the generator removes entries; the test fails until the list says so.
KNOWN_DEFECTS = set()  # C17 fixed by the state hash (issue #41, F15): F15-edit-lr-while-training, F16-new-data


def prerequisites():
    require_yaml()
    if shutil.which("lua5.1") is None:
        missing("lua5.1")
    if shutil.which("node") is None:
        missing("node")
    if not os.path.isdir(os.path.join(HERE, "..", "node_modules", "@bufbuild", "cel")):
        missing("@bufbuild/cel (run scripts/gitops-test-deps)")


# ---- part 1: unit cases ------------------------------------------------------------------------
class FakeTree:
    """A source with fixed objects per path (what upstream tests build by hand)."""

    def __init__(self, by_path, bundle=None):
        self.by_path, self.bundle, self.root = by_path, bundle or {"cluster": "c", "files": {}}, "/fake"

    def build(self, path):
        return list(self.by_path.get(path, []))

    def resolve(self, path):
        return path

    def missing(self, path):
        return path not in self.by_path

    def bundle_source(self, path):
        return None


def obj(kind, name, api="v1", ns="ns", wave=None, **extra):
    o = {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": ns}}
    if wave is not None:
        o["metadata"]["annotations"] = {"argocd.argoproj.io/sync-wave": str(wave)}
    o.update(extra)
    return o


def unit_cases():
    import argocd
    import flux
    from cluster import Cluster
    from tree import key_of

    class UnitCluster(Cluster):
        """Upstream's unit cases test one engine rule each: their namespaces exist (K6 is not theirs)."""

        def create_or_update(self, target, who, merge="client-side"):
            ns = (target.get("metadata") or {}).get("namespace")
            if ns and ("", "Namespace", "", ns) not in self.live:
                self.live[("", "Namespace", "", ns)] = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns},
                                                       "_drift": set(), "_applied": {}}
            return super().create_or_update(target, who, merge)

    results = []

    def case(name, got, want):
        results.append((name, got == want, got, want))

    # A1: GE pkg/health/health.go IsWorse
    case("GE health.go IsWorse(Healthy, Degraded)", argocd.is_worse("Healthy", "Degraded"), True)
    case("GE health.go IsWorse(Degraded, Progressing)", argocd.is_worse("Degraded", "Progressing"), False)
    case("GE health.go IsWorse(Progressing, Missing)", argocd.is_worse("Progressing", "Missing"), True)

    # A4: AR controller/health_test.go
    def app_health(resources, lua):
        ctl = argocd.ArgoCD(UnitCluster(lambda s: None), lambda s: None, None, lua)
        app = argocd.App({"metadata": {"name": "my-app"}, "spec": {"source": {"path": "p", "repoURL": "r"},
                                                                    "destination": {}}})
        app.resources = resources
        return ctl.app_health(app)

    healthy_pod = 'hs = {}\nhs.status = "Healthy"\nreturn hs'
    lua = {("", "Pod"): healthy_pod}
    job_lua = None
    for p in (os.path.join(FIXTURES, LLAMA),):
        from tree import Tree
        job_lua = Tree(p).health_lua()[("batch", "Job")]
    lua_job = {**lua, ("batch", "Job"): job_lua}
    pod = obj("Pod", "pod")
    pod2 = obj("Pod", "pod2")
    failed_job = obj("Job", "job", api="batch/v1", status={"conditions": [{"type": "Failed", "status": "True"}]})
    case("AR health_test.go TestSetApplicationHealth (running pod + failed job -> Degraded)",
         app_health([(key_of(pod), pod, pod), (key_of(failed_job), failed_job, failed_job)], lua_job), "Degraded")
    ignored_job = obj("Job", "job", api="batch/v1", status={"conditions": [{"type": "Failed", "status": "True"}]})
    ignored_job["metadata"]["annotations"] = {"argocd.argoproj.io/ignore-healthcheck": "true"}
    case("AR health_test.go:82-86 TestSetApplicationHealth (failed job with ignore-healthcheck -> Healthy)",
         app_health([(key_of(pod), pod, pod), (key_of(ignored_job), ignored_job, ignored_job)], lua_job), "Healthy")
    case("AR health_test.go TestSetApplicationHealth_NoResource -> Healthy", app_health([], lua), "Healthy")
    case("AR health_test.go TestSetApplicationHealth_MissingResource -> Healthy",
         app_health([(key_of(pod), pod, None), (key_of(pod2), pod2, pod2)], lua), "Healthy")
    case("AR health_test.go TestSetApplicationHealth_AllMissingResources -> Missing",
         app_health([(key_of(pod), pod, None), (key_of(pod2), pod2, None)], lua), "Missing")
    child = obj("Application", "foo", api="argoproj.io/v1alpha1", ns="argocd",
                status={"health": {"status": "Unknown"}})
    app_lua = Tree(os.path.join(FIXTURES, LLAMA)).health_lua()[("argoproj.io", "Application")]
    case("AR health_test.go TestSetApplicationHealth_MissingResource_WithChildApp -> Healthy",
         app_health([(key_of(child), child, child), (key_of(pod), pod, None)],
                    {**lua, ("argoproj.io", "Application"): app_lua}), "Healthy")
    for new in ("Degraded", "Progressing", "Suspended", "Healthy"):
        case(f"AR health_test.go TestSetApplicationHealth_HealthImproves (-> {new})",
             app_health([(key_of(pod), pod, pod)], {("", "Pod"): f'hs = {{}}\nhs.status = "{new}"\nreturn hs'}), new)

    # A6: GE sync_context_test.go TestWaveReorderingOfPruneTasks differentWave_mixedTasks
    ns, p1, p2, p3, p4 = (obj("Namespace", "ns", ns="", wave=0), obj("Pod", "pod-1", wave=1), obj("Pod", "pod-2", wave=2),
                          obj("Pod", "pod-3", wave=3), obj("Pod", "pod-4", wave=4))
    cl = UnitCluster(lambda s: None)
    ctl = argocd.ArgoCD(cl, lambda s: None, None, {})
    ctl.tree = FakeTree({"app": [ns, p2]})
    app = argocd.App({"metadata": {"name": "a"}, "spec": {"source": {"path": "app", "repoURL": "r"}, "destination": {}}})
    for o in (ns, p1, p3, p4):
        cl.create_or_update(o, "a")
        cl.live[key_of(o)]["_owner"] = "a"
    op = argocd.Operation("r1", None, True, False)
    waves = {t.key[3]: t.wave_ for t in ctl.tasks(app, op)}
    case("GE sync_context_test.go TestWaveReorderingOfPruneTasks differentWave_mixedTasks",
         waves, {"ns": 0, "pod-1": 4, "pod-2": 2, "pod-3": 3, "pod-4": 1})

    # A17: AR appcontroller_test.go Test_syncDeleteOption, through the resources finalizer
    def deletion(annotations):
        cl = UnitCluster(lambda s: None)
        ctl = argocd.ArgoCD(cl, lambda s: None, None, {})
        a = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
             "metadata": {"name": "a", "namespace": "argocd", "finalizers": ["resources-finalizer.argocd.argoproj.io"]},
             "spec": {"source": {"path": "app", "repoURL": "r"}, "destination": {}}}
        cm = obj("ConfigMap", "cm", metadata={"name": "cm", "namespace": "ns", "annotations": annotations})
        for o in (a, cm):
            cl.create_or_update(o, "t")
        cl.live[key_of(cm)]["_owner"] = "a"
        ctl.discover()
        ctl.delete_app("a")
        return key_of(cm) in cl.live
    case("AR appcontroller_test.go Test_syncDeleteOption 'without delete option object is deleted'", deletion({}), False)
    case("AR appcontroller_test.go Test_syncDeleteOption 'with delete set to false object is retained'",
         deletion({"argocd.argoproj.io/sync-options": "Delete=false"}), True)

    # A7: GE sync_context_test.go TestSyncSuccessfully_Multistep
    svc, svc2 = obj("Service", "my-service", wave=0), obj("Service", "new-svc-2", wave=5)
    cl = UnitCluster(lambda s: None)
    ctl = argocd.ArgoCD(cl, lambda s: None, None, {})
    ctl.tree = FakeTree({"app": [svc, svc2]})
    op = argocd.Operation("r1", None, False, False)
    ctl.sync_once(app, op)
    first = (op.phase, len(op.sync_res))
    ctl.sync_once(app, op)
    case("GE sync_context_test.go TestSyncSuccessfully_Multistep",
         (first, op.phase, op.message, len(op.sync_res)),
         (("Running", 1), "Succeeded", "successfully synced (all tasks run)", 2))

    # A7: GE sync_context_test.go TestSync_ApplyOutOfSyncOnly "applyOutOfSyncOnly=true and syncwaves"
    pod1, pod2, pod3 = obj("Pod", "pod-1", wave=2), obj("Pod", "pod-2", wave=3), obj("Pod", "pod-3", wave=1)
    cl = UnitCluster(lambda s: None)
    ctl = argocd.ArgoCD(cl, lambda s: None, None, {("", "Pod"): 'hs = {}\nhs.status = "Progressing"\nreturn hs'})
    ctl.tree = FakeTree({"app": [pod1, pod3]})
    app_oos = argocd.App({"metadata": {"name": "a"}, "spec": {"source": {"path": "app", "repoURL": "r"},
                                                               "destination": {},
                                                               "syncPolicy": {"syncOptions": ["ApplyOutOfSyncOnly=true"]}}})
    for o in (pod2, pod3):
        cl.create_or_update(o, "a")
        cl.live[key_of(o)]["_owner"] = "a"
    op = argocd.Operation("r1", None, True, False)
    ctl.sync_once(app_oos, op)
    r1 = (op.phase, sorted(k[3] for k in op.sync_res), [v[:2] for v in op.sync_res.values()])
    ctl.sync_once(app_oos, op)
    r2 = (op.phase, sorted(k[3] for k in op.sync_res), [v[:2] for v in op.sync_res.values()])
    want = ("Running", ["pod-1"], [["Synced", "Running"]])
    case("GE sync_context_test.go TestSync_ApplyOutOfSyncOnly syncwaves (1st Sync)", r1, want)
    case("GE sync_context_test.go TestSync_ApplyOutOfSyncOnly syncwaves (2nd Sync)", r2, want)

    # A10, A11: AR appcontroller_test.go TestProcessRequestedAppOperation_*
    def controller_with_failing_sync(limit):
        cl = UnitCluster(lambda s: None)
        ctl = argocd.ArgoCD(cl, lambda s: None, None, {})
        ctl.tree = FakeTree({"app": [obj("Widget", "w", api="example.com/v1")]})  # no CRD: fails
        a = argocd.App({"metadata": {"name": "a"}, "spec": {"source": {"path": "app", "repoURL": "r"},
                                                             "destination": {},
                                                             "syncPolicy": {"retry": {"limit": limit}}}})
        ctl.user_sync(a)
        return ctl, a

    ctl, a = controller_with_failing_sync(1)
    ctl.process_operation(a)
    case("AR appcontroller_test.go TestProcessRequestedAppOperation_FailedHasRetries (Running, retry #1)",
         (a.operation.phase, a.operation.retry_count, a.operation.finished_at is not None), ("Running", 1, True))
    a.operation.sync_res = {("x", "Widget", "ns", "w"): ["SyncFailed", "Failed", "old"]}
    ctl.tree = FakeTree({"app": []})
    ctl.retry_due = True
    ctl.process_operation(a)
    case("AR appcontroller_test.go TestProcessRequestedAppOperation_RunningPreviouslyFailed "
         "(SyncResult reset, then 'successfully synced (no more tasks)')",
         (a.last_op.phase, a.last_op.message), ("Succeeded", "successfully synced (no more tasks)"))
    ctl, a = controller_with_failing_sync(10)
    ctl.terminate(a)
    ctl.process_operation(a)
    case("AR appcontroller_test.go TestProcessRequestedAppOperation_HasRetriesTerminated",
         (a.last_op.phase, a.last_op.message, a.operation), ("Failed", "Operation terminated", None))

    # A12: AR appcontroller_test.go TestSkipAutoSync + appcontroller.go:2336
    def auto(automated, sync, operation=None, last=None):
        ctl = argocd.ArgoCD(UnitCluster(lambda s: None), lambda s: None, None, {})
        ctl.revision = "r1"
        pol = {"automated": {"selfHeal": False}} if automated else {}
        a = argocd.App({"metadata": {"name": "a"}, "spec": {"source": {"path": "p", "repoURL": "r"},
                                                             "destination": {}, "syncPolicy": pol}})
        a.sync, a.operation, a.last_op = sync, operation, last
        return ctl.auto_sync(a)

    last = argocd.Operation("r1", None, False, True)
    last.phase = "Succeeded"
    case("AR appcontroller_test.go TestSkipAutoSync/PreviouslySyncedToRevision", auto(True, "OutOfSync", last=last), False)
    case("AR appcontroller_test.go TestSkipAutoSync/AlreadyInSyncedState", auto(True, "Synced"), False)
    case("AR appcontroller_test.go TestSkipAutoSync/AutoSyncIsDisabled", auto(False, "OutOfSync"), False)
    case("AR appcontroller.go:2336 auto-sync skipped while an operation is in progress",
         auto(True, "OutOfSync", operation=argocd.Operation("r0", None, False, True)), False)
    case("AR appcontroller_test.go TestAutoSync (OutOfSync -> operation)", auto(True, "OutOfSync"), True)

    # F5: KC api/v1/kustomization_types.go GetTimeout / GetRetryInterval
    case("KC kustomization_types.go GetTimeout(interval 10m) = 9.5m", flux.get_timeout({"interval": "10m"}), 9.5)
    case("KC kustomization_types.go GetTimeout(interval 10s) = 30s", flux.get_timeout({"interval": "10s"}), 0.5)
    case("KC kustomization_types.go GetTimeout(timeout 30m)", flux.get_timeout({"interval": "10m", "timeout": "30m"}), 30)
    case("KC kustomization_types.go GetRetryInterval() defaults to interval",
         flux.get_retry_interval({"interval": "10m"}), 10)

    # F2, F4, F6: KC kustomization_dependson_test.go, kustomization_wait_test.go
    def flux_world(kustomizations, objects):
        cl = UnitCluster(lambda s: None)
        fx = flux.Flux(cl, lambda s: None, None)
        fx.repo_url = "https://example.com/repo.git"
        fx.tree, fx.revision = FakeTree(objects), "main@sha1:1"
        cl.create_or_update({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
                             "metadata": {"name": "src", "namespace": "flux-system"},
                             "spec": {"url": fx.repo_url}}, "t")
        for k in kustomizations:
            cl.create_or_update(k, "t")
        return cl, fx

    def ks(name, path, **spec):
        s = {"interval": "10m", "path": path, "prune": True, "sourceRef": {"kind": "GitRepository", "name": "src"}}
        s.update(spec)
        return {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                "metadata": {"name": name, "namespace": "flux-system"}, "spec": s}

    # F10: KC kustomization_prune_test.go TestKustomizationReconciler_Prune "handles finalizer",
    # "preserves objects with pruning disabled"
    kept = obj("ConfigMap", "kept", metadata={"name": "kept", "namespace": "ns",
                                             "annotations": {"kustomize.toolkit.fluxcd.io/prune": "disabled"}})
    cl, fx = flux_world([ks("k", "p")], {"p": [obj("ConfigMap", "gone"), kept]})
    fx.advance(0)
    fx.delete_ks("k")
    case("KC kustomization_prune_test.go TestKustomizationReconciler_Prune 'handles finalizer'",
         key_of(obj("ConfigMap", "gone")) in cl.live, False)
    case("KC kustomization_prune_test.go TestKustomizationReconciler_Prune 'preserves objects with pruning disabled'",
         key_of(kept) in cl.live, True)
    # F9: a path missing from the artifact (KC kustomization_controller.go:377-381)
    cl, fx = flux_world([ks("k", "gone")], {"p": [obj("ConfigMap", "c")]})
    fx.advance(0)
    case("KC kustomization_controller.go build: 'kustomization path not found' (ArtifactFailed)",
         (fx.ks["k"].ready, fx.ks["k"].reason.split(":")[0]), (False, "ArtifactFailed"))

    cl, fx = flux_world([ks("k", "p", dependsOn=[{"name": "missing"}])], {"p": [obj("ConfigMap", "c")]})
    fx.advance(0)
    case("KC kustomization_dependson_test.go 'fails due to dependency not found' (DependencyNotReady)",
         (fx.ks["k"].ready, fx.ks["k"].reason), (False, "DependencyNotReady"))
    job = obj("Job", "j", api="batch/v1")
    cl, fx = flux_world([ks("k", "p", wait=True, timeout="1m")], {"p": [job]})
    fx.advance(0)
    progressing = fx.ks["k"].waiting is not None
    fx.advance(2)
    case("KC kustomization_wait_test.go 'reports progressing' then 'reports unhealthy status' (timeout)",
         (progressing, fx.ks["k"].ready, fx.ks["k"].reason.split(":")[0]), (True, False, "HealthCheckFailed"))
    cl.live[key_of(job)]["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    fx.advance(10)  # GetRetryInterval() = interval
    case("KC kustomization_wait_test.go 'recovers and reports healthy status' (after retryInterval)",
         fx.ks["k"].ready, True)
    skipped = obj("Job", "s", api="batch/v1", metadata={"name": "s", "namespace": "ns",
                                                         "annotations": {"kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"}})
    cl, fx = flux_world([ks("k", "p", wait=True, timeout="1m")], {"p": [skipped]})
    cl.create_or_update(skipped, "someone")
    fx.advance(0)
    case("KC kustomization_wait_test.go TestKustomizationReconciler_WaitIgnoresSkippedObjects", fx.ks["k"].ready, True)
    return results


# ---- parts 2 and 3 -------------------------------------------------------------------------
def run_all(tree_dirs):
    """{(defect, example, engine): [(scenario, message)]} over every scenario."""
    import scenarios
    from tree import Tree
    found = {}
    for example, path in tree_dirs:
        t = Tree(path)
        for name in scenarios.SCENARIOS:
            for engine in ("argocd", "flux"):
                r = scenarios.run(name, engine, t, example)
                if r is None:
                    continue
                for (defect, message) in r.flags:
                    found.setdefault((defect, example, engine), []).append((name, message))
    return found


def fixture_dirs():
    return [(ex, os.path.join(FIXTURES, ex)) for ex in (LLAMA, SFT, TRAINJOB)]


def current_dirs(source):
    out = []
    root = os.path.join(source, "out")
    for project in sorted(os.listdir(root)):
        if project.startswith("_") or not os.path.isdir(os.path.join(root, project)):
            continue
        for target in sorted(os.listdir(os.path.join(root, project))):
            d = os.path.join(root, project, target)
            if os.path.isdir(os.path.join(d, "gitops")):
                out.append((f"{project}/{target}", d))
    return out


def generated_dirs(source, argv, tmp):
    """The kept specs of fixtures/generated/ (a TrainJob + Kueue under Argo CD, which no example has),
    and tests/extending/aks-volcano.yaml and publish.yaml with their --jpath directories, built with the current nemoc (--nemoc PATH; ctest passes it), as 'current/<project>/<target>':
    part 3 then checks today's generator on them too (B21)."""
    if "--nemoc" not in argv:
        return []
    nemoc = argv[argv.index("--nemoc") + 1]
    out = os.path.join(tmp, "out")
    specs = sorted(os.path.join(FIXTURES, "generated", f) for f in os.listdir(os.path.join(FIXTURES, "generated"))
                   if f.endswith(".yaml"))
    run = subprocess.run([nemoc, "build", "--quiet", "--out", out] + specs, capture_output=True, text=True,
                         env=dict(os.environ, NEMOC_DATA_DIR=source))
    if run.returncode != 0:
        raise SystemExit(f"building {specs} failed:\n{run.stderr}")
    # Issue #48: a cloud and a runtime of your own -- AKS ND H100 v5 and a Volcano Job, with Volcano
    # as a platform component -- under --jpath (tests/extending/azure), which the engines must wait
    # on like the built-in kinds (cluster.py V1).
    # Its own output root: a cluster is one cloud's (the fixtures' in-cluster is vanilla-k8s).
    # Built from a copy: nemoc pins its cost priors beside the spec (.nemoc/), never in the source tree.
    extending = os.path.join(source, "tests", "extending")
    spec = os.path.join(tmp, "aks-volcano.yaml")
    shutil.copyfile(os.path.join(extending, "aks-volcano.yaml"), spec)
    run = subprocess.run([nemoc, "build", "--quiet", "--out", out + "-azure", "--jpath", os.path.join(extending, "azure"),
                          spec], capture_output=True, text=True, env=dict(os.environ, NEMOC_DATA_DIR=source))
    if run.returncode != 0:
        raise SystemExit(f"building tests/extending/aks-volcano.yaml failed:\n{run.stderr}")
    # Issue #48: a stage of your own -- 55-publish, one description and one library under --jpath
    # (tests/extending/publish) -- which both engines must run after 50-convert and finish before
    # 60-tensorrt-llm, a failure halting what follows, like any stage.
    spec = os.path.join(tmp, "publish.yaml")
    shutil.copyfile(os.path.join(extending, "publish.yaml"), spec)
    run = subprocess.run([nemoc, "build", "--quiet", "--out", out + "-publish", "--jpath",
                          os.path.join(extending, "publish"), spec],
                         capture_output=True, text=True, env=dict(os.environ, NEMOC_DATA_DIR=source))
    if run.returncode != 0:
        raise SystemExit(f"building tests/extending/publish.yaml failed:\n{run.stderr}")
    found = []
    for root in (out, out + "-azure", out + "-publish"):
        for project in sorted(os.listdir(root)):
            if project.startswith("_"):
                continue
            for target in sorted(os.listdir(os.path.join(root, project))):
                found.append((f"current/{project}/{target}", os.path.join(root, project, target)))
    return found


def transcript(source, name, example, engines):
    import scenarios
    from tree import Tree
    if name not in scenarios.SCENARIOS:
        print(f"unknown scenario {name}; --list shows them", file=sys.stderr)
        return 2
    candidates = [example] if example else [os.path.join(FIXTURES, ex) for ex in (LLAMA, TRAINJOB)]
    shown = 0
    for path in candidates:
        path = path if os.path.isabs(path) else os.path.join(source, path)
        t = Tree(path)
        for engine in engines:
            r = scenarios.run(name, engine, t, os.path.relpath(path, source))
            if r is None:
                continue
            print("\n".join(r.lines))
            print(f"   flagged: {', '.join(sorted({d for d, m in r.flags})) or 'nothing'}\n")
            shown += 1
        if shown:
            break
    return 0 if shown else 1


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    source = os.path.abspath(argv[1])
    sys.path.insert(0, HERE)
    prerequisites()
    if "--nemoc" in argv:  # scenarios that commit a real edit rebuild the example's spec (F15, F16)
        import scenarios
        scenarios.NEMOC, scenarios.SOURCE = os.path.abspath(argv[argv.index("--nemoc") + 1]), source
    if "--list" in argv:
        import scenarios
        for name, (fn, _, engines) in scenarios.SCENARIOS.items():
            print(f"{name:36} {'/'.join(engines):12} {fn.__doc__.strip()}")
        return 0
    if "--transcript" in argv:
        name = argv[argv.index("--transcript") + 1]
        example = argv[argv.index("--example") + 1] if "--example" in argv else None
        engines = [argv[argv.index("--engine") + 1]] if "--engine" in argv else ["argocd", "flux"]
        return transcript(source, name, example, engines)

    failures = []
    units = unit_cases()
    for name, ok, got, want in units:
        if not ok:
            failures.append(f"unit: {name}: got {got!r}, want {want!r}")
    print(f"part 1: {sum(ok for _, ok, _, _ in units)}/{len(units)} unit cases agree with upstream's tests")

    import scenarios
    found = run_all(fixture_dirs())
    for defect, where in sorted(EXPECTED_ON_FIXTURES.items()):
        scenario = [n for n in [SCENARIO_OF.get(defect)] if n in scenarios.SCENARIOS] or \
            [n for n in scenarios.SCENARIOS if n.startswith(defect + "-")]
        if not scenario:
            failures.append(f"fixtures: {defect} has no named scenario")
            continue
        for example, engine in where:
            hits = [m for n, m in found.get((defect, example, engine), []) if n == scenario[0]]
            if not hits:
                failures.append(f"fixtures: {scenario[0]} does not flag {defect} on {example} ({engine})")
    print(f"part 2: {sum(len(w) for w in EXPECTED_ON_FIXTURES.values())} expected flags on the fixtures checked; "
          f"the fixtures also flag {sorted({d for d, _, _ in found} - set(EXPECTED_ON_FIXTURES))}")

    dirs = current_dirs(source)
    with tempfile.TemporaryDirectory(prefix="nemoc-replay-") as tmp:
        dirs += generated_dirs(source, argv, tmp)
        current = run_all(dirs)
    now = set(current)
    for key in sorted(now - KNOWN_DEFECTS):
        failures.append(f"current trees: new flag {key}: {current[key][0][0]}: {current[key][0][1]}")
    for key in sorted(KNOWN_DEFECTS - now):
        failures.append(f"current trees: {key} is listed in KNOWN_DEFECTS but no longer flagged: remove it")
    print(f"part 3: {len(now)} (defect, example, engine) flagged on {len(dirs)} current trees; "
          f"{len(KNOWN_DEFECTS)} known")
    if "--print-known" in argv:
        for key in sorted(now):
            print(f"    {key!r},")
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
