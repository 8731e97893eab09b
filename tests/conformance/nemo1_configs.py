#!/usr/bin/python3
"""Conformance of generated NeMo 1 Hydra configs with NeMo itself.

For every example and tests/specs spec, builds the output tree with the nemoc
binary under test, finds each target's NeMo 1 config.yaml (the train ConfigMap)
and the image and script the train pods run it with, and checks it:

  values  the rules NeMo and Megatron enforce at start-up (field-review.md A1,
          A2, A4, A5, A6, A8, A19, A24), each citing the upstream line;
  keys    the key set against NeMo's own base config for the container's NeMo
          version (../shared/upstream/nemo/<tag>/megatron_gpt_config.yaml for
          pretraining, megatron_gpt_finetuning_config.yaml for SFT/LoRA): every
          base key present, no key the base lacks unless nemoc's table
          libsonnet/nemo/nemo1_extra_keys.json names where NeMo reads it.

Both files are loaded with OmegaConf, as NeMo's Hydra entry points load them.
Exit 0 pass, 1 fail, 77 skip (missing ../shared or python3-omegaconf; under
CI=true a missing prerequisite fails instead).

usage: nemo1_configs.py --nemoc BIN [--source DIR] [--shared DIR] [--check values|keys|all]
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile


sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import all_specs, mappings, missing  # noqa: E402


def prerequisite_missing(what):
    missing(what, f"SKIP: {what}")


try:
    import yaml
    from omegaconf import OmegaConf, DictConfig, ListConfig
except ImportError as e:  # pragma: no cover
    prerequisite_missing(f"python3-omegaconf / python3-yaml not importable ({e}); apt-get install python3-omegaconf python3-yaml")


def nemo_release(image):
    """Same rule as compiler/framework_check.cc NemoRelease and libsonnet/nemo/versions.libsonnet."""
    repo, _, tag = image.rpartition(":")
    name = repo.rsplit("/", 1)[-1]
    m = re.match(r"^(\d{2}\.\d{2})(?![0-9])", tag)
    if name == "nemo" and m:
        return m.group(1)
    m = re.search(r"nemo(\d{2}\.\d{2})(?![0-9])", tag)
    return m.group(1) if m else None


def flatten(node, prefix=""):
    """Dotted keys of every mapping entry (lists are values)."""
    out = {}
    for k, v in node.items():
        key = f"{prefix}{k}"
        out[key] = v
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
    return out


def get(cfg, dotted, default=None):
    node = cfg
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def configs_in(tree):
    """(target dir, config dict, image, script) for every NeMo 1 config in a tree: each
    training workload (30-train, and 28-pretrain of a training chain) with the ConfigMap its
    nemo-config volume mounts."""
    for kustomization in sorted(glob.glob(os.path.join(tree, "*", "*", "kustomization.yaml"))):
        target = os.path.dirname(kustomization)
        configs, runs = {}, []
        for path in sorted(glob.glob(os.path.join(target, "*", "*.yaml"))):
            with open(path) as f:
                for doc in yaml.safe_load_all(f):
                    if not isinstance(doc, dict):
                        continue
                    if doc.get("kind") == "ConfigMap" and "config.yaml" in (doc.get("data") or {}):
                        configs[doc["metadata"]["name"]] = doc["data"]["config.yaml"]
                        continue
                    image = script = mounted = None
                    for node in mappings(doc):
                        if node.get("name") == "nemo-config" and isinstance(node.get("configMap"), dict):
                            mounted = node["configMap"].get("name")
                        argv = [str(a) for a in (node.get("command") or []) + (node.get("args") or [])
                                if isinstance(a, (str, int))]
                        if "--config-name=config.yaml" in argv and "image" in node:
                            image = node["image"]
                            script = next((a for a in argv if a.endswith(".py")), None)
                    if image is not None:
                        runs.append((mounted, image, script))
        for mounted, image, script in runs:
            if mounted not in configs:
                raise SystemExit(f"FAIL: {target}: a workload runs config.yaml from ConfigMap {mounted}, which the tree lacks")
            yield target, configs[mounted], image, script


# --- value rules: each returns a list of problems -------------------------------------------

FUSED_ADAM_ARGS = {"name", "lr", "weight_decay", "betas", "eps", "amsgrad", "sched", "capturable", "master_weights"}
FUSABLE = {"gelu", "geglu", "fast-geglu", "swiglu", "fast-swiglu"}


def value_rules(cfg, tag, finetune, spec):
    problems = []
    preset = ((spec.get("spec") or {}).get("model") or {}).get("preset", "")
    model = cfg.get("model", {})
    # A1: MegatronTrainerBuilder._training_strategy reads model.gradient_as_bucket_view without a
    # default (NVIDIA/NeMo r2.0.0rc1..v2.4.0 nemo/collections/nlp/parts/megatron_trainer_builder.py:89/:90).
    if not isinstance(model.get("gradient_as_bucket_view"), bool):
        problems.append("A1 model.gradient_as_bucket_view missing (megatron_trainer_builder.py reads it unconditionally)")
    # No mandatory-missing value (`???`): OmegaConf raises MissingMandatoryValue when NeMo reads it,
    # e.g. the SFT base config's model.data.validation_ds.file_names, which MegatronGPTSFTModel
    # builds on every fit (megatron_gpt_sft_model.py r2.0.0rc1:803, v2.4.0:1015).
    for key, value in flatten(cfg).items():
        if value == "???":
            problems.append(f"{key} is ??? (mandatory value missing)")
    # A2: exp_manager.CallbackParams.every_n_epochs defaults to 1 (exp_manager.py:117/:133); Lightning's
    # ModelCheckpoint refuses it together with every_n_train_steps.
    em = cfg.get("exp_manager", {})
    cb = em.get("checkpoint_callback_params", {}) or {}
    if em.get("create_checkpoint_callback", True) and cb.get("every_n_train_steps") not in (None, 0):
        if cb.get("every_n_epochs", 1) not in (0, None):
            problems.append(f"A2 every_n_train_steps={cb.get('every_n_train_steps')} with every_n_epochs={cb.get('every_n_epochs', '1 (NeMo default)')}")
    optim = model.get("optim", {}) or {}
    peft = (model.get("peft") or {}).get("peft_scheme", "none")
    # A4: nlp_adapter_mixins.add_adapter: "distributed_fused_adam is not supported for PEFT" (:221/:233).
    if peft not in (None, "none") and optim.get("name") == "distributed_fused_adam":
        problems.append(f"A4 PEFT ({peft}) with optim.name distributed_fused_adam (NeMo refuses; use fused_adam)")
    # fused_adam: apex FusedAdam takes every other optim key as a constructor argument.
    if optim.get("name") == "fused_adam":
        extra = sorted(set(optim) - FUSED_ADAM_ARGS)
        if extra:
            problems.append(f"optim fused_adam gets arguments FusedAdam does not take: {extra}")
    # A5: megatron_gpt_model.py:322/:367 refuses EP with the Apex distributed optimizer; :319/:364 needs O2.
    ep = model.get("expert_model_parallel_size", 1) or 1
    if ep > 1:
        if optim.get("name") == "distributed_fused_adam":
            problems.append("A5 expert_model_parallel_size > 1 with distributed_fused_adam (use mcore_distributed_optim)")
        if not model.get("megatron_amp_O2", False):
            problems.append("A5 expert parallelism needs megatron_amp_O2")
    # A24: NeMo copies every TransformerConfig field the model config has into Megatron's
    # TransformerConfig (megatron_base_model.py build_transformer_config, v2.1.0:566-574;
    # nemo1_extra_keys.json cites the line per tag); Megatron's moe_aux_loss_coeff defaults to 0
    # (core_r0.10.0 transformer_config.py:278), so without it the router trains with no
    # load-balancing loss. The launcher's Mixtral configs and NeMo 2 use 0.01.
    if (model.get("num_moe_experts") or 0) > 1 and not float(model.get("moe_aux_loss_coeff") or 0) > 0:
        problems.append("A24 MoE without model.moe_aux_loss_coeff > 0 (Megatron's default 0: no load-balancing loss)")
    # A6: Megatron TransformerConfig (core_r0.8.0 transformer_config.py:403-413, core_r0.13.0 :1043-1054).
    activation = model.get("activation")
    if model.get("bias_activation_fusion", True) and activation is not None:
        if activation not in FUSABLE:
            problems.append(f"A6 bias_activation_fusion with activation {activation} (only gelu or swiglu fuse)")
        elif activation == "gelu" and not model.get("bias", True):
            problems.append("A6 bias_activation_fusion with gelu and bias: false (add_bias_linear required)")
    # A7: DLLogger JSON on shared storage, per rank (DLLoggerParams.json_file defaults to
    # ./dllogger.json, lost with the pod: nemo/utils/loggers/dllogger.py:48).
    if em.get("create_dllogger_logger", False):
        json_file = (em.get("dllogger_logger_kwargs") or {}).get("json_file")
        log_dir = em.get("explicit_log_dir") or ""
        if not json_file or not log_dir or not str(json_file).startswith(log_dir + "/"):
            problems.append(f"A7 DLLogger json_file {json_file!r} not under exp_manager.explicit_log_dir {log_dir!r}")
        elif "${oc.env:RANK" not in str(json_file):
            problems.append(f"A7 DLLogger json_file {json_file!r} is one file for every rank")
    # A8: Llama 3.1 needs RoPE scaling (megatron_gpt_model.py:182 at v2.0.0); r2.0.0rc1 lacks it.
    if preset.startswith("llama3.1-"):
        if tag == "r2.0.0rc1":
            problems.append("A8 Llama 3.1 on NeMo r2.0.0rc1 (24.07), which has no scale_positional_embedding")
        elif model.get("scale_positional_embedding") is not True:
            problems.append("A8 Llama 3.1 without model.scale_positional_embedding: true")
    # A19: full SFT of a trained model at a fine-tuning learning rate (NeMo 2's llama31_70b
    # finetune_recipe: 5e-6 for full SFT, v2.4.0 recipes/llama31_70b.py:313), unless the spec sets one.
    train_spec = (((spec.get("spec") or {}).get("stages") or {}).get("train") or {})
    if finetune and peft in (None, "none") and "lr" not in (train_spec.get("optimizer") or {}):
        if float(optim.get("lr", 1)) > 1e-5:
            problems.append(f"A19 full SFT with the default learning rate {optim.get('lr')} (fine-tuning: <= 1e-5)")
    return problems


def key_rules(cfg, base, extras, tag, pretrain_base=None, finetune_rule=None):
    got = flatten(cfg)
    want = flatten(base)
    problems = []
    if pretrain_base is not None and finetune_rule and tag in finetune_rule.get("tags", []):
        # megatron_gpt_finetuning.py merges cfg.model over the restored pretraining model config.
        want_model = {k: v for k, v in flatten(pretrain_base).items() if k.startswith("model.")}
        allowed_from_pretrain = set(want_model)
    else:
        allowed_from_pretrain = set()
    for key in sorted(want):
        if key == "defaults" or key.startswith("defaults."):
            continue
        if key not in got:
            problems.append(f"missing base key {key}")
    allowed = {row["key"] for row in extras if tag in row.get("tags", [tag])}
    for key in sorted(got):
        if key in want or key in allowed or key in allowed_from_pretrain:
            continue
        ancestors = [key.rsplit(".", n)[0] for n in range(1, key.count(".") + 1)]
        if any(a in allowed or a in allowed_from_pretrain for a in ancestors):
            continue  # inside a mapping a table row allows as a whole
        parent = key.rsplit(".", 1)[0] if "." in key else None
        # A subtree nemoc added as a whole is reported once, at its root.
        if parent is not None and parent not in want and parent not in allowed \
                and parent not in allowed_from_pretrain and parent in got:
            continue
        problems.append(f"key {key} not in NeMo {tag}'s base config and not in nemo1_extra_keys.json")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nemoc", required=True)
    ap.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--shared", default=None)
    ap.add_argument("--check", choices=["values", "keys", "all"], default="all")
    args = ap.parse_args()
    source = os.path.abspath(args.source)
    shared = os.path.abspath(args.shared or os.path.join(source, "..", "shared"))
    upstream = os.path.join(shared, "upstream", "nemo")
    if not os.path.isdir(upstream):
        prerequisite_missing(f"{upstream} not found (the shared upstream data)")
    with open(os.path.join(source, "libsonnet", "nemo", "versions.json")) as f:
        releases = json.load(f)["releases"]
    extras_path = os.path.join(source, "libsonnet", "nemo", "nemo1_extra_keys.json")
    extras, finetune_rule = [], None
    if os.path.exists(extras_path):
        with open(extras_path) as f:
            table = json.load(f)
        extras, finetune_rule = table["keys"], table.get("finetuneModelKeysFromPretrain")

    failures = 0
    checked = 0
    with tempfile.TemporaryDirectory(prefix="nemoc-conformance-") as tmp:
        specs = all_specs(source)
        for spec in specs:
            out = os.path.join(tmp, os.path.basename(spec))
            r = subprocess.run([args.nemoc, "build", "--quiet", "--out", out, spec], cwd=source,
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL {os.path.relpath(spec, source)}: nemoc build exit {r.returncode}\n{r.stderr}")
                failures += 1
                continue
            for target, text, image, script in configs_in(out):
                where = f"{os.path.relpath(spec, source)} -> {os.path.relpath(target, out)}"
                release = nemo_release(image)
                if release not in releases:
                    print(f"FAIL {where}: image {image}: NeMo release {release} not in versions.json")
                    failures += 1
                    continue
                tag = releases[release]["nemo"]
                finetune = script is not None and "megatron_gpt_finetuning" in script
                base_file = "megatron_gpt_finetuning_config.yaml" if finetune else "megatron_gpt_config.yaml"
                cfg = OmegaConf.to_container(OmegaConf.create(text), resolve=False)
                base = OmegaConf.to_container(OmegaConf.load(os.path.join(upstream, tag, base_file)), resolve=False)
                problems = []
                if args.check in ("values", "all"):
                    with open(spec) as f:
                        spec_doc = yaml.safe_load(f)
                    problems += value_rules(cfg, tag, finetune, spec_doc)
                if args.check in ("keys", "all"):
                    pretrain_base = None
                    if finetune:
                        pretrain_base = OmegaConf.to_container(
                            OmegaConf.load(os.path.join(upstream, tag, "megatron_gpt_config.yaml")), resolve=False)
                    problems += key_rules(cfg, base, extras, tag, pretrain_base, finetune_rule)
                checked += 1
                if problems:
                    failures += 1
                    print(f"FAIL {where} (NeMo {release} = {tag}, {base_file}):")
                    for p in problems:
                        print(f"  {p}")
                else:
                    print(f"ok   {where} (NeMo {release} = {tag}, {base_file})")
    print(f"{checked} NeMo 1 configs checked, {failures} failing")
    if checked == 0:
        print("FAIL: no NeMo 1 config found")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
