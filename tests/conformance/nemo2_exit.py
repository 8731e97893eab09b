#!/usr/bin/python3
"""A failed NeMo 2 training fails its pod: NeMo-Run's CLI exit status against the argv nemoc passes.

recipe.py ends in run.cli.main(llm.<entry>, default_factory=recipe), which registers one Typer
command and calls app(standalone_mode=False), discarding what it returns. From NeMo-Run v0.3.0
(and at the commit NeMo 24.12 pins) the command catches every exception of the run and raises
typer.Exit(1); Click returns that code in non-standalone mode instead of exiting, so the process
exits 0 and Kubernetes reports a crashed training complete (NVIDIA-NeMo/Run issue #52). From
v0.3.0 the command's --verbose re-raises. libsonnet/nemo/versions.json (nemoRun) records per NeMo
release which NeMo-Run it ships and which of the three behaviours its CLI has; nemo2.libsonnet
passes --verbose where it helps and warns where nothing helps (24.12).

This test:
  - builds every example and test spec and checks each NeMo 2 training workload's argv: --verbose
    exactly where the release's row says 'swallows-unless-verbose';
  - builds a NeMo 2 spec on each release with a row and checks the argv and the
    train.nemo-run-exit warning (24.12 only);
  - runs Click and Typer for real (Debian's python3-typer): a command raising typer.Exit(1) under
    app(standalone_mode=False) leaves the process with status 0, the mechanism the rows rely on;
  - with NEMOC_NEMO_RUN_GIT=<NVIDIA/NeMo-Run git dir>, takes the `command` function of
    RunContext.cli_command from src/nemo_run/cli/api.py at each row's ref (its real signature,
    with every typer.Option, and its real try/except), registers it on a Typer app the way
    Entrypoint.main does, and runs it in a subprocess with the argv nemoc generates for that
    release, the run raising RuntimeError: the process must exit non-zero, except on the
    'swallows' row, where it must exit 0 (what the warning says);
  - with NEMOC_NEMO_GIT, checks that each NeMo tag installs the row's NeMo-Run (pinned commit, or
    nemo_run unpinned from PyPI).

Usage: nemo2_exit.py <nemoc> <source dir>
"""
import ast
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import build, build_all, git_show, mappings, missing, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
TABLE = json.load(open(os.path.join(SRC, "libsonnet", "nemo", "versions.json")))
ROWS = {r: v["nemoRun"] for r, v in TABLE["releases"].items() if "nemoRun" in v}
RUN_GIT = os.environ.get("NEMOC_NEMO_RUN_GIT")
NEMO_GIT = os.environ.get("NEMOC_NEMO_GIT")
PY = "/usr/bin/python3"
try:
    import typer  # noqa: F401
except ImportError:
    missing("python3-typer", "python3-typer not installed: skipped")


def release_of(image):
    """YY.MM of an NGC nemo image (the rule of libsonnet/nemo/versions.libsonnet)."""
    repo, _, tag = image.rpartition(":")
    if repo.rsplit("/", 1)[-1] == "nemo" and len(tag) >= 5 and tag[:2].isdigit() and tag[2] == "." and tag[3:5].isdigit():
        return tag[:5]
    i = tag.find("nemo")
    return tag[i + 4:i + 9] if i >= 0 else None


def recipe_argvs(tree):
    """(image, argv after the module) of every container that runs /config/recipe.py."""
    found = []
    for path in glob.glob(os.path.join(tree, "*", "*.yaml")):
        with open(path) as f:
            obj = yaml.safe_load(f)
        for m in mappings(obj or {}):
            args = [str(a) for a in (m.get("command") or []) + (m.get("args") or [])]
            for i, a in enumerate(args):
                if a.endswith("/recipe.py") and "image" in m:
                    found.append((os.path.relpath(path, tree), m["image"], args[i + 1:]))
    return found


def expect_verbose(release):
    row = ROWS.get(release) or list(ROWS.values())[-1]
    return row["cli"] == "swallows-unless-verbose"


def check_trees(out, errors):
    n = 0
    for project in sorted(os.listdir(out)):
        for target in sorted(glob.glob(os.path.join(out, project, "*"))):
            for rel, image, argv in recipe_argvs(target):
                n += 1
                want = expect_verbose(release_of(image))
                if ("--verbose" in argv) != want:
                    errors.append(f"{project}/{os.path.basename(target)}/{rel}: image {image}: argv {argv} "
                                  f"{'lacks' if want else 'has'} --verbose")
    return n


def per_release(tmp, errors):
    """A NeMo 2 spec on each release with a row: the argv and the warning."""
    base = open(os.path.join(SRC, "tests", "specs", "nemo2-pretrain-data.yaml")).read()
    argvs = {}
    for release, row in ROWS.items():
        spec = os.path.join(tmp, f"r{release}.yaml")
        with open(spec, "w") as f:
            f.write(base.replace('tag: "25.02"', f'tag: "{release}"'))
        out = os.path.join(tmp, f"r{release}")
        r = build(NEMOC, SRC, out, [spec])
        if r.returncode != 0:
            errors.append(f"NeMo {release}: nemoc build exit {r.returncode}: {r.stderr}")
            continue
        warned = "NeMo-Run CLI" in r.stderr and "exits 0" in r.stderr
        if warned != (row["cli"] == "swallows"):
            errors.append(f"NeMo {release} ({row['cli']}): warning {'given' if warned else 'missing'}: {r.stderr.strip()}")
        found = recipe_argvs(os.path.join(out, "nemo2-pretrain-data", "lab"))
        if not found:
            errors.append(f"NeMo {release}: no recipe.py argv")
            continue
        argvs[release] = found[0][2]
        if ("--verbose" in found[0][2]) != (row["cli"] == "swallows-unless-verbose"):
            errors.append(f"NeMo {release} ({row['cli']}): argv {found[0][2]}")
    return argvs


# The mechanism: Click (under Typer) returns an Exit's code in non-standalone mode, and NeMo-Run's
# Entrypoint.main discards it (api.py v0.4.0 Entrypoint.main: app(standalone_mode=False)).
MECHANISM = """
import typer
app = typer.Typer()
@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def command(ctx: typer.Context):
    try:
        raise RuntimeError("CUDA error: out of memory")
    except Exception as e:
        typer.echo(f"Unexpected error: {e}", err=True)
        raise typer.Exit(code=1)
app(standalone_mode=False, args=["--factory", "recipe()"])
"""


def mechanism(errors):
    r = subprocess.run([PY, "-c", MECHANISM], capture_output=True, text=True)
    if r.returncode != 0 or "Unexpected error" not in r.stderr:
        errors.append(f"Typer/Click: a command raising typer.Exit(1) under standalone_mode=False exited "
                      f"{r.returncode} ({r.stderr.strip()[-200:]}); the nemoRun rows assume 0")


def upstream_command(ref):
    """The `command` function RunContext.cli_command defines at ref, reduced to its signature and
    its try statement (the run and its exception handling)."""
    text = None
    for path in ("src/nemo_run/cli/api.py", "nemo_run/cli/api.py"):
        r = subprocess.run(["git", "--git-dir", RUN_GIT, "show", f"{ref}:{path}"], capture_output=True, text=True)
        if r.returncode == 0:
            text = r.stdout
            break
    if text is None:
        return None, f"no cli/api.py at {ref}"
    fn = next((n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == "command"
               and any(isinstance(s, ast.Try) for s in n.body)), None)
    if fn is None:
        return None, f"{ref}: cli/api.py has no command() with a try statement"
    trys = [s for s in fn.body if isinstance(s, ast.Try)]
    fn.body = trys[-1:]
    fn.decorator_list = []
    return ast.unparse(fn), None


HARNESS = """
import sys, typer
from typing import Optional, List, Dict, Any
from typer import Option
class RunContextError(Exception):
    pass
class _Self:
    def cli_execute(self, fn, args, type):
        assert "--verbose" not in args and "--factory" not in args, args
        raise RuntimeError("CUDA error: out of memory")
self = _Self()
is_main = True
fn = None
type = "task"
name = "recipe"
def _load_entrypoints(): pass
def _load_workspace(): pass
{command}
app = typer.Typer()
app.command("recipe", context_settings={{"allow_extra_args": True, "ignore_unknown_options": True}})(command)
app(standalone_mode=False, args=sys.argv[1:])
"""


def upstream_runs(argvs, errors):
    """Each row's real command, run with the argv nemoc generates for that release."""
    n = 0
    for release, row in ROWS.items():
        if release not in argvs:
            continue
        command, err = upstream_command(row["ref"])
        if err:
            errors.append(f"NeMo-Run {row['ref']}: {err}")
            continue
        script = HARNESS.format(command=command)
        r = subprocess.run([PY, "-c", script] + argvs[release], capture_output=True, text=True)
        n += 1
        failed = r.returncode != 0
        if row["cli"] == "swallows":
            if failed:
                errors.append(f"NeMo {release}: NeMo-Run {row['ref'][:7]} exits {r.returncode} on a failed run; "
                              f"the row (and nemoc's warning) says 0: {r.stderr.strip()[-300:]}")
        elif not failed:
            errors.append(f"NeMo {release}: NeMo-Run {row['ref'][:7]} with argv {argvs[release]} exits 0 on a failed "
                          f"run: {r.stderr.strip()[-300:]}")
        elif "No such option" in r.stderr or "RuntimeError" not in r.stderr:
            errors.append(f"NeMo {release}: NeMo-Run {row['ref'][:7]} fails for another reason: {r.stderr.strip()[-300:]}")
        # The row's behaviour without --verbose, too: what nemoc would get without the flag.
        if row["cli"] == "swallows-unless-verbose":
            quiet = [a for a in argvs[release] if a != "--verbose"]
            q = subprocess.run([PY, "-c", script] + quiet, capture_output=True, text=True)
            if q.returncode != 0:
                errors.append(f"NeMo {release}: without --verbose NeMo-Run {row['ref']} exits {q.returncode}: "
                              "the flag is no longer needed, update versions.json")
    return n


def installs(errors):
    """Each NeMo tag installs its row's NeMo-Run."""
    where = {"24.12": "Dockerfile.ci", "25.02": "reinstall.sh", "25.04": "reinstall.sh",
             "25.07": "docker/common/install_dep.sh"}
    for release, row in ROWS.items():
        tag = TABLE["releases"][release]["nemo"]
        text = git_show(NEMO_GIT, tag, where[release], check=False) or ""
        pinned = len(row["ref"]) == 40
        if pinned and row["ref"] not in text:
            errors.append(f"NeMo {release} ({tag}) {where[release]} does not pin NeMo-Run {row['ref']}")
        if not pinned and '"nemo_run"' not in text:
            errors.append(f"NeMo {release} ({tag}) {where[release]} does not install nemo_run from PyPI")


def main():
    errors = []
    with tempfile.TemporaryDirectory(prefix="nemoc-exit-") as tmp:
        out = os.path.join(tmp, "all")
        r = build_all(NEMOC, SRC, out)
        if r.returncode != 0:
            print(f"FAIL: nemoc build exit {r.returncode}\n{r.stderr}")
            return 1
        n = check_trees(out, errors)
        argvs = per_release(tmp, errors)
    mechanism(errors)
    ran = upstream_runs(argvs, errors) if RUN_GIT else 0
    if NEMO_GIT:
        installs(errors)
    for e in errors:
        print(f"FAIL {e}")
    print(f"{n} NeMo 2 training containers, {len(argvs)} releases built"
          + (f", {ran} NeMo-Run CLIs run" if ran else "") + f", {len(errors)} problems")
    if n < 3:
        print("FAIL: expected the NeMo 2 examples' training containers")
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
