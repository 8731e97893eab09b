#!/usr/bin/python3
"""Every generated NeMo 2 recipe module splits the model's layers the way Megatron accepts (A13).

NVIDIA/NeMo v2.2.1..v2.4.0 nemo/collections/llm/recipes/llama31_405b.py:72-73: the pretraining
trainer() sets account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split to
True (v2.1.0 = NeMo 24.12 has neither). NVIDIA/Megatron-LM core_v0.13.0
megatron/core/transformer/transformer_config.py:993-1040 and transformer_block.py:133-166 then
require, with L = num_layers + (1 per flag set):
    L % PP == 0, and (L // PP) % VPP == 0 when VPP is set.
Builds every example and test spec plus variants of the 405B NeMo 2 example (PP 14 · VPP 9, where
126 + 2 = 128 does not split and both flags must become False; PP 8 · VPP 2, the recipe's own
split, where they stay), reads PP, VPP and the flags from each recipe.py, and replays the rule.

Usage: pipeline_split.py <nemoc> <source dir>
"""
import glob
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import all_specs, build, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]


def release_of(image):
    tag = str(image.get("tag", ""))
    m = re.match(r"^(\d\d\.\d\d)(?!\d)", tag) if image.get("repository", "").endswith("/nemo") else None
    m = m or re.search(r"nemo(\d\d\.\d\d)(?!\d)", tag)
    return m.group(1) if m else None


def recipe_counts(preset, image, mode, models):
    """True when NeMo's recipe trainer() sets both account_for_* flags (the upstream default)."""
    nemo2 = models["models"].get(preset, {}).get("nemo2", {})
    since = nemo2.get("accountForEmbeddingAndLossSince")
    release = release_of(image)
    return mode == "pretrain" and since is not None and (release is None or release >= since)


def megatron_accepts(layers, pp, vpp, counted):
    total = layers + counted
    if total % pp != 0:
        return False
    return vpp is None or pp == 1 or (total // pp) % vpp == 0


def assigned(module, name):
    m = re.search(r"^\s*recipe\.trainer\.strategy\." + name + r" = (\S+)\s*$", module, re.M)
    return None if m is None else m.group(1)


def recipe_modules(tree):
    for path in glob.glob(os.path.join(tree, "**", "*.yaml"), recursive=True):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if isinstance(doc, dict) and doc.get("kind") == "ConfigMap" and "recipe.py" in (doc.get("data") or {}):
                    yield path, doc["data"]["recipe.py"]


def main():
    with open(os.path.join(SRC, "libsonnet", "models.json")) as f:
        models = json.load(f)
    specs = all_specs(SRC)
    errors, checked = [], 0
    seen = {"dropped": 0, "kept": 0}
    with tempfile.TemporaryDirectory(prefix="nemoc-split-") as tmp:
        with open(os.path.join(SRC, "examples", "llama31-405b-gke-a4-nemo2.yaml")) as f:
            base = yaml.safe_load(f)
        variants = {
            # The example itself: PP 14 · VPP 9 -> both flags False (126 = 14 × 9).
            "split-pp14": {},
            # The recipe's own PP 8 · VPP 2 (TP 8, CP 4, 32 nodes): 128 = 8 × 2 × 8, flags kept.
            "split-pp8": {"nodes": 32, "parallelism": {"tensor": 8, "pipeline": 8, "virtualPipeline": 2,
                                                       "context": 4, "sequenceParallel": True}},
        }
        for name, train in variants.items():
            doc = json.loads(json.dumps(base))
            doc["metadata"]["name"] = name
            doc["spec"]["stages"]["train"].update(train)
            path = os.path.join(tmp, name + ".yaml")
            with open(path, "w") as f:
                yaml.safe_dump(doc, f, sort_keys=False)
            specs.append(path)
        for spec_path in specs:
            with open(spec_path) as f:
                spec = yaml.safe_load(f)
            train = spec["spec"].get("stages", {}).get("train")
            if not train or train.get("framework") != "nemo2":
                continue
            out = os.path.join(tmp, "out-" + os.path.basename(spec_path))
            r = build(NEMOC, SRC, out, [spec_path])
            if r.returncode != 0:
                errors.append(f"{spec_path}: nemoc build failed:\n{r.stderr}")
                continue
            preset = spec["spec"]["model"].get("preset")
            layers = models["models"][preset]["architecture"]["numLayers"]
            image = train.get("image", spec["spec"]["image"])
            for path, module in recipe_modules(out):
                checked += 1
                pp = int(assigned(module, "pipeline_model_parallel_size"))
                vpp_text = assigned(module, "virtual_pipeline_model_parallel_size")
                vpp = None if vpp_text in (None, "None") else int(vpp_text)
                emb, loss = (assigned(module, "account_for_embedding_in_pipeline_split"),
                             assigned(module, "account_for_loss_in_pipeline_split"))
                upstream = recipe_counts(preset, image, train.get("mode", "pretrain"), models)
                counted = sum(1 for flag in (emb, loss) if (flag == "True" or (flag is None and upstream)))
                if upstream:
                    seen["dropped" if emb == "False" else "kept"] += 1
                if not megatron_accepts(layers, pp, vpp, counted):
                    errors.append(f"{path}: Megatron refuses {layers} layers + {counted} counted over "
                                  f"PP {pp}, VPP {vpp} (account_for flags: embedding {emb}, loss {loss}, "
                                  f"recipe default {upstream})")
    if not seen["dropped"] or not seen["kept"]:
        errors.append(f"variants did not cover both outcomes: {seen}")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{checked} recipe modules checked, {seen}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
