#!/usr/bin/python3
"""The platform bundle installs releases, once, in order (issue #17; C6, C7, C8, F3, F4).

Builds every example and test spec with the nemoc under test into a scratch
directory, then holds every gitops/platform/ bundle to the reviewed table
libsonnet/platform_releases.json:

  * each component is at the table's version, with the values that pin its
    released images (the git chart at the tag carries staging/main defaults);
  * every image the table lists for a pinned version, and every image of the
    cluster objects nemoc emits (NicClusterPolicy), is a tagged release: no
    :main, :latest, *-devel, *-latest, no staging registry, and listed in the table;
  * one JobSet controller: Trainer never brings its own (jobset.install false,
    no overlays/manager), at most one JobSet source;
  * Argo CD: a per-cluster root Application (not named by the project), the
    documented argoproj.io_Application health check in argocd-cm, sync waves
    that put each component after the components whose CRDs it uses, and
    syncPolicy.retry on every platform Application;
  * Flux: dependsOn between same-kind components in that order, retryInterval
    on Kustomizations.

Usage: bundle_releases.py <nemoc> <source dir>
"""
import glob
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import build_all, require_yaml  # noqa: E402

yaml = require_yaml(skip_message="SKIP: python3-yaml missing")

NEMOC, SRC = sys.argv[1], sys.argv[2]
TABLE = json.load(open(os.path.join(SRC, "libsonnet/platform_releases.json")))["components"]
# component -> components whose CRDs/webhooks it uses (must come first).
NEEDS = {"trainer": ["jobset"], "trainer-runtimes": ["trainer"], "network-operator": ["gpu-operator"]}
OBJECT_PROVIDER = {"NicClusterPolicy": "network-operator", "ClusterPolicy": "gpu-operator"}

failures = []


def fail(msg):
    failures.append(msg)


def unreleased(image):
    """Why an image reference is not a tagged release, or None."""
    name, _, tag = image.rpartition(":")
    if not name or "/" in tag:
        return "no tag"
    if "staging" in name:
        return "staging registry"
    if tag in ("main", "latest", "master") or tag.endswith("-devel") or tag.endswith("-latest") \
            or tag.startswith("main-") or tag.startswith("release-"):
        return "unreleased tag " + tag
    return None


def dig(values, dotted):
    cur = values
    for k in dotted.split("."):
        if not isinstance(cur, dict) or k not in cur:
            return KeyError
        cur = cur[k]
    return cur


# The table itself: every listed image is a release.
for name, row in TABLE.items():
    for entry in row["images"]:
        why = unreleased(entry["image"])
        if why:
            fail(f"table {name} {row['version']}: {entry['image']}: {why}")
        if "@" not in entry["at"]:
            fail(f"table {name}: image {entry['image']} does not cite repo@tag:path")
TABLE_IMAGES = {name: {e["image"] for e in row["images"]} for name, row in TABLE.items()}


# The component whose CRD each kind of cluster object is (the components' charts at the pinned tags).
CRD_OWNER = {"mellanox.com/NicClusterPolicy": "network-operator", "nvidia.com/ClusterPolicy": "gpu-operator",
             "kueue.x-k8s.io/*": "kueue", "monitoring.coreos.com/*": "prometheus-operator",
             "jobset.x-k8s.io/*": "jobset", "trainer.kubeflow.org/*": "trainer", "kubeflow.org/*": "training-operator"}


def object_needs(plat, repo_path):
    """Components whose CRDs the objects of a bundle directory (a source path) use."""
    d = os.path.join(plat, repo_path.split("/platform/", 1)[1])
    needs = set()
    for _, o in load_dir(d):
        group = o["apiVersion"].split("/")[0] if "/" in o["apiVersion"] else ""
        owner = CRD_OWNER.get(f"{group}/{o['kind']}") or CRD_OWNER.get(f"{group}/*")
        if owner:
            needs.add(owner)
    return needs


def load_dir(d):
    docs = []
    for f in sorted(glob.glob(os.path.join(d, "*.yaml"))):
        if os.path.basename(f) == "kustomization.yaml":
            continue
        docs.append((f, yaml.safe_load(open(f))))
    return docs


def check_component(where, name, version, values, kind_is_helm):
    if name not in TABLE:
        fail(f"{where}: component {name} has no row in platform_releases.json")
        return
    row = TABLE[name]
    if version != row.get("tag", row["version"]):
        fail(f"{where}: {name} at {version}, table says {row.get('tag', row['version'])}")
    for dotted, want in row["pins"].items():
        got = dig(values or {}, dotted)
        if got != want:
            fail(f"{where}: {name} value {dotted} = {got!r}, the release pins {want!r} ({row['pinsAt']})")


def check_patches(where, name, patches):
    """A kustomize component carries exactly the table's reviewed patches; B16:
    training-operator's PyTorchJob init container image is set, released, listed,
    and not a Docker Hub short name (alpine:3.10 is the operator's default)."""
    row = TABLE.get(name, {})
    want = row.get("patches", [])
    if (patches or []) != want:
        fail(f"{where}: {name} kustomize patches {patches!r}, the table has {want!r}")
    if name == "training-operator":
        flag = "--pytorch-init-container-image="
        images = re.findall(re.escape(flag) + r'([^"\\\]\s]+)', json.dumps(patches or []))
        if not images:
            fail(f"{where}: training-operator without {flag} (B16: the Worker init container defaults to alpine:3.10 from Docker Hub)")
        for image in images:
            why = unreleased(image)
            if why:
                fail(f"{where}: init container image {image}: {why}")
            if image not in TABLE_IMAGES.get(name, set()):
                fail(f"{where}: init container image {image} is not in the reviewed table")
            if "." not in image.split("/")[0]:
                fail(f"{where}: init container image {image} is a Docker Hub short name")


rdma_checked = [0]


def check_dcgm_labels(where, name, values):
    """The training alerts select DCGM series by the workload's pod and namespace, the labels
    dcgm-exporter sets (NVIDIA/dcgm-exporter internal/pkg/transformation/const.go:21-22). The GPU
    Operator's ServiceMonitor keeps them only with honorLabels (v26.7.0 values.yaml:325-329 default
    false -> Prometheus renames them exported_pod/exported_namespace)."""
    if name == "gpu-operator" and dig(values or {}, "dcgmExporter.serviceMonitor.honorLabels") is not True:
        fail(f"{where}: gpu-operator's dcgm-exporter ServiceMonitor drops the workload's pod labels "
             "(dcgmExporter.serviceMonitor.honorLabels is not true)")


def cluster_platform(tree):
    """The platform bundle of the cluster a target names (decision F3): the target's
    gitops/cluster-bundle.json names it; the bundle is <out>/_clusters/<cluster>/platform."""
    contribution = os.path.join(tree, "gitops/cluster-bundle.json")
    if not os.path.exists(contribution):
        return None
    with open(contribution) as fh:
        name = json.load(fh)["cluster"]
    out = os.path.dirname(os.path.dirname(tree))
    plat = os.path.join(out, "_clusters", name, "platform")
    if not os.path.isdir(plat):
        fail(f"{tree}: names cluster {name}, but {plat} does not exist")
        return None
    return plat


def check_bundle(tree, plat):
    objects = [x for d in sorted(glob.glob(os.path.join(plat, "objects"))) + sorted(glob.glob(os.path.join(plat, "objects", "*", ""))) for x in load_dir(d)]
    for f, o in objects:
        provider = OBJECT_PROVIDER.get(o["kind"])
        spec = o.get("spec", {})
        images = []
        for v in spec.values():
            if isinstance(v, dict) and "image" in v and "repository" in v:
                images.append(f"{v['repository']}/{v['image']}:{v['version']}")
        for k in ("secondaryNetwork",):
            for v in (spec.get(k) or {}).values():
                if isinstance(v, dict) and "image" in v:
                    images.append(f"{v['repository']}/{v['image']}:{v['version']}")
        for image in images:
            why = unreleased(image)
            if why:
                fail(f"{f}: {image}: {why}")
            if provider and image not in TABLE_IMAGES.get(provider, set()):
                fail(f"{f}: {image} is not in the reviewed table for {provider}")

    # Every RDMA resource a vanilla-k8s workload requests is advertised by the bundle's
    # NicClusterPolicy: the SR-IOV device plugin's resourceList (prefix/name) or the RDMA
    # shared device plugin's configList (prefix "rdma") -- Mellanox/network-operator v26.4.1
    # example/crs/mellanox.com_v1alpha1_nicclusterpolicy_cr-full-ocp.yaml:45-80.
    advertised = set()
    for f, o in objects:
        if o["kind"] != "NicClusterPolicy":
            continue
        spec = o["spec"]
        if "sriovDevicePlugin" in spec:
            for r in json.loads(spec["sriovDevicePlugin"]["config"])["resourceList"]:
                advertised.add(r.get("resourcePrefix", "nvidia.com") + "/" + r["resourceName"])
        if "rdmaSharedDevicePlugin" in spec:
            for r in json.loads(spec["rdmaSharedDevicePlugin"]["config"])["configList"]:
                advertised.add("rdma/" + r["resourceName"])
    requested = set()
    for stage in glob.glob(os.path.join(tree, "[0-9][0-9]-*", "*.yaml")):
        with open(stage) as fh:
            text = fh.read()
        requested.update(re.findall(r"^\s+((?:rdma|nvidia\.com)/(?!gpu\b)[A-Za-z0-9_.-]+):", text, re.M))
    for r in sorted(requested - advertised):
        fail(f"{tree}: workloads request {r}, which nothing in the platform bundle advertises")
    rdma_checked[0] += len(requested)

    argo_apps = os.path.join(plat, "apps/argocd")
    if os.path.isdir(os.path.join(plat, "argocd")):
        roots = load_dir(os.path.join(plat, "argocd"))
        apps = [o for _, o in roots if o["kind"] == "Application"]
        cms = [o for _, o in roots if o["kind"] == "ConfigMap"]
        if len(apps) != 1:
            fail(f"{plat}/argocd: expected one root Application, got {len(apps)}")
        else:
            root = apps[0]
            project = os.path.basename(os.path.dirname(tree))
            if not root["metadata"]["name"].startswith("platform-") or project in root["metadata"]["name"]:
                fail(f"{plat}/argocd: root {root['metadata']['name']} is not named by the cluster (F3)")
            want = os.path.relpath(os.path.join(plat, "apps/argocd"), os.path.dirname(os.path.dirname(os.path.dirname(plat))))
            if not root["spec"]["source"]["path"].endswith(want):
                fail(f"{plat}/argocd: root syncs {root['spec']['source']['path']}, not {want}")
            if "retry" not in root["spec"].get("syncPolicy", {}):
                fail(f"{plat}/argocd: root has no syncPolicy.retry (C7)")
        key = "resource.customizations.health.argoproj.io_Application"
        if not cms or key not in cms[0].get("data", {}) or "obj.status.health" not in cms[0]["data"][key]:
            fail(f"{plat}/argocd: argocd-cm lacks the {key} health check (F4)")
        waves, objects_waves = {}, {}
        jobsets = 0
        for f, o in load_dir(argo_apps):
            spec = o["spec"]
            if "retry" not in spec.get("syncPolicy", {}):
                fail(f"{f}: no syncPolicy.retry (C7)")
            wave = int(o["metadata"].get("annotations", {}).get("argocd.argoproj.io/sync-wave", "0"))
            src = spec["source"]
            if "/platform/objects" in "/" + src["path"]:
                objects_waves[src["path"]] = (f, wave)
                continue
            helm = src.get("helm", {})
            name = helm.get("releaseName")
            if name is None:  # kustomize: find the row by path
                name = {"manifests/overlays/standalone": "training-operator",
                        "manifests/overlays/runtimes": "trainer-runtimes", ".": "prometheus-operator"}.get(src["path"], src["path"])
            if "overlays/manager" in src["path"] or "config/default" in src["path"]:
                fail(f"{f}: {src['path']} is a source tree with unreleased images / a bundled JobSet (C6, C8)")
            if name == "jobset":
                jobsets += 1
            if name == "trainer" and dig(helm.get("valuesObject", {}), "jobset.install") is not False:
                fail(f"{f}: Trainer installs its own JobSet (C8)")
            check_dcgm_labels(f, name, helm.get("valuesObject", {}))
            check_component(f, name, src["targetRevision"], helm.get("valuesObject"), "helm" in src)
            if "helm" not in src:
                check_patches(f, name, src.get("kustomize", {}).get("patches"))
            waves[name] = wave
        if jobsets > 1:
            fail(f"{argo_apps}: {jobsets} JobSet installations (C8)")
        for name, needs in NEEDS.items():
            for n in needs:
                if name in waves and n in waves and not waves[name] > waves[n]:
                    fail(f"{argo_apps}: {name} (wave {waves[name]}) does not come after {n} (wave {waves[n]})")
        # B25: each group of cluster objects after every component whose CRDs it uses.
        for path, (f, wave) in sorted(objects_waves.items()):
            for n in sorted(object_needs(plat, path)):
                if n not in waves:
                    fail(f"{f}: its objects need {n}, which the bundle does not install")
                elif not wave > waves[n]:
                    fail(f"{f}: cluster objects (wave {wave}) not after {n} (wave {waves[n]})")

    flux = os.path.join(plat, "flux")
    if os.path.isdir(flux):
        docs = load_dir(flux)
        repos = {o["metadata"]["name"]: o for _, o in docs if o["kind"] == "GitRepository"}
        for f, o in docs:
            if o["kind"] not in ("HelmRelease", "Kustomization"):
                continue
            spec = o["spec"]
            mname = o["metadata"]["name"]
            if "/platform/objects" in spec["path"]:
                # B25: after every component whose CRDs its objects use (dependsOn names
                # Kustomizations only: kustomize-controller v1.9.4 api/v1/kustomization_types.go:52-56).
                for n in sorted(object_needs(plat, spec["path"])):
                    if {"name": "platform-" + n} not in spec.get("dependsOn", []):
                        fail(f"{f}: applies objects that need {n} without dependsOn platform-{n}")
                    if not os.path.exists(os.path.join(flux, f"kustomization-platform-{n}.yaml")):
                        fail(f"{f}: depends on platform-{n}, which is no Kustomization of the bundle")
                continue
            wrapped = re.search(r"/platform/flux/components/([^/]+)$", spec["path"].rstrip("/"))
            if wrapped:
                # A Helm component: its Kustomization waits for the HelmRelease in its own directory.
                inner = load_dir(os.path.join(flux, "components", wrapped.group(1)))
                if [x["kind"] for _, x in inner] != ["HelmRelease"] or not spec.get("wait"):
                    fail(f"{f}: a Helm component's Kustomization must wait for exactly its HelmRelease")
                    continue
                for n in NEEDS.get(mname[len("platform-"):], []):
                    if os.path.exists(os.path.join(flux, f"kustomization-platform-{n}.yaml")) \
                            and {"name": "platform-" + n} not in spec.get("dependsOn", []):
                        fail(f"{f}: no dependsOn platform-{n}")
                f, o = inner[0]
                spec = o["spec"]
            if mname == "platform-root":
                # The bundle's root (C19): platform/flux itself from the cluster's own branch-tracking
                # GitRepository, never pruning a component; not a component with a release.
                src = repos.get(spec["sourceRef"]["name"], {})
                if not spec["path"].rstrip("/").endswith("/platform/flux") or "branch" not in src.get("spec", {}).get("ref", {}):
                    fail(f"{f}: the bundle root must apply platform/flux from the cluster's own repository")
                if spec.get("prune") is not False:
                    fail(f"{f}: the bundle root must not prune (removing a component is a human act)")
                continue
            name = mname[len("platform-"):]
            src = spec["chart"]["spec"]["sourceRef"]["name"] if o["kind"] == "HelmRelease" else spec["sourceRef"]["name"]
            tag = repos[src]["spec"]["ref"].get("tag")
            if "overlays/manager" in json.dumps(spec) or "config/default" in json.dumps(spec):
                fail(f"{f}: source tree with unreleased images / bundled JobSet (C6, C8)")
            if name == "trainer" and dig(spec.get("values", {}), "jobset.install") is not False:
                fail(f"{f}: Trainer installs its own JobSet (C8)")
            check_dcgm_labels(f, name, spec.get("values", {}))
            check_component(f, name, tag, spec.get("values"), o["kind"] == "HelmRelease")
            if o["kind"] == "Kustomization":
                check_patches(f, name, spec.get("patches"))
            if wrapped:
                check_component(f, name, repos[spec["chart"]["spec"]["sourceRef"]["name"]]["spec"]["ref"].get("tag"),
                                spec.get("values"), True)
                check_dcgm_labels(f, name, spec.get("values", {}))
                if name == "trainer" and dig(spec.get("values", {}), "jobset.install") is not False:
                    fail(f"{f}: Trainer installs its own JobSet (C8)")
                continue
            # Every component is a Kustomization (a Helm one wraps its HelmRelease), so dependsOn
            # orders them all, across kinds too (B25).
            if o["kind"] != "Kustomization":
                fail(f"{f}: {o['kind']} {mname} directly in platform/flux: only a Kustomization can be depended on")
            for n in NEEDS.get(name, []):
                if os.path.exists(os.path.join(flux, f"kustomization-platform-{n}.yaml")) \
                        and {"name": "platform-" + n} not in spec.get("dependsOn", []):
                    fail(f"{f}: no dependsOn platform-{n}")
            if o["kind"] == "Kustomization" and "retryInterval" not in spec:
                fail(f"{f}: no retryInterval")


with tempfile.TemporaryDirectory() as tmp:
    r = build_all(NEMOC, SRC, tmp)
    if r.returncode != 0:
        print(r.stdout + r.stderr, file=sys.stderr)
        sys.exit(1)
    bundles = sorted(set(os.path.dirname(p) for p in glob.glob(os.path.join(tmp, "*/*/gitops"))))
    checked = 0
    for tree in bundles:
        if os.path.isdir(os.path.join(tree, "gitops/platform")):
            fail(f"{tree}: a platform bundle inside a project's tree (F3: one per cluster, in _clusters/)")
        plat = cluster_platform(tree)
        if plat is not None:
            check_bundle(tree, plat)
            # EKS advertises neither nvidia.com/gpu nor vpc.amazonaws.com/efa by itself (C9).
            if "| Profile | `eks-efa` |" in open(os.path.join(tree, "SUMMARY.md")).read():
                for n in ("nvidia-device-plugin", "efa-device-plugin"):
                    if not glob.glob(os.path.join(plat, f"*/*platform*{n}.yaml")) and \
                            not glob.glob(os.path.join(plat, f"apps/argocd/*-{n}.yaml")):
                        fail(f"{tree}: EKS bundle without {n}")
            checked += 1
    if checked == 0:
        fail("no platform bundle was generated")
    if rdma_checked[0] < 3:
        fail(f"only {rdma_checked[0]} RDMA resource requests checked: nothing proves the NicClusterPolicy check")

for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
