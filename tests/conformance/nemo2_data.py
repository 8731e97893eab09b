#!/usr/bin/python3
"""NeMo 2 pretraining reads the prepared data it names, tokenized as it was prepared (issue #21).

NVIDIA/NeMo nemo/collections/llm/gpt/data/pre_training.py, identical in what is checked here at
v2.1.0 (NeMo 24.12), v2.2.1 (25.02), v2.3.0 (25.04) and v2.4.0 (25.07):
  - PreTrainingDataModule.__init__ (v2.2.1:141-163, v2.4.0:158-181) takes the keyword arguments
    in PARAMS below, nothing else;
  - __init__ calls validate_dataset_asset_accessibility(paths) (v2.2.1:60-95): a zipped list
    [weight, prefix, ...] must have numeric weights (is_zipped_list, :49-57, asserts "Got
    malformatted zipped list" on a mix) and every <prefix>.bin/.idx must exist in the pod;
  - without `tokenizer` it tokenizes as get_nmt_tokenizer("megatron", "GPT2BPETokenizer")
    (v2.2.1:211-213), not as the data was prepared.
The tokenizer classes take AutoTokenizer(pretrained_model_name, ...) and
SentencePieceTokenizer(model_path, ...) (nemo/collections/common/tokenizers/huggingface/
auto_tokenizer.py and sentencepiece_tokenizer.py at the same tags).

This test builds every example and test spec plus variants of tests/specs/nemo2-pretrain-data.yaml
(weighted prefixes of its own; a SentencePiece model), takes each NeMo 2 recipe module that
builds a PreTrainingDataModule, parses it with Python's own `ast`, and checks: only PARAMS
keywords; paths is a zipped list with numeric weights; every prefix lies on a volume the training
container mounts; a prefix from dataPrep is exactly what the data-prep Job writes
(preprocess_data_for_megatron.py appends _<json key>_document to --output-prefix); the
tokenizer is the class and argument above, imported from its module, and is the tokenizer the
data-prep Job used; seq_length agrees with recipe.model.config.seq_length.

Usage: nemo2_data.py <nemoc> <source dir>
"""
import ast
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import all_specs, build, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])

PARAMS = {
    "paths", "seq_length", "tokenizer", "micro_batch_size", "global_batch_size", "rampup_batch_size",
    "num_workers", "pin_memory", "persistent_workers", "reset_position_ids", "create_attention_mask",
    "reset_attention_mask", "eod_mask_loss", "seed", "split", "index_mapping_dir",
    "num_dataset_builder_threads", "num_train_samples", "num_val_samples", "num_test_samples",
}
TOKENIZERS = {  # class -> (module it is imported from, its first argument)
    "AutoTokenizer": ("nemo.collections.common.tokenizers.huggingface.auto_tokenizer", "pretrained_model_name"),
    "SentencePieceTokenizer": ("nemo.collections.common.tokenizers.sentencepiece_tokenizer", "model_path"),
}
# Which data-prep argument names the same tokenizer (examples/nlp/language_modeling/
# preprocess_data_for_megatron.py --tokenizer-type / --tokenizer-model).
PREP_ARG = {"pretrained_model_name": "--tokenizer-type", "model_path": "--tokenizer-model"}

errors = []


def variants(tmp):
    """Two variants of the test spec, as separate projects: weighted prefixes of its own, and a
    SentencePiece tokenizer model on shared storage."""
    with open(os.path.join(SRC, "tests", "specs", "nemo2-pretrain-data.yaml")) as f:
        text = f.read()
    out = []
    prefixes = text.replace("name: nemo2-pretrain-data", "name: nemo2-data-prefixes").replace(
        "data: {fromDataPrep: true}",
        "data: {prefixes: [{path: web/web_text_document, weight: 0.7}, {path: code/code_text_document, weight: 0.3}]}")
    spm = text.replace("name: nemo2-pretrain-data", "name: nemo2-data-spm").replace(
        "    source: {hfTokenSecret: hf-token}   # the tokenizer is gated (A3)\n",
        "    tokenizer: {library: sentencepiece, model: /data/tokenizers/spm.model}\n")
    for name, body in (("prefixes.yaml", prefixes), ("spm.yaml", spm)):
        if body == text:
            errors.append(f"variant {name}: the replacement did not apply")
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(body)
        out.append(path)
    return out


def literal(node, where):
    try:
        return ast.literal_eval(node)
    except ValueError:
        errors.append(f"{where}: not a literal: {ast.dump(node)[:120]}")
        return None


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return dotted(node.value) + "." + node.attr
    return None


def workload_mounts(tree):
    """mountPath of every volume the training containers mount."""
    mounts = set()
    for path in glob.glob(os.path.join(tree, "30-train", "*.yaml")):
        with open(path) as f:
            text = f.read()
        for line in text.splitlines():
            s = line.strip()
            if s.startswith("mountPath:"):
                mounts.add(s.split(":", 1)[1].strip())
    return mounts


def data_prep_args(tree):
    args = []
    for path in glob.glob(os.path.join(tree, "20-data-prep", "job-*.yaml")):
        with open(path) as f:
            job = yaml.safe_load(f)
        for c in job["spec"]["template"]["spec"]["containers"]:
            args += [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]
    return args


def check_module(where, text, tree, sources):
    module = ast.parse(text)
    imports = {}
    for node in module.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                imports[alias.asname or alias.name] = node.module
    calls, seq_lengths = [], []
    for node in ast.walk(module):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = dotted(node.targets[0])
            if target == "recipe.model.config.seq_length":
                seq_lengths.append(literal(node.value, where))
            if target == "recipe.data" and isinstance(node.value, ast.Call) and node.value.args and \
                    dotted(node.value.args[0]) == "llm.PreTrainingDataModule":
                calls.append(node.value)
    if not calls:
        return 0
    for call in calls:
        kwargs = {k.arg: k.value for k in call.keywords}
        for name in sorted(set(kwargs) - PARAMS):
            errors.append(f"{where}: PreTrainingDataModule has no argument {name}")
        for name in ("paths", "tokenizer", "seq_length", "micro_batch_size", "global_batch_size"):
            if name not in kwargs:
                errors.append(f"{where}: PreTrainingDataModule without {name}")
        if "seq_length" in kwargs and seq_lengths and literal(kwargs["seq_length"], where) != seq_lengths[-1]:
            errors.append(f"{where}: data seq_length differs from recipe.model.config.seq_length")
        paths = literal(kwargs["paths"], where) if "paths" in kwargs else None
        prefixes = []
        if not isinstance(paths, list) or len(paths) % 2 or not paths:
            errors.append(f"{where}: paths {paths!r} is not a zipped [weight, prefix, ...] list")
        else:
            weights, prefixes = paths[::2], paths[1::2]
            if not all(isinstance(w, (int, float)) and not isinstance(w, bool) and w > 0 for w in weights):
                errors.append(f"{where}: weights {weights!r} are not all positive numbers (is_zipped_list)")
            if not all(isinstance(p, str) for p in prefixes):
                errors.append(f"{where}: prefixes {prefixes!r} are not all strings")
        mounts = workload_mounts(tree)
        for p in prefixes:
            if isinstance(p, str) and not any(p.startswith(m.rstrip("/") + "/") for m in mounts):
                errors.append(f"{where}: {p}.bin/.idx are on no volume the training pods mount {sorted(mounts)}")
        prep = data_prep_args(tree)
        prep_prefix = next((a.split("=", 1)[1] for a in prep if a.startswith("--output-prefix=")), None)
        json_key = next((a.split("=", 1)[1] for a in prep if a.startswith("--json-keys=")), None)
        if prep_prefix is not None:
            want = f"{prep_prefix}_{json_key}_document"
            prep_dir = os.path.dirname(prep_prefix) + "/"
            for p in prefixes:
                if isinstance(p, str) and p.startswith(prep_dir) and p != want:
                    errors.append(f"{where}: reads {p}, but the data-prep Job writes {want}")
            sources.update("prep" if p == want else "prefixes" for p in prefixes)
        else:
            sources.add("prefixes")
        tok = kwargs.get("tokenizer")
        if not (isinstance(tok, ast.Call) and dotted(tok.func) == "run.Config" and tok.args):
            errors.append(f"{where}: tokenizer is not run.Config(<tokenizer class>, ...)")
            continue
        cls = dotted(tok.args[0])
        if cls not in TOKENIZERS:
            errors.append(f"{where}: tokenizer class {cls} is not one of {sorted(TOKENIZERS)}")
            continue
        module_name, arg = TOKENIZERS[cls]
        if imports.get(cls) != module_name:
            errors.append(f"{where}: {cls} imported from {imports.get(cls)}, not {module_name}")
        targs = {k.arg: literal(k.value, where) for k in tok.keywords}
        if set(targs) != {arg}:
            errors.append(f"{where}: {cls} gets {sorted(targs)}, not {arg}")
        elif prep:
            used = next((a.split("=", 1)[1] for a in prep if a.startswith(PREP_ARG[arg] + "=")), None)
            if used != targs[arg]:
                errors.append(f"{where}: tokenizer {targs[arg]} is not the one the data was prepared with ({used})")
    return len(calls)


def main():
    checked, kinds = 0, set()
    with tempfile.TemporaryDirectory(prefix="nemoc-nemo2-data-") as tmp:
        specs = all_specs(SRC) + variants(tmp)
        out = os.path.join(tmp, "out")
        run = build(NEMOC, SRC, out, specs)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for cm in sorted(glob.glob(os.path.join(out, "*", "*", "00-base", "configmap-*.yaml"))):
            with open(cm) as f:
                doc = yaml.safe_load(f)
            text = (doc.get("data") or {}).get("recipe.py")
            if text is None:
                continue
            tree = os.path.dirname(os.path.dirname(cm))
            n = check_module(os.path.relpath(cm, out), text, tree, kinds)
            checked += n
            if n:
                kinds.add("spm" if "SentencePieceTokenizer" in text else "hf")
    for e in errors:
        print("FAIL:", e)
    print(f"{checked} PreTrainingDataModule(s) checked ({', '.join(sorted(kinds))}): {len(errors)} error(s)")
    if kinds != {"prep", "prefixes", "spm", "hf"}:
        print(f"FAIL: expected data from dataPrep and from prefixes, HF and SentencePiece tokenizers; got {sorted(kinds)}")
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
