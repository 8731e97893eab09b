#!/usr/bin/python3
"""Systematic mutation of nemoc's GitOps trees (issue #40: "for every example, dropping each
`dependsOn`, shifting each wave, dropping each health check, and inverting each Lua/CEL verdict
is caught by some scenario").

Usage:
  mutations.py SOURCE_DIR                       the test (ctest gitops.replay_mutations)

For every committed out/<project>/<target> with a GitOps tree (replay_test.current_dirs), the
test builds mutants in memory (MutantTree: the tree's objects as kustomize builds them, one
object or one health script changed) and runs the replay's scenarios SCENARIOS on each under the
mutated engine only. A mutant is caught when some scenario flags a (scenario, defect) that the
same scenario does not flag on the unmutated tree under that engine: the unmutated tree's own
flags (KNOWN_DEFECTS) never count as a catch, even with another message. Besides the defects of
gitops.replay, the flags that catch mutants are scenarios.py's ORDER (I1), STALL (I10, with its
serving half on: Replay.serving_liveness), READY (I11) and HEALTH (I12).

Mutation classes:
  flux-dependsOn      a stage Kustomization without its spec.dependsOn
  flux-healthCheck    a stage Kustomization without one spec.healthChecks entry
  flux-healthChecks   ... without the whole list (only when it has more than one entry: with
                      one, it is the mutant above)
  flux-cel            one healthCheckExprs entry with `current` and `failed` swapped
  flux-cel-guard      one healthCheckExprs entry without its `has(status.conditions) && ` guards
  argocd-wave-prev    every object of a stage directory in the previous stage's sync-wave (a
                      stage's objects share one wave: the stage, not each object, is shifted)
  argocd-wave-next    ... in the next stage's sync-wave
  argocd-app-wave     an Application of gitops/argocd without its sync-wave annotation
  argocd-lua          a resource.customizations.health Lua of the cluster bundle's argocd-cm
                      with "Healthy" and "Degraded" swapped in its text (run by lua5.1)
  argocd-app-lua      the same for the argoproj.io/Application health Lua (app of apps)
  deadline            a workload without its activeDeadlineSeconds (every copy of it: a JobSet's
                      Jobs), under each engine
  deadline-rule       a JobSet without the failurePolicy rule that fails it on DeadlineExceeded
  keep-argocd         a Namespace, PersistentVolumeClaim or PersistentVolume without its
                      argocd.argoproj.io/sync-options Prune=false,Delete=false (F13)
  keep-flux           ... without kustomize.toolkit.fluxcd.io/prune: disabled
  finalizer           an Application of gitops/argocd without its resources finalizer (C23)

Equivalent mutants are classified in `equivalent()` with the reason and are not run. Every other
mutant is run (no sampling: about 150 mutants take under two minutes; targets of one project
differ in namespaces and hashed names, so none would be deduplicated anyway).

Exit 0 when every non-equivalent mutant is caught, 1 listing the ones that are not, 77 when a
prerequisite is missing (replay_test.prerequisites; under CI=true exit 1).
"""
import copy
import os
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "lib"))

import replay_test  # noqa: E402

replay_test.prerequisites()  # before tree.py imports yaml: exit 77 (CI=true: 1) without it
from tree import Tree, is_workload  # noqa: E402
from cluster import Cluster  # noqa: E402

WAVE = "argocd.argoproj.io/sync-wave"
# the scenarios run on each mutant (C18 and C19 add nothing a stage ordering or health mutant
# could break that these do not see, and C18 is the slowest)
SCENARIOS = ("C14-serving-before-engine", "C15-retry-after-failed-stage", "C25-health-of-new-objects",
             "C24-edit-while-training", "F17-train-deadline", "C23-remove-target")


class MutantTree(Tree):
    """A tree whose built objects pass through obj_fn (a deep copy each; obj_fn changes it in
    place) and whose health Lua passes through lua_fn."""

    def __init__(self, base, obj_fn=None, lua_fn=None):
        self.__dict__.update({k: v for k, v in base.__dict__.items() if k != "_built"})
        self.base, self.obj_fn, self.lua_fn = base, obj_fn, lua_fn
        self._mut = {}

    def build(self, path):
        key = os.path.normpath(path)
        if key not in self._mut:
            out = []
            for o in self.base.build(path):
                if self.obj_fn:
                    o = copy.deepcopy(o)
                    self.obj_fn(o)
                out.append(o)
            self._mut[key] = out
        return list(self._mut[key])

    def health_lua(self):
        lua = dict(self.base.health_lua())
        return self.lua_fn(lua) if self.lua_fn else lua


class Mutant:
    def __init__(self, cls, engine, what, obj_fn=None, lua_fn=None):
        self.cls, self.engine, self.what = cls, engine, what
        self.obj_fn, self.lua_fn = obj_fn, lua_fn
        self.equivalent = None
        self.caught = []   # [(scenario, defect, message)]


def _named(kind, name, fn):
    def f(o):
        if o.get("kind") == kind and (o.get("metadata") or {}).get("name") == name:
            fn(o)
    return f


def _swap_text(script):
    return script.replace("Healthy", "\0").replace("Degraded", "Healthy").replace("\0", "Degraded")


def stage_waves(tree):
    """stage dir -> its objects' sync-wave values (as strings), for stages that carry waves."""
    out = {}
    for o in tree.stage_objects():
        w = ((o.get("metadata") or {}).get("annotations") or {}).get(WAVE)
        if w is not None:
            out.setdefault(o["_stage"], set()).add(w)
    return dict(sorted(out.items()))


def mutants(tree):
    out = []
    # -- Flux ---------------------------------------------------------------------------------
    for k in tree.flux_objects():
        if k.get("kind") != "Kustomization" or not k["apiVersion"].startswith("kustomize.toolkit"):
            continue
        name, spec = k["metadata"]["name"], k["spec"]
        if spec.get("dependsOn"):
            out.append(Mutant("flux-dependsOn", "flux", f"Kustomization/{name}: dependsOn dropped",
                              _named("Kustomization", name, lambda o: o["spec"].pop("dependsOn"))))
            out[-1].ks = k
        hcs = spec.get("healthChecks") or []
        for i, hc in enumerate(hcs):
            def drop(o, i=i):
                del o["spec"]["healthChecks"][i]
                if not o["spec"]["healthChecks"]:
                    del o["spec"]["healthChecks"]
            out.append(Mutant("flux-healthCheck", "flux",
                              f"Kustomization/{name}: healthChecks[{i}] ({hc['kind']}/{hc['name']}) dropped",
                              _named("Kustomization", name, drop)))
            out[-1].ks, out[-1].ref = k, hc
        if len(hcs) > 1:
            out.append(Mutant("flux-healthChecks", "flux", f"Kustomization/{name}: healthChecks dropped",
                              _named("Kustomization", name, lambda o: o["spec"].pop("healthChecks"))))
            out[-1].ks = k
        for i, e in enumerate(spec.get("healthCheckExprs") or []):
            def invert(o, i=i):
                x = o["spec"]["healthCheckExprs"][i]
                cur, fail = x.pop("current", None), x.pop("failed", None)
                if fail is not None:
                    x["current"] = fail
                if cur is not None:
                    x["failed"] = cur
            out.append(Mutant("flux-cel", "flux", f"Kustomization/{name}: healthCheckExprs[{i}] ({e['kind']}) "
                                                  "current <-> failed", _named("Kustomization", name, invert)))
            if "has(status.conditions) && " in (e.get("current") or ""):
                def unguard(o, i=i):
                    x = o["spec"]["healthCheckExprs"][i]
                    for k in ("current", "failed"):
                        x[k] = x[k].replace("has(status.conditions) && ", "")
                m = Mutant("flux-cel-guard", "flux", f"Kustomization/{name}: healthCheckExprs[{i}] ({e['kind']}) "
                                                     "without has(status.conditions)", _named("Kustomization", name, unguard))
                m.kind = e["kind"]
                out.append(m)
    # -- the workload's own deadline (F17) -----------------------------------------------------
    for w in tree.stage_objects():
        if not is_workload(w) or not Cluster.deadline(w):
            continue
        name = w["metadata"]["name"]

        def undeadline(o):
            for holder in Cluster.deadline_holders(o):
                holder.pop("activeDeadlineSeconds", None)
        for engine in ("argocd", "flux"):
            if (tree.argocd_objects() if engine == "argocd" else tree.flux_objects()):
                out.append(Mutant("deadline", engine, f"{w['kind']}/{name}: activeDeadlineSeconds dropped",
                                  _named(w["kind"], name, undeadline)))
                if w["kind"] == "JobSet" and (w["spec"].get("failurePolicy") or {}).get("rules"):
                    out.append(Mutant("deadline-rule", engine, f"JobSet/{name}: failurePolicy.rules dropped",
                                      _named("JobSet", name, lambda o: o["spec"]["failurePolicy"].pop("rules"))))
    # -- data kept, workloads deleted (F13, C23) ------------------------------------------------
    for o in tree.stage_objects():
        ann = (o.get("metadata") or {}).get("annotations") or {}
        name = o["metadata"]["name"]
        for cls, engine, key in (("keep-argocd", "argocd", "argocd.argoproj.io/sync-options"),
                                 ("keep-flux", "flux", "kustomize.toolkit.fluxcd.io/prune")):
            if key in ann and o.get("kind") in ("Namespace", "PersistentVolumeClaim", "PersistentVolume"):
                out.append(Mutant(cls, engine, f"{o['kind']}/{name}: {key} dropped",
                                  _named(o["kind"], name, lambda x, key=key: x["metadata"]["annotations"].pop(key))))
    for a in tree.argocd_objects():
        if a.get("kind") == "Application" and (a["metadata"].get("finalizers")):
            out.append(Mutant("finalizer", "argocd", f"Application/{a['metadata']['name']}: finalizers dropped",
                              _named("Application", a["metadata"]["name"], lambda x: x["metadata"].pop("finalizers"))))
    # -- Argo CD ------------------------------------------------------------------------------
    if tree.argocd_objects():
        waves = stage_waves(tree)
        stages = list(waves)
        for i, s in enumerate(stages):
            own = sorted(waves[s])
            for cls, j in (("argocd-wave-prev", i - 1), ("argocd-wave-next", i + 1)):
                if not 0 <= j < len(stages):
                    continue
                to = sorted(waves[stages[j]], key=int)[0 if j > i else -1]

                def shift(o, s=s, to=to):
                    if o.get("_stage") == s and WAVE in ((o.get("metadata") or {}).get("annotations") or {}):
                        o["metadata"]["annotations"][WAVE] = to
                m = Mutant(cls, "argocd", f"{s}: sync-wave {'/'.join(own)} -> {to} (the wave of {stages[j]})", shift)
                m.stage, m.to = s, to
                out.append(m)
        for a in tree.argocd_objects():
            w = ((a.get("metadata") or {}).get("annotations") or {}).get(WAVE)
            if a.get("kind") == "Application" and w is not None:
                m = Mutant("argocd-app-wave", "argocd", f"Application/{a['metadata']['name']}: sync-wave {w} dropped",
                           _named("Application", a["metadata"]["name"],
                                  lambda o: o["metadata"]["annotations"].pop(WAVE)))
                m.wave = w
                out.append(m)
        for gk, script in sorted(tree.health_lua().items()):
            cls = "argocd-app-lua" if gk == ("argoproj.io", "Application") else "argocd-lua"

            def swap(lua, gk=gk):
                lua[gk] = _swap_text(lua[gk])
                return lua
            m = Mutant(cls, "argocd", f"health Lua {gk[0]}/{gk[1]}: Healthy <-> Degraded", lua_fn=swap)
            m.gk = gk
            out.append(m)
    return out


# kstatus reads these Current as soon as they exist (no kind-specific rule in cli-utils
# pkg/kstatus/status/core.go; the generic rule looks only at Ready/Reconciling/Stalled conditions,
# flux.py F8), and kustomize-controller applies a Kustomization's objects before it checks them
CURRENT_ONCE_APPLIED = {"ConfigMap", "Secret", "Namespace", "ServiceAccount", "PersistentVolume", "PrometheusRule",
                        "ServiceMonitor", "PodMonitor", "LocalQueue", "HorizontalPodAutoscaler"}
# what Kubernetes waits for itself: an apply into a missing namespace fails and Flux retries it
# after retryInterval (F6), Argo CD creates the namespace (CreateNamespace=true); a pod waits for
# the ConfigMaps and claims it mounts and the Job controller retries pods until their
# ServiceAccount exists. A stage of only these orders no workload.
K8S_WAITS_FOR = CURRENT_ONCE_APPLIED | {"PersistentVolumeClaim"}


def stage_kinds(tree):
    out = {}
    for o in tree.stage_objects():
        out.setdefault(o["_stage"], set()).add(o["kind"])
    return out


def orders_nothing(kinds):
    return kinds <= K8S_WAITS_FOR


def equivalent(tree, m, base_stage_kinds):
    """The reason a mutant cannot change what either engine does to the pipeline, or None."""
    kinds = stage_kinds(tree)
    if m.cls in ("flux-healthCheck", "flux-healthChecks"):
        ks = m.ks
        refs = ks["spec"]["healthChecks"] if m.cls == "flux-healthChecks" else [m.ref]
        dependents = [k["metadata"]["name"] for k in tree.flux_objects() if k.get("kind") == "Kustomization"
                      and ks["metadata"]["name"] in [d["name"] for d in k["spec"].get("dependsOn") or []]]
        if all(r["kind"] in CURRENT_ONCE_APPLIED for r in refs):
            return ("kstatus reads " + "/".join(sorted({r["kind"] for r in refs})) + " Current once applied, and "
                    "Flux applies before it checks (F4, F8): the check passes on its first poll")
        if not dependents and not any(is_workload(r) for r in refs):
            return ("no Kustomization depends on this one and the check names no workload: its Ready orders "
                    "nothing")
        if all(r["kind"] in K8S_WAITS_FOR for r in refs):
            return ("a pod that mounts the claim waits for it to bind (kube-scheduler volume binding): the next "
                    "stage's workload runs no earlier")
    if m.cls == "flux-dependsOn":
        deps = m.ks["spec"]["dependsOn"]
        by_name = {k["metadata"]["name"]: k for k in tree.flux_objects() if k.get("kind") == "Kustomization"}
        stages = [os.path.basename(by_name[d["name"]]["spec"]["path"].rstrip("/")) for d in deps if d["name"] in by_name]
        if len(stages) == len(deps) and all(orders_nothing(kinds.get(s, set())) for s in stages):
            return (f"the dependencies ({', '.join(stages)}) hold only objects Kubernetes waits for itself "
                    "(K8S_WAITS_FOR): no workload is ordered by them")
    if m.cls in ("argocd-wave-prev", "argocd-wave-next"):
        before, after = workload_order(tree), workload_order(MutantTree(tree, m.obj_fn))
        if before == after:
            return ("the order of the workload stages within each Application is unchanged (the waves of stages "
                    "that hold only objects Kubernetes waits for itself, K8S_WAITS_FOR, order nothing; waves "
                    "order only within one Application's sync, GE pkg/sync/sync_context.go)")
    if m.cls == "flux-cel-guard" and m.kind in ("PyTorchJob", "MPIJob"):
        return (f"a {m.kind}'s controller writes its Created condition at its first reconcile (cluster.py K5): "
                "status.conditions exists whenever Flux reads the object")
    if m.cls == "argocd-app-wave" and m.wave == "0":
        return "the annotation's default is wave 0 (GE pkg/sync/sync_task.go wave()): dropping \"0\" changes nothing"
    if m.cls == "argocd-lua" and m.gk not in base_stage_kinds:
        return f"no object of kind {m.gk[1]} in this tree: the script is never run"
    return None


def workload_order(tree):
    """Per Application of the tree: its workload stages (and serving) grouped by sync-wave, in wave
    order."""
    out = []
    for a in tree.argocd_objects():
        if a.get("kind") != "Application":
            continue
        local = tree.resolve(a["spec"]["source"]["path"])
        if not local or not os.path.isdir(local):
            continue
        waves = {}
        for o in tree.build(local):
            if is_workload(o) or (o.get("kind") == "Deployment" and o.get("_stage", "").endswith("serve")):
                w = int(((o.get("metadata") or {}).get("annotations") or {}).get(WAVE, "0"))
                waves.setdefault(w, set()).add(o["_stage"])
        out.append((a["metadata"]["name"], [sorted(v) for k, v in sorted(waves.items())]))
    return sorted(out)


def flags(tree, example, engine):
    import scenarios
    out = set()
    for name in SCENARIOS:
        r = scenarios.run(name, engine, tree, example)
        if r is not None:
            out |= {(name, d, msg) for d, msg in r.flags}
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    source = os.path.abspath(argv[1])
    import scenarios
    scenarios.Replay.serving_liveness = True  # I10 for serving (see scenarios.Replay)
    start = time.time()
    rows = []
    ran = 0
    for example, path in replay_test.current_dirs(source):
        tree = Tree(path)
        base = {e: flags(tree, example, e) for e in ("argocd", "flux")}
        kinds = {(o["apiVersion"].split("/")[0] if "/" in o["apiVersion"] else "", o["kind"])
                 for o in tree.stage_objects() + tree.argocd_objects()}
        for m in mutants(tree):
            rows.append((example, m))
            m.equivalent = equivalent(tree, m, kinds)
            if m.equivalent:
                continue
            got = flags(MutantTree(tree, m.obj_fn, m.lua_fn), example, m.engine)
            ran += 1
            old = {(s, d) for s, d, _ in base[m.engine]}
            m.caught = sorted((s, d, msg) for s, d, msg in got if (s, d) not in old)
    elapsed = time.time() - start

    print(f"{'class':18} {'example':30} {'engine':7} mutation -> caught by")
    missed = []
    for example, m in rows:
        if m.equivalent:
            verdict = f"EQUIVALENT: {m.equivalent}"
        elif m.caught:
            s, d, msg = m.caught[0]
            verdict = f"{s} {d}: {msg}"
        else:
            verdict = "NOT CAUGHT"
            missed.append((example, m))
        print(f"{m.cls:18} {example:30} {m.engine:7} {m.what} -> {verdict}")
    print()
    classes = sorted({m.cls for _, m in rows})
    for c in classes:
        ms = [m for _, m in rows if m.cls == c]
        eq = sum(1 for m in ms if m.equivalent)
        caught = sum(1 for m in ms if not m.equivalent and m.caught)
        print(f"{c:18} {len(ms):4} mutants: {caught} caught, {eq} equivalent, {len(ms) - eq - caught} not caught")
    print(f"{len(rows)} mutants, {ran} run (the rest equivalent), {elapsed:.0f}s")
    for example, m in missed:
        print(f"FAIL not caught: {m.cls} {example} ({m.engine}): {m.what}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
