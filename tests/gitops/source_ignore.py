#!/usr/bin/python3
"""Each Flux GitRepository nemoc emits keeps exactly its target's tree in the artifact (C11).

source-controller applies a GitRepository's spec.ignore (.sourceignore = gitignore format,
replacing the default exclusions) to the checkout. This test builds every example and test spec
into an `out/` of a scratch Git work tree and asks Git itself (`git check-ignore --no-index`,
the same gitignore rules) which files the artifact would hold: every file of the GitRepository's
target tree must be kept -- in particular every path a Kustomization reading that GitRepository
points at -- and every file of another target or project, and the repository's own files, left out.

Usage: source_ignore.py <nemoc> <source dir>
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import all_specs, build, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])


def ignored(repo, ignore, paths):
    """The subset of paths (relative to repo) that the gitignore text `ignore` excludes."""
    with open(os.path.join(repo, ".gitignore"), "w") as f:
        f.write(ignore)
    r = subprocess.run(["git", "-C", repo, "check-ignore", "--no-index", "--stdin"],
                       input="\n".join(paths) + "\n", capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(r.stderr)
    return set(r.stdout.split())


def main():
    failures, checked = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-sourceignore-") as repo:
        subprocess.run(["git", "init", "-q", repo], check=True)
        # Each spec into the directory its gitops.path names (default out), as committed.
        for spec in all_specs(SRC):
            with open(spec) as f:
                gitops = (yaml.safe_load(f)["spec"].get("gitops") or {})
            run = build(NEMOC, SRC, os.path.join(repo, gitops.get("path", "out")), [spec])
            if run.returncode != 0:
                print(run.stderr, file=sys.stderr)
                return 1
        with open(os.path.join(repo, "README.md"), "w") as f:
            f.write("not nemoc's\n")
        files = sorted(os.path.relpath(os.path.join(d, f), repo)
                       for d, _, fs in os.walk(repo) if "/.git" not in d + "/" for f in fs
                       if f != ".gitignore")
        docs = []
        for rel in files:
            if rel.endswith(".yaml") and ("/gitops/flux/" in rel or "/platform/flux/" in rel):
                with open(os.path.join(repo, rel)) as f:
                    docs.append((rel, yaml.safe_load(f)))
        for rel, repo_obj in docs:
            if repo_obj.get("kind") != "GitRepository":
                continue
            platform = "/_clusters/" in rel
            if platform and "branch" not in repo_obj["spec"].get("ref", {}):
                continue  # a component's release repository (ref.tag), not this one
            ignore = repo_obj["spec"].get("ignore")
            name = repo_obj["metadata"]["name"]
            if ignore is None:
                failures.append(f"{rel}: no spec.ignore (the artifact holds the whole repository)")
                continue
            # out/<project>/<target>/, or a cluster's bundle: out/_clusters/<cluster>/platform/objects/
            # and its flux/ (the bundle's root Kustomization reads it, C19)
            targets = ([rel.split("/flux/")[0] + "/objects/", rel.split("/flux/")[0] + "/flux/"] if platform
                       else [rel.split("/gitops/")[0] + "/"])
            target = " and ".join(targets)
            dropped = ignored(repo, ignore, files)
            for f in files:
                inside = any(f.startswith(t) for t in targets)
                if inside and f in dropped:
                    failures.append(f"{name}: drops {f} of its own target")
                elif not inside and f not in dropped:
                    failures.append(f"{name}: keeps {f}, outside {target}")
            # Every Kustomization reading this GitRepository points into what is kept.
            for krel, k in docs:
                if k.get("kind") == "Kustomization" and "spec" in k and k["spec"].get("sourceRef", {}).get("name") == name:
                    path = k["spec"]["path"].lstrip("./").rstrip("/") + "/"
                    if not any(path.startswith(t) for t in targets) or not any(f.startswith(path) and f not in dropped for f in files):
                        failures.append(f"{krel}: path {k['spec']['path']} is not in {name}'s artifact")
            checked += 1
    for f in failures[:50]:
        print("FAIL", f, file=sys.stderr)
    print(f"{checked} GitRepositories checked against git's gitignore rules, {len(failures)} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
