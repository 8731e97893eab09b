"""Argo CD v3.5.1 as it drives gitops-engine (vendored at argo-cd v3.5.1 gitops-engine/, the
version its go.mod `replace` pins), reduced to what a nemoc tree exercises.

Every rule names the upstream lines it follows; AR = argo-cd v3.5.1, GE = argo-cd v3.5.1
gitops-engine/ (both read with `git show v3.5.1:<path>`).

  A1  health order Healthy < Suspended < Progressing < Missing < Degraded < Unknown
      (GE pkg/health/health.go:45-67 healthOrder, IsWorse)
  A2  resource health: the argocd-cm Lua override first, else the built-in check
      (GE pkg/health/health.go:70-95; Lua run like AR util/lua/lua.go ExecuteHealthLua, with lua5.1);
      no built-in check for Application since 1.8 (AR docs/operator-manual/health.md)
  A3  HPA: a ScalingActive condition with reason FailedGet*Metric is Degraded
      (GE pkg/health/health_hpa.go:108-117)
  A4  Application health (AR controller/health.go:20-104): hooks skipped; the Application itself
      (a root that manages itself) is not aggregated (:52-55); a live resource annotated
      argocd.argoproj.io/ignore-healthcheck: "true" is not aggregated (:40-43); a resource without live
      object is Missing but does not count (:75-78, since 3.4, PR #25962); a child Application
      that is Missing/Unknown does not count (:80-83); all targets missing -> Missing (:90-93)
  A5  sync tasks: one per target and per live-only (prune) resource; wave from the
      argocd.argoproj.io/sync-wave annotation (GE pkg/sync/sync_task.go wave())
  A12b auto-sync with automated prune off skips a sync that would only prune extra resources
      (AR controller/appcontroller.go:2352-2362)
  A6  prune tasks run in reverse wave order (GE pkg/sync/sync_context.go:1097-1125)
      A prune task whose live object says Prune=false is skipped, "ignored (no prune)" (GE
      sync_context.go:1453-1459 pruneObject, isPruningDisabled :333-342).
  A7  Sync() (GE pkg/sync/sync_context.go:478-723): running non-hook tasks get their health:
      Healthy -> Succeeded, Degraded -> Failed, otherwise still running (:538-570); a multi-step
      sync waits while any task runs (:575-596); a completed unsuccessful task fails the
      operation (:631-637); ApplyOutOfSyncOnly drops tasks whose live object is not modified
      (:646-648, filterOutOfSyncTasks :761-775); the lowest phase/wave of what remains is applied
      (:660-668); success when nothing remains after it, EVEN if those objects degrade later (:703-712)
  A8  a dry run precedes the first wave, after the namespace is created (:503-537)
  A9  Terminate(): the operation ends Failed "Operation terminated" (:725-746)
  A10 retry: a Failed/Error operation under its retry limit goes back to Running with
      FinishedAt set and RetryCount+1 (AR controller/appcontroller.go:1619-1632); when the backoff
      has passed the SyncResult is reset and the sync starts again (:1548-1579)
  A11 no retry after a terminated operation (:1620 `!terminating`)
  A12 auto-sync only with syncPolicy.automated; skipped while an operation is in progress
      (AR controller/appcontroller.go:2336-2339); only when OutOfSync (:2347-2350); a failed
      attempt at the same revision is not repeated, a successful one only with selfHeal (:2393-2404);
      the operation's retry strategy is syncPolicy.retry (:2385-2387)
  A13 a manual sync takes syncPolicy.retry (AR server/application/application.go:2121-2129) and
      is refused while an operation runs (AR util/argo/argo.go:40 "another operation is already in
      progress")
  A14 ignoreDifferences jsonPointers are not compared; RespectIgnoreDifferences=true keeps the live
      value of those fields on apply (AR docs/user-guide/sync-options.md)
  A15 CreateNamespace=true creates the destination namespace before the dry run
      (GE pkg/sync/sync_context.go:512-524)
  A16 a source path that does not exist: "Failed to load target state" ComparisonError, sync
      status Unknown (AR controller/state.go:694-699, :1034-1035), and no auto-sync unless
      OutOfSync (AR controller/appcontroller.go:2345-2349): nothing is applied or pruned
  A17 deleting an Application: without the resources finalizer only the Application goes; with
      it (cascaded deletion) every managed live object that shouldBeDeleted -- not annotated
      sync-options Delete=false, not the Application itself -- is deleted with foreground
      propagation, a child Application by its own finalizer (AR controller/appcontroller.go:
      1252-1260, 1344-1380; docs/user-guide/app_deletion.md:41-54)
"""
import copy
import functools
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from health_eval import lua_literal  # noqa: E402  (shared with ../engine_logic.py)
from tree import component_of, group_of, key_of  # noqa: E402



HEALTH_ORDER = ["Healthy", "Suspended", "Progressing", "Missing", "Degraded", "Unknown"]  # A1


def is_worse(current, new):  # A1
    return HEALTH_ORDER.index(new) > HEALTH_ORDER.index(current)


@functools.lru_cache(maxsize=None)
def _lua(script, obj_json):
    obj = json.loads(obj_json)
    program = "obj = " + lua_literal(obj) + "\nlocal function health()\n" + script + "\nend\n" \
        + "local hs = health()\nio.write(hs.status)\n"
    r = subprocess.run(["lua5.1", "-"], input=program, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("lua5.1: " + r.stderr.strip())
    return r.stdout


def public(obj):
    """The object as the API server returns it (the replay's bookkeeping fields removed)."""
    return {k: v for k, v in obj.items() if not k.startswith("_")}


def health_view(obj):
    """What a health script may read: metadata (labels included: the Application script reads
    them), the suspend flags, status (the pod templates are left out to keep the Lua programs
    small; no generated script reads them)."""
    spec = obj.get("spec") or {}
    view_spec = {k: spec[k] for k in ("suspend",) if k in spec}
    if "runPolicy" in spec:
        view_spec["runPolicy"] = {k: v for k, v in spec["runPolicy"].items() if k == "suspend"}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
            "metadata": {k: v for k, v in (obj.get("metadata") or {}).items() if k in ("name", "namespace", "generation", "labels")},
            "spec": view_spec, "status": obj.get("status") or {}}


def resource_health(obj, lua):  # A2
    g, kind = group_of(obj.get("apiVersion", "")), obj.get("kind")
    script = lua.get((g, kind))
    if script is not None:
        return _lua(script, json.dumps(health_view(obj), sort_keys=True, default=list))
    if kind == "HorizontalPodAutoscaler":  # A3
        conds = (obj.get("status") or {}).get("conditions") or []
        for c in conds:
            if c.get("type") == "ScalingActive" and c.get("reason", "").startswith("FailedGet"):
                return "Degraded"
        return "Healthy" if any(c.get("type") in ("AbleToScale", "ScalingLimited") and c.get("status") == "True"
                                for c in conds) else "Progressing"
    if kind == "Deployment":
        return "Healthy" if (obj.get("status") or {}).get("ready") else "Progressing"
    return None  # no health: counts as Healthy/Succeeded


def has_sync_option(obj, option):
    """Whether obj's argocd.argoproj.io/sync-options annotation lists `option` (e.g. Prune=false):
    GE resourceutil.HasAnnotationOption."""
    opts = (((obj or {}).get("metadata") or {}).get("annotations") or {}).get("argocd.argoproj.io/sync-options", "")
    return option in [o.strip() for o in opts.split(",")]


def wave_of(obj):  # A5
    return int(((obj.get("metadata") or {}).get("annotations") or {}).get("argocd.argoproj.io/sync-wave", "0"))


def _pointer_get(obj, pointer):
    for p in pointer.strip("/").split("/"):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(p)
    return obj


class App:
    """An Application the controller knows: its spec (from the live Application object)."""

    def __init__(self, obj):
        self.name = obj["metadata"]["name"]
        self.obj = obj
        spec = obj["spec"]
        self.path = spec["source"]["path"]
        self.repo = spec["source"]["repoURL"]
        self.external = False  # set by the controller: a source outside the project's repository
        self.installed = False
        self.wave = wave_of(obj)
        pol = spec.get("syncPolicy") or {}
        self.automated = "automated" in pol
        self.prune = bool((pol.get("automated") or {}).get("prune"))
        self.self_heal = bool((pol.get("automated") or {}).get("selfHeal"))
        self.retry = pol.get("retry") or None
        self.options = set(pol.get("syncOptions") or [])
        self.ignore = [(d.get("group", ""), d["kind"], p) for d in spec.get("ignoreDifferences") or []
                       for p in d.get("jsonPointers") or []]
        self.operation = None   # running operation (app.operation + status.operationState)
        self.last_op = None     # status.operationState of the last completed operation
        self.sync = "Unknown"
        self.health = "Unknown"
        self.resources = []
        self.finalizers = (obj.get("metadata") or {}).get("finalizers") or []
        self.condition = None   # a ComparisonError, when the source cannot be read

    def ignored(self, obj):
        g, k = group_of(obj.get("apiVersion", "")), obj.get("kind")
        return {p for (ig, ik, p) in self.ignore if ig == g and ik == k}


class Operation:
    def __init__(self, revision, retry, prune, automated):
        self.revision = revision
        # A12: an automated operation defaults to limit 5 when syncPolicy.retry is unset
        # (appcontroller.go:2383); a manual one has no retry unless the policy sets one (A13).
        self.retry = retry if retry is not None else ({"limit": 5} if automated else {"limit": 0})
        self.prune = prune
        self.automated = automated
        self.phase = "Running"
        self.message = ""
        self.sync_res = {}      # key -> [sync_status, op_state, message]  (status.operationState.syncResult)
        self.retry_count = 0
        self.finished_at = None  # set when a failed attempt waits for its retry (A10)
        self.failed_wave = None
        self.applied_waves = []


class Task:
    def __init__(self, key, target, live, wave, prune_task):
        self.key, self.target, self.live, self.prune_task = key, target, live, prune_task
        self.wave_ = wave
        self.sync_status = self.op_state = None
        self.message = ""

    def pending(self):
        return self.op_state is None

    def running(self):
        return self.op_state == "Running"

    def completed(self):
        return self.op_state in ("Succeeded", "Failed", "Error")


class ArgoCD:
    """The application controller over a cluster; `tree` is the revision the source points at."""

    def __init__(self, cluster, log, flag, lua):
        self.cluster, self.log, self.flag, self.lua = cluster, log, flag, lua
        self.tree = None
        self.revision = None
        self.repo_url = None
        self.apps = {}
        self.retry_due = False
        self.on_step = None  # observer called after each step (invariants)

    # -- the source ----------------------------------------------------------------------
    def targets(self, app):
        if app.external:
            return []  # a component's chart or kustomization from its own repository
        bundle = self.tree.bundle_source(app.path)
        if bundle is not None:
            return bundle
        local = self.tree.resolve(app.path)
        return [] if local is None else self.tree.build(local)

    # -- comparison (AR controller/state.go CompareAppState, reduced) --------------------
    def modified(self, app, target, live):
        if live is None:
            return True
        if live.get("_owner") != app.name:
            return True  # Argo CD adds its tracking label/annotation on apply: a live object the
            #              app has not applied yet differs from the target (AR controller/state.go)
        if (live.get("_drift") or set()) - app.ignored(target):
            return True  # another controller changed a compared field (K3, A14)
        applied = copy.deepcopy(live.get("_applied"))
        want = copy.deepcopy(target)
        for p in app.ignored(target):
            for o in (applied, want):
                parts = p.strip("/").split("/")
                d = o
                for q in parts[:-1]:
                    d = d.get(q, {}) if isinstance(d, dict) else {}
                if isinstance(d, dict):
                    d.pop(parts[-1], None)
        return public(applied) != public(want)

    def refresh(self, app):
        if not app.external and self.tree.missing(app.path):  # A16
            app.condition = "ComparisonError: Failed to load target state: app path does not exist"
            app.resources = [(k, None, live) for k, live in self.cluster.live.items() if live.get("_owner") == app.name]
            app.sync = "Unknown"
            app.health = self.app_health(app)
            self.publish(app)
            return
        app.condition = None
        targets = self.targets(app)
        tkeys = {key_of(t): t for t in targets}
        res = []
        for k, t in tkeys.items():
            live = self.cluster.live.get(k)
            res.append((k, t, live))
        for k, live in self.cluster.live.items():
            if live.get("_owner") == app.name and k not in tkeys:
                res.append((k, None, live))
        app.resources = res
        out_of_sync = any(t is None or self.modified(app, t, l) for k, t, l in res)
        if app.external and not app.installed:
            out_of_sync = True  # the component's own resources are not in the cluster yet
        app.sync = "OutOfSync" if out_of_sync else "Synced"
        app.health = self.app_health(app)
        self.publish(app)

    def app_health(self, app):  # A4: AR controller/health.go:20-104
        status, contains, contains_live = "Healthy", False, False
        for k, target, live in app.resources:  # managed resources: targets and live ones to prune
            contains = True
            if live is not None:
                contains_live = True
            if live is not None and ((live.get("metadata") or {}).get("annotations") or {}).get(
                    "argocd.argoproj.io/ignore-healthcheck") == "true":
                continue  # :40-43
            if k == ("argoproj.io", "Application", "argocd", app.name):
                continue  # :52-55 "App that manages itself should not affect own health"
            h = "Missing" if live is None else resource_health(live, self.lua)
            if h is None:
                continue
            if live is None and h == "Missing":
                continue  # :75-78
            if k[1] == "Application" and k[0] == "argoproj.io" and h in ("Missing", "Unknown"):
                continue  # :80-83
            if is_worse(status, h):
                status = h
        if contains and not contains_live and is_worse(status, "Missing"):
            status = "Missing"  # :90-93
        return status

    def publish(self, app):
        """status of the live Application object, as a parent's health Lua reads it."""
        live = self.cluster.live.get(("argoproj.io", "Application", "argocd", app.name))
        if live is None:
            return
        st = {"health": {"status": app.health}, "sync": {"status": app.sync, "revision": self.revision}}
        if app.condition:  # AR controller/state.go:694-699: status.conditions[].type/message
            ctype, _, message = app.condition.partition(": ")
            st["conditions"] = [{"type": ctype, "message": message}]
        op = app.operation or app.last_op
        if op is not None:
            st["operationState"] = {"phase": op.phase, "message": op.message}
        live["status"] = st

    # -- gitops-engine's sync context (A5-A9, A14, A15) ----------------------------------
    def tasks(self, app, op):
        targets = self.targets(app)
        tkeys = {key_of(t) for t in targets}
        tasks = []
        for t in targets:
            k = key_of(t)
            tasks.append(Task(k, t, self.cluster.live.get(k), wave_of(t), False))
        for k, live in sorted(self.cluster.live.items()):
            if live.get("_owner") == app.name and k not in tkeys:
                tasks.append(Task(k, None, live, wave_of(live), True))
        # A6: prune tasks run in reverse wave order (symmetric swap of their unique waves)
        prune_waves = sorted({t.wave_ for t in tasks if t.prune_task})
        swap = dict(zip(prune_waves, reversed(prune_waves)))
        for t in tasks:
            if t.prune_task:
                t.wave_ = swap[t.wave_]
        for t in tasks:
            if t.key in op.sync_res:
                t.sync_status, t.op_state, t.message = op.sync_res[t.key]
        tasks.sort(key=lambda t: (t.wave_, t.key[1] != "Namespace", t.key))
        return tasks

    def sync_once(self, app, op):  # A7
        tasks = self.tasks(app, op)
        started = bool(op.sync_res)

        def result(t, status, state, msg=""):
            t.sync_status, t.op_state, t.message = status, state, msg
            op.sync_res[t.key] = [status, state, msg]

        def oos_filter(ts):
            if "ApplyOutOfSyncOnly=true" not in app.options:
                return ts
            return [t for t in ts if not (t.target is not None and t.live is not None
                                          and not self.modified(app, t.target, t.live))]

        if not started:
            ns = app.obj["spec"]["destination"].get("namespace")
            if "CreateNamespace=true" in app.options and ns and ("", "Namespace", "", ns) not in self.cluster.live:
                self.cluster.create_or_update({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, app.name)
                self.log(f"      {app.name}: created namespace {ns} (A15)")
            for t in oos_filter(tasks):  # A8: dry run
                if t.target is not None and not self.cluster.served(t.target):
                    op.phase, op.message = "Failed", ("one or more objects failed to apply (dry run): "
                                                      f"no matches for kind {t.target['kind']}")
                    return
        for t in tasks:
            if t.running() and t.live is not None and not t.prune_task:
                h = resource_health(t.live, self.lua)
                if h is None or h == "Healthy":
                    result(t, t.sync_status, "Succeeded", h or "")
                elif h == "Degraded":
                    result(t, t.sync_status, "Failed", f"{t.key[1]} {t.key[3]} is Degraded")
        waves = {t.wave_ for t in tasks}
        running = [t for t in tasks if len(waves) > 1 and t.running()]
        if running:
            op.phase = "Running"
            op.message = "waiting for healthy state of " + ", ".join(f"{t.key[1]}/{t.key[3]}" for t in running)
            return
        failed = [t for t in tasks if t.completed() and t.op_state != "Succeeded"]
        if failed:
            op.phase = "Failed"
            op.message = "one or more synchronization tasks completed unsuccessfully"
            op.failed_wave = max(t.wave_ for t in failed)
            return
        pending = oos_filter([t for t in tasks if t.pending()])
        if not pending:
            op.phase, op.message = "Succeeded", "successfully synced (no more tasks)"
            return
        wave = pending[0].wave_
        now = [t for t in pending if t.wave_ == wave]
        remaining = [t for t in pending if t.wave_ != wave]
        op.applied_waves.append(wave)
        def no_prune(t):  # GE sync_context.go:1457 isPruningDisabled: the live object's Prune=false
            return has_sync_option(t.live, "Prune=false")
        self.log(f"      {app.name}: wave {wave}: " + ", ".join(
            ("keep (Prune=false) " if t.prune_task and op.prune and no_prune(t) else "prune " if t.prune_task and op.prune
             else "keep (prune disabled) " if t.prune_task else "apply ")
            + f"{t.key[1]}/{t.key[3]}" for t in now))
        if self.on_step:
            self.on_step("wave", app=app, op=op, wave=wave, tasks=now)
        fail = False
        for t in now:
            if t.prune_task:
                if op.prune and no_prune(t):
                    result(t, "PruneSkipped", "Succeeded", "ignored (no prune)")
                elif op.prune:
                    if t.key[:2] == ("argoproj.io", "Application") and t.key[3] in self.apps:
                        # A17: a pruned child Application is deleted like any Application: its
                        # resources finalizer deletes what it manages first
                        self.delete_app(t.key[3], 1)
                    else:
                        self.cluster.delete(t.key)
                    result(t, "Pruned", "Succeeded", "pruned")
                else:
                    result(t, "PruneSkipped", "Succeeded", "ignored (requires pruning)")
                continue
            target = copy.deepcopy(t.target)
            if "RespectIgnoreDifferences=true" in app.options and t.live is not None:
                for p in app.ignored(target):  # A14
                    v = _pointer_get(t.live, p)
                    parts = p.strip("/").split("/")
                    d = target
                    for q in parts[:-1]:
                        d = d.setdefault(q, {})
                    d[parts[-1]] = v
            ok, msg = self.cluster.create_or_update(target, app.name)
            if ok:
                self.cluster.live[t.key]["_owner"] = app.name
                result(t, "Synced", "Running", msg)
                if self.on_step:
                    self.on_step("applied", app=app, obj=self.cluster.live[t.key])
            else:
                fail = True
                result(t, "SyncFailed", "Failed", msg)
                self.log(f"      {app.name}: {t.key[1]}/{t.key[3]}: {msg}")
        if fail:
            op.phase, op.message = "Failed", "one or more objects failed to apply"
            op.failed_wave = wave
        elif not remaining:
            op.phase, op.message = "Succeeded", "successfully synced (all tasks run)"
        else:
            op.phase, op.message = "Running", "one or more tasks are running"

    # -- the application controller (A10-A13) ---------------------------------------------
    def start(self, app, automated, prune):
        op = Operation(self.revision, app.retry, prune, automated)
        app.operation = op
        return op

    def user_sync(self, app, prune=False):  # A13
        if app.operation is not None:
            self.log(f"      {app.name}: sync refused: another operation is already in progress (A13)")
            return False
        self.start(app, False, prune)
        self.log(f"      {app.name}: manual sync started (retry {app.retry and app.retry.get('limit')})")
        return True

    def terminate(self, app):
        if app.operation is not None:
            app.operation.phase = "Terminating"

    def process_operation(self, app):
        op = app.operation
        if op.phase == "Terminating":  # A9, A11
            op.phase, op.message = "Failed", "Operation terminated"
            self.log(f"      {app.name}: operation terminated by the user")
            self.finish(app)
            return True
        if op.finished_at is not None:  # A10: a retry waits for its backoff
            if not self.retry_due:
                return False
            op.finished_at = None
            op.sync_res = {}  # appcontroller.go:1577 state.SyncResult = nil
            self.log(f"      {app.name}: retrying operation, attempt #{op.retry_count}: SyncResult reset (A10)")
            if self.on_step:
                self.on_step("retry", app=app, op=op)
        before = (op.phase, op.message, repr(sorted(op.sync_res.items())))
        self.sync_once(app, op)
        if op.phase in ("Failed", "Error"):
            limit = (op.retry or {}).get("limit", 0)
            if op.retry_count < limit or limit < 0:
                op.phase, op.finished_at = "Running", "now"
                op.retry_count += 1
                self.log(f"      {app.name}: {op.message}; retry #{op.retry_count} after backoff (A10)")
            else:
                self.finish(app)
            return True
        if op.phase == "Succeeded":
            self.finish(app)
            return True
        return before != (op.phase, op.message, repr(sorted(op.sync_res.items())))

    def finish(self, app):
        op = app.operation
        self.log(f"      {app.name}: operation {op.phase}: {op.message}")
        if op.phase == "Succeeded" and app.external:
            comp = component_of(app.name, self.tree.bundle["cluster"])
            new = self.cluster.install_component(comp)
            app.installed = True
            if new:
                self.log(f"      {app.name}: {comp} installed; CRDs " + ", ".join(sorted(k for g, k in new)))
        app.last_op, app.operation = op, None

    def auto_sync(self, app):  # A12
        if not app.automated:
            return False
        if app.operation is not None:
            return False
        if app.sync != "OutOfSync":
            return False
        # AR appcontroller.go:2352-2362: without automated prune, a sync that would only prune
        # extra resources is skipped ("need to prune extra resources only").
        drifted = [t for k, t, l in app.resources if t is None or self.modified(app, t, l)]
        extra_only = bool(drifted) and all(t is None for t in drifted) and not (app.external and not app.installed)
        if not app.prune and extra_only:
            return False
        last = app.last_op
        if last is not None and last.revision == self.revision:
            if last.phase != "Succeeded":
                return False
            if not app.self_heal:
                return False
            # Self-heal of a revision already synced, when only extra resources whose live object
            # says Prune=false are out of sync: upstream repeats a no-op sync with its self-heal
            # backoff (the app stays OutOfSync, docs/user-guide/sync-options.md "Prune=false");
            # the replay does it once.
            if extra_only and all(has_sync_option(l, "Prune=false") for k, t, l in app.resources
                                  if t is None and l is not None):
                return False
        self.start(app, True, app.prune)
        self.log(f"      {app.name}: auto-sync to {self.revision}" +
                 (" (self-heal)" if last is not None and last.revision == self.revision else ""))
        return True

    # -- deletion (A17) ----------------------------------------------------------------------
    def delete_app(self, name, depth=0):
        """`kubectl delete application <name>`, and the controller's finalizer (A17)."""
        app = self.apps.get(name)
        me = ("argoproj.io", "Application", "argocd", name)
        pad = "      " + "  " * depth
        if app is None or me not in self.cluster.live:
            return
        if "resources-finalizer.argocd.argoproj.io" not in app.finalizers:
            self.cluster.delete(me)
            del self.apps[name]
            self.log(f"{pad}Application/{name} deleted without a resources finalizer: what it manages stays")
            return
        owned = sorted((k, l) for k, l in self.cluster.live.items() if l.get("_owner") == name and k != me)
        for k, live in owned:
            if has_sync_option(live, "Delete=false"):
                self.log(f"{pad}{name}: keeps {k[1]}/{k[3]} (Delete=false)")
                continue
            if k[:2] == ("argoproj.io", "Application"):
                self.log(f"{pad}{name}: deletes Application/{k[3]} (foreground)")
                self.delete_app(k[3], depth + 1)
                continue
            self.cluster.delete(k)
            self.log(f"{pad}{name}: deleted {k[1]}/{k[3]}")
        self.cluster.delete(me)
        del self.apps[name]
        self.log(f"{pad}Application/{name} deleted (resources finalizer done)")

    def discover(self):
        for k, o in sorted(self.cluster.live.items()):
            if k[:2] == ("argoproj.io", "Application") and o["metadata"]["name"] not in self.apps:
                self.apps[o["metadata"]["name"]] = App(o)
        for name in list(self.apps):
            if ("argoproj.io", "Application", "argocd", name) not in self.cluster.live:
                del self.apps[name]
        for app in self.apps.values():
            app.external = app.repo != self.repo_url

    def app_has_commit_blocked(self, app):
        return app.automated and app.operation is not None and app.sync == "OutOfSync"

    def run(self, max_steps=200):
        """Refresh and operation queues until nothing changes (apps in name order: adversarial
        for independent roots, which Argo CD does not order)."""
        for _ in range(max_steps):
            changed = False
            self.discover()
            for name in sorted(self.apps):
                app = self.apps.get(name)
                if app is None:
                    continue  # deleted in this round (a pruned child Application, A17)
                self.refresh(app)
                if self.on_step:
                    self.on_step("refresh", app=app)
                if app.operation is not None:
                    changed |= self.process_operation(app)
                elif self.auto_sync(app):
                    changed = True
                self.refresh(app)
            self.retry_due = False
            if not changed:
                return
        raise RuntimeError("Argo CD replay did not settle")
