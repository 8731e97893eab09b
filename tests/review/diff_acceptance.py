#!/usr/bin/python3
"""`nemoc diff` for review, on the examples (issue #19 item 4 and its acceptance line).

For every example whose only stage is training, `nemoc diff --set spec.stages.train.maxSteps=<n+1>`
against the committed out/ (which the drift gate keeps equal to the build):
  - shows at most 40 changed lines (the renamed content-hashed ConfigMap and workload are each
    one change with what changed inside, not a whole deletion and addition);
  - is a patch git applies: `git apply` on a copy of the committed tree gives exactly what
    `nemoc build --set ...` writes (renamed files moved by git's "rename from/to" headers);
  - --stat totals equal the patch's added and removed lines;
  - -o json lists the changes under the target, the workload as status R with its old path,
    with the same totals;
  - -o markdown names the replaced workload and the changed fact (the steps, before and after).

Usage: diff_acceptance.py <nemoc> <source dir>
"""
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import missing, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ENV = dict(os.environ, NEMOC_DATA_DIR=SRC, NO_COLOR="1")
if not shutil.which("git"):
    missing("git", "git not installed: skipped")


def nemoc(args):
    return subprocess.run([NEMOC] + args, capture_output=True, text=True, cwd=SRC, env=ENV)


def changed_lines(patch):
    return [l for l in patch.splitlines() if re.match(r"^[+-]", l) and not re.match(r"^(\+\+\+|---) ", l)]


def same_trees(a, b, skip=(".nemoc-manifest",)):
    cmp = filecmp.dircmp(a, b, ignore=list(skip))
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return f"{a}: only here {cmp.left_only}, only built {cmp.right_only}, differ {cmp.diff_files}"
    for sub in cmp.common_dirs:
        why = same_trees(os.path.join(a, sub), os.path.join(b, sub), skip)
        if why:
            return why
    return None


def main():
    errors, checked = [], 0
    examples = sorted(os.path.join("examples", f) for f in os.listdir(os.path.join(SRC, "examples")) if f.endswith(".yaml"))
    with tempfile.TemporaryDirectory(prefix="nemoc-review-") as tmp:
        for example in examples:
            spec = yaml.safe_load(open(os.path.join(SRC, example)))
            if list(spec["spec"]["stages"]) != ["train"]:
                continue
            checked += 1
            steps = spec["spec"]["stages"]["train"].get("maxSteps", 1000) + 1
            sets = ["--set", f"spec.stages.train.maxSteps={steps}"]
            r = nemoc(["diff", example] + sets)
            if r.returncode != 0:
                errors.append(f"{example}: diff exit {r.returncode}: {r.stderr}")
                continue
            lines = changed_lines(r.stdout)
            print(f"{example}: {len(lines)} changed lines")
            if len(lines) > 40 or not lines:
                errors.append(f"{example}: {len(lines)} changed lines for one maxSteps (at most 40)")
            # The patch applies and gives the build.
            project = spec["metadata"]["name"]
            work = os.path.join(tmp, project)
            shutil.copytree(os.path.join(SRC, "out", project), os.path.join(work, "out", project))
            with open(os.path.join(tmp, project + ".diff"), "w") as f:
                f.write(r.stdout)
            a = subprocess.run(["git", "apply", os.path.join(tmp, project + ".diff")], cwd=work,
                               capture_output=True, text=True)
            built = os.path.join(tmp, project + "-built")
            b = nemoc(["build", "--quiet", "--out", built, example] + sets)
            if a.returncode != 0 or b.returncode != 0:
                errors.append(f"{example}: git apply {a.returncode} {a.stderr.strip()}; build {b.returncode} {b.stderr.strip()}")
            else:
                why = same_trees(os.path.join(work, "out", project), os.path.join(built, project))
                if why:
                    errors.append(f"{example}: the applied diff is not the build: {why}")
            added = sum(1 for l in lines if l.startswith("+"))
            removed = len(lines) - added
            stat = nemoc(["diff", "--stat", example] + sets).stdout
            if f"{added} insertions(+), {removed} deletions(-)" not in stat:
                errors.append(f"{example}: --stat {stat.splitlines()[-1:]} != patch +{added} -{removed}")
            report = json.loads(nemoc(["diff", "-o", "json", example] + sets).stdout)
            changes = [c for s in report["specs"] for t in s["targets"] for c in t["changes"]]
            if (sum(c["added"] for c in changes), sum(c["removed"] for c in changes)) != (added, removed):
                errors.append(f"{example}: -o json totals differ from the patch")
            renamed = [c for c in changes if c["status"] == "R" and "/30-train/" in c["path"]]
            if len(renamed) != 1 or "/30-train/" not in renamed[0].get("oldPath", ""):
                errors.append(f"{example}: -o json has no renamed 30-train workload: {changes}")
            md = nemoc(["diff", "-o", "markdown", example] + sets).stdout
            old_steps = spec["spec"]["stages"]["train"].get("maxSteps", 1000)
            if not re.search(rf"\| Training \| [^|]*\b{old_steps} steps[^|]* \| [^|]*\b{steps} steps", md) or \
                    "(replaced)" not in md or "`30-train`" not in md:
                errors.append(f"{example}: markdown lacks the replaced workload or the steps fact:\n{md}")
    # -o json is one report on stdout even when the spec does not compile.
    r = nemoc(["diff", "-o", "json", "examples/gpt-tp2-trainjob.yaml", "--set", "spec.stages.train.maxSteps=-5"])
    try:
        bad = json.loads(r.stdout)
        if r.returncode != 1 or bad.get("ok") is not False or not bad.get("diagnostics"):
            errors.append(f"-o json on an invalid spec: exit {r.returncode}, {r.stdout[:200]}")
    except ValueError:
        errors.append(f"-o json on an invalid spec printed no JSON (exit {r.returncode}): {r.stdout[:200]!r}")
    # The F8 note names a replaced pretraining too, in every output format.
    for fmt in (["--stat"], ["-o", "markdown"], []):
        r = nemoc(["diff", "examples/gpt-5b-pretrain-sft-vanilla.yaml", "--set", "spec.stages.pretrain.maxSteps=7"] + fmt)
        if not re.search(r"note: \S+/28-pretrain/\S+: this change replaces a running or finished training", r.stderr):
            errors.append(f"diff {fmt}: no note for the replaced pretraining: {r.stderr[:300]!r}")
    for e in errors:
        print(f"FAIL {e}")
    print(f"{checked} training-only examples diffed, {len(errors)} problems")
    return 1 if errors or checked < 3 else 0


if __name__ == "__main__":
    sys.exit(main())
