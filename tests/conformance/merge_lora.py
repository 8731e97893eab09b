#!/usr/bin/python3
"""The LoRA merge Job (35-merge-lora) against NeMo's merge script and the stages around it.

NVIDIA/NeMo scripts/nlp_language_modeling/merge_lora_weights/merge.py (read at r2.0.0rc1,
v2.0.0, v2.1.0, v2.2.1, v2.3.0, v2.4.0) runs under @hydra_runner(config_name=
"merge_lora_weights"): its conf is a struct, so every override must name a key the conf
has, and the mandatory ??? keys (lora_model_path, merged_model_path) must be given.
gpt_model_file defaults to the string 'null,' upstream and must be given too.
libsonnet/nemo/merge_lora.json holds that conf per tag. For every merge Job generated from
the examples and test specs this test replays the Job's overrides on the conf of the
image's tag with OmegaConf, as Hydra would, and checks the result:
  - no override adds a key, no ??? key is left, gpt_model_file is a path;
  - gpt_model_file is the .nemo the training config restores from (model.restore_from_path);
  - lora_model_path is the .nemo the training run saves: NeMo's exp_manager puts the
    checkpoint callback under <explicit_log_dir>/checkpoints (nemo/utils/exp_manager.py
    v2.1.0:1167) and NeMoModelCheckpoint writes <dirpath>/<exp_manager.name>.nemo at the end
    (nemo/utils/callbacks/nemo_model_checkpoint.py v2.1.0:321-325);
  - merged_model_path is what the evaluation (--nemo_model) and the conversion
    (--input_name_or_path) read, and those Jobs name no other .nemo;
  - trainer.precision is bf16 (the model trains in bf16; the default 16 is fp16),
    trainer.devices is 1 and trainer.accelerator is gpu exactly when the container has a GPU.
It also changes the LoRA adapter of a spec and checks that the merge, evaluation and
conversion Jobs all get new names (field review C5: a new adapter re-runs what reads it),
that a merge moved to CPU renames evaluation and conversion but not training,
that a spec without a merge gets no 35-merge-lora, and that 24.07/24.09 (which restore the
base at its saved parallelism) warn at model.source.nemo.
With NEMOC_NEMO_GIT=<NVIDIA/NeMo git dir> it compares each table conf with the upstream file.

Usage: merge_lora.py <nemoc> <source dir>
"""
import glob
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import build, build_all, git_show, missing, nemo_tag, require_yaml  # noqa: E402

yaml = require_yaml()
try:
    from omegaconf import OmegaConf
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError
except ImportError:  # python3-omegaconf
    missing("python3-omegaconf")

NEMOC, SRC = sys.argv[1], sys.argv[2]
TABLE = json.load(open(os.path.join(SRC, "libsonnet", "nemo", "merge_lora.json")))
RELEASES = json.load(open(os.path.join(SRC, "libsonnet", "nemo", "versions.json")))["releases"]


def pod_of(obj):
    spec = obj["spec"]["replicatedJobs"][0]["template"]["spec"] if obj["kind"] == "JobSet" else obj["spec"]
    return spec["template"]["spec"]


def argv_of(obj):
    main = pod_of(obj)["containers"][0]
    return main, main.get("command", []) + main.get("args", [])


def load_dir(target):
    docs = {}
    for path in glob.glob(os.path.join(target, "*", "*.yaml")):
        with open(path) as f:
            obj = yaml.safe_load(f)
        if isinstance(obj, dict) and "kind" in obj:
            docs[os.path.relpath(path, target)] = obj
    return docs


def train_config(docs):
    for rel, obj in docs.items():
        if obj["kind"] == "ConfigMap" and "-train-config" in obj["metadata"]["name"]:
            for text in obj["data"].values():
                return yaml.safe_load(text)
    return None


def replay(conf, overrides):
    """Hydra's `key=value` overrides on a struct conf; the errors Hydra would raise."""
    cfg = OmegaConf.create(conf)
    OmegaConf.set_struct(cfg, True)
    errors = []
    for o in overrides:
        key, _, value = o.partition("=")
        try:
            OmegaConf.update(cfg, key, yaml.safe_load(value), merge=True)
        except (ConfigAttributeError, ConfigKeyError) as e:
            errors.append(f"{o}: {type(e).__name__} (struct conf has no {key})")
    return cfg, errors


def check_target(target, errors):
    docs = load_dir(target)
    merges = {r: o for r, o in docs.items() if r.startswith("35-merge-lora/") and o["kind"] in ("Job", "JobSet")}
    if not merges:
        return 0
    rel, job = next(iter(merges.items()))
    where = f"{os.path.basename(os.path.dirname(target))}/{os.path.basename(target)}/{rel}"
    main, argv = argv_of(job)
    if TABLE["script"] not in argv:
        errors.append(f"{where}: does not run {TABLE['script']}: {argv}")
        return 1
    overrides = argv[argv.index(TABLE["script"]) + 1:]
    tag = nemo_tag(main["image"], RELEASES)
    row = TABLE["tags"].get(tag)
    if row is None:
        errors.append(f"{where}: no merge conf for NeMo {tag} ({main['image']})")
        return 1
    cfg, problems = replay(row["conf"], overrides)
    errors.extend(f"{where}: {p} ({row['runner']})" for p in problems)
    left = sorted(OmegaConf.missing_keys(cfg))
    if left:
        errors.append(f"{where}: mandatory keys left ??? : {left}")
    train = train_config(docs)
    if train is None:
        errors.append(f"{where}: no training config beside the merge")
        return 1
    em = train["exp_manager"]
    saved = f"{em['explicit_log_dir']}/checkpoints/{em['name']}.nemo"
    if cfg.lora_model_path != saved:
        errors.append(f"{where}: lora_model_path={cfg.lora_model_path}, training saves {saved}")
    if cfg.gpt_model_file != train["model"]["restore_from_path"]:
        errors.append(f"{where}: gpt_model_file={cfg.gpt_model_file}, training restored "
                      f"{train['model']['restore_from_path']}")
    if train["model"].get("peft", {}).get("peft_scheme") != "lora":
        errors.append(f"{where}: the training config is not a LoRA run")
    if cfg.trainer.precision != "bf16" or cfg.trainer.devices != 1:
        errors.append(f"{where}: trainer.precision={cfg.trainer.precision} devices={cfg.trainer.devices}")
    gpus = sum(int(v) for k, v in main.get("resources", {}).get("limits", {}).items() if k.endswith("/gpu"))
    if (cfg.trainer.accelerator == "gpu") != (gpus == 1) or cfg.trainer.accelerator not in ("gpu", "cpu"):
        errors.append(f"{where}: trainer.accelerator={cfg.trainer.accelerator} with {gpus} GPUs")
    readers = 0
    for r, obj in docs.items():
        if obj["kind"] not in ("Job", "JobSet") or not (r.startswith("40-evaluate/") or r.startswith("50-convert/")):
            continue
        _, args = argv_of(obj)
        reads = [a.partition("=")[2] for a in args if a.startswith(("--nemo_model=", "--input_name_or_path="))]
        if reads != [cfg.merged_model_path]:
            errors.append(f"{where}: {r} reads {reads}, the merge writes {cfg.merged_model_path}")
        readers += 1
    if readers == 0:
        errors.append(f"{where}: a merge nothing reads")
    return 1


def job_names(target, prefix):
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(target, prefix, "*.yaml"))
                  if "kustomization" not in p)


def check_chain(errors):
    """A changed adapter renames merge, evaluate and convert; no merge without LoRA readers;
    the TP1 warning at 24.07."""
    example = os.path.join(SRC, "examples", "llama2-7b-lora-serving-eks.yaml")
    with open(example) as f:
        text = f.read()
    variants = {
        "base": text,
        "adapter": text.replace("adapterDim: 32", "adapterDim: 16"),
        # The same training, merged on CPU: only the merge changes.
        "cpu": text.replace("    evaluate:\n", "    mergeLora: {gpus: 0, resources: {memory: 200Gi}}\n    evaluate:\n", 1),
        "noreaders": re.sub(r"\n    evaluate:\n.*?\n    serve:\n", "\n    serve:\n      engine: engines/llama\n      tokenizer: hf/llama\n",
                            text, flags=re.S),
        "old": text.replace('tag: "24.12"}', 'tag: "24.07"}').replace("nemo24.12-efa", "nemo24.07-efa")
                   .replace("source: {huggingface: meta-llama/Llama-2-7b-hf, hfTokenSecret: hf-token}",
                            "source: {nemo: models/llama-2-7b.nemo, hfTokenSecret: hf-token}"),
    }
    if variants["adapter"] == text or "evaluate:" in variants["noreaders"] or variants["old"].count("24.07") < 2:
        errors.append("the example no longer has the text this test edits")
        return
    names, stderr = {}, {}
    with tempfile.TemporaryDirectory(prefix="nemoc-merge-lora-") as tmp:
        for name, body in variants.items():
            spec = os.path.join(tmp, name + ".yaml")
            with open(spec, "w") as f:
                f.write(body)
            run = build(NEMOC, SRC, os.path.join(tmp, "out-" + name), [spec])
            stderr[name] = run.stderr
            if run.returncode != 0:
                errors.append(f"variant {name} does not build:\n{run.stderr}")
                return
            target = os.path.join(tmp, "out-" + name, "llama2-7b-chat-lora", "eks")
            names[name] = {d: job_names(target, d) for d in ("30-train", "35-merge-lora", "40-evaluate", "50-convert")}
        old_line = next(i + 1 for i, l in enumerate(variants["old"].split("\n")) if "source: {nemo:" in l)
    for d in ("30-train", "35-merge-lora", "40-evaluate", "50-convert"):
        if set(names["base"][d]) & set(names["adapter"][d]):
            errors.append(f"a new adapter keeps the {d} Job name {names['base'][d]}")
    if names["cpu"]["30-train"] != names["base"]["30-train"]:
        errors.append("mergeLora settings renamed the training workload")
    for d in ("35-merge-lora", "40-evaluate", "50-convert"):
        if set(names["base"][d]) & set(names["cpu"][d]):
            errors.append(f"a changed merge keeps the {d} Job name {names['base'][d]} (C5)")
    if names["noreaders"]["35-merge-lora"]:
        errors.append(f"a LoRA run nothing reads still merges: {names['noreaders']['35-merge-lora']}")
    if ":" + str(old_line) + ":" not in stderr["old"] or "saved with tensor and pipeline parallelism 1" not in stderr["old"]:
        errors.append(f"24.07 with source.nemo: no warning at line {old_line}:\n{stderr['old']}")
    if "merge" in stderr["base"]:
        errors.append(f"24.12 warns about the merge:\n{stderr['base']}")


def check_table_upstream(errors):
    git = os.environ.get("NEMOC_NEMO_GIT")
    if not git:
        return 0
    for tag, row in TABLE["tags"].items():
        text = git_show(git, tag, TABLE["confPath"])
        if yaml.safe_load(text) != row["conf"]:
            errors.append(f"merge_lora.json conf at {tag} differs from {TABLE['confPath']}")
    return len(TABLE["tags"])


def main():
    errors, jobs = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-merge-lora-all-") as out:
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for target in sorted(glob.glob(os.path.join(out, "*", "*"))):
            if os.path.isdir(target) and not os.path.basename(os.path.dirname(target)).startswith("_"):
                jobs += check_target(target, errors)
    check_chain(errors)
    tags = check_table_upstream(errors)
    if jobs == 0:
        errors.append("no merge Job generated")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{jobs} merge Jobs, {tags} tags compared upstream, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
