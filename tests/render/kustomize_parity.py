#!/usr/bin/python3
"""`nemoc render` prints what `kubectl kustomize` builds from the tree `nemoc build` writes.

For every example and test spec target: the documents of `nemoc render SPEC --target T` equal, in
order and content, the documents `kubectl kustomize out/<project>/<target>` prints for the built
tree (kustomize's legacy order: Namespace first, ...; compiler/render.cc). render writes nothing
(run in an empty directory, which stays empty), keeps secrets out (no Secret objects), and for
bad input: a spec with several targets and no --target is a usage error (exit 2) naming them, two
specs are a usage error, an unknown target is located and exits as build does, an invalid spec
exits 1 with file:line:column; nothing reaches stdout then.

Usage: kustomize_parity.py <nemoc> <source dir>
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import all_specs, build_all, missing, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
KUBECTL = shutil.which("kubectl")
if not KUBECTL:
    missing("kubectl", "kubectl not installed: skipped")
ENV = dict(os.environ, NEMOC_DATA_DIR=SRC)


def ident(doc):
    m = doc.get("metadata") or {}
    return (doc.get("apiVersion"), doc.get("kind"), m.get("namespace"), m.get("name"))


def render(args, cwd):
    return subprocess.run([NEMOC, "render"] + args, capture_output=True, text=True, cwd=cwd, env=ENV)


def main():
    errors, targets = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-render-") as tmp:
        out = os.path.join(tmp, "out")
        r = build_all(NEMOC, SRC, out)
        if r.returncode != 0:
            print(f"FAIL: nemoc build exit {r.returncode}\n{r.stderr}")
            return 1
        empty = os.path.join(tmp, "cwd")
        os.makedirs(empty)
        for spec_path in all_specs(SRC):
            spec = yaml.safe_load(open(spec_path))
            names = [t["name"] for t in spec["spec"]["targets"]]
            for name in names:
                targets += 1
                where = f"{os.path.relpath(spec_path, SRC)} -> {name}"
                got = render([spec_path, "--target", name], empty)
                if got.returncode != 0:
                    errors.append(f"{where}: render exit {got.returncode}: {got.stderr}")
                    continue
                tree = os.path.join(out, spec["metadata"]["name"], name)
                want = subprocess.run([KUBECTL, "kustomize", tree], capture_output=True, text=True)
                if want.returncode != 0:
                    errors.append(f"{where}: kubectl kustomize: {want.stderr}")
                    continue
                a = [d for d in yaml.safe_load_all(got.stdout) if d]
                b = [d for d in yaml.safe_load_all(want.stdout) if d]
                if [ident(d) for d in a] != [ident(d) for d in b]:
                    errors.append(f"{where}: render order {[ident(d)[1:] for d in a]} != kustomize "
                                  f"{[ident(d)[1:] for d in b]}")
                elif a != b:
                    diff = next(ident(x) for x, y in zip(a, b) if x != y)
                    errors.append(f"{where}: {diff} differs from kubectl kustomize's")
                if any(d.get("kind") == "Secret" for d in a):
                    errors.append(f"{where}: the stream holds a Secret")
            # Several targets and no --target: usage error naming them.
            if len(names) > 1:
                r = render([spec_path], empty)
                if r.returncode != 2 or not all(n in r.stderr for n in names) or r.stdout:
                    errors.append(f"{spec_path}: several targets without --target: exit {r.returncode}, {r.stderr!r}")
        if os.listdir(empty):
            errors.append(f"render wrote {os.listdir(empty)}")
        # One target of one spec, by default when the spec has one target.
        one = next(p for p in all_specs(SRC) if len(yaml.safe_load(open(p))["spec"]["targets"]) == 1)
        r = render([one], empty)
        # (its first object: the Namespace when the project owns it; with a platform bundle the
        # cluster bundle does, C20, and the stream starts with the project's own first object)
        if r.returncode != 0 or not r.stdout.startswith("apiVersion: "):
            errors.append(f"{one}: the only target is not rendered by default (exit {r.returncode}): {r.stderr}")
        r = render([one, one], empty)
        if r.returncode != 2:
            errors.append(f"two specs: exit {r.returncode}, want 2 (usage)")
        # An unknown target: located at spec.targets, the exit code build gives it (usage, 2).
        r = render([one, "--target", "nowhere"], empty)
        b = subprocess.run([NEMOC, "build", "--out", os.path.join(tmp, "unused"), one, "--target", "nowhere"],
                           capture_output=True, text=True, env=ENV)
        if r.returncode != b.returncode or r.returncode == 0 or f"{one}:" not in r.stderr or r.stdout:
            errors.append(f"unknown target: exit {r.returncode} (build {b.returncode}), {r.stderr!r}")
        bad = os.path.join(tmp, "bad.yaml")
        with open(bad, "w") as f:
            f.write(open(one).read().replace("  namespace:", "  namespace: Not_A_Name\n  x-unknown:", 1))
        r = render([bad], empty)
        if r.returncode != 1 or f"{bad}:" not in r.stderr or r.stdout:
            errors.append(f"invalid spec: exit {r.returncode}, stdout {len(r.stdout)} bytes, {r.stderr[:300]!r}")
    for e in errors:
        print(f"FAIL {e}")
    print(f"{targets} targets rendered and compared with kubectl kustomize, {len(errors)} problems")
    return 1 if errors or targets < 10 else 0


if __name__ == "__main__":
    sys.exit(main())
