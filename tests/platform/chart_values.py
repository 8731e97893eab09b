#!/usr/bin/python3
"""Every value nemoc sets on a bundled Helm chart is a key that chart's values.yaml has at the
pinned release (issue #43 acceptance; field review B23).

Builds every example and test spec, reads each cluster bundle's Helm values -- Argo CD's
Application `spec.source.helm.valuesObject` and Flux's HelmRelease `spec.values` -- and walks
them against `../shared/upstream/charts/<component>/values.yaml` (the chart at the tag the
bundle pins, unchanged; its SOURCE file names repo@tag:path, compared with the Application's
targetRevision / the GitRepository's tag). A key the chart does not have is a value Helm ignores
without a word: a misspelt pin, or one moved by a chart release. Free-form maps are allowed: a
key whose chart default is an empty map ({}), or one of FREE_FORM (the charts document them as
maps of arbitrary keys: annotations, labels, selectors, affinity, resources). A key the chart
documents commented out (`#version: ""` under `operator:` in the GPU Operator's values.yaml: "If
version is not specified, then default is to use chart.AppVersion") is a key its templates read.

Also (B23): each target's SUMMARY.md names, for every Helm chart its bundle installs, the git
source the Application/HelmRelease installs (`git <owner/repo>@<tag>:<path>`), not only the
released artifact; and every `pullPolicy: Always` default of an image the bundle installs is overridden with
IfNotPresent, as the charts' release packaging does (kueue v0.19.2 and jobset v0.12.0
hack/helm-chart-package.sh:75) -- a git chart would pull on every restart.

usage: chart_values.py <nemoc> <source dir>
"""
import glob
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import build_all, bundle_helm_installs, missing, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], sys.argv[2]
CHARTS = os.path.join(SRC, "..", "shared", "upstream", "charts")
FREE_FORM = {"podAnnotations", "podLabels", "annotations", "labels", "nodeSelector", "affinity",
             "tolerations", "resources", "extraArgs", "env", "securityContext", "podSecurityContext"}
# Defaults of `pullPolicy: Always` that belong to parts a release leaves off (kueue's KueueViz
# dashboard, enableKueueViz: false at values.yaml:294): nothing of them is installed.
OFF_BY_DEFAULT = {("kueue", "kueueViz.backend.image.pullPolicy"), ("kueue", "kueueViz.frontend.image.pullPolicy")}


def commented_keys(text):
    """Dotted paths of keys values.yaml documents commented out: `<indent>#name: value` (no space
    after '#'), placed under the real keys above it by indentation."""
    stack, out = [], set()
    for line in text.splitlines():
        real = re.match(r"^(\s*)([A-Za-z_][\w.-]*):(\s|$)", line)
        doc = re.match(r"^(\s*)#([A-Za-z_][\w-]*):(\s|$)", line)
        m = real or doc
        if not m:
            continue
        indent = len(m.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = ".".join([k for _, k in stack] + [m.group(2)])
        if real:
            stack.append((indent, m.group(2)))
        else:
            out.add(path)
    return out


def walk(values, chart, path, where, errors, documented=frozenset()):
    """Every key of `values` exists in `chart` (the chart's defaults) at the same path."""
    for key, value in values.items():
        dotted = f"{path}.{key}" if path else key
        if (not isinstance(chart, dict) or key not in chart) and dotted in documented:
            continue
        if not isinstance(chart, dict) or key not in chart:
            errors.append(f"{where}: {dotted} is no key of the chart's values.yaml")
            continue
        default = chart[key]
        if isinstance(value, dict) and isinstance(default, dict) and default and key not in FREE_FORM:
            walk(value, default, dotted, where, errors, documented)


def always_defaults(chart, path=""):
    """Dotted paths of every `pullPolicy: Always` default."""
    out = []
    for key, value in (chart or {}).items():
        dotted = f"{path}.{key}" if path else key
        if isinstance(value, dict):
            out += always_defaults(value, dotted)
        elif key == "pullPolicy" and value == "Always":
            out.append(dotted)
    return out


def get(values, dotted):
    for part in dotted.split("."):
        if not isinstance(values, dict) or part not in values:
            return None
        values = values[part]
    return values


def chart_of(component):
    d = os.path.join(CHARTS, component)
    if not os.path.isfile(os.path.join(d, "values.yaml")):
        return None, None
    source = open(os.path.join(d, "SOURCE")).read().strip() if os.path.exists(os.path.join(d, "SOURCE")) else ""
    text = open(os.path.join(d, "values.yaml")).read()
    return (yaml.safe_load(text) or {}, commented_keys(text)), source


def check_summaries(tmp, errors):
    """Every Helm install of a target's bundle is named in its SUMMARY.md by its git source."""
    import json
    checked = 0
    for summary in sorted(glob.glob(os.path.join(tmp, "*", "*", "SUMMARY.md"))):
        tree = os.path.dirname(summary)
        contribution = os.path.join(tree, "gitops", "cluster-bundle.json")
        if not os.path.exists(contribution):
            continue
        plat = os.path.join(tmp, "_clusters", json.load(open(contribution))["cluster"], "platform")
        text = open(summary).read()
        m = re.search(r"^\| Installed by the cluster's platform bundle \| Provides \|\n\|---\|---\|\n((?:\|.*\n)*)", text, re.M)
        rows = {line[2:].split(" ", 1)[0]: line for line in (m.group(1).splitlines() if m else [])}
        for component, source in {i["release"]: i["source"] for i in reversed(bundle_helm_installs(plat))}.items():
            row = rows.get(component)
            if row is None:
                continue  # another project's component on this cluster
            checked += 1
            if f"git {source}" not in row:
                errors.append(f"{os.path.relpath(summary, tmp)}: names {component} as {row.split('|')[1].strip()!r}, "
                              f"but the bundle installs git {source}")
    return checked


def main():
    if not os.path.isdir(CHARTS):
        missing("../shared/upstream/charts")
    errors, checked, installs = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="nemoc-chart-values-") as tmp:
        run = build_all(NEMOC, SRC, tmp)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for plat in sorted(glob.glob(os.path.join(tmp, "_clusters", "*", "platform"))):
            for install in bundle_helm_installs(plat):
                f, component, tag, values = install["file"], install["release"], install["tag"], install["values"]
                where = os.path.relpath(f, tmp)
                loaded, source = chart_of(component)
                if loaded is None:
                    errors.append(f"{where}: no ../shared/upstream/charts/{component}/values.yaml to check {component} against")
                    continue
                if tag and f"@{tag}:" not in source:
                    errors.append(f"{where}: installs {component} at {tag}, but the chart's values.yaml is from {source}")
                chart, documented = loaded
                installs += 1
                before = len(errors)
                walk(values, chart, "", where, errors, documented)
                checked += 1 if len(errors) == before else 0
                for dotted in always_defaults(chart):
                    if (component, dotted) in OFF_BY_DEFAULT:
                        continue
                    if get(values, dotted) != "IfNotPresent":
                        errors.append(f"{where}: {component}'s {dotted} stays Always (the git chart's default; "
                                      "release packaging sets IfNotPresent)")
        named = check_summaries(tmp, errors)
    if named < 10:
        errors.append(f"too little to prove anything: {named} SUMMARY.md rows of installed charts")
    if installs < 10:
        errors.append(f"too little to prove anything: {installs} Helm installs")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{installs} Helm installs' values checked against their chart's values.yaml, {named} SUMMARY.md rows "
          f"against what the bundle installs: {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
