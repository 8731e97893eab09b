#!/usr/bin/python3
"""Runs the health logic nemoc generates with the engines' own evaluators.

Argo CD: every resource.customizations.health.* Lua script of every generated
argocd-cm, run by a real Lua 5.1 (argo-cd 37ee009 runs gopher-lua, a Lua 5.1)
with the object bound to the global `obj`, as argo-cd
util/lua/lua.go ExecuteHealthLua does, against every fixture of its kind in
../shared/upstream/gitops/status-fixtures.json. The verdict must be the
fixture's.

Flux: for every object a stage Kustomization health-checks, the status reader
kustomize-controller v1.9.4 selects is replayed
(internal/controller/kustomization_controller.go getClientAndPoller: fluxcd/pkg
runtime/statusreaders/job.go first, then the CEL reader of healthCheckExprs;
the cli-utils poller takes the first reader whose Supports(GroupKind) holds),
and the object is read with it: CEL through @bufbuild/cel (cel_eval.mjs), the
Job reader through a port of jobConditions. Current must be the fixture's
Healthy, Failed its Degraded, anything else (InProgress, Unknown) a wait.

Usage: engine_logic.py NEMOC SOURCE_DIR. Exit 77 when a prerequisite is
missing (lua5.1, node, tests/gitops/node_modules from scripts/gitops-test-deps,
../shared); with CI=true that is exit 1.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nemoc_specs import missing  # noqa: E402
from health_eval import job_reader, lua_literal  # noqa: E402

try:
    import yaml
except ImportError:
    yaml = None


def run_lua(script, obj):
    # ExecuteHealthLua: the script is a chunk; `obj` is a global; it returns hs.
    program = "obj = " + lua_literal(obj) + "\nlocal function health()\n" + script + "\nend\n" \
        + "local hs = health()\nio.write(hs.status)\n"
    r = subprocess.run(["lua5.1", "-"], input=program, capture_output=True, text=True)
    if r.returncode != 0:
        return "error: " + r.stderr.strip()
    return r.stdout


def group_of(api_version):
    return api_version.split("/")[0] if "/" in api_version else ""


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    nemoc, source = sys.argv[1], sys.argv[2]
    fixtures_path = os.path.join(source, "..", "shared", "upstream", "gitops", "status-fixtures.json")
    if not os.path.exists(fixtures_path):
        missing("../shared/upstream/gitops/status-fixtures.json")
    if yaml is None:
        missing("python3-yaml")
    if shutil.which("lua5.1") is None:
        missing("lua5.1")
    if shutil.which("node") is None:
        missing("node")
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.isdir(os.path.join(here, "node_modules", "@bufbuild", "cel")):
        missing("@bufbuild/cel (run scripts/gitops-test-deps)")
    fixtures = json.load(open(fixtures_path))["cases"]
    by_kind = {}
    for case in fixtures:
        by_kind.setdefault(case["kind"], []).append(case)

    out = tempfile.mkdtemp(prefix="nemoc-gitops-")
    try:
        examples = sorted(os.path.join(source, "examples", f) for f in os.listdir(os.path.join(source, "examples"))
                          if f.endswith(".yaml"))
        subprocess.run([nemoc, "build", "--quiet", "--out", out] + examples, check=True)
        docs = []
        for root, _, files in os.walk(out):
            for f in files:
                if f.endswith(".yaml") and f != "kustomization.yaml":
                    docs.append(yaml.safe_load(open(os.path.join(root, f))))
    finally:
        shutil.rmtree(out)

    failures = []
    checked = {"lua": 0, "flux": 0}
    QUEUE = "kueue.x-k8s.io/queue-name"
    workloads = {(o.get("kind"), (o.get("metadata") or {}).get("namespace"), (o.get("metadata") or {}).get("name")): o
                 for o in docs if isinstance(o, dict)}
    queued_flux = 0

    # ---- Argo CD -------------------------------------------------------------
    scripts = {}
    for d in docs:
        if d.get("kind") == "ConfigMap" and d["metadata"]["name"] == "argocd-cm":
            for key, script in (d.get("data") or {}).items():
                prefix = "resource.customizations.health."
                if key.startswith(prefix):
                    group, kind = key[len(prefix):].rsplit("_", 1)
                    scripts.setdefault((group, kind), set()).add(script)
    for kind in by_kind:
        if not any(k == kind for _, k in scripts):
            failures.append(f"argocd-cm: no Lua health check for {kind}")
    for (group, kind), variants in sorted(scripts.items()):
        for script in variants:
            for case in by_kind.get(kind, []):
                checked["lua"] += 1
                got = run_lua(script, case["object"])
                if got != case["verdict"]:
                    failures.append(f"Argo CD {group}/{kind} [{case['case']}]: Lua says {got}, want {case['verdict']}")

    # ---- Flux ----------------------------------------------------------------
    cel_cases, cel_meta = [], []
    for d in docs:
        if d.get("kind") != "Kustomization" or d.get("apiVersion", "").split("/")[0] != "kustomize.toolkit.fluxcd.io":
            continue
        spec = d["spec"]
        if "dependsOn" not in spec and "healthChecks" not in spec:
            continue  # platform components: not stages
        exprs = {}
        for e in spec.get("healthCheckExprs", []):
            exprs[(group_of(e["apiVersion"]), e["kind"])] = e
        for ref in spec.get("healthChecks", []):
            gk = (group_of(ref["apiVersion"]), ref["kind"])
            if gk[1] not in by_kind:
                continue  # not a workload kind (ConfigMap, Deployment...): kstatus
            # The readers in kustomize-controller's order; first Supports wins.
            if gk == ("batch", "Job"):
                reader = "job"
            elif gk in exprs:
                reader = "cel"
            else:
                reader = None
            # CEL Supports: the exact GroupKind, or an entry for the group alone.
            if reader is None:
                failures.append(f"Flux {d['metadata']['name']}: {gk[0]}/{gk[1]} {ref['name']} has no status reader "
                                "that understands it (kstatus reads it Current at once)")
                continue
            target = workloads.get((gk[1], ref.get("namespace"), ref["name"]))
            if target is None:
                failures.append(f"Flux {d['metadata']['name']}: health check names {gk[1]} {ref['name']}, not in the tree")
                continue
            queued = QUEUE in ((target.get("metadata") or {}).get("labels") or {})
            for case in by_kind[gk[1]]:
                want = {"Healthy": "Current", "Degraded": "Failed"}.get(case["verdict"], "wait")
                label = f"Flux {d['metadata']['name']} {gk[1]} [{case['case']}]"
                if reader == "job":
                    # Only Kueue suspends a Job nemoc emits: the suspended
                    # fixtures apply to queued Jobs alone.
                    if not queued and (case["object"].get("spec") or {}).get("suspend"):
                        continue
                    checked["flux"] += 1
                    got = job_reader(case["object"])
                    got = got if got in ("Current", "Failed") else "wait"
                    if got != want:
                        # C4: a Kueue-queued batch/v1 Job under Flux reads
                        # Current while suspended; nemoc wraps it in a JobSet
                        # (libsonnet/job.libsonnet stageJob), so none may remain.
                        failures.append(f"{label}: Flux's Job status reader says {got}, want {want} (C4)")
                else:
                    e = exprs[gk]
                    cel_cases.append({"exprs": {k: e.get(k) for k in ("current", "failed", "inProgress")},
                                      "object": case["object"]})
                    cel_meta.append((label, want, queued and bool((case["object"].get("spec") or {}).get("suspend"))))
    if cel_cases:
        r = subprocess.run(["node", os.path.join(here, "cel_eval.mjs")], input=json.dumps(cel_cases),
                           capture_output=True, text=True, cwd=here)
        if r.returncode != 0:
            failures.append("cel_eval.mjs failed: " + r.stderr)
        else:
            for (label, want, suspended_in_queue), got in zip(cel_meta, json.loads(r.stdout)):
                checked["flux"] += 1
                got = got if got in ("Current", "Failed") else "wait"
                if got != want:
                    failures.append(f"{label}: CEL says {got}, want {want}")
                elif suspended_in_queue:
                    queued_flux += 1

    if checked["lua"] == 0 or checked["flux"] == 0:
        failures.append(f"nothing checked: {checked}")
    # C4: the examples hold Kueue-queued workloads under Flux; each one suspended
    # by Kueue must read as a wait through the reader Flux selects.
    if queued_flux == 0:
        failures.append("no Kueue-queued workload under a Flux health check read InProgress while suspended")
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    print(f"{checked['lua']} Lua verdicts, {checked['flux']} Flux verdicts ({queued_flux} Kueue-suspended "
          f"workloads read InProgress), {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
