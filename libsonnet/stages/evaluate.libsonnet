// 40-evaluate: lm-evaluation-harness tasks against the trained .nemo with
// the NeMo Framework Launcher's eval_harness adapter, which ships in the NeMo
// Framework container. The checkpoint path comes from paths.libsonnet (the
// .nemo training saves at the end, or the stage's own `checkpoint`).
// After a NeMo 2 train stage (no .nemo): the checkpoint directory served
// in-framework and evaluated with llm.evaluate (nemo2 below).
local hf = import 'nemoc/huggingface.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local versions = import 'nemoc/nemo/versions.libsonnet';
local paths = import 'nemoc/paths.libsonnet';
local nemo2Checkpoint = import 'nemoc/stages/nemo2-checkpoint.libsonnet';
local order = import 'nemoc/stages/order.libsonnet';
local pod = import 'nemoc/stages/pod.libsonnet';

{
  dir: order.dir.evaluate,
  component: 'evaluate',
  script: '/opt/NeMo-Framework-Launcher/launcher_scripts/nemo_launcher/collections/eval_harness/evaluate.py',

  // The adapter's model class per model family (lm_eval/models/__init__.py);
  // nemo-gpt3 loads any other Megatron GPT .nemo.
  harnessModels: { llama: 'nemo-llama' },
  harnessModel(model)::
    if std.objectHasEx(model, 'family', false) && std.objectHasEx($.harnessModels, model.family, false)
    then $.harnessModels[model.family] else 'nemo-gpt3',

  jobName(ctx):: k8s.boundedName(ctx.project + '-evaluate', 63),

  gpus(evaluate):: evaluate.tensorParallel * evaluate.pipelineParallel,

  // The tasks each Job runs (the schema's enum is their union; the
  // normalizer's default is hellaswag, mmlu after NeMo 2 training).
  //   - The launcher's adapter: the tasks its lm_eval registers.
  //   - NeMo 2: the NVIDIA Evals Factory (nvidia-lm-eval) configurations
  //     for a completions endpoint, which the NeMo container ships
  //     (NVIDIA/NeMo docs/source/evaluation/evaluation_doc.rst v2.3.0:29-34,
  //     evaluation-doc.rst v2.4.0:31-37); the chat ones need an
  //     instruction-tuned model's chat template.
  launcherTasks:: ['boolq', 'hellaswag', 'lambada', 'piqa', 'race', 'wikitext2', 'wikitext103', 'winogrande'],
  nemo2Tasks:: ['gsm8k', 'mgsm', 'mmlu', 'mmlu_pro', 'mmlu_redux'],

  // NeMo 2: the train stage (framework nemo2) saves checkpoint directories,
  // which the launcher's adapter cannot restore. The Job evaluates the one
  // AutoResume would resume (stages/nemo2-checkpoint.libsonnet) the way
  // NeMo's tutorial does (tutorials/llm/evaluation/mmlu.ipynb v2.3.0,
  // v2.4.0):
  //   1. it starts scripts/deploy/nlp/deploy_in_fw_oai_server_eval.py, which
  //      serves the checkpoint in-framework (llm.deploy,
  //      MegatronLLMDeployableNemo2) on PyTriton with an OpenAI-style
  //      FastAPI front end on port 8886 (fastapi_port=8886 in the script,
  //      v2.3.0:87, v2.4.0:90), under torchrun with one process per GPU;
  //      a LoRA checkpoint is served as base + adapter
  //      (_setup_trainer_and_restore_model reads adapter_metadata.json and
  //      applies the context's model_transform, nemo/collections/llm/inference/base.py
  //      v2.3.0:143-187), so no merge;
  //   2. it waits until /v1/triton_health answers, failing if the server
  //      exits first;
  //   3. llm.evaluate(EvaluationTarget(ApiEndpoint(url=.../v1/completions/,
  //      type="completions")), EvaluationConfig(type=<task>, output_dir,
  //      params=ConfigParams(parallelism))) per task (api.py v2.3.0 and
  //      v2.4.0: a bare task name is looked up in the installed harnesses;
  //      "lm-evaluation-harness.<task>" breaks on v2.3.0, which imports
  //      core_evals.<name> unmangled);
  //   4. SIGINT stops the server, as the tutorial does.
  // Each task's output directory is emptied first: lm-eval keeps a response
  // cache there (lm_cache_rank0.db) keyed without the model, so a retrained
  // checkpoint would get the old answers. A server not ready after
  // nemo2ReadySeconds fails the Job (a failed uvicorn start leaves the
  // server blocking in nm.serve(), never healthy: api.py v2.3.0:640-668).
  // Refused (diagnostics): pipeline parallelism (get_inference_wrapper
  // hands Megatron-Core the config's vocab_size, None for recipe-built
  // models, as the padded vocabulary, which sizes the logits buffer and the
  // broadcast between pipeline stages: gpt/model/base.py v2.3.0:684-699,
  // v2.4.0:721-723), and a SentencePiece pretraining (every response goes
  // through remove_eos_token, which reads tokenizer.tokenizer.eos_token, absent
  // from a SentencePieceProcessor: megatronllm_deployable.py v2.3.0:256-267).
  // NeMo 24.12 and 25.02 ship EleutherAI's lm-eval (requirements_eval.txt
  // v2.2.1) and evaluate through a TensorRT-LLM deployment instead: refused
  // (nemo2EvaluateSince). The script's own --max_input_len default (4096)
  // holds: v2.3.0's script has no such flag.
  nemo2EvaluateSince:: '25.04',
  nemo2(ctx):: nemo2Checkpoint.reads(ctx, 'evaluate'),
  nemo2DeployScript:: '/opt/NeMo/scripts/deploy/nlp/deploy_in_fw_oai_server_eval.py',
  nemo2ReadySeconds:: 7200,
  nemo2Program:: nemo2Checkpoint.pick + |||
    import shutil
    import signal
    import subprocess
    import time
    import urllib.request
    checkpoints, out, script, gpus, tp, pp, batch, ready = sys.argv[1:9]
    tasks = sys.argv[9:]
    checkpoint = newest_last(Path(checkpoints))
    print("evaluating " + str(checkpoint), flush=True)
    server = subprocess.Popen([
        "torchrun", "--standalone", "--nproc-per-node=" + gpus, script,
        "--nemo_checkpoint=" + str(checkpoint), "--ngpus=" + gpus,
        "--tensor_parallelism_size=" + tp, "--pipeline_parallelism_size=" + pp,
        "--max_batch_size=" + batch])
    try:
        deadline = time.monotonic() + int(ready)
        while True:
            if server.poll() is not None:
                sys.exit("the model server exited (code %d) before it was ready" % server.returncode)
            if time.monotonic() > deadline:
                sys.exit("the model server was not ready after " + ready + " s")
            try:
                with urllib.request.urlopen("http://127.0.0.1:8886/v1/triton_health", timeout=10) as health:
                    if health.status == 200:
                        break
            except OSError:
                pass
            time.sleep(10)
        from nemo.collections.llm import api
        from nemo.collections.llm.evaluation.api import ApiEndpoint, ConfigParams, EvaluationConfig, EvaluationTarget
        for task in tasks:
            shutil.rmtree(out + "/" + task, ignore_errors=True)
            api.evaluate(
                target_cfg=EvaluationTarget(api_endpoint=ApiEndpoint(
                    url="http://127.0.0.1:8886/v1/completions/", type="completions")),
                eval_cfg=EvaluationConfig(
                    type=task, output_dir=out + "/" + task, params=ConfigParams(parallelism=int(batch))))
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=300)
            except subprocess.TimeoutExpired:
                server.kill()
  |||,
  nemo2Args(ctx)::
    local evaluate = ctx.spec.stages.evaluate;
    ['python3', '-c', $.nemo2Program, paths.checkpointDir(ctx), paths.evaluateDir(ctx), $.nemo2DeployScript,
     std.toString($.gpus(evaluate)), std.toString(evaluate.tensorParallel), std.toString(evaluate.pipelineParallel),
     std.toString(evaluate.batchSize), std.toString($.nemo2ReadySeconds)] + evaluate.tasks,

  // Tasks the Job's harness does not have, and NeMo 2 evaluation on a
  // release that cannot serve it: located errors.
  diagnostics(ctx)::
    if !std.objectHasEx(ctx.spec.stages, 'evaluate', false) then [] else
    local evaluate = ctx.spec.stages.evaluate;
    local nemo2 = $.nemo2(ctx);
    local known = if nemo2 then $.nemo2Tasks else $.launcherTasks;
    [{
      code: 'evaluate.task',
      pointer: '/spec/stages/evaluate/tasks/' + i,
      message: if nemo2
      then "NeMo 2's evaluation (llm.evaluate with the NVIDIA Evals Factory's lm-evaluation-harness) has no "
           + 'completions task ' + evaluate.tasks[i]
      else "the NeMo Framework Launcher's lm-eval-harness adapter registers no task " + evaluate.tasks[i]
           + (if std.member($.nemo2Tasks, evaluate.tasks[i]) then ' (a NeMo 2 task: evaluate after a framework: nemo2 train stage)' else ''),
      hint: 'use one of ' + std.join(', ', known),
    } for i in std.range(0, std.length(evaluate.tasks) - 1) if !std.member(known, evaluate.tasks[i])]
    + (if nemo2 && evaluate.pipelineParallel > 1 then [{
      code: 'evaluate.nemo2',
      pointer: '/spec/stages/evaluate/pipelineParallel',
      message: "NeMo 2's in-framework deployment fails with pipeline parallelism: it gives Megatron-Core the model "
               + "config's vocab_size, unset in recipe-built models, as the vocabulary that sizes the logits passed "
               + 'between pipeline stages',
      hint: 'set spec.stages.evaluate.pipelineParallel: 1 and spread the model with tensorParallel (one node)',
    }] else [])
    + (if nemo2 && std.primitiveEquals(ctx.spec.stages.train.mode, 'pretrain') && std.objectHasEx(ctx.spec.model, 'tokenizer', false)
          && std.objectHasEx(ctx.spec.model.tokenizer, 'library', false) && std.primitiveEquals(ctx.spec.model.tokenizer.library, 'sentencepiece') then [{
      code: 'evaluate.nemo2',
      pointer: '/spec/model/tokenizer/library',
      message: "NeMo 2's in-framework deployment fails on every request with a SentencePiece tokenizer (it reads "
               + "the Hugging Face eos_token of the tokenizer, which a SentencePieceProcessor lacks)",
      hint: 'use the model\'s Hugging Face tokenizer (library huggingface), or framework: nemo1',
    }] else [])
    + (if nemo2 && !versions.atLeast(evaluate.image, $.nemo2EvaluateSince) then [{
      code: 'evaluate.nemo2',
      pointer: '/spec/stages/evaluate',
      atKey: true,
      message: 'NeMo ' + versions.release(evaluate.image) + ' cannot evaluate the NeMo 2 training run the way the Job does: '
               + 'it ships EleutherAI lm-eval and no in-framework OpenAI-style server (scripts/deploy/nlp/deploy_in_fw_oai_server_eval.py); '
               + 'NeMo ' + $.nemo2EvaluateSince + ' (NVIDIA/NeMo ' + versions.releases[$.nemo2EvaluateSince].nemo + ') is the first release with both',
      hint: 'use a NeMo ' + $.nemo2EvaluateSince + ' or newer image for stages.evaluate (stages.evaluate.image)',
    }] else []),

  args(ctx)::
    local evaluate = ctx.spec.stages.evaluate;
    [
      'torchrun',
      '--standalone',
      '--nproc-per-node=' + $.gpus(evaluate),
      $.script,
      '--name=' + ctx.project,
      '--model=' + $.harnessModel(ctx.spec.model),
      '--nemo_model=' + paths.nemoCheckpoint(ctx, evaluate),
      '--tasks=' + std.join(',', evaluate.tasks),
      '--batch_size=' + evaluate.batchSize,
      '--tensor_model_parallel_size=' + evaluate.tensorParallel,
      '--pipeline_model_parallel_size=' + evaluate.pipelineParallel,
      '--precision=bf16',
      '--output_path=' + paths.evaluateDir(ctx),
      '--cache_dir=' + paths.evaluateDir(ctx) + '/cache',
    ],

  // State of the results (paths.libsonnet, F15): the program and arguments
  // (the checkpoint read, tasks, parallelism) with the output left out, the image.
  state(ctx)::
    local draft = paths.drafting(ctx, 'evaluate');
    paths.stateHash({ image: k8s.imageRef(ctx.spec.stages.evaluate.image), argv: if $.nemo2(ctx) then $.nemo2Args(draft) else $.args(draft) }),

  files(ctx)::
    local evaluate = ctx.spec.stages.evaluate;
    local placement = pod.placementFor(ctx, 'evaluate');
    local nemo2 = $.nemo2(ctx);
    local done = paths.doneMarker(paths.evaluateDir(ctx));
    local run = if nemo2 then pod.runOnce(done, [paths.evaluateDir(ctx)], $.nemo2Args(ctx))
    else pod.runOnce(done, [paths.evaluateDir(ctx) + '/cache'], $.args(ctx));
    local container = pod.container(ctx,
                                    'evaluate',
                                    evaluate.image,
                                    placement,
                                    gpus=$.gpus(evaluate),
                                    resources=evaluate.resources,
                                    // Some lm-evaluation-harness datasets run code from the Hub
                                    // (scripts/llm/evaluation.py v2.4.0:207-211 sets the same).
                                    env=if nemo2 then { HF_DATASETS_TRUST_REMOTE_CODE: '1' } else {},
                                    envRefs=hf.env(ctx)) + run;
    k8s.file($.dir, pod.job(ctx, $.jobName(ctx), $.component, placement, container, upstream=pod.upstreamCheckpoint(ctx, evaluate))),

  // The directory it writes (SUMMARY.md "State directories"; F15).
  stateDir(ctx):: paths.evaluateDir(ctx),

  summary(ctx)::
    local evaluate = ctx.spec.stages.evaluate;
    if $.nemo2(ctx) then
      'lm-evaluation-harness ' + std.join(', ', evaluate.tasks) + ' (NVIDIA Evals Factory, llm.evaluate) on the newest finished *-last checkpoint in '
      + paths.checkpointDir(ctx) + (if std.primitiveEquals(ctx.spec.stages.train.mode, 'lora') then ' (base + LoRA adapter)' else '')
      + ', served in-framework (' + $.gpus(evaluate) + ' GPUs, results in ' + paths.evaluateDir(ctx) + ')'
    else
    'lm-eval-harness ' + std.join(', ', evaluate.tasks) + ' on ' + paths.nemoCheckpoint(ctx, evaluate)
    + ' (' + $.gpus(evaluate) + ' GPUs, results in ' + paths.evaluateDir(ctx) + ')',
}
