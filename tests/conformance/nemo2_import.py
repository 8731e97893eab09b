#!/usr/bin/python3
"""NeMo 2 fine-tuning from a Hugging Face model: the import Job and the recipe agree (issue #21
item 3, field review A17).

For framework nemo2, 25-import-model runs llm.import_ckpt(model, "hf://<repo>", output_path,
overwrite) (NVIDIA/NeMo nemo/collections/llm/api.py v2.1.0:531-536, v2.4.0:870) with the model
the preset's recipe module builds (recipes/<recipe>.py `def model()`, a run.Config built with
fiddle), and the generated recipe restores that directory (nl.RestoreConfig(path=...)). For
Llama 3 8B LoRA, Llama 2 7B SFT and Mixtral 8x7B LoRA at each NeMo 2 release the preset has a
recipe for, this test builds the spec and checks, by parsing the Job's program and the recipe
module with Python's ast:
  - the program calls llm.import_ckpt with keywords model, source, output_path (a pathlib.Path:
    the connector derives a lock file with Path.with_suffix, nemo/lightning/io/connector.py
    v2.1.0:84-86) and overwrite=True, source "hf://" + the spec's repository;
  - the module it imports is the preset's recipe (libsonnet/models.json) and it calls .model();
  - the output directory is on a mounted volume and is the recipe's RestoreConfig path;
  - the import pod gets HF_TOKEN from the spec's Secret (the repositories are gated);
  - <out> and <out>.lock are removed before import_ckpt (a stale lock turns overwrite off,
    connector.py v2.1.0:84-100), and the pod asks for one GPU (Transformer Engine asserts CUDA).
With NEMOC_NEMO_GIT=<NVIDIA/NeMo git dir> it also checks, at each tag, import_ckpt's parameters
and that the recipe module defines model().

Usage: nemo2_import.py <nemoc> <source dir>
"""
import ast
import glob
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import build, function_params, git_show, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], sys.argv[2]
MODELS = json.load(open(os.path.join(SRC, "libsonnet", "models.json")))["models"]
RELEASES = json.load(open(os.path.join(SRC, "libsonnet", "nemo", "versions.json")))["releases"]

SPEC = """apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata: {name: n2i}
spec:
  namespace: nemo
  image: {repository: nvcr.io/nvidia/nemo, tag: "RELEASE"}
  model:
    preset: PRESET
    source: {huggingface: REPO, hfTokenSecret: hf-token}
  storage:
    results: {nfs: {server: nfs.internal, path: /export}}
  stages:
    train:
      mode: MODE
      framework: nemo2
      nodes: NODES
      parallelism: PARALLELISM
      batch: {global: 16}
      data: {jsonl: {train: sft/training.jsonl}}
  targets:
    - {name: onprem, profile: vanilla-k8s}
"""
CASES = [("llama3-8b", "lora", 1, "{tensor: 1}"), ("llama2-7b", "sft", 1, "{tensor: 2}"),
         ("mixtral-8x7b", "lora", 2, "{tensor: 2, expert: 4}")]


def calls(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def name_of(f):
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def check(case, out, repo, recipe, errors):
    jobs = [j for j in glob.glob(os.path.join(out, "*", "*", "25-import-model", "*.yaml")) if "kustomization" not in j]
    if len(jobs) != 1:
        errors.append(f"{case}: {len(jobs)} import Jobs")
        return
    job = yaml.safe_load(open(jobs[0]))
    pod = job["spec"]["template"]["spec"]
    main = pod["containers"][0]
    argv = main.get("command", []) + main.get("args", [])
    i = argv.index("-c", argv.index("python3"))
    program, args = argv[i + 1], argv[i + 2:]
    tree = ast.parse(program)
    imp = [c for c in calls(tree) if name_of(c.func) == "import_ckpt"]
    if len(imp) != 1:
        errors.append(f"{case}: no single llm.import_ckpt call")
        return
    kw = {k.arg: k.value for k in imp[0].keywords}
    if set(kw) != {"model", "source", "output_path", "overwrite"} or imp[0].args:
        errors.append(f"{case}: import_ckpt keywords {sorted(kw)}")
        return
    if not (isinstance(kw["overwrite"], ast.Constant) and kw["overwrite"].value is True):
        errors.append(f"{case}: overwrite is not True")
    # sys.argv[1..3] are recipe, repo, out; out wrapped in Path(...).
    assigns = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Tuple) and isinstance(n.value, ast.Tuple):
            assigns.update({t.id: v for t, v in zip(n.targets[0].elts, n.value.elts) if isinstance(t, ast.Name)})
        elif isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name):
            assigns[n.targets[0].id] = n.value
    out_expr = assigns.get(getattr(kw["output_path"], "id", ""))
    if not (isinstance(out_expr, ast.Call) and name_of(out_expr.func) == "Path"):
        errors.append(f"{case}: output_path is not a pathlib.Path")
    src = ast.unparse(kw["source"])
    if src != "'hf://' + repo" or len(args) != 3:
        errors.append(f"{case}: source {src} with argv {args}")
        return
    if args[0] != recipe or args[1] != repo:
        errors.append(f"{case}: recipe/repo {args[:2]}, expected {recipe} {repo}")
    if "nemo.collections.llm.recipes." not in program or ".model()" not in program:
        errors.append(f"{case}: the model is not the recipe module's model()")
    mounts = [m["mountPath"] for m in main.get("volumeMounts", []) if m["mountPath"] != "/dev/shm"]
    if not any(args[2].startswith(m + "/") for m in mounts):
        errors.append(f"{case}: output {args[2]} is not on a mounted volume {mounts}")
    # A killed try leaves <out>.lock, and Connector.__call__ then keeps <out> whatever overwrite
    # says (nemo/lightning/io/connector.py v2.1.0:84-100): the lock and <out> go first.
    lines = program.splitlines()
    at = next(i for i, line in enumerate(lines) if "import_ckpt(" in line)
    if 'out.with_suffix(".lock").unlink(missing_ok=True)' not in lines[:at] or \
            "shutil.rmtree(out, ignore_errors=True)" not in lines[:at]:
        errors.append(f"{case}: the lock and the output are not removed before import_ckpt")
    # One GPU: the model is built on the CPU with Transformer Engine layers, which assert CUDA.
    if main.get("resources", {}).get("limits", {}).get("nvidia.com/gpu") != 1:
        errors.append(f"{case}: the import asks for {main.get('resources', {}).get('limits')} (one GPU expected)")
    if not any(e["name"] == "HF_TOKEN" and e.get("valueFrom", {}).get("secretKeyRef", {}).get("name") == "hf-token"
               for e in main.get("env", [])):
        errors.append(f"{case}: no HF_TOKEN from the Secret hf-token")
    restored = None
    for cm in glob.glob(os.path.join(out, "*", "*", "00-base", "configmap-*train-config*.yaml")):
        for text in yaml.safe_load(open(cm))["data"].values():
            for c in calls(ast.parse(text)):
                # The chain's first training stage restores the import (a literal path); a stage
                # after it restores its predecessor (upstream_checkpoint(), nemo2_chain.py).
                if name_of(c.func) == "Config" and c.args and name_of(c.args[0]) == "RestoreConfig":
                    path = {k.arg: k.value for k in c.keywords}.get("path")
                    if isinstance(path, ast.Constant):
                        restored = path.value
    if restored != args[2]:
        errors.append(f"{case}: the recipe restores {restored}, the import writes {args[2]}")


def check_upstream(tags, recipes, errors):
    git = os.environ.get("NEMOC_NEMO_GIT")
    if not git:
        return 0
    n = 0
    for tag in sorted(tags):
        params = function_params(git_show(git, tag, "nemo/collections/llm/api.py"), "import_ckpt")
        if params[:4] != ["model", "source", "output_path", "overwrite"]:
            errors.append(f"{tag}: llm.import_ckpt parameters {params}")
        for recipe in recipes.get(tag, []):
            text = git_show(git, tag, f"nemo/collections/llm/recipes/{recipe}.py", check=False)
            if not re.search(r"^def model\(", text, re.M):
                errors.append(f"{tag}: recipes/{recipe}.py defines no model()")
            n += 1
    return n


def main():
    errors, checked, tags = [], 0, {}
    with tempfile.TemporaryDirectory(prefix="nemoc-nemo2-import-") as tmp:
        for preset, mode, nodes, parallelism in CASES:
            entry = MODELS[preset]
            for release, row in sorted(RELEASES.items()):
                if release < max(entry["nemo2"]["since"], "24.12"):
                    continue
                case = f"{preset}-{mode}-{release}"
                spec = os.path.join(tmp, case + ".yaml")
                with open(spec, "w") as f:
                    f.write(SPEC.replace("RELEASE", release).replace("PRESET", preset)
                            .replace("REPO", entry["huggingface"]).replace("MODE", mode)
                            .replace("NODES", str(nodes)).replace("PARALLELISM", parallelism))
                out = os.path.join(tmp, "out-" + case)
                run = build(NEMOC, SRC, out, [spec])
                if run.returncode != 0:
                    errors.append(f"{case}: build failed\n{run.stderr}")
                    continue
                check(case, out, entry["huggingface"], entry["nemo2"]["recipe"], errors)
                tags.setdefault(row["nemo"], []).append(entry["nemo2"]["recipe"])
                checked += 1
    upstream = check_upstream(tags, tags, errors)
    if checked == 0:
        errors.append("no NeMo 2 import built")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{checked} NeMo 2 imports, {upstream} recipe modules checked upstream, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
