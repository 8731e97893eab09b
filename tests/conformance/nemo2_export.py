#!/usr/bin/python3
"""NeMo 2 training -> Hugging Face -> TensorRT-LLM: the export Job reads what training writes
(issue #21 item 3).

A NeMo 2 train stage saves checkpoint directories under <explicit_log_dir>/checkpoints, named
"{model_name}--{val_loss:.2f}-{step}-{consumed_samples}" plus a "-last" copy (save_last;
nemo/collections/llm/recipes/log/default.py v2.1.0:51-55, NeMoLogger puts ModelCheckpoint's
dirpath at log_dir/"checkpoints", nemo/lightning/nemo_logger.py v2.1.0:220-221). 50-convert
exports the newest finished "*last" directory, the one AutoResume would resume
(nemo/lightning/resume.py v2.1.0:195-256), with llm.export_ckpt(path, target="hf",
output_path, overwrite) (nemo/collections/llm/api.py v2.1.0:604-615, v2.4.0:954-966), after
llm.peft.merge_lora(lora_checkpoint_path, output_path) for a LoRA run (peft/api.py
v2.1.0:40-75, v2.4.0:76-116). For Llama 3 8B LoRA, Llama 3.1 8B SFT, Mixtral 8x7B LoRA and
Nemotron 4 15B SFT at every NeMo 2 release with a recipe, this test builds the spec with
convert, tensorrtLLM and serve stages and checks:
  - the Job's checkpoint directory is the recipe's recipe.log.explicit_log_dir + /checkpoints,
    and the recipe keeps a *-last copy (save_last True);
  - its output is what the engine build reads (--checkpoint=) and the serve stage's tokenizer;
  - the merged directory is passed exactly for LoRA, on a mounted volume; the pod asks for one
    GPU (merge_lora and export load the model on the CPU, but Transformer Engine asserts CUDA),
    and the output directory is not created beforehand;
  - it RUNS the Job's program against stand-ins of llm.export_ckpt, llm.peft.merge_lora and
    exp_manager._filter_out_unfinished_checkpoints (NeMo's marker rule: <checkpoint>-unfinished
    exists, nemo/utils/callbacks/nemo_model_checkpoint.py v2.1.0:439-469) over a checkpoint
    directory with finished, unfinished and non-last checkpoints: the newest finished *last one
    is exported (merged first into a directory emptied before the merge), a killed try's output
    and <out>.lock are gone before export_ckpt (Connector.__call__ keeps <out> while the lock
    exists, nemo/lightning/io/connector.py v2.1.0:84-100), and an empty
    directory fails the Job with a message;
  - Llama 3.1 before NeMo 25.04 is refused at spec.stages.convert: v2.1.0/v2.2.1's
    HFLlamaExporter.config writes no rope_scaling (v2.3.0 llama.py:958-967 does); so is Mixtral
    on 24.12, whose exporter calls io.load_ckpt, absent from nemo.lightning.io (mixtral.py
    v2.1.0:313,318).
With NEMOC_NEMO_GIT=<NVIDIA/NeMo git dir> it also reads, at each tag in use, the parameters of
export_ckpt and merge_lora, _filter_out_unfinished_checkpoints, AutoResume's "*last" match,
the family's @io.model_exporter(<Model>, "hf") and where HFLlamaExporter writes rope_scaling.

Usage: nemo2_export.py <nemoc> <source dir>
"""
import ast
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemo2_checkpoints import NO_CHECKPOINT, training_checkpoints, unfinished_checkpoints, write_site  # noqa: E402
from nemoc_specs import build, build_all, containers, function_params, git_show, nemo2_recipe, pod_specs, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
MODELS = json.load(open(os.path.join(SRC, "libsonnet", "models.json")))["models"]
RELEASES = json.load(open(os.path.join(SRC, "libsonnet", "nemo", "versions.json")))["releases"]
# libsonnet/stages/convert.libsonnet nemo2RopeScalingSince and nemo2ExportSince ({family: release})
CONVERT = open(os.path.join(SRC, "libsonnet", "stages", "convert.libsonnet")).read()
ROPE_SCALING_SINCE = re.search(r"nemo2RopeScalingSince:: '([0-9.]+)'", CONVERT).group(1)
EXPORT_SINCE = dict(re.findall(r"(\w+): '(\d\d\.\d\d)'", re.search(r"nemo2ExportSince:: \{([^}]*)\}", CONVERT).group(1)))

SPEC = """apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata: {name: n2e}
spec:
  namespace: nemo
  image: {repository: nvcr.io/nvidia/nemo, tag: "RELEASE"}
  model:
    preset: PRESET
    source: {nemo: checkpoints/base-nemo2, hfTokenSecret: hf-token}
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
    convert: {to: huggingface}
    tensorrtLLM: {tensorParallel: TP, maxBatchSize: 8, maxInputLen: 2048, maxOutputLen: 512}
    serve: {triton: {replicas: 1, modelName: m}}
  targets:
    - {name: onprem, profile: vanilla-k8s, rdma: {count: 8}}
"""
# preset, mode, nodes, parallelism, engine TP, family file, model class
CASES = [("llama3-8b", "lora", 1, "{tensor: 1}", 1, "llama", "LlamaModel"),
         ("llama3.1-8b", "sft", 1, "{tensor: 2}", 1, "llama", "LlamaModel"),
         ("mixtral-8x7b", "lora", 2, "{tensor: 2, expert: 4}", 4, "mixtral", "MixtralModel"),
         ("nemotron4-15b", "sft", 2, "{tensor: 4}", 2, "nemotron", "NemotronModel")]

STUBS = {  # and nemo2_checkpoints.EXP_MANAGER_STUBS
    "nemo/collections/__init__.py": "",
    "nemo/collections/llm/__init__.py": """
import json, os
from pathlib import Path
from . import peft
def export_ckpt(path, target, output_path=None, overwrite=False, **kwargs):
    # Connector.__call__ turns overwrite off while <out>.lock exists, then keeps <out>
    with open(os.environ["NEMOC_CALLS"], "a") as f:
        f.write(json.dumps({"fn": "export_ckpt", "path": str(path), "path_is_Path": isinstance(path, Path),
                            "target": target, "output_path": str(output_path), "overwrite": overwrite,
                            "output_existed": os.path.exists(str(output_path)),
                            "lock_existed": os.path.exists(str(output_path) + ".lock"),
                            "kwargs": sorted(kwargs)}) + "\\n")
    return output_path
""",
    "nemo/collections/llm/peft.py": """
import json, os
def merge_lora(lora_checkpoint_path, output_path, **kwargs):
    with open(os.environ["NEMOC_CALLS"], "a") as f:
        f.write(json.dumps({"fn": "merge_lora", "lora_checkpoint_path": lora_checkpoint_path,
                            "output_path": output_path, "output_existed": os.path.exists(output_path),
                            "kwargs": sorted(kwargs)}) + "\\n")
""",
}


def run_program(case, program, lora, tmp, errors):
    """Runs the Job's program with the stand-ins: which checkpoint it exports, in which order."""
    root = tempfile.mkdtemp(dir=tmp, prefix="run-")
    site = write_site(root, STUBS)
    ckpts, expected = training_checkpoints(root)
    out, merged = os.path.join(root, "hf"), os.path.join(root, "merged") if lora else ""
    if merged:
        os.makedirs(os.path.join(merged, "weights"))  # a retried Job's leftovers
    os.makedirs(os.path.join(out, "partial"))  # a killed try's output and lock
    open(out + ".lock", "w").close()
    calls = os.path.join(root, "calls.jsonl")
    env = dict(os.environ, PYTHONPATH=site, NEMOC_CALLS=calls)
    run = subprocess.run(["/usr/bin/python3", "-c", program, ckpts, out, merged], capture_output=True, text=True, env=env)
    if run.returncode != 0:
        errors.append(f"{case}: the program failed: {run.stderr}")
        return
    got = [json.loads(line) for line in open(calls)]
    want = ([{"fn": "merge_lora", "lora_checkpoint_path": expected, "output_path": merged, "output_existed": False,
              "kwargs": []}] if lora else []) + [
        {"fn": "export_ckpt", "path": merged or expected, "path_is_Path": True, "target": "hf",
         "output_path": out, "overwrite": True, "output_existed": False, "lock_existed": False, "kwargs": []}]
    if got != want:
        errors.append(f"{case}: calls {got}, expected {want}")
    # No finished *last checkpoint: the Job fails and says why.
    empty = unfinished_checkpoints(root)
    run = subprocess.run(["/usr/bin/python3", "-c", program, empty, out, merged], capture_output=True, text=True, env=env)
    if run.returncode == 0 or NO_CHECKPOINT + empty not in run.stderr:
        errors.append(f"{case}: without a finished checkpoint: exit {run.returncode}, {run.stderr!r}")


def documents(out, stage):
    return [yaml.safe_load(open(p)) for p in sorted(glob.glob(os.path.join(out, "*", "*", stage, "*.yaml")))
            if not p.endswith("kustomization.yaml")]


def check(case, out, mode, tmp, errors):
    jobs = [d for d in documents(out, "50-convert") if d["kind"] == "Job"]
    if len(jobs) != 1:
        errors.append(f"{case}: {len(jobs)} convert Jobs")
        return
    pod = next(pod_specs(jobs[0]))
    main = pod["containers"][0]
    argv = main.get("command", []) + main.get("args", [])
    i = argv.index("-c", argv.index("python3"))
    program, args = argv[i + 1], argv[i + 2:]
    if len(args) != 3:
        errors.append(f"{case}: program arguments {args}")
        return
    checkpoints, hf_dir, merged = args
    assigned = next(filter(None, map(nemo2_recipe, glob.glob(os.path.join(out, "*", "*")))), None)
    if assigned is None:
        errors.append(f"{case}: no recipe module")
        return
    log_dir = ast.literal_eval(assigned["recipe.log.explicit_log_dir"])
    if checkpoints != log_dir + "/checkpoints":
        errors.append(f"{case}: exports from {checkpoints}, training checkpoints in {log_dir}/checkpoints")
    if ast.unparse(assigned.get("recipe.log.ckpt.save_last", ast.Constant(None))) != "True":
        errors.append(f"{case}: the recipe keeps no *-last checkpoint")
    if (merged != "") != (mode == "lora"):
        errors.append(f"{case}: merged directory {merged!r} for mode {mode}")
    mounts = [m["mountPath"] for m in main.get("volumeMounts", []) if m["mountPath"] != "/dev/shm"]
    for path in filter(None, (checkpoints, hf_dir, merged)):
        if not any(path.startswith(m + "/") for m in mounts):
            errors.append(f"{case}: {path} is not on a mounted volume {mounts}")
    if merged and (merged.startswith(checkpoints + "/") or merged == hf_dir):
        errors.append(f"{case}: merged directory {merged} inside the checkpoints or the output")
    # One GPU: Transformer Engine's layers assert CUDA, though the model loads on the CPU.
    gpus = [c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu") for c in containers(jobs[0])]
    if gpus != [1]:
        errors.append(f"{case}: the export's GPUs {gpus}, expected [1]")
    if hf_dir in argv[:argv.index("python3")]:
        errors.append(f"{case}: {hf_dir} is created before the export (a stale lock would then keep it)")
    if pod.get("initContainers"):
        errors.append(f"{case}: the export downloads from the Hub, yet writes config and tokenizer from the checkpoint")
    engine = [d for d in documents(out, "60-tensorrt-llm") if d["kind"] == "Job"]
    engine_argv = [a for d in engine for c in containers(d) for a in c.get("args", [])]
    if engine and "--checkpoint=" + hf_dir not in engine_argv:
        errors.append(f"{case}: the engine build does not read {hf_dir}: {engine_argv}")
    serve = documents(out, "70-serve")
    if serve and '"tokenizer_dir"' in json.dumps(serve) and hf_dir not in json.dumps(serve):
        errors.append(f"{case}: Triton's tokenizer is not {hf_dir}")
    run_program(case, program, mode == "lora", tmp, errors)


def check_upstream(tags, errors):
    git = os.environ.get("NEMOC_NEMO_GIT")
    if not git:
        return 0
    n = 0
    for tag, families in sorted(tags.items()):
        export = function_params(git_show(git, tag, "nemo/collections/llm/api.py"), "export_ckpt")
        if export[:4] != ["path", "target", "output_path", "overwrite"]:
            errors.append(f"{tag}: llm.export_ckpt parameters {export}")
        merge = function_params(git_show(git, tag, "nemo/collections/llm/peft/api.py"), "merge_lora")
        if merge[:2] != ["lora_checkpoint_path", "output_path"]:
            errors.append(f"{tag}: llm.peft.merge_lora parameters {merge}")
        release = next(r for r, row in RELEASES.items() if row["nemo"] == tag)
        if "def _filter_out_unfinished_checkpoints(" not in git_show(git, tag, "nemo/utils/exp_manager.py"):
            errors.append(f"{tag}: exp_manager has no _filter_out_unfinished_checkpoints")
        if 'd.match("*last")' not in git_show(git, tag, "nemo/lightning/resume.py"):
            errors.append(f"{tag}: AutoResume no longer resumes the *last checkpoint")
        for family, model in sorted(families):
            text = git_show(git, tag, f"nemo/collections/llm/gpt/model/{family}.py")
            n += 1
            if f'@io.model_exporter({model}, "hf")' not in text:
                errors.append(f"{tag}: no Hugging Face exporter for {model}")
                continue
            # The exporter class, up to the next top-level definition (v2.1.0 llama.py has
            # apply_rope_scaling after it).
            exporter = text[text.index(f'@io.model_exporter({model}, "hf")'):]
            body = exporter.index("\nclass ") + 1
            end = re.search(r"^(?:@|class |def )", exporter[body + 1:], re.M)
            exporter = exporter[:body + 1 + end.start()] if end else exporter
            if family in EXPORT_SINCE and ("io.load_ckpt(" in exporter) != (release < EXPORT_SINCE[family]):
                errors.append(f"{tag}: the {model} exporter's io.load_ckpt disagrees with nemo2ExportSince")
            if "load_ckpt(" in exporter and "def load_ckpt" not in git_show(git, tag, "nemo/lightning/io/api.py") \
                    and release >= EXPORT_SINCE.get(family, ""):
                errors.append(f"{tag}: the {model} exporter calls a load_ckpt nemo.lightning.io lacks")
            if family == "llama" and ("rope_scaling" in exporter) != (release >= ROPE_SCALING_SINCE):
                errors.append(f"{tag}: HFLlamaExporter rope_scaling disagrees with nemo2RopeScalingSince")
    return n


def train_mode(target):
    """The NeMo 2 train stage's mode (finetune_recipe's peft_scheme 'lora' or not), from its recipe."""
    for cm in glob.glob(os.path.join(target, "00-base", "configmap-*-train-config-*.yaml")):
        recipe = yaml.safe_load(open(cm))["data"].get("recipe.py", "")
        if "pretrain_recipe(" in recipe:
            return "pretrain"
        if "finetune_recipe(" in recipe:
            return "lora" if "peft_scheme='lora'" in recipe else "sft"
    return None


def main():
    errors, checked, refused, tags = [], 0, 0, {}
    with tempfile.TemporaryDirectory(prefix="nemoc-nemo2-export-") as tmp:
        # Every NeMo 2 export of the examples and test specs.
        out = os.path.join(tmp, "all")
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            errors.append(f"examples and test specs: build failed\n{run.stderr}")
        for job in sorted(glob.glob(os.path.join(out, "*", "*", "50-convert", "*.yaml"))):
            if "llm.export_ckpt(" not in open(job).read():
                continue
            target = os.path.dirname(os.path.dirname(job))
            staged = os.path.join(tmp, "one", os.path.relpath(target, out))
            for stage in ("00-base", "50-convert", "60-tensorrt-llm", "70-serve"):
                if os.path.isdir(os.path.join(target, stage)):
                    shutil.copytree(os.path.join(target, stage), os.path.join(staged, stage))
            check(os.path.relpath(target, out), os.path.join(tmp, "one"), train_mode(target), tmp, errors)
            shutil.rmtree(os.path.join(tmp, "one"))
            checked += 1
        for preset, mode, nodes, parallelism, tp, family, model in CASES:
            entry = MODELS[preset]
            for release, row in sorted(RELEASES.items()):
                if release < max(entry["nemo2"]["since"], "24.12"):
                    continue
                case = f"{preset}-{mode}-{release}"
                spec = os.path.join(tmp, case + ".yaml")
                with open(spec, "w") as f:
                    f.write(SPEC.replace("RELEASE", release).replace("PRESET", preset).replace("MODE", mode)
                            .replace("NODES", str(nodes)).replace("PARALLELISM", parallelism).replace("TP", str(tp)))
                out = os.path.join(tmp, "out-" + case)
                run = build(NEMOC, SRC, out, [spec])
                tags.setdefault(row["nemo"], set()).add((family, model))
                rope = preset.startswith("llama3.1-") and release < ROPE_SCALING_SINCE
                if rope or release < EXPORT_SINCE.get(family, ""):
                    where = f"{spec}:20:5: error: target onprem: NeMo {release}'s Hugging Face {'Llama' if rope else family} exporter"
                    if run.returncode != 1 or where not in run.stderr or os.path.exists(out):
                        errors.append(f"{case}: not refused at spec.stages.convert: {run.stderr}")
                    refused += 1
                    continue
                if run.returncode != 0:
                    errors.append(f"{case}: build failed\n{run.stderr}")
                    continue
                check(case, out, mode, tmp, errors)
                checked += 1
        # A SentencePiece pretraining: the exporters save a Hugging Face tokenizer only.
        spec = os.path.join(tmp, "sentencepiece.yaml")
        with open(spec, "w") as f:
            f.write(SPEC.replace("RELEASE", "25.04").replace("PRESET", "llama3-8b").replace("MODE", "pretrain")
                    .replace("NODES", "1").replace("PARALLELISM", "{tensor: 2}").replace("TP", "1")
                    .replace("    source: {nemo: checkpoints/base-nemo2, hfTokenSecret: hf-token}\n",
                             "    tokenizer: {library: sentencepiece, model: /data/tok/tokenizer.model}\n")
                    .replace("      data: {jsonl: {train: sft/training.jsonl}}\n",
                             "      data: {prefixes: [{weight: 1.0, path: c/x_text_document}]}\n")
                    .replace("    results: {nfs: {server: nfs.internal, path: /export}}\n",
                             "    results: {nfs: {server: nfs.internal, path: /export}}\n"
                             "    data: {nfs: {server: nfs.internal, path: /data}}\n"))
        run = build(NEMOC, SRC, os.path.join(tmp, "out-sentencepiece"), [spec])
        if run.returncode != 1 or f"{spec}:9:26: error: the NeMo 2 Hugging Face exporters save" not in run.stderr:
            errors.append(f"a SentencePiece pretraining's export is not refused at the tokenizer: {run.stderr}")
        refused += 1
    upstream = check_upstream(tags, errors)
    if checked < len(CASES) + 1 or refused == 0:
        errors.append("no NeMo 2 export built or refused")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{checked} NeMo 2 exports run, {refused} refused, {upstream} exporters checked upstream, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
