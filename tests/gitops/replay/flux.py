"""kustomize-controller v1.9.4 reconciling a nemoc tree (KC = fluxcd/kustomize-controller at tag
v1.9.4, read with `git show v1.9.4:<path>`; FP = fluxcd/pkg as field-review.md pins it).

  F1  4 concurrent reconciles by default (KC main.go:113 --concurrent=4); a reconcile holds its
      worker for its whole run, health checks included (controller-runtime MaxConcurrentReconciles,
      KC main.go:235)
  F2  dependsOn: every dependency must exist, have observedGeneration == generation, Ready=True
      and, with the same source, lastAppliedRevision == the source revision
      (KC internal/controller/kustomization_controller.go:551-630); otherwise requeue after
      --requeue-dependency=30s (:258-262, KC main.go:115)
  F3  apply, then prune the inventory's stale objects when spec.prune, except objects annotated
      kustomize.toolkit.fluxcd.io/prune: disabled (:504, :1095-1125, :1411); an existing object
      annotated kustomize.toolkit.fluxcd.io/ssa: IfNotPresent is Skipped (FP ssa/manager_apply.go)
  F4  checkHealth (:997-1087): without healthChecks and wait=false nothing is checked; with
      wait=false the healthChecks references are the objects checked (:1025-1030), with wait=true
      the applied objects except Skipped ones (:1008-1016); WaitForSetWithContext polls every 5s up
      to GetTimeout() (:1059-1064), inside the reconcile (F1)
  F5  GetTimeout = spec.timeout, else interval - 30s, never below 30s
      (KC api/v1/kustomization_types.go:383-392); GetRetryInterval = spec.retryInterval, else
      interval (:395-400)
  F6  a failed reconcile (health check timeout or failure) sets Ready=False HealthCheckFailed
      (:1065-1071) with WaitForSet's message, "timeout waiting for: [Kind/ns/name status:
      'InProgress']" or "failed early due to stalled resources: [... status: 'Failed']" (FP
      ssa/v0.76.1 ssa/manager_wait.go:176-196), and requeues after GetRetryInterval (:295-305); a
      success requeues after interval (:308)
  F7  a new source revision does not cancel a running health check unless the
      CancelHealthCheckOnNewRevision gate is on; it is off by default
      (KC internal/features/features.go:94-96)
  F8  status readers: batch/v1 Job by FP runtime/statusreaders/job.go (a suspended Job is
      Current), then the CEL reader of healthCheckExprs (an evaluation error is Unknown:
      FP runtime/cel/status_evaluator.go; cli-utils statusreaders/common.go:181-186), else kstatus
      generic rules (objects without conditions are Current once they exist)
  F9  a path missing from the source artifact: Ready=False ArtifactFailed "kustomization path not
      found", before anything is applied or pruned (:377-381)
  F10 deleting a Kustomization: with spec.prune (deletionPolicy MirrorPrune, the default) and not
      suspended, its finalizer deletes the inventory (:1157-1175) except objects annotated
      kustomize.toolkit.fluxcd.io/prune: disabled (deleteObjects Exclusions :1407-1413); a deleted
      Kustomization in the inventory runs its own finalizer
  F11 helm-controller installs a HelmRelease on its own schedule, after the Kustomization that
      applied it moved on (here: a minute later), and only then sets Ready=True (helm-controller
      v1.6.3 internal/reconcile/atomic_release.go); a Kustomization waiting on it reads it
      InProgress until then (kstatus reads the Ready condition). Objects of the chart's CRDs
      applied before that fail with "no matches for kind" (field review B25).
"""
import copy
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from health_eval import job_reader  # noqa: E402  F8 (the port ../engine_logic.py checks)
from tree import component_of, group_of, key_of  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WORKERS = 4                   # F1
DEPENDENCY_REQUEUE = 0.5      # F2: 30 s, in minutes
HEALTH_POLL_MAX_MINUTES = 10  # field-review.md F17: timeout <= 10 m


def minutes(d):
    """A Go duration string ("30m", "1h", "30s", "1h30m") in minutes."""
    if d is None:
        return None
    total, num = 0.0, ""
    for ch in d:
        if ch.isdigit() or ch == ".":
            num += ch
        else:
            total += float(num) * {"h": 60, "m": 1, "s": 1 / 60}[ch]
            num = ""
    return total


def waited_for(refs, statuses, shown):
    """The message of WaitForSetWithContext's error: "[Kind/namespace/name status: 'S', ...]"
    (FP ssa/v0.76.1 ssa/manager_wait.go:176-196, utils.FmtObjMetadata)."""
    return "[" + ", ".join(f"{r['kind']}/{r['namespace'] + '/' if r.get('namespace') else ''}{r['name']} status: '{s}'"
                           for r, s in zip(refs, statuses) if s in shown) + "]"


def get_timeout(spec):  # F5
    t = minutes(spec.get("timeout"))
    if t is None:
        t = minutes(spec.get("interval")) - 0.5
    return max(t, 0.5)


def get_retry_interval(spec):  # F5
    r = minutes(spec.get("retryInterval"))
    return r if r is not None else minutes(spec.get("interval"))


_cel_cache = {}


def cel(exprs, obj):
    """Flux's CEL reader through @bufbuild/cel (tests/gitops/cel_eval.mjs), cached."""
    from argocd import public
    # the cache key holds what the expressions nemoc generates can read (status, the
    # generations cel_eval.mjs compares, the suspend flags); the whole object goes to CEL
    spec = obj.get("spec") or {}
    key = json.dumps([exprs, obj.get("status"), (obj.get("metadata") or {}).get("generation"),
                      spec.get("suspend"), (spec.get("runPolicy") or {}).get("suspend")], sort_keys=True, default=list)
    if key not in _cel_cache:
        r = subprocess.run(["node", os.path.join(HERE, "..", "cel_eval.mjs")],
                           input=json.dumps([{"exprs": exprs, "object": public(obj)}], default=list),
                           capture_output=True, text=True, cwd=os.path.join(HERE, ".."))
        if r.returncode != 0:
            raise RuntimeError("cel_eval.mjs: " + r.stderr)
        _cel_cache[key] = json.loads(r.stdout)[0]
    return _cel_cache[key]


class Kustomization:
    def __init__(self, obj):
        self.obj = obj
        self.applied = copy.deepcopy(obj.get("_applied"))  # the spec this model was built from
        self.name = obj["metadata"]["name"]
        s = obj["spec"]
        self.spec = s
        self.path = s["path"]
        self.depends_on = [d["name"] for d in s.get("dependsOn") or []]
        self.exprs = {(group_of(e["apiVersion"]), e["kind"]): {k: e.get(k) for k in ("current", "failed", "inProgress")}
                      for e in s.get("healthCheckExprs") or []}
        self.ready = None          # Ready condition: None (unknown), True, False
        self.reason = ""
        self.last_applied = None   # status.lastAppliedRevision
        self.inventory = set()
        self.next_at = 0.0         # when the controller reconciles it next
        self.waiting = None        # (started, deadline, objects) while a worker waits in checkHealth
        self.max_hold = 0.0
        self.cycles = 0            # health-check waits since the last success (transcript only)


class Flux:
    def __init__(self, cluster, log, flag):
        self.cluster, self.log, self.flag = cluster, log, flag
        self.tree = None
        self.revision = None
        self.repo_url = None
        self.now = 0.0
        self.ks = {}
        self.on_step = None

    # -- objects --------------------------------------------------------------------------
    def discover(self):
        for k, o in sorted(self.cluster.live.items()):
            if k[:2] == ("kustomize.toolkit.fluxcd.io", "Kustomization") and o["metadata"]["name"] not in self.ks:
                self.ks[o["metadata"]["name"]] = Kustomization(o)
                self.ks[o["metadata"]["name"]].next_at = self.now
        for name, k in list(self.ks.items()):
            live = self.cluster.live.get(("kustomize.toolkit.fluxcd.io", "Kustomization", "flux-system", name))
            if live is None:
                del self.ks[name]
            elif live.get("_applied") != k.applied:
                keep = k
                self.ks[name] = Kustomization(live)
                self.ks[name].__dict__.update({a: getattr(keep, a) for a in
                                               ("ready", "reason", "last_applied", "inventory", "waiting", "max_hold", "cycles")})

    def status_of(self, k, ref):  # F8
        key = (group_of(ref["apiVersion"]), ref["kind"], ref.get("namespace", ""), ref["name"])
        obj = self.cluster.live.get(key)
        if obj is None:
            return "NotFound"
        gk = key[:2]
        if gk == ("batch", "Job"):
            return job_reader(obj)
        if gk in k.exprs:
            st = cel(k.exprs[gk], obj)
            if st == "Unknown" and self.on_step:
                self.on_step("cel-unknown", k=k, obj=obj)
            return st
        if obj.get("kind") == "Deployment":
            return "Current" if (obj.get("status") or {}).get("ready") else "InProgress"
        if obj.get("kind") == "HelmRelease":  # its Ready condition (F11)
            return "Current" if obj.get("_installed") else "InProgress"
        return "Current"

    def health_refs(self, k, applied):  # F4
        if not k.spec.get("healthChecks") and not k.spec.get("wait"):
            return []
        if not k.spec.get("wait"):
            return k.spec["healthChecks"]
        return [{"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"],
                 "namespace": (o.get("metadata") or {}).get("namespace", "")} for o, action in applied
                if action != "skipped"]

    # -- one reconcile ----------------------------------------------------------------------
    def deps_ready(self, k):  # F2
        for d in k.depends_on:
            dep = self.ks.get(d)
            if dep is None:
                return f"dependency '{d}' not found"
            if dep.ready is not True:
                return f"dependency '{d}' is not ready"
            if dep.spec["sourceRef"] == k.spec["sourceRef"] and dep.last_applied != self.revision:
                return f"dependency '{d}' revision is not up to date"
        return None

    def objects_of(self, k):
        """The Kustomization's build, or None for a source outside the project's repository
        (a platform component from its own Git repository: it installs the component)."""
        src = self.cluster.live.get(("source.toolkit.fluxcd.io", "GitRepository", "flux-system",
                                     k.spec["sourceRef"]["name"]))
        if src is None:
            return []
        if src["spec"]["url"] != self.repo_url:
            return None
        bundle = self.tree.bundle_source(k.path.lstrip("./"))
        if bundle is not None:
            return bundle
        if self.tree.missing(k.path):  # F9
            return "missing"

        local = self.tree.resolve(k.path)
        return self.tree.build(local) if local else []

    def reconcile(self, k):
        why = self.deps_ready(k)
        if why:
            k.ready, k.reason = False, "DependencyNotReady"
            k.next_at = self.now + DEPENDENCY_REQUEUE
            return
        objs = self.objects_of(k)
        if objs == "missing":  # F9: nothing applied, nothing pruned
            reason = f"ArtifactFailed: kustomization path not found: {k.path}"
            if k.reason != reason:
                self.log(f"      {k.name}: Ready=False {reason} (nothing applied or pruned)")
            k.ready, k.reason = False, reason
            k.next_at = self.now + get_retry_interval(k.spec)
            return
        if objs is None:
            comp = component_of(k.name, self.tree.bundle["cluster"])
            new = self.cluster.install_component(comp)
            if new:
                self.log(f"      {k.name}: {comp} installed; CRDs " + ", ".join(sorted(x for g, x in new)))
            self.succeed(k)
            return
        if self.on_step:
            self.on_step("flux-apply", k=k, objs=objs)
        applied, failed, created = [], [], []
        for o in objs:
            key = key_of(o)
            ann = (o.get("metadata") or {}).get("annotations") or {}
            if ann.get("kustomize.toolkit.fluxcd.io/ssa") == "IfNotPresent" and key in self.cluster.live:
                applied.append((o, "skipped"))
                continue
            ok, msg = self.cluster.create_or_update(o, k.name, merge="server-side")
            if ok:
                self.cluster.live[key]["_owner"] = "flux:" + k.name
                applied.append((o, msg))
                if msg == "created":
                    self.log(f"      {k.name}: created {o['kind']}/{o['metadata']['name']}")
                    created.append(self.cluster.live[key])
            else:
                failed.append(msg)
        new_inv = {key_of(o) for o in objs}
        if k.spec.get("prune"):  # F3
            for key in sorted(k.inventory - new_inv):
                live = self.cluster.live.get(key)
                ann = ((live or {}).get("metadata") or {}).get("annotations") or {}
                if live is not None and ann.get("kustomize.toolkit.fluxcd.io/prune") != "disabled":
                    self.log(f"      {k.name}: pruned {key[1]}/{key[3]}")
                    if key[:2] == ("kustomize.toolkit.fluxcd.io", "Kustomization") and key[3] in self.ks:
                        # F10: a pruned Kustomization is deleted like any: its finalizer
                        # garbage-collects its inventory first
                        self.delete_ks(key[3], 1)
                    else:
                        self.cluster.delete(key)
        k.inventory = new_inv
        for o in created:  # observed after the prune of the same reconcile
            if self.on_step:
                self.on_step("applied", k=k, obj=o)
        if failed:
            k.ready, k.reason = False, "ReconciliationFailed: " + failed[0]
            self.log(f"      {k.name}: Ready=False: {failed[0]}; retry in {get_retry_interval(k.spec):g}m")
            k.next_at = self.now + get_retry_interval(k.spec)
            return
        refs = self.health_refs(k, applied)
        if not refs:
            self.succeed(k)
            return
        k.waiting = (self.now, self.now + get_timeout(k.spec), refs)
        self.poll(k)
        if k.waiting:
            k.cycles += 1
            if k.cycles == 1:
                self.log(f"      {k.name}: running health checks with a timeout of {get_timeout(k.spec):g}m (holds a worker)")

    def poll(self, k):  # F4: WaitForSet, FailFast
        started, deadline, refs = k.waiting
        st = [self.status_of(k, r) for r in refs]
        if all(s == "Current" for s in st):
            k.waiting = None
            self.hold(k, self.now - started)
            self.succeed(k)
        elif any(s == "Failed" for s in st):
            k.waiting = None
            self.hold(k, self.now - started)
            self.fail(k, "HealthCheckFailed: failed early due to stalled resources: " + waited_for(refs, st, ("Failed",)))
        elif self.now >= deadline:
            k.waiting = None
            self.hold(k, self.now - started)
            self.fail(k, "HealthCheckFailed: timeout waiting for: " + waited_for(refs, st, ("Failed", "InProgress", "Unknown", "NotFound")))

    def hold(self, k, held):
        k.max_hold = max(k.max_hold, held)
        if self.on_step:
            self.on_step("released", k=k, held=held)

    def succeed(self, k):
        if not (k.ready is True and k.last_applied == self.revision):
            self.log(f"      {k.name}: Ready=True at {self.revision}")
        k.ready, k.reason, k.last_applied = True, "ReconciliationSucceeded", self.revision
        k.cycles = 0
        k.next_at = self.now + minutes(k.spec["interval"])

    def fail(self, k, reason):  # F6
        if (k.ready, k.reason) != (False, reason):
            self.log(f"      {k.name}: Ready=False {reason}; retry in {get_retry_interval(k.spec):g}m"
                     " (each retry runs the health checks again; repeats not shown)")
        k.ready, k.reason = False, reason
        k.next_at = self.now + get_retry_interval(k.spec)
        if self.on_step:
            self.on_step("failed", k=k)

    # -- deletion (F10) ------------------------------------------------------------------------
    def delete_ks(self, name, depth=0):
        """`kubectl delete kustomization <name>` and its finalizer (F10)."""
        k = self.ks.get(name)
        me = ("kustomize.toolkit.fluxcd.io", "Kustomization", "flux-system", name)
        pad = "      " + "  " * depth
        if k is None or me not in self.cluster.live:
            return
        if k.spec.get("prune") and not k.spec.get("suspend"):
            for key in sorted(k.inventory - {me}):
                live = self.cluster.live.get(key)
                if live is None:
                    continue
                ann = (live.get("metadata") or {}).get("annotations") or {}
                if ann.get("kustomize.toolkit.fluxcd.io/prune") == "disabled":
                    self.log(f"{pad}{name}: keeps {key[1]}/{key[3]} (prune: disabled)")
                    continue
                if key[:2] == ("kustomize.toolkit.fluxcd.io", "Kustomization"):
                    self.log(f"{pad}{name}: deletes Kustomization/{key[3]}")
                    self.delete_ks(key[3], depth + 1)
                    continue
                self.cluster.delete(key)
                self.log(f"{pad}{name}: deleted {key[1]}/{key[3]}")
        else:
            self.log(f"{pad}{name}: prune is off: its objects stay")
        self.cluster.delete(me)
        del self.ks[name]
        self.log(f"{pad}Kustomization/{name} deleted")

    # -- the controller over time -------------------------------------------------------------
    def busy(self):
        return [k for k in self.ks.values() if k.waiting]

    def step(self):
        """Runs everything due at self.now; True when something happened."""
        changed = False
        self.discover()
        for key, o in sorted(self.cluster.live.items()):  # helm-controller, reduced to "installs"
            if key[:2] == ("helm.toolkit.fluxcd.io", "HelmRelease") and not o.get("_installed"):
                # F11: the release is installed a minute after the HelmRelease appears (chart
                # fetched from its source, then installed: helm-controller reconciles on its
                # own), and only then reads Ready.
                o.setdefault("_seen", self.now)
                if self.now < o["_seen"] + 1:
                    continue
                o["_installed"] = True
                comp = component_of(key[3], self.tree.bundle["cluster"])
                new = self.cluster.install_component(comp)
                self.log(f"      helm-controller: {key[3]} installed" +
                         ("; CRDs " + ", ".join(sorted(x for g, x in new)) if new else ""))
                changed = True
        for k in sorted(self.busy(), key=lambda k: k.name):
            before = k.waiting
            self.poll(k)
            changed |= k.waiting != before
        for k in sorted(self.ks.values(), key=lambda k: (k.next_at, k.name)):
            if k.name not in self.ks:
                continue  # deleted in this step (a pruned Kustomization, F10)
            if k.waiting or k.next_at > self.now + 1e-9:
                continue
            if len(self.busy()) >= WORKERS:  # F1
                if self.on_step:
                    self.on_step("starved", k=k, waited=self.now - k.next_at)
                break
            before = (k.ready, k.reason, k.last_applied, k.next_at)
            self.reconcile(k)
            self.discover()
            changed |= before != (k.ready, k.reason, k.last_applied, k.next_at) or bool(k.waiting)
        return changed

    def advance(self, minutes_):
        """Lets minutes_ pass, jumping from one due time to the next."""
        end = self.now + minutes_
        for _ in range(100000):
            while self.step():
                pass
            times = [k.next_at for k in self.ks.values() if not k.waiting] + \
                    [k.waiting[1] for k in self.ks.values() if k.waiting]
            nxt = min([t for t in times if t > self.now + 1e-9] or [end])
            if nxt >= end:
                self.now = end
                while self.step():
                    pass
                return
            self.now = nxt
        raise RuntimeError("Flux replay did not settle")

    def source_changed(self, tree, revision):
        """The GitRepository has a new artifact: every Kustomization of it is enqueued (a
        reconcile waiting in checkHealth finishes its wait first, F7)."""
        self.tree, self.revision = tree, revision
        for k in self.ks.values():
            if not k.waiting:
                k.next_at = self.now
