#!/usr/bin/python3
"""The NeMo -> HuggingFace conversion passes only arguments its script accepts,
and local paths where the script loads with local_files_only=True (field review A10).

NVIDIA/NeMo scripts/checkpoint_converters/convert_llama_nemo_to_hf.py loads
--hf_input_path and --input_tokenizer with local_files_only=True at every tag
nemoc targets (r2.0.0rc1:231,235 ... v2.4.0:249-260): a Hub id there crashes.
libsonnet/nemo/converter_args.json records, per tag, the arguments the script's
argparse declares (tag:path:line per row). For every convert Job generated
from the examples and test specs this test checks:
  - the image's NeMo tag (libsonnet/nemo/versions.json) has a row for the
    script, and every --argument is declared there;
  - each local-files-only argument is an absolute path on a shared volume that
    an init container (HF_TOKEN from the spec's Secret) downloads into first;
  - --precision is a string the script maps to a dtype (others fall back to fp32);
  - the tokenizer reaches the output directory (the init container copies it).
The Mixtral converter's command line differs (field review A11: --hf_model_name, the model
folder as --output_path, no --cpu-only because it always restores on the CPU): its Job must
request no GPU and download no original weights (it builds the model from the config), and
gpus: 1 is a located error at stages.convert. The Nemotron converter (NeMo 24.09+) writes
config and tokenizer from the .nemo and reads --hf_input_path only as a name (nameOnly: the
model's Hub id, nothing downloaded); on 24.07, which lacks it, stages.convert is refused
naming the first release that has it. A converter without a row for the image's tag is a located
`convert.arguments` error.
With NEMOC_NEMO_GIT=<NVIDIA/NeMo git dir> it also checks every table row
against the script at its tag (the argument declared at the cited line).

Usage: convert_args.py <nemoc> <source dir>
"""
import glob
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import build, build_all, git_show, nemo_tag, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]
TABLE = json.load(open(os.path.join(SRC, "libsonnet", "nemo", "converter_args.json")))["scripts"]
MODELS = json.load(open(os.path.join(SRC, "libsonnet", "models.json")))["models"]
RELEASES = json.load(open(os.path.join(SRC, "libsonnet", "nemo", "versions.json")))["releases"]
LOCAL_ONLY = ("--hf_input_path", "--input_tokenizer")
# Arguments naming a Hugging Face model the script reads (a Hub id or a folder): nemoc passes a
# folder an init container downloads, so the Job does not depend on the Hub at run time.
HUB_INPUTS = LOCAL_ONLY + ("--hf_model_name",)
# Converters that build the Hugging Face model from its config alone (AutoModelForCausalLM.
# from_config): downloading the original weights for them would be waste.
FROM_CONFIG = ("/opt/NeMo/scripts/checkpoint_converters/convert_mixtral_nemo_to_hf.py",)


def check_job(rel, job, errors, model_repo):
    # A Job, or on a Flux-delivered Kueue target the JobSet wrapping it (C4).
    spec = job["spec"]["replicatedJobs"][0]["template"]["spec"] if job["kind"] == "JobSet" else job["spec"]
    pod = spec["template"]["spec"]
    main = pod["containers"][0]
    argv = main.get("command", []) + main.get("args", [])
    scripts = [a for a in argv if a.endswith(".py")]
    if len(scripts) != 1:
        errors.append(f"{rel}: no converter script in {argv}")
        return
    script = scripts[0]
    tag = nemo_tag(main["image"], RELEASES)
    row = TABLE.get(script, {}).get("tags", {}).get(tag)
    if row is None:
        errors.append(f"{rel}: no argument table for {script} at NeMo {tag} (image {main['image']})")
        return
    mounts = [m["mountPath"].rstrip("/") + "/" for m in main.get("volumeMounts", [])
              if m["mountPath"] != "/dev/shm"]
    inits = pod.get("initContainers", [])
    init_argv = [a for c in inits for a in c.get("command", []) + c.get("args", [])]
    init_env = [e["name"] for c in inits for e in c.get("env", [])]
    args = argv[argv.index(script) + 1:]
    for a in args:
        if not a.startswith("--"):
            errors.append(f"{rel}: positional argument {a!r}")
            continue
        name, _, value = a.partition("=")
        if name not in row["args"]:
            errors.append(f"{rel}: {script} at {tag} declares no {name} (declared: {sorted(row['args'])})")
        if name in row.get("nameOnly", {}):
            # Only written into the output (Nemotron's config.json _name_or_path): the Hub id.
            if value != model_repo:
                errors.append(f"{rel}: {name}={value}, expected the model's Hub id {model_repo} "
                              f"({row['nameOnly'][name]})")
        elif name in HUB_INPUTS:
            if not value.startswith("/") or not any((value + "/").startswith(m) for m in mounts):
                errors.append(f"{rel}: {name}={value} is not a path on shared storage "
                              f"(local_files_only=True: {', '.join(row['localFilesOnly']) or 'no'})")
            elif value not in init_argv:
                errors.append(f"{rel}: {name}={value}: no init container downloads into it")
        if name == "--precision" and value not in TABLE[script]["precisionValues"].values():
            errors.append(f"{rel}: --precision={value} is not a dtype the script knows ({row['precision']})")
    given = {a.partition("=")[0] for a in args}
    if "--hf_output_path" in given and "--hf_input_path" not in given:
        errors.append(f"{rel}: --hf_output_path without --hf_input_path writes no HF model folder")
    gpus = sum(int(v) for k, v in main.get("resources", {}).get("limits", {}).items() if k.endswith("/gpu"))
    if "cpuOnly" in row and gpus:
        errors.append(f"{rel}: {gpus} GPU(s) for a script that always runs on the CPU ({row['cpuOnly']})")
    if script in FROM_CONFIG and "*.safetensors" in init_argv:
        errors.append(f"{rel}: downloads the original weights for a converter that builds from the config")
    if inits:
        if "HF_TOKEN" not in init_env or "HF_HOME" not in init_env:
            errors.append(f"{rel}: the download init container lacks HF_TOKEN or HF_HOME ({init_env})")
        # The HF model folder: --hf_output_path (Llama), else --output_path (Mixtral's save_pretrained).
        out = next((a.partition("=")[2] for a in args if a.startswith("--hf_output_path=")), None) or \
            next((a.partition("=")[2] for a in args if a.startswith("--output_path=")), None)
        if "tokenizer" not in row and (out not in init_argv or "tokenizer*" not in init_argv):
            errors.append(f"{rel}: the tokenizer files do not reach {out}")


def check_table_upstream(errors):
    git = os.environ.get("NEMOC_NEMO_GIT")
    if not git:
        return 0
    rows = 0
    for script, entry in TABLE.items():
        for tag, row in entry["tags"].items():
            for name, cite in row["args"].items():
                t, path, line = cite.rsplit(":", 2)
                text = git_show(git, t, path).split("\n")
                window = "\n".join(text[int(line) - 1:int(line) + 2])
                if "add_argument(" not in window or (f'"{name}"' not in window and f"'{name}'" not in window):
                    errors.append(f"table row {name} -> {cite}: not declared there")
                rows += 1
    return rows


def hub_repo(out, path):
    """The Hugging Face repository of the model a generated Job belongs to: the project's
    preset's, from SUMMARY.md's model row and libsonnet/models.json."""
    summary = open(os.path.join(os.path.dirname(os.path.dirname(path)), "SUMMARY.md")).read()
    preset = summary.split("| Model | `", 1)[1].split("`", 1)[0]
    return MODELS[preset]["huggingface"]


def check_other_families(errors):
    """A Mixtral conversion asking for a GPU is refused at stages.convert (the script always
    restores on the CPU, A11); a family without a converter is refused naming the family."""
    with open(os.path.join(SRC, "tests", "specs", "pipeline-variants.yaml")) as f:
        base = f.read()
    cases = {
        "mixtral-gpu": (base.replace("preset: llama2-7b", "preset: mixtral-8x7b").replace("      gpus: 0\n", "", 1),
                        ["convert_mixtral_nemo_to_hf.py", "always restores the model on the CPU"]),
        # pipeline-variants is NeMo 24.07 (r2.0.0rc1), which has no Nemotron converter.
        "nemotron-24.07": (base.replace("preset: llama2-7b", "preset: nemotron4-15b")
                           .replace("huggingface: meta-llama/Llama-2-7b-hf", "nemo: models/nemotron4-15b.nemo"),
                           ["convert_nemotron_nemo_to_hf.py is not in NeMo r2.0.0rc1 (24.07)",
                            "v2.0.0 is the first release that ships it"]),
    }
    for name, (text, needles) in cases.items():
        if text == base or ("mixtral" in name and "gpus: 0" in text.split("convert:")[1].split("tensorrtLLM:")[0]):
            errors.append(f"{name}: pipeline-variants.yaml no longer has the text this test edits")
            continue
        with tempfile.TemporaryDirectory(prefix="nemoc-convert-" + name + "-") as tmp:
            spec = os.path.join(tmp, name + ".yaml")
            with open(spec, "w") as f:
                f.write(text)
            run = build(NEMOC, SRC, os.path.join(tmp, "out"), [spec])
        line = next(i + 1 for i, l in enumerate(text.split("\n")) if l.strip() == "convert:")
        located = [l for l in run.stderr.split("\n") if l.startswith(f"{spec}:{line}:")]
        if run.returncode == 0 or not any(all(n in l for n in needles) for l in located):
            errors.append(f"{name}: not refused at stages.convert (line {line}) with {needles}:\n{run.stderr}")


def main():
    errors, jobs = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-convert-args-") as out:
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for path in sorted(glob.glob(os.path.join(out, "*", "*", "50-convert", "*.yaml"))):
            with open(path) as f:
                obj = yaml.safe_load(f)
            if isinstance(obj, dict) and obj.get("kind") in ("Job", "JobSet"):
                if "llm.export_ckpt(" in json.dumps(obj):
                    # A NeMo 2 export (tests/conformance/nemo2_export.py checks it), only after a
                    # NeMo 2 train stage: its ConfigMap holds the recipe module.
                    target = os.path.dirname(os.path.dirname(path))
                    if not glob.glob(os.path.join(target, "00-base", "configmap-*train-config*.yaml")) or not any(
                            "recipe.py" in (yaml.safe_load(open(c))["data"] or {})
                            for c in glob.glob(os.path.join(target, "00-base", "configmap-*train-config*.yaml"))):
                        errors.append(f"{os.path.relpath(path, out)}: a NeMo 2 export without a NeMo 2 train stage")
                    continue
                jobs += 1
                check_job(os.path.relpath(path, out), obj, errors, hub_repo(out, path))
    check_other_families(errors)
    rows = check_table_upstream(errors)
    if jobs == 0:
        errors.append("no convert Job generated")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{jobs} convert Jobs, {rows} table rows checked upstream, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
