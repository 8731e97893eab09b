#!/usr/bin/python3
"""A NeMo 2 training chain (spec.stages.pretrain, then spec.stages.train, both framework nemo2)
against NeMo's AutoResume.

For every example and test spec target whose chain is NeMo 2, from the trees the nemoc binary
under test builds, reading each stage's recipe module (recipe.py in its ConfigMap):
  - the pretraining runs <model>.pretrain_recipe under llm.pretrain, the fine-tuning
    finetune_recipe under llm.finetune (pretrain_recipe for more pretraining);
  - each stage logs under its own explicit_log_dir, where NeMoLogger puts the checkpoint
    callback (<log_dir>/checkpoints: nemo/lightning/nemo_logger.py v2.1.0:220-221), and the
    pretraining keeps a *last checkpoint (save_last True, checkpoints enabled);
  - the pretraining restores spec.model.source: the import Job's llm.import_ckpt output for a
    Hugging Face source, the spec's directory for source.nemo (AutoResume's restore_config,
    as NeMo's DAPT tutorial does), nothing without a source;
  - the fine-tuning restores upstream_checkpoint(), and that function is RUN: with a stand-in
    nemo.lightning whose AutoResume has the real dataclass fields (unknown keywords fail) and
    _find_trainer_ckpt_path taken from NVIDIA/NeMo nemo/lightning/resume.py at the tag the image
    names when NEMOC_NEMO_GIT is set (else a stand-in with the same rules), over a checkpoint
    directory as a run leaves it (finished and unfinished *last copies, a newer non-last one):
    it must name the newest finished *last checkpoint of the pretraining's log directory, and
    fail, not start from random weights, when the pretraining left none;
  - evaluation and export read the fine-tuning's checkpoints, never the pretraining's;
  - Flux's 30-train Kustomization depends on 28-pretrain's, Argo CD's sync waves order them.
Then it rebuilds tests/specs/nemo2-training-chain.yaml edited (field review C5): new pretraining
renames the fine-tuning and moves its log directory (so it does not resume the old run); a new
fine-tuning keeps the pretraining and its own log directory. A lone NeMo 2 pretraining with a
source (continued pretraining) restores the import too.
With NEMOC_NEMO_GIT it also reads, at each tag: the AutoResume and RestoreConfig fields the
module passes, and NeMoLogger's checkpoint directory.

Usage: nemo2_chain.py <nemoc> <source dir>
"""
import ast
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import types
import typing

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import (WORKLOADS, all_args, all_specs, build, build_all, git_show, load_dir, mappings,  # noqa: E402
                         nemo_tag, require_yaml, workload_in)
from nemo2_checkpoints import EXP_MANAGER_STUBS, training_checkpoints  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
GIT = os.environ.get("NEMOC_NEMO_GIT")
RELEASES = json.load(open(os.path.join(SRC, "libsonnet", "nemo", "versions.json")))["releases"]
SPEC = os.path.join(SRC, "tests", "specs", "nemo2-training-chain.yaml")

# nemo/lightning/resume.py AutoResume's fields (v2.1.0-v2.4.0:89-95).
AUTO_RESUME_FIELDS = ("restore_config", "resume_from_directory", "resume_from_path", "adapter_path",
                      "resume_if_exists", "resume_past_end", "resume_ignore_no_checkpoint")


class NotFoundError(Exception):
    pass


def filter_unfinished(paths):
    """nemo.utils.exp_manager._filter_out_unfinished_checkpoints (tests/lib/nemo2_checkpoints.py)."""
    scope = {}
    exec(EXP_MANAGER_STUBS["nemo/utils/exp_manager.py"], scope)
    return scope["_filter_out_unfinished_checkpoints"](paths)


def standin_find(self):
    """AutoResume._find_trainer_ckpt_path's rules for resume_from_directory without NeMo."""
    from pathlib import Path
    d = Path(self.resume_from_directory)
    dirs = [p for p in d.glob("*") if p.is_dir()]
    last = [p for p in dirs if p.match("*last")]
    finished = filter_unfinished(last)
    if last and not finished:
        raise ValueError("Last checkpoint is unfinished")
    if not d.exists() or not finished:
        if self.resume_ignore_no_checkpoint:
            return None
        raise NotFoundError(f"no checkpoints in {d}")
    return sorted(finished, key=lambda p: p.lstat().st_mtime, reverse=True)[0]


def upstream_find(tag, errors):
    """_find_trainer_ckpt_path from NVIDIA/NeMo nemo/lightning/resume.py at tag, compiled with
    stand-ins for what it imports (AppState, logging, NeMo's exp_manager helpers)."""
    text = git_show(GIT, tag, "nemo/lightning/resume.py")
    tree = ast.parse(text)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "AutoResume"), None)
    fn = next((n for n in (cls.body if cls else []) if isinstance(n, ast.FunctionDef)
               and n.name == "_find_trainer_ckpt_path"), None)
    if fn is None:
        errors.append(f"NeMo {tag}: resume.py has no AutoResume._find_trainer_ckpt_path")
        return None
    fields = [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign)]
    for name in AUTO_RESUME_FIELDS:
        if name not in fields:
            errors.append(f"NeMo {tag}: AutoResume has no field {name}")
    source = ast.get_source_segment(text, fn)
    if "self.resume_from_directory" not in source:
        errors.append(f"NeMo {tag}: _find_trainer_ckpt_path ignores resume_from_directory")
    exp_manager = types.ModuleType("nemo.utils.exp_manager")
    exp_manager.NotFoundError = NotFoundError
    exp_manager._filter_out_unfinished_checkpoints = filter_unfinished
    for name in ("nemo", "nemo.utils"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["nemo.utils.exp_manager"] = exp_manager
    from pathlib import Path
    scope = {"Path": Path, "Optional": typing.Optional, "AppState": lambda: types.SimpleNamespace(log_dir=None),
             "logging": types.SimpleNamespace(warning=lambda *a, **k: None, info=lambda *a, **k: None),
             "uninject_model_parallel_rank": lambda p: p}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), f"{tag}:nemo/lightning/resume.py", "exec"), scope)
    return scope["_find_trainer_ckpt_path"]


def check_upstream_files(tag, errors):
    restore = git_show(GIT, tag, "nemo/lightning/pytorch/strategies/utils.py")
    cls = next((n for n in ast.parse(restore).body if isinstance(n, ast.ClassDef) and n.name == "RestoreConfig"), None)
    if cls is None or "path" not in [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign)]:
        errors.append(f"NeMo {tag}: RestoreConfig has no field path")
    logger = git_show(GIT, tag, "nemo/lightning/nemo_logger.py")
    if 'callback.dirpath = Path(log_dir / "checkpoints")' not in logger:
        errors.append(f"NeMo {tag}: NeMoLogger no longer puts checkpoints in <log_dir>/checkpoints")


def recipe_text(docs, key):
    """recipe.py of the ConfigMap the stage's workload mounts as nemo-config."""
    _, obj = workload_in(docs, {"pretrain": "28-pretrain", "train": "30-train"}[key])
    mounted = next((n["configMap"]["name"] for n in mappings(obj or {})
                    if n.get("name") == "nemo-config" and isinstance(n.get("configMap"), dict)), None)
    for o in docs.values():
        if o["kind"] == "ConfigMap" and o["metadata"]["name"] == mounted:
            return (o.get("data") or {}).get("recipe.py")
    return None


def assigns(text):
    return {ast.unparse(n.targets[0]): n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Assign)}


def literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return None


def call_kwargs(node):
    return {k.arg: k.value for k in node.keywords} if isinstance(node, ast.Call) else {}


def restore_path(a):
    """The restore_config path node of recipe.resume, or None."""
    restore = call_kwargs(a.get("recipe.resume")).get("restore_config")
    return call_kwargs(restore).get("path")


def run_upstream_checkpoint(text, find, errors, where):
    """Runs the module's upstream_checkpoint() over a fake checkpoint tree; returns the
    (expected, got) path pair for a tree with finished checkpoints."""
    tree = ast.parse(text)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "upstream_checkpoint"), None)
    if fn is None:
        errors.append(f"{where}: the fine-tuning's recipe.py defines no upstream_checkpoint()")
        return
    with tempfile.TemporaryDirectory(prefix="nemoc-upstream-") as root:
        seen = []

        @dataclasses.dataclass(kw_only=True)
        class AutoResume:
            restore_config: object = None
            resume_from_directory: object = None
            resume_from_path: object = None
            adapter_path: object = None
            resume_if_exists: bool = False
            resume_past_end: bool = False
            resume_ignore_no_checkpoint: bool = False

            def __post_init__(self):
                seen.append(self.resume_from_directory)
                self.resume_from_directory = root + self.resume_from_directory

            _find_trainer_ckpt_path = find

        scope = {"nl": types.SimpleNamespace(AutoResume=AutoResume)}
        exec(compile(ast.Module(body=[fn], type_ignores=[]), "recipe.py", "exec"), scope)

        def fails(label):
            try:
                got = scope["upstream_checkpoint"]()
                errors.append(f"{where}: with {label}, upstream_checkpoint() returned {got!r} instead of failing")
            except (NotFoundError, ValueError):
                pass

        # Nothing there yet, or only an unfinished *last: the fine-tuning must fail, not train
        # from the recipe's random weights.
        fails("no checkpoint directory")
        read = seen[-1]
        if os.path.basename(read) != "checkpoints":
            errors.append(f"{where}: upstream_checkpoint() reads {read}, not a log directory's checkpoints")
            return None
        os.makedirs(os.path.join(root + read, "x-last"))
        open(os.path.join(root + read, "x-last-unfinished"), "w").close()
        fails("only an unfinished *last checkpoint")
        shutil.rmtree(root + read)
        _, want = training_checkpoints(root + os.path.dirname(read))
        got = scope["upstream_checkpoint"]()
        if not isinstance(got, str):
            errors.append(f"{where}: upstream_checkpoint() returned {type(got).__name__}, RestoreConfig.path is a str")
            return None
        return read, got[len(root):] if got.startswith(root) else got, want[len(root):]


def check_target(where, target, spec, find, errors):
    docs = load_dir(target)
    stages = spec["spec"]["stages"]
    texts = {k: recipe_text(docs, k) for k in ("pretrain", "train")}
    if None in texts.values():
        errors.append(f"{where}: a training stage mounts no recipe.py: {[k for k, t in texts.items() if t is None]}")
        return
    pre, ft = assigns(texts["pretrain"]), assigns(texts["train"])
    recipe_module = None
    for key, a in (("pretrain", pre), ("train", ft)):
        entry = "pretrain" if stages[key]["mode"] == "pretrain" else "finetune"
        fn = ast.unparse(a["recipe"].func) if isinstance(a.get("recipe"), ast.Call) else ""
        if not fn.endswith("." + entry + "_recipe"):
            errors.append(f"{where}: spec.stages.{key} builds {fn}, not <model>.{entry}_recipe")
        recipe_module = recipe_module or fn.split(".")[0]
        main = next(n for n in ast.walk(ast.parse(texts[key])) if isinstance(n, ast.Call)
                    and ast.unparse(n.func) == "run.cli.main")
        if ast.unparse(main.args[0]) != "llm." + entry:
            errors.append(f"{where}: spec.stages.{key} runs {ast.unparse(main.args[0])}, not llm.{entry}")
    logs = {k: literal(a.get("recipe.log.explicit_log_dir")) for k, a in (("pretrain", pre), ("train", ft))}
    if None in logs.values() or logs["pretrain"] == logs["train"]:
        errors.append(f"{where}: explicit_log_dir pretrain {logs['pretrain']}, train {logs['train']}")
        return
    if literal(pre.get("recipe.log.ckpt.save_last")) is not True or "recipe.log.ckpt" in pre:
        errors.append(f"{where}: the pretraining keeps no *last checkpoint")
    # What the pretraining starts from.
    source = spec["spec"]["model"].get("source") or {}
    restored = restore_path(pre)
    if "huggingface" in source:
        _, imp = workload_in(docs, "25-import-model")
        output = all_args(imp)[-1] if imp else None
        if imp is None or literal(restored) != output:
            errors.append(f"{where}: the continued pretraining restores {ast.unparse(restored) if restored else None}, "
                          f"the import writes {output}")
    elif "nemo" in source:
        results = next(m["mountPath"] for m in mappings(workload_in(docs, "28-pretrain")[1])
                       if m.get("name") == "results" and "mountPath" in m)
        if literal(restored) != f"{results}/{source['nemo']}":
            errors.append(f"{where}: the continued pretraining restores {literal(restored)}, not spec.model.source.nemo")
    elif restored is not None:
        errors.append(f"{where}: pretraining from random weights restores {ast.unparse(restored)}")
    # The fine-tuning restores the pretraining's last checkpoint, picked at run time.
    path = restore_path(ft)
    if path is None or ast.unparse(path) != "upstream_checkpoint()":
        errors.append(f"{where}: the fine-tuning restores {ast.unparse(path) if path else None}, "
                      "not upstream_checkpoint()")
    ran = run_upstream_checkpoint(texts["train"], find, errors, where)
    if ran:
        read, got, want = ran
        if read != logs["pretrain"] + "/checkpoints":
            errors.append(f"{where}: upstream_checkpoint() reads {read}, the pretraining checkpoints in "
                          f"{logs['pretrain']}/checkpoints")
        if got != want:
            errors.append(f"{where}: upstream_checkpoint() picked {got}, AutoResume would resume {want}")
    # Readers of the chain read the fine-tuning's run.
    for directory in ("40-evaluate", "50-convert"):
        _, obj = workload_in(docs, directory)
        if obj is None:
            continue
        args = all_args(obj)
        if logs["train"] + "/checkpoints" not in args or any(logs["pretrain"] + "/" in a for a in args):
            errors.append(f"{where}: {directory} does not read {logs['train']}/checkpoints alone")
    # GitOps order.
    names = {k: workload_in(docs, d)[1]["metadata"] for k, d in (("pretrain", "28-pretrain"), ("train", "30-train"))}
    flux = {o["spec"]["path"].rsplit("/", 1)[-1]: o for o in docs.values()
            if o["kind"] == "Kustomization" and o["apiVersion"].startswith("kustomize.toolkit.fluxcd.io")}
    if flux and flux["28-pretrain"]["metadata"]["name"] not in [d["name"] for d in flux["30-train"]["spec"].get("dependsOn", [])]:
        errors.append(f"{where}: Flux 30-train does not depend on 28-pretrain")
    waves = [int(m.get("annotations", {}).get("argocd.argoproj.io/sync-wave", "-1")) for m in names.values()]
    if any(o["kind"] == "Application" for o in docs.values()) and not (0 <= waves[0] < waves[1]):
        errors.append(f"{where}: Argo CD sync waves pretrain {waves[0]}, train {waves[1]}")


def rebuilt(tmp, label, spec, errors, target="gke-a4"):
    """(workload names by stage directory, the fine-tuning's explicit_log_dir) of spec rebuilt."""
    path = os.path.join(tmp, label + ".yaml")
    with open(path, "w") as f:
        yaml.safe_dump(spec, f)
    out = os.path.join(tmp, label)
    r = build(NEMOC, SRC, out, [path])
    if r.returncode != 0:
        errors.append(f"{label}: nemoc build exit {r.returncode}: {r.stderr}")
        return None, None
    docs = load_dir(os.path.join(out, spec["metadata"]["name"], target))
    names = {r.split("/")[0]: o["metadata"]["name"] for r, o in docs.items() if o["kind"] in WORKLOADS}
    return names, docs


def hash_chain(tmp, errors):
    base_spec = yaml.safe_load(open(SPEC))

    def edited(key, steps):
        spec = json.loads(json.dumps(base_spec))
        spec["spec"]["stages"][key]["maxSteps"] = steps
        return spec

    base, docs = rebuilt(tmp, "base", base_spec, errors)
    new_pre, pre_docs = rebuilt(tmp, "new-pretrain", edited("pretrain", 3000), errors)
    new_ft, ft_docs = rebuilt(tmp, "new-train", edited("train", 600), errors)
    # Scheduling only (F15): the fine-tuning's deadline and /dev/shm replace its workload.
    sched_spec = json.loads(json.dumps(base_spec))
    sched_spec["spec"]["stages"]["train"].update({"timeout": "24h", "shmSize": "128Gi"})
    sched, sched_docs = rebuilt(tmp, "scheduling", sched_spec, errors)
    if not (base and new_pre and new_ft and sched):
        return

    def train_log(d):
        return literal(assigns(recipe_text(d, "train")).get("recipe.log.explicit_log_dir"))

    for d in ("28-pretrain", "30-train", "40-evaluate", "50-convert", "60-tensorrt-llm"):
        if base.get(d) == new_pre.get(d):
            errors.append(f"hash chain: new pretraining keeps {d}'s name {base.get(d)}")
    # AutoResume resumes the newest *last of the fine-tuning's own log directory before
    # restore_config is looked at (resume.py v2.3.0:106-133): after new pretraining the
    # fine-tuning must log elsewhere, or it resumes the old fine-tuning and never restores the
    # new pretraining.
    if train_log(docs) == train_log(pre_docs):
        errors.append(f"hash chain: after new pretraining the fine-tuning resumes in {train_log(docs)}")
    # A changed fine-tuning is a new state (F15, C17): a new directory, not the old run resumed;
    # a scheduling-only change resumes in its own.
    if train_log(docs) == train_log(ft_docs):
        errors.append("hash chain: a changed fine-tuning keeps its log directory: it would resume the old run (C17)")
    if train_log(docs) != train_log(sched_docs):
        errors.append("hash chain: a scheduling-only change moved the fine-tuning's log directory (it would not resume)")
    if base.get("30-train") == sched.get("30-train"):
        errors.append("hash chain: the scheduling-only change did not replace the fine-tuning workload (the test edits nothing)")
    if base.get("28-pretrain") != new_ft.get("28-pretrain"):
        errors.append("hash chain: a new fine-tuning renames the pretraining")
    # A lone NeMo 2 pretraining with a source: continued pretraining from the import.
    lone = json.loads(json.dumps(base_spec))
    stages = lone["spec"]["stages"]
    stages["train"] = stages.pop("pretrain")
    for k in ("evaluate", "convert", "tensorrtLLM"):
        stages.pop(k)
    names, lone_docs = rebuilt(tmp, "lone", lone, errors)
    if names:
        restored = literal(restore_path(assigns(recipe_text(lone_docs, "train"))))
        _, imp = workload_in(lone_docs, "25-import-model")
        if imp is None or restored != all_args(imp)[-1]:
            errors.append(f"lone continued pretraining restores {restored}, not the import's output")


def main():
    errors, checked, tags = [], 0, set()
    finds = {}
    with tempfile.TemporaryDirectory(prefix="nemoc-nemo2-chain-") as tmp:
        out = os.path.join(tmp, "all")
        r = build_all(NEMOC, SRC, out)
        if r.returncode != 0:
            print(f"FAIL: nemoc build exit {r.returncode}\n{r.stderr}")
            return 1
        for spec_path in all_specs(SRC):
            spec = yaml.safe_load(open(spec_path))
            stages = spec["spec"]["stages"]
            if stages.get("pretrain", {}).get("framework") != "nemo2":
                continue
            image = stages["pretrain"].get("image") or spec["spec"]["image"]
            tag = nemo_tag(f"{image['repository']}:{image['tag']}", RELEASES)
            find = standin_find
            if GIT and tag:
                if tag not in finds:
                    finds[tag] = upstream_find(tag, errors)
                    check_upstream_files(tag, errors)
                find = finds[tag] or standin_find
                tags.add(tag)
            for t in spec["spec"]["targets"]:
                where = f"{os.path.relpath(spec_path, SRC)} -> {t['name']}"
                before = len(errors)
                check_target(where, os.path.join(out, spec["metadata"]["name"], t["name"]), spec, find, errors)
                checked += 1
                print(("ok   " if len(errors) == before else "FAIL ") + where)
        hash_chain(tmp, errors)
    for e in errors:
        print(f"FAIL {e}")
    print(f"{checked} NeMo 2 chained targets checked, chain rebuilt 4 times"
          + (f", NeMo {', '.join(sorted(tags))} read" if tags else "") + f", {len(errors)} problems")
    if checked < 2:
        print("FAIL: expected tests/specs/nemo2-training-chain.yaml's two targets")
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
