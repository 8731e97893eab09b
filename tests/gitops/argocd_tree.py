#!/usr/bin/python3
"""The Argo CD tree of every target delivers exactly the target, in order, inside its AppProject (C11, F4).

Every example and test spec is built into a scratch repository (at the path its gitops.path names,
as committed), and each target's gitops/argocd/ is read the way Argo CD reads it:

  * `kubectl kustomize` of gitops/argocd/ (what the root syncs) and of every Application's
    source.path (what that Application syncs) -- the repo server renders a kustomize root the same way;
  * the root: without argocd.applicationSet exactly one Application in gitops/argocd/ whose source
    is gitops/argocd/ itself (it manages itself; argo-cd 37ee009 controller/appcontroller.go skips a
    self-referenced Application when pruning and health-assessing), destination Argo CD's own
    namespace in-cluster; with it, none there, and exactly one ApplicationSet for the project, in
    its first target's tree, whose list elements fill every template placeholder (goTemplate
    missingkey=error) and render one root per target pointing at that target's gitops/argocd/;
  * the parts (every other Application): their objects are disjoint and together are exactly the
    objects of the target's root kustomization (nothing delivered twice, nothing left out); their
    sync waves strictly increase with the stage order they carry (gitops-engine syncs wave by wave
    and, with the argocd-cm Application health check the platform tree installs, waits for a
    part to be Healthy before the next), and the AppProject comes before them (wave -1);
  * every Application's project: `default`, or an AppProject in the same tree or the cluster
    bundle's platform/argocd (the roots' project, decision F14) that permits the Application's
    source, destination and each of its objects, replaying argo-cd 37ee009 (v3.5.1 the same)
    pkg/apis/application/v1alpha1/app_project_types.go IsSourcePermitted, isDestinationMatched and
    IsGroupKindNamePermitted (scope of a kind from ../shared/kube-schemas/index.json); an
    ApplicationSet's generated root is checked against its project too;
  * confinement (field review C22, decision F14): a pipeline or serving Application's project
    admits nothing in Argo CD's namespace (no Secret, no argocd-cm: admin-equivalent); a root's
    project admits only Applications and AppProjects, only there, and no cluster-scoped kind.

Usage: argocd_tree.py <nemoc> <source dir>. Exit 77 when a prerequisite is missing (kubectl,
../shared/kube-schemas, python3-yaml); with CI=true that is exit 1.
"""
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import all_specs, build, missing, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
IN_CLUSTER = "https://kubernetes.default.svc"
WAVE = "argocd.argoproj.io/sync-wave"


def kustomize(path):
    r = subprocess.run(["kubectl", "kustomize", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"kubectl kustomize {path}: {r.stderr.strip()}")
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def group(api_version):
    return api_version.split("/")[0] if "/" in api_version else ""


def ident(doc):
    m = doc["metadata"]
    return (group(doc["apiVersion"]), doc["kind"], m.get("namespace", ""), m["name"])


def wave(doc):
    return int((doc["metadata"].get("annotations") or {}).get(WAVE, "0"))


def glob(pattern, value):
    # globMatch: "*" matches anything; gobwas/glob otherwise (nemoc writes literals).
    return pattern == "*" or fnmatch.fnmatchcase(value, pattern)


def normalize_git_url(url):
    # util/git NormalizeGitURL, for the URL forms nemoc accepts: case, trailing ".git" and "/".
    url = url.lower().rstrip("/")
    return url[:-4] if url.endswith(".git") else url


class Project:
    """An AppProject's admission rules (app_project_types.go at argo-cd 37ee009; no deny patterns
    or named clusters in nemoc's output, so only the allow branches are replayed)."""

    def __init__(self, doc, scope):
        self.name = doc["metadata"]["name"]
        self.spec = doc["spec"]
        self.scope = scope

    def source_permitted(self, repo_url):
        return any(glob(normalize_git_url(r), normalize_git_url(repo_url))
                   for r in self.spec.get("sourceRepos", []))

    def destination_permitted(self, server, namespace):
        return any(glob(d.get("server", ""), server) and glob(d.get("namespace", ""), namespace)
                   for d in self.spec.get("destinations", []))

    def kind_permitted(self, grp, kind, name, namespaced):
        if namespaced:
            white = self.spec.get("namespaceResourceWhitelist")
            black = self.spec.get("namespaceResourceBlacklist") or []
            listed = white is None or any(glob(w["group"], grp) and glob(w["kind"], kind) for w in white)
            return listed and not any(glob(b["group"], grp) and glob(b["kind"], kind) for b in black)
        white = self.spec.get("clusterResourceWhitelist") or []
        black = self.spec.get("clusterResourceBlacklist") or []

        def named(e):
            return glob(e["group"], grp) and glob(e["kind"], kind) and glob(e.get("name") or "*", name)
        return any(named(w) for w in white) and not any(named(b) for b in black)

    def problems(self, app, objects):
        """Why Argo CD would refuse app or one of its objects, as messages."""
        out = []
        src, dst = app["spec"]["source"], app["spec"]["destination"]
        if not self.source_permitted(src["repoURL"]):
            out.append(f"source {src['repoURL']} not in sourceRepos")
        if not self.destination_permitted(dst["server"], dst.get("namespace", "")):
            out.append(f"destination {dst['server']} {dst.get('namespace')} not permitted")
        for o in objects:
            grp, kind, ns, name = ident(o)
            scope = self.scope.get((o["apiVersion"], kind))
            if scope is None:
                out.append(f"{o['apiVersion']} {kind}: no scope in kube-schemas/index.json")
                continue
            namespaced = scope == "Namespaced"
            if not self.kind_permitted(grp, kind, name, namespaced):
                out.append(f"{grp or 'core'}/{kind} {name}: kind not permitted")
            elif namespaced and not self.destination_permitted(dst["server"], ns or dst.get("namespace", "")):
                out.append(f"{kind} {name}: namespace {ns} not a destination")
        return [f"project {self.name}: {m}" for m in out]


ARGOCD_KINDS = {("argoproj.io", "Application"), ("argoproj.io", "AppProject")}


def confinement_problems(project, app, is_root, argocd_ns):
    """C22/F14: what a nemoc project admits beyond its Applications' needs, as messages."""
    out = []
    if is_root:
        white = project.spec.get("namespaceResourceWhitelist")
        if white is None or {(w["group"], w["kind"]) for w in white} - ARGOCD_KINDS:
            out.append("a root's project admits namespaced kinds besides Applications and AppProjects")
        if project.spec.get("clusterResourceWhitelist"):
            out.append("a root's project admits cluster-scoped kinds")
        if any(d.get("namespace") != argocd_ns for d in project.spec.get("destinations", [])):
            out.append(f"a root's project admits namespaces besides {argocd_ns}")
    else:
        servers = {IN_CLUSTER, app["spec"]["destination"]["server"]}
        if any(project.destination_permitted(s, argocd_ns) for s in servers):
            out.append(f"a stage Application's project may deploy into {argocd_ns} (C22)")
    for grp, kind in (("", "Secret"), ("", "ConfigMap"), ("rbac.authorization.k8s.io", "RoleBinding")):
        if project.kind_permitted(grp, kind, "x", True) and any(
                project.destination_permitted(s, argocd_ns) for s in (IN_CLUSTER, app["spec"]["destination"]["server"])):
            out.append(f"it admits {kind} in Argo CD's namespace {argocd_ns} (admin-equivalent, C22)")
    return [f"project {project.name}: {m}" for m in out]


def render(template, element):
    """An ApplicationSet goTemplate with missingkey=error: every {{.key}} must be in element."""
    text = json.dumps(template)
    keys = set(re.findall(r"\{\{\s*\.(\w+)\s*\}\}", text))
    absent = keys - set(element)
    if absent:
        raise KeyError(f"element {element} has no {sorted(absent)}")
    return json.loads(re.sub(r"\{\{\s*\.(\w+)\s*\}\}", lambda m: str(element[m.group(1)]), text))


def stage_order(resource):
    m = re.match(r"(\d+)-", os.path.basename(resource.rstrip("/")))
    return int(m.group(1)) if m else None


def check_target(repo, tree, spec, project_objs, scope, appsets_seen):
    """Failures of one target tree (repo-relative path out/<project>/<target>)."""
    fails = []
    argo_dir = f"{tree}/gitops/argocd"
    root_docs = kustomize(os.path.join(repo, argo_dir))
    apps = [d for d in root_docs if d["kind"] == "Application"]
    projects = {d["metadata"]["name"]: Project(d, scope) for d in root_docs if d["kind"] == "AppProject"}
    # The roots' AppProject lives in the cluster bundle (decision F14): platform/argocd of the
    # cluster the target's contribution names.
    contribution = os.path.join(repo, tree, "gitops/cluster-bundle.json")
    if os.path.exists(contribution):
        with open(contribution) as fh:
            bundle = os.path.join(repo, os.path.dirname(os.path.dirname(tree.rstrip("/"))), "_clusters",
                                  json.load(fh)["cluster"], "platform/argocd")
        if os.path.isdir(bundle):
            projects.update({d["metadata"]["name"]: Project(d, scope) for d in kustomize(bundle)
                             if d["kind"] == "AppProject"})
    target = tree.split("/")[-1]
    argocd = (spec.get("gitops") or {}).get("argocd") or {}
    app_set_mode = argocd.get("applicationSet", False)
    argocd_ns = argocd.get("namespace", "argocd")

    roots = [a for a in apps if a["spec"]["source"]["path"] == argo_dir]
    parts = [a for a in apps if a not in roots]
    if app_set_mode:
        if roots:
            fails.append(f"{argo_dir}: a root Application although an ApplicationSet generates it")
        for d in kustomize(os.path.join(repo, argo_dir, "applicationset")) \
                if os.path.isdir(os.path.join(repo, argo_dir, "applicationset")) else []:
            appsets_seen.append((tree, d))
    elif len(roots) != 1:
        fails.append(f"{argo_dir}: {len(roots)} Applications manage gitops/argocd itself, want 1")
    for r in roots:
        d = r["spec"]["destination"]
        if (d["server"], d.get("namespace")) != (IN_CLUSTER, argocd_ns):
            fails.append(f"root {r['metadata']['name']}: destination {d}, want {IN_CLUSTER} {argocd_ns}")
    if any(d.get("metadata", {}).get("namespace") != argocd_ns for d in root_docs):
        fails.append(f"{argo_dir}: an object outside Argo CD's namespace {argocd_ns}")

    # The parts deliver the target, each object once.
    want = {ident(o) for o in kustomize(os.path.join(repo, tree))}
    seen, part_objects = {}, {}
    for p in parts:
        path = p["spec"]["source"]["path"]
        name = p["metadata"]["name"]
        if not path.startswith(tree + "/"):
            fails.append(f"{name}: source {path} outside {tree}")
            continue
        objs = kustomize(os.path.join(repo, path))
        part_objects[name] = objs
        for o in objs:
            if ident(o) in seen:
                fails.append(f"{ident(o)} delivered by both {seen[ident(o)]} and {name}")
            seen[ident(o)] = name
    if set(seen) != want:
        for o in sorted(want - set(seen)):
            fails.append(f"{tree}: {o} is delivered by no Application")
        for o in sorted(set(seen) - want):
            fails.append(f"{tree}: {o} is delivered but not in the target")

    # Order: waves strictly increase with the stages a part carries; AppProject first.
    ordered = sorted(parts, key=wave)
    for a, b in zip(ordered, ordered[1:]):
        if wave(a) == wave(b):
            fails.append(f"{a['metadata']['name']} and {b['metadata']['name']} share wave {wave(a)}")
            continue
        sa = [stage_order(x) for x in kustomize_resources(repo, a)]
        sb = [stage_order(x) for x in kustomize_resources(repo, b)]
        if sa and sb and max(sa) >= min(sb):
            fails.append(f"{b['metadata']['name']} (wave {wave(b)}) carries stage {min(sb)}, "
                         f"before {a['metadata']['name']}'s stage {max(sa)}")
    for pr in root_docs:
        if pr["kind"] == "AppProject" and parts and wave(pr) >= min(wave(p) for p in parts):
            fails.append(f"AppProject {pr['metadata']['name']} (wave {wave(pr)}) is not before the parts")
    if len(parts) > 1:
        # The cluster's platform bundle (decision F3): named by the target's contribution.
        cm = ""
        contribution = os.path.join(repo, tree, "gitops/cluster-bundle.json")
        if os.path.exists(contribution):
            with open(contribution) as fh:
                cluster = json.load(fh)["cluster"]
            cm = os.path.join(repo, os.path.dirname(os.path.dirname(tree.rstrip("/"))), "_clusters", cluster,
                              "platform/argocd/configmap-argocd-cm.yaml")
        data = (yaml.safe_load(open(cm)) or {}).get("data", {}) if os.path.exists(cm) else {}
        if "resource.customizations.health.argoproj.io_Application" not in data:
            fails.append(f"{tree}: {len(parts)} waves of Applications but no Application health "
                         "check in the platform argocd-cm: the root would not wait between them")

    # Projects admit what they must, and no more (C22). An ApplicationSet's generated root
    # (rendered for this target; check_appsets reports a template that does not render) syncs
    # gitops/argocd/ like a root Application.
    generated = []
    if app_set_mode and appsets_seen:
        aset = appsets_seen[0][1]
        for e in [e for g in aset["spec"]["generators"] for e in g.get("list", {}).get("elements", [])]:
            if e.get("target") == target:
                try:
                    generated.append(render(aset["spec"]["template"], e))
                except KeyError:
                    pass
    checks = [(r, root_docs) for r in roots + generated] + [(p, part_objects.get(p["metadata"]["name"], [])) for p in parts]
    project_objs.extend(checks)
    for app, objs in checks:
        proj = app["spec"]["project"]
        if proj == "default":
            continue
        if proj not in projects:
            fails.append(f"{app['metadata']['name']}: project {proj} is not in {argo_dir}")
            continue
        fails += [f"{app['metadata']['name']}: {m}" for m in projects[proj].problems(app, objs)]
        fails += [f"{app['metadata']['name']}: {m}"
                  for m in confinement_problems(projects[proj], app, app not in parts, argocd_ns)]
    return fails


def kustomize_resources(repo, app):
    with open(os.path.join(repo, app["spec"]["source"]["path"], "kustomization.yaml")) as f:
        return yaml.safe_load(f).get("resources", [])


def check_appsets(repo, spec, project, trees, appsets_seen):
    fails = []
    argocd = (spec.get("gitops") or {}).get("argocd") or {}
    if not argocd.get("applicationSet"):
        if appsets_seen:
            fails.append(f"{project}: ApplicationSet without argocd.applicationSet")
        return fails
    if len(appsets_seen) != 1:
        return [f"{project}: {len(appsets_seen)} ApplicationSets, want 1"]
    tree, aset = appsets_seen[0]
    first = spec["targets"][0]["name"]
    if tree.split("/")[-1] != first:
        fails.append(f"{project}: ApplicationSet in {tree}, want the first target {first}")
    elements = [e for g in aset["spec"]["generators"] for e in g.get("list", {}).get("elements", [])]
    by_target = {t.split("/")[-1]: t for t in trees}
    names = set()
    for e in elements:
        try:
            app = render(aset["spec"]["template"], e)
        except KeyError as err:
            fails.append(f"{project}: {err}")
            continue
        name, path = app["metadata"]["name"], app["spec"]["source"]["path"]
        if name in names:
            fails.append(f"{project}: two generated roots named {name}")
        names.add(name)
        t = by_target.get(e.get("target"))
        if t is None or path != f"{t}/gitops/argocd":
            fails.append(f"{project}: generated root {name} syncs {path}, not a target's gitops/argocd")
            continue
        d = app["spec"]["destination"]
        if (d["server"], d.get("namespace")) != (IN_CLUSTER, argocd.get("namespace", "argocd")):
            fails.append(f"{project}: generated root {name} destination {d}")
        # The generated root cannot name a project only its own sync would create: Argo CD does
        # not sync an Application whose project does not exist (appcontroller.go
        # projectErrorToCondition).
        if any(o["kind"] == "AppProject" and o["metadata"]["name"] == app["spec"]["project"]
               for o in kustomize(os.path.join(repo, path))):
            fails.append(f"{project}: generated root {name} names project {app['spec']['project']}, "
                         "which only its own sync creates")
    if set(e.get("target") for e in elements) != set(by_target):
        fails.append(f"{project}: ApplicationSet elements {sorted(e.get('target') for e in elements)}, "
                     f"targets {sorted(by_target)}")
    return fails


def main():
    if shutil.which("kubectl") is None:
        missing("kubectl")
    index = os.path.join(SRC, "..", "shared", "kube-schemas", "index.json")
    if not os.path.exists(index):
        missing("../shared/kube-schemas/index.json")
    with open(index) as f:
        scope = {(s["apiVersion"], s["kind"]): s["scope"] for s in json.load(f)["schemas"]}
    failures, targets, apps = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="nemoc-argocd-") as repo:
        for spec_path in all_specs(SRC):
            with open(spec_path) as f:
                doc = yaml.safe_load(f)
            spec, project = doc["spec"], doc["metadata"]["name"]
            gitops = spec.get("gitops") or {}
            if "argocd" not in gitops.get("engines", []):
                continue
            base = gitops.get("path", "out")
            run = build(NEMOC, SRC, os.path.join(repo, base), [spec_path])
            if run.returncode != 0:
                print(run.stderr, file=sys.stderr)
                return 1
            trees = [f"{base}/{project}/{t['name']}" for t in spec["targets"]]
            appsets_seen, checked = [], []
            for tree in trees:
                failures += check_target(repo, tree, spec, checked, scope, appsets_seen)
                targets += 1
            apps += len(checked)
            failures += check_appsets(repo, spec, project, trees, appsets_seen)
    for f in failures:
        print("FAIL", f)
    print(f"{targets} targets, {apps} Applications: {len(failures)} failures")
    return 1 if failures or targets == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
