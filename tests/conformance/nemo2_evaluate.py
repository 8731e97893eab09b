#!/usr/bin/python3
"""NeMo 2 training -> evaluation: the evaluate Job serves what training wrote and runs NeMo's own
evaluation against it (issue #21 items 2 and 3).

A NeMo 2 train stage saves checkpoint directories under <explicit_log_dir>/checkpoints; 40-evaluate
picks the newest finished "*last" one (libsonnet/stages/nemo2-checkpoint.libsonnet, shared with the
export) and does what NeMo's tutorial does (NVIDIA/NeMo tutorials/llm/evaluation/mmlu.ipynb v2.3.0,
v2.4.0): it starts scripts/deploy/nlp/deploy_in_fw_oai_server_eval.py (in-framework deployment on
PyTriton with a FastAPI front end on port 8886), waits for /v1/triton_health, calls
llm.evaluate(EvaluationTarget(ApiEndpoint(url, type="completions")), EvaluationConfig(type=<task>,
output_dir, params=ConfigParams(parallelism))) per task and stops the server with SIGINT. For Llama 3
8B LoRA, Llama 3.1 8B SFT, Mixtral 8x7B LoRA and Nemotron 4 15B SFT at every NeMo 2 release with a
recipe, this test builds the spec and checks:
  - the Job's checkpoint directory is the recipe's explicit_log_dir + /checkpoints, with save_last;
  - the server's tensor and pipeline parallelism are the recipe's (or the stage's), its GPUs are
    their product, the pod asks for exactly that many, and the results directory is created on a
    mounted volume;
  - the tasks are NVIDIA Evals Factory completions tasks (evaluate.libsonnet nemo2Tasks);
  - it RUNS the Job's program with a stand-in torchrun (an HTTP server on port 8886 that answers
    /v1/triton_health and records SIGINT) and stand-ins of llm.evaluate, the evaluation API classes
    and _filter_out_unfinished_checkpoints: the newest finished *last checkpoint is served with the
    flags given, evaluate is called once per task with the URL and output directory, the server is
    stopped with SIGINT afterwards; a server that exits first fails the Job with its exit code; no
    finished checkpoint fails it with a message;
  - NeMo 24.12 and 25.02 are refused at spec.stages.evaluate (evaluate.nemo2, naming 25.04), and so
    is a task the harness does not have (evaluate.task at the task), without writing anything.
With NEMOC_NEMO_GIT=<NVIDIA/NeMo git dir> it also reads, at each tag in use: the deploy script
(every flag the Job passes, fastapi_port=8886), llm.evaluate's parameters and its bare-task lookup
(find_framework), the fields of ApiEndpoint, EvaluationConfig and ConfigParams, deploy's model name
= ApiEndpoint's default model_id, the FastAPI /v1/triton_health route, the LoRA adapter restore in
inference/base.py, the completions tasks in the evaluation guide (evaluate.libsonnet nemo2Tasks), and
that 24.12/25.02 ship no nvidia-lm-eval (nemo2EvaluateSince).

Usage: nemo2_evaluate.py <nemoc> <source dir>
"""
import ast
import glob
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemo2_checkpoints import NO_CHECKPOINT, training_checkpoints, unfinished_checkpoints, write_site  # noqa: E402
from nemoc_specs import build, build_all, containers, function_params, git_show, nemo2_recipe, pod_specs, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
MODELS = json.load(open(os.path.join(SRC, "libsonnet", "models.json")))["models"]
RELEASES = json.load(open(os.path.join(SRC, "libsonnet", "nemo", "versions.json")))["releases"]
EVALUATE = open(os.path.join(SRC, "libsonnet", "stages", "evaluate.libsonnet")).read()
SINCE = re.search(r"nemo2EvaluateSince:: '([0-9.]+)'", EVALUATE).group(1)
NEMO2_TASKS = re.findall(r"'(\w+)'", re.search(r"nemo2Tasks:: \[([^\]]*)\]", EVALUATE).group(1))
LAUNCHER_TASKS = re.findall(r"'(\w+)'", re.search(r"launcherTasks:: \[([^\]]*)\]", EVALUATE).group(1))
SCRIPT = re.search(r"nemo2DeployScript:: '([^']+)'", EVALUATE).group(1)
READY_SECONDS = re.search(r"nemo2ReadySeconds:: (\d+)", EVALUATE).group(1)
PORT = 8886

SPEC = """apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata: {name: n2v}
spec:
  namespace: nemo
  image: {repository: nvcr.io/nvidia/nemo, tag: "RELEASE"}
  model:
    preset: PRESET
    source: {nemo: checkpoints/base-nemo2}
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
    evaluate: EVALUATE
  targets:
    - {name: onprem, profile: vanilla-k8s, rdma: {count: 8}}
"""
# preset, mode, nodes, parallelism, evaluate stage
CASES = [("llama3-8b", "lora", 1, "{tensor: 1}", "{tasks: [mmlu, gsm8k]}"),
         ("llama3.1-8b", "sft", 1, "{tensor: 2}", "{}"),
         ("mixtral-8x7b", "lora", 2, "{tensor: 2, expert: 4}", "{tasks: [mmlu_pro], batchSize: 4}"),
         ("nemotron4-15b", "sft", 2, "{tensor: 4, pipeline: 2}", "{tensorParallel: 8, tasks: [mgsm, mmlu_redux]}")]

STUBS = {  # and nemo2_checkpoints.EXP_MANAGER_STUBS
    # The Job's program polls the model server every 10 s until its deadline. A virtual clock
    # runs it with the same calls, in the same order, to the same exits, in a fraction of a second
    # instead of 10 s per poll (issue #39: this test slept 58 of its 67 s): time.sleep advances
    # time.monotonic by what was asked and waits 0.2 s, after waiting (at most 10 s) until the
    # torchrun stand-in has recorded its call and can take SIGINT, and listens unless it is to hang
    # or exit (it creates NEMOC_READY), as a real server has long done by the program's first
    # poll. Loaded by Python's site module in every process started with this PYTHONPATH (the
    # program and the stand-in, which never sleeps).
    "sitecustomize.py": """import os, time
_offset = [0.0]
_monotonic, _sleep = time.monotonic, time.sleep
def sleep(seconds):
    ready, waited = os.environ.get("NEMOC_READY"), 0.0
    while ready and not os.path.exists(ready) and waited < 10:
        _sleep(0.01)
        waited += 0.01
    _sleep(min(seconds, 0.2))
    _offset[0] += seconds
time.sleep = sleep
time.monotonic = lambda: _monotonic() + _offset[0]
""",    "nemo/collections/__init__.py": "",
    "nemo/collections/llm/__init__.py": "",
    "nemo/collections/llm/api.py": """
import json, os
def evaluate(target_cfg, eval_cfg, adapter_cfg=None):
    with open(os.environ["NEMOC_CALLS"], "a") as f:
        f.write(json.dumps({"fn": "evaluate", "url": target_cfg.api_endpoint.url,
                            "endpoint_type": target_cfg.api_endpoint.type, "type": eval_cfg.type,
                            "output_dir": eval_cfg.output_dir, "parallelism": eval_cfg.params.parallelism,
                            "output_existed": os.path.exists(eval_cfg.output_dir),
                            "server_stopped": os.path.exists(os.environ["NEMOC_SIGINT"])}) + "\\n")
    return {}
""",
    # pydantic models upstream: keyword fields only, unknown ones rejected.
    "nemo/collections/llm/evaluation/__init__.py": "",
    "nemo/collections/llm/evaluation/api.py": """
class _Model:
    FIELDS = {}
    def __init__(self, **kwargs):
        unknown = set(kwargs) - set(self.FIELDS)
        if unknown:
            raise TypeError(type(self).__name__ + " has no field " + ", ".join(sorted(unknown)))
        for name, default in self.FIELDS.items():
            setattr(self, name, kwargs.get(name, default))
class ApiEndpoint(_Model):
    FIELDS = {"url": "http://0.0.0.0:8080/v1/completions/", "model_id": "triton_model", "type": "completions"}
class EvaluationTarget(_Model):
    FIELDS = {"api_endpoint": None}
class ConfigParams(_Model):
    FIELDS = {"parallelism": 1, "limit_samples": None, "extra": {}}
class EvaluationConfig(_Model):
    FIELDS = {"output_dir": "results", "type": None, "params": None}
""",
}

# torchrun stand-in: records its argv, then serves /v1/triton_health on PORT until SIGINT (or
# exits with NEMOC_SERVER_EXIT at once).
TORCHRUN = """#!/usr/bin/python3
import http.server, json, os, signal, sys
with open(os.environ["NEMOC_CALLS"], "a") as f:
    f.write(json.dumps({"fn": "torchrun", "argv": sys.argv[1:]}) + "\\n")
if os.environ.get("NEMOC_SERVER_EXIT"):
    open(os.environ["NEMOC_READY"], "w").close()
    sys.exit(int(os.environ["NEMOC_SERVER_EXIT"]))
def stop(signum, frame):
    open(os.environ["NEMOC_SIGINT"], "w").close()
    sys.exit(0)
signal.signal(signal.SIGINT, stop)
if os.environ.get("NEMOC_SERVER_HANG"):  # up, never healthy
    open(os.environ["NEMOC_READY"], "w").close()
    signal.pause()
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/v1/triton_health" else 404)
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer.allow_reuse_address = True
server = http.server.HTTPServer(("127.0.0.1", %d), Health)  # bound and listening
open(os.environ["NEMOC_READY"], "w").close()
server.serve_forever()
""" % PORT


def documents(target, stage):
    return [yaml.safe_load(open(p)) for p in sorted(glob.glob(os.path.join(target, stage, "*.yaml")))
            if not p.endswith("kustomization.yaml")]


def port_free():
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", PORT)) != 0


def run_program(case, program, args, tmp, errors):
    """Runs the Job's program with the stand-ins: what it serves, what it evaluates, in which order."""
    root = tempfile.mkdtemp(dir=tmp, prefix="run-")
    site = write_site(root, STUBS)
    os.makedirs(os.path.join(root, "bin"))
    with open(os.path.join(root, "bin", "torchrun"), "w") as f:
        f.write(TORCHRUN)
    os.chmod(os.path.join(root, "bin", "torchrun"), 0o755)
    ckpts, expected = training_checkpoints(root)
    out = os.path.join(root, "evaluate")
    _, _, script, gpus, tp, pp, batch, ready, *tasks = args
    os.makedirs(os.path.join(out, tasks[0], "triton_model"))  # a previous run's results and lm-eval cache
    open(os.path.join(out, tasks[0], "lm_cache_rank0.db"), "w").close()
    calls, sigint, ready_file = (os.path.join(root, name) for name in ("calls.jsonl", "sigint", "ready"))
    env = dict(os.environ, PYTHONPATH=site, NEMOC_CALLS=calls, NEMOC_SIGINT=sigint, NEMOC_READY=ready_file,
               PATH=os.path.join(root, "bin") + os.pathsep + os.environ.get("PATH", ""))

    def fresh():  # what one run of the program leaves, removed before the next
        for path in (calls, sigint, ready_file):
            if os.path.exists(path):
                os.remove(path)
    env.pop("NEMOC_SERVER_EXIT", None)
    env.pop("NEMOC_SERVER_HANG", None)
    argv = ["/usr/bin/python3", "-c", program, ckpts, out] + args[2:]
    for _ in range(30):  # a previous run's server still holding the port
        if port_free():
            break
        time.sleep(1)
    run = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    if run.returncode != 0:
        errors.append(f"{case}: the program failed: {run.stderr}")
        return
    got = [json.loads(line) for line in open(calls)]
    url = f"http://127.0.0.1:{PORT}/v1/completions/"
    want = [{"fn": "torchrun", "argv": ["--standalone", "--nproc-per-node=" + gpus, script,
                                        "--nemo_checkpoint=" + expected, "--ngpus=" + gpus,
                                        "--tensor_parallelism_size=" + tp, "--pipeline_parallelism_size=" + pp,
                                        "--max_batch_size=" + batch]}] + [
        {"fn": "evaluate", "url": url, "endpoint_type": "completions", "type": task,
         "output_dir": out + "/" + task, "parallelism": int(batch), "output_existed": False,
         "server_stopped": False} for task in tasks]
    if got != want:
        errors.append(f"{case}: calls {got}, expected {want}")
    if not os.path.exists(sigint):
        errors.append(f"{case}: the model server was not stopped with SIGINT")
    # A server that dies before it is ready fails the Job with its exit code.
    fresh()
    run = subprocess.run(argv, capture_output=True, text=True, env=dict(env, NEMOC_SERVER_EXIT="3"), timeout=120)
    if run.returncode == 0 or "the model server exited (code 3) before it was ready" not in run.stderr:
        errors.append(f"{case}: a dead server: exit {run.returncode}, {run.stderr!r}")
    if any(json.loads(line)["fn"] == "evaluate" for line in open(calls)):
        errors.append(f"{case}: evaluated without a server")
    # A server that never gets healthy fails the Job at the deadline, and is stopped.
    fresh()
    hung = argv[:argv.index(ready, 8)] + ["2"] + argv[argv.index(ready, 8) + 1:]
    run = subprocess.run(hung, capture_output=True, text=True, env=dict(env, NEMOC_SERVER_HANG="1"), timeout=120)
    if run.returncode == 0 or "the model server was not ready after 2 s" not in run.stderr or not os.path.exists(sigint):
        errors.append(f"{case}: a server never ready: exit {run.returncode}, {run.stderr!r}")
    # No finished *last checkpoint: the Job fails and says why, before starting a server.
    empty = unfinished_checkpoints(root)
    fresh()
    run = subprocess.run(["/usr/bin/python3", "-c", program, empty, out] + args[2:], capture_output=True,
                         text=True, env=env, timeout=120)
    if run.returncode == 0 or NO_CHECKPOINT + empty not in run.stderr or os.path.exists(calls):
        errors.append(f"{case}: without a finished checkpoint: exit {run.returncode}, {run.stderr!r}")


def check(case, target, tmp, errors, run=False):
    jobs = [d for d in documents(target, "40-evaluate") if d["kind"] == "Job"]
    if len(jobs) != 1:
        errors.append(f"{case}: {len(jobs)} evaluate Jobs")
        return
    pod = next(pod_specs(jobs[0]))
    main = pod["containers"][0]
    argv = main.get("command", []) + main.get("args", [])
    i = argv.index("-c", argv.index("python3"))
    program, args = argv[i + 1], argv[i + 2:]
    if len(args) < 9:
        errors.append(f"{case}: program arguments {args}")
        return
    checkpoints, out, script, gpus, tp, pp, batch, ready, *tasks = args
    if ready != READY_SECONDS or int(ready) < 1800:
        errors.append(f"{case}: readiness deadline {ready} s")
    assigned = nemo2_recipe(target)
    if assigned is None:
        errors.append(f"{case}: no recipe module")
        return
    log_dir = ast.literal_eval(assigned["recipe.log.explicit_log_dir"])
    if checkpoints != log_dir + "/checkpoints":
        errors.append(f"{case}: evaluates {checkpoints}, training checkpoints in {log_dir}/checkpoints")
    if ast.unparse(assigned.get("recipe.log.ckpt.save_last", ast.Constant(None))) != "True":
        errors.append(f"{case}: the recipe keeps no *-last checkpoint")
    if script != SCRIPT or not script.startswith("/opt/NeMo/scripts/"):
        errors.append(f"{case}: server script {script}")
    if int(gpus) != int(tp) * int(pp):
        errors.append(f"{case}: {gpus} GPUs for tensor {tp} x pipeline {pp}")
    limits = [c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu") for c in containers(jobs[0])]
    if limits != [int(gpus)]:
        errors.append(f"{case}: the pod's GPUs {limits}, the server's {gpus}")
    if not tasks or any(t not in NEMO2_TASKS for t in tasks):
        errors.append(f"{case}: tasks {tasks} outside {NEMO2_TASKS}")
    mounts = [m["mountPath"] for m in main.get("volumeMounts", []) if m["mountPath"] != "/dev/shm"]
    for path in (checkpoints, out):
        if not any(path.startswith(m + "/") for m in mounts):
            errors.append(f"{case}: {path} is not on a mounted volume {mounts}")
    if out not in argv[:argv.index("python3")]:
        errors.append(f"{case}: the results directory {out} is not created first")
    env = {e["name"]: e.get("value") for e in main.get("env", [])}
    if env.get("HF_DATASETS_TRUST_REMOTE_CODE") != "1":
        errors.append(f"{case}: HF_DATASETS_TRUST_REMOTE_CODE is not 1 (scripts/llm/evaluation.py sets it)")
    if run:
        run_program(case, program, args, tmp, errors)
    return tp, pp


def check_upstream(tags, lora, errors):
    git = os.environ.get("NEMOC_NEMO_GIT")
    if not git:
        return 0
    n = 0
    for tag in sorted(tags):
        n += 1
        deploy = git_show(git, tag, SCRIPT[len("/opt/NeMo/"):])
        flags = set(re.findall(r'"(--\w+)"', deploy))
        program_flags = set(re.findall(r'"(--\w+)=', re.search(r"nemo2Program:: [^|]*\|\|\|(.*?)\|\|\|", EVALUATE, re.S).group(1)))
        if not program_flags or not program_flags <= flags:
            errors.append(f"{tag}: the deploy script declares {sorted(flags)}, the Job passes {sorted(program_flags)}")
        if f"fastapi_port={PORT}" not in deploy:
            errors.append(f"{tag}: the deploy script's FastAPI port is not {PORT}")
        api = git_show(git, tag, "nemo/collections/llm/api.py")
        if function_params(api, "evaluate")[:2] != ["target_cfg", "eval_cfg"]:
            errors.append(f"{tag}: llm.evaluate parameters {function_params(api, 'evaluate')}")
        body = api[api.index("\ndef evaluate("):]
        body = body[:body.index("\ndef ", 1)]
        if "framework_name, task_name = None, eval_type_components[0]" not in body or "find_framework(task_name)" not in body:
            errors.append(f"{tag}: llm.evaluate no longer looks a bare task name up")
        if not re.search(r'triton_model_name: str = "triton_model"', api[api.index("\ndef deploy("):]):
            errors.append(f"{tag}: llm.deploy's model name is not triton_model")
        classes = git_show(git, tag, "nemo/collections/llm/evaluation/api.py")
        for cls, fields in (("ApiEndpoint", ("url", "type")), ("EvaluationConfig", ("output_dir", "type", "params")),
                            ("ConfigParams", ("parallelism",)), ("EvaluationTarget", ("api_endpoint",))):
            text = classes[classes.index(f"class {cls}("):]
            text = text[:text.index("\nclass ", 1)] if "\nclass " in text[1:] else text
            for field in fields:
                if not re.search(rf"^    {field}: ", text, re.M):
                    errors.append(f"{tag}: {cls} has no field {field}")
            if cls == "ApiEndpoint" and 'default="triton_model"' not in text:
                errors.append(f"{tag}: ApiEndpoint's model_id default is not triton_model")
        if '"/v1/triton_health"' not in git_show(git, tag, "nemo/deploy/service/fastapi_interface_to_pytriton.py"):
            errors.append(f"{tag}: the FastAPI front end has no /v1/triton_health")
        if lora and "ADAPTER_META_FILENAME" not in git_show(git, tag, "nemo/collections/llm/inference/base.py"):
            errors.append(f"{tag}: in-framework inference does not restore a LoRA adapter with its base")
        if "nvidia-lm-eval" not in git_show(git, tag, "requirements/requirements_eval.txt"):
            errors.append(f"{tag}: requirements_eval.txt has no nvidia-lm-eval")
        docs = git_show(git, tag, "docs/source/evaluation/evaluation-doc.rst", check=False) or \
            git_show(git, tag, "docs/source/evaluation/evaluation_doc.rst", check=False)
        section = re.search(r"completions endpoint[^\n]*\n(.*?)\n\n[^\n]*chat endpoint", docs, re.S)
        listed = re.findall(r"`(\w+)`", section.group(1)) if section else []
        if sorted(listed) != sorted(NEMO2_TASKS):
            errors.append(f"{tag}: the evaluation guide lists completions tasks {listed}, nemo2Tasks {NEMO2_TASKS}")
    # Before nemo2EvaluateSince: no Evals Factory in the container.
    for release, row in sorted(RELEASES.items()):
        if "24.12" <= release < SINCE:
            n += 1
            if "nvidia-lm-eval" in git_show(git, row["nemo"], "requirements/requirements_eval.txt", check=False):
                errors.append(f"{row['nemo']}: ships nvidia-lm-eval, yet nemo2EvaluateSince is {SINCE}")
    return n


def main():
    errors, checked, refused, tags, lora = [], 0, 0, set(), False
    schema = json.load(open(os.path.join(SRC, "schemas", "project.schema.json")))
    enum = json.dumps(schema).count('"mmlu_redux"')
    if enum == 0 or sorted(NEMO2_TASKS + LAUNCHER_TASKS) != sorted(set(NEMO2_TASKS + LAUNCHER_TASKS)):
        errors.append("the schema's task enum lacks the NeMo 2 tasks, or a task is in both lists")
    with tempfile.TemporaryDirectory(prefix="nemoc-nemo2-evaluate-") as tmp:
        # Every NeMo 2 evaluation of the examples and test specs; the program runs for the first.
        out = os.path.join(tmp, "all")
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            errors.append(f"examples and test specs: build failed\n{run.stderr}")
        ran = False
        for job in sorted(glob.glob(os.path.join(out, "*", "*", "40-evaluate", "*.yaml"))):
            if "api.evaluate(" not in open(job).read():
                continue
            target = os.path.dirname(os.path.dirname(job))
            check(os.path.relpath(target, out), target, tmp, errors, run=not ran)
            ran, checked = True, checked + 1
        for n, (preset, mode, nodes, parallelism, evaluate) in enumerate(CASES):
            for release, row in sorted(RELEASES.items()):
                if release < max(MODELS[preset]["nemo2"]["since"], "24.12"):
                    continue
                case = f"{preset}-{mode}-{release}"
                spec = os.path.join(tmp, case + ".yaml")
                with open(spec, "w") as f:
                    f.write(SPEC.replace("RELEASE", release).replace("PRESET", preset).replace("MODE", mode)
                            .replace("NODES", str(nodes)).replace("PARALLELISM", parallelism)
                            .replace("EVALUATE", evaluate))
                target_out = os.path.join(tmp, "out-" + case)
                run = build(NEMOC, SRC, target_out, [spec])
                if release < SINCE:
                    where = f"{spec}:20:5: error: target onprem: NeMo {release} cannot evaluate the NeMo 2 training run"
                    if run.returncode != 1 or where not in run.stderr or os.path.exists(target_out):
                        errors.append(f"{case}: not refused at spec.stages.evaluate: {run.stderr}")
                    refused += 1
                    continue
                if run.returncode != 0:
                    errors.append(f"{case}: build failed\n{run.stderr}")
                    continue
                tags.add(row["nemo"])
                lora = lora or mode == "lora"
                target = os.path.join(target_out, "n2v", "onprem")
                got = check(case, target, tmp, errors, run=(release == SINCE and n == 1))
                # The server runs with the stage's tensor parallelism (default training's), and one
                # pipeline stage (in-framework deployment fails with more).
                explicit = re.search(r"tensorParallel: (\d+)", evaluate)
                assigned = nemo2_recipe(target)
                want = (explicit.group(1) if explicit else ast.unparse(assigned["recipe.trainer.strategy.tensor_model_parallel_size"]), "1")
                if got is not None and got != want:
                    errors.append(f"{case}: server parallelism {got}, expected {want}")
                checked += 1
        # Pipeline parallelism and a SentencePiece pretraining: refused at the field.
        sentencepiece = SPEC.replace("RELEASE", "25.07").replace("PRESET", "llama3-8b").replace("MODE", "pretrain") \
            .replace("NODES", "1").replace("PARALLELISM", "{tensor: 1}").replace("EVALUATE", "{}") \
            .replace("    source: {nemo: checkpoints/base-nemo2}\n",
                     "    tokenizer: {library: sentencepiece, model: /data/tok/tokenizer.model}\n") \
            .replace("      data: {jsonl: {train: sft/training.jsonl}}\n", "      data: {mock: true}\n")
        pipeline = SPEC.replace("RELEASE", "25.07").replace("PRESET", "llama3-8b").replace("MODE", "sft") \
            .replace("NODES", "1").replace("PARALLELISM", "{tensor: 1}").replace("EVALUATE", "{pipelineParallel: 2}")
        for name, text, where in (("sentencepiece", sentencepiece, "9:26"), ("pipeline", pipeline, "20:34")):
            spec = os.path.join(tmp, name + ".yaml")
            with open(spec, "w") as f:
                f.write(text)
            run = build(NEMOC, SRC, os.path.join(tmp, "out-" + name), [spec])
            if run.returncode != 1 or f"{spec}:{where}: error: target onprem: NeMo 2's in-framework deployment fails" \
                    not in run.stderr or os.path.exists(os.path.join(tmp, "out-" + name)):
                errors.append(f"{name}: not refused at {where}: {run.stderr}")
            refused += 1
        # A task the Job's harness does not have: located at the task.
        for release, evaluate, framework, line in (("25.07", "{tasks: [mmlu, hellaswag]}", "nemo2", "20:30"),
                                                   ("25.07", "{tasks: [winogrande, mmlu]}", "nemo1", "19:36")):
            spec = os.path.join(tmp, f"task-{framework}.yaml")
            with open(spec, "w") as f:
                text = SPEC.replace("RELEASE", release).replace("PRESET", "llama3-8b").replace("MODE", "sft") \
                    .replace("NODES", "1").replace("PARALLELISM", "{tensor: 1}").replace("EVALUATE", evaluate)
                if framework == "nemo1":
                    text = text.replace("      framework: nemo2\n", "").replace("checkpoints/base-nemo2}", "checkpoints/base.nemo, hfTokenSecret: hf-token}") \
                        .replace("{train: sft/training.jsonl}", "{train: sft/training.jsonl, validation: sft/validation.jsonl}")
                f.write(text)
            run = build(NEMOC, SRC, os.path.join(tmp, "out-task"), [spec])
            if run.returncode != 1 or f"{spec}:{line}: error: target onprem: " not in run.stderr \
                    or "task" not in run.stderr or os.path.exists(os.path.join(tmp, "out-task")):
                errors.append(f"{framework}: a task its harness lacks is not refused at {line}: {run.stderr}")
            refused += 1
    upstream = check_upstream(tags, lora, errors)
    if checked < len(CASES) + 1 or refused < 5:
        errors.append(f"too few NeMo 2 evaluations built ({checked}) or refused ({refused})")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{checked} NeMo 2 evaluations built, {refused} refused, {upstream} releases checked upstream, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
