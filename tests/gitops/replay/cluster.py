"""The cluster the engines act on: live objects, CRDs, the workload controllers, Kueue.

Only what the GitOps engines observe is modelled: whether an object exists, its spec as applied,
the fields other controllers changed (`drift`), and the status a workload reports. Status objects
are written in the shape the real controllers write them, so the health checks nemoc generates
(Argo CD Lua, Flux CEL) read them with their own evaluators.

Rules of other controllers the replay needs, each with its upstream source:
  K1 Kueue's TrainJob webhook (mutating, create only) appends its own entry, manager
     "kueue.x-k8s.io/manager", to spec.runtimePatches (kueue v0.19.2
     pkg/controller/jobs/trainjob/trainjob_webhook.go:65,91-102); admission needs that entry
     (trainjob_controller.go:76,279: "kueue runtime patch not found").
  K2 Trainer's defaulter stamps `time` on every runtime patch on create (trainer v2.3.0
     pkg/webhooks/trainjob_webhook.go:64-70), and a change of spec.runtimePatches is refused unless
     the TrainJob is suspended before or after the update (trainer v2.3.0
     pkg/runtime/framework/plugins/jobset/jobset.go:223-232).
  K3 A client-side apply of a custom resource is a JSON merge patch: a list that differs from
     the applied configuration is replaced whole (gitops-engine pkg/utils/json/json.go:39-50 at
     argo-cd v3.5.1 keeps the live list's extra elements in the diff, so they show OutOfSync).
  K4 Deleting an object is asynchronous: its pods keep running for their grace period, and a
     workload the GitOps engine no longer manages (not pruned) keeps running to its end.
  K6 A namespaced object whose Namespace does not exist is refused: 'namespaces "<ns>" not found'
     (the API server's NamespaceLifecycle admission plugin); Argo CD's CreateNamespace=true
     creates it first (A15), kustomize-controller does not.
  K7 Deleting a Namespace deletes every object in it (delete() below).
  V1 Volcano's job controller (the Volcano Job of tests/extending/azure's --jpath runtime, issue #48)
     reports a phase, not conditions of its own: its first sync sets status.state.phase Pending
     and appends a condition of that type (volcano-sh/volcano v1.15.1
     pkg/controllers/job/job_controller_actions.go:966-975 initJobStatus); Running once its pods
     run, Completed when they succeed, Failed once maxRetry restarts are used up
     (pkg/controllers/job/state/running.go:61-102), each appended as a condition too.
  K5 A workload controller's first reconcile, seconds after creation (before Flux's second 5 s
     poll, long before any scenario event), writes a status: PyTorchJob/MPIJob the Created
     condition (kubeflow/training-operator v1.9.0 pkg/controller.v1/pytorch/
     pytorchjob_controller.go:516-527, persisted by the reconcile), plus Suspended when Kueue
     holds it (pkg/controller.v1/common/job.go:146-160); JobSet and TrainJob a status without
     conditions while they run (jobset v0.12.0 status.replicatedJobsStatus; trainer v2.3.0
     status.jobsStatus, its Created condition removed by kubeflow/trainer#2621), with a Suspended
     condition when suspended. The replay writes it at creation. The object without any status
     (before that reconcile) is status-fixtures.json's "no status" case, which
     tests/gitops/engine_logic.py reads.
"""
import copy

from tree import WORKLOAD_KINDS, group_of, is_workload, key_of

KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"
KUEUE_MANAGER = "kueue.x-k8s.io/manager"

# CRDs each platform component of the cluster bundle installs (the components' own charts and
# kustomizations at the versions the bundle pins).
COMPONENT_CRDS = {
    # volcano-sh/volcano@v1.15.1:installer/helm/chart/volcano/crd/bases/ (the --jpath component of
    # tests/extending/azure).
    "volcano": {("batch.volcano.sh", "Job"), ("batch.volcano.sh", "CronJob"), ("scheduling.volcano.sh", "PodGroup"),
                ("scheduling.volcano.sh", "Queue"), ("bus.volcano.sh", "Command")},
    "training-operator": {("kubeflow.org", "PyTorchJob"), ("kubeflow.org", "MPIJob")},
    "jobset": {("jobset.x-k8s.io", "JobSet")},
    "trainer": {("trainer.kubeflow.org", "TrainJob"), ("trainer.kubeflow.org", "TrainingRuntime"),
                ("trainer.kubeflow.org", "ClusterTrainingRuntime")},
    "kueue": {("kueue.x-k8s.io", k) for k in ("ClusterQueue", "LocalQueue", "ResourceFlavor", "Topology")},
    "prometheus-operator": {("monitoring.coreos.com", "ServiceMonitor"), ("monitoring.coreos.com", "PrometheusRule")},
    "network-operator": {("mellanox.com", "NicClusterPolicy")},
    "gpu-operator": set(),
}
BUILTIN_GROUPS = {"", "apps", "batch", "policy", "autoscaling", "rbac.authorization.k8s.io",
                  "networking.k8s.io", "storage.k8s.io", "argoproj.io", "kustomize.toolkit.fluxcd.io",
                  "source.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io"}


def _suspend_path(obj):
    return WORKLOAD_KINDS.get((group_of(obj.get("apiVersion", "")), obj.get("kind")))


def is_volcano(obj):
    return group_of(obj.get("apiVersion", "")) == "batch.volcano.sh"


def volcano_status(phase):
    """V1: the status Volcano's job controller writes for `phase`."""
    return {"state": {"phase": phase}, "conditions": [{"type": phase, "status": "True"}]}


def get_path(obj, path):
    for p in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(p)
    return obj


def set_path(obj, path, value):
    for p in path[:-1]:
        obj = obj.setdefault(p, {})
    obj[path[-1]] = value


# Status conditions per workload kind, as their controllers write them (and as the Lua/CEL
# health checks and ../shared/upstream/gitops/status-fixtures.json read them).
DONE_CONDITION = {"Job": "Complete", "PyTorchJob": "Succeeded", "MPIJob": "Succeeded",
                  "JobSet": "Completed", "TrainJob": "Complete"}


class Cluster:
    # A cluster Argo CD and Flux are installed on: their namespaces exist (K6).
    SYSTEM_NAMESPACES = ("default", "kube-system", "argocd", "flux-system")

    def __init__(self, log):
        self.live = {("", "Namespace", "", n): {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n},
                                                "_drift": set(), "_applied": {}}
                     for n in self.SYSTEM_NAMESPACES}  # key -> object (spec as applied, plus controllers' status)
        self.crds = set()      # (group, kind) of custom resources the API server serves
        self.log = log
        self.metrics = False   # whether the HPA's custom metric exists (prometheus adapter)
        self.refused_admission = set()
        self.history = []      # (event index, key, phase) of every workload phase change

    # -- API server -------------------------------------------------------------------------
    def served(self, obj):
        g = group_of(obj.get("apiVersion", ""))
        return g in BUILTIN_GROUPS or (g, obj.get("kind")) in self.crds

    def install_component(self, component):
        new = COMPONENT_CRDS.get(component, set()) - self.crds
        self.crds |= new
        return new

    def create_or_update(self, target, who, merge="client-side"):
        """Applies target; returns (ok, message). Other controllers' webhooks run here."""
        if not self.served(target):
            return False, f'no matches for kind "{target["kind"]}" in version "{target["apiVersion"]}"'
        ns = (target.get("metadata") or {}).get("namespace")
        if ns and ("", "Namespace", "", ns) not in self.live:  # the API server: K6
            return False, f'namespaces "{ns}" not found'
        k = key_of(target)
        cur = self.live.get(k)
        if cur is None:
            obj = copy.deepcopy(target)
            obj["_drift"] = set()
            obj["_applied"] = copy.deepcopy(target)
            self._on_create(obj)
            self.live[k] = obj
            return True, "created"
        # an update (client-side apply: JSON merge patch, K3)
        if target.get("kind") == "TrainJob":
            rp_live = get_path(cur, ("spec", "runtimePatches"))
            rp_git = get_path(target, ("spec", "runtimePatches"))
            if rp_live != rp_git:
                if not self.suspended(cur):
                    return False, ("admission webhook \"validator.trainjob.trainer.kubeflow.org\" denied the request: "
                                   "RuntimePatches can only be modified when the TrainJob is suspended before or "
                                   "after the update (K2)")
                set_path(cur, ("spec", "runtimePatches"), copy.deepcopy(rp_git))
                # Trainer's defaulter stamps `time` again on this update (trainjob_webhook.go:73-90),
                # so the TrainJob stays OutOfSync and self-heal repeats with its backoff; the replay
                # does not model that backoff and lets the update settle.
                cur["_drift"].discard("/spec/runtimePatches")
                if not any(p.get("manager") == KUEUE_MANAGER for p in rp_git or []):
                    self.refused_admission.add(k)
                    self.log(f"      Kueue: TrainJob {k[3]}: kueue runtime patch not found: it can never be admitted (K1)")
        # the live object takes the applied spec; fields other controllers own (drift) and the
        # status keep their live values
        new = copy.deepcopy(target)
        for p in cur["_drift"]:
            path = tuple(p.strip("/").split("/"))
            set_path(new, path, copy.deepcopy(get_path(cur, path)))
        for k in ("status", "_drift", "_owner", "_installed"):
            if k in cur:
                new[k] = cur[k]
        new["_applied"] = copy.deepcopy(target)
        cur.clear()
        cur.update(new)
        return True, "configured"

    def delete(self, key):
        # K4: the pods of a deleted workload stop within their grace period; the replay drops
        # the object at once (a deleted workload is not counted as running).
        # K7: a deleted Namespace takes every object in it (the namespace controller deletes each
        # namespaced resource before it removes the Namespace's finalizer: kubernetes
        # pkg/controller/namespace/deletion/namespaced_resources_deleter.go).
        if key[:2] == ("", "Namespace"):
            for k in [k for k in self.live if k[2] == key[3]]:
                self.live.pop(k, None)
        return self.live.pop(key, None)

    def first_status(self, obj):  # K5
        kind = obj.get("kind")
        if is_volcano(obj):  # V1
            obj["status"] = volcano_status("Pending")
            return
        suspended = [{"type": "Suspended", "status": "True", "reason": "Suspended"}] if self.suspended(obj) else []
        if kind in ("PyTorchJob", "MPIJob"):
            obj["status"] = {"conditions": [{"type": "Created", "status": "True", "reason": f"{kind}Created"}] + suspended}
        elif kind == "JobSet":
            obj["status"] = {"replicatedJobsStatus": []} | ({"conditions": suspended} if suspended else {})
        elif kind == "TrainJob":
            obj["status"] = {"jobsStatus": []} | ({"conditions": suspended} if suspended else {})

    def _on_create(self, obj):
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if obj.get("kind") == "TrainJob":  # K2: Trainer's defaulter
            for p in obj["spec"].get("runtimePatches") or []:
                p.setdefault("time", "<creation time>")
                obj["_drift"].add("/spec/runtimePatches")
        if obj.get("kind") == "TrainJob" and KUEUE_QUEUE in labels:
            # K1: Kueue's create-only webhook.
            obj["spec"].setdefault("runtimePatches", []).append(
                {"manager": KUEUE_MANAGER, "trainingRuntimeSpec": {"template": {"spec": {}}}, "time": "<creation time>"})
            obj["_drift"].add("/spec/runtimePatches")
            self.log(f"      Kueue webhook: TrainJob {obj['metadata']['name']}: appended its runtimePatches entry")
        if obj.get("kind") == "HorizontalPodAutoscaler" and not self.metrics:
            obj["status"] = {"conditions": [
                {"type": "AbleToScale", "status": "True", "reason": "SucceededGetScale"},
                {"type": "ScalingActive", "status": "False", "reason": "FailedGetPodsMetric",
                 "message": "unable to get metric: no custom metrics API (custom.metrics.k8s.io)"}]}
        self.first_status(obj)

    # -- workloads ----------------------------------------------------------------------------
    def suspended(self, obj):
        path = _suspend_path(obj)
        return bool(path and get_path(obj, path) is True)

    def phase(self, obj):
        """Queued / Running / Succeeded / Failed / Created, read from the status written below."""
        if self.suspended(obj):
            return "Queued"
        if is_volcano(obj):  # V1
            phase = ((obj.get("status") or {}).get("state") or {}).get("phase")
            return {"Running": "Running", "Restarting": "Running", "Completing": "Running", "Completed": "Succeeded",
                    "Failed": "Failed", "Aborted": "Failed", "Terminated": "Failed"}.get(phase, "Created")
        if obj.get("kind") == "Job" and (obj.get("status") or {}).get("active"):
            return "Running"
        status = obj.get("status") or {}
        if any(j.get("active") for j in status.get("replicatedJobsStatus") or status.get("jobsStatus") or []):
            return "Running"
        for c in (obj.get("status") or {}).get("conditions") or []:
            if c.get("status") == "True":
                if c["type"] == "Failed":
                    return "Failed"
                if c["type"] == DONE_CONDITION.get(obj["kind"]):
                    return "Succeeded"
                if c["type"] == "Running":
                    return "Running"
        return "Created"

    def set_workload(self, obj, phase, event_no):
        """A workload controller reports phase (Running, Succeeded, Failed, preempted)."""
        kind = obj["kind"]
        if is_volcano(obj):  # V1
            if phase not in ("Running", "Succeeded", "Failed"):
                return False  # nothing preempts it (no Kueue)
            obj["status"] = volcano_status({"Running": "Running", "Succeeded": "Completed", "Failed": "Failed"}[phase])
            self.history.append((event_no, key_of(obj), phase))
            return True
        if phase == "Running":
            if self.suspended(obj):
                return False
            obj["status"] = {"conditions": [{"type": "Running", "status": "True", "reason": "Running"}]}
            if kind == "Job":
                obj["status"] = {"active": 1}
            if kind in ("JobSet", "TrainJob"):  # K5: no Running condition; Suspended False once resumed
                was = [c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == "Suspended"]
                resumed = [{"type": "Suspended", "status": "False", "reason": "Resumed"}] if was else []
                field = "replicatedJobsStatus" if kind == "JobSet" else "jobsStatus"
                obj["status"] = {field: [{"name": "node", "active": 1}]} | ({"conditions": resumed} if resumed else {})
        elif phase in ("Succeeded", "Failed"):
            ctype = DONE_CONDITION[kind] if phase == "Succeeded" else "Failed"
            obj["status"] = {"conditions": [{"type": ctype, "status": "True", "reason": phase,
                                             "message": f"{kind} {phase.lower()}"}]}
        elif phase == "preempted":  # Kueue evicts: suspends the workload again
            set_path(obj, _suspend_path(obj), True)
            obj["_drift"].add("/" + "/".join(_suspend_path(obj)))
            obj["status"] = {"conditions": [{"type": "Suspended", "status": "True", "reason": "Preempted"}]}
        self.history.append((event_no, key_of(obj), phase if phase != "preempted" else "Queued"))
        return True

    @staticmethod
    def deadline(obj):
        """The workload's own deadline in seconds and what the controller does past it
        ("fail", or "restart" for a JobSet whose failurePolicy has no FailJobSet rule for the
        reason DeadlineExceeded: its Jobs are re-created, each with a new deadline); None: no
        deadline. batch/v1 Job spec.activeDeadlineSeconds; PyTorchJob spec.runPolicy; TrainJob
        spec.activeDeadlineSeconds (trainer v2.3.0 CRD); JobSet: its Jobs' (jobset v0.12.0
        FailurePolicyRule onJobFailureReasons, action FailJobSet; no rule: RestartJobSet)."""
        secs = min([h["activeDeadlineSeconds"] for h in Cluster.deadline_holders(obj)
                    if h.get("activeDeadlineSeconds")] or [0]) or None
        if secs is None:
            return None
        if obj.get("kind") != "JobSet":
            return secs, "fail"
        rules = ((obj.get("spec") or {}).get("failurePolicy") or {}).get("rules") or []
        fails = any(r.get("action") == "FailJobSet" and "DeadlineExceeded" in (r.get("onJobFailureReasons") or [])
                    for r in rules)
        return secs, "fail" if fails else "restart"

    @staticmethod
    def deadline_holders(obj):
        """The parts of a workload's spec whose activeDeadlineSeconds its controller reads (see
        deadline()); mutations.py drops the field from each."""
        spec = obj.get("spec") or {}
        kind = obj.get("kind")
        if kind in ("Job", "TrainJob"):
            return [spec]
        if kind == "PyTorchJob":
            return [spec.get("runPolicy") or {}]
        if kind == "JobSet":
            return [r["template"]["spec"] for r in spec.get("replicatedJobs") or []]
        return []

    def deadline_passes(self, obj, event_no):
        """The workload has run past its deadline: its controller fails it (reason
        DeadlineExceeded) or, for a JobSet without a rule, restarts it. False: nothing bounds it."""
        d = self.deadline(obj)
        if d is None or self.phase(obj) != "Running":
            return False
        if d[1] == "restart":
            obj["status"] = {"conditions": [{"type": "Running", "status": "True", "reason": "Restarted"}]}
            return False
        obj["status"] = {"conditions": [{"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
                                         "message": f"{obj['kind']} was active longer than its deadline"}]}
        if obj["kind"] == "Job":
            obj["status"]["failed"] = 1
        self.history.append((event_no, key_of(obj), "Failed"))
        return True

    def admit(self, obj, event_no):
        """Kueue admits a queued workload: unsuspends it (its controller then runs it)."""
        k = key_of(obj)
        if k in self.refused_admission:
            return False
        set_path(obj, _suspend_path(obj), False)
        obj["_drift"].add("/" + "/".join(_suspend_path(obj)))
        return True

    def workloads(self):
        return [o for o in self.live.values() if is_workload(o)]
