"""Scenario scripts and the invariants checked after every event.

A scenario is a list of events in order; the Replay applies each to the cluster, lets the
engine run until it settles (Argo CD: refresh and operation queues; Flux: the controller over
the time the event states), then checks the invariants. A broken invariant is a flag
(defect id, what happened), kept with the event that caused it.

Invariants (field-review.md round 2, section C; decisions F14, F17):
  I1 each stage runs only after the previous one succeeded; a failure halts everything after it
     until a commit changes the failed stage (C15 when a later stage runs after a failure)
  I2 serving never starts before the engine it serves exists (C14)
  I3 a retry never advances a wave (C15)
  I4 an Application whose operation still runs, or that is not Synced, never reads Healthy to
     a parent through the app-of-apps health Lua (C14) -- except one whose source path left Git
     ("app path does not exist"): its parent prunes it and must not wait on it
  I5 bootstrap on an empty cluster applies roots only (F14; C14 when that applies the serving
     Application), and CRDs/the cluster bundle before project objects (F14); whatever the
     cluster bundle holds is applied from Git, also later additions (C19)
  I6 an edit of a running stage takes effect as SUMMARY.md "Edit while a stage runs" and
     `nemoc diff` say (C24), and never leaves two workloads of one stage running at once in one
     state directory (C17)
  I13 a run resumes only within one state (F15, C17): a workload that starts in a state
     directory another configuration wrote (NeMo config, arguments) would resume that run's
     checkpoints -- exp_manager resumes the newest *-last checkpoint of its log directory
     (NVIDIA/NeMo v2.2.1 nemo/utils/exp_manager.py:813-880); a scheduling-only edit resumes in
     its own directory, which is right
  I14 one owner per object (C20): no object is desired by two Applications/Kustomizations, across
     the projects of one repository (one_owner(); C20-two-projects-one-namespace)
  I7 F17, C18: a Flux worker is held at most 10 minutes per health check, and no Kustomization
     due for a reconcile waits more than 10 minutes for a free worker; a stage whose workload
     merely runs reads Ready=False only as WaitForSet's timeout with the workload 'InProgress'
     (kustomize-controller v1.9.4 marks every health-check timeout Ready=False HealthCheckFailed,
     kustomization_controller.go:1065-1071: F17's "reads as progressing, never as failed" is that
     message and the short poll, never a failed reading of a running workload)
  I8 a health check never reads Unknown or Degraded for an object that is only new (C25)
  I9 an Application holding a Kueue-queued TrainJob is Synced after Kueue's webhook, and a sync
     never removes Kueue's runtime patch or fails on a running TrainJob (B21)
  I10 the pipeline moves on: once every stage before it succeeded (and none failed), a stage's
     workload is created, and serving is once the user synced what is not automated (STALL; on
     the first revision only: an edit that does not take effect is I6)
  I11 a stage's Flux Kustomization reads Ready=True at a revision only once the stage's workload
     succeeded: Ready is what the next stage's dependsOn reads (KC
     internal/controller/kustomization_controller.go:551-630, F2) (READY)
  I12 an Argo CD Application whose workloads all succeeded reads Healthy, and one whose workload
     failed does not: its health is what a parent's wave and the user read (A4) (HEALTH)

ORDER flags a stage starting while an earlier one has not succeeded yet (I1 without a failure).
I10-I12 and ORDER are flagged by no committed tree; tests/gitops/replay/mutations.py relies on
them to catch mutants that stall the pipeline (an inverted verdict) or hide a running stage.
"""
import copy
import hashlib
import json
import os
import re
import subprocess
import tempfile

from argocd import ArgoCD, health_view, public, resource_health, _lua
from cluster import Cluster, KUEUE_QUEUE
from flux import Flux, HEALTH_POLL_MAX_MINUTES, get_timeout, minutes as flux_minutes
from tree import ProjectsTree, Tree, group_of, is_workload, key_of


def stage_num(stage):
    return int(stage.split("-")[0])


# F15: the directory a stage writes, by the stage directory's name (paths.libsonnet).
STATE_KIND = {"data-prep": "prepared", "import-model": "import", "pretrain": "pretrain", "train": "train",
              "merge-lora": "merge-lora", "evaluate": "evaluate", "convert": "huggingface",
              "tensorrt-llm": "tensorrt-llm"}

# Set by replay_test.py (--nemoc): scenarios that commit a real edit build the example's spec.
NEMOC = None
SOURCE = None
_REBUILT = {}
_SCRATCH = []  # rebuilt trees' directories, removed when the process ends


def _remove_scratch():
    import shutil
    for d in _SCRATCH:
        shutil.rmtree(d, ignore_errors=True)


import atexit  # noqa: E402
atexit.register(_remove_scratch)


def rebuilt(tree, label, edit):
    """The tree of the same target built by nemoc from its example spec after `edit(spec)`:
    a real later commit (names and state directories as nemoc computes them), or None."""
    root = rebuilt_project(tree, label, edit)
    target = os.path.basename(tree.root.rstrip("/"))
    return Tree(os.path.join(root, target), label) if root and os.path.isdir(os.path.join(root, target)) else None


def example_spec(project):
    """The document of the example spec naming `project` (a fresh copy), or None."""
    import yaml
    examples = os.path.join(SOURCE, "examples")
    for f in sorted(os.listdir(examples)):
        if f.endswith(".yaml"):
            doc = yaml.safe_load(open(os.path.join(examples, f)))
            if (doc.get("metadata") or {}).get("name") == project:
                return doc
    return None


def build_specs(out, docs, scratch, what):
    """`nemoc build --quiet --out out` of the spec documents, written into scratch; exits on failure."""
    import yaml
    paths = []
    for doc in docs:
        path = os.path.join(scratch, f"spec-{len(os.listdir(scratch))}.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(doc, f, sort_keys=False)
        paths.append(path)
    run = subprocess.run([NEMOC, "build", "--quiet", "--out", out] + paths,
                         capture_output=True, text=True, env=dict(os.environ, NEMOC_DATA_DIR=SOURCE))
    if run.returncode != 0:
        raise SystemExit(f"building {what} failed:\n{run.stderr}")


def rebuilt_project(tree, label, edit):
    """out/<project> of that rebuild (every target), or None."""
    if NEMOC is None or SOURCE is None:
        return None
    if os.path.commonpath([os.path.abspath(tree.root), os.path.join(SOURCE, "out")]) != os.path.join(SOURCE, "out"):
        return None  # the committed out/ trees only (a fixture is an older nemoc's tree)
    project = os.path.basename(os.path.dirname(tree.root.rstrip("/")))
    key = (project, label)
    if key not in _REBUILT:
        spec = example_spec(project)
        if spec is None or not edit(spec):
            _REBUILT[key] = None
        else:
            tmp = tempfile.mkdtemp(prefix="nemoc-replay-edit-")
            _SCRATCH.append(tmp)
            build_specs(os.path.join(tmp, "out"), [spec], tmp, f"{project} ({label})")
            _REBUILT[key] = os.path.join(tmp, "out", project)
    return _REBUILT[key]


_PAIRS = {}


def two_projects(tree):
    """The example's spec as two projects (<p>-a, <p>-b) in one namespace on one cluster, built
    by nemoc into one output root (revision r1); then a copy of that root where <p>-a renames its
    namespace and is rebuilt alone, <p>-b still on disk (r2, as a later commit of one
    repository). (r1 trees, r2 trees, r1 root, r2 root) or None."""
    if NEMOC is None or SOURCE is None or rebuilt(tree, "namespace", edit_namespace) is None:
        return None
    target = os.path.basename(tree.root.rstrip("/"))
    project = os.path.basename(os.path.dirname(tree.root.rstrip("/")))
    if project not in _PAIRS:
        import shutil
        spec = example_spec(project)
        tmp = tempfile.mkdtemp(prefix="nemoc-replay-two-")
        _SCRATCH.append(tmp)

        def build(out, names_edits):
            docs = []
            for name, edit in names_edits:
                doc = copy.deepcopy(spec)
                doc["metadata"]["name"] = name
                if edit:
                    edit(doc)
                docs.append(doc)
            build_specs(out, docs, tmp, f"two projects of {project}")
        a, b = project + "-a", project + "-b"
        r1, r2 = os.path.join(tmp, "r1"), os.path.join(tmp, "r2")
        build(r1, [(a, None), (b, None)])
        shutil.copytree(r1, r2)
        build(r2, [(a, edit_namespace)])
        _PAIRS[project] = ([Tree(os.path.join(r1, p, target), f"r1 {p}") for p in (a, b)],
                           [Tree(os.path.join(r2, p, target), f"r2 {p}") for p in (a, b)], r1, r2)
    return _PAIRS[project]


def edit_without_target(spec, name):
    targets = spec["spec"]["targets"]
    if len(targets) < 2 or not any(t["name"] == name for t in targets):
        return False
    spec["spec"]["targets"] = [t for t in targets if t["name"] != name]
    ((spec["spec"].get("gitops") or {}).get("clusters") or {}).pop(name, None)
    return True


def edit_lr(spec):
    train = spec["spec"]["stages"].get("train")
    if not train:
        return False
    train.setdefault("optimizer", {})["lr"] = 0.000123
    return True


def edit_namespace(spec):
    spec["spec"]["namespace"] = spec["spec"]["namespace"] + "-b"
    return True


def edit_no_serve(spec):
    stages = spec["spec"]["stages"]
    if "serve" not in stages:
        return False
    del stages["serve"]
    monitoring = spec["spec"].get("monitoring") or {}
    monitoring.pop("serviceMonitor", None)  # scrapes Triton: nemoc refuses it without serving
    return True


def edit_data_version(spec):
    prep = spec["spec"]["stages"].get("dataPrep")
    if not prep:
        return False
    prep["version"] = "2026-12-01"
    return True


class EditedTree(Tree):
    """A later commit of a tree: the workload of one stage changed (a spec edit; nemoc renames a
    changed workload by its content hash)."""

    def __init__(self, base, stage, label):
        self.__dict__.update({k: v for k, v in base.__dict__.items() if k != "_built"})
        self.base, self.stage, self.label = base, stage, label
        self._edited = {}
        self.renamed = {o["metadata"]["name"] for o in base.stage_objects()
                        if o.get("_stage") == stage and is_workload(o)}

    def build(self, path):
        key = os.path.normpath(path)
        if key not in self._edited:
            out = []
            for o in self.base.build(path):
                if o.get("_stage") == self.stage and is_workload(o):
                    o = copy.deepcopy(o)
                    o["metadata"]["name"] += "-e"
                elif any(r.get("name") in self.renamed for r in (o.get("spec") or {}).get("healthChecks") or []):
                    o = copy.deepcopy(o)  # the Flux Kustomization of that stage names the new workload
                    for r in o["spec"]["healthChecks"]:
                        if r["name"] in self.renamed:
                            r["name"] += "-e"
                out.append(o)
            self._edited[key] = out
        return list(self._edited[key])


class RemovedTree(Tree):
    """A later commit without the target: the spec dropped it and nemoc removed its directory
    ("<target>: removed (no longer a target)"). The cluster bundle stays (other targets use it)."""

    def __init__(self, base, label):
        self.__dict__.update({k: v for k, v in base.__dict__.items() if k != "_built"})
        self.base, self.label = base, label

    def missing(self, repo_path):
        return self.base.resolve(repo_path) is not None

    def build(self, path):
        inside = os.path.commonpath([os.path.abspath(path), os.path.abspath(self.root)]) == os.path.abspath(self.root)
        return [] if inside else self.base.build(path)


class Replay:
    # I10 for serving, on in gitops.replay and mutations.py. It found a real deadlock, fixed in
    # the generator: a root that manages itself is one of its own wave-0 resources (argo-cd v3.5.1
    # controller/sync.go:313-318 keeps what the app tracks, itself included; gitops-engine
    # sync_context.go:540-570 waits on each running task's health), and the app-of-apps health Lua
    # read it as Progressing while its own operation ran, so the serving Application (wave 1) was
    # never created. The Lua now applies its operation/sync rules to nemoc's child Applications
    # only, never to a root (label nemoc.dev/gitops-root). It was off here while the replay
    # aggregated an Application into its own health (fixed: AR controller/health.go:52-55), which
    # kept manual roots waiting on themselves.
    serving_liveness = True

    def __init__(self, engine, tree, example):
        self.engine_name, self.example = engine, example
        self.trees = {"r1": tree}
        self.tree = tree
        self.revision = "r1"
        self.lines = []
        self.flags = {}
        self.event_no = 0
        self.cluster = Cluster(self.log)
        self.lua = tree.health_lua()
        self.repo_url = self.project_repo(tree)
        if engine == "argocd":
            self.engine = ArgoCD(self.cluster, self.log, self.flag, self.lua)
        else:
            self.engine = Flux(self.cluster, self.log, self.flag)
        self.engine.on_step = self.observe
        self.engine.repo_url = self.repo_url
        self.engine.tree, self.engine.revision = tree, "r1"
        self.failed_stages = set()
        self.run_states = {}  # workload key -> (state directories it writes, digest of its configuration)
        self.state_writers = {}  # state directory -> digest of the configuration that first wrote it (I13)
        self.state_runs = {}  # state directory -> the workloads that ran in it
        self.retrying = {}
        self.retry_applied = set()  # objects a retry applied past a failed wave (C15)

    @staticmethod
    def project_repo(tree):
        for o in tree.argocd_objects() + tree.flux_objects():
            if o.get("kind") == "Application":
                return o["spec"]["source"]["repoURL"]
            if o.get("kind") == "GitRepository":
                return o["spec"]["url"]
        return None

    # -- transcript and flags --------------------------------------------------------------
    def log(self, line):
        self.lines.append(line)

    def flag(self, defect, message):
        if (defect, message) not in self.flags:
            self.flags[(defect, message)] = self.event_no
            self.log(f"      !! {defect}: {message}")

    # -- the tree -----------------------------------------------------------------------------
    def workload_stages(self, tree=None):
        """stage dir -> the stage's workload (or the serving Deployment), from the tree."""
        out = {}
        for o in (tree or self.tree).stage_objects():
            if is_workload(o) or (o.get("kind") == "Deployment" and o.get("_stage", "").endswith("serve")):
                out.setdefault(o["_stage"], o)
        return dict(sorted(out.items()))

    def stage(self, suffix):
        for s in self.workload_stages():
            if s.endswith("-" + suffix):
                return s
        return None

    def succeeded(self, stage):
        live = self.live_workload(stage)
        return live is not None and self.cluster.phase(live) == "Succeeded"

    def live_workload(self, stage):
        o = self.workload_stages().get(stage)
        return self.cluster.live.get(key_of(o)) if o else None

    def run_state(self, obj):
        """The state directories a stage's workload writes (paths.libsonnet: <kind>/<12 hex>, or
        <kind> alone in a tree without state hashes) and a digest of what it runs: the workload
        without its name and the ConfigMaps it mounts."""
        kind = STATE_KIND.get(obj["_stage"].split("-", 1)[1])
        if kind is None:
            return set(), None
        text = json.dumps({k: v for k, v in obj.items() if k not in ("metadata", "status") and not k.startswith("_")},
                          sort_keys=True, default=str)
        programs = []

        def walk(v):  # what the pods run: each container's image, command and arguments
            if isinstance(v, dict):
                if "image" in v and ("command" in v or "args" in v):
                    programs.append([v.get("image"), v.get("command"), v.get("args")])
                for x in v.values():
                    walk(x)
            elif isinstance(v, list):
                for x in v:
                    walk(x)
        walk(obj.get("spec"))
        mounted = [o for o in self.tree.stage_objects() if o.get("kind") == "ConfigMap"
                   and '"' + o["metadata"]["name"] + '"' in text]
        config = json.dumps(programs, sort_keys=True) + "".join(json.dumps(o.get("data"), sort_keys=True) for o in mounted)
        root = re.escape("/" + "/".join(self.tree.root.rstrip("/").split("/")[-2:]) + "/" + kind)
        dirs = {kind + "/" + h for h in re.findall(root + r"/([0-9a-f]{12})(?![0-9a-f])", config)}
        if not dirs and re.search(root + r"(?![a-z0-9-])", config):
            dirs = {kind}
        return dirs, hashlib.md5(config.encode()).hexdigest()

    # -- invariants --------------------------------------------------------------------------
    def starts(self, obj):
        """obj (a workload not suspended, or the serving Deployment) starts to run: I1, I2, I6."""
        stage = obj.get("_stage")
        if stage is None:
            return
        stages = self.workload_stages()
        for s, w in stages.items():
            if stage_num(s) >= stage_num(stage):
                break
            live = self.cluster.live.get(key_of(w))
            phase = self.cluster.phase(live) if live else "absent"
            if phase == "Succeeded":
                continue
            if stage.endswith("serve"):
                self.flag("C14", f"serving ({obj['kind']}/{obj['metadata']['name']}) starts while stage {s} is {phase}: "
                                 "no engine to serve yet")
            elif phase == "Failed" or s in self.failed_stages or key_of(obj) in self.retry_applied:
                self.flag("C15", f"stage {stage} starts after stage {s} failed ({obj['kind']}/{obj['metadata']['name']}"
                                 + (", applied by a retry" if key_of(obj) in self.retry_applied else "") + ")")
            else:
                self.flag("ORDER", f"stage {stage} starts while stage {s} is {phase}")
            break
        if is_workload(obj):
            dirs, digest = self.run_state(obj)
            self.run_states[key_of(obj)] = (dirs, digest)
            for other in self.cluster.workloads():
                if other is obj or other.get("_stage") != stage:
                    continue
                if self.cluster.phase(other) in ("Running", "Created") and not self.cluster.suspended(other):
                    shared = dirs & self.run_states.get(key_of(other), (set(), None))[0]
                    if shared:  # I6
                        self.flag("C17", f"two {stage} workloads run at once ({other['metadata']['name']} and "
                                         f"{obj['metadata']['name']}) in one state directory {sorted(shared)[0]}")
                    else:
                        self.log(f"      {other['metadata']['name']} still runs beside {obj['metadata']['name']} "
                                 f"(another state directory)")
            for d in sorted(dirs):  # I13
                runs = self.state_runs.setdefault(d, set())
                if key_of(obj) in runs:
                    continue  # the same workload applied again
                wrote = self.state_writers.setdefault(d, digest)
                if wrote != digest:
                    self.flag("C17", f"{obj['metadata']['name']} starts in {d}, which a run of another "
                                     "configuration wrote: it resumes that run's checkpoints")
                elif runs:
                    self.log(f"      {obj['metadata']['name']} resumes in {d} (same state)")
                runs.add(key_of(obj))

    def observe(self, what, **kw):
        if what == "applied":
            obj = kw["obj"]
            if obj.get("kind") == "Deployment" and obj.get("_stage", "").endswith("serve"):
                eng = [w for s, w in self.workload_stages().items() if s.endswith("tensorrt-llm")]
                live = self.cluster.live.get(key_of(eng[0])) if eng else None
                obj["status"] = {"ready": bool(live and self.cluster.phase(live) == "Succeeded")}
                self.starts(obj)
            elif is_workload(obj) and not self.cluster.suspended(obj):
                self.starts(obj)
        elif what == "retry":  # I3
            self.retrying[kw["app"].name] = kw["op"].failed_wave
        elif what == "wave":
            fw = self.retrying.pop(kw["app"].name, None)
            if fw is not None and kw["wave"] > fw:
                self.retry_applied |= {t.key for t in kw["tasks"]}
                self.flag("C15", f"{kw['app'].name}: the retry of a sync that failed in wave {fw} applies wave "
                                 f"{kw['wave']} (ApplyOutOfSyncOnly drops the in-sync failed workload)")
        elif what == "refresh":
            self.check_app(kw["app"])
        elif what == "released":  # I7
            if kw["held"] > HEALTH_POLL_MAX_MINUTES:
                self.flag("C18", f"{kw['k'].name}: a reconcile holds one of the 4 workers in health checks for more "
                                 f"than {HEALTH_POLL_MAX_MINUTES}m (up to its {get_timeout(kw['k'].spec):g}m timeout)")
        elif what == "failed":
            k = kw["k"]
            for ref in k.spec.get("healthChecks") or []:
                live = self.cluster.live.get((group_of(ref["apiVersion"]), ref["kind"], ref.get("namespace", ""),
                                              ref["name"]))
                # 'Unknown' (no status yet) is C25's reading (I8), not a failed one.
                failed = f"{ref['kind']}/{ref.get('namespace', '') + '/' if ref.get('namespace') else ''}{ref['name']} status: 'Failed'"
                if live is not None and is_workload(live) and self.cluster.phase(live) in ("Running", "Queued", "Created") \
                        and (not k.reason.startswith("HealthCheckFailed: timeout waiting for") or failed in k.reason):
                    self.flag("C18", f"{k.name}: reads failed while its workload only runs "
                                     f"({self.cluster.phase(live)}): {k.reason}")
        elif what == "cel-unknown":  # I8
            why = "no status yet" if "status" not in kw["obj"] else "a status without conditions"
            self.flag("C25", f"{kw['k'].name}: CEL health check of {kw['obj']['kind']}/{kw['obj']['metadata']['name']} "
                             f"errors on an object with {why} (Unknown)")
        elif what == "starved" and kw["waited"] > HEALTH_POLL_MAX_MINUTES:
            self.flag("C18", f"{kw['k'].name}: no free worker for {kw['waited']:g}m: {len(self.engine.busy())} "
                             "reconciles wait in health checks")

    def check_app(self, app):  # I4, I8, I9
        live = self.cluster.live.get(("argoproj.io", "Application", "argocd", app.name))
        script = self.lua.get(("argoproj.io", "Application"))
        parent = (live or {}).get("_owner")
        # a root that manages itself is its own "parent", and Argo CD leaves it out of its own
        # health (AR controller/health.go:52-55): no parent reads it
        if parent == app.name:
            parent = None
        if live is not None and script is not None and "status" in live and parent and not app.name.startswith("platform-"):
            import json
            seen = _lua(script, json.dumps(health_view(live), sort_keys=True, default=list))
            # an Application whose source path left Git is pruned by its parent: its parent need not
            # wait on it (and must not: a root syncing itself would wait for ever, C23-remove-serve)
            gone = app.sync == "Unknown" and "app path does not exist" in (app.condition or "")
            if seen == "Healthy" and (app.operation is not None or (app.sync != "Synced" and not gone)):
                state = "its operation runs" if app.operation is not None else f"it is {app.sync}"
                self.flag("C14", f"{app.name} reads Healthy to its parent's health Lua while {state} "
                                 "(missing resources do not count toward health since Argo CD 3.4)")
        for k, target, live_obj in app.resources:
            if live_obj is None or target is None:
                continue
            ignored = ((live_obj.get("metadata") or {}).get("annotations") or {}).get(
                "argocd.argoproj.io/ignore-healthcheck") == "true"  # A4: not aggregated
            if target.get("kind") == "HorizontalPodAutoscaler" and not ignored \
                    and resource_health(live_obj, self.lua) == "Degraded":
                self.flag("C25", f"{app.name}: HorizontalPodAutoscaler/{k[3]} is Degraded until its custom metric "
                                 "exists (the Application reads Degraded)")
            if target.get("kind") == "TrainJob" and (live_obj.get("_drift") or set()) - app.ignored(target):
                self.flag("B21", f"{app.name}: TrainJob/{k[3]} is OutOfSync from its creation: the webhooks changed "
                                 "spec.runtimePatches (Kueue appended its entry, Trainer stamped `time`) and "
                                 "ignoreDifferences does not cover it")
        for k in self.cluster.refused_admission:
            self.flag("B21", f"a sync removed Kueue's runtime patch from TrainJob/{k[3]}: it can never be admitted")

    # -- events --------------------------------------------------------------------------------
    def event(self, text):
        self.event_no += 1
        self.log(f"{self.event_no:2}. {text}")

    def settle(self, minutes=0):
        if self.engine_name == "argocd":
            self.engine.run()
            for app in self.engine.apps.values():
                for t in app.operation.sync_res.values() if app.operation else []:
                    if t[1] == "Failed" and "no matches for kind" in t[2]:
                        self.flag("F14", f"{app.name}: a project object is applied before its CRD exists")
                if app.operation and "dry run" in (app.operation.message or "") and "no matches" in app.operation.message:
                    self.flag("F14", f"{app.name}: the project is synced before the cluster bundle's CRDs exist")
        else:
            self.engine.advance(minutes)
            self.check_ready()
            for k in self.engine.ks.values():
                if k.reason.startswith("ReconciliationFailed") and "no matches for kind" in k.reason:
                    if k.name.startswith("platform-"):
                        self.flag("B25", f"{k.name}: a cluster-bundle object is applied before its CRD exists")
                    else:
                        self.flag("F14", f"{k.name}: a project object is applied before its CRD exists")

    def bootstrap(self):
        """README: kubectl apply --server-side -k out/_clusters/<c>/platform/<engine>, then what
        the target's SUMMARY.md "Apply once" says (tree.bootstrap_objects), from the repository root."""
        e = self.engine_name
        tree = "out/" + "/".join(self.tree.root.rstrip("/").split("/")[-2:])
        self.event(f"bootstrap on an empty cluster: kubectl apply --server-side -k out/_clusters/<cluster>/platform/{e}; "
                   + ("wait for its root; " if self.tree.bootstrap_wait(e) else "")
                   + (f"kubectl apply --server-side -k {tree}/gitops/{e}/root"
                      if os.path.isdir(os.path.join(self.tree.root, "gitops", e, "root"))
                      else f"kubectl apply -k {tree}/gitops/{e}"))
        # kubectl apply -k platform/<engine>: that directory's kustomization, its files only (a
        # subdirectory such as flux/components/<name>/ is a Kustomization's path, applied from Git)
        platform = [o for p, o in sorted(self.tree.bundle_files(e + "/").items()) if "/" not in p[len(e) + 1:]]
        # What the cluster's own installer put there before nemoc (targets[].clusterHas and the
        # profile's defaults, cluster-bundle.json "has"; Cluster Toolkit's Kueue and JobSet on
        # gke-a4): their CRDs exist from the start, and the bundle installs none of them.
        for item in filter(None, ((self.tree.bundle or {}).get("has") or "").split(", ")):
            name = item.split(" ")[0]
            new = self.cluster.install_component(name)
            self.log(f"      the cluster already runs {item}" + (f" (CRDs {', '.join(sorted(k for _, k in new))})" if new else ""))
        project = self.tree.bootstrap_objects(e)
        wait = self.tree.bootstrap_wait(e)

        def apply(objs):
            for o in objs:
                o = copy.deepcopy(o)
                if o.get("kind") == "ConfigMap":
                    continue  # argocd-cm: the health Lua the replay already uses
                ok, msg = self.cluster.create_or_update(o, "kubectl")
                self.log(f"      kubectl: {o['kind']}/{o['metadata']['name']} {msg}")
        apply(platform)
        if wait:  # SUMMARY.md "Apply once": kubectl wait for the cluster bundle's root first (F14)
            self.settle(0)
            self.wait_for_bundle(wait)
        apply(project)
        self.check_roots(project, platform)
        self.settle(0)

    def wait_for_bundle(self, name, limit=60):
        """`kubectl wait` for the cluster bundle's root (Argo CD: Application health Healthy, the
        user syncing what is not automated; Flux: Kustomization Ready) for up to `limit` minutes."""
        self.log(f"      kubectl wait: {name} ...")
        for minute in range(limit):
            if self.engine_name == "argocd":
                manual = [a for a in self.engine.apps.values() if not a.automated and a.operation is None
                          and a.sync != "Synced"]
                for app in sorted(manual, key=lambda a: a.name):
                    self.engine.user_sync(app)
                self.engine.run()
                app = self.engine.apps.get(name)
                if app is not None:
                    self.engine.refresh(app)
                if app is not None and app.health == "Healthy" and app.sync == "Synced" and app.operation is None:
                    self.log(f"      kubectl wait: application/{name} Healthy")
                    return
                if not manual:
                    self.engine.retry_due = True
            else:
                self.engine.advance(1)
                if name.startswith("-l "):  # kubectl wait -l key=value: every match, as it lists them now
                    key, _, value = name[3:].partition("=")
                    ks = [k for k in self.engine.ks.values()
                          if ((self.cluster.live.get(("kustomize.toolkit.fluxcd.io", "Kustomization", "flux-system", k.name))
                               or {}).get("metadata", {}).get("labels") or {}).get(key) == value]
                    if ks and all(k.ready is True for k in ks):
                        self.log(f"      kubectl wait: {len(ks)} kustomizations ({name}) Ready after {minute + 1} min")
                        return
                    continue
                k = self.engine.ks.get(name)
                if k is not None and k.ready is True:
                    self.log(f"      kubectl wait: kustomization/{name} Ready after {minute + 1} min")
                    return
        self.log(f"      kubectl wait: {name} not ready after {limit} min (timed out)")

    def check_roots(self, project, platform):  # I5
        e = self.engine_name
        if e == "argocd":
            apps = [o for o in project if o.get("kind") == "Application"]
            roots = [a for a in apps if a["spec"]["source"]["path"].rstrip("/").endswith("gitops/argocd")]
            for a in apps:
                if a in roots:
                    continue
                path = a["spec"]["source"]["path"]
                if path.rstrip("/").endswith("serving"):
                    self.flag("C14", f"the bootstrap applies the serving Application {a['metadata']['name']} directly: "
                                     "it syncs at once, before any engine exists")
                if roots:
                    self.flag("F14", f"the bootstrap applies {a['metadata']['name']} directly, not only the root")
            if not roots and not any(o.get("kind") == "ApplicationSet" for o in project):
                self.flag("F14", "the target has no root Application: the bootstrap applies every Application")
        else:
            ks = [o for o in project if o.get("kind") == "Kustomization" and o["apiVersion"].startswith("kustomize.toolkit")]
            roots = [k for k in ks if k["spec"]["path"].rstrip("/").endswith("gitops/flux")]
            if roots and len(ks) > len(roots):
                self.flag("F14", f"the bootstrap applies {len(ks) - len(roots)} stage Kustomizations directly, not only the root")
            bundle_root = [o for o in platform if o.get("kind") == "Kustomization"
                           and o["spec"]["path"].rstrip("/").endswith("platform/flux")]
            if not bundle_root:
                self.flag("C19", "the cluster bundle has no root: no Kustomization applies "
                                 "_clusters/<cluster>/platform/flux from Git")

    def user_sync(self):
        if self.engine_name != "argocd":
            return
        synced = set()
        for _ in range(6):
            manual = [a for a in self.engine.apps.values() if not a.automated and a.name not in synced]
            waiting = [a for a in self.engine.apps.values() if a.operation is not None and a.operation.finished_at]
            if manual:
                self.event("the user syncs the Applications that have no automated sync policy: "
                           + ", ".join(sorted(a.name for a in manual)))
                for app in sorted(manual, key=lambda a: a.name):
                    self.engine.user_sync(app)
                    synced.add(app.name)
                self.settle(0)
            elif waiting:
                self.retry()
            else:
                return

    def await_stage(self, stage, limit=180):
        """Under Flux, time passes (a minute at a time) until the stage's workload exists."""
        if self.engine_name != "flux" or self.live_workload(stage) is not None:
            return
        waited = 0
        while self.live_workload(stage) is None and waited < limit:
            self.engine.advance(1)
            waited += 1
        self.log(f"      ({waited} min pass until the {stage} workload exists)" if self.live_workload(stage) is not None
                 else f"      ({stage} workload still absent after {limit} min)")

    def workload(self, stage, phase, minutes=1):
        self.await_stage(stage)
        live = self.live_workload(stage)
        self.event(f"{stage}: workload {phase}" + (f" ({minutes:g} min later)" if self.engine_name == "flux" else ""))
        if live is None:
            self.log(f"      (no {stage} workload in the cluster)")
            self.check_moves_on(stage)
            self.settle(minutes)
            return False
        if phase in ("Running", "Succeeded", "Failed") and self.cluster.suspended(live):
            self.log(f"      ({live['kind']}/{live['metadata']['name']} is suspended: Kueue has not admitted it)")
            self.settle(minutes)
            return False
        if live.get("kind") == "Deployment":
            live["status"] = {"ready": phase == "Running"}
        else:
            self.cluster.set_workload(live, phase, self.event_no)
        if phase == "Failed":
            self.failed_stages.add(stage)
        self.settle(minutes)
        return True

    def check_moves_on(self, stage):  # I10
        if self.failed_stages or self.engine.revision != "r1":
            return  # after a failure or a commit (an edit that does not take effect is C24, I6)
        for s, w in self.workload_stages().items():
            if stage_num(s) >= stage_num(stage):
                break
            live = self.cluster.live.get(key_of(w))
            if not is_workload(w) or live is None or self.cluster.phase(live) != "Succeeded":
                return
        self.flag("STALL", f"stage {stage}: no workload is created though every stage before it succeeded")

    def check_ready(self):  # I11
        if self.engine_name != "flux":
            return
        for k in self.engine.ks.values():
            if k.ready is not True or k.last_applied != self.engine.revision:
                continue
            stage = os.path.basename(k.path.rstrip("/"))
            objs = self.engine.objects_of(k)  # its own build: several projects may share stage names
            for w in objs if isinstance(objs, list) else []:
                live = self.cluster.live.get(key_of(w)) if is_workload(w) else None
                if live is not None and self.cluster.phase(live) != "Succeeded":
                    self.flag("READY", f"{k.name}: Ready=True at {self.engine.revision} while the {stage} workload is "
                                       f"{self.cluster.phase(live)}")

    def check_health(self, failed=None):  # I12
        if self.engine_name != "argocd":
            return
        for app in sorted(self.engine.apps.values(), key=lambda a: a.name):
            self.engine.refresh(app)
            live = [l for k, t, l in app.resources if l is not None and t is not None and is_workload(l)]
            if not live:
                continue
            if failed is None and all(self.cluster.phase(l) == "Succeeded" for l in live) and app.health != "Healthy":
                self.flag("HEALTH", f"{app.name} reads {app.health} though each of its workloads succeeded")
            if failed is not None and any(l.get("_stage") == failed and self.cluster.phase(l) == "Failed" for l in live) \
                    and app.health == "Healthy":
                self.flag("HEALTH", f"{app.name} reads Healthy though its {failed} workload failed")

    def admit(self, stage):
        self.await_stage(stage)
        live = self.live_workload(stage)
        self.event(f"Kueue admits the {stage} workload")
        if live is None or not self.cluster.suspended(live):
            self.log("      (nothing queued)")
        elif not self.cluster.admit(live, self.event_no):
            self.log(f"      Kueue: {live['kind']}/{live['metadata']['name']}: kueue runtime patch not found; not admitted")
        else:
            self.starts(live)
        # Kueue admits whatever else is queued too (the queue has the quota): a later stage
        # created early runs now, not when the scenario reaches it
        for other in sorted(self.cluster.workloads(), key=key_of):
            if other is not live and self.cluster.suspended(other) and self.cluster.admit(other, self.event_no):
                self.log(f"      Kueue: admits {other['kind']}/{other['metadata']['name']} too")
                self.starts(other)
        self.settle(0)

    def admit_if_queued(self, stage):
        """Kueue admits the stage's workload when it exists and waits in the queue."""
        live = self.live_workload(stage)
        if live is not None and self.cluster.suspended(live):
            self.admit(stage)

    def run_stage(self, stage, minutes=30):
        self.await_stage(stage)
        self.admit_if_queued(stage)
        if self.workload(stage, "Running", 1):
            self.workload(stage, "Succeeded", minutes)

    def other_projects_wait(self, stage, n=3):
        """Flux: n more training stages on the cluster wait in health checks (other projects'
        Kustomizations; modelled as copies of this stage's Kustomization)."""
        if self.engine_name != "flux":
            return
        mine = [k for k in self.engine.ks.values() if k.path.rstrip("/").endswith(stage)]
        if not mine:
            return
        self.event(f"{n} other projects start training on this cluster (their stage Kustomizations wait like this one)")
        for i in range(2, n + 2):
            o = copy.deepcopy(public(mine[0].obj))
            o["metadata"]["name"] += f"-project{i}"
            o["spec"].pop("dependsOn", None)
            self.cluster.create_or_update(o, "kubectl")
            self.log(f"      Kustomization/{o['metadata']['name']} created")
        self.settle(1)

    def retry(self, minutes=10):
        self.event("the retry backoff elapses" if self.engine_name == "argocd" else f"{minutes:g} minutes pass")
        if self.engine_name == "argocd":
            self.engine.retry_due = True
        self.settle(minutes)

    def commit(self, stage, label, tree=None, what=None, source=None):
        """`source`: what the engine reads at this revision when it is more than this target's
        tree (tree.ProjectsTree: several projects of one repository)."""
        self.event(f"commit {label}: " + (what or f"the spec edits stage {stage} (its workload is renamed by its hash)"))
        self.failed_stages.discard(stage)
        tree = tree or EditedTree(self.tree, stage, label)
        self.tree = tree
        source = source or tree
        self.engine.tree, self.engine.revision = source, label
        if self.engine_name == "argocd":
            for app in self.engine.apps.values():
                self.engine.refresh(app)
                edits = stage is not None and not app.condition and any(
                    t.get("_stage") == stage and is_workload(t) for t in self.engine.targets(app))
                said = self.tree.summary_row("Edit while a stage runs") or ""
                if edits and app.operation is not None and app.sync == "OutOfSync":
                    what = "auto-sync is skipped" if app.automated else "a sync is refused"
                    self.log(f"      {app.name}: the edit of {stage} waits: {what} while the operation runs (A12, A13)")
                    if "auto-sync skips the commit while the pipeline's operation runs" not in said:
                        self.flag("C24", f"{app.name}: the edit of {stage} does not take effect: {what} while the "
                                         "operation runs (for the whole training), and SUMMARY.md does not say so")
            self.settle(0)
        else:
            self.engine.source_changed(source, label)
            for k in self.engine.busy():
                if get_timeout(k.spec) <= HEALTH_POLL_MAX_MINUTES:  # I7: a short poll's wait is F17's price
                    continue
                self.flag("C18", f"{k.name}: revision {label} waits until this reconcile's health check ends "
                                 f"(up to its {get_timeout(k.spec):g}m timeout; CancelHealthCheckOnNewRevision is off)")
            self.settle(60)

    def remove_target(self, label):
        """A commit whose spec no longer has this target: nemoc removes its directory."""
        self.event(f"commit {label}: the spec no longer has this target; nemoc removes its directory")
        tree = RemovedTree(self.tree, label)
        self.tree = tree
        self.engine.tree, self.engine.revision = tree, label
        if self.engine_name == "argocd":
            self.settle(0)
            for app in sorted(self.engine.apps.values(), key=lambda a: a.name):
                if app.condition:
                    self.log(f"      {app.name}: {app.condition}; sync status {app.sync}")
        else:
            self.engine.source_changed(tree, label)
            self.settle(10)

    def delete_root(self):
        """The user deletes the target's root, as SUMMARY.md "Remove this target" says; then the
        invariants of F13 (C21: data kept) and C23 (workloads gone)."""
        e = self.engine_name
        roots = self.tree.base.bootstrap_objects(e)
        said = self.tree.base.summary_row("Remove this target")
        if said is not None:  # what SUMMARY.md tells the user to run
            kind = "application" if e == "argocd" else "kustomization"
            names = re.findall(rf"`kubectl delete {kind} (\S+) -n \S+`", said)
            if e == "argocd" and not names:  # the ApplicationSet leaves its list (its policy deletes)
                names = re.findall(r"the ApplicationSet `\S+` deletes root Application `(\S+)`", said)
                # ... once the changed ApplicationSet reaches the cluster: it is applied by hand, never
                # synced from Git, so SUMMARY.md must say to apply it again (from a target that stays)
                # or to delete it (the project's last target)
                again = re.search(r"`kubectl apply --server-side -k (\S+/gitops/argocd/applicationset)`", said)
                if names and not again and "`kubectl delete applicationset " not in said:
                    self.flag("C23", "SUMMARY.md says the ApplicationSet deletes the root, but nothing applies the "
                                     "changed ApplicationSet: it is applied by hand, never synced from Git")
                if again:  # where it is once nemoc rebuilt the spec without this target (when it can)
                    gone = os.path.basename(self.tree.base.root.rstrip("/"))
                    after = rebuilt_project(self.tree.base, "without-" + gone, lambda spec: edit_without_target(spec, gone))
                    # D10: from the repository root, <out>/<project>/<target>/gitops/argocd/applicationset
                    stays = "/".join(again.group(1).split("/")[-4:])
                    if after and not os.path.isdir(os.path.normpath(os.path.join(after, stays))):
                        self.flag("C23", f"SUMMARY.md applies the ApplicationSet from {again.group(1)}, which the "
                                         "spec without this target does not have")
            if not names:
                self.flag("C23", "SUMMARY.md \"Remove this target\" names no root to delete under " + e)
        elif e == "argocd":
            names = [a["metadata"]["name"] for a in roots if a.get("kind") == "Application"
                     and a["spec"]["source"]["path"].rstrip("/").endswith("gitops/argocd")]
        else:
            names = [k["metadata"]["name"] for k in roots if k.get("kind") == "Kustomization"
                     and k["spec"]["path"].rstrip("/").endswith("gitops/flux")]
        if e == "argocd":
            self.event("the user deletes the target's root: kubectl delete application " + " ".join(names) + " -n argocd")
            for n in names:
                self.engine.delete_app(n)
        else:
            self.event("the user deletes the target's root: kubectl delete kustomization " + " ".join(names) + " -n flux-system")
            for n in names:
                self.engine.delete_ks(n)
        self.settle(0)
        base = self.tree.base
        for o in base.stage_objects():
            live = self.cluster.live.get(key_of(o))
            if live is None:
                if o.get("kind") in ("Namespace", "PersistentVolumeClaim", "PersistentVolume"):
                    self.flag("C21", f"{o['kind']}/{o['metadata']['name']} was deleted with the target: its data is lost (F13)")
            elif is_workload(o) or o.get("kind") == "Deployment":
                self.flag("C23", f"{o['kind']}/{o['metadata']['name']} still runs, tracked by nothing, after the target was removed")

    def terminate(self):
        self.event("the user terminates the running operation (argocd app terminate-op) and syncs")
        for app in sorted(self.engine.apps.values(), key=lambda a: a.name):
            if app.operation is not None:
                self.engine.terminate(app)
        self.settle(0)
        # SUMMARY.md "Edit while a stage runs" says how to sync after terminating: with prune.
        self.user_sync_again(prune="--prune" in (self.tree.summary_row("Edit while a stage runs") or ""))

    def user_sync_again(self, prune=False, serving=True):
        if self.engine_name != "argocd":
            return
        for app in sorted(self.engine.apps.values(), key=lambda a: a.name):
            if not serving and "-serving-" in app.name:
                continue
            if app.operation is None and app.sync == "OutOfSync" and not app.automated:
                self.engine.user_sync(app, prune=prune)
        self.settle(0)

    def cluster_bundle_gains(self, component):
        self.event(f"commit: a second project needs {component}: the cluster bundle gains it")
        # a new revision of the tree whose bundle holds one more file (the Tree read from disk is
        # shared by the scenarios: copy it)
        self.tree = copy.copy(self.tree)
        self.tree.bundle = dict(self.tree.bundle, files=dict(self.tree.bundle["files"]))
        self.engine.tree = self.tree
        if self.engine_name == "flux":
            bundle = self.tree.bundle
            name = f"platform-{component}"
            bundle["files"][f"flux/kustomization-{name}.yaml"] = {
                "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                "metadata": {"name": name, "namespace": "flux-system"},
                "spec": {"interval": "1h", "path": "./config/default", "prune": True,
                         "sourceRef": {"kind": "GitRepository", "name": name}}}
            self.engine.source_changed(self.tree, self.engine.revision)
            self.settle(60)
            live = ("kustomize.toolkit.fluxcd.io", "Kustomization", "flux-system", name)
            if live not in self.cluster.live:
                self.flag("C19", f"{component} is in the cluster bundle in Git but nothing applies it: "
                                 f"its CRDs never exist")
        else:
            bundle = self.tree.bundle
            c = bundle["cluster"]
            name = f"platform-{c}-{component}"
            template = next((o for p, o in sorted(bundle["files"].items()) if p.startswith("apps/argocd/")
                             and o.get("kind") == "Application"), None)
            if template is None:
                self.settle(0)
                return
            app = copy.deepcopy(template)
            app["metadata"]["name"] = name
            app["spec"]["source"] = {"repoURL": f"https://github.com/kubernetes-sigs/{component}.git",
                                     "path": "config/default", "targetRevision": "v0"}
            bundle["files"][f"apps/argocd/application-{name}.yaml"] = app
            self.settle(0)
            self.user_sync()
            got = ("jobset.x-k8s.io", "JobSet") in self.cluster.crds if component == "jobset" else None
            self.log(f"      ({component} {'installed' if got else 'not installed'}: the platform root Application "
                     "reads apps/argocd from Git)")


# -- the scenarios ---------------------------------------------------------------------------
def needs(tree, engine, what):
    if engine == "argocd" and not tree.argocd_objects():
        return False
    if engine == "flux" and not tree.flux_objects():
        return False
    kinds = {o.get("kind") for o in tree.stage_objects()}
    if what == "serve":
        return any(s.endswith("serve") for s in tree.stages)
    if what == "trainjob-kueue":
        return engine == "argocd" and any(o.get("kind") == "TrainJob" and KUEUE_QUEUE in (o["metadata"].get("labels") or {})
                                          for o in tree.stage_objects())
    if what == "train":
        return any(s.endswith("train") for s in tree.stages)
    if what == "rebuild-lr":  # a real commit: only with --nemoc (replay_test.py), for trees with a training
        return any(s.endswith("-train") for s in tree.stages) and rebuilt(tree, "lr", edit_lr) is not None
    if what == "rebuild-no-serve":
        return any(s.endswith("-serve") for s in tree.stages) and rebuilt(tree, "no-serve", edit_no_serve) is not None
    if what == "rebuild-namespace":
        return any(s.endswith("-train") for s in tree.stages) and rebuilt(tree, "namespace", edit_namespace) is not None
    if what == "two-projects":  # two projects built together, then one renamed (--nemoc)
        return any(s.endswith("-train") for s in tree.stages) and two_projects(tree) is not None
    if what == "rebuild-data":
        return any(s.endswith("-data-prep") for s in tree.stages) and rebuilt(tree, "data", edit_data_version) is not None
    if what == "train-deadline":  # the spec sets stages.train.timeout (SUMMARY.md says so)
        return any(s.endswith("train") for s in tree.stages) and tree.summary_row("Training deadline") is not None
    return bool(kinds)


def pipeline_until(r, last_suffix, minutes=30):
    """Runs every workload stage in order up to (excluding) the one ending in last_suffix."""
    for s in list(r.workload_stages()):
        if s.endswith("-" + last_suffix) or s.endswith("-serve"):
            return
        r.run_stage(s, minutes)


def s_c14(r):
    """C14: the engine is built at the end of the pipeline; serving must wait for it."""
    r.bootstrap()
    r.user_sync()
    for s in list(r.workload_stages()):
        if s.endswith("serve"):
            break
        r.run_stage(s)
    r.check_health()


def pipeline_serving(r):
    """Bootstrap, every stage succeeds in order, and Triton serves (the user syncs what is not
    automated, serving once the pipeline is done)."""
    r.bootstrap()
    r.user_sync()
    for s in list(r.workload_stages()):
        if s.endswith("serve"):
            r.user_sync_again()
            r.workload(s, "Running")
        else:
            r.run_stage(s)


def training_runs(r, minutes=1):
    """Bootstrap, every stage before the training succeeds, and the training runs; its stage."""
    r.bootstrap()
    r.user_sync()
    pipeline_until(r, "train")
    train = r.stage("train")
    r.admit_if_queued(train)
    r.workload(train, "Running", minutes=minutes)
    return train


def s_c15(r):
    """C15: the training fails; retries follow; only a commit changing the training may move on."""
    train = training_runs(r)
    r.workload(train, "Failed")
    r.check_health(failed=train)
    for _ in range(3):
        r.retry()
        nxt = [s for s, w in r.workload_stages().items() if stage_num(s) > stage_num(train) and is_workload(w)
               and r.live_workload(s) is not None
               and r.cluster.phase(r.live_workload(s)) in ("Created", "Running")]
        for s in nxt:
            r.workload(s, "Failed")
    # a commit that changes the failed stage is what may move the pipeline on
    r.commit(train, "r2")
    r.user_sync_again()
    r.run_stage(train)
    after = [s for s in r.workload_stages() if stage_num(s) > stage_num(train)]
    if after:
        r.run_stage(after[0])


def s_c18(r):
    """C18: a three-day training under Flux's health checks."""
    r.bootstrap()
    pipeline_until(r, "train", minutes=5)
    train = r.stage("train")
    r.admit_if_queued(train)
    r.other_projects_wait(train)
    queued = KUEUE_QUEUE in ((r.live_workload(train) or {}).get("metadata", {}).get("labels") or {})
    if queued:
        r.workload(train, "Running", minutes=24 * 60)
        r.workload(train, "preempted", minutes=60)
        r.admit(train)
        r.workload(train, "Running", minutes=2 * 24 * 60)
    else:
        r.workload(train, "Running", minutes=3 * 24 * 60)
    r.workload(train, "Succeeded", minutes=60)


def s_c19(r):
    """C19: a component added to the cluster bundle later must reach the cluster."""
    r.bootstrap()
    r.user_sync()
    r.cluster_bundle_gains("jobset")


def s_c24(r):
    """C24: the spec's training is edited while it runs; the user then terminates the operation."""
    train = training_runs(r)
    r.commit(train, "r2")
    if r.engine_name == "argocd":
        r.terminate()


def s_c25(r):
    """C25: health read on objects that were just created."""
    r.bootstrap()
    r.user_sync()
    first = next((s for s, w in r.workload_stages().items() if is_workload(w)), None)
    if first:
        r.await_stage(first)
        r.event(f"{first}: the workload exists; its controller has written no status yet")
        r.settle(1)
    # The HPA half: serving (and its HorizontalPodAutoscaler) is created only once the pipeline
    # has built the engine, so run the stages up to it; the HPA's health is read right after.
    for s in list(r.workload_stages()):
        if s.endswith("serve"):
            break
        r.run_stage(s)
    r.user_sync()  # Applications without automated sync (the pipeline's, then the serving one)
    r.settle(1)
    r.user_sync()
    r.settle(1)
    serve = next((s for s in r.tree.stages if s.endswith("-serve")), None)
    if serve and not r.failed_stages and r.serving_liveness:  # I10: serving follows the engine
        dep = r.workload_stages().get(serve)
        if dep is not None and r.cluster.live.get(key_of(dep)) is None:
            r.flag("STALL", f"serving ({serve}) is never applied though every stage before it succeeded")


def s_f17(r):
    """F17: the training runs past stages.train.timeout: its own controller stops it (no
    engine timeout does), and the pipeline halts there on both engines."""
    train = training_runs(r, minutes=60)
    live = r.live_workload(train)
    if live is None:  # the pipeline never reached the training (I10 says so where it matters)
        return
    secs, action = Cluster.deadline(live) or (0, "no activeDeadlineSeconds")
    said = r.tree.summary_row("Training deadline").split("`")[1]
    r.event(f"{train}: the workload runs past the spec's timeout {said} ({secs}s)"
            + (f" ({secs / 60:g} min later)" if r.engine_name == "flux" else ""))
    if secs and abs(secs - flux_minutes(said) * 60) > 1:
        r.flag("F17", f"{train}: the workload's deadline {secs}s is not the spec's timeout {said}")
    if r.cluster.deadline_passes(live, r.event_no):
        r.log(f"      {live['kind']}/{live['metadata']['name']}: Failed, reason DeadlineExceeded")
        r.failed_stages.add(train)
    else:
        r.flag("F17", f"{train}: {live['kind']}/{live['metadata']['name']} runs on past its deadline ({action})")
    r.settle(secs / 60)
    r.check_health(failed=train)
    r.retry()


def s_f14(r):
    """F14: bootstrap on an empty cluster as SUMMARY.md "Apply once" says; the pipeline's first
    stage must start without a sync failing on a kind whose CRD the cluster bundle installs."""
    r.bootstrap()
    r.user_sync()
    first = next(iter(r.workload_stages()), None)
    if first is not None:
        r.run_stage(first)


def s_c23(r):
    """C23/F13: the whole pipeline ran and Triton serves; the target is removed and its root
    deleted as SUMMARY.md says: every workload and the Triton Deployment go, the Namespace and
    the claims holding data stay."""
    pipeline_serving(r)
    r.remove_target("r2")
    r.delete_root()


def s_f15(r):
    """F15/C17: the learning rate is edited while the training runs (a real commit: the spec
    rebuilt by nemoc); the user then terminates the operation and syncs with prune, as
    SUMMARY.md says. The new run starts in a new state directory and never resumes the old run's
    checkpoints; the old directory stays."""
    train = training_runs(r)
    edited = rebuilt(r.tree, "lr", edit_lr)
    old = r.live_workload(train)
    r.commit(train, "r2", tree=edited, what="the spec changes stages.train.optimizer.lr (nemoc rebuilt the tree)")
    if r.engine_name == "argocd":
        r.terminate()
    for s in r.workload_stages():  # stages the edit renamed before the training run again first
        if stage_num(s) >= stage_num(train):
            break
        if not r.succeeded(s):
            r.run_stage(s)
    r.admit_if_queued(train)
    r.workload(train, "Running")
    new = r.live_workload(train)
    if new is None or old is None or key_of(new) == key_of(old):
        r.flag("STALL", f"the edited {train} workload was not created")
        return
    was, now = r.run_states.get(key_of(old), (set(),))[0], r.run_states.get(key_of(new), (set(),))[0]
    r.log(f"      {train}: {old['metadata']['name']} wrote {sorted(was)}; {new['metadata']['name']} writes {sorted(now)}")
    if was & now:
        r.flag("C17", f"the edited training writes the old run's directory {sorted(was & now)[0]}: it resumes the old run")


def s_f16(r):
    """F16: the pipeline ran to the engine; new data (stages.dataPrep.version) is committed. The
    data is prepared into a new set and every stage after it runs again, in order, in new state
    directories; the old ones stay."""
    r.bootstrap()
    r.user_sync()
    stages = [s for s, w in r.workload_stages().items() if is_workload(w)]
    for s in stages:
        r.run_stage(s)
    before = {s: r.run_states.get(key_of(r.live_workload(s)), (set(),))[0] for s in stages if r.live_workload(s)}
    edited = rebuilt(r.tree, "data", edit_data_version)
    prep = r.stage("data-prep")
    r.commit(prep, "r2", tree=edited, what="the spec sets stages.dataPrep.version (new data; nemoc rebuilt the tree)")
    r.user_sync_again(prune=True, serving=False)  # the pipeline; serving once the new engine exists
    for s in stages:
        if not r.succeeded(s):
            r.run_stage(s)
            r.user_sync_again(prune=True, serving=False)
    serve = r.stage("serve")
    if serve:
        r.user_sync_again(prune=True)
        r.workload(serve, "Running")
    for s in stages:  # what reads the data, directly or through a stage that does (not the model import)
        if stage_num(s) < stage_num(prep) or s not in before or s.endswith("-import-model"):
            continue
        live = r.live_workload(s)
        now = r.run_states.get(key_of(live), (set(),))[0] if live else set()
        if not now or now & before[s]:
            r.flag("C16", f"after new data, stage {s} " + ("did not run again" if not now else
                          f"writes its old directory {sorted(now & before[s])[0]}"))


def s_c21(r):
    """C21/F13: the data is prepared and the training has run; the spec renames its namespace (a
    real commit: nemoc rebuilt the tree). The workloads start over in the new namespace; the old
    Namespace and the claims holding data stay, on both engines."""
    r.bootstrap()
    r.user_sync()
    pipeline_until(r, "evaluate")
    old_ns = (r.tree.stage_objects()[0]["metadata"].get("namespace")
              or next(o["metadata"]["name"] for o in r.tree.stage_objects() if o.get("kind") == "Namespace"))
    kept = {k for k in r.cluster.live if (k[1] == "PersistentVolumeClaim" and k[2] == old_ns)
            or (k[1] == "Namespace" and k[3] == old_ns)}
    edited = rebuilt(r.tree, "namespace", edit_namespace)
    r.commit(None, "r2", tree=edited, what="the spec renames spec.namespace (nemoc rebuilt the tree)")
    r.user_sync_again(prune=True, serving=False)
    if r.engine_name == "flux":
        r.settle(10)
    r.log(f"      kept from {old_ns}: " + ", ".join(sorted(f"{k[1]}/{k[3]}" for k in kept if k in r.cluster.live)))
    for k in sorted(kept):
        if k not in r.cluster.live:
            r.flag("C21", f"the rename deleted {k[1]} {k[3]}" + (f" in {k[2]}" if k[2] else "") + " and its data")
    if not any(k[1] == "PersistentVolumeClaim" for k in kept):
        r.log("      (this target keeps no claim: its results volume is mounted directly)")


def s_c23_serve(r):
    """C23/F13: the whole pipeline ran and Triton serves; the spec drops stages.serve (a real commit:
    nemoc rebuilt the tree) and the user syncs with prune. The serving Application (Argo CD) or
    Kustomization (Flux) is pruned, its finalizer deletes Triton's Deployment and Service; the
    claims holding data stay."""
    pipeline_serving(r)
    serving = [o for o in r.tree.stage_objects() if o.get("_stage", "").endswith("-serve")
               and o.get("kind") in ("Deployment", "Service", "HorizontalPodAutoscaler")]
    kept = [o for o in r.tree.stage_objects() if o.get("kind") in ("PersistentVolumeClaim", "PersistentVolume")]
    edited = rebuilt(r.tree, "no-serve", edit_no_serve)
    r.commit(None, "r2", tree=edited, what="the spec drops stages.serve (nemoc rebuilt the tree)")
    r.user_sync_again(prune=True)
    if r.engine_name == "flux":
        r.settle(10)
    for o in serving:
        if key_of(o) in r.cluster.live:
            r.flag("C23", f"{o['kind']}/{o['metadata']['name']} still runs after serve left the spec")
    for o in kept:
        if key_of(o) not in r.cluster.live:
            r.flag("C21", f"{o['kind']}/{o['metadata']['name']} was deleted with serving: its data is lost (F13)")
    r.log(f"      serving objects live: {sum(key_of(o) in r.cluster.live for o in serving)} of {len(serving)}; "
          f"claims kept: {sum(key_of(o) in r.cluster.live for o in kept)} of {len(kept)}")


def s_c20(r):
    """C20/F13, one owner per object: two projects of one repository share a namespace on one
    cluster (each built by nemoc; the cluster bundle merged from both). Project a's pipeline has
    run and Triton serves; project b's training runs. Project a renames its namespace (a real commit: nemoc rebuilt a,
    b unchanged on disk) and the user syncs with prune. b's Namespace and running training are
    untouched (K7: deleting a Namespace deletes everything in it), a's old claims stay, and no
    object is desired by two Applications/Kustomizations at any point."""
    (a1, b1), (a2, b2), root1, root2 = two_projects(r.tree)
    e = r.engine_name
    r.engine.tree = ProjectsTree([a1, b1], root1, "r1")
    r.tree = a1
    r.bootstrap()
    r.event(f"the second project bootstraps: what its SUMMARY.md \"Apply once\" names for {e}")
    for o in b1.bootstrap_objects(e):
        ok, msg = r.cluster.create_or_update(copy.deepcopy(o), "kubectl")
        r.log(f"      kubectl: {o['kind']}/{o['metadata']['name']} {msg}")
    r.settle(0)
    r.user_sync()
    for s in list(r.workload_stages()):  # project a: every stage succeeded, Triton serves
        if s.endswith("serve"):
            r.user_sync_again()
            r.workload(s, "Running")
        else:
            r.run_stage(s)
    r.tree = b1
    pipeline_until(r, "train")
    train_b = r.stage("train")
    r.admit_if_queued(train_b)
    r.workload(train_b, "Running")  # project b: its training runs
    running_b = r.live_workload(train_b)
    r.tree = a1
    one_owner(r)
    ns = next(iter({(o["metadata"].get("namespace") or "") for o in b1.stage_objects()} - {""}))
    kept_a = {k for k in r.cluster.live if k[1] == "PersistentVolumeClaim" and k[2] == ns
              and any(key_of(o) == k for o in a1.stage_objects())}
    r.commit(None, "r2", tree=a2, source=ProjectsTree([a2, b2], root2, "r2"),
             what="project a renames spec.namespace (nemoc rebuilt a; b unchanged)")
    r.user_sync_again(prune=True, serving=False)
    if e == "flux":
        r.settle(10)
    one_owner(r)
    if ("", "Namespace", "", ns) not in r.cluster.live:
        r.flag("C20", f"project a's rename deleted Namespace {ns}, which project b uses")
    live = r.cluster.live.get(key_of(running_b)) if running_b else None
    if running_b is None or live is None or r.cluster.phase(live) != "Running":
        r.flag("C20", f"project b's training {train_b} no longer runs after project a's rename"
                      + ("" if running_b is None else f" ({'deleted' if live is None else r.cluster.phase(live)})"))
    for k in sorted(kept_a):
        if k not in r.cluster.live:
            r.flag("C21", f"project a's rename deleted PersistentVolumeClaim {k[3]} and its data")
    r.log(f"      project b's {train_b}: " + ("running" if live is not None and r.cluster.phase(live) == "Running" else "GONE")
          + f"; Namespace {ns}: " + ("kept" if ("", "Namespace", "", ns) in r.cluster.live else "DELETED")
          + f"; project a's claims kept: {sum(k in r.cluster.live for k in kept_a)} of {len(kept_a)}")


def one_owner(r):
    """I14: every object the engines apply is desired by one Application or Kustomization only
    (argo-cd v3.5.1 controller/state.go:804-812 SharedResourceWarning; two Kustomizations with one
    object in their inventories: the first to prune it deletes it for the other)."""
    want = {}
    if r.engine_name == "argocd":
        units = [(a.name, r.engine.targets(a)) for a in r.engine.apps.values()]
    else:
        units = [(k.name, r.engine.objects_of(k)) for k in r.engine.ks.values()]
    for name, objs in units:
        for o in objs if isinstance(objs, list) else []:
            want.setdefault(key_of(o), set()).add(name)
    for k, names in sorted(want.items()):
        if len(names) > 1:
            r.flag("C20", f"{k[1]}/{k[3]} is applied by {' and '.join(sorted(names))}: two owners")


def s_b21(r):
    """B21: a Kueue-queued TrainJob under Argo CD."""
    r.bootstrap()
    r.user_sync()
    train = r.stage("train")
    r.admit(train)
    r.workload(train, "Running")
    r.workload(train, "Succeeded")


SCENARIOS = {
    "C14-serving-before-engine": (s_c14, "any", ("argocd", "flux")),
    "C15-retry-after-failed-stage": (s_c15, "train", ("argocd", "flux")),
    "C18-flux-workers-held": (s_c18, "train", ("flux",)),
    "C19-cluster-bundle-root": (s_c19, "any", ("argocd", "flux")),
    "C24-edit-while-training": (s_c24, "train", ("argocd", "flux")),
    "C25-health-of-new-objects": (s_c25, "any", ("argocd", "flux")),
    "C23-remove-target": (s_c23, "train", ("argocd", "flux")),
    "F14-bootstrap-order": (s_f14, "any", ("argocd", "flux")),
    "F17-train-deadline": (s_f17, "train-deadline", ("argocd", "flux")),
    "B21-trainjob-kueue-runtime-patch": (s_b21, "trainjob-kueue", ("argocd",)),
    "F15-edit-lr-while-training": (s_f15, "rebuild-lr", ("argocd", "flux")),
    "F16-new-data": (s_f16, "rebuild-data", ("argocd", "flux")),
    "C21-rename-namespace": (s_c21, "rebuild-namespace", ("argocd", "flux")),
    "C23-remove-serve": (s_c23_serve, "rebuild-no-serve", ("argocd", "flux")),
    "C20-two-projects-one-namespace": (s_c20, "two-projects", ("argocd", "flux")),
}


def run(name, engine, tree, example):
    fn, what, engines = SCENARIOS[name]
    if engine not in engines or not needs(tree, engine, what):
        return None
    r = Replay(engine, tree, example)
    r.log(f"# {name} on {example} under {'Argo CD v3.5.1' if engine == 'argocd' else 'kustomize-controller v1.9.4'}")
    fn(r)
    return r
