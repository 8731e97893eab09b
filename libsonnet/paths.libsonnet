// Where every stage reads and writes on shared storage: computed here and
// nowhere else, so data preparation, training, evaluation, conversion, the
// TensorRT-LLM build and Triton agree on every path.
local chain = import 'nemoc/stages/chain.libsonnet';
{
  // ctx.storage is the target's resolved storage (results and data volumes).
  resultsDir(ctx):: ctx.storage.results.mountPath + '/' + ctx.project + '/' + ctx.target.name,

  // Two hashes (field review C16/C17, decision F15). A workload's NAME hashes
  // everything in the object (k8s.contentName: Jobs are immutable). The
  // DIRECTORY a stage writes is named by its STATE hash: what determines the
  // artifact -- the program and its arguments or NeMo config with the
  // stage's own directory left out, the image, the inputs' directories
  // (which carry their own state hashes, so a new input moves everything
  // after it) and the spec's data version (F16). What only places or
  // schedules the pods (tolerations, node selectors, priority, queue,
  // resources, the deadline) is not in it: such an edit replaces the
  // workload and it resumes in the same directory. A stage's state is
  // computed once per target (nemoc.libsonnet binds ctx.states) from the
  // stage built with `drafting` (its own directory reads draftState).
  // With resume_if_exists, exp_manager resumes the newest *-last checkpoint of
  // its log directory (NVIDIA/NeMo v2.2.1 nemo/utils/exp_manager.py:813-880):
  // a new state is a new directory, so a changed learning rate trains afresh
  // and an unchanged one resumes. Old directories stay (SUMMARY.md lists what
  // a target writes; removing them is a human act, F16).
  draftState:: '@state',
  drafting(ctx, key):: ctx { states+: { [key]: $.draftState } },
  stateHash(determinants):: std.substr(std.md5('' + determinants), 0, 12),
  state(ctx, key)::
    if std.objectHasEx(ctx, 'states', true) && std.objectHasEx(ctx.states, key, false) then ctx.states[key]
    else error ('nemoc library bug: the state directory of ' + key + ' is read before its state hash is bound'),
  stateDir(ctx, name, key):: $.resultsDir(ctx) + '/' + name + '/' + $.state(ctx, key),
  // Written beside a state directory when the stage that makes it succeeded
  // (pod.runOnce): a Job re-created for that state exits at once. Beside, not
  // inside: the directory is the artifact others read (a HuggingFace folder,
  // an engine) and NeMo 2's export must not find its output directory.
  doneMarker(stateDir):: stateDir + '.nemoc-complete',

  // <results>/pretrain/<state> and <results>/train/<state>: each training
  // stage of the chain (stages/chain.libsonnet) logs and checkpoints in its
  // own directory. The train stage after pretraining restores its
  // predecessor's final .nemo, whose path (and so state) is in its config: new
  // pretraining is a new fine-tuning directory.
  trainDir(ctx):: $.stateDir(ctx, chain.key(ctx), chain.key(ctx)),
  checkpointDir(ctx):: $.trainDir(ctx) + '/checkpoints',
  // DLLogger JSON (`nemoc metrics` reads rank-0/dllogger.json below it).
  dlloggerDir(ctx):: $.trainDir(ctx) + '/dllogger',
  dataDir(ctx):: ctx.storage.data.mountPath,
  dataFile(ctx, relative):: $.dataDir(ctx) + '/' + relative,
  // A file or directory given in the spec relative to the results volume.
  resultsFile(ctx, relative):: ctx.storage.results.mountPath + '/' + relative,
  configDir:: '/config',
  // nemoc's own scripts (ConfigMaps) inside stage pods.
  scriptsDir:: '/nemoc',

  // dataPrep writes Megatron indexed datasets (<prefix>.bin/.idx) here;
  // preprocess_data_for_megatron.py appends _<jsonKey>_document to the
  // output prefix it is given.
  // One directory per state (F16: the input, its version, the tokenizer, the
  // image): new data is a new prepared set, never an overwrite under a
  // training that reads the old one.
  preparedDir(ctx):: $.dataDir(ctx) + '/' + ctx.project + '/' + ctx.target.name + '/prepared/' + $.state(ctx, 'dataPrep'),
  preparedOutputPrefix(ctx):: $.preparedDir(ctx) + '/corpus',
  preparedDataset(ctx, dataPrep):: $.preparedOutputPrefix(ctx) + '_' + dataPrep.jsonKey + '_document',

  // The Megatron indexed datasets a pretraining reads, as Megatron's blend
  // list [weight, prefix, weight, prefix, ...]: NeMo 1's model.data.data_prefix
  // and NeMo 2's PreTrainingDataModule(paths=...) take the same list.
  dataPrefix(ctx, data)::
    if std.objectHasEx(data, 'prefixes', false)
    then std.flattenArrays([[p.weight, $.dataFile(ctx, p.path)] for p in data.prefixes])
    else if std.objectHasEx(data, 'fromDataPrep', false)
    then [1.0, $.preparedDataset(ctx, ctx.spec.stages.dataPrep)]
    else [],

  // The .nemo fine-tuning starts from: the spec's model.source.nemo, or
  // where the import stage writes model.source.huggingface.
  importDir(ctx):: $.stateDir(ctx, 'import', 'importModel'),
  importedNemo(ctx):: $.importDir(ctx) + '/model.nemo',
  // NeMo 2's llm.import_ckpt writes a checkpoint directory.
  importedNemo2(ctx):: $.importDir(ctx) + '/nemo2',
  sourceNemo(ctx)::
    local source = ctx.spec.model.source;
    if std.objectHasEx(source, 'nemo', false) then $.resultsFile(ctx, source.nemo) else $.importedNemo(ctx),

  // exp_manager names the final .nemo after exp_manager.name.
  checkpointName:: 'megatron_gpt',
  trainedNemo(ctx):: $.checkpointDir(ctx) + '/' + $.checkpointName + '.nemo',
  // The .nemo the training stage being built starts from: the final .nemo
  // of the stage before it in the chain, else spec.model.source; null for
  // pretraining from random weights.
  restoreNemo(ctx)::
    local upstream = chain.upstream(ctx);
    if !std.primitiveEquals(upstream, null) then $.trainedNemo(chain.at(ctx, upstream))
    else if std.objectHasEx(ctx.spec.model, 'source', false)
            && (std.objectHasEx(ctx.spec.model.source, 'nemo', false) || std.objectHasEx(ctx.spec.model.source, 'huggingface', false))
    then $.sourceNemo(ctx)
    else null,
  // A LoRA fine-tune's .nemo holds only the adapter: stages/merge-lora.libsonnet
  // merges it into the base model (paths.sourceNemo) and writes this.
  mergeDir(ctx):: $.stateDir(ctx, 'merge-lora', 'mergeLora'),
  mergedNemo(ctx):: $.mergeDir(ctx) + '/merged.nemo',
  // A NeMo 2 LoRA run's adapter merged into its base (llm.peft.merge_lora,
  // stages/convert.libsonnet): a checkpoint directory.
  // The convert Job writes it: named by the conversion's state.
  mergedNemo2(ctx):: $.stateDir(ctx, 'merge-lora', 'convert') + '/nemo2',
  // The .nemo a later stage reads: its own `checkpoint` when the spec gives
  // one, else what the train stage saves at the end -- after a NeMo 1 LoRA
  // fine-tune, the merged model (the merge stage is present exactly then).
  nemoCheckpoint(ctx, stage)::
    if std.objectHasEx(stage, 'checkpoint', false) then $.resultsFile(ctx, stage.checkpoint)
    else if std.objectHasEx(ctx, 'mergeBuilt', true) && !std.primitiveEquals(ctx.mergeBuilt, null) then $.mergedNemo(ctx)
    else $.trainedNemo(ctx),

  evaluateDir(ctx):: $.stateDir(ctx, 'evaluate', 'evaluate'),
  huggingfaceParent(ctx):: $.resultsDir(ctx) + '/huggingface',
  huggingfaceDir(ctx):: $.stateDir(ctx, 'huggingface', 'convert'),
  // Where NeMo 1's Llama converter torch.saves the raw state dict it then
  // loads into the Hugging Face model (--output_path, stages/convert.libsonnet):
  // beside huggingfaceDir, never in it, and removed when the converter ends.
  convertScratchFile(ctx):: $.stateDir(ctx, 'convert-scratch', 'convert') + '/pytorch_model.bin',
  // A Hub repository downloaded to shared storage (the converter's --hf_input_path).
  hubSnapshotDir(ctx, repo):: $.resultsDir(ctx) + '/hub/' + repo,
  // HuggingFace checkpoint the TensorRT-LLM build reads.
  huggingfaceSource(ctx, trtllm)::
    if std.objectHasEx(trtllm, 'checkpoint', false) then $.resultsFile(ctx, trtllm.checkpoint) else $.huggingfaceDir(ctx),
  // Each engine in its own directory: Triton (a later stage) switches to a
  // new one only after its build succeeded, and the previous one stays (a
  // revert serves it again).
  engineStateDir(ctx):: $.stateDir(ctx, 'tensorrt-llm', 'tensorrtLLM'),
  engineDir(ctx):: $.engineStateDir(ctx) + '/engine',
  // Engine Triton serves.
  engineSource(ctx, serve)::
    if std.objectHasEx(serve, 'engine', false) then $.resultsFile(ctx, serve.engine) else $.engineDir(ctx),
  // Triton's model repository inside the serving pod (config.pbtxt from a
  // ConfigMap; the engine stays on shared storage, named by gpt_model_path).
  modelRepository:: '/models',
}
