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

It also RUNS every NeMo 1 convert Job (those of the examples and test specs, and one per script
and NeMo tag of the table, from a spec with only a convert stage and its image at that release):
the init container and then the container's own command (nemoc's bash wrapper and the script), with the Job's
volumes under a temporary directory and stand-ins of torch, transformers, NeMo and
huggingface_hub that write marked files (tests/lib/nemo1_converters.py). The script is the
one at the image's tag with NEMOC_NEMO_GIT, else a stand-in that handles files as it does. A
first try is killed after the raw state dict is saved (the Llama converter torch.saves it
before save_pretrained: convert_llama_nemo_to_hf.py v2.1.0:234-235,271-272), the retry must
succeed, and then (field review A27):
  - the published Hugging Face folder (--hf_output_path, Mixtral's --output_path) holds exactly
    what save_pretrained writes plus the tokenizer: no raw state dict beside save_pretrained's
    weights, not even one an earlier nemoc left there; a converter that calls no save_pretrained
    for the model (Nemotron: its torch.save at <hf_output_path>/pytorch_model.bin is the
    model, v2.1.0:371-375) publishes that file as the weights, next to config.json;
  - the folder is loadable: config.json, weights, tokenizer_config.json and tokenizer.json or
    tokenizer.model;
  - no raw state dict is left anywhere else on the volumes, after the killed try or the retry.
With NEMOC_NEMO_GIT=<NVIDIA/NeMo git dir> it also checks every table row
against the script at its tag (the argument declared at the cited line).

Usage: convert_args.py <nemoc> <source dir>
"""
import glob
import json
import os
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import build, build_all, git_show, nemo_tag, pod_specs, require_yaml  # noqa: E402
import nemo1_converters as stand  # noqa: E402

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


# A variant spec per converter and release (the Job only: stages.convert of a .nemo on the
# volume). The Mixtral converter always runs on the CPU, so every variant asks for gpus: 0.
VARIANT = """apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata: {name: NAME}
spec:
  namespace: convert
  image: {repository: nvcr.io/nvidia/nemo, tag: "RELEASE"}
  model:
    preset: PRESET
    source: {hfTokenSecret: hf-token}
  storage:
    results: {nfs: {server: nfs.internal, path: /export}}
  stages:
    convert: {checkpoint: models/base.nemo, gpus: 0, resources: {memory: 400Gi}}
  targets:
    - {name: onprem, profile: vanilla-k8s}
"""
FAMILY_PRESET = {"llama": "llama3.1-8b", "mixtral": "mixtral-8x7b", "nemotron": "nemotron4-15b"}
CONVERTERS = json.load(open(os.path.join(SRC, "libsonnet", "models.json")))["converters"]


def variant_specs(tmp):
    """One spec per (converter script, NeMo tag of its table rows): the first release of the tag."""
    specs = []
    for family, preset in FAMILY_PRESET.items():
        script = CONVERTERS[family]["toHuggingface"]
        for tag in TABLE[script]["tags"]:
            release = min(r for r, row in RELEASES.items() if row["nemo"] == tag)
            name = f"cv-{family}-{release.replace('.', '')}"
            path = os.path.join(tmp, name + ".yaml")
            with open(path, "w") as f:
                f.write(VARIANT.replace("NAME", name).replace("RELEASE", release).replace("PRESET", preset))
            specs.append(path)
    return specs


def run_argv(argv, env, cwd):
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def volume_files(root):
    """{path: writer} of every file under root's volumes (not the stand-ins' site, not /opt)."""
    found = {}
    for top in os.listdir(root):
        if top in ("site", "opt"):
            continue
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                found[os.path.join(d, n)] = stand.writer(os.path.join(d, n))
    return found


def check_published(rel, folder, root, when, errors):
    """The folder rule of field review A27 over the files the Job left under root."""
    files = volume_files(root)
    inside = {os.path.relpath(p, folder): w for p, w in files.items() if p.startswith(folder + "/")}
    raw_outside = sorted(os.path.relpath(p, root) for p, w in files.items()
                         if w == "torch.save" and not p.startswith(folder + "/"))
    if raw_outside:
        errors.append(f"{rel}: {when}: a raw state dict is left on the volume at {raw_outside}")
    if when != "after the retry":
        return
    raw = sorted(n for n, w in inside.items() if w == "torch.save")
    saved = any(w == "model" for w in inside.values())
    tokenizer = set(stand.TOKENIZER_FILES) | {"tokenizer.model"}
    if saved:
        allowed = set(stand.MODEL_FILES) | tokenizer
        if raw:
            errors.append(f"{rel}: the published folder holds the raw state dict {raw} beside the weights "
                          f"save_pretrained wrote (field review A27)")
    else:
        # No save_pretrained of the model: the torch.save'd file is the weights (Nemotron).
        allowed = {"config.json", "pytorch_model.bin"} | tokenizer
        if raw != ["pytorch_model.bin"]:
            errors.append(f"{rel}: no save_pretrained wrote the model and its weights are {raw}, "
                          f"not pytorch_model.bin")
    extra = sorted(set(inside) - allowed - set(raw))
    if extra:
        errors.append(f"{rel}: the published folder holds {extra} besides the model and its tokenizer")
    weights = {"model.safetensors.index.json", "model.safetensors", "pytorch_model.bin"} & set(inside)
    if "config.json" not in inside or not weights or "tokenizer_config.json" not in inside \
            or not {"tokenizer.json", "tokenizer.model"} & set(inside):
        errors.append(f"{rel}: the published folder is not a loadable model: {sorted(inside)}")


def run_job(rel, job, family, errors):
    """Runs the Job's init containers and container as its pods would, a killed try and a retry."""
    pod = next(pod_specs(job))
    main = pod["containers"][0]
    argv = main.get("command", []) + main.get("args", [])
    script = next(a for a in argv if a.endswith(".py"))
    tag = nemo_tag(main["image"], RELEASES)
    mounts = [m["mountPath"].rstrip("/") for m in main.get("volumeMounts", []) if m["mountPath"] != "/dev/shm"]
    git = os.environ.get("NEMOC_NEMO_GIT")
    with tempfile.TemporaryDirectory(prefix="nemoc-convert-run-") as root:
        def local(a):
            """An argument with the pod's paths (a volume's, the script's) moved under root."""
            name, eq, value = a.partition("=") if a.startswith("--") else ("", "", a)
            if value == script or any(value == m or value.startswith(m + "/") for m in mounts):
                return name + eq + root + value
            return a

        os.makedirs(os.path.dirname(local(script)))
        with open(local(script), "w") as f:
            f.write(git_show(git, tag, script.split("/opt/NeMo/", 1)[1]) if git
                    else stand.STANDINS[os.path.basename(script)])
        env = {"PATH": "/usr/bin:/bin", "HOME": root, "PYTHONPATH": stand.write_site(root),
               "NEMOC_NEMO_CONFIG": stand.nemo_config(family), "HF_HUB_OFFLINE": "1"}
        # The .nemo: a tar holding the model config's tokenizer (nemo:<file>).
        nemo = local(next(a for a in argv if a.startswith("--input_name_or_path=")).partition("=")[2])
        os.makedirs(os.path.dirname(nemo), exist_ok=True)
        model = os.path.join(root, stand.NEMO_TOKENIZER)
        with open(model, "w") as f:
            f.write("a SentencePiece model\n")
        with tarfile.open(nemo, "w") as archive:
            archive.add(model, arcname="./" + stand.NEMO_TOKENIZER)
        os.remove(model)
        args = argv[argv.index(script) + 1:]
        folder = local(next((a.partition("=")[2] for a in args if a.startswith("--hf_output_path=")), None)
                       or next(a.partition("=")[2] for a in args if a.startswith("--output_path=")))
        if family == "llama":
            # What nemoc before field review A27 left: the raw state dict in the published folder.
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, "pytorch_model.bin"), "w") as f:
                f.write(stand.WRITERS["torch.save"] + "[]")
        for attempt, fail in (("after the killed try", "load_state_dict"), ("after the retry", "")):
            for c in pod.get("initContainers", []):
                run = run_argv([local(a) for a in c.get("command", []) + c.get("args", [])], env, root)
                if run.returncode != 0:
                    errors.append(f"{rel}: init container {c['name']} failed: {run.stderr[-2000:]}")
                    return
            run = run_argv([local(a) for a in argv], dict(env, NEMOC_FAIL=fail), root)
            if fail and family != "nemotron" and run.returncode == 0:
                # The Llama and Mixtral converters load the state dict; Nemotron's does not.
                errors.append(f"{rel}: the try meant to be killed in load_state_dict succeeded")
            if not fail and run.returncode != 0:
                errors.append(f"{rel}: the retry failed ({script} at {tag}"
                              f"{'' if git else ', stand-in'}): {run.stderr[-2000:]}")
                return
            check_published(rel, folder, root, attempt, errors)


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


def model_family(path):
    """The model family of the project a generated Job belongs to (SUMMARY.md's preset)."""
    summary = open(os.path.join(os.path.dirname(os.path.dirname(path)), "SUMMARY.md")).read()
    return MODELS[summary.split("| Model | `", 1)[1].split("`", 1)[0]]["family"]


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
    errors, jobs, to_run, ran = [], 0, [], 0
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
                to_run.append((os.path.relpath(path, out), obj, model_family(path)))
        # One Job per converter and NeMo tag of its table, run with the others.
        variants = os.path.join(out, "variants")
        os.makedirs(variants)
        run = build(NEMOC, SRC, os.path.join(out, "variant-out"), variant_specs(variants))
        if run.returncode != 0:
            errors.append(f"the variant specs do not build: {run.stderr}")
        for path in sorted(glob.glob(os.path.join(out, "variant-out", "*", "*", "50-convert", "job-*.yaml"))):
            rel = os.path.relpath(path, out)
            obj = yaml.safe_load(open(path))
            check_job(rel, obj, errors, hub_repo(out, path))
            to_run.append((rel, obj, model_family(path)))
        for rel, obj, family in to_run:
            run_job(rel, obj, family, errors)
        ran = len(to_run)
    check_other_families(errors)
    rows = check_table_upstream(errors)
    if jobs == 0:
        errors.append("no convert Job generated")
    for e in errors:
        print(e, file=sys.stderr)
    scripts = "upstream scripts" if os.environ.get("NEMOC_NEMO_GIT") else "stand-in scripts"
    print(f"{jobs} convert Jobs, {ran} run ({scripts}), {rows} table rows checked upstream, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
